"""A replay read from day caches: only the lines someone could read are made objects.

Why this module exists: ``arena replay`` of a log read before (a backtest, an import, a
fetch, ``arena replay --cache`` wrote its day cache: ``logs.daycache``) need not decode and
apply every line again. With no strategy in the pass, the warm pass's source
(``run.daysource.DaySource``) holds every book and context until an order, a cancel or a
timed event could read it, applies a trades message that fills nothing as integers from
the columns (``Engine.apply_quiet_prints``), and passes over ticks before the next timed
event; the engine makes exactly the events the cold replay makes (tests/test_warm_replay.py
holds them to it). After the season's end only what the engine still checks is applied:
orders and cancels (their senders get an answer) and the lines the columns do not hold;
the market data the cache holds was checked in full when it was written.

``log_sha256`` is the SHA-256 of the logs' uncompressed bytes: for one log it is the
cache's own record (a plain log's bytes on disk; a compressed log's uncompressed bytes, kept
when the pass that wrote the cache hashed them: ``arena replay --cache``, an import, a
fetch, a synth, a recorded day); for several logs, or a compressed one whose cache has no
such record (a backtest's, or one written before the record), they are read from disk and
hashed, decompressed.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Generator, Sequence

from arena_tui.logs.dayformat import KIND_CTX
from arena_tui.logs.dayread import CachedDay
from arena_tui.logs.logfile import LogError, open_binary
from arena_tui.logs.thinlog import is_thin
from arena_tui.run.daysource import UNHOOKED, DaySource, check_follows
from arena_tui.run.parts import Status
from arena_tui.run.runlogs import NoRunLog
from arena_tui.run.sources import EVERY, open_days
from engine import Engine, Line


def cached_days(paths: Sequence[str], coins: Sequence[str]) -> WarmReplay | None:
    """The cached replay of ``paths`` for a season of ``coins``: every one a log (not a
    thin run log) with a valid day cache for those coins; else None (the logs are read)."""
    names = [str(p) for p in paths]
    if not names or any(is_thin(p) for p in names):
        return None
    days = open_days(names, coins)
    return None if days is None else WarmReplay(days)


class WarmReplay:
    """What the replay loop reads in place of a ``LogReader``: ``inputs_for`` yields the
    lines to apply; ``raw`` is the last one's bytes; ``inputs``, ``sha256`` and ``error``
    as the reader's."""

    def __init__(self, days: list[CachedDay]) -> None:
        self.days = days
        self.inputs = sum(day.n for day in days)
        self.raw = b""
        self._sha256 = days[0].text_sha256 if len(days) == 1 else ""
        self._where: tuple[str, int] = ("", 0)  # the path and index of a line after the end
        self._source: DaySource | None = None

    @property
    def sha256(self) -> str:
        """The logs' uncompressed bytes, in order (the cache's record for one, if it has
        one; else read from disk: the cache was opened only while each log's size and mtime
        were what it recorded)."""
        if not self._sha256:
            h = hashlib.sha256()
            for day in self.days:
                try:
                    with open_binary(day.path) as f:
                        while chunk := f.read(1 << 20):
                            h.update(chunk)
                except (EOFError, OSError, RuntimeError, zlib.error) as exc:
                    why = f"cannot read (truncated or corrupt?): {exc}"
                    raise LogError(day.path, None, why) from None
            self._sha256 = h.hexdigest()
        return self._sha256

    def error(self, message: str) -> LogError:
        path, i = self._where
        if path:
            return LogError(path, i + 2, message)
        assert self._source is not None
        return self._source.error(message)  # type: ignore[return-value]

    def inputs_for(self, engine: Engine, progress: Status | None) -> Generator[Line, None, None]:
        """The lines ``engine`` must apply, in order; the days are closed when it ends."""
        source = DaySource(self.days, engine, [], NoRunLog(), UNHOOKED, progress, EVERY)
        self._source = source
        with source:
            for line in source.lines():
                self.raw = source.raw
                yield line
            if engine.over:
                yield from self._after_end(source)

    def _after_end(self, source: DaySource) -> Generator[Line, None, None]:
        """The lines after the one that ended the season that the engine still checks:
        arena inputs, and market lines the columns do not hold (they were decoded, not
        checked, when the cache was written)."""
        days = self.days
        first = next(k for k, day in enumerate(days) if day is source.day)
        start = source.index + 1
        last_t = source.last_t
        for day in days[first:]:
            if day is not source.day:
                check_follows(day, last_t)
            kinds, rows = day.kind, day.row
            for i in range(start, day.n):
                if kinds[i] > KIND_CTX or rows[i] < 0:
                    self._where = (day.path, i)
                    self.raw = day.raw(i)
                    yield day.line(i)
            if day.n:
                last_t = day.t[day.n - 1]
            start = 0
