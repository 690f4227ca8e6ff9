"""Writing a day cache while a log is read: the writer, the atomic commit, the index.

Why this module exists: the first read that checks a whole log file cleanly
(``logs.logfile.LogReader``) feeds each line to a :class:`DayCacheWriter`, which keeps it
in a temp file and, once the pass went to the file's end, renames it into place and
records it in the index (then prunes the cache to its size cap, ``logs.daystore``). The
format is ``logs.dayformat``'s.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import os
import sys
import tempfile
import time
from array import array
from collections.abc import Iterable, Iterator
from itertools import accumulate, repeat
from operator import add
from pathlib import Path
from typing import Any

from arena_tui.logs.daycols import Columns
from arena_tui.logs.dayformat import (
    BATCH,
    CACHE_VERSION,
    CHUNK,
    MAGIC,
    META_ENC,
    PRE,
    SECTIONS,
    UNREAD,
    Checksum,
    Damaged,
    DayMeta,
    IndexEntry,
    cache_dir,
    cache_enabled,
    checksum,
    day_file,
    resolved,
)
from arena_tui.logs.dayread import CachedDay
from arena_tui.logs.daystore import prune, write_entry
from arena_tui.logs.readahead import is_compressed
from engine.inputs import Line


class DayCacheWriter:
    """Built while a LogReader reads one file: ``add`` each line (raw bytes and the decoded
    Line) as the reader yields it; ``commit`` after the file was read to its end and every
    line was applied by the engine without error; else ``discard``.

    It writes into a temp file in :func:`cache_dir` and renames it into place at commit
    (a half-written cache is never visible; not fsynced: one a crash left half-written
    fails its checksums when opened, and is rebuilt), then records (resolved path,
    size, mtime_ns) -> sha256 in the index. The SHA-256 of the source's bytes on disk is
    computed at commit; if the source's size or mtime changed since the writer was made,
    nothing is kept. ``checked``: the coins whose market data the reader checked in full
    (None: every coin's, recorded as every coin seen). A cache problem (no space, no
    permission) never raises: the writer stops writing and commits nothing.
    """

    def __init__(
        self,
        path: str,
        header_raw: bytes,
        checked: Iterable[str] | None = None,
        *,
        written: bool = True,
    ) -> None:
        """``written=False``: the log is not written yet (``arena import`` checks its lines
        before it writes them): ``bind`` names it once it is, before ``commit``."""
        self.path = path
        self._header_raw = bytes(header_raw)
        self._checked = None if checked is None else sorted(set(checked))
        self._cols = Columns()
        self._t = self._cols.t
        self._off = array("q", [0])
        self._pos = 0
        self._sum = Checksum()
        self._raws: list[bytes] = []
        self._lines: list[Line] = []
        self._reads: list[Any] = []  # what the caller read of each book's levels (or UNREAD)
        self._tmp: Path | None = None
        self._f: Any = None
        self._stat = (-1, -1)  # no file's: a writer never bound keeps nothing
        # a compressed source's uncompressed bytes' SHA-256, when the reader that fed this
        # writer hashed them (a plain source's is its ``sha256``, known at commit)
        self.text_sha256 = ""
        if not cache_enabled():
            return
        try:
            if written:
                st = os.stat(path)
                self._stat = (st.st_size, st.st_mtime_ns)
            self._dir = cache_dir()
            self._dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".part", dir=self._dir)
            self._tmp = Path(tmp)
            self._f = os.fdopen(fd, "wb", buffering=CHUNK)
            self._f.write(bytes(PRE.size))
        except OSError:
            self.discard()

    def bind(self, path: str, header_raw: bytes) -> None:
        """The log this writer (``written=False``) was fed is written now, at ``path``, with
        this header line: its size and mtime from now on are what ``commit`` checks."""
        self.path = path
        self._header_raw = bytes(header_raw)
        try:
            st = os.stat(path)
        except OSError:
            self.discard()
            return
        self._stat = (st.st_size, st.st_mtime_ns)

    @property
    def active(self) -> bool:
        """Still writing (not disabled, failed, committed or discarded)."""
        return self._f is not None

    def written(self, cut: int) -> tuple[int, Iterator[bytes]] | None:
        """The lines added so far as the cache holds them, each followed by ``\n``, and how
        many: what a log body of them is, byte for byte (``arena import`` writes its log
        from them instead of reading its sources again). In pieces of whole lines, each the
        fewest that reach ``cut`` bytes (the last what is left): the pieces a writer that
        batches lines so writes, so a compressed log is the same bytes too. None when not
        writing. Read before ``commit``; add nothing meanwhile."""
        self._flush()
        f, tmp = self._f, self._tmp
        if f is None or tmp is None:
            return None
        try:
            f.flush()
        except OSError:
            self.discard()
            return None
        return len(self._t), _pieces(tmp, PRE.size, self._off, cut)

    def add(self, raw: bytes, line: Line, read: Any = UNREAD) -> None:
        """One input, as the reader yielded it (kept, and written with the next batch);
        ``read``: what the caller's check read of a book's levels (``levels_e8``'s answer),
        so the columns take it instead of reading them again."""
        self._raws.append(raw)
        self._lines.append(line)
        self._reads.append(read)
        if len(self._raws) >= BATCH:
            self._flush()

    def add_many(self, raws: list[bytes], lines: list[Line], read: list[Any] | None = None) -> None:
        """Inputs in order, their bytes and their decoded lines (the reader's way: one call a
        chunk, so the per-line work is a few C-level passes and one loop); ``read`` as
        ``Columns.add``'s."""
        if self._raws:
            self._flush()
        if self._f is None or not raws:
            return
        blob = b"\n".join(raws)
        try:
            self._t.fromlist([line.t for line in lines])
            self._cols.add(raws, lines, self._pos, read)
            self._off.extend(accumulate(map(add, map(len, raws), repeat(1)), initial=self._pos))
            del self._off[-len(raws) - 1]  # ``initial`` again
            self._f.write(blob)
            self._f.write(b"\n")
        except (OSError, ValueError, OverflowError):  # no space; more coins than int16 holds
            # (a line's own unfit market data is not a failure: ``Columns`` keeps it out)
            self.discard()
            return
        self._pos = self._off[-1]
        self._sum.update(blob)
        self._sum.update(b"\n")

    def _flush(self) -> None:
        raws, lines, read = self._raws, self._lines, self._reads
        if raws:
            self._raws, self._lines, self._reads = [], [], []
            self.add_many(raws, lines, read)

    def discard(self) -> None:
        """Keep nothing (the temp file is removed). Safe to call more than once."""
        f, self._f = self._f, None
        self._raws, self._lines, self._reads = [], [], []
        if f is not None:
            with contextlib.suppress(OSError, ValueError):
                f.close()
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                self._tmp.unlink()
            self._tmp = None

    def commit(self, *, reopen: bool = True) -> CachedDay | None:
        """Make the cache visible and return it opened, or None (disabled, a write failed,
        the source changed since the read began). ``reopen`` False: for a caller that does
        not read it now (a reader opens and checks it whole when it does): made visible
        only, never read back (its checksums over every byte just written), and None."""
        self._flush()
        f, tmp = self._f, self._tmp
        if f is None or tmp is None:
            return None
        try:
            return self._commit(f, tmp, reopen)
        except (OSError, ValueError, Damaged):
            self.discard()
            return None

    def _commit(self, f: Any, tmp: Path, reopen: bool) -> CachedDay | None:
        size, sha256 = _unchanged_sha256(self.path, self._stat)
        if sha256 is None:
            self.discard()
            return None
        n = len(self._t)
        blob_len = self._pos
        pos = PRE.size + blob_len
        cols = self._cols
        data = {"off": [memoryview(self._off).cast("B")], **cols.sections()}  # (views)
        sections: dict[str, tuple[int, int]] = {}
        arrays = Checksum()
        for name, _code in SECTIONS:
            pad = bytes(-pos % 8)
            f.write(pad)
            if sections:  # the checksum runs from the first section's start
                arrays.update(pad)
            length = 0
            for piece in data[name]:  # (a column's pieces, one after another)
                f.write(piece)
                arrays.update(piece)
                length += len(piece)
            sections[name] = (pos + len(pad), length)
            pos += len(pad) + length
        coins = list(cols.ids)
        checked = coins if self._checked is None else self._checked
        meta = DayMeta(
            version=CACHE_VERSION,
            byteorder=sys.byteorder,
            path=resolved(self.path),
            size=size,
            mtime_ns=self._stat[1],
            sha256=sha256,
            header_raw=self._header_raw,
            coins=coins,
            checked=[c for c in checked if c not in cols.failed],
            n=n,
            first_t=self._t[0] if n else None,
            last_t=self._t[-1] if n else None,
            blob_off=PRE.size,
            blob_len=blob_len,
            width=cols.width,
            sections=sections,
            arrays_sum=arrays.intdigest(),
            blob_sum=self._sum.intdigest(),
            built_ms=time.time_ns() // 1_000_000,
            text_sha256=self.text_sha256 if is_compressed(self.path) else sha256,
        )
        head = META_ENC.encode(meta)
        head_off = pos
        f.write(head)
        f.flush()
        f.seek(0)
        f.write(PRE.pack(MAGIC, CACHE_VERSION, checksum(head), head_off, len(head)))
        # not fsynced (that took 0.7 s of a 24 h day's import, 470 MB): a cache is made from
        # its log, and every open checks its every byte (XXH3 sums), so one a crash left
        # half-written is refused, removed and rebuilt; the log itself is fsynced
        f.close()
        self._f = None
        final = day_file(self._dir, sha256)
        os.replace(tmp, final)
        self._tmp = None
        entry = IndexEntry(path=meta.path, size=size, mtime_ns=self._stat[1], sha256=sha256)
        write_entry(self._dir, entry)
        prune(self._dir, keep=final)
        if not reopen:
            return None
        try:
            return CachedDay(final, self.path, sha256)
        except (FileNotFoundError, Damaged):
            return None


def _pieces(path: Path, start: int, off: array[int], cut: int) -> Iterator[bytes]:
    """The lines ``off`` delimits (their ends, from 0) in ``path`` from ``start``, in pieces
    of whole lines: each the fewest that reach ``cut`` bytes, the last what is left."""
    end = off[-1]
    with open(path, "rb") as f:
        f.seek(start)
        at = 0
        while at < end:
            i = bisect.bisect_left(off, at + cut)
            stop = off[i] if i < len(off) else end
            piece = f.read(stop - at)
            if len(piece) != stop - at:
                raise OSError(f"{path}: cut short")
            at = stop
            yield piece


def _unchanged_sha256(path: str, was: tuple[int, int]) -> tuple[int, str | None]:
    """The source's size and SHA-256 on disk, if its size and mtime are still ``was``."""
    st = os.stat(path)
    if (st.st_size, st.st_mtime_ns) != was:
        return st.st_size, None
    sha = hashlib.sha256()
    with open(path, "rb") as src:
        while data := src.read(CHUNK):
            sha.update(data)
    st = os.stat(path)
    if (st.st_size, st.st_mtime_ns) != was:
        return st.st_size, None
    return st.st_size, sha.hexdigest()
