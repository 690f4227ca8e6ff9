"""The desk that trades the random twins: each leg sent when it falls due, as the
strategy sent it.

Why this module exists: the twins' pass (``run.twins``) is an ordinary backtest of entries
with no hooks; the desk is the one subscriber that trades them all (``run.stream``),
so a hundred twins cost one call an input, not a hundred. It is where "trade a trip as the
strategy traded it" is decided: a taker leg as an IOC through the touch, a maker leg as a
post-only order at its side's touch, posted again while short of its position (it crossed,
or rested off the touch for ``REPEG_MS``); a trip's other legs laid from the twin's own
first fill, so waiting to fill never shortens a hold. A taker's first or last leg not
filled after ``CHECK_MS`` is sent again. A maker's first leg is worked at the touch until
it fills (the strategy's trip began with a passive fill, and the twin's does too), for up
to ``MAKER_CHECKS`` checks ``MAKER_PATIENCE_MS`` apart, then the trip is given up, never
entered as a taker (that would charge the twin a spread and taker fees the strategy never
paid); a maker's last leg is worked as long, then finished as a taker so the trip ends.
A trip the strategy still held at the run's end is held open to the end by the twin too.
A maker leg that a book found with nothing to do is not looked at again until something
it reads moves: its twin's orders, fills or legs (an event naming the twin, or a leg
falling due), the touch away from an aged order's limit, or a resting order's
``REPEG_MS`` coming of age. Orders go through each twin's own
:class:`~arena_tui.run.strategy.Context`, checked as a strategy's are, sized to the leg's
position and trimmed to the cap's headroom.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from arena_tui.run.market import ALO, IOC
from arena_tui.run.strategy import Context
from arena_tui.run.stream import Run
from arena_tui.run.trips import Placed, Trip
from engine import Line
from engine import events as ev
from engine.inputs import Book as BookMsg
from engine.units import E8, lots_down, notional, tdiv

SLIP_E8 = 500_000  # a taker leg's limit: this far through the touch (0.5%), e8
MAKER_PATIENCE_MS = 60_000  # a maker's first or last leg: checked this often for its fill
MAKER_CHECKS = 5  # checks of a maker's first leg (then given up) or last (then as a taker)
REPEG_MS = 20_000  # a maker leg resting off the touch this long is posted again at it
RETRY_MS = 1_000  # no book to price a leg on yet: try again this much later
RETRIES = 30
CHECK_MS = 5_000  # after a trip's first or last leg: filled yet? else as a taker
CHECKS = 6  # checks of one leg before it is given up


@dataclass
class TwinBook:
    """What one twin did, for the report: legs sent, and those it could not send."""

    name: str
    trips: int = 0
    legs: int = 0
    skipped: int = 0  # no book, under the minimum order value, or no headroom
    trimmed: int = 0  # sized down to the cap's headroom
    finished: int = 0  # a trip's end finished as a taker


# a leg falling due: (time, sequence, twin, coin, trip number on the coin, leg index, END
# or ENTRY, tries so far); plain tuples keep the heap cheap
_Due = tuple[int, int, int, str, int, int, int]
_NEVER = 1 << 62  # no resting order of a calm leg comes of age
END = -1  # the trip's end check
ENTRY = -2  # the first leg's fill check


class Desk:
    """Sends every twin's legs when they fall due (a subscriber of the run, ``run.stream``)."""

    market_bytes = False

    def __init__(self, plans: Sequence[Sequence[Placed]]) -> None:
        """``plans``: each twin's trips, in the order of the run's entrants (``bind``)."""
        self.plans = plans
        self.trips: list[list[Placed]] = [list(plan) for plan in plans]
        self.current: list[dict[str, int]] = [{} for _ in plans]  # coin -> trip index now
        self._seq = itertools.count()
        self.due: list[_Due] = []
        # coin -> {twin: (trip, leg)}: maker legs being worked at the touch until filled
        self.working: dict[str, dict[int, tuple[int, int]]] = {}
        # twin -> {coin: trip}: trips whose first leg is sent and has not filled yet (the
        # rest of the trip is timed from that fill, so a wait to fill does not shorten it)
        self.entering: list[dict[str, int]] = [{} for _ in plans]
        # twin -> {coin: (trip, leg, time, ((is_buy, limit), ...))}: a maker leg worked at a
        # book that left nothing to do. Until the twin's state changes (``_stir``), the time
        # comes (a resting order's age reaches REPEG_MS) or the touch moves off an aged
        # order's limit, every later book leaves nothing to do too, so ``_work`` is not run
        # for it (100 twins: 100 looks a book otherwise)
        self.calm: list[dict[str, tuple[int, int, int, tuple[tuple[bool, int], ...]]]] = [
            {} for _ in plans
        ]
        self.skips: set[tuple[int, int, int]] = set()  # (twin, trip, leg) counted as skipped
        for i, plan in enumerate(plans):
            for k, p in enumerate(plan):
                self._push(p.at, i, p.trip.coin, k, 0)

    def bind(self, bt: Run) -> None:
        """The run the twins trade in (a subscriber, ``run.stream``): their contexts."""
        self.bt = bt
        self.rules = bt.season.rules
        self.ctxs: list[Context] = []
        for e in bt.entrants:
            assert e.ctx is not None
            self.ctxs.append(e.ctx)
        self.books = [
            TwinBook(e.name, trips=len(plan))
            for e, plan in zip(bt.entrants, self.plans, strict=True)
        ]
        self.index = {e.name: i for i, e in enumerate(bt.entrants)}

    def _push(self, t: int, twin: int, coin: str, trip: int, leg: int, tries: int = 0) -> None:
        heapq.heappush(self.due, (t, next(self._seq), twin, coin, trip, leg, tries))

    def observe(self, line: Line, raw: bytes, out: list[ev.AnyEvent]) -> None:
        due = self.due
        t = line.t
        if out:
            self._stir(out)
        while due and due[0][0] <= t and self.bt.live:
            self._act(heapq.heappop(due), t)
        if out:
            for e in out:
                if type(e) is ev.Fill:
                    self._filled(e)
        hl = line.hl
        if type(hl) is BookMsg and self.working and self.bt.live:
            coin = hl.data.coin
            working = self.working.get(coin)
            if working:
                book = self.bt.markets[coin].book
                bid = None if book is None else book.best_bid_e8
                ask = None if book is None else book.best_ask_e8
                calm = self.calm
                for twin, (k, leg_i) in list(working.items()):
                    c = calm[twin].get(coin)
                    if c is not None and c[0] == k and c[1] == leg_i and t < c[2]:
                        for is_buy, px in c[3]:
                            touch = bid if is_buy else ask
                            if touch is not None and touch != px:
                                break  # off the touch: it may be cancelled now
                        else:
                            continue  # nothing it reads has moved: nothing to do again
                    if self._work(twin, coin, k, leg_i, t):
                        calm[twin][coin] = (k, leg_i, *self._watch(twin, coin, t))
                    else:
                        calm[twin].pop(coin, None)

    def _stir(self, out: list[ev.AnyEvent]) -> None:
        """Events naming a twin (its orders, fills, marks): its legs are looked at again."""
        index, calm = self.index, self.calm
        for e in out:
            twin = index.get(getattr(e, "entry", ""))
            if twin is not None and calm[twin]:
                calm[twin].clear()

    def _watch(self, twin: int, coin: str, t: int) -> tuple[int, tuple[tuple[bool, int], ...]]:
        """What ``_work`` reads that may move with nothing else moving, after it found
        nothing to do: when the first of the twin's resting orders on ``coin`` it left alone
        for its age comes of age, and the side and limit of those it left alone at the
        touch (one of them off it is what it acts on)."""
        ctx = self.ctxs[twin]
        wake = _NEVER
        aged: list[tuple[bool, int]] = []
        for o in ctx.account.open_orders:
            if o.coin == coin and not o.cancelling and not ctx.cancel_sent(o.oid):
                if t - o.received < REPEG_MS:
                    wake = min(wake, o.received + REPEG_MS)
                else:
                    aged.append((o.is_buy, o.limit_px_e8))
        return wake, tuple(aged)

    def _work(self, twin: int, coin: str, k: int, leg_i: int, t: int) -> bool:
        """A maker leg on a new book: still short of its position and nothing resting (its
        post-only order crossed, or was cancelled): post again at the touch; resting off
        the touch for ``REPEG_MS``: cancel it (the next book posts it again). True: it
        did nothing (and changed nothing)."""
        ctx = self.ctxs[twin]
        target = self.trips[twin][k].trip.legs[leg_i].target_e8
        if self.current[twin].get(coin) != k or ctx.account.position(coin) == target:
            del self.working[coin][twin]
            return False
        ctx.t = t
        resting = [o for o in ctx.account.open_orders if o.coin == coin]
        if not resting and not ctx.orders_on(coin):
            self._send(twin, coin, ctx, target, (k, leg_i), taker=False)
            return False
        book = ctx.market(coin).book
        calm = True
        for o in resting:
            if o.cancelling or ctx.cancel_sent(o.oid) or t - o.received < REPEG_MS:
                continue
            touch = None if book is None else book.best_bid_e8 if o.is_buy else book.best_ask_e8
            if touch is not None and o.limit_px_e8 != touch:
                ctx.cancel(oid=o.oid)
                calm = False
        return calm

    def _filled(self, f: ev.Fill) -> None:
        """A twin's fill: the first of a trip being entered lays out the rest of it."""
        twin = self.index.get(f.entry)
        if twin is None:
            return
        coin = self.ctxs[twin].coin_of(f.asset)
        k = self.entering[twin].pop(coin, None)
        if k is None or self.current[twin].get(coin) != k:
            return
        self._started(twin, coin, k, f.t)

    def _started(self, twin: int, coin: str, k: int, t: int) -> None:
        """A trip entered at ``t``: its other legs are laid from then."""
        trip = self.trips[twin][k].trip
        if len(trip.legs) > 1:
            self._push(t + trip.legs[1].offset_ms, twin, coin, k, 1)
        # (a trip open at the run's end is held open to the end, as the strategy held it)

    def _act(self, d: _Due, t: int) -> None:
        _, _, twin, coin, k, leg_i, tries = d
        self.calm[twin].clear()  # whatever it does to the twin's legs, they are looked at again
        ctx = self.ctxs[twin]
        ctx.t = t
        placed = self.trips[twin][k]
        trip = placed.trip
        book = self.books[twin]
        if leg_i == 0:
            self.current[twin][coin] = k
        if self.current[twin].get(coin) != k:
            return  # a later trip of this coin has begun: this one is over
        if leg_i in (ENTRY, END) and tries < CHECKS and self._in_flight(ctx, coin, trip, leg_i):
            self._push(t + CHECK_MS, twin, coin, k, leg_i, tries + 1)  # an IOC still on its way
            return
        maker = not trip.legs[0 if leg_i == ENTRY else -1].taker
        waits = maker and (leg_i == ENTRY or (leg_i == END and trip.closed))
        if waits and tries + 1 < MAKER_CHECKS and self._unfilled(twin, ctx, coin, k, trip, leg_i):
            self._push(t + MAKER_PATIENCE_MS, twin, coin, k, leg_i, tries + 1)  # still working
            return
        if leg_i == ENTRY and maker:  # never filled passively: the trip is given up
            if self.entering[twin].pop(coin, None) is not None:
                book.skipped += 1
                self.working.get(coin, {}).pop(twin, None)
                self._cancel_coin(ctx, coin)
            return
        if leg_i == ENTRY:  # the first leg unfilled for so long: enter as a taker
            if self.entering[twin].get(coin) == k and tries < CHECKS:
                book.finished += 1
                self.working.get(coin, {}).pop(twin, None)
                self._cancel_coin(ctx, coin)
                self._send(twin, coin, ctx, trip.legs[0].target_e8, (k, 0), taker=True)
                self._push(t + CHECK_MS, twin, coin, k, ENTRY, tries + 1)
            elif self.entering[twin].pop(coin, None) is not None:
                book.skipped += 1  # never entered: the trip is given up
            return
        if leg_i == END:  # the end check: flat, else finish as a taker
            self.working.get(coin, {}).pop(twin, None)
            if ctx.account.position(coin) != 0 and tries < CHECKS:
                book.finished += 1
                self._cancel_coin(ctx, coin)
                self._send(twin, coin, ctx, 0, (k, len(trip.legs) - 1), taker=True)
                self._push(t + CHECK_MS, twin, coin, k, END, tries + 1)
            return
        leg = trip.legs[leg_i]
        if tries == 0:
            book.legs += 1
        self._cancel_coin(ctx, coin)
        working = self.working.setdefault(coin, {})
        if leg.taker:
            working.pop(twin, None)
        else:
            working[twin] = (k, leg_i)
        if not self._send(twin, coin, ctx, leg.target_e8, (k, leg_i), taker=leg.taker):
            if tries < RETRIES:
                self._push(t + RETRY_MS, twin, coin, k, leg_i, tries + 1)
            else:
                book.skipped += 1
        if tries:
            return
        if leg_i == 0 and ctx.account.position(coin) == leg.target_e8 and not ctx.in_flight:
            self._started(twin, coin, k, t)  # already there (what a late trip left): go on
            return
        if leg_i == 0:  # the rest waits for the first fill (``_filled``)
            self.entering[twin][coin] = k
            self._push(t + (CHECK_MS if leg.taker else MAKER_PATIENCE_MS), twin, coin, k, ENTRY)
            return
        if leg_i + 1 < len(trip.legs):
            nxt = trip.legs[leg_i + 1].offset_ms - leg.offset_ms
            self._push(t + nxt, twin, coin, k, leg_i + 1)
        elif trip.closed:
            self._push(t + (CHECK_MS if leg.taker else MAKER_PATIENCE_MS), twin, coin, k, END)
        # else: open at the run's end, held open to the end (run.trips.placements laid it
        # where the strategy's was): closing it would cost what the strategy never paid

    def _unfilled(self, twin: int, ctx: Context, coin: str, k: int, trip: Trip, leg: int) -> bool:
        """A maker's first leg not filled yet, or its last leg short of flat."""
        if leg == ENTRY:
            return self.entering[twin].get(coin) == k
        return ctx.account.position(coin) != trip.legs[-1].target_e8

    @staticmethod
    def _in_flight(ctx: Context, coin: str, trip: Trip, leg_i: int) -> bool:
        """A taker leg's order still sent or open (an IOC lives until the book after its
        activation delay): what a check must wait for before calling the leg unfilled."""
        leg = trip.legs[0 if leg_i == ENTRY else -1]
        return leg.taker and ctx.orders_on(coin) > 0

    def _cancel_coin(self, ctx: Context, coin: str) -> None:
        for o in ctx.account.open_orders:
            if o.coin == coin and not o.cancelling and not ctx.cancel_sent(o.oid):
                ctx.cancel(oid=o.oid)

    def _send(
        self, twin: int, coin: str, ctx: Context, target: int, leg: tuple[int, int], *, taker: bool
    ) -> bool:
        """One order moving the twin's position toward ``target`` for ``leg`` (its trip and
        leg index); False: none could be priced yet (no book, or no touch on the side it
        needs). A leg too small to send counts once as skipped, however often it is tried
        again (a maker leg being worked, at every book; a first or last leg's checks)."""
        pos = ctx.account.position(coin)
        delta = target - pos
        if delta == 0:
            return True
        market = ctx.market(coin)
        book = market.book
        if book is None:
            return False
        is_buy = delta > 0
        reduce_only = (pos > 0 and is_buy is False and target >= 0) or (
            pos < 0 and is_buy and target <= 0
        )
        if taker:
            touch = book.best_ask_e8 if is_buy else book.best_bid_e8
            if touch is None:
                return False
            slip = tdiv(touch * SLIP_E8, E8)
            px = ctx.grid_e8(coin, touch + slip if is_buy else touch - slip, is_buy)
            tif = IOC
        else:
            touch = book.best_bid_e8 if is_buy else book.best_ask_e8
            if touch is None:
                return False
            px, tif = touch, ALO
        sz = lots_down(abs(delta), market.lot_e8)
        if not reduce_only:
            price = max(px, market.mark_e8 or px)
            room = lots_down(tdiv(ctx.headroom_e6 * 10**10, price), market.lot_e8)
            if room < sz:
                self.books[twin].trimmed += 1
                sz = room
            if notional(px, sz) < self.rules.min_order_value:
                if (twin, *leg) not in self.skips:
                    self.skips.add((twin, *leg))
                    self.books[twin].skipped += 1
                return True  # too small to send: the leg is given up, not retried
        if sz <= 0:
            return True
        ctx.order(ctx.asset_of(coin), is_buy, px, sz, reduce_only, tif)
        return True
