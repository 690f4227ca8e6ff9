"""The rows of the run data made from what a pass gathered: fills, orders, and what the
fills add up to (PnL per entry and coin, round trips).

Why this module exists: the collector (``report.collector``) keeps engine events and
order lives as they come, cheaply; the rows of the model (``report.runmodel``) are made
from them here, once, at the end of the pass; apart, they read as the definitions they
are. Round trips are *flat to flat*: one opens when a coin's position leaves zero and
closes when it is back at zero; a fill that flips the position closes the trip with the
part that reaches zero and opens the next with the rest (its fees split by size). Its PnL
is what the trip's fills paid and received, net of their fees (not of funding, which is
per coin in :class:`CoinPnl`); a trip still open at the end is valued at the engine's
last mark.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arena_tui.report.runmodel import CoinPnl, FillRow, FundingRow, OrderRow, RoundTrip
from engine import Season, format_cloid
from engine import events as ev
from engine.inputs import Order
from engine.units import E10, notional, tdiv


class _Trip:
    __slots__ = ("cash", "exit_pxsz", "exit_sz", "fees", "fills", "open_pxsz", "open_sz", "t")

    def __init__(self, t: int) -> None:
        self.t = t
        self.open_sz = 0
        self.open_pxsz = 0  # sum of px * sz of the opening fills
        self.exit_sz = 0
        self.exit_pxsz = 0
        self.cash = 0  # received - paid, e6
        self.fees = 0
        self.fills = 0

    def add(self, px: int, sz: int, is_buy: bool, fee: int, *, closing: bool) -> None:
        """A fill (or the part of one) of ``sz`` at ``px`` that opens or closes the trip."""
        if closing:
            self.exit_sz += sz
            self.exit_pxsz += px * sz
        else:
            self.open_sz += sz
            self.open_pxsz += px * sz
        n = notional(px, sz)
        self.cash += -n if is_buy else n
        self.fees += fee
        self.fills += 1


def coin_pnl(
    season: Season,
    names: list[str],
    fills: Sequence[FillRow],
    funding: list[FundingRow],
    mark_px: Callable[[str], int | None],
) -> list[CoinPnl]:
    """Per entry and coin: fills, volume, fees, funding, the position left and its PnL
    (valued at ``mark_px``, the engine's last mark)."""
    coins = [m.coin for m in season.markets]
    acc: dict[tuple[str, str], list[int]] = {
        (n, c): [0, 0, 0, 0, 0, 0, 0] for n in names for c in coins
    }  # fills, volume, venue, exec, funding, position, cash
    for f in fills:
        a = acc.setdefault((f.entry, f.coin), [0, 0, 0, 0, 0, 0, 0])
        n = notional(f.px, f.sz)
        a[0] += 1
        a[1] += n
        a[2] += f.venue_fee
        a[3] += f.exec_fee
        a[5] += f.sz if f.is_buy else -f.sz
        a[6] += -n if f.is_buy else n
    for fr in funding:
        acc.setdefault((fr.entry, fr.coin), [0, 0, 0, 0, 0, 0, 0])[4] += fr.payment
    rows = []
    for (entry, coin), a in acc.items():
        mark = mark_px(coin)
        value = tdiv(a[5] * mark, E10) if a[5] and mark is not None else 0
        pnl = a[6] + value - a[2] - a[3] - a[4]
        rows.append(CoinPnl(entry, coin, a[0], a[1], a[2], a[3], a[4], a[5], pnl))
    return rows


def round_trips(
    names: list[str], fills: Sequence[FillRow], mark_px: Callable[[str], int | None]
) -> list[RoundTrip]:
    """The round trips of ``fills`` (see the module docstring), entries in ``names``'
    order; a trip open at the end valued at ``mark_px``."""
    pos: dict[tuple[str, str], int] = {}
    open_: dict[tuple[str, str], _Trip] = {}
    done: list[RoundTrip] = []

    def close(key: tuple[str, str], trip: _Trip, side: int, t: int | None) -> None:
        if t is None:  # open at the end: valued at the last mark
            mark = mark_px(key[1])
            p = pos.get(key, 0)
            value = tdiv(p * mark, E10) if mark is not None else 0
            pnl, exit_px = trip.cash + value - trip.fees, None
        else:
            pnl = trip.cash - trip.fees
            exit_px = trip.exit_pxsz // trip.exit_sz if trip.exit_sz else None
        done.append(
            RoundTrip(
                key[0],
                key[1],
                "long" if side > 0 else "short",
                trip.t,
                t,
                trip.open_sz,
                trip.open_pxsz // trip.open_sz if trip.open_sz else 0,
                exit_px,
                trip.fees,
                pnl,
                trip.fills,
            )
        )

    for f in fills:
        key = (f.entry, f.coin)
        p = pos.get(key, 0)
        signed = f.sz if f.is_buy else -f.sz
        fee = f.venue_fee + f.exec_fee
        left, left_fee = f.sz, fee
        if p != 0 and (p > 0) != f.is_buy:  # reduces (and maybe flips) the position
            trip = open_[key]
            q = min(abs(p), f.sz)
            part_fee = fee if q == f.sz else tdiv(fee * q, f.sz)
            trip.add(f.px, q, f.is_buy, part_fee, closing=True)
            left, left_fee = f.sz - q, fee - part_fee
            if q == abs(p):
                pos[key] = 0
                close(key, trip, 1 if p > 0 else -1, f.t)
                del open_[key]
                p = 0
            else:
                pos[key] = p + signed
                continue
        if left:
            trip = open_.get(key) or open_.setdefault(key, _Trip(f.t))
            trip.add(f.px, left, f.is_buy, left_fee, closing=False)
            pos[key] = p + (left if f.is_buy else -left)
    for key, trip in open_.items():
        close(key, trip, 1 if pos[key] > 0 else -1, None)
    order = {n: i for i, n in enumerate(names)}
    done.sort(key=lambda r: (order.get(r.entry, len(order)), r.opened_t))
    return done


# ---- the rows of orders and fills ------------------------------------------------------


class OrderLife:
    """An accepted order's life as the collector follows it."""

    __slots__ = (
        "activated_t",
        "activates_at",
        "cancel_t",
        "close_reason",
        "closed_t",
        "filled",
        "first",
        "note",
    )

    def __init__(self, first: ev.Accepted, note: str | None) -> None:
        self.first = first
        self.note = note
        self.activates_at = first.activates_at
        self.activated_t: int | None = None
        self.cancel_t: int | None = None
        self.closed_t: int | None = None
        self.close_reason: str | None = None
        self.filled = 0


def fill_row(f: ev.Fill, entry: str, note: str | None, coin_of: dict[int, str]) -> FillRow:
    """A fill as the model keeps it: its quote flattened, its order's ``note``."""
    q = f.quote
    if isinstance(q, ev.BookQuote):
        quote: tuple[Any, ...] = ("book", q.time, q.level, None, q.px, q.sz)
    elif isinstance(q, ev.PrintQuote):
        quote = ("print", q.time, None, q.tid, q.px, q.sz)
    else:
        quote = (None, None, None, None, None, None)
    return FillRow(
        entry,
        f.t,
        coin_of.get(f.asset, str(f.asset)),
        f.is_buy,
        f.px,
        f.sz,
        f.taker,
        f.venue_fee,
        f.exec_fee,
        f.oid,
        format_cloid(f.cloid),
        note,
        *quote,
    )


def rejected_row(e: ev.Rejected, o: Order, coin_of: dict[int, str]) -> OrderRow:
    """A rejected order as the model keeps it (a life of one event)."""
    return OrderRow(
        e.entry,
        0,
        format_cloid(e.cloid),
        coin_of.get(o.asset, str(o.asset)),
        o.isBuy,
        o.limitPx,
        o.sz,
        o.encodedTif,
        o.reduceOnly,
        e.t,
        "rejected",
        str(e.reason),
        0,
        None,
        None,
        None,
        None,
        None,
        0,
        None,
    )
