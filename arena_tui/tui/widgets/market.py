"""The market of one coin as the engine has it: top of book, last prints, mark, oracle, funding.

The book is the latest ``l2Book`` the engine applied (its receive time shown: a stale book
activates nothing), the prints are the newest public trades with the aggressor's side; as
many levels and prints as the panel has rows for (up to the snapshot's 20 levels a side).
"""

from __future__ import annotations

from itertools import zip_longest

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from arena_tui.tui.fmt import clock, funding_rate, px, sz
from arena_tui.tui.snapshot import Coin

HEAD = 3  # lines above the levels


def market_lines(c: Coin, index: int, count: int, rows: int | None = None) -> list[Text]:
    """The panel's lines; ``rows``: at most this many lines of levels and prints."""
    book_t = "-" if c.book_t is None else clock(c.book_t)
    head = Text.assemble(
        (c.coin, "bold"),
        f"  mark {px(c.mark)}  oracle {px(c.oracle)}  funding {funding_rate(c.funding)}",
    )
    lines = [
        head,
        Text(f"book at {book_t}   c: next coin ({index + 1} of {count})", style="dim"),
        Text(
            f"{'bid size':>10} {'bid':>11}  {'ask':<11} {'ask size':<10}  last prints", style="dim"
        ),
    ]
    levels = list(zip_longest(c.bids, c.asks))
    shown = max(len(levels), len(c.prints))
    for i in range(shown if rows is None else min(shown, max(1, rows))):
        bid, ask = levels[i] if i < len(levels) else (None, None)
        line = Text()
        line.append(f"{sz(bid[1]) if bid else '':>10} {px(bid[0]) if bid else '':>11}", "green")
        line.append("  ")
        line.append(f"{px(ask[0]) if ask else '':<11} {sz(ask[1]) if ask else '':<10}", "red")
        if i < len(c.prints):
            t, is_buy, p, s = c.prints[i]
            side = "buy " if is_buy else "sell"
            line.append(f"  {clock(t)} {side} {px(p)} {sz(s)}", "green" if is_buy else "red")
        lines.append(line)
    if not levels and not c.prints:
        lines.append(Text("no book and no print of this coin yet", style="dim"))
    return lines


class MarketPanel(Widget, can_focus=True):
    coin: reactive[Coin | None] = reactive(None)
    index: reactive[int] = reactive(0)
    count: reactive[int] = reactive(0)

    def render(self) -> Text:
        if self.coin is None:
            return Text("no market data yet", style="dim")
        rows = self.size.height - HEAD if self.size.height else None
        return Text("\n").join(market_lines(self.coin, self.index, self.count, rows))
