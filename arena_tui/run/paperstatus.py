"""What ``arena paper`` tells people while it runs: a status line and the feed's news.

Why this module exists: a paper run lasts hours, mostly unwatched; this renders the run's
counters (inputs, the simulated clock against the wall clock, fills, the feed's state) and
the feed's events (connected, lost, gaps, skipped frames), on stderr, and decides nothing.
A terminal gets the line redrawn twice a second with the news printed above it; a log file
(a supervisor, a pipe) gets one plain line per event and a status line a minute.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from arena_tui.record.feed import wall_ms
from arena_tui.record.recorder import Event
from arena_tui.record.status import feed_event, seconds
from arena_tui.record.status import utc as utc_ms
from arena_tui.run.backtest import Backtest
from arena_tui.run.live import LiveFeed

QUIET_AFTER = 5  # skipped frames described one by one; after that only counted
BEHIND_MS = 2000  # show how far the run is behind the wall clock beyond this


class PaperStatus:
    """The runner's ``progress`` for a live run (``update`` after every input)."""

    def __init__(
        self,
        bt: Backtest,
        feed: LiveFeed,
        *,
        stream: TextIO | None = None,
        tty: bool | None = None,
        every_s: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], int] = wall_ms,
    ) -> None:
        self.bt, self.feed = bt, feed
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.every_s = every_s if every_s is not None else (0.5 if self.tty else 60.0)
        self.monotonic, self.wall = monotonic, wall
        self.shown_at = monotonic()
        self.drawn = False
        self.skipped = 0

    def update(self, inputs: int, t: int) -> None:
        if self.feed.events:
            self._news()
        now = self.monotonic()
        if now - self.shown_at < self.every_s:
            return
        self.shown_at = now
        if self.tty:
            self.stream.write(f"\r{self.line(inputs, t)}\x1b[K")
            self.drawn = True
        else:
            self.stream.write(f"arena: paper: {self.line(inputs, t)}\n")
        self.stream.flush()

    def done(self) -> None:
        self._news()
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False

    def line(self, inputs: int, t: int) -> str:
        """``1,234 inputs  at 12:00:05 UTC (season 3%)  2 fills  live  gaps 0``."""
        season = self.bt.season
        if self.bt.engine.over:
            where = "season over"
        elif t < season.start:
            where = f"season starts in {seconds(season.start - t)}"
        else:
            where = f"season {(t - season.start) * 100 // (season.end - season.start)}%"
        feed = self.feed.recorder
        state = "live" if feed.connected else "reconnecting"
        fills = self.bt.ledger.count
        text = f"{inputs:,} inputs  at {utc_ms(t)[11:19]} UTC ({where})  {fills:,} fills"
        text += f"  {state}  gaps {feed.gaps}"
        behind = self.wall() - t
        if behind > BEHIND_MS:
            text += f"  {seconds(behind)} behind the wall clock"
        return text

    def _news(self) -> None:
        events = self.feed.events
        while events:
            text = self.describe(events.popleft())
            if text is None:
                continue
            if self.drawn:
                self.stream.write("\r\x1b[K")
                self.drawn = False
            self.stream.write(f"arena: paper: {text}\n")
            self.stream.flush()

    def describe(self, doc: Event) -> str | None:
        kind = doc["event"]
        said = feed_event(doc, "in the feed")
        if said is not None:
            return said
        if kind in ("bad_frame", "refused"):
            self.skipped += 1
            if self.skipped > QUIET_AFTER:
                return None
            more = " (further ones are only counted)" if self.skipped == QUIET_AFTER else ""
            return f"skipped a message, {doc['why']}: {doc['head']!r}{more}"
        return None
