"""Open orders and positions of the watched entry, one row each, updated in place.

An order that is fully filled but still open is marked ``filled·held``: it keeps its slot
and its reserve (which counts against the cap) until it is cancelled or expires, a rule a
strategy trips over more than any other.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from arena_tui.tui.fmt import px, span, sz, usd
from arena_tui.tui.snapshot import Order, Position
from arena_tui.tui.widgets.table import Cell, Col, KeyedTable

HELD = "filled·held"
LEGEND = f"{HELD}: filled but still open: holds its slot and reserve until it leaves"


def order_state(o: Order) -> Text:
    if o.holding:
        return Text(HELD, style="bold yellow")
    style = {"pending": "dim", "cancelling": "italic"}.get(o.state, "")
    return Text(o.state + (" ro" if o.reduce_only else ""), style=style)


class OrdersTable(KeyedTable):
    COLUMNS = (
        Col("oid", "oid", 5),
        Col("side", "side", 10, right=False),
        Col("px", "price", 10),
        Col("sz", "size", 9),
        Col("filled", "filled", 9),
        Col("reserve", "reserve $", 10),
        Col("age", "age", 7),
        Col("expires", "expires", 8),
        Col("state", "state", 12, right=False),
    )

    def show(self, orders: Sequence[Order]) -> None:
        rows: dict[str, list[Cell]] = {}
        for o in orders:
            held = "yellow" if o.holding else ""
            side = Text(
                f"{'buy' if o.is_buy else 'sell'} {o.coin}", style="green" if o.is_buy else "red"
            )
            rows[str(o.oid)] = [
                str(o.oid),
                side,
                px(o.px),
                sz(o.sz),
                Text(sz(o.filled), style=held),
                Text(usd(o.reserve), style=held),
                span(o.age),
                span(o.expires_in),
                order_state(o),
            ]
        self.sync(rows)


class PositionsTable(KeyedTable):
    COLUMNS = (
        Col("coin", "coin", 6, right=False),
        Col("size", "size", 13),
        Col("mark", "mark", 13),
        Col("value", "value $", 13),
        Col("funding", "funding paid $", 16),
    )

    def show(self, positions: Sequence[Position]) -> None:
        rows: dict[str, list[Cell]] = {}
        for p in positions:
            rows[p.coin] = [
                p.coin,
                Text(sz(p.size), style="green" if p.size > 0 else "red"),
                px(p.mark),
                usd(p.value),
                usd(p.funding_paid),
            ]
        self.sync(rows)
