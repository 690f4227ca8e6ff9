"""The engine: a pure state machine from log lines to events.

Why this module exists: ``Engine.apply(line)`` is the whole interface. Before an input with
time ``t`` it runs every timed event due at or before ``t`` in (time, priority) order:
cancels taking effect (0), expiries (1), funding (2), performance fees (3), minute marks (4);
then it applies the input. Time comes only from the inputs; ``t`` never decreases.

May not touch: clocks, files, sockets, randomness, floats, set iteration.
"""

from __future__ import annotations

import heapq
import re
from typing import Any

from engine import events as ev
from engine import fills, orders, scoring, snapshot
from engine.book import WHITESPACE_FREE, BookLevels
from engine.inputs import (
    ArenaInput,
    AssetCtx,
    Book,
    BookData,
    Cancel,
    CtxData,
    Line,
    MalformedInput,
    Order,
    Register,
    Trade,
    Trades,
)
from engine.season import Season, check_season
from engine.state import Account, AssetState, OpenOrder
from engine.units import E8_MEMO, FRACTION_MEMO, parse_e8, parse_fraction

FUNDING, PERF_FEE, MARK = 2, 3, 4  # timed-event priorities after cancel (0) and expiry (1)
NEVER = 1 << 62
_ENTRY_NAME = re.compile(r"[a-z0-9_-]{1,32}")


class Engine:
    """Season 0 engine. Feed it log lines in order; read the events it returns."""

    def __init__(self, season: Season, *, record_prints: bool = False) -> None:
        """``record_prints``: keep the prints each trades message ``apply`` applied
        (``applied_prints``, read after it) for a shell whose strategies read them."""
        check_season(season)
        self.season = season
        self.rules = season.rules
        self.assets: dict[int, AssetState] = {}
        self.by_coin: dict[str, AssetState] = {}
        for m in sorted(season.markets, key=lambda m: m.asset):
            state = AssetState(m.coin, m.asset, m.szDecimals)
            self.assets[m.asset] = state
            self.by_coin[m.coin] = state
        self.accounts: dict[str, Account] = {}
        self.open_orders: dict[int, OpenOrder] = {}
        self.next_oid = 0
        self.t = -NEVER
        self.over = False
        self.last_mark: int | None = None
        self._heap: list[tuple[int, int, int]] = []  # (time, priority, oid)
        self._next_funding = self._first_boundary(self.rules.funding_interval_ms)
        self._next_fee = min(season.start + self.rules.performance_fee_period_ms, season.end)
        self._next_mark = self._first_boundary(self.rules.mark_interval_ms)
        self._next_due = 0
        self._out: list[ev.AnyEvent] = []
        self.books_checked: bool | int = False  # trust_books(): the shell checked every line before
        self.record_prints = record_prints
        self.applied_prints: list[Trade] = []
        self._refresh_due()

    # ---- the interface ---------------------------------------------------------------

    def apply(self, line: Line) -> list[ev.AnyEvent]:
        """Apply one input; return the events it (and the timed events before it) caused."""
        t = line.t
        assert t >= self.t, "inputs must not go back in time"
        self.t = t
        if t >= self._next_due:
            self._run_due(t)
        hl = line.hl
        if not self.over:
            if hl is not None:  # dispatched here, not in a method: this runs for every line
                if type(hl) is Trades:
                    self._trades(hl, t)
                elif type(hl) is Book:
                    self._book(hl.data, t)
                else:
                    assert isinstance(hl, AssetCtx)
                    self._ctx(hl.data)
            elif line.arena is not None:
                self._arena(line.arena, t)
        elif hl is not None:
            self._check_market(hl)
            if self.record_prints:
                self.applied_prints = []  # (after the end a trades message applies nothing)
        elif isinstance(line.arena, Order | Cancel):
            self._after_end(line.arena, t)
        out = self._out
        if not out:
            return []  # a new list: the caller may keep it, and _out fills up again later
        self._out = []
        return out

    def apply_held(self, line: Line) -> None:
        """Apply a book or an asset context that a shell held back, maybe past later inputs.

        For a shell that knows nothing read that coin's book or context in between (the
        backtest's warm pass over a day cache: no timed event due, no request, no hook, no
        order waiting on the book): the state is what applying it in its place would have
        left. No timed event runs and the engine's time does not move.
        """
        hl = line.hl
        if type(hl) is Book:
            self._book(hl.data, line.t)
        elif type(hl) is AssetCtx:
            self._ctx(hl.data)
        else:
            raise ValueError("only a book or an asset context can be held")

    def apply_quiet_prints(self, cols: fills.PrintColumns, lo: int, hi: int) -> int:
        """Apply trades messages ``lo`` to ``hi`` of ``cols`` (a day's prints as integers)
        while each is *quiet*; return the first one not applied (``hi``: all were).

        A message is quiet when it has a print, no timed event falls due at its time and
        none of its prints goes through a resting order: applying it then only moves the
        coins' last prints and makes no event. The first message that is not (or any, for
        an engine over, or holding events an input that failed made) is not applied: the
        shell applies it itself (``apply``), and offers the rest again after it. An engine
        recording prints applies nothing unless ``cols.new`` is there to say which prints
        of the messages applied were applied (what ``applied_prints`` would have held).
        """
        if (self.record_prints and cols.new is None) or self.over or self._out:
            return lo
        starts, t = cols.starts, cols.t
        now, due = self.t, self._next_due
        stop = lo
        while stop < hi:
            first, end = starts[stop], starts[stop + 1]
            if first >= end:
                break
            at = t[first]
            if at >= due or at < now:
                break
            if not cols.fill_nothing(first, end):
                break
            now = at
            stop += 1
        if stop > lo:
            self.t = now
            if cols.new is None:
                cols.apply_last(starts[lo], starts[stop])
            else:
                cols.apply_each(starts[lo], starts[stop])
        return stop

    def emit(self, event: ev.AnyEvent) -> None:
        self._out.append(event)

    def schedule(self, at: int, priority: int, oid: int) -> None:
        heapq.heappush(self._heap, (at, priority, oid))
        if at < self._next_due:
            self._next_due = at

    @property
    def final(self) -> bool:
        """True once the timed events at ``end`` have run."""
        return self.over

    def standings(self) -> list[scoring.Standing]:
        """Every entry's score as of the last mark, in registration order."""
        return [scoring.final_standing(self, a) for a in self.accounts.values()]

    def snapshot(self) -> dict[str, Any]:
        """Everything that decides what this engine does next, as plain values (ints, strs,
        bools, None, lists): a shell may store it and :meth:`restore` it later."""
        clock = (
            self.t,
            self.over,
            self.last_mark,
            self._next_funding,
            self._next_fee,
            self._next_mark,
            self._next_due,
        )
        return snapshot.dump(self, clock, self._heap)

    @classmethod
    def restore(cls, season: Season, snap: dict[str, Any]) -> Engine:
        """An engine of ``season`` in the state ``snap`` (from :meth:`snapshot`) holds:
        applying the inputs after it gives exactly the events the original engine would
        have given. ValueError (or KeyError, TypeError) when ``snap`` is not one of it."""
        eng = cls(season)
        clock, heap = snapshot.load(eng, snap)
        eng.t, eng.over, _, eng._next_funding, eng._next_fee, eng._next_mark, due = clock
        eng._heap = heap
        eng._next_due = due
        return eng

    # ---- the read face: what a shell may ask (it never reads the state itself) ----------

    @property
    def next_due(self) -> int:
        """The time of the next timed event (cancel, expiry, funding, fee, mark); an input
        before it runs none."""
        return self._next_due

    def entries(self) -> list[str]:
        """The registered entries' names, in registration order."""
        return list(self.accounts)

    def account(self, entry: str) -> Account | None:
        """``entry``'s account (read it, never change it), or None when not registered."""
        return self.accounts.get(entry)

    def equity(self, entry: str) -> int:
        """``entry``'s equity at the current marks, e6 (KeyError: not registered)."""
        return self.accounts[entry].equity(self.assets)

    def exposure(self, entry: str) -> int:
        """``entry``'s exposure (positions at the marks plus open orders' reserves), e6."""
        return self.accounts[entry].exposure(self.assets)

    def open_orders_of(self, entry: str) -> list[OpenOrder]:
        """``entry``'s open orders in oid order ([] when not registered)."""
        acct = self.accounts.get(entry)
        return [] if acct is None else list(acct.orders.values())

    def coin_state(self, coin: str) -> AssetState | None:
        """What the engine knows of ``coin``'s market (book, marks, funding, orders), or
        None when the season does not trade it."""
        return self.by_coin.get(coin)

    def asset_state(self, asset: int) -> AssetState | None:
        """The same by asset id."""
        return self.assets.get(asset)

    def coin_states(self) -> list[AssetState]:
        """Every season market's state, in asset order."""
        return list(self.assets.values())

    def trust_books(self, whitespace_free: bool = False) -> None:
        """From now on the shell feeds only lines it checked in full before (a day cache),
        so a book's levels are not checked again (the runner learns its source after
        building the engine); ``whitespace_free``: and their levels hold no whitespace
        (a day cache's columns), so they are not even scanned for it."""
        self.books_checked = WHITESPACE_FREE if whitespace_free else True

    # ---- timed events ----------------------------------------------------------------

    def _first_boundary(self, interval: int) -> int:
        return (self.season.start // interval + 1) * interval

    def _refresh_due(self) -> None:
        due = min(self._next_funding, self._next_fee, self._next_mark)
        if self._heap:
            due = min(due, self._heap[0][0])
        self._next_due = NEVER if self.over else due

    def _run_due(self, t: int) -> None:
        end = self.season.end
        limit = min(t, end)
        while True:
            best = (NEVER, 0, 0)
            if self._heap:
                best = self._heap[0]
            for key in (
                (self._next_funding, FUNDING, 0),
                (self._next_fee, PERF_FEE, 0),
                (self._next_mark, MARK, 0),
            ):
                if key < best:
                    best = key
            at, priority, oid = best
            if at > limit:
                break
            self._run_one(at, priority, oid)
        if t >= end:
            self.over = True
            self.emit(ev.SeasonOver(t=end))
        self._refresh_due()

    def _run_one(self, at: int, priority: int, oid: int) -> None:
        end = self.season.end
        if priority < FUNDING:
            heapq.heappop(self._heap)
            orders.timed(self, at, priority, oid)
        elif priority == FUNDING:
            scoring.funding(self, at)
            self._next_funding = at + self.rules.funding_interval_ms
            if self._next_funding > end:
                self._next_funding = NEVER
        elif priority == PERF_FEE:
            scoring.performance_fee(self, at)
            nxt = at + self.rules.performance_fee_period_ms
            self._next_fee = NEVER if at >= end else min(nxt, end)
        else:
            scoring.minute_mark(self, at)
            self._next_mark = at + self.rules.mark_interval_ms
            if self._next_mark > end:
                self._next_mark = NEVER

    # ---- inputs ----------------------------------------------------------------------

    def _book(self, data: BookData, t: int) -> None:
        a = self.by_coin.get(data.coin)
        if a is None:
            return
        # every level checked (unless checked before), none converted yet
        a.book = book = BookLevels(data, t, self.books_checked)
        if a.ctx_mark is None and book.two_sided:
            a.mid_book = book  # its mid is taken when the mark is read (AssetState.mark)
        if a.pending and t - data.time <= self.rules.stale_book_ms:
            fills.activate(self, a, book, t)

    def _trades(self, msg: Trades, t: int) -> None:
        memo = E8_MEMO
        by_coin = self.by_coin
        record = self.record_prints
        if record:
            self.applied_prints = []
        for trade in msg.data:
            try:  # subscripts, not .get(): this loop runs for every print of the feed
                a = by_coin[trade.coin]
            except KeyError:
                continue
            try:
                px = memo[trade.px]
                sz = memo[trade.sz]
            except KeyError:
                try:
                    px = parse_e8(trade.px)
                    sz = parse_e8(trade.sz)
                except ValueError as exc:
                    raise MalformedInput(f"trade: {exc}") from None
            if self._print(a, t, px, sz, trade.time, trade.tid) and record:
                self.applied_prints.append(trade)

    def _print(self, a: AssetState, t: int, px: int, sz: int, time: int, tid: int) -> bool:
        """One print of a season coin, its price and size e8: whether it was applied (a
        resent one is not: ``fills.fresh``)."""
        if not fills.fresh(a, time, tid):
            return False  # a resent print: fills nothing, sets no mark
        a.trade_px = px
        if a.resting:
            fills.on_print(self, a, t, px, sz, time, tid)
        return True

    def _ctx(self, data: CtxData) -> None:
        a = self.by_coin.get(data.coin)
        if a is None:
            return
        ctx = data.ctx
        memo = E8_MEMO
        try:
            if ctx.markPx is not None:
                a.ctx_mark = memo.get(ctx.markPx) or parse_e8(ctx.markPx)
            if ctx.oraclePx is not None:
                a.oracle = memo.get(ctx.oraclePx) or parse_e8(ctx.oraclePx)
            if ctx.funding is not None:
                a.funding = FRACTION_MEMO.get(ctx.funding) or parse_fraction(ctx.funding)
        except ValueError as exc:
            raise MalformedInput(f"activeAssetCtx: {exc}") from None

    def _arena(self, msg: ArenaInput, t: int) -> None:
        if isinstance(msg, Order):
            orders.parse_cloid(msg.cloid)  # checked even when the entry is unknown
            acct = self.accounts.get(msg.entry)
            if acct is not None:  # orders naming an unregistered entry are ignored
                orders.place(self, acct, msg, t)
        elif isinstance(msg, Cancel):
            orders.parse_cloid(msg.cloid)
            acct = self.accounts.get(msg.entry)
            if acct is not None:
                orders.cancel(self, acct, msg, t)
        elif isinstance(msg, Register):
            self._register(msg, t)
        # Tick: time only. Gap: informational (the recorder lost the feed for a while).

    def _check_market(self, hl: Book | Trades | AssetCtx) -> None:
        """The season is over: market data changes nothing, but a malformed field is still bad."""
        try:
            if isinstance(hl, Trades):
                for trade in hl.data:
                    if trade.coin in self.by_coin:
                        parse_e8(trade.px)
                        parse_e8(trade.sz)
            elif isinstance(hl, Book) and hl.data.coin in self.by_coin:
                BookLevels(hl.data, 0)
            elif isinstance(hl, AssetCtx) and hl.data.coin in self.by_coin:
                for text in (hl.data.ctx.markPx, hl.data.ctx.oraclePx, hl.data.ctx.funding):
                    if text is not None:
                        parse_e8(text)
        except ValueError as exc:
            raise MalformedInput(str(exc)) from None

    def _after_end(self, msg: Order | Cancel, t: int) -> None:
        """The season is over: requests change nothing, but their senders get an answer."""
        cloid = orders.parse_cloid(msg.cloid)  # a bad cloid makes the line bad, season or not
        if msg.entry in self.accounts:
            request, oid = ("order", 0) if isinstance(msg, Order) else ("cancel", msg.oid or 0)
            reason = ev.Reason.SeasonNotActive
            self.emit(
                ev.Rejected(
                    t=t, entry=msg.entry, reason=reason, request=request, cloid=cloid, oid=oid
                )
            )

    def _register(self, msg: Register, t: int) -> None:
        name = msg.entry
        if _ENTRY_NAME.fullmatch(name) is None or name in self.accounts:
            return  # a bad or already-used name is ignored
        self.accounts[name] = Account(
            name, len(self.accounts), msg.key_sha256, self.rules.starting_equity
        )
        self.emit(ev.Registered(t=t, entry=name))
