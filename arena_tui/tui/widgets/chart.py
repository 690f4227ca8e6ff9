"""Equity and drawdown over the minute marks, with exit-value equity beside equity.

One column per run of marks (the last mark's equity, the worst drawdown in it), as wide as
the panel is. Equity and exit-value equity share one dollar scale (with the starting
equity on it), so the gap between the two lines is the cost of closing into the book. The
drawdown rows are scaled to the worst drawdown (``report.charts.drawdown_top``: 0 to the
first of 1%, 2%, 5%, 10%, the limit, 20%... that holds it), so a drawdown of a fraction of
a percent shows instead of a flat line under a 15% ceiling; the limit's line (``╌``) is
drawn only when the scale reaches it, and the title says the worst, the scale and the
limit in words. Integer arithmetic only.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from arena_tui.report.charts import drawdown_top, limit_in_view, pct_label
from arena_tui.run.stats import MarkRow
from arena_tui.tui.fmt import clock, pct, usd

SPARK = "▁▂▃▄▅▆▇█"
BARS = " ▁▂▃▄▅▆▇█"
LIMIT = "╌"  # the limit's line, in the drawdown rows' empty cells
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
    peak = max(m.drawdown for m in marks)
    top = drawdown_top(peak, limit_pct)
    span = max(1, hi - lo)
    eq = stacked([1 + (v - lo) * (rows * 8 - 1) // span for v in equity], rows)
    dd = stacked([-(-w * rows * 8 // top) for w in worst], rows)
    limit_row = -1  # the drawdown line (top first) the limit falls in; -1: off the scale
    if limit_in_view(top, limit_pct):
        limit_row = rows - -(-limit_pct * 10**6 * rows // top)
    exit_line = "".join(" " if x is None else spark([x], lo, hi) for x in exits)
    labels = ["eq   ", *[" " * LABEL] * (rows - 1)]
    scale = f"{dollars(lo)} to {dollars(hi)}"
    worst_dd = f"drawdown: worst {pct(peak)}"
    dd_scale = f"0 to {pct_label(top)}"
    where = f"limit {limit_pct}%" if limit_row >= 0 else f"limit {limit_pct}% off scale"
    return [
        Text(fitted(width, f"{scale}, start {dollars(starting_equity)}", scale), style="dim"),
        *(Text(labels[i]).append(line, style="cyan") for i, line in enumerate(eq)),
        Text("exit ").append(exit_line, style="magenta"),
        Text(
            fitted(
                width,
                f"{worst_dd} (scale {dd_scale}), {where}",
                f"{worst_dd} ({dd_scale}), {where}",
                f"{worst_dd}, {where}",
                worst_dd,
            ),
            style="dim",
        ),
        *(
            dd_line(labels[i].replace("eq", "dd"), line, i == limit_row)
            for i, line in enumerate(dd)
        ),
        time_axis(marks[0].t, marks[-1].t, plot, LABEL),
    ]


def dd_line(label: str, bars: str, limit: bool) -> Text:
    """One line of the drawdown rows; the one the limit falls in carries its line."""
    line = Text(label)
    if not limit:
        return line.append(bars, style="red")
    for cell in bars:
        line.append(LIMIT if cell == " " else cell, style="dim red" if cell == " " else "red")
    return line


class EquityChart(Widget):
    marks: reactive[tuple[MarkRow, ...]] = reactive(())
    starting_equity: reactive[int] = reactive(0)
    limit_pct: reactive[int] = reactive(15)

    def render(self) -> Text:
        rows = max(ROWS, (self.size.height - FIXED) // 2)
        size = self.size.width
        lines = chart_lines(self.marks, size, self.starting_equity, self.limit_pct, rows)
        return Text("\n").join(lines)
