"""Keeping a day's cache as soon as the day is written: import, fetch, synth, a recorder's
day close.

Why this module exists: a day is read far more often than it is written, and the first
backtest of it should already be warm. A command that has just written a log file calls
:func:`keep_day`, which reads it once through the reader (``logs.logfile.LogReader``:
every line checked, every coin's market data checked and kept as columns by
``logs.daycols``) and keeps its day cache (``logs.daycache``). It never fails the
command: a cache that cannot be kept (the cache is off, the disk is full, the file has a
bad line) is simply not there, and the first backtest reads the log itself.
"""

from __future__ import annotations

import os

from arena_tui.logs.daycache import CachedDay, cache_enabled, open_day
from arena_tui.logs.logerror import LogError
from arena_tui.logs.logfile import LogReader
from arena_tui.logs.readahead import is_compressed


def keep_day(path: str | os.PathLike[str]) -> CachedDay | None:
    """The day cache of ``path``, kept now if it was not already (every coin checked);
    None when the cache is off or the file could not be cached."""
    if not cache_enabled():
        return None
    name = os.fspath(path)
    try:
        have = open_day(name, ())
        if have is not None:
            if set(have.coins) <= have.checked:
                return have
            have.close()  # kept by a pass that checked some coins only: checked whole now
        # a compressed log's uncompressed bytes hashed as they are read: its cache keeps
        # that hash, so a replay from it needs no second read (a plain log's is its own)
        reader = LogReader([name], hashed=is_compressed(name), cache=True)
        for _ in reader:
            pass
    except (LogError, OSError):
        return None
    day = None
    for writer in reader.finished_writers:
        day = writer.commit()
    return day


def keep_days(paths: list[str]) -> int:
    """:func:`keep_day` for each of ``paths``, closing what it opens; how many were kept."""
    kept = 0
    for path in paths:
        day = keep_day(path)
        if day is not None:
            kept += 1
            day.close()
    return kept


if __name__ == "__main__":  # a recorder's day close keeps the day's cache in its own process
    import contextlib
    import sys

    with contextlib.suppress(OSError, AttributeError):  # below the recorder, where it can be
        os.nice(10)
    keep_days(sys.argv[1:])
