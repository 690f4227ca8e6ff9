"""The version-1 log on disk, appended: a writer that fsyncs, so a crash loses nothing.

Used by everything that writes a log as it goes: the recorder's daily files, a host's
season log, a paper run's log, imports. Reading is ``arena_tui.logs.logfile``.

``compressed_writer`` is the one way a compressed log is written (``import``, ``synth``,
the recorder's closed days): gzip without name or time, or an LZ4 frame with its content
checksum on, so a flipped bit in a stored ``.lz4`` is an error when read, never a silently
different line.
"""

from __future__ import annotations

import gzip
import io
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import lz4.frame
import msgspec

from arena_tui.logs.logfile import CHUNK, LOG_VERSION, read_header
from engine.inputs import Header

_ENCODER = msgspec.json.Encoder()


class LogWriter:
    """Append lines to a plain JSONL log, fsyncing so that a crash loses nothing written.

    A new (or empty) file gets ``header`` as line 1. An existing file is appended to; a torn
    final line left by a crash is cut off first, so the next line starts clean.

    ``group_fsync_s`` (for a recorder): instead of an fsync per line, every line is handed
    to the OS as it is written (a kill -9 loses nothing) and fsynced at most every
    ``group_fsync_s`` seconds, on ``maybe_sync()`` once that much time has passed, and on
    close (a power loss loses at most the last ``group_fsync_s``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: dict[str, Any],
        fsync: bool = True,
        *,
        group_fsync_s: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self.fsync = fsync and group_fsync_s is None
        self.group_fsync_s = group_fsync_s
        self._monotonic = monotonic
        self._synced_at = monotonic()
        self._dirty = False
        self.syncs = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(self.path, "a+b")  # noqa: SIM115 - closed in close()
        self.existing_header: Header | None = None
        try:
            if self._cut_torn_tail() == 0:
                self.write_raw(_ENCODER.encode({"arena_log": LOG_VERSION, **header}))
            else:
                self.existing_header = read_header(self.path)
        except BaseException:
            self._f.close()
            raise

    def _cut_torn_tail(self) -> int:
        """Drop an incomplete final line, however long; return the size kept."""
        size = self._f.seek(0, io.SEEK_END)
        keep = size
        while keep > 0:
            start = max(0, keep - CHUNK)
            self._f.seek(start)
            block = self._f.read(keep - start)
            if keep == size and block.endswith(b"\n"):
                return size
            cut = block.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                break
            keep = start
        self._f.truncate(keep)
        self._sync()
        return keep

    def write_raw(self, line: bytes) -> None:
        """Append one complete line (no ``\\n`` inside) and make it durable."""
        self._f.write(line + b"\n")
        if self.fsync:
            self._sync()
        elif self.group_fsync_s is not None:
            self._f.flush()
            self._dirty = True
            self.maybe_sync()

    def write(self, t: int, *, hl: bytes | None = None, arena: Any = None) -> None:
        """Append an input: ``hl`` as the verbatim WebSocket message bytes, or ``arena``."""
        if hl is not None:
            self.write_raw(b'{"t":%d,"hl":%s}' % (t, hl))
        else:
            self.write_raw(b'{"t":%d,"arena":%s}' % (t, _ENCODER.encode(arena)))

    def maybe_sync(self) -> None:
        """Group fsync: fsync if lines are waiting and ``group_fsync_s`` has passed."""
        due = self.group_fsync_s is not None and (
            self._monotonic() - self._synced_at >= self.group_fsync_s
        )
        if self._dirty and due:
            self._sync()

    def _sync(self) -> None:
        self._f.flush()
        os.fsync(self._f.fileno())
        self.syncs += 1
        self._synced_at = self._monotonic()
        self._dirty = False

    def close(self) -> None:
        if not self._f.closed:
            self._sync()
            self._f.close()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def compressed_writer(
    raw: IO[bytes], name: str, *, gzip_level: int = 6, lz4_level: int = 0
) -> IO[bytes]:
    """A writer over ``raw`` that compresses as ``name``'s extension says (``.gz``, ``.lz4``);
    ``raw`` itself for any other name. Closing the returned writer ends the gzip member or
    LZ4 frame and leaves ``raw`` open (the caller fsyncs and closes it).

    ``lz4_level``: 0 is LZ4's fast mode (~450 MB/s here); 3-12 its HC modes (smaller files,
    slower to write, as fast to read).
    """
    if name.endswith(".gz"):  # no name, no mtime in the gzip header: same bytes every run
        gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=gzip_level, mtime=0)
        return gz  # type: ignore[return-value]
    if name.endswith(".lz4"):
        return lz4.frame.LZ4FrameFile(  # type: ignore[no-any-return]
            raw, "wb", compression_level=lz4_level, content_checksum=True
        )
    return raw
