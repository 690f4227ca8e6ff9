"""Equity and drawdown over the minute marks, with exit-value equity beside equity.

One column per run of marks (the last mark's equity, the worst drawdown in it), as wide as
the panel is. Equity and exit-value equity share one dollar scale (with the starting
equity on it), so the gap between the two lines is the cost of closing into the book. The
drawdown row is scaled to the limit that pauses the entry (or to the worst, past it).
Integer arithmetic only.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from arena_tui.run.stats import MarkRow
from arena_tui.tui.fmt import clock, pct, usd

SPARK = "▁▂▃▄▅▆▇█"
BARS = " ▁▂▃▄▅▆▇█"
LABEL = 5
ROWS = 2  # lines of the equity and of the drawdown chart, at least (more when there is room)
FIXED = 4  # the chart's other lines: the scale, exit equity, the drawdown title, the axis


def buckets(n: int, width: int) -> list[range]:
    """``n`` points into at most ``width`` consecutive, non-empty index ranges."""
    cols = min(n, width)
    return [range(c * n // cols, (c + 1) * n // cols) for c in range(cols)]


def spark(values: Sequence[int], lo: int, hi: int) -> str:
    top = len(SPARK) - 1
    if hi <= lo:
        return SPARK[top // 2] * len(values)
    return "".join(SPARK[(v - lo) * top // (hi - lo)] for v in values)


def stacked(heights: Sequence[int], rows: int) -> list[str]:
    """Columns ``heights`` eighths tall (at most ``rows * 8``), as ``rows`` lines, top first."""
    return [
        "".join(BARS[max(0, min(8, h - (row - 1) * 8))] for h in heights)
        for row in range(rows, 0, -1)
    ]


def time_axis(first_t: int, last_t: int, cols: int, indent: int) -> Text:
    """The line under a chart of ``cols`` columns: its first time at the left, its last at
    the right (one time when they are the same), after ``indent`` spaces of labels."""
    left, right = clock(first_t), clock(last_t)
    gap = max(1, cols - len(left) - len(right))
    axis = left if first_t == last_t else left + " " * gap + right
    return Text(" " * indent + axis, style="dim")


def dollars(e6: int) -> str:
    return "$" + usd(e6).rsplit(".", 1)[0]


def fitted(width: int, *forms: str) -> str:
    """The first (the fullest) of ``forms`` that fits in ``width`` columns, else the last:
    a title says less on a narrow panel rather than wrap and push the time axis off."""
    return next((f for f in forms if len(f) <= width), forms[-1])


def chart_lines(
    marks: Sequence[MarkRow], width: int, starting_equity: int, limit_pct: int, rows: int = ROWS
) -> list[Text]:
    """The chart in ``width`` columns, equity and drawdown ``rows`` lines tall each."""
    if not marks:
        return [Text("no minute mark yet: the chart starts at the first one", style="dim")]
    plot = max(1, width - LABEL)
    cols = buckets(len(marks), plot)
    equity = [marks[c[-1]].equity for c in cols]
    exits = [marks[c[-1]].exit_equity for c in cols]
    known = [x for x in exits if x is not None]
    lo = min([*equity, *known, starting_equity])
    hi = max([*equity, *known, starting_equity])
    worst = [max(marks[i].drawdown for i in c) for c in cols]
    limit = limit_pct * 10**6
    top = max(limit, max(worst))
    span = max(1, hi - lo)
    eq = stacked([1 + (v - lo) * (rows * 8 - 1) // span for v in equity], rows)
    dd = stacked([-(-w * rows * 8 // top) for w in worst], rows)
    exit_line = "".join(" " if x is None else spark([x], lo, hi) for x in exits)
    peak = max(m.drawdown for m in marks)
    labels = ["eq   ", *[" " * LABEL] * (rows - 1)]
    scale = f"{dollars(lo)} to {dollars(hi)}"
    worst_dd = f"drawdown: worst {pct(peak)}"
    return [
        Text(fitted(width, f"{scale}, start {dollars(starting_equity)}", scale), style="dim"),
        *(Text(labels[i]).append(line, style="cyan") for i, line in enumerate(eq)),
        Text("exit ").append(exit_line, style="magenta"),
        Text(
            fitted(width, f"{worst_dd}, limit {limit_pct}%", f"{worst_dd} of {limit_pct}%"),
            style="dim",
        ),
        *(
            Text(labels[i].replace("eq", "dd")).append(line, style="red")
            for i, line in enumerate(dd)
        ),
        time_axis(marks[0].t, marks[-1].t, plot, LABEL),
    ]


class EquityChart(Widget):
    marks: reactive[tuple[MarkRow, ...]] = reactive(())
    starting_equity: reactive[int] = reactive(0)
    limit_pct: reactive[int] = reactive(15)

    def render(self) -> Text:
        rows = max(ROWS, (self.size.height - FIXED) // 2)
        size = self.size.width
        lines = chart_lines(self.marks, size, self.starting_equity, self.limit_pct, rows)
        return Text("\n").join(lines)
