"""A run's own version-1 log, hashed as it is written: the backtest's and the live run's.

Why this module exists: the run log is the truth of a run (``arena replay`` of it gives the
run's ranking), so how its lines reach the disk is decided once. A backtest can be re-run,
so :class:`RunLog` gathers lines and writes them a few thousand at a time (fsynced at
close); a live run cannot, so :class:`DurableRunLog` hands every line to the OS before the
engine applies it and fsyncs about once a second.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import msgspec

_ENC = msgspec.json.Encoder()


class RunLog:
    """The run's own version-1 log: plain JSON lines, hashed as written, fsynced at close.

    Lines are gathered and written (and hashed) a few thousand at a time; ``close`` (also
    on a failure) writes what is gathered, so a run cut short keeps every line so far.
    """

    BATCH = 4096
    gathers = True  # its lines are kept (a source may skip handing them to one that is not)
    # a source handing over runs of lines (``lines``) lazily: what it still owes, handed
    # over before a strategy's input is written (``run.daysource``)
    pending: Callable[[], None] | None = None

    def __init__(self, path: Path | None, header: dict[str, Any]) -> None:
        self.path = path
        self.sha = hashlib.sha256()
        self._f: IO[bytes] | None = None
        self._lines: list[bytes] = []
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._f = path.open("wb")
        self.write(_ENC.encode({"arena_log": 1, **header}))

    def write(self, raw: bytes) -> None:
        lines = self._lines
        lines.append(raw)
        if len(lines) >= self.BATCH:
            self._drain()

    def own(self, raw: bytes) -> None:
        """A strategy's input (a thin run log, ``logs.thinlog``, keeps only these)."""
        if self.pending is not None:
            self.pending()
        self.write(raw)

    def lines(self, span: memoryview, n: int, first_t: int, last_t: int) -> None:
        """``n`` market lines at once, each ending in ``\\n``, exactly as the log holds
        them (a day cache's contiguous bytes: nothing copied line by line); their first
        and last ``t``."""
        self._drain()
        self.sha.update(span)
        if self._f is not None:
            self._f.write(span)

    def reading(self, paths: object) -> None:
        """The opener its sources are read through: none (a thin run log hashes them)."""
        return None

    def known(self, path: str, size: int, sha256: str) -> None:
        """The next source is read from the day cache (a thin run log records its hash)."""

    def _drain(self) -> None:
        if not self._lines:
            return
        self._lines.append(b"")
        data = b"\n".join(self._lines)
        self._lines = []
        self.sha.update(data)
        if self._f is not None:
            self._f.write(data)

    def close(self) -> None:
        if self.pending is not None:
            self.pending()
        self._drain()
        if self._f is not None and not self._f.closed:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()


class DurableRunLog(RunLog):
    """A live run's log: every line handed to the OS as it is written (a crash of the
    process loses nothing written), fsynced at most every ``sync_s`` and at close (a power
    loss loses at most the last ``sync_s``). The live source ticks every second, so a
    write, and with it a due fsync, comes at least that often.
    """

    def __init__(
        self,
        path: Path | None,
        header: dict[str, Any],
        *,
        sync_s: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sync_s = sync_s
        self._monotonic = monotonic
        self._synced_at = monotonic()
        self.syncs = 0
        super().__init__(path, header)

    def write(self, raw: bytes) -> None:
        data = raw + b"\n"
        self.sha.update(data)
        f = self._f
        if f is None:
            return
        f.write(data)
        f.flush()
        if self._monotonic() - self._synced_at >= self.sync_s:
            self._sync(f)

    def _sync(self, f: IO[bytes]) -> None:
        os.fsync(f.fileno())
        self.syncs += 1
        self._synced_at = self._monotonic()

    def close(self) -> None:
        f = self._f
        if f is not None and not f.closed:
            f.flush()
            self._sync(f)
            f.close()
