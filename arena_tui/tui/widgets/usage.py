"""The score tab: the watched entry's use of its limits over the run, minute by minute.

The score panel says how close the entry is to each limit now; this says how it got
there: cap used (positions at mark plus reserves, % of equity) against the position cap,
and open orders against the slots, at every minute mark, one column per run of marks (the
most of it: a brush with the limit is never averaged away). Each chart is scaled to its
limit (or to the worst, past it), and columns at or over the limit are red. Integer
arithmetic only.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget

from arena_tui.tui.fmt import pct
from arena_tui.tui.snapshot import Use
from arena_tui.tui.widgets.chart import buckets, stacked, time_axis

LABEL = 7
ROWS = 3  # lines of each chart, at least
FIXED = 3  # two titles and the time axis


def _bars(
    values: list[int], limit: int, rows: int, labels: tuple[str, str], width: int
) -> list[Text]:
    """``values`` as columns ``rows`` tall, scaled to ``limit`` (or the most, past it)."""
    top = max(limit, max(values), 1)
    heights = [-(-v * rows * 8 // top) for v in values]
    lines = stacked(heights, rows)
    over = [v >= limit for v in values]
    out = []
    for i, line in enumerate(lines):
        label = labels[0] if i == 0 else labels[1] if i == rows - 1 else ""
        text = Text(f"{label:>{LABEL - 1}} ", style="dim")
        for ch, hot in zip(line, over, strict=True):
            text.append(ch, "bold red" if hot else "green")
        text.truncate(width)
        out.append(text)
    return out


def usage_lines(
    uses: Sequence[Use], cap_pct: int, max_orders: int, width: int, rows: int = ROWS
) -> list[Text]:
    """Cap used and open orders over ``uses``, in ``width`` columns, each ``rows`` tall."""
    if not uses:
        return [Text("no minute mark yet: the charts start at the first one", style="dim")]
    plot = max(1, width - LABEL)
    cols = buckets(len(uses), plot)
    cap = [max(uses[i].cap_used for i in c) for c in cols]
    orders = [max(uses[i].open_orders for i in c) for c in cols]
    cap_limit = cap_pct * 10**6
    last = uses[-1]
    worst_cap = max(u.cap_used for u in uses)
    most = max(u.open_orders for u in uses)
    top_cap = max(cap_limit, worst_cap)
    top_orders = max(max_orders, most)
    return [
        Text(
            f"cap used: now {pct(last.cap_used)} of {cap_pct}%, most {pct(worst_cap)}",
            style="dim",
        ),
        *_bars(cap, cap_limit, rows, (f"{top_cap // 10**6}%", "0%"), width),
        Text(f"open orders: now {last.open_orders} of {max_orders}, most {most}", style="dim"),
        *_bars(orders, max_orders, rows, (str(top_orders), "0"), width),
        time_axis(uses[0].t, last.t, len(cols), LABEL),
    ]


class UsageChart(Widget):
    """The watched entry's cap used and open orders over time (``show``)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (textual's name)
        super().__init__(id=id)
        self.uses: Sequence[Use] = ()
        self.cap_pct = 12
        self.max_orders = 8

    def show(self, uses: Sequence[Use], cap_pct: int, max_orders: int) -> None:
        self.uses, self.cap_pct, self.max_orders = uses, cap_pct, max_orders
        self.refresh()

    def _lines(self) -> list[Text]:
        rows = max(ROWS, (self.size.height - FIXED) // 2)
        width = self.size.width or 80
        return usage_lines(self.uses, self.cap_pct, self.max_orders, width, rows)

    def render(self) -> Text:
        return Text("\n").join(self._lines())

    @property
    def text(self) -> str:
        """What it shows, plain (for tests)."""
        return "\n".join(line.plain for line in self._lines())
