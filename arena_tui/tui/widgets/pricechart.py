"""The market tab's chart: a coin's price over the last minutes, with the watched entry's
fills on it and its open orders at their limit prices.

One column per minute mark (the book's mid then) and one for now (the latest book's), as
many of the latest minutes as the panel is wide. A fill is drawn in the column of the
minute it happened in (▲ buy, ▼ sell, bold when it took liquidity); an open order is a
dashed line at its limit price from when it was received to now (green buy, red sell), so
an order resting far from the price, or one the strategy keeps re-placing, shows. The
price scale covers the mids, the fills and the open orders in view. Integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from arena_tui.tui.fmt import px
from arena_tui.tui.snapshot import Coin, FillMark, Order
from arena_tui.tui.widgets.chart import time_axis
from engine.units import MINUTE_MS

PLOT_ROWS = 3  # the least rows of the plot (more when the panel is taller)
FIXED = 2  # the title and the time axis
BUY, SELL = "green", "red"


@dataclass
class _Cell:
    char: str = " "
    style: str = ""


def _column(t: int, first: int, cols: int) -> int:
    """The column of time ``t``: the minute mark at or after it (the last column past)."""
    return max(0, min(cols - 1, -(-(t - first) // MINUTE_MS)))


def price_lines(
    coin: Coin,
    entry: str,
    fills: Sequence[FillMark],
    orders: Sequence[Order],
    width: int,
    rows: int = PLOT_ROWS,
) -> list[Text]:
    """The chart of ``coin`` in ``width`` columns, the plot ``rows`` lines tall: its mids,
    and ``entry``'s fills and open orders on it."""
    points = list(coin.mids)
    now_t = coin.book_t
    if coin.bids and coin.asks and now_t is not None and (not points or now_t > points[-1][0]):
        points.append((now_t, (coin.bids[0][0] + coin.asks[0][0]) // 2))  # now: the book's mid
    if not points:
        return [Text(f"{coin.coin}: no book yet: the chart starts at the first", style="dim")]
    mine = [o for o in orders if o.coin == coin.coin]
    hi_all = max(p for _, p in points)
    label_w = len(px(hi_all)) + 1
    plot = max(1, width - label_w)
    mids = points[-plot:]
    first, last = mids[0][0], mids[-1][0]
    cols = len(mids)
    shown = [f for f in fills if f.coin == coin.coin and f.t > first - MINUTE_MS]
    prices = [m for _, m in mids] + [f.px for f in shown] + [o.px for o in mine]
    lo, hi = min(prices), max(prices)
    span = max(1, hi - lo)

    def row(price: int) -> int:
        return (hi - price) * (rows - 1) // span

    grid = [[_Cell() for _ in range(cols)] for _ in range(rows)]
    prev: int | None = None
    for c, (_, mid) in enumerate(mids):
        r = row(mid)
        if prev is not None:  # join the minutes: a vertical run between two rows
            for between in range(min(prev, r) + 1, max(prev, r)):
                grid[between][c] = _Cell("│", "cyan")
        grid[r][c] = _Cell("─", "cyan")
        prev = r
    now = last if coin.book_t is None else max(last, coin.book_t)
    for o in mine:
        style = BUY if o.is_buy else SELL
        r = row(o.px)
        for c in range(_column(now - o.age, first, cols), cols):
            if grid[r][c].char in (" ", "─", "│"):
                grid[r][c] = _Cell("╌", style)
    for f in shown:
        style = (BUY if f.is_buy else SELL) + (" bold" if f.taker else "")
        grid[row(f.px)][_column(f.t, first, cols)] = _Cell("▲" if f.is_buy else "▼", style)
    title = Text.assemble(
        (coin.coin, "bold"),
        f": mid each minute, {entry}'s fills ",
        ("▲", BUY),
        " buy ",
        ("▼", SELL),
        " sell, open orders ",
        ("╌", BUY),
        ("╌", SELL),
        f" ({len(mine)})",
    )
    title.truncate(width)
    lines = [title]
    for r, cells in enumerate(grid):
        label = px(hi) if r == 0 else px(lo) if r == rows - 1 else ""
        line = Text(f"{label:>{label_w - 1}} ", style="dim")
        for cell in cells:
            line.append(cell.char, cell.style or None)
        lines.append(line)
    lines.append(time_axis(first, last, cols, label_w))
    return lines


class PriceChart(Widget):
    """The chart of the coin the market tab shows (``show``)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 (textual's name)
        super().__init__(id=id)
        self.coin: Coin | None = None
        self.entry = ""
        self.fills: Sequence[FillMark] = ()
        self.orders: Sequence[Order] = ()

    def show(
        self, coin: Coin, entry: str, fills: Sequence[FillMark], orders: Sequence[Order]
    ) -> None:
        self.coin, self.entry, self.fills, self.orders = coin, entry, fills, orders
        self.refresh()

    def render(self) -> Text:
        if self.coin is None:
            return Text("no market data yet", style="dim")
        rows = max(PLOT_ROWS, self.size.height - FIXED)
        lines = price_lines(self.coin, self.entry, self.fills, self.orders, self.size.width, rows)
        return Text("\n").join(lines)

    @property
    def text(self) -> str:
        """What it shows, plain (for tests)."""
        if self.coin is None:
            return ""
        rows = max(PLOT_ROWS, self.size.height - FIXED)
        width = self.size.width or 80
        lines = price_lines(self.coin, self.entry, self.fills, self.orders, width, rows)
        return "\n".join(line.plain for line in lines)
