"""A live run's feed link, as the run screen's header shows it: up, or why not and when the
next try comes.

Why this module exists: ``arena paper`` on a terminal prints the feed's news (``cannot
connect ...; retrying in 1.4 s``) from the events its :class:`~arena_tui.run.live.LiveFeed`
queues (``feed.events``, drained by ``arena_tui.run.paperstatus`` there). On the run screen
nothing else drains them: :class:`FeedLink` does, on the UI thread a few times a second
(the queue is thread-safe), and keeps the state they add up to, in the spectator's words
(:class:`~arena_tui.tui.spectated.Link`), with the wait before the next try counted down
from when the news was read. Reading is all it does: the feed is not changed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from arena_tui.run.live import LiveFeed

State = Literal["connecting", "connected", "unreachable", "lost"]


@dataclass(frozen=True)
class FeedState:
    """What the header shows of the feed."""

    state: State  # unreachable: never connected yet; lost: down after being up
    host: str  # the feed's host (and port), without the scheme
    reason: str | None = None  # why the last try failed (or the link was lost)
    retry_in_s: float | None = None  # until the next try, as of the read (0: trying now)
    failures: int = 0  # tries failed since the link was last up (a loss counts as one)
    gaps: int = 0  # interruptions written to the run log so far


class FeedLink:
    """The link of ``feed`` (see the module docstring); :meth:`read` on the UI thread."""

    def __init__(self, feed: LiveFeed, clock: Callable[[], float] = time.monotonic) -> None:
        self.feed = feed
        self.clock = clock
        self.host = feed.cfg.url.split("://", 1)[-1].split("/", 1)[0]
        self.state: State = "connecting"
        self.reason: str | None = None
        self.retry_at: float | None = None
        self.failures = 0

    def read(self) -> FeedState:
        """The news since the last read taken in, and the link as it is now."""
        events = self.feed.events
        while events:
            self._take(events.popleft())
        recorder = self.feed.recorder
        if recorder.connected and self.state != "connected":
            self._take({"event": "connected"})  # (told before this screen began reading)
        retry_in = None if self.retry_at is None else max(0.0, self.retry_at - self.clock())
        return FeedState(self.state, self.host, self.reason, retry_in, self.failures, recorder.gaps)

    def _take(self, doc: dict[str, object]) -> None:
        kind = doc.get("event")
        retry_ms = doc.get("retry_ms")
        if kind == "connected":
            self.state, self.reason, self.retry_at, self.failures = "connected", None, None, 0
        elif kind in ("connect_failed", "lost") and isinstance(retry_ms, int):
            self.failures += 1
            if kind == "lost":
                self.state = "lost"
                self.reason = f"{doc.get('reason')}: {doc.get('detail')}"
            else:
                self.state = "lost" if self.state in ("lost", "connected") else "unreachable"
                self.reason = str(doc.get("detail"))
            self.retry_at = self.clock() + retry_ms / 1000
