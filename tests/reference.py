"""A second, deliberately plain reading of the contract that predicts every event.

``Reference(season).apply(line)`` returns the events the engine must return for ``line``
(``canonical`` orders what the contract leaves open), written again from
/work/shared/design/season0-engine.md, never from ``engine/``: its arithmetic below is its
own. ``tests/test_engine_stateful.py`` checks the engine against it step by step on random
inputs; ``tests/test_golden.py`` replays the golden logs through it, so that a golden file
regenerated from a buggy engine cannot pass.

Why one module: the reference is one reading of one contract (arithmetic, orders, fills,
timed events, scores); split, the two halves could drift apart.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from itertools import groupby

import msgspec

from engine import Line
from engine.events import (
    Accepted,
    Activated,
    AnyEvent,
    BookQuote,
    CancelPending,
    Closed,
    Fill,
    FundingPaid,
    MinuteMark,
    Paused,
    PerformanceFee,
    PrintQuote,
    Reason,
    Registered,
    Rejected,
    ScoreRow,
    SeasonOver,
)
from engine.inputs import AssetCtx, Book, Cancel, Order, Register, Trades
from engine.season import Market, Season

E8 = 10**8
E10 = 10**10
DAY = 86_400_000
ENTRY_NAME = re.compile(r"[a-z0-9_-]{1,32}")
DECIMAL = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?")
ALO, GTC, IOC = 1, 2, 3


# ---- arithmetic, written again from the contract (not imported from the engine) ----------


def tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def notional(px: int, sz: int) -> int:
    return tdiv(px * sz, E10)


def lots_down(sz: int, lot: int) -> int:
    return tdiv(sz, lot) * lot


def parse_e8(text: str) -> int:
    m = DECIMAL.fullmatch(text)
    assert m is not None, text
    sign, whole, frac = m.groups()
    value = int(whole) * E8 + int((frac or "")[:8].ljust(8, "0"))
    return -value if sign else value


def parse_rate(text: str) -> tuple[int, int]:
    m = DECIMAL.fullmatch(text)
    assert m is not None, text
    sign, whole, frac = m.groups()
    num = int(whole + (frac or ""))
    return (-num if sign else num), 10 ** len(frac or "")


def parse_cloid(text: str | None) -> int:
    return 0 if text is None else int(text[2:], 16)


def on_grid(px: int, sz_decimals: int) -> bool:
    """Integer prices always; else <= 6 - szDecimals decimals and <= 5 significant figures."""
    if px <= 0:
        return False
    if px % E8 == 0:
        return True
    whole, frac = divmod(px, E8)
    decimals = f"{frac:08d}".rstrip("0")
    return len(decimals) <= 6 - sz_decimals and len((str(whole) + decimals).lstrip("0")) <= 5


def lot_of(m: Market) -> int:
    lot: int = 10 ** (8 - m.szDecimals)
    return lot


def boundaries(interval: int, after: int, upto: int) -> Iterator[int]:
    """Multiples of ``interval`` in ``(after, upto]``."""
    h = (after // interval + 1) * interval
    while h <= upto:
        yield h
        h += interval


def level_list(
    book: Book,
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """Each side as (px, sz, n), best first."""
    sides = msgspec.json.decode(bytes(book.data.levels))
    bids, asks = (
        [(parse_e8(lv["px"]), parse_e8(lv["sz"]), lv["n"]) for lv in side] for side in sides
    )
    return bids, asks


# ---- the reference -----------------------------------------------------------------------


@dataclasses.dataclass
class ROrder:
    oid: int
    entry: str
    asset: int
    is_buy: bool
    limit_px: int
    sz: int
    reduce_only: bool
    tif: int
    cloid: int
    received: int
    reserve: int
    activated: bool = False
    book_time: int = 0
    cancel_at: int | None = None
    filled: int = 0


@dataclasses.dataclass
class RAccount:
    name: str
    idx: int
    cash: int
    peak: int
    fee_hwm: int
    last_equity: int
    mdd: int = 0
    paused: bool = False
    marks: int = 0
    active_marks: int = 0
    positions: dict[int, int] = dataclasses.field(default_factory=dict)
    open: dict[int, ROrder] = dataclasses.field(default_factory=dict)
    fill_days: set[int] = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class RMarket:
    m: Market
    ctx_mark: int | None = None
    mid: int | None = None
    trade_px: int | None = None
    oracle: int | None = None
    rate: tuple[int, int] | None = None
    trade_time: int | None = None
    tids: set[int] = dataclasses.field(default_factory=set)

    @property
    def mark(self) -> int | None:
        for px in (self.ctx_mark, self.mid, self.trade_px):
            if px is not None:
                return px
        return None


class Reference:
    """The contract read again, plainly: every event of every input, for any season."""

    def __init__(self, season: Season) -> None:
        self.rules = season.rules
        self.start, self.end = season.start, season.end
        self.markets = {m.asset: RMarket(m) for m in season.markets}
        self.by_coin = {r.m.coin: r for r in self.markets.values()}
        self.accounts: dict[str, RAccount] = {}
        self.orders: dict[int, ROrder] = {}  # open orders, oid order
        self.oid = 0
        self.done = -(1 << 62)  # every timed event at or before this has run
        self.over = False
        self.out: list[AnyEvent] = []

    def apply(self, line: Line) -> list[AnyEvent]:
        self.out = []
        hl, arena, t = line.hl, line.arena, line.t
        if not self.over:
            self.timed(min(t, self.end))
            self.done = min(t, self.end)
            if t >= self.end:
                self.over = True
                self.out.append(SeasonOver(t=self.end))
        if self.over:
            # The season is over: requests change nothing, but registered senders get an answer.
            if isinstance(arena, Order | Cancel) and arena.entry in self.accounts:
                request, oid = ("order", 0) if isinstance(arena, Order) else ("cancel", arena.oid)
                self.out.append(
                    Rejected(
                        t=t,
                        entry=arena.entry,
                        reason=Reason.SeasonNotActive,
                        request=request,
                        cloid=parse_cloid(arena.cloid),
                        oid=oid or 0,
                    )
                )
            return self.out
        if isinstance(hl, Book):
            self.book(hl, t)
        elif isinstance(hl, Trades):
            self.trades(hl, t)
        elif isinstance(hl, AssetCtx) and hl.data.coin in self.by_coin:
            r, c = self.by_coin[hl.data.coin], hl.data.ctx
            r.ctx_mark = r.ctx_mark if c.markPx is None else parse_e8(c.markPx)
            r.oracle = r.oracle if c.oraclePx is None else parse_e8(c.oraclePx)
            r.rate = r.rate if c.funding is None else parse_rate(c.funding)
        elif isinstance(arena, Register):
            if ENTRY_NAME.fullmatch(arena.entry) and arena.entry not in self.accounts:
                eq = self.rules.starting_equity
                self.accounts[arena.entry] = RAccount(
                    arena.entry, len(self.accounts), cash=eq, peak=eq, fee_hwm=eq, last_equity=eq
                )
                self.out.append(Registered(t=t, entry=arena.entry))
        elif isinstance(arena, Order) and arena.entry in self.accounts:
            self.order(self.accounts[arena.entry], arena, t)
        elif isinstance(arena, Cancel) and arena.entry in self.accounts:
            self.cancel(self.accounts[arena.entry], arena, t)
        return self.out

    # -- money

    def equity(self, a: RAccount) -> int:
        total = a.cash
        for asset, pos in a.positions.items():
            mark = self.markets[asset].mark
            assert mark is not None
            total += tdiv(pos * mark, E10)
        return total

    def exposure(self, a: RAccount) -> int:
        total = sum(o.reserve for o in a.open.values() if not o.reduce_only)
        for asset, pos in a.positions.items():
            mark = self.markets[asset].mark
            assert mark is not None
            total += abs(tdiv(pos * mark, E10))
        return total

    # -- timed events

    def timed(self, limit: int) -> None:
        due: list[tuple[int, int, int]] = []
        for o in self.orders.values():
            if o.cancel_at is not None and self.done < o.cancel_at <= limit:
                due.append((o.cancel_at, 0, o.oid))
            if self.done < o.received + self.rules.order_lifetime_ms <= limit:
                due.append((o.received + self.rules.order_lifetime_ms, 1, o.oid))
        after = max(self.done, self.start)
        due += [(h, 2, 0) for h in boundaries(self.rules.funding_interval_ms, after, limit)]
        fee_at = list(
            range(
                self.start + self.rules.performance_fee_period_ms,
                self.end,
                self.rules.performance_fee_period_ms,
            )
        )
        due += [(b, 3, 0) for b in [*fee_at, self.end] if after < b <= limit]
        due += [(m, 4, 0) for m in boundaries(self.rules.mark_interval_ms, after, limit)]
        for at, priority, oid in sorted(set(due)):
            order = self.orders.get(oid)
            if priority == 0 and order is not None and order.cancel_at == at:
                self.close(order, at, Reason.Cancelled)
            elif priority == 1 and order is not None:
                self.close(order, at, Reason.OrderExpired)
            elif priority == 2:
                self.funding(at)
            elif priority == 3:
                self.performance_fee(at)
            elif priority == 4:
                self.minute_mark(at)

    def funding(self, h: int) -> None:
        for a in self.accounts.values():
            for asset, pos in sorted(a.positions.items()):
                r = self.markets[asset]
                if r.rate is None or r.oracle is None:
                    continue
                num, den = r.rate
                payment = tdiv(pos * r.oracle * num, E10 * den)
                a.cash -= payment
                self.out.append(FundingPaid(t=h, entry=a.name, asset=asset, payment=payment))

    def performance_fee(self, b: int) -> None:
        for a in self.accounts.values():
            e = self.equity(a)
            if e > a.fee_hwm:
                fee = tdiv((e - a.fee_hwm) * self.rules.performance_fee_pct, 100)
                a.cash -= fee
                a.fee_hwm = e - fee
                self.out.append(
                    PerformanceFee(t=b, entry=a.name, equity=e, fee=fee, fee_hwm=a.fee_hwm)
                )

    def minute_mark(self, m: int) -> None:
        for a in self.accounts.values():
            e = self.equity(a)
            a.peak = max(a.peak, e)
            dd = tdiv((a.peak - e) * E8, a.peak)
            a.mdd = max(a.mdd, dd)
            a.last_equity = e
            if not a.paused and (a.peak - e) * 100 >= a.peak * self.rules.drawdown_limit_pct:
                a.paused = True
                for o in list(a.open.values()):
                    self.close(o, m, Reason.VaultPaused)
                self.out.append(Paused(t=m, entry=a.name, equity=e, peak=a.peak))
            active = bool(a.positions) or any(o.filled < o.sz for o in a.open.values())
            a.marks += 1
            a.active_marks += active
            self.out.append(
                MinuteMark(
                    t=m, entry=a.name, equity=e, peak=a.peak, drawdown=dd, mdd=a.mdd, active=active
                )
            )
        rows = []
        for a in self.accounts.values():
            ret = tdiv(
                (a.last_equity - self.rules.starting_equity) * E8, self.rules.starting_equity
            )
            score = ret - tdiv(a.mdd * self.rules.lambda_num, self.rules.lambda_den)
            rows.append((-score, a.mdd, a.idx, a, ret, score))
        for rank, (_, _, _, a, ret, score) in enumerate(sorted(rows, key=lambda r: r[:3]), 1):
            eligible = (
                len(a.fill_days) >= self.rules.min_fill_days
                and a.active_marks * 100 >= a.marks * self.rules.min_active_pct
            )
            self.out.append(
                ScoreRow(
                    t=m,
                    entry=a.name,
                    day=tdiv(m - 1, DAY),
                    equity=a.last_equity,
                    ret=ret,
                    mdd=a.mdd,
                    score=score,
                    rank=rank,
                    eligible=eligible,
                    fill_days=len(a.fill_days),
                    active_marks=a.active_marks,
                    marks=a.marks,
                    active_share=tdiv(a.active_marks * E8, a.marks),
                )
            )

    def close(self, o: ROrder, t: int, reason: Reason) -> None:
        del self.orders[o.oid]
        del self.accounts[o.entry].open[o.oid]
        self.out.append(Closed(t=t, entry=o.entry, oid=o.oid, reason=reason, filled=o.filled))

    # -- orders and cancels

    def check(self, a: RAccount, o: Order, cloid: int, t: int) -> Reason | int:
        r = self.markets.get(o.asset)
        if not self.start <= t < self.end:
            return Reason.SeasonNotActive
        if a.paused and not o.reduceOnly:
            return Reason.VaultNotActive
        if r is None:
            return Reason.MarketNotAllowed
        if o.encodedTif not in (ALO, GTC, IOC):
            return Reason.InvalidTif
        if not on_grid(o.limitPx, r.m.szDecimals):
            return Reason.InvalidPrice
        if o.sz <= 0 or o.sz % lot_of(r.m) != 0:
            return Reason.InvalidSize
        if not o.reduceOnly and notional(o.limitPx, o.sz) < self.rules.min_order_value:
            return Reason.OrderTooSmall
        if cloid != 0 and cloid in {x.cloid for x in a.open.values()}:
            return Reason.OrderAlreadyExists
        if len(a.open) >= self.rules.max_open_orders:
            return Reason.TooManyOpenOrders
        if o.reduceOnly:
            return 0
        if r.mark is None:
            return Reason.PositionCapExceeded
        reserve = notional(max(o.limitPx, r.mark), o.sz)
        if (self.exposure(a) + reserve) * 100 > self.equity(a) * self.rules.position_cap_pct:
            return Reason.PositionCapExceeded
        return reserve

    def order(self, a: RAccount, o: Order, t: int) -> None:
        cloid = parse_cloid(o.cloid)
        result = self.check(a, o, cloid, t)
        if isinstance(result, Reason):
            self.out.append(
                Rejected(t=t, entry=a.name, reason=result, request="order", cloid=cloid)
            )
            return
        self.oid += 1
        args = (o.asset, o.isBuy, o.limitPx, o.sz, o.reduceOnly, o.encodedTif, cloid, t, result)
        self.orders[self.oid] = a.open[self.oid] = ROrder(self.oid, a.name, *args)
        self.out.append(
            Accepted(
                t=t,
                entry=a.name,
                oid=self.oid,
                cloid=cloid,
                asset=o.asset,
                is_buy=o.isBuy,
                limit_px=o.limitPx,
                sz=o.sz,
                reduce_only=o.reduceOnly,
                tif=o.encodedTif,
                reserve=result,
                activates_at=t + self.rules.activation_delay_ms,
            )
        )

    def cancel(self, a: RAccount, c: Cancel, t: int) -> None:
        cloid = parse_cloid(c.cloid)
        if c.oid is not None:
            found = a.open.get(c.oid)
        else:
            found = next((o for o in a.open.values() if cloid and o.cloid == cloid), None)
        if found is None or found.cancel_at is not None:
            self.out.append(
                Rejected(
                    t=t,
                    entry=a.name,
                    reason=Reason.OrderNotFound,
                    request="cancel",
                    cloid=cloid,
                    oid=c.oid or 0,
                )
            )
            return
        found.cancel_at = t + self.rules.activation_delay_ms
        self.out.append(
            CancelPending(t=t, entry=a.name, oid=found.oid, effective_at=found.cancel_at)
        )

    # -- market data and fills

    def fill(self, o: ROrder, t: int, px: int, q: int, quote: BookQuote | PrintQuote) -> None:
        taker = isinstance(quote, BookQuote)
        a = self.accounts[o.entry]
        if o.reduce_only:
            pos = a.positions.get(o.asset, 0)
            q = min(q, max(0, -pos if o.is_buy else pos))
        if q <= 0:
            return
        n = notional(px, q)
        venue_fee = tdiv(
            n * (self.rules.taker_fee_dbps if taker else self.rules.maker_fee_dbps), 100_000
        )
        exec_fee = tdiv(n * self.rules.execution_fee_dbps, 100_000)
        a.cash += -n if o.is_buy else n
        a.cash -= venue_fee + exec_fee
        pos = a.positions.get(o.asset, 0) + (q if o.is_buy else -q)
        a.positions[o.asset] = pos
        if pos == 0:
            del a.positions[o.asset]
        o.filled += q
        a.fill_days.add(tdiv(t, DAY))
        self.out.append(
            Fill(
                t=t,
                entry=o.entry,
                oid=o.oid,
                cloid=o.cloid,
                asset=o.asset,
                is_buy=o.is_buy,
                px=px,
                sz=q,
                taker=taker,
                venue_fee=venue_fee,
                exec_fee=exec_fee,
                quote=quote,
            )
        )

    def book(self, hl: Book, t: int) -> None:
        r = self.by_coin.get(hl.data.coin)
        if r is None:
            return
        bids, asks = level_list(hl)
        if bids and asks:
            r.mid = tdiv(bids[0][0] + asks[0][0], 2)
        if t - hl.data.time > self.rules.stale_book_ms:
            return
        lot = lot_of(r.m)
        for o in list(self.orders.values()):
            if (
                o.asset != r.m.asset
                or o.activated
                or o.received + self.rules.activation_delay_ms > t
            ):
                continue
            o.activated, o.book_time = True, hl.data.time
            self.out.append(Activated(t=t, entry=o.entry, oid=o.oid, book_time=o.book_time))
            opposite = asks if o.is_buy else bids
            if o.tif == ALO:
                best = opposite[0][0] if opposite else None
                if best is not None and (o.limit_px >= best if o.is_buy else o.limit_px <= best):
                    self.close(o, t, Reason.PostOnlyWouldCross)
                continue
            for depth, (px, sz, n) in enumerate(opposite):
                if (px > o.limit_px) if o.is_buy else (px < o.limit_px):
                    break
                q = min(
                    o.sz - o.filled, lots_down(tdiv(sz * self.rules.take_fraction_pct, 100), lot)
                )
                self.fill(o, t, px, q, BookQuote(hl.data.time, depth, px, sz, n))
                if o.filled == o.sz:
                    break
            if o.tif == IOC:
                left = o.filled < o.sz
                self.close(o, t, Reason.IocRemainder if left else Reason.IocFilled)

    def trades(self, hl: Trades, t: int) -> None:
        for tr in hl.data:
            r = self.by_coin.get(tr.coin)
            if r is None:
                continue
            if r.trade_time is None or tr.time > r.trade_time:
                r.trade_time, r.tids = tr.time, {tr.tid}
            elif tr.time == r.trade_time and tr.tid not in r.tids:
                r.tids.add(tr.tid)
            else:
                continue
            px = r.trade_px = parse_e8(tr.px)
            cap = lots_down(tdiv(parse_e8(tr.sz) * self.rules.print_fraction_pct, 100), lot_of(r.m))
            for o in list(self.orders.values()):
                if (
                    o.asset == r.m.asset
                    and o.activated
                    and o.filled < o.sz
                    and tr.time >= o.book_time
                    and ((px < o.limit_px) if o.is_buy else (px > o.limit_px))
                ):
                    quote = PrintQuote(tr.tid, tr.time, px, parse_e8(tr.sz))
                    self.fill(o, t, o.limit_px, min(o.sz - o.filled, cap), quote)


def canonical(events: list[AnyEvent]) -> list[AnyEvent]:
    """Funding payments of one entry at one boundary sorted by asset (the contract is silent)."""
    out: list[AnyEvent] = []
    for _, run in groupby(
        events, key=lambda e: (e.t, e.entry) if isinstance(e, FundingPaid) else id(e)
    ):
        out += sorted(run, key=lambda e: e.asset if isinstance(e, FundingPaid) else 0)
    return out
