"""Equity and drawdown as text: a chart that fits the terminal, 100 columns at most.

Why this module exists: a table says where a run ended, not how it got there. A line of
block characters per entry (all on one dollar scale, so they compare) shows the path, and
the strategy's drawdown drawn up to the pause limit shows how close it came to being
stopped. Plain Unicode, no colour, no terminal queries: it reads the same in a pipe.
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
    """A sparkline per entry (the last mark of each column), the strategy's exit value too;
    and the frame (name column, plot columns) they were drawn in."""
    series: list[tuple[str, list[int]]] = []
    for i, (name, marks) in enumerate(entries):
        if not marks:
            continue
        series.append((name, [m.equity for m in marks]))
        if i == 0 and all(m.exit_equity is not None for m in marks):
            series.append(("  exit value", [m.exit_equity or 0 for m in marks]))
    label_w = max((len(dollars(v[-1])) for _, v in series), default=0)
    name_w, plot_w = frame([n for n, _ in series], label_w, width)
    if not series:
        return [], (name_w, plot_w)
    rows = []
    for name, values in series:
        cols = buckets(len(values), plot_w)
        rows.append((name, [values[c[-1]] for c in cols], values[-1]))
    lo = min(min(v) for _, v, _ in rows)
    hi = max(max(v) for _, v, _ in rows)
    first = next(m for _, m in entries if m)
    lines = wrap(
        f"equity, every entry on one scale: {dollars(lo)} (▁) to {dollars(hi)} (█); "
        f"start {dollars(starting_equity)}",
        width,
    )
    for name, values, last in rows:
        lines.append(f"{cut(name, name_w):<{name_w}} {spark(values, lo, hi)} {dollars(last)}")
    lines.append(time_axis(first[0].t, first[-1].t, name_w + 1, plot_w))
    return lines, (name_w, plot_w)


def drawdown_lines(
    name: str,
    marks: Sequence[MarkRow],
    limit_pct: int,
    frame_w: tuple[int, int] = (NAME_W, PLOT_W),
    width: int | None = None,
) -> list[str]:
    """The strategy's drawdown (worst of each column) on a 0..limit scale, bars upward."""
    if not marks:
        return []
    name_w, plot_w = frame_w
    cols = buckets(len(marks), plot_w)
    worst = [max(marks[i].drawdown for i in c) for c in cols]
    limit = limit_pct * 10**6  # e8
    top = max(limit, max(worst))
    eighths = DD_ROWS * 8
    heights = [(w * eighths + top - 1) // top if w > 0 else 0 for w in worst]  # round up
    peak = max(m.drawdown for m in marks)
    lines = [
        *wrap(
            f"drawdown of {name}: worst {pct_trunc(peak)}; the engine pauses an entry at "
            f"{limit_pct}%",
            width,
        ),
        f"{pct_label(top):>{name_w}} {'─' * plot_w} {'limit' if top == limit else 'worst'}",
    ]
    # deeper than the limit: the limit's line crosses the row it falls in
    limit_row = -(-limit * DD_ROWS // top) if top > limit else 0
    for row in range(DD_ROWS, 0, -1):
        label = {DD_ROWS // 2: pct_label(top // 2), 1: "0%"}.get(row, "")
        cells = "".join(LEVELS[max(0, min(8, h - (row - 1) * 8))] for h in heights)
        tail = ""
        if row == limit_row:
            label, tail = f"{limit_pct}%", " limit"
            cells = cells.replace(" ", "─")
        lines.append(f"{label:>{name_w}} {cells}{tail}")
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
