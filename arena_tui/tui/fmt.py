"""The engine's integers as the run screen writes them, never through a float.

Money and ratios are written exactly as ``arena backtest``'s report writes them (its
``usd`` and ``pct``: truncated toward zero; a score, R and MDD with ``ratio_pct``'s
every digit, so S = R - MDD adds up on screen), so a number on the screen and the same number
in the report read the same. Prices and sizes keep every digit the engine has.
"""

from __future__ import annotations

import time
from decimal import Decimal

from arena_tui.report.render import pct, usd
from arena_tui.util.human import ratio_pct
from engine.units import E8

__all__ = [
    "bar", "clock", "funding_rate", "pct", "px", "ratio_pct", "span", "stamp", "sz", "usd",
]  # fmt: skip


def _decimals(frac: int, places: int) -> str:
    return f"{frac:0{places}d}".rstrip("0")


def px(e8: int | None) -> str:
    """A price: thousands separated, decimals as far as they go (``101,940.5``)."""
    if e8 is None:
        return "-"
    sign = "-" if e8 < 0 else ""
    whole, frac = divmod(abs(e8), E8)
    tail = _decimals(frac, 8)
    return f"{sign}{whole:,}" + (f".{tail}" if tail else "")


def sz(e8: int) -> str:
    """A size, signed, without separators (``-0.0098``)."""
    sign = "-" if e8 < 0 else ""
    whole, frac = divmod(abs(e8), E8)
    tail = _decimals(frac, 8)
    return f"{sign}{whole}" + (f".{tail}" if tail else "")


def stamp(t_ms: int | None) -> str:
    """``2026-12-01 00:14:59`` (UTC)."""
    if t_ms is None:
        return "----------- --:--:--"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t_ms // 1000))


def clock(t_ms: int) -> str:
    """``00:14:59`` (UTC)."""
    return time.strftime("%H:%M:%S", time.gmtime(t_ms // 1000))


def span(ms: int) -> str:
    """A duration in its two largest units: ``12s``, ``5m03s``, ``1h02m``, ``2d04h``."""
    sign = "-" if ms < 0 else ""
    s = abs(ms) // 1000
    d, rest = divmod(s, 86_400)
    h, rest = divmod(rest, 3600)
    m, sec = divmod(rest, 60)
    if d:
        return f"{sign}{d}d{h:02d}h"
    if h:
        return f"{sign}{h}h{m:02d}m"
    if m:
        return f"{sign}{m}m{sec:02d}s"
    return f"{sign}{sec}s"


def funding_rate(rate: tuple[int, int] | None) -> str:
    """The hourly funding rate as an exact percentage (``0.00125%/h``)."""
    if rate is None:
        return "-"
    num, den = rate
    text = format(Decimal(num * 100) / Decimal(den), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text}%/h"


def bar(value: int, limit: int, width: int = 10) -> str:
    """``value`` of ``limit`` as a bar of ``width`` cells (eighths), full past the limit."""
    blocks = " ▏▎▍▌▋▊▉█"
    if limit <= 0:
        return "░" * width
    eighths = min(width * 8, max(0, value) * width * 8 // limit)
    full, part = divmod(eighths, 8)
    cells = "█" * full + (blocks[part] if part else "")
    return cells + "░" * (width - len(cells))
