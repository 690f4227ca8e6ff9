"""The two sources of a pass: lines read as they are, and day caches that hold lines back.

Why this module exists: the runner has one loop (``run.backtest``): each line a source
yields goes into the run log, then the engine, then the hooks and subscribers. A source
says which lines the loop sees, and counts every line it read (``n``, the last one's time
``last_t``) and updates the progress line, so the loop is the same for both:

- :class:`Counted`: every line of a reader (``logs.logfile.LogReader``) or a live feed
  (``run.live.LiveFeed``), none held: the cold pass.
- ``run.daysource.DaySource``: the warm pass over day caches (``logs.daycache``), which
  holds the lines nobody could read and yields only the others.

A source stops after the line that ends the season (the engine is over).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from arena_tui.logs.dayread import CachedDay, open_day
from arena_tui.logs.logfile import LogReader
from arena_tui.run.daysource import DaySource
from arena_tui.run.parts import LineSource, LiveSource, NotStarted, Status
from engine import Engine, Line, MalformedInput

if TYPE_CHECKING:
    from arena_tui.logs.runlog import RunLog
    from arena_tui.logs.thinlog import ThinRunLog
    from arena_tui.run.dispatch import Dispatch

_LINE = msgspec.json.Decoder(Line)
EVERY = 0x3FFF  # a recorded pass updates its progress line every 16384 inputs


def open_days(paths: Sequence[str], coins: Sequence[str]) -> list[CachedDay] | None:
    """The valid day cache of every one of ``paths`` for these coins, or None (any missing:
    the pass reads the logs themselves, and caches them)."""
    days: list[CachedDay] = []
    for path in paths:
        day = open_day(path, coins)
        if day is None:
            for done in days:
                done.close()
            return None
        days.append(day)
    return days


class Counted:
    """Every line of ``source``, counted; ``progress`` updated when ``n & every`` is 0."""

    late = False  # the strategies register at the season's start, not at the first input

    def __init__(
        self, source: LineSource, engine: Engine, progress: Status | None, every: int
    ) -> None:
        self.source = source
        self.reads = source  # whose ``raw`` is the bytes of the line last yielded
        self.engine = engine
        self.progress = progress
        self.every = every
        self.n = 0
        self.last_t: int | None = None

    def error(self, message: str) -> Exception:
        return self.source.error(message)

    def writer(self, log: RunLog | ThinRunLog) -> Callable[[], None] | None:
        """What the runner's loop calls for each line it applies, for the run log: the
        log's ``write`` of the line's bytes (None: no run log, nothing to gather)."""
        if not log.gathers:
            return None
        write, reads = log.write, self.reads
        return lambda: write(reads.raw)

    def finish(self, end: int) -> None:
        """The season ended (at ``end``) before the source did."""

    def not_started(self) -> NotStarted:
        """What to raise when the source ended before the season started."""
        return NotStarted.logs_end(self.engine.season)

    def __enter__(self) -> Counted:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        """The pass is over (``kind``: what ended it, None when it went to its end)."""

    def stop(self) -> None:
        """Read no more (the pass is over, however it ended): before the run log closes."""

    def lines(self) -> Generator[Line, None, None]:
        """The lines; ``n`` and ``last_t`` are set when it ends or is closed."""
        source, engine, progress, every = self.source, self.engine, self.progress, self.every
        done, last_t = 0, None
        try:
            for n, line in enumerate(source, 1):
                yield line  # the loop applied it (or stopped: then it is not counted)
                done = n
                last_t = t = line.t
                if progress is not None and not n & every:
                    progress.update(n, t)
                if engine.over:
                    return
        finally:  # however it ends: the loop closes it when it stops first
            self.n, self.last_t = done, last_t


class Live(Counted):
    """A live feed's lines (``run.live.LiveFeed``), counted; the feed is closed however
    the pass ends; the strategies register at its first input in the season."""

    late = True

    def __init__(self, source: LiveSource, engine: Engine, progress: Status | None) -> None:
        super().__init__(source, engine, progress, 0)  # progress after every input
        self.feed = source

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.feed.close()

    def not_started(self) -> NotStarted:
        return NotStarted.feed_stopped(self.engine.season)


class Recorded(Counted):
    """The cold pass over recorded ``logs``: read as they are (``LogReader``), cached as
    they are read when the run's config says ``cache``."""

    def __init__(
        self,
        logs: Sequence[str],
        engine: Engine,
        log: RunLog | ThinRunLog,
        cache: bool,
        progress: Status | None,
        every: int,
    ) -> None:
        coins = [m.coin for m in engine.season.markets]
        self.cache = cache
        opener = log.reading(logs)
        self.reader = LogReader(logs, coins=coins, hashed=False, opener=opener, cache=cache)
        super().__init__(self.reader, engine, progress, every)

    def finish(self, end: int) -> None:
        """Stopped at the season's end: a header's last_t claim is still checked (before
        the run log closes, which hashes the rest of a thin run's sources and closes
        them); a log being cached is read and checked to its end."""
        reader = self.reader
        if not self.cache:
            reader.finish(end)
            return
        for line in reader.rest():
            try:
                self.engine.apply(line)  # over: market data is checked, nothing changes
            except MalformedInput as exc:
                raise reader.error(str(exc)) from None

    def stop(self) -> None:
        """The reader stops, its thread (reading ahead) joined: a thin run log's close then
        hashes the rest of the source in order, after every byte the thread read."""
        self.reader.close()

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:  # the pass went to its end: the day caches written are kept
            for writer in self.reader.finished_writers:
                writer.commit(reopen=False)  # (the next pass opens and checks it)


Source = Counted | DaySource  # what the runner's loop reads


def recorded(
    logs: Sequence[str],
    engine: Engine,
    queue: list[tuple[int, int, dict[str, Any]]],
    log: RunLog | ThinRunLog,
    hooks: Dispatch,
    cache: bool,
    warm: bool,
    progress: Status | None,
    hold: bool = True,
) -> Recorded | DaySource:
    """The source of a pass over recorded ``logs``: their day caches when ``warm`` and
    every one has a valid one (the warm pass; ``hold``: it may hold back what no hook
    reads), else the logs as they are (the cold pass, caching them when ``cache``). Use it
    as a context manager around the pass."""
    coins = [m.coin for m in engine.season.markets]
    days = open_days(logs, coins) if warm else None
    if days is None:
        return Recorded(logs, engine, log, cache, progress, EVERY)
    source = DaySource(days, engine, queue, log, hooks, progress, EVERY, hold)
    try:
        log.reading(logs)
    except BaseException:
        source.__exit__()
        raise
    return source
