"""The pieces ``chart.svg`` is drawn with: a panel's frame, its axes and ticks, its lines.

Why this module exists: ``report.chartsvg`` decides what the chart shows (an equity strip
an entry, the drawdown panel, their scales); this maps times and values to pixels and
writes the SVG elements, each text escaped: UTC time ticks at a round step, value ticks (in
dollars or percent) at 1, 2 or 5 times a power of ten, axis titles, a legend that wraps,
and each line thinned to about two points a pixel column (its lowest and highest).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from engine.units import DAY_MS, MINUTE_MS

W = 1000
LEFT, RIGHT = 96, 24
LEGEND_Y = 44
TIME_STEPS_MS = [m * MINUTE_MS for m in (1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720)] + [
    d * DAY_MS for d in (1, 2, 7, 14, 28)
]

Series = list[tuple[int, int]]  # (t_ms, value: money e6 or ratio e8)


def nice_step(span: float, ticks: int = 5) -> float:
    """A step of 1, 2 or 5 times a power of ten giving about ``ticks`` ticks over ``span``."""
    raw = max(span, 1e-9) / ticks
    mag = 10.0 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def thin(points: Series, width: int) -> Series:
    """At most about two points a pixel column: each column's lowest and highest, in order."""
    n = len(points)
    if n <= 2 * width:
        return points
    out: Series = []
    for c in range(width):
        chunk = points[c * n // width : (c + 1) * n // width]
        lo = min(chunk, key=lambda p: p[1])
        hi = max(chunk, key=lambda p: p[1])
        out += sorted({lo, hi})
    return out


class Frame:
    """Maps time and value to pixels for one panel."""

    def __init__(
        self, t0: int, t1: int, lo: float, hi: float, top: int, bottom: int, *, down: bool = False
    ) -> None:
        self.t0, self.t1 = t0, max(t1, t0 + 1)
        self.lo, self.hi = lo, (hi if hi > lo else lo + 1)
        self.top, self.bottom = top, bottom
        self.down = down  # values grow downward from the top (a drawdown hangs from 0%)

    def x(self, t: int) -> float:
        return LEFT + (t - self.t0) * (W - LEFT - RIGHT) / (self.t1 - self.t0)

    def y(self, v: float) -> float:
        share = (v - self.lo) / (self.hi - self.lo)
        if self.down:
            return self.top + share * (self.bottom - self.top)
        return self.bottom - share * (self.bottom - self.top)

    def path(self, points: Series, scale: float) -> str:
        pts = thin(points, W - LEFT - RIGHT)
        return " ".join(
            f"{'M' if i == 0 else 'L'}{self.x(t):.1f},{self.y(v / scale):.1f}"
            for i, (t, v) in enumerate(pts)
        )


def text(x: float, y: float, body: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(body)}</text>'


def time_ticks(f: Frame, top: int, bottom: int) -> list[str]:
    """Grid lines from ``top`` to ``bottom`` and UTC labels under them, at a round step
    giving at most 8 ticks."""
    span = f.t1 - f.t0
    step = next((s for s in TIME_STEPS_MS if span / s <= 8), TIME_STEPS_MS[-1])
    fmt = "%Y-%m-%d" if step % DAY_MS == 0 else "%m-%d %H:%M"
    out = []
    t = -(-f.t0 // step) * step
    while t <= f.t1:
        x = f.x(t)
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}"/>')
        out.append(text(x, bottom + 18, time.strftime(fmt, time.gmtime(t // 1000)), "middle"))
        t += step
    return out


def time_title(f: Frame) -> str:
    def when(t: int) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.gmtime(t // 1000))

    return f"time (UTC), {when(f.t0)} to {when(f.t1)}"


def axis_title(top: float, bottom: float, label: str) -> str:
    """A value axis's title, written up the left edge beside ``top``..``bottom``."""
    mid = (top + bottom) / 2
    return text(18, mid, label, "middle", f' transform="rotate(-90 18 {mid:.1f})"')


def value_ticks(f: Frame, label: str, dollars: bool, ticks: int = 5) -> list[str]:
    """Grid lines and labels (dollars, or percent) at a round step giving about ``ticks``,
    and the axis title (none when ``label`` is empty)."""
    step = nice_step(f.hi - f.lo, ticks)
    out = [axis_title(f.top, f.bottom, label)] if label else []
    decimals = max(0, -math.floor(math.log10(step)))
    v = math.ceil(f.lo / step) * step
    while v <= f.hi + step * 1e-9:
        y = f.y(v)
        out.append(f'<line class="grid" x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}"/>')
        lab = (f"${v:,.2f}" if step < 1 else f"${v:,.0f}") if dollars else f"{v:.{decimals}f}%"
        out.append(text(LEFT - 6, y + 4, lab, "end"))
        v += step
    return out


def series_path(name: str, kind: str, colour: str, width: str, d: str, dash: str = "") -> str:
    """One line of the chart, named for a reader (its title) and for programs (data-*)."""
    extra = f' stroke-dasharray="{dash}"' if dash else ""
    label = "exit-value equity" if kind == "exit" else kind
    return (
        f'<path data-entry={quoteattr(name)} data-series="{kind}" stroke="{colour}" '
        f'stroke-width="{width}"{extra} d="{d}"><title>{escape(name)} {label}</title></path>'
    )


def legend_items(items: Sequence[tuple[str, str, str]]) -> list[str]:
    """Swatches and names above the chart, wrapping onto a second row when they must."""
    out: list[str] = []
    x, y = LEFT, LEGEND_Y
    for label, colour, dash in items:
        need = 44 + 7 * len(label)  # swatch, gap, ~7 px a character at 12 px, gap
        if x + need > W - RIGHT and x > LEFT:
            x, y = LEFT, y + 15
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<line x1="{x}" y1="{y - 4}" x2="{x + 22}" y2="{y - 4}" stroke="{colour}" '
            f'stroke-width="2"{extra}/>'
        )
        out.append(text(x + 26, y, label))
        x += need
    return out
