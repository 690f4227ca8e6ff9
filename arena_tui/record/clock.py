"""The receive clock, apart from the socket loop (``feed``) so that a command's start can
name it without importing the WebSocket client and the recorder."""

from __future__ import annotations

import time

from engine.units import NS_PER_MS


def wall_ms() -> int:
    """The receive clock: wall time in ms (every live input is stamped with it)."""
    return time.time_ns() // NS_PER_MS
