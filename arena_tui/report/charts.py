"""Equity and drawdown as text: a chart that fits the terminal, 100 columns at most.

Why this module exists: a table says where a run ended, not how it got there. A line of
block characters per entry shows the path, and the strategy's drawdown shows how close it
came to being stopped. Plain Unicode, no colour, no terminal queries: it reads the same in a
pipe.

How the scales are chosen (and why), for this chart, ``chart.svg``, arena-tui and
report.html alike:

- Each entry's equity line is drawn on a scale of its own, its low to its high (printed
  beside it): on one shared scale an entry that lost 1% squashes the others, which moved a
  few dollars, into flat lines. A scale is never shorter than ``EQUITY_FLOOR`` of the
  starting equity (0.1%: $10 of $10,000), so a line that barely moves stays flat instead of
  filling the row; the strategy's exit value shares the strategy's scale, so the gap
  between the two is the cost of closing into the book. Entries compare by the dollars
  printed, not by the heights.
- The drawdown is drawn on a scale from 0 to :func:`drawdown_top`: the first of 1%, 2%,
  5%, 10%, the pause limit, 20%, 50%, 100% that holds the worst drawdown (never less
  than ``DRAWDOWN_FLOOR``, 1%, so a zero drawdown is not blown up into a wall). The limit's
  line is drawn only when the scale reaches it; the worst drawdown and the limit are always
  said in words.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from arena_tui.report.layout import wrap
from arena_tui.run.stats import MarkRow

WIDTH = 100  # the widest the chart gets, whatever the terminal
NAME_W = 16  # the name column's least width
NAME_MAX = 32  # an entry name's longest: shown in full when the terminal has room
PLOT_W = 60  # the plot's widest
MIN_PLOT = 30  # a narrow terminal shrinks the plot to this before it cuts names
DD_ROWS = 6
LEVELS = " ▁▂▃▄▅▆▇█"
SPARK = "▁▂▃▄▅▆▇█"
EQUITY_FLOOR = 1_000  # an equity scale's least height: 1/1000 of the starting equity
DRAWDOWN_FLOOR = 10**6  # a drawdown scale's least top, e8 (1e8 is 100%): 1%
DRAWDOWN_TOPS = tuple(p * 10**6 for p in (1, 2, 5, 10, 20, 50, 100))  # e8: 1% ... 100%


def drawdown_top(worst: int, limit_pct: int) -> int:
    """The top of a drawdown chart (e8) for a worst drawdown of ``worst`` (e8): the first of
    1%, 2%, 5%, 10%, 20%, 50%, 100% and the limit that holds it, at least 1%."""
    limit = limit_pct * 10**6
    tops = sorted({*DRAWDOWN_TOPS, limit} if limit >= DRAWDOWN_FLOOR else set(DRAWDOWN_TOPS))
    return next((t for t in tops if t >= worst), max(worst, DRAWDOWN_TOPS[-1]))


def limit_in_view(top: int, limit_pct: int) -> bool:
    """Whether the pause limit lies on a drawdown scale of ``top`` (e8)."""
    return limit_pct * 10**6 <= top


def equity_scale(values: Sequence[int], starting_equity: int) -> tuple[int, int]:
    """(low, high) of an equity line's own scale: its lowest and highest value, widened
    evenly about their middle to at least ``starting_equity / EQUITY_FLOOR``."""
    lo, hi = min(values), max(values)
    least = max(starting_equity // EQUITY_FLOOR, 1)
    if hi - lo < least:
        mid = (lo + hi) // 2
        lo = mid - least // 2
        hi = lo + least
    return lo, hi


def buckets(n: int, width: int) -> list[range]:
    """``n`` points into at most ``width`` consecutive, non-empty index ranges."""
    cols = min(n, width)
    return [range(c * n // cols, (c + 1) * n // cols) for c in range(cols)]


def dollars(e6: int) -> str:
    """Whole dollars (the chart's scale labels), rounded half away from zero."""
    whole = (abs(e6) + 500_000) // 1_000_000
    return f"{'-' if e6 < 0 else ''}${whole:,}"


def stamp(t_ms: int) -> str:
    return time.strftime("%m-%d %H:%M", time.gmtime(t_ms // 1000))


def spark(values: Sequence[int], lo: int, hi: int) -> str:
    """One character per value: its height between ``lo`` and ``hi`` in eighths."""
    top = len(SPARK) - 1
    span = hi - lo
    if span <= 0:
        return SPARK[top // 2] * len(values)
    return "".join(SPARK[(v - lo) * top // span] for v in values)


def pct_trunc(e8: int) -> str:
    """An e8 ratio as a percentage with 2 decimals, truncated like the report's table."""
    whole, frac = divmod(abs(e8), 10**6)
    return f"{'-' if e8 < 0 else ''}{whole}.{frac // 10**4:02d}%"


def pct_label(e8: int) -> str:
    return f"{e8 / 10**6:.1f}%".replace(".0%", "%")


def frame(names: Sequence[str], label_w: int, width: int | None) -> tuple[int, int]:
    """(name column, plot columns) for ``width`` (at most WIDTH): names in full up to
    NAME_MAX, the plot up to PLOT_W; a narrow terminal shrinks the plot to MIN_PLOT, then
    cuts the names."""
    width = min(width or WIDTH, WIDTH)
    tail = max(1 + label_w, len(" limit"))  # after the plot: a dollar label, or "limit"
    name_w = min(max([NAME_W, *map(len, names)]), NAME_MAX)
    room = width - 1 - tail
    if room - name_w < MIN_PLOT:
        name_w = max(room - MIN_PLOT, 8)
    return name_w, max(min(PLOT_W, room - name_w), MIN_PLOT)


def cut(name: str, w: int) -> str:
    return name if len(name) <= w else name[: w - 1] + "~"


def time_axis(t0: int, t1: int, indent: int, plot_w: int = PLOT_W) -> str:
    left, right = stamp(t0), f"{stamp(t1)} UTC"
    gap = max(plot_w - len(left) - len(right), 1)
    return " " * indent + left + " " * gap + right


def equity_lines(
    entries: Sequence[tuple[str, Sequence[MarkRow]]],
    starting_equity: int,
    width: int | None = None,
) -> tuple[list[str], tuple[int, int]]:
    """A sparkline per entry (the last mark of each column) on the entry's own scale (see
    the module docstring), its low and high and its last value beside it; the strategy's
    exit value under it, on its scale; and the frame (name column, plot columns) they were
    drawn in."""
    series: list[tuple[str, list[int], tuple[int, int], bool]] = []
    for i, (name, marks) in enumerate(entries):
        if not marks:
            continue
        equity = [m.equity for m in marks]
        exits = [m.exit_equity for m in marks]
        known = [x for x in exits if x is not None]
        exit_row = i == 0 and len(known) == len(exits)
        scale = equity_scale(equity + (known if exit_row else []), starting_equity)
        series.append((name, equity, scale, True))
        if exit_row:
            series.append(("  exit value", known, scale, False))
    names = [n for n, _, _, _ in series]
    tails = [tail(v[-1], scale if own else None) for _, v, scale, own in series]
    label_w = max(map(len, tails), default=0)
    name_w, plot_w = frame(names, label_w, width)
    whole = min(max([NAME_W, *map(len, names)]), NAME_MAX)
    if name_w < whole or name_w + plot_w + label_w + 2 > min(width or WIDTH, WIDTH):
        tails = [dollars(v[-1]) for _, v, _, _ in series]  # the names first: no scales
        label_w = max(map(len, tails), default=0)
        name_w, plot_w = frame(names, label_w, width)
    if not series:
        return [], (name_w, plot_w)
    first = next(m for _, m in entries if m)
    scales = "in brackets; " if "[" in tails[0] else ""
    lines = wrap(
        f"equity, each entry on its own scale: its low (▁) to its high (█), {scales}"
        f"start {dollars(starting_equity)}",
        width,
    )
    for (name, values, (lo, hi), _), text in zip(series, tails, strict=True):
        cols = buckets(len(values), plot_w)
        line = spark([values[c[-1]] for c in cols], lo, hi)
        lines.append(f"{cut(name, name_w):<{name_w}} {line} {text}")
    lines.append(time_axis(first[0].t, first[-1].t, name_w + 1, plot_w))
    return lines, (name_w, plot_w)


def tail(last: int, scale: tuple[int, int] | None) -> str:
    """What follows a sparkline: its last value, and its scale's low and high (an exit
    value's is its strategy's, not repeated)."""
    if scale is None:
        return dollars(last)
    lo, hi = scale
    return f"{dollars(last)} [{dollars(lo)}-{dollars(hi)}]"


def drawdown_lines(
    name: str,
    marks: Sequence[MarkRow],
    limit_pct: int,
    frame_w: tuple[int, int] = (NAME_W, PLOT_W),
    width: int | None = None,
) -> list[str]:
    """The strategy's drawdown (worst of each column) as bars up from 0%, on a scale to
    the worst (``drawdown_top``); the limit's line only when the scale reaches it."""
    if not marks:
        return []
    name_w, plot_w = frame_w
    cols = buckets(len(marks), plot_w)
    worst = [max(marks[i].drawdown for i in c) for c in cols]
    peak = max(m.drawdown for m in marks)
    top = drawdown_top(peak, limit_pct)
    limit = limit_pct * 10**6  # e8
    eighths = DD_ROWS * 8
    heights = [(w * eighths + top - 1) // top if w > 0 else 0 for w in worst]  # round up
    above = "" if limit_in_view(top, limit_pct) else " (above this scale)"
    lines = wrap(
        f"drawdown of {name}: worst {pct_trunc(peak)}; the engine pauses an entry at "
        f"{limit_pct}%{above}",
        width,
    )
    # the limit's line crosses the row it falls in (the top row when it is the top)
    limit_row = -(-limit * DD_ROWS // top) if limit_in_view(top, limit_pct) else 0
    for row in range(DD_ROWS, 0, -1):
        label = {DD_ROWS: pct_label(top), DD_ROWS // 2: pct_label(top // 2), 1: "0%"}.get(row, "")
        cells = "".join(LEVELS[max(0, min(8, h - (row - 1) * 8))] for h in heights)
        after = ""
        if row == limit_row:
            label, after = f"{limit_pct}%", " limit"
            cells = cells.replace(" ", "─")
        lines.append(f"{label:>{name_w}} {cells}{after}")
    lines.append(time_axis(marks[0].t, marks[-1].t, name_w + 1, plot_w))
    return lines


def terminal_chart(
    entries: Sequence[tuple[str, Sequence[MarkRow]]],
    starting_equity: int,
    limit_pct: int,
    width: int | None = None,
) -> str:
    """The equity sparklines, then the first entry's drawdown chart; '' with no marks.
    Within ``width`` columns and never wider than WIDTH."""
    lines, frame_w = equity_lines(entries, starting_equity, width)
    if entries and entries[0][1]:
        chart_w = min(width or WIDTH, WIDTH)
        lines += ["", *drawdown_lines(entries[0][0], entries[0][1], limit_pct, frame_w, chart_w)]
    return "\n".join(line.rstrip() for line in lines)
