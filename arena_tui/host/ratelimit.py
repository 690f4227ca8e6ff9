"""The per-entry request limit: at most ``limit`` requests in any ``window_ms`` (moving).

A moving window, not fixed buckets: each entry keeps the times of its requests allowed in
the last ``window_ms``; a request is allowed when fewer than ``limit`` of them are newer
than ``now - window_ms``. So no half-open interval of ``window_ms`` ever holds more than
``limit`` allowed requests, and a refused request tells exactly how long until the oldest
one leaves the window. Refused requests are not counted. The clock is injected (ms,
monotonic) so tests step it instead of sleeping.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class MovingWindow:
    def __init__(self, limit: int, window_ms: int, clock: Callable[[], int] = monotonic_ms) -> None:
        assert limit > 0 and window_ms > 0
        self.limit = limit
        self.window_ms = window_ms
        self.clock = clock
        self._hits: dict[str, deque[int]] = {}

    def take(self, key: str) -> int:
        """0 if the request is allowed (and counted); else the ms until one would be."""
        now = self.clock()
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


def retry_after_s(wait_ms: int) -> int:
    """The ``Retry-After`` value (whole seconds, rounded up, at least 1)."""
    return max(1, -(-wait_ms // 1000))
