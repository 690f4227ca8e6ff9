"""The per-entry request limit: at most ``limit`` requests in any ``window_ms`` (moving).

A moving window, not fixed buckets: each entry keeps the times of its requests allowed in
the last ``window_ms``; a request is allowed when fewer than ``limit`` of them are newer
than ``now - window_ms``. So no half-open interval of ``window_ms`` ever holds more than
``limit`` allowed requests, and a refused request tells exactly how long until the oldest
one leaves the window. Refused requests are not counted. The clock is injected (ms,
monotonic) so tests step it instead of sleeping.

A restart does not reset it: :meth:`MovingWindow.restore` counts again the requests the
log holds (orders and cancels) from the last ``window_ms``. Reads are not in the log, so
after a restart they no longer count (docs/api.md says so).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from itertools import takewhile

PRUNE_EVERY = 4096  # takes between two sweeps of the keys with nothing in the window


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class MovingWindow:
    def __init__(self, limit: int, window_ms: int, clock: Callable[[], int] = monotonic_ms) -> None:
        assert limit > 0 and window_ms > 0
        self.limit = limit
        self.window_ms = window_ms
        self.clock = clock
        self._hits: dict[str, deque[int]] = {}
        self._takes = 0

    def wait(self, key: str) -> int:
        """What :meth:`take` would answer, without counting anything."""
        hits = self._hits.get(key)
        if not hits:
            return 0
        cutoff = self.clock() - self.window_ms
        inside = len(hits) - sum(1 for _ in takewhile(lambda t: t <= cutoff, hits))
        return 0 if inside < self.limit else hits[len(hits) - inside] - cutoff

    def take(self, key: str) -> int:
        """0 if the request is allowed (and counted); else the ms until one would be."""
        now = self.clock()
        self._takes += 1
        if not self._takes % PRUNE_EVERY:
            self.prune(now)
        hits = self._hits.get(key)
        if hits is None:
            hits = self._hits[key] = deque()
        cutoff = now - self.window_ms
        while hits and hits[0] <= cutoff:
            hits.popleft()
        if len(hits) >= self.limit:
            return hits[0] - cutoff
        hits.append(now)
        return 0

    def prune(self, now: int) -> None:
        """Forget the keys with no request in the window (a public limit's clients come
        and go: their number must not grow for ever). Changes no answer."""
        cutoff = now - self.window_ms
        for key in [k for k, hits in self._hits.items() if not hits or hits[-1] <= cutoff]:
            del self._hits[key]

    def __len__(self) -> int:
        """The keys held."""
        return len(self._hits)

    def restore(self, logged: Mapping[str, Iterable[int]], wall_now: int) -> None:
        """Count again each key's requests logged in the last window (at a start).

        ``logged``: each key's request times as the log carries them, wall-clock ms since
        the epoch (the session stamps an input ``max(wall clock, the last t)``); ``wall_now``:
        the wall clock now. This window counts on a monotonic clock instead, whose zero is
        arbitrary (boot time; a stepped clock in tests), so a logged time means nothing to
        it as such. What carries over is a request's age: one logged ``wall_now - t`` ms ago
        is placed that many ms before the monotonic now, both clocks read here together.
        A logged time ahead of ``wall_now`` (the wall clock stepped back, or a later line's
        ``t`` was taken to keep the log from going back) counts as now: the safe side. And
        a request is logged a moment after this window took it (the group commit's wait),
        so a restored one leaves the window at most that moment later than it would have.
        """
        now = self.clock()
        for key, times in logged.items():
            ages = sorted(max(0, wall_now - t) for t in times)[: self.limit]  # newest first
            kept = [now - age for age in reversed(ages) if age < self.window_ms]
            if kept:
                self._hits[key] = deque(kept)


def retry_after_s(wait_ms: int) -> int:
    """The ``Retry-After`` value (whole seconds, rounded up, at least 1)."""
    return max(1, -(-wait_ms // 1000))
