"""Market data for the host: Hyperliquid's live feed, or a recorded log at a speed.

Why this module exists: the server takes its market inputs from a thread that hands them
to the session in batches (``Session.push_feed``), and must not care which source it is.

- :class:`LiveHostFeed`: ``arena_tui.run.live.LiveFeed`` (the recorder's socket loop: frames
  verbatim with their receive times, a gap for every lost connection, frames the engine
  would refuse left out). Its ticks are dropped: the server writes its own, every second,
  whether the feed is up or not.
- :class:`ReplayFeed`: a recorded log played at ``speed`` times real time through
  ``arena_tui.host.restamp``: each market message waits until the server's clock reaches
  its new time. Other lines of the recording (its ticks, gaps, orders) are not replayed;
  a line that ``arena logs check`` would call damage is skipped and counted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from arena_tui.host.restamp import Restamp
from arena_tui.host.session import FeedItem
from arena_tui.logs.logcheck import check_line
from arena_tui.logs.logfile import BadLine, LogError, LogReader
from arena_tui.record.feed import Backoff, FeedConfig
from arena_tui.run.live import LiveFeed, LiveFeedError
from arena_tui.util.human import plural
from engine.inputs import Tick

Push = Callable[[list[FeedItem]], None]
Note = Callable[[str], None]
BATCH = 256


class MarketFeed(Protocol):
    def start(self, push: Push) -> None: ...

    def stop(self) -> None: ...


class ReplayFeed:
    """See the module docstring. ``skip_before``: wall ms; earlier messages are passed over
    (a restarted server resumes where the wall clock is, as a live feed would)."""

    def __init__(
        self,
        paths: Sequence[str],
        coins: Sequence[str],
        stamp: Restamp,
        *,
        skip_before: int | None = None,
        clock: Callable[[], int],
        note: Note,
    ) -> None:
        self.paths = list(paths)
        self.coins = list(coins)
        self.stamp = stamp
        self.skip_before = skip_before
        self.clock = clock
        self.note = note
        self.sent = 0
        self.refused = 0
        self.finished = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, push: Push) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(push,), name="arena-host-replay", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _run(self, push: Push) -> None:
        try:
            self._play(push)
        except LogError as exc:
            self.note(f"the replay stopped: {exc}")

    def _play(self, push: Push) -> None:
        reader = LogReader(self.paths, coins=self.coins, hashed=False)
        batch: list[FeedItem] = []
        for line in reader:
            if line.hl is None:
                continue
            restamped = self.stamp.line(reader.raw)
            if restamped is None:
                continue
            t, body = restamped
            if self.skip_before is not None and t < self.skip_before:
                continue
            if not self._wait(t, batch, push):
                return
            try:
                checked = check_line(b'{"t":%d,' % t + body)
            except BadLine as exc:
                self.refused += 1
                self.note(f"{reader.path}:{reader.lineno}: skipped, not replayable: {exc}")
                continue
            batch.append((t, body, checked))
            if len(batch) >= BATCH:
                self._send(batch, push)
        self._send(batch, push)
        self.finished = True
        self.note(f"the replay reached the end of the recording ({plural(self.sent, 'message')})")

    def _wait(self, t: int, batch: list[FeedItem], push: Push) -> bool:
        """Sleep until the clock reaches ``t`` (sending what is due first); False: stopped."""
        while (wait_ms := t - self.clock()) > 0:
            self._send(batch, push)
            if self._stop.wait(min(wait_ms, 200) / 1000):
                return False
        return not self._stop.is_set()

    def _send(self, batch: list[FeedItem], push: Push) -> None:
        if batch:
            push(list(batch))
            self.sent += len(batch)
            batch.clear()


class LiveHostFeed:
    """Hyperliquid's live feed for the season's coins (see the module docstring)."""

    def __init__(self, cfg: FeedConfig, *, backoff: Backoff, clock: Callable[[], int], note: Note):
        self.feed = LiveFeed(cfg, backoff=backoff, clock=clock)
        self.note = note
        self._thread: threading.Thread | None = None

    def start(self, push: Push) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(push,), name="arena-host-live", daemon=True
        )
        self._thread.start()

    def _run(self, push: Push) -> None:
        feed = self.feed
        try:
            for line in feed:
                self._news()
                if type(line.arena) is Tick:
                    continue
                raw = feed.raw
                push([(line.t, raw[raw.index(b",") + 1 :], line)])
        except LiveFeedError as exc:
            self.note(f"the live feed stopped: {exc}; only ticks from now on")

    def _news(self) -> None:
        events = self.feed.events
        while events:
            e = events.popleft()
            kind = e.get("event")
            if kind == "connected":
                self.note(f"connected to {e.get('url')}")
            elif kind == "lost":
                self.note(f"lost the feed ({e.get('reason')}: {e.get('detail')}); reconnecting")
            elif kind == "refused":
                self.note(f"left out a frame the engine would refuse: {e.get('why')}")

    def stop(self) -> None:
        self.feed.request_stop()
        if self._thread is not None:
            self._thread.join(6)
        self.feed.close()
