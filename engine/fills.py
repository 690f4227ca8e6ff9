"""Fills: taking liquidity at activation, prints (new or resent) and the resting orders
they fill, fees, cash.

Why this module exists: every fill, taker or maker, goes through :func:`fill`, the only
place that moves a position and charges venue and execution fees. The book is never
depleted: every order of every entry sees the full displayed size and every print in full.

May not touch: order admission (``engine.orders``), files, clocks, floats.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence

from engine import book as levels_of
from engine import events as ev
from engine.book import BookLevels, level_px, level_sz
from engine.events import Reason
from engine.inputs import BookData, Level
from engine.ledger import Ledger
from engine.orders import ALO, IOC, close
from engine.state import RESTING, AssetState, OpenOrder
from engine.units import DAY_MS, FEE_DENOM, lots_down, notional, tdiv

__all__ = [
    "PrintColumns",
    "activate",
    "decode_levels",
    "fill",
    "fresh",
    "level_px",
    "level_sz",
    "on_print",
    "take",
]


def decode_levels(book: BookData) -> tuple[list[Level], list[Level]]:
    """A book's two sides (bids best first, asks best first), decoded (shape checked)."""
    return levels_of.decode_levels(bytes(book.levels))


def reduce_only_room(order: OpenOrder) -> int:
    """How much a reduce-only order may fill now without crossing the position through zero."""
    pos = order.entry.positions.get(order.asset, 0)
    if order.is_buy:
        return -pos if pos < 0 else 0
    return pos if pos > 0 else 0


def fill(eng: Ledger, order: OpenOrder, t: int, px: int, q: int, quote: ev.Quote) -> None:
    """Fill ``q`` of ``order`` at ``px`` against ``quote`` (a book level: taker; a print:
    maker): move cash and position, charge both fees."""
    taker = type(quote) is ev.BookQuote
    rules = eng.rules
    acct = order.entry
    n = notional(px, q)
    venue_fee = tdiv(n * (rules.taker_fee_dbps if taker else rules.maker_fee_dbps), FEE_DENOM)
    exec_fee = tdiv(n * rules.execution_fee_dbps, FEE_DENOM)
    pos = acct.positions.get(order.asset, 0)
    if order.is_buy:
        acct.cash -= n
        pos += q
    else:
        acct.cash += n
        pos -= q
    if pos:
        acct.positions[order.asset] = pos
    else:
        acct.positions.pop(order.asset, None)
    acct.cash -= venue_fee + exec_fee
    order.filled += q
    acct.fill_days.add(tdiv(t, DAY_MS))
    eng.emit(
        ev.Fill(
            t=t,
            entry=acct.name,
            oid=order.oid,
            cloid=order.cloid,
            asset=order.asset,
            is_buy=order.is_buy,
            px=px,
            sz=q,
            taker=taker,
            venue_fee=venue_fee,
            exec_fee=exec_fee,
            quote=quote,
        )
    )


def take(
    eng: Ledger, order: OpenOrder, side: list[Level], lot: int, t: int, book_time: int
) -> None:
    """Walk the opposite side within the limit, 25% of each level in whole lots, as taker."""
    pct = eng.rules.take_fraction_pct
    for depth, level in enumerate(side):
        px = level_px(level)
        if (px > order.limit_px) if order.is_buy else (px < order.limit_px):
            break
        shown = level_sz(level)
        q = min(order.sz - order.filled, lots_down(tdiv(shown * pct, 100), lot))
        if order.reduce_only:
            q = min(q, reduce_only_room(order))
        if q > 0:
            fill(eng, order, t, px, q, ev.BookQuote(book_time, depth, px, shown, level.n))
            if order.filled == order.sz:
                break


def activate(eng: Ledger, a: AssetState, book: BookLevels, t: int) -> None:
    """Activate every pending order on this coin that is due, in oid order, on this book."""
    due = t - eng.rules.activation_delay_ms
    ready = [o for o in a.pending if o.received <= due]
    if not ready:
        return
    for order in ready:
        a.pending.remove(order)
        order.state = RESTING
        order.act_book_time = book.time
        eng.emit(ev.Activated(t=t, entry=order.entry.name, oid=order.oid, book_time=book.time))
        if order.tif == ALO:  # only the opposite side's best level is read
            best = book.top(1 if order.is_buy else 0)
            if best is not None and (
                order.limit_px >= level_px(best)
                if order.is_buy
                else order.limit_px <= level_px(best)
            ):
                close(eng, order, t, Reason.PostOnlyWouldCross)
                continue
        else:
            take(eng, order, book.sides()[1 if order.is_buy else 0], a.lot, t, book.time)
            if order.tif == IOC:
                left = order.filled < order.sz
                close(eng, order, t, Reason.IocRemainder if left else Reason.IocFilled)
                continue
        if order.filled < order.sz:
            a.resting.append(order)


def goes_through(order: OpenOrder, px: int, time: int) -> bool:
    """A print at ``px`` (exchange time ``time``) fills the resting ``order``: it came at or
    after the book that activated it, strictly through its limit."""
    if time < order.act_book_time:
        return False
    return (px < order.limit_px) if order.is_buy else (px > order.limit_px)


def fills_nothing(a: AssetState, px: int, time: int) -> bool:
    """A print of ``a``'s coin at ``px`` goes through none of its resting orders."""
    for order in a.resting:  # noqa: SIM110 - a loop, not all(): compiled, it is C
        if goes_through(order, px, time):
            return False
    return True


def on_print(eng: Ledger, a: AssetState, t: int, px: int, sz: int, time: int, tid: int) -> None:
    """One applied public trade: fill resting orders it prints strictly through, as maker."""
    cap = -1  # computed on the first order the print goes through: most go through none
    quote: ev.PrintQuote | None = None
    for order in list(a.resting):
        if not goes_through(order, px, time):
            continue
        if cap < 0:
            cap = lots_down(tdiv(sz * eng.rules.print_fraction_pct, 100), a.lot)
            if cap <= 0:
                return
        q = min(order.sz - order.filled, cap)
        if order.reduce_only:
            q = min(q, reduce_only_room(order))
        if q > 0:
            if quote is None:
                quote = ev.PrintQuote(tid, time, px, sz)
            fill(eng, order, t, order.limit_px, q, quote)
            if order.filled == order.sz:
                a.resting.remove(order)


def fresh(a: AssetState, time: int, tid: int) -> bool:
    """The duplicate-print rule: a print at or before the coin's last print time with a
    tid seen at that time is resent; any other is new, and is remembered."""
    last = a.last_trade_time
    tids = a.last_trade_tids
    if last is None or time > last:
        a.last_trade_time = time
        tids.clear()  # (the set is the state's own: nothing else holds it)
        tids.add(tid)
    elif time == last and tid not in tids:
        tids.add(tid)
    else:
        return False
    return True


class PrintColumns:
    """A day's prints as columns, for ``Engine.apply_quiet_prints`` (taken once, read by
    each call): trades message ``r`` is prints ``starts[r]`` to ``starts[r + 1]``; each
    print's input time ``t`` (its message's), coin (an index into ``states``: its market's
    state, or None for a coin the season does not trade), exchange time, tid, price and
    size e8, checked before (a day cache's columns: buffers of int64, the coin int16).
    ``new``, one writable byte a print, for an engine recording prints: each print of a
    message applied is set to 1 if it was applied (new by the duplicate-print rule) and 0
    if not."""

    __slots__ = ("coin", "new", "px", "starts", "states", "sz", "t", "tid", "time")

    def __init__(
        self,
        states: Sequence[AssetState | None],
        starts: Sequence[int],
        t: Sequence[int],
        coin: Sequence[int],
        time: Sequence[int],
        tid: Sequence[int],
        px: Sequence[int],
        sz: Sequence[int],
        new: MutableSequence[int] | None = None,
    ) -> None:
        self.states = list(states)
        self.starts = starts
        self.t = t
        self.coin = coin
        self.time = time
        self.tid = tid
        self.px = px
        self.sz = sz
        self.new = new

    def fill_nothing(self, first: int, end: int) -> bool:
        """None of prints ``first`` to ``end`` goes through a resting order of its coin."""
        states, coin, time, px = self.states, self.coin, self.time, self.px
        for k in range(first, end):
            a = states[coin[k]]
            if a is not None and a.resting and not fills_nothing(a, px[k], time[k]):
                return False
        return True

    def apply_each(self, first: int, end: int) -> None:
        """Prints ``first`` to ``end`` applied in order, none filling anything, print by
        print (``fresh``): ``new[k]`` is set to 1 for each one applied, 0 for a resent one
        or a coin the season does not trade."""
        states, coin, time, tid, px, new = (
            self.states, self.coin, self.time, self.tid, self.px, self.new
        )  # fmt: skip
        assert new is not None, "only for an engine recording prints"
        for k in range(first, end):
            a = states[coin[k]]
            if a is not None and fresh(a, time[k], tid[k]):
                a.trade_px = px[k]
                new[k] = 1
            else:
                new[k] = 0

    def apply_last(self, first: int, end: int) -> None:
        """Prints ``first`` to ``end`` applied in order, none filling anything: the
        duplicate-print rule (``fresh``) run over them at once. Its outcome for a coin
        depends only on the coin's prints at their latest exchange time ``L``: if the
        coin's last print time is later, none is new; else the first print at ``L`` with a
        tid not seen at ``L`` before it (nor, when ``L`` is the last print time already,
        among that time's tids) is new, and the last of those sets the price. Only those
        prints are made Python integers."""
        states, coin, time, tid, px = self.states, self.coin, self.time, self.tid, self.px
        n = len(states)
        latest = _int64s(n)  # per coin: its prints' latest time...
        touched = bytearray(n)  # ...once it has one
        for k in range(first, end):
            c = coin[k]
            if not touched[c] or time[k] > latest[c]:
                latest[c] = time[k]
                touched[c] = 1
        seen: list[set[int] | None] = [None] * n  # per coin: the tids at ``L``
        price = _int64s(n)
        outcome = bytearray(n)  # per coin: 0 none new yet, 1 one is, 2 none can be
        for k in range(first, end):
            c = coin[k]
            if time[k] != latest[c] or outcome[c] == 2:
                continue
            tids = seen[c]
            if tids is None:
                a = states[c]
                last = None if a is None else a.last_trade_time
                if a is None or (last is not None and last > time[k]):
                    outcome[c] = 2  # a coin the season does not trade, or prints all older
                    continue
                tids = seen[c] = set(a.last_trade_tids) if last == time[k] else set()
            if tid[k] not in tids:
                tids.add(tid[k])
                price[c] = px[k]
                outcome[c] = 1
        for c in range(n):
            if outcome[c] == 1:
                a = states[c]
                assert a is not None
                a.last_trade_time = latest[c]
                a.last_trade_tids = seen[c]  # type: ignore[assignment]
                a.trade_px = price[c]


def _int64s(n: int) -> memoryview:
    """``n`` zeros as C int64s (a view of new bytes: no import needed)."""
    return memoryview(bytearray(8 * n)).cast("q")
