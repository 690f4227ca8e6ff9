"""Equity and drawdown as text: a chart that reads in any terminal, 100 columns at most.

Why this module exists: a table says where a run ended, not how it got there. A line of
block characters per entry (all on one dollar scale, so they compare) shows the path, and
the strategy's drawdown drawn up to the pause limit shows how close it came to being
stopped. Plain Unicode, no colour, no terminal queries: it reads the same in a pipe.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from arena_tui.run.stats import MarkRow

WIDTH = 100
NAME_W = 16
PLOT_W = 60
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


def time_axis(t0: int, t1: int, indent: int) -> str:
    left, right = stamp(t0), f"{stamp(t1)} UTC"
    gap = max(PLOT_W - len(left) - len(right), 1)
    return " " * indent + left + " " * gap + right


def equity_lines(
    entries: Sequence[tuple[str, Sequence[MarkRow]]], starting_equity: int
) -> list[str]:
    """A sparkline per entry (the last mark of each column), the strategy's exit value too."""
    rows: list[tuple[str, list[int], int]] = []
    for i, (name, marks) in enumerate(entries):
        if not marks:
            continue
        cols = buckets(len(marks), PLOT_W)
        rows.append((name, [marks[c[-1]].equity for c in cols], marks[-1].equity))
        if i == 0 and all(m.exit_equity is not None for m in marks):
            exits = [marks[c[-1]].exit_equity or 0 for c in cols]
            rows.append(("  exit value", exits, exits[-1]))
    if not rows:
        return []
    lo = min(min(v) for _, v, _ in rows)
    hi = max(max(v) for _, v, _ in rows)
    first = next(m for _, m in entries if m)
    lines = [
        f"equity, every entry on one scale: {dollars(lo)} (▁) to {dollars(hi)} (█); "
        f"start {dollars(starting_equity)}"
    ]
    for name, values, last in rows:
        lines.append(f"{name[:NAME_W]:<{NAME_W}} {spark(values, lo, hi)} {dollars(last)}")
    lines.append(time_axis(first[0].t, first[-1].t, NAME_W + 1))
    return lines


def drawdown_lines(name: str, marks: Sequence[MarkRow], limit_pct: int) -> list[str]:
    """The strategy's drawdown (worst of each column) on a 0..limit scale, bars upward."""
    if not marks:
        return []
    cols = buckets(len(marks), PLOT_W)
    worst = [max(marks[i].drawdown for i in c) for c in cols]
    limit = limit_pct * 10**6  # e8
    top = max(limit, max(worst))
    eighths = DD_ROWS * 8
    heights = [(w * eighths + top - 1) // top if w > 0 else 0 for w in worst]  # round up
    peak = max(m.drawdown for m in marks)
    lines = [
        f"drawdown of {name[:32]}: worst {pct_trunc(peak)}; the engine pauses an entry at "
        f"{limit_pct}%",
        f"{pct_label(top):>{NAME_W}} {'─' * PLOT_W} {'limit' if top == limit else 'worst'}",
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
        lines.append(f"{label:>{NAME_W}} {cells}{tail}")
    lines.append(time_axis(marks[0].t, marks[-1].t, NAME_W + 1))
    return lines


def terminal_chart(
    entries: Sequence[tuple[str, Sequence[MarkRow]]], starting_equity: int, limit_pct: int
) -> str:
    """The equity sparklines, then the first entry's drawdown chart; '' with no marks."""
    lines = equity_lines(entries, starting_equity)
    if entries and entries[0][1]:
        lines += ["", *drawdown_lines(entries[0][0], entries[0][1], limit_pct)]
    return "\n".join(line.rstrip() for line in lines)
