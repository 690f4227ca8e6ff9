"""Reading a cached day: the memory-mapped file and the check that it is still valid.

Why this module exists: a pass that reads a recorded day again (``run.sources.DaySource``)
opens its cache here (:func:`open_day`) and reads its lines, times, kinds and coins without
decoding anything; a cache that no longer matches its source, or is damaged, is no cache.
The format is ``logs.dayformat``'s.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from arena_tui.logs.dayformat import (
    SECTIONS,
    Damaged,
    Outdated,
    cache_dir,
    cache_enabled,
    checksum,
    day_file,
    index_file,
    read_entry,
    read_meta,
    resolved,
    stat_source,
)
from arena_tui.logs.dayinputs import Inputs
from arena_tui.logs.readahead import is_compressed
from engine.inputs import Line

if TYPE_CHECKING:
    import numpy as np

_STRINGS = msgspec.msgpack.Decoder(list[str])


class CachedDay:
    """One cached log file, memory-mapped. Valid only as long as the source's size and
    mtime_ns match (:func:`open_day` checks that).

    ``t``, ``kind``, ``coin``: one item per input (line after the header): its ``t``, its
    ``KIND_*`` and its coin's index in ``coins`` (-1 for ``KIND_OTHER`` and for a trades
    message with prints of more than one coin, or none). ``offsets``: n + 1 offsets into
    the lines, line i being ``offsets[i]:offsets[i+1] - 1``.
    """

    def __init__(self, file: str | os.PathLike[str], path: str, sha256: str | None = None):
        """Map ``file`` and check it whole (preamble, header, sections, checksums);
        ``Damaged`` if it is not a good ``.day`` file (of ``sha256`` if given)."""
        self.path = path
        self.file = str(file)
        try:
            fd = os.open(self.file, os.O_RDONLY)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise Damaged(str(exc)) from None
        try:
            mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:  # an empty file cannot be mapped
            raise Damaged(str(exc)) from None
        finally:
            os.close(fd)
        self._mm = mm
        try:
            self._load(mm, sha256)
        except Damaged:
            self.close()
            raise

    def _load(self, mm: mmap.mmap, sha256: str | None) -> None:
        meta = read_meta(mm)
        if sha256 is not None and meta.sha256 != sha256:
            raise Damaged("not the cache of this source")
        n = meta.n
        mv = memoryview(mm)
        first = meta.sections[SECTIONS[0][0]][0]
        last_off, last_len = meta.sections[SECTIONS[-1][0]]
        if checksum(mv[first : last_off + last_len]) != meta.arrays_sum:
            raise Damaged("arrays checksum")
        blob = mv[meta.blob_off : meta.blob_off + meta.blob_len]
        if checksum(blob) != meta.blob_sum:
            raise Damaged("lines checksum")
        cols: dict[str, memoryview[int]] = {}
        for name, code in SECTIONS:
            off, length = meta.sections[name]
            cols[name] = mv[off : off + length].cast(code)  # type: ignore[call-overload]
        offsets = cols["off"]
        if offsets[0] != 0 or offsets[n] != meta.blob_len:
            raise Damaged("line offsets")
        try:
            strings = _STRINGS.decode(cols["strings"])
        except msgspec.DecodeError:
            raise Damaged("strings") from None
        self._mv = mv
        self.blob = blob
        self.offsets = offsets
        self.cols = cols
        self.t = cols["t"]
        self.coin = cols["coin"]
        self.kind = cols["kind"]
        self.row = cols["row"]
        self.size = meta.size
        self.sha256 = meta.sha256  # of the source's bytes on disk
        # of its uncompressed bytes (a replay's log_sha256): "" when not known
        plain = not is_compressed(self.path)
        self.text_sha256 = meta.text_sha256 or (meta.sha256 if plain else "")
        self.header_raw = meta.header_raw
        self.coins = tuple(meta.coins)
        self.checked = frozenset(meta.checked)
        self.n = n
        self.first_t = meta.first_t
        self.last_t = meta.last_t
        self.width = meta.width
        self.meta = meta
        self.inputs = Inputs(cols, blob, self.coins, strings)

    def array(self, name: str) -> np.ndarray[Any, Any]:
        """A column as a numpy array over the mapping (no copy): one of
        ``logs.dayformat.SECTIONS``; the book levels ``b_px``, ``b_sz`` and ``b_n`` shaped
        (books, 2, width)."""
        import numpy as np  # (here: a pass reads the columns without it)

        code = dict(SECTIONS)[name]
        out = np.frombuffer(self.cols[name], dtype=np.dtype(code))
        if name in ("b_px", "b_sz", "b_n"):
            out = out.reshape(len(self.cols["b_time"]), 2, self.width)
        return out

    def raw(self, i: int) -> bytes:
        """Line i's bytes (no ``\\n``)."""
        off = self.offsets
        return bytes(self.blob[off[i] : off[i + 1] - 1])

    def line(self, i: int) -> Line:
        """Line i, the very ``Line`` the reader decodes, built from the columns (a line the
        columns do not hold is decoded: its checks ran when the cache was built, and a
        line the typed decoder refuses is an ignored input)."""
        return self.inputs.line(i)

    def span(self, i: int, j: int) -> memoryview:
        """Lines i..j-1 joined by ``\\n`` exactly as in the file (no trailing ``\\n``)."""
        if j <= i:
            return self.blob[0:0]
        off = self.offsets
        return self.blob[off[i] : off[j] - 1]

    def close(self) -> None:
        """Unmap the file; if slices of it are still alive, it is unmapped when they go."""
        self.__dict__.pop("inputs", None)
        cols = self.__dict__.pop("cols", {})
        for name in ("t", "kind", "coin", "row", "offsets"):
            self.__dict__.pop(name, None)
        views = [*cols.values(), self.__dict__.pop("blob", None), self.__dict__.pop("_mv", None)]
        for view in views:
            if isinstance(view, memoryview):
                with contextlib.suppress(BufferError):
                    view.release()
        with contextlib.suppress(BufferError):
            self._mm.close()

    def __enter__(self) -> CachedDay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _indexed(
    path: str | os.PathLike[str],
) -> tuple[str, os.stat_result, tuple[Path, str] | None]:
    """The source's name, its stat, and the cache file its index entry names with the
    source's SHA-256, while the source keeps the size and mtime_ns recorded (None: cache
    off, no entry, or changed).
    LogError when the source is missing, as the reader would say it; OSError, ValueError
    for an unreadable cache directory."""
    name = os.fspath(path)
    name = name if isinstance(name, str) else os.fsdecode(name)
    st = stat_source(name)
    if not cache_enabled():
        return name, st, None
    directory = cache_dir()
    entry = read_entry(index_file(directory, resolved(name)))
    if entry is None or entry.size != st.st_size or entry.mtime_ns != st.st_mtime_ns:
        return name, st, None
    return name, st, (day_file(directory, entry.sha256), entry.sha256)


def has_day(path: str | os.PathLike[str], coins: Iterable[str]) -> bool:
    """Whether ``path`` has a cache for a season of ``coins``, by its index entry and its
    file's header alone (``open_day`` also checks the whole file's checksums, and is what
    a pass opens: a cache damaged past its header is found there, removed, and the log
    read and cached again). For a caller deciding whether a pass will read caches."""
    try:
        _, st, found = _indexed(path)
        if found is None:
            return False
        with open(found[0], "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            meta = read_meta(mm)
    except (OSError, ValueError, Damaged):
        return False
    return meta.size == st.st_size and frozenset(coins) <= frozenset(meta.checked)


def open_day(path: str | os.PathLike[str], coins: Iterable[str]) -> CachedDay | None:
    """The valid cache of ``path`` for a season of ``coins``, or None: cache disabled, none,
    version differs, the source's size or mtime_ns differs from what the index recorded,
    ``coins`` not a subset of ``checked``, or the cache file is damaged (truncated, bad
    magic, a checksum: treated as missing, deleted, and said in one line on stderr; one of
    another version is deleted without a word). Never raises for a cache problem;
    the source missing raises LogError as the reader would."""
    try:
        name, st, found = _indexed(path)
        if found is None:
            return None
        file, sha256 = found
        try:
            day = CachedDay(file, name, sha256)
        except FileNotFoundError:
            return None
        except Damaged as exc:  # refused; the pass reads the log and caches it again
            with contextlib.suppress(OSError):
                file.unlink()
            if not isinstance(exc, Outdated):
                sys.stderr.write(
                    f"arena: note: the day cache of {name} was damaged ({exc}): removed, "
                    "and the log is read (and cached) again\n"
                )
            return None
        if day.size != st.st_size or not frozenset(coins) <= day.checked:
            day.close()
            return None
        with contextlib.suppress(OSError):
            os.utime(file)  # last used, for ``arena cache info`` and the size cap
        return day
    except (OSError, ValueError):  # an unreadable cache directory is no cache
        return None
