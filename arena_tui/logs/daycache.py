"""The day cache: a log file's lines kept uncompressed and indexed, memory-mapped for reruns.

Why this module exists: a backtest or sweep that reads the same recorded day again would
decompress, hash, decode and check every line of it again, most of them market data no
strategy acts on. The first read that checks the whole file cleanly writes one cache file
(``<sha256>.day`` under :func:`cache_dir`): the raw lines, unchanged, and per line its
``t``, kind and coin as arrays, so a later pass finds what it needs without decoding
anything and decodes only the lines it applies. A cache is used only while its source's
size and mtime are what they were when it was built, and only for a season whose coins
were all checked then. docs/log-format.md ("The day cache") is the format.

The cache is four modules, and this one names what each keeps for those who use it:
the format (``logs.dayformat``: constants, the header, where the files live), reading a
day (``logs.dayread``), writing one (``logs.daywrite``) and the cache as a whole
(``logs.daystore``: listing, pruning).
"""

from __future__ import annotations

from arena_tui.logs.dayformat import (
    CACHE_DIR_ENV,
    CACHE_ENV,
    CACHE_VERSION,
    CHUNK,
    DEFAULT_MAX_GB,
    KIND_BOOK,
    KIND_CTX,
    KIND_CTX_PART,
    KIND_OTHER,
    KIND_TRADES,
    MAGIC,
    MAX_GB_ENV,
    OFF_VALUES,
    STALE_PART_S,
    DayMeta,
    IndexEntry,
    cache_dir,
    cache_enabled,
    cap_bytes,
    day_file,
    index_file,
    max_bytes,
    read_entry,
    read_meta,
    resolved,
)
from arena_tui.logs.dayread import CachedDay, has_day, open_day
from arena_tui.logs.daystore import (
    DayInfo,
    days,
    entry_for,
    index_entries,
    prune,
    remove,
    source_state,
    temp_files,
)
from arena_tui.logs.daywrite import DayCacheWriter

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_ENV",
    "CACHE_VERSION",
    "CHUNK",
    "DEFAULT_MAX_GB",
    "KIND_BOOK",
    "KIND_CTX",
    "KIND_CTX_PART",
    "KIND_OTHER",
    "KIND_TRADES",
    "MAGIC",
    "MAX_GB_ENV",
    "OFF_VALUES",
    "STALE_PART_S",
    "CachedDay",
    "DayCacheWriter",
    "DayInfo",
    "DayMeta",
    "IndexEntry",
    "cache_dir",
    "cache_enabled",
    "cap_bytes",
    "day_file",
    "days",
    "entry_for",
    "has_day",
    "index_entries",
    "index_file",
    "max_bytes",
    "open_day",
    "prune",
    "read_entry",
    "read_meta",
    "remove",
    "resolved",
    "source_state",
    "temp_files",
]
