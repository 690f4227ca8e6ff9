"""The log's prefix, checked against a checkpoint: whole, or at its ends and then behind.

Why this module exists: whether a checkpoint still stands for the log on disk is a pass
over the log's bytes, the one part of a restart that grows with the season; how that pass
is made (before the start, ``full``; or after a check of the prefix's two ends, in a
thread while the host takes orders, ``quick``) is kept here, apart from the checkpoint's
contents (``host.checkpoint``).
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

HASH_CHUNK = 1 << 22
WINDOW = 1 << 20  # the bytes at each end of a checkpoint's prefix a quick check hashes


class Unusable(Exception):
    """Why a checkpoint cannot be used (one line)."""


def ends(log: Path, offset: int) -> tuple[str, str]:
    """SHA-256 of the log's first and of its last min(offset, WINDOW) bytes before
    ``offset``: what a quick check compares (:data:`Meta.head_sha256`, ``tail_sha256``)."""
    n = min(offset, WINDOW)
    with open(log, "rb") as f:
        head = f.read(n)
        f.seek(offset - n)
        tail = f.read(n)
    if len(head) != n or len(tail) != n:
        raise Unusable(f"the log has fewer than {offset} bytes")
    return hashlib.sha256(head).hexdigest(), hashlib.sha256(tail).hexdigest()


class Behind(threading.Thread):
    """The log's running SHA-256 after a quick check (module docstring): a thread hashes
    the log's first ``offset`` bytes and compares them with the checkpoint's ``sha``, then
    the bytes the host has fed since (the replayed rest, the batches appended: all already
    in the file), and from then on the host's ``update`` hashes in place. ``on_mismatch``
    (set by the session before ``start``) is called in the thread with one line."""

    def __init__(self, log: Path, offset: int, sha: str, name: str) -> None:
        super().__init__(name="arena-checkpoint-check", daemon=True)
        self.log = log
        self.offset = offset
        self.sha = sha
        self.checkpoint = name
        self.on_mismatch: Callable[[str], None] = lambda why: None
        self.mismatch: str | None = None
        self._h = hashlib.sha256()
        self._fed = 0  # bytes fed after offset, not yet hashed here
        self._live = False  # caught up: update hashes in place
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        """The prefix matched and the hash has caught up with the log."""
        return self._live

    def update(self, data: bytes | memoryview) -> None:
        with self._lock:
            if self._live:
                self._h.update(data)
            else:
                self._fed += len(data)

    def hexdigest(self) -> str:
        """The hash of the log so far (waits for the check); ValueError on a mismatch."""
        self.join()
        if self.mismatch is not None:
            raise ValueError(self.mismatch)
        with self._lock:
            return self._h.hexdigest()

    def run(self) -> None:
        done = 0
        buf = bytearray(HASH_CHUNK)
        view = memoryview(buf)
        try:
            with open(self.log, "rb", buffering=0) as f:
                while True:
                    with self._lock:
                        target = self.offset + self._fed
                        if done == target and done >= self.offset:
                            self._live = True
                            return
                    stop = self.offset if done < self.offset else target
                    done, was = _chunk(f, self._h, view, done, stop), done
                    if done == was:
                        raise OSError(f"the log ended at byte {done}")
                    if done == self.offset and self._h.hexdigest() != self.sha:
                        self._fail("the log's first bytes are not the ones it was made from")
                        return
        except OSError as exc:
            self._fail(f"cannot hash the log: {exc}")

    def _fail(self, why: str) -> None:
        self.mismatch = (
            f"checkpoint {self.checkpoint}, checked behind the start: {why}; this log's "
            "checkpoints are removed, so the next start replays the whole log (the inputs "
            "taken since this start are in the log; arena replay gives the season)"
        )
        self.on_mismatch(self.mismatch)


def _chunk(f: io.RawIOBase, h: Any, view: memoryview, done: int, stop: int) -> int:
    """Hash the file's next bytes, at most a chunk and up to byte ``stop`` (``done`` read
    so far), into ``h``: how far it has read now (``done`` again at the file's end)."""
    n = f.readinto(view[: min(HASH_CHUNK, stop - done)])
    if n:
        h.update(view[:n])
    return done + (n or 0)


class PrefixHashes(threading.Thread):
    """SHA-256 of the log's first N bytes for each N asked, in one pass, in a thread."""

    def __init__(self, log: Path, offsets: list[int]) -> None:
        super().__init__(name="arena-checkpoint-hash", daemon=True)
        self.log = log
        self.offsets = offsets
        self.hashers: dict[int, Any] = {}
        self.error: OSError | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        h = hashlib.sha256()
        done = 0
        buf = bytearray(HASH_CHUNK)
        view = memoryview(buf)
        try:
            with open(self.log, "rb", buffering=0) as f:
                for offset in self.offsets:
                    while done < offset and not self._halt.is_set():
                        done, was = _chunk(f, h, view, done, offset), done
                        if done == was:
                            return  # the log is shorter
                    if done < offset:
                        return
                    self.hashers[offset] = h.copy()
        except OSError as exc:
            self.error = exc

    def at(self, offset: int) -> Any:
        """The hash of the first ``offset`` bytes (waits for it); a hasher to go on with."""
        self.join()
        h = self.hashers.get(offset)
        if h is None:
            raise Unusable(f"cannot hash the log: {self.error}")
        return h.copy()

    def stop(self) -> None:
        self._halt.set()
