"""The day cache's file format: its constants, its header, its columns and index entry,
where its files live and whether it is on.

Why this module exists: the day cache (``logs.daycache``: a log file's lines kept
uncompressed and indexed, memory-mapped for reruns) is written by ``logs.daywrite``, read
by ``logs.dayread`` and listed and pruned by ``logs.daystore``; this is what the three
share, said once: the preamble, the header (:class:`DayMeta`), the index entry, the
paths. docs/log-format.md ("The day cache") is the format.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import sys
from pathlib import Path

import msgspec
import platformdirs
import xxhash

from arena_tui.logs.logerror import LogError
from arena_tui.util.paths import APP
from engine.inputs import Line

CACHE_VERSION = 3  # 2: columnar (books, prints, contexts as integer columns); 3: XXH3 sums
CACHE_DIR_ENV = "ARENA_CACHE_DIR"
CACHE_ENV = "ARENA_CACHE"
MAX_GB_ENV = "ARENA_CACHE_MAX_GB"
DEFAULT_MAX_GB = 20
OFF_VALUES = ("0", "off", "no", "false")
STALE_PART_S = 86_400  # a temp file this old is a crashed writer's: removed at the next commit

KIND_BOOK, KIND_TRADES, KIND_CTX, KIND_CTX_PART, KIND_OTHER = 0, 1, 2, 3, 4

MAGIC = b"ARENADAY"
PRE = struct.Struct("<8sIQQQ")  # magic, version, header checksum, its offset and length
BATCH = 1024  # lines written at once by ``add``
CHUNK = 1 << 20  # bytes read or buffered at once

LINE = msgspec.json.Decoder(Line)
# The checksums of a cache's header, sections and lines: XXH3-64 (a day's ~200 MB checked
# at every open in ~12 ms, where CRC-32 took ~50 ms: a quarter of a cached replay's time).
checksum = xxhash.xxh3_64_intdigest
Checksum = xxhash.xxh3_64  # the same, fed piece by piece
ITEMSIZE = {"q": 8, "i": 4, "h": 2, "B": 1}


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


# The sections after the lines, in file order: (name, array typecode). Each starts on a
# multiple of 8. docs/log-format.md ("The day cache") says what each holds.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("off", "q"),  # n + 1 line offsets into the blob
    ("t", "q"),  # each line's t
    ("coin", "h"),  # each line's coin (index into coins), -1 none or several
    ("kind", "B"),  # each line's KIND_*
    ("row", "i"),  # each line's row in its kind's table, -1: decode the line itself
    ("b_time", "q"),  # per book: the exchange time
    ("b_nlev", "h"),  # per book: the bid and ask level counts
    ("b_lv", "q"),  # per book: its levels' bytes (offset, length) in the blob, or in alt
    ("b_px", "q"),  # per book: width bid then width ask prices, e8 (zero past the count)
    ("b_sz", "q"),  # the sizes, e8
    ("b_n", "q"),  # the order counts
    ("tr_start", "q"),  # per trades message: its first print (and one more: the end)
    ("p_t", "q"),  # per print: its line's t
    ("p_coin", "h"),  # its coin
    ("p_time", "q"),  # its exchange time
    ("p_tid", "q"),  # its tid
    ("p_px", "q"),  # its price, e8
    ("p_sz", "q"),  # its size, e8
    ("p_side", "B"),  # SIDE_* code
    ("p_str", "i"),  # its px, sz and side text (indexes into strings)
    ("c_str", "i"),  # per context: its funding, markPx, oraclePx text (-1: absent)
    ("c_mark", "q"),  # markPx e8 (NONE: absent)
    ("c_oracle", "q"),  # oraclePx e8 (NONE: absent)
    ("c_fund", "q"),  # funding as an exact fraction: numerator, denominator (0, 0: absent)
    ("alt", "B"),  # levels with whitespace in the log, re-encoded without any
    ("strings", "B"),  # msgpack list of the prints' and contexts' texts
)
NONE = -(1 << 63)  # an absent e8 value in a column
# ``Columns.add``'s ``read`` for a book whose levels were not read: here, not in
# ``logs.daycols``, so that module's compiled twin and its source share the one object
UNREAD: object = object()
SIDE_NONE, SIDE_B, SIDE_A, SIDE_OTHER = 0, 1, 2, 3


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
    width: int  # levels a side each book row holds
    sections: dict[str, tuple[int, int]]  # name -> (offset, bytes)
    arrays_sum: int  # XXH3-64 of the sections, from the first's start to the last's end
    blob_sum: int  # XXH3-64 of the lines
    built_ms: int
    # the SHA-256 of the source's uncompressed bytes (a replay's ``log_sha256``): ``sha256``
    # for a plain log; for a compressed one when the pass that wrote the cache hashed them,
    # else "" (and a cache written before this field: "")
    text_sha256: str = ""


class IndexEntry(msgspec.Struct):
    """An index entry: a source as it was when its cache was built."""

    path: str
    size: int
    mtime_ns: int
    sha256: str


META_ENC = msgspec.msgpack.Encoder()
META_DEC = msgspec.msgpack.Decoder(DayMeta)
ENTRY_DEC = msgspec.json.Decoder(IndexEntry)


class Damaged(Exception):
    """A cache file that is not a whole, consistent ``.day`` file."""


class Outdated(Damaged):
    """A whole ``.day`` file of another version or byte order: rebuilt without a word."""


def read_meta(mm: mmap.mmap | bytes) -> DayMeta:
    """A ``.day`` file's header, its sections checked to lie inside the file."""
    size = len(mm)
    if size < PRE.size:
        raise Damaged("shorter than its preamble")
    magic, version, head_sum, head_off, head_len = PRE.unpack_from(mm, 0)
    if magic != MAGIC:
        raise Damaged("bad magic")
    if version != CACHE_VERSION:
        raise Outdated(f"version {version}")
    if head_off + head_len != size or head_off < PRE.size:
        raise Damaged("truncated")
    head = mm[head_off : head_off + head_len]
    if checksum(head) != head_sum:
        raise Damaged("header checksum")
    try:
        meta = META_DEC.decode(head)
    except msgspec.DecodeError as exc:
        raise Damaged(f"header: {exc}") from None
    n = meta.n
    if meta.version != CACHE_VERSION or meta.byteorder != sys.byteorder:
        raise Outdated("another version or byte order")
    if n < 0:
        raise Damaged("line count")
    if set(meta.sections) != {name for name, _ in SECTIONS}:
        raise Damaged("sections")
    if meta.blob_off < PRE.size or meta.blob_off + meta.blob_len > head_off:
        raise Damaged("sections outside the file")
    end = meta.blob_off + meta.blob_len
    for name, code in SECTIONS:
        off, length = meta.sections[name]
        if off < end or off % 8 or off + length > head_off or length % ITEMSIZE[code]:
            raise Damaged("sections out of order or outside the file")
        end = off + length
    sizes = {name: meta.sections[name][1] for name, _ in SECTIONS}
    if (sizes["off"], sizes["t"], sizes["coin"]) != (8 * (n + 1), 8 * n, 2 * n):
        raise Damaged("line arrays")
    if (sizes["kind"], sizes["row"]) != (n, 4 * n):
        raise Damaged("line arrays")
    return meta


def stat_source(path: str) -> os.stat_result:
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
        return ENTRY_DEC.decode(file.read_bytes())
    except (OSError, msgspec.DecodeError):
        return None
