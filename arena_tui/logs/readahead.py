"""A log file read in large chunks, and ahead in a second thread when it is large.

Why this module exists: a cold read of a log does four things a chunk at a time, and three
of them (reading, LZ4 or gzip decompression, SHA-256) are C code that lets other Python
threads run. Done in a thread of their own they overlap the decode and the engine, which
need the interpreter: on a second core they cost the reader little (``bench/replay.py``).
The thread must take the interpreter's lock back after each of those calls, which can
wait a switch interval (5 ms) while the decoding thread runs; so it works in pieces of
a few MiB, not the 8 KiB the ``gzip`` and ``lz4.frame`` file objects read and decompress
at a time. Hence the decompression here, from the raw file: the same bytes as those file
objects give (concatenated gzip members and LZ4 frames, a gzip file's zero padding, each
member's CRC and length checked by zlib), a truncated or corrupt file an error.

The chunks arrive in order, hashed in order, so nothing a reader computes can differ; an
error the file raises reaches the reader after every chunk read before it.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, suppress
from typing import IO

import lz4.frame

DEPTH = 1  # chunks queued ahead at most (one more being read, one being decoded)
MIN_BYTES = 2 << 20  # a smaller file (on disk) is read in the caller's thread: little to overlap
RAW = 1 << 20  # bytes read from a compressed file at a time
OUT = 2 << 20  # the most a chunk holds (a plain file's reads; a decompressed piece)
# gzip's decompression is several times slower than LZ4's: its thread works in larger
# pieces (fewer waits for the interpreter's lock a byte: 1.15x faster than at OUT, at a
# peak RSS about 20 MiB higher; bench/README.md)
GZIP_OUT = 4 << 20
_POLL_S = 0.05  # how often a reader thread blocked on a full queue looks for a stop
_CUT = "Compressed file ended before the end-of-stream marker was reached"


def worth_it(path: str) -> bool:
    """Whether ``path`` is a file large enough to read ahead (no: not a file at all), on
    a machine that gives this process a second core (on one, the thread only costs)."""
    try:
        return os.path.getsize(path) >= MIN_BYTES and _cores() > 1
    except OSError:
        return False


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        return os.cpu_count() or 1


class _Plain:
    def __init__(self, f: IO[bytes]) -> None:
        self._f = f

    def read(self) -> bytes:
        data: bytes = self._f.read(OUT)
        return data


class _Lz4:
    """LZ4 frames, one after another, as ``lz4.frame.open`` reads them."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self._d = lz4.frame.LZ4FrameDecompressor()

    def read(self) -> bytes:
        while True:
            d = self._d
            if d.eof:  # a frame ended: another may follow
                raw = d.unused_data or self._f.read(RAW)
                if not raw:
                    return b""
                self._d = d = lz4.frame.LZ4FrameDecompressor()
            elif d.needs_input:
                raw = self._f.read(RAW)
                if not raw:
                    raise EOFError(_CUT)
            else:
                raw = b""
            data: bytes = d.decompress(raw, OUT)
            if data:
                return data


class _Gzip:
    """gzip members, one after another (zero bytes between or after them skipped), as
    ``gzip.open`` reads them; zlib checks each member's header, CRC and length."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self._d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        self._started = False

    def read(self) -> bytes:
        while True:
            d = self._d
            if d.eof:  # a member ended: padding, another member, or the end
                raw = d.unused_data.lstrip(b"\0")
                while not raw:
                    more = self._f.read(RAW)
                    if not more:
                        return b""
                    raw = more.lstrip(b"\0")
                self._d = d = zlib.decompressobj(zlib.MAX_WBITS | 16)
            elif d.unconsumed_tail:
                raw = d.unconsumed_tail
            else:
                raw = self._f.read(RAW)
                if not raw:
                    if not self._started:
                        return b""  # an empty file: no member at all (gzip reads it so)
                    raise EOFError(_CUT)
                self._started = True
            data = d.decompress(raw, GZIP_OUT)
            if data:
                return data


COMPRESSED = (".gz", ".lz4")  # the extensions a log is decompressed by


def is_compressed(path: str | os.PathLike[str]) -> bool:
    """Whether the log at ``path`` is read decompressed (its bytes on disk are not its text)."""
    return str(path).endswith(COMPRESSED)


def _decoder(path: str, f: IO[bytes]) -> _Plain | _Lz4 | _Gzip:
    if path.endswith(".gz"):
        return _Gzip(f)
    if path.endswith(".lz4"):
        return _Lz4(f)
    return _Plain(f)


class Chunks:
    """The uncompressed bytes of the file at ``path`` (decompressed by its extension, as
    ``logs.logfile.open_binary`` does) in chunks, each passed to ``update`` first. The file
    is ``open(path, "rb")``, or what ``opener(path)`` gives: its bytes as on disk. Read
    ahead in a thread when ``ahead``. A context manager: leaving it stops the thread, then
    closes the file, however the reading ended."""

    def __init__(
        self,
        path: str,
        update: Callable[[bytes], object],
        *,
        ahead: bool,
        opener: Callable[[str], IO[bytes]] | None = None,
    ) -> None:
        self._update = update
        self._files = ExitStack()  # (an opener's object may be a context manager only)
        # unbuffered: the reads are large, and a raw file has no lock a thread can hold
        opened = open(path, "rb", buffering=0) if opener is None else opener(path)  # noqa: SIM115
        self._f = self._files.enter_context(opened)  # closed in close()
        self._read = _decoder(path, self._f).read
        self._thread: threading.Thread | None = None
        self._queue: queue.Queue[bytes | BaseException] = queue.Queue(DEPTH)
        self._stop = threading.Event()
        if ahead:
            self._thread = threading.Thread(target=self._ahead, name="arena-log-read", daemon=True)
            self._thread.start()

    def __enter__(self) -> Chunks:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the reader thread, if any, waiting for it (it may be inside a read), then
        close the file.

        Not while the interpreter shuts down (a reader left unclosed, collected then): its
        daemon thread may have been halted inside a read, holding the file's lock or the
        queue's, and waiting for either would abort or hang the exit. The process's end
        closes the file."""
        if sys.is_finalizing():
            return
        thread = self._thread
        if thread is not None:
            self._stop.set()
            with suppress(queue.Empty):  # a thread waiting to queue a piece queues it now
                self._queue.get_nowait()
            thread.join()
            self._thread = None
        self._files.close()

    def __iter__(self) -> Iterator[bytes]:
        if self._thread is None:
            read, update = self._read, self._update
            while chunk := read():
                update(chunk)
                yield chunk
            return
        get = self._queue.get
        while True:
            item = get()
            if isinstance(item, BaseException):
                raise item
            if not item:
                return
            yield item

    def _ahead(self) -> None:
        """The thread: read, hash and queue every chunk, then b"" (or the error)."""
        read, update, stop = self._read, self._update, self._stop
        try:
            while not stop.is_set():
                chunk = read()
                if chunk:
                    update(chunk)
                if not self._put(chunk) or not chunk:
                    return
        except BaseException as exc:  # handed to the reader, raised where it reads
            self._put(exc)

    def _put(self, item: bytes | BaseException) -> bool:
        """Queue ``item``, waiting while the queue is full; False once stopped."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False
