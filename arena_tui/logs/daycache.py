"""The day cache: a log file's lines kept uncompressed and indexed, memory-mapped for reruns.

Why this module exists: a backtest or sweep that reads the same recorded day again would
decompress, hash, decode and check every line of it again, most of them market data no
strategy acts on. The first read that checks the whole file cleanly writes one cache file
(``<sha256>.day`` under :func:`cache_dir`): the raw lines, unchanged, and per line its
``t``, kind and coin as arrays, so a later pass finds what it needs without decoding
anything and decodes only the lines it applies. A cache is used only while its source's
size and mtime are what they were when it was built, and only for a season whose coins
were all checked then. docs/log-format.md ("The day cache") is the format.

Why one module: the writer and the reader are the two halves of one file format (the
preamble, the sections, the checksums) and of one index; apart, each would restate it.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import struct
import sys
import tempfile
import time
import zlib
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import add
from pathlib import Path
from typing import Any

import msgspec
import platformdirs

from arena_tui.logs.logerror import LogError
from arena_tui.util.paths import APP
from engine.inputs import AssetCtx, Book, Line, Trade

CACHE_VERSION = 1
CACHE_DIR_ENV = "ARENA_CACHE_DIR"
CACHE_ENV = "ARENA_CACHE"
MAX_GB_ENV = "ARENA_CACHE_MAX_GB"
DEFAULT_MAX_GB = 20
OFF_VALUES = ("0", "off", "no", "false")
STALE_PART_S = 86_400  # a temp file this old is a crashed writer's: removed at the next commit

KIND_BOOK, KIND_TRADES, KIND_CTX, KIND_CTX_PART, KIND_OTHER = 0, 1, 2, 3, 4

MAGIC = b"ARENADAY"
_PRE = struct.Struct("<8sIIQQ")  # magic, version, header CRC-32, header offset and length
_BATCH = 1024  # lines written at once by ``add``
CHUNK = 1 << 20  # bytes read or buffered at once

_LINE = msgspec.json.Decoder(Line)


def cache_dir() -> Path:
    """Where cached days live: ``$ARENA_CACHE_DIR``, else the platform's user cache dir
    (``~/.cache/arena/days`` on Linux, ``~/Library/Caches/arena/days`` on macOS)."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir(APP, appauthor=False)) / "days"


def cache_enabled() -> bool:
    """False when ``$ARENA_CACHE`` is 0, off, no or false (any case)."""
    return os.environ.get(CACHE_ENV, "").strip().lower() not in OFF_VALUES


def max_bytes() -> int | None:
    """The size cap: ``$ARENA_CACHE_MAX_GB`` (default 20; 0 keeps only the newest day), None when
    the variable is not a number (``arena cache info`` says so; the default applies)."""
    text = os.environ.get(MAX_GB_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_GB * 10**9
    try:
        gb = float(text)
    except ValueError:
        return None
    if not gb >= 0 or gb == float("inf"):
        return None
    return int(gb * 10**9)


def cap_bytes() -> int:
    cap = max_bytes()
    return DEFAULT_MAX_GB * 10**9 if cap is None else cap


class DayMeta(msgspec.Struct):
    """A ``.day`` file's header (msgpack, at the end of the file)."""

    version: int
    byteorder: str
    path: str  # the source that built it (resolved)
    size: int
    mtime_ns: int
    sha256: str
    header_raw: bytes
    coins: list[str]
    checked: list[str]
    n: int
    first_t: int | None
    last_t: int | None
    blob_off: int
    blob_len: int
    off_off: int
    t_off: int
    coin_off: int
    kind_off: int
    arrays_crc: int
    blob_crc: int
    built_ms: int


class IndexEntry(msgspec.Struct):
    """An index entry: a source as it was when its cache was built."""

    path: str
    size: int
    mtime_ns: int
    sha256: str


_META_ENC = msgspec.msgpack.Encoder()
_META_DEC = msgspec.msgpack.Decoder(DayMeta)
_ENTRY_DEC = msgspec.json.Decoder(IndexEntry)


class _Damaged(Exception):
    """A cache file that is not a whole, consistent ``.day`` file."""


# ---- reading ----------------------------------------------------------------------------


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
        ``_Damaged`` if it is not a good ``.day`` file (of ``sha256`` if given)."""
        self.path = path
        self.file = str(file)
        try:
            fd = os.open(self.file, os.O_RDONLY)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise _Damaged(str(exc)) from None
        try:
            mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:  # an empty file cannot be mapped
            raise _Damaged(str(exc)) from None
        finally:
            os.close(fd)
        self._mm = mm
        try:
            self._load(mm, sha256)
        except _Damaged:
            self.close()
            raise

    def _load(self, mm: mmap.mmap, sha256: str | None) -> None:
        meta = read_meta(mm)
        if sha256 is not None and meta.sha256 != sha256:
            raise _Damaged("not the cache of this source")
        n = meta.n
        mv = memoryview(mm)
        if zlib.crc32(mv[meta.off_off : meta.kind_off + n]) != meta.arrays_crc:
            raise _Damaged("arrays checksum")
        blob = mv[meta.blob_off : meta.blob_off + meta.blob_len]
        if zlib.crc32(blob) != meta.blob_crc:
            raise _Damaged("lines checksum")
        offsets = mv[meta.off_off : meta.off_off + 8 * (n + 1)].cast("q")
        if offsets[0] != 0 or offsets[n] != meta.blob_len:
            raise _Damaged("line offsets")
        self._mv = mv
        self.blob = blob
        self.offsets = offsets
        self.t = mv[meta.t_off : meta.t_off + 8 * n].cast("q")
        self.coin = mv[meta.coin_off : meta.coin_off + 2 * n].cast("h")
        self.kind = mv[meta.kind_off : meta.kind_off + n].cast("B")
        self.size = meta.size
        self.sha256 = meta.sha256
        self.header_raw = meta.header_raw
        self.coins = tuple(meta.coins)
        self.checked = frozenset(meta.checked)
        self.n = n
        self.first_t = meta.first_t
        self.last_t = meta.last_t
        self.meta = meta

    def raw(self, i: int) -> bytes:
        """Line i's bytes (no ``\\n``)."""
        off = self.offsets
        return bytes(self.blob[off[i] : off[i + 1] - 1])

    def line(self, i: int) -> Line:
        """Line i decoded as the reader decodes it (its checks ran when the cache was built:
        a line the typed decoder refuses is an ignored input)."""
        off = self.offsets
        try:
            return _LINE.decode(self.blob[off[i] : off[i + 1] - 1])
        except msgspec.DecodeError:
            return Line(t=self.t[i])

    def span(self, i: int, j: int) -> memoryview:
        """Lines i..j-1 joined by ``\\n`` exactly as in the file (no trailing ``\\n``)."""
        if j <= i:
            return self.blob[0:0]
        off = self.offsets
        return self.blob[off[i] : off[j] - 1]

    def close(self) -> None:
        """Unmap the file; if slices of it are still alive, it is unmapped when they go."""
        for name in ("t", "kind", "coin", "offsets", "blob", "_mv"):
            view = self.__dict__.pop(name, None)
            if isinstance(view, memoryview):
                with contextlib.suppress(BufferError):
                    view.release()
        with contextlib.suppress(BufferError):
            self._mm.close()

    def __enter__(self) -> CachedDay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_meta(mm: mmap.mmap | bytes) -> DayMeta:
    """A ``.day`` file's header, its sections checked to lie inside the file."""
    size = len(mm)
    if size < _PRE.size:
        raise _Damaged("shorter than its preamble")
    magic, version, head_crc, head_off, head_len = _PRE.unpack_from(mm, 0)
    if magic != MAGIC:
        raise _Damaged("bad magic")
    if version != CACHE_VERSION:
        raise _Damaged(f"version {version}")
    if head_off + head_len != size or head_off < _PRE.size:
        raise _Damaged("truncated")
    head = mm[head_off : head_off + head_len]
    if zlib.crc32(head) != head_crc:
        raise _Damaged("header checksum")
    try:
        meta = _META_DEC.decode(head)
    except msgspec.DecodeError as exc:
        raise _Damaged(f"header: {exc}") from None
    n = meta.n
    if meta.version != CACHE_VERSION or meta.byteorder != sys.byteorder or n < 0:
        raise _Damaged("another version or byte order")
    sections = (
        (meta.blob_off, meta.blob_len),
        (meta.off_off, 8 * (n + 1)),
        (meta.t_off, 8 * n),
        (meta.coin_off, 2 * n),
        (meta.kind_off, n),
    )
    if any(off < _PRE.size or off + length > head_off for off, length in sections):
        raise _Damaged("sections outside the file")
    if not (meta.blob_off + meta.blob_len <= meta.off_off <= meta.t_off <= meta.coin_off):
        raise _Damaged("sections out of order")
    return meta


def _stat(path: str) -> os.stat_result:
    """The source's stat; LogError as the reader would say it when it cannot be read."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise LogError(path, None, "no such file") from None
    except OSError as exc:
        raise LogError(path, None, f"cannot read: {exc.strerror or exc}") from None


def resolved(path: str | os.PathLike[str]) -> str:
    return str(Path(path).expanduser().resolve())


def index_file(directory: Path, source: str) -> Path:
    key = hashlib.sha1(source.encode("utf-8", "surrogateescape"), usedforsecurity=False)
    return directory / "index" / f"{key.hexdigest()}.json"


def day_file(directory: Path, sha256: str) -> Path:
    return directory / f"{sha256}.day"


def read_entry(file: Path) -> IndexEntry | None:
    try:
        return _ENTRY_DEC.decode(file.read_bytes())
    except (OSError, msgspec.DecodeError):
        return None


def open_day(path: str | os.PathLike[str], coins: Iterable[str]) -> CachedDay | None:
    """The valid cache of ``path`` for a season of ``coins``, or None: cache disabled, none,
    version differs, the source's size or mtime_ns differs from what the index recorded,
    ``coins`` not a subset of ``checked``, or the cache file is damaged (truncated, bad
    magic, a checksum: treated as missing, and deleted). Never raises for a cache problem;
    the source missing raises LogError as the reader would."""
    name = os.fspath(path)
    name = name if isinstance(name, str) else os.fsdecode(name)
    st = _stat(name)
    if not cache_enabled():
        return None
    try:
        directory = cache_dir()
        entry = read_entry(index_file(directory, resolved(name)))
        if entry is None or entry.size != st.st_size or entry.mtime_ns != st.st_mtime_ns:
            return None
        file = day_file(directory, entry.sha256)
        try:
            day = CachedDay(file, name, entry.sha256)
        except FileNotFoundError:
            return None
        except _Damaged:
            with contextlib.suppress(OSError):
                file.unlink()
            return None
        if day.size != st.st_size or not frozenset(coins) <= day.checked:
            day.close()
            return None
        with contextlib.suppress(OSError):
            os.utime(file)  # last used, for ``arena cache info`` and the size cap
        return day
    except (OSError, ValueError):  # an unreadable cache directory is no cache
        return None


# ---- writing ----------------------------------------------------------------------------


class DayCacheWriter:
    """Built while a LogReader reads one file: ``add`` each line (raw bytes and the decoded
    Line) as the reader yields it; ``commit`` after the file was read to its end and every
    line was applied by the engine without error; else ``discard``.

    It writes into a temp file in :func:`cache_dir` and renames it into place at commit
    (after an fsync: a half-written cache is never visible), then records (resolved path,
    size, mtime_ns) -> sha256 in the index. The SHA-256 of the source's bytes on disk is
    computed at commit; if the source's size or mtime changed since the writer was made,
    nothing is kept. ``checked``: the coins whose market data the reader checked in full
    (None: every coin's, recorded as every coin seen). A cache problem (no space, no
    permission) never raises: the writer stops writing and commits nothing.
    """

    def __init__(self, path: str, header_raw: bytes, checked: Iterable[str] | None = None) -> None:
        self.path = path
        self._header_raw = bytes(header_raw)
        self._checked = None if checked is None else sorted(set(checked))
        self._ids: dict[str, int] = {}
        self._t = array("q")
        self._kind = array("B")
        self._coin = array("h")
        self._off = array("q", [0])
        self._pos = 0
        self._crc = 0
        self._raws: list[bytes] = []
        self._lines: list[Line] = []
        self._tmp: Path | None = None
        self._f: Any = None
        if not cache_enabled():
            return
        try:
            st = os.stat(path)
            self._stat = (st.st_size, st.st_mtime_ns)
            self._dir = cache_dir()
            self._dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".part", dir=self._dir)
            self._tmp = Path(tmp)
            self._f = os.fdopen(fd, "wb", buffering=CHUNK)
            self._f.write(bytes(_PRE.size))
        except OSError:
            self.discard()

    @property
    def active(self) -> bool:
        """Still writing (not disabled, failed, committed or discarded)."""
        return self._f is not None

    def add(self, raw: bytes, line: Line) -> None:
        """One input, as the reader yielded it (kept, and written with the next batch)."""
        self._raws.append(raw)
        self._lines.append(line)
        if len(self._raws) >= _BATCH:
            self._flush()

    def add_many(self, raws: list[bytes], lines: list[Line]) -> None:
        """Inputs in order, their bytes and their decoded lines (the reader's way: one call a
        chunk, so the per-line work is a few C-level passes and one loop)."""
        if self._raws:
            self._flush()
        if self._f is None or not raws:
            return
        ids = self._ids
        kinds: list[int] = []
        coins: list[int] = []
        kind, coin = kinds.append, coins.append
        for line in lines:
            hl = line.hl
            if hl is None:
                kind(KIND_OTHER)
                coin(-1)
                continue
            if type(hl) is Book:
                kind(KIND_BOOK)
                name = hl.data.coin
            elif type(hl) is AssetCtx:
                data = hl.data
                ctx = data.ctx
                full = ctx.funding is not None and ctx.markPx is not None
                kind(KIND_CTX if full and ctx.oraclePx is not None else KIND_CTX_PART)
                name = data.coin
            else:
                kind(KIND_TRADES)
                coin(self._trades_coin(hl.data))  # type: ignore[arg-type]
                continue
            c = ids.get(name)
            coin(self._new_coin(name) if c is None else c)
        blob = b"\n".join(raws)
        try:
            self._t.fromlist([line.t for line in lines])
            self._kind.fromlist(kinds)
            self._coin.fromlist(coins)
            self._off.extend(accumulate(map(add, map(len, raws), repeat(1)), initial=self._pos))
            del self._off[-len(raws) - 1]  # ``initial`` again
            self._f.write(blob)
            self._f.write(b"\n")
        except (OSError, ValueError, OverflowError):  # no space; more coins than int16 holds
            self.discard()
            return
        self._pos = self._off[-1]
        self._crc = zlib.crc32(b"\n", zlib.crc32(blob, self._crc))

    def _new_coin(self, name: str) -> int:
        index = len(self._ids)
        self._ids[name] = index
        return index

    def _trades_coin(self, prints: list[Trade]) -> int:
        """The coin of a trades message's prints; -1 if none or of more than one coin
        (every print's coin goes into the coin table all the same)."""
        coin = -2
        ids = self._ids
        for tr in prints:
            c = ids.get(tr.coin)
            if c is None:
                c = self._new_coin(tr.coin)
            if coin == -2:
                coin = c
            elif c != coin:
                coin = -1
        return -1 if coin == -2 else coin

    def _flush(self) -> None:
        raws, lines = self._raws, self._lines
        if raws:
            self._raws, self._lines = [], []
            self.add_many(raws, lines)

    def discard(self) -> None:
        """Keep nothing (the temp file is removed). Safe to call more than once."""
        f, self._f = self._f, None
        self._raws, self._lines = [], []
        if f is not None:
            with contextlib.suppress(OSError, ValueError):
                f.close()
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                self._tmp.unlink()
            self._tmp = None

    def commit(self) -> CachedDay | None:
        """Make the cache visible and return it opened, or None (disabled, a write failed,
        the source changed since the read began)."""
        self._flush()
        f, tmp = self._f, self._tmp
        if f is None or tmp is None:
            return None
        try:
            return self._commit(f, tmp)
        except (OSError, ValueError, _Damaged):
            self.discard()
            return None

    def _commit(self, f: Any, tmp: Path) -> CachedDay | None:
        size, sha256 = _unchanged_sha256(self.path, self._stat)
        if sha256 is None:
            self.discard()
            return None
        n = len(self._t)
        blob_len = self._pos
        pos = _PRE.size + blob_len
        pad = -pos % 8
        f.write(bytes(pad))
        pos += pad
        off_off = pos
        t_off = off_off + 8 * (n + 1)
        coin_off = t_off + 8 * n
        kind_off = coin_off + 2 * n
        arrays = [self._off.tobytes(), self._t.tobytes(), self._coin.tobytes()]
        arrays.append(self._kind.tobytes())
        crc = 0
        for part in arrays:
            f.write(part)
            crc = zlib.crc32(part, crc)
        coins = list(self._ids)
        meta = DayMeta(
            version=CACHE_VERSION,
            byteorder=sys.byteorder,
            path=resolved(self.path),
            size=size,
            mtime_ns=self._stat[1],
            sha256=sha256,
            header_raw=self._header_raw,
            coins=coins,
            checked=coins if self._checked is None else self._checked,
            n=n,
            first_t=self._t[0] if n else None,
            last_t=self._t[-1] if n else None,
            blob_off=_PRE.size,
            blob_len=blob_len,
            off_off=off_off,
            t_off=t_off,
            coin_off=coin_off,
            kind_off=kind_off,
            arrays_crc=crc,
            blob_crc=self._crc,
            built_ms=time.time_ns() // 1_000_000,
        )
        head = _META_ENC.encode(meta)
        head_off = kind_off + n
        f.write(head)
        f.flush()
        f.seek(0)
        f.write(_PRE.pack(MAGIC, CACHE_VERSION, zlib.crc32(head), head_off, len(head)))
        f.flush()
        os.fsync(f.fileno())
        f.close()
        self._f = None
        final = day_file(self._dir, sha256)
        os.replace(tmp, final)
        self._tmp = None
        _fsync_dir(self._dir)
        entry = IndexEntry(path=meta.path, size=size, mtime_ns=self._stat[1], sha256=sha256)
        _write_entry(self._dir, entry)
        prune(self._dir, keep=final)
        try:
            return CachedDay(final, self.path, sha256)
        except (FileNotFoundError, _Damaged):
            return None


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


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_entry(directory: Path, entry: IndexEntry) -> None:
    """Write an index entry atomically (temp file, rename)."""
    file = index_file(directory, entry.path)
    file.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".part", dir=file.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(msgspec.json.encode(entry))
        os.replace(tmp, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ---- what is cached, and removing it ----------------------------------------------------


@dataclass
class DayInfo:
    """One ``.day`` file as ``arena cache info`` shows it (``meta`` None: damaged)."""

    file: Path
    bytes: int
    last_used_ns: int
    meta: DayMeta | None
    sources: list[IndexEntry]


def days(directory: Path | None = None) -> list[DayInfo]:
    """Every cached day in ``directory`` (default :func:`cache_dir`), least recently used
    first, with the index entries that point at it."""
    directory = cache_dir() if directory is None else directory
    by_sha: dict[str, list[IndexEntry]] = {}
    for _file, entry in index_entries(directory):
        by_sha.setdefault(entry.sha256, []).append(entry)
    out = []
    for file in _day_files(directory):
        try:
            st = file.stat()
        except OSError:
            continue
        out.append(
            DayInfo(file, st.st_size, st.st_mtime_ns, _peek(file), by_sha.get(file.stem, []))
        )
    out.sort(key=lambda d: (d.last_used_ns, d.file.name))
    return out


def _day_files(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.iterdir() if p.suffix == ".day")
    except OSError:
        return []


def index_entries(directory: Path) -> Iterator[tuple[Path, IndexEntry]]:
    try:
        files = sorted((directory / "index").glob("*.json"))
    except OSError:
        return
    for file in files:
        entry = read_entry(file)
        if entry is not None:
            yield file, entry


def _peek(file: Path) -> DayMeta | None:
    """A ``.day`` file's header without mapping or checking its sections' checksums."""
    try:
        with file.open("rb") as f:
            pre = f.read(_PRE.size)
            if len(pre) < _PRE.size:
                return None
            magic, version, _, head_off, head_len = _PRE.unpack(pre)
            if magic != MAGIC or version != CACHE_VERSION or head_len > 1 << 26:
                return None
            f.seek(head_off)
            return _META_DEC.decode(f.read(head_len))
    except (OSError, ValueError, msgspec.DecodeError):
        return None


def remove(day: DayInfo, directory: Path) -> None:
    """Delete a cached day and the index entries that point at it."""
    with contextlib.suppress(FileNotFoundError):
        day.file.unlink()
    for file, entry in index_entries(directory):
        if entry.sha256 == day.file.stem:
            with contextlib.suppress(FileNotFoundError):
                file.unlink()


def temp_files(directory: Path, older_than_s: float = 0) -> list[Path]:
    """Writers' temp files (``.*.part``) not written to for ``older_than_s`` seconds."""
    now = time.time()
    out = []
    for folder in (directory, directory / "index"):
        try:
            found = list(folder.glob(".*.part"))
        except OSError:
            continue
        for file in found:
            with contextlib.suppress(OSError):
                if now - file.stat().st_mtime >= older_than_s:
                    out.append(file)
    return out


def prune(directory: Path, keep: Path | None = None) -> None:
    """Keep the cache under the size cap: delete least recently used days (never ``keep``),
    index entries whose day is gone, and crashed writers' temp files."""
    for file in temp_files(directory, STALE_PART_S):
        with contextlib.suppress(OSError):
            file.unlink()
    present = {p.stem for p in _day_files(directory)}
    cap = cap_bytes()
    all_days = days(directory)
    total = sum(d.bytes for d in all_days)
    for day in all_days:
        if total <= cap:
            break
        if keep is not None and day.file == keep:
            continue
        remove(day, directory)
        present.discard(day.file.stem)
        total -= day.bytes
    for file, entry in index_entries(directory):
        if entry.sha256 not in present:
            with contextlib.suppress(OSError):
                file.unlink()


def entry_for(directory: Path, source: str | os.PathLike[str]) -> IndexEntry | None:
    """The index entry of ``source`` (by its resolved path), whether or not it still holds."""
    return read_entry(index_file(directory, resolved(source)))


def source_state(entry: IndexEntry) -> str:
    """``ok`` (the source is as cached), ``changed`` (its size or mtime differ: the cache
    is not used for it) or ``missing``."""
    try:
        st = os.stat(entry.path)
    except OSError:
        return "missing"
    return "ok" if (st.st_size, st.st_mtime_ns) == (entry.size, entry.mtime_ns) else "changed"
