"""Building a :class:`~arena_tui.tui.snapshot.Snapshot` from a backtest between two inputs.

Why this module exists: one place reads the engine for the screen, in the engine's own
thread, and only between inputs (the runner's ``pace`` hook), so a snapshot is always a
consistent picture. The score numbers are the ranking rows ``arena backtest`` reports
(``arena_tui.run.replay.ranking_rows``); the rest is the engine's accounts, orders and marks,
and the market views the strategies see.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Any

from arena_tui.run.hooks import Said
from arena_tui.run.replay import ranking_rows
from arena_tui.run.stream import Run
from arena_tui.tui.snapshot import (
    Coin,
    Entry,
    FillMark,
    Happening,
    Leader,
    Order,
    Position,
    Score,
    Snapshot,
    Use,
)
from engine import PENDING, Account, AssetState, Engine, Line
from engine import events as ev
from engine.inputs import Trade as RawTrade
from engine.units import E8, E10, tdiv

if TYPE_CHECKING:
    from arena_tui.run.backtest import Backtest
    from arena_tui.run.market import MarketView

BOOK_LEVELS = 20  # Hyperliquid's l2Book depth: the market tab shows as many as fit
LAST_PRINTS = 40
MINUTES_KEPT = 1440  # a day of minute marks: the widest chart draws fewer
FILLS_KEPT = 500  # an entry's most recent fills, for the market tab's chart
# the events the Activity tab lists
SHOWN = (ev.Fill, ev.Rejected, ev.CancelPending, ev.Closed, ev.Paused, ev.PerformanceFee)
CLOSED_KEPT = 4096  # closed orders whose coin is remembered (a late cancel names them)


class Capture:
    """What arena-tui shows of a run, taken as it goes: a subscriber given to the run when
    it is built (``run.stream``). It hears every event of the run's entries as it comes,
    before its hooks (the Activity tab lists them in the order they happened, each with its
    coin: a refused order's from the request being applied, ``Run.applying``), every line
    a strategy prints, and keeps the charts' history; the screen's worker posts what it
    gathered (``pending``) and the entries ``found`` trading (for "next fill")."""

    market_bytes = False

    def __init__(self) -> None:
        self.run: Run | None = None
        self.history: History | None = None
        self.names: frozenset[str] = frozenset()
        self.pending: list[Happening] = []  # not yet posted
        self.found: list[str] = []  # entries with a fill or a refusal since last looked
        self.funding: dict[tuple[str, int], int] = {}
        self.order_asset: dict[int, int] = {}
        self.closed_asset: OrderedDict[int, int] = OrderedDict()

    def bind(self, run: Run) -> None:
        self.run = run
        self.names = frozenset(run.by_name)
        self.history = History(run)

    def observe(self, line: Line, raw: bytes, events: list[ev.AnyEvent]) -> None:
        """Nothing per input: events are heard as they come (``event``)."""

    def prints_applied(self, applied: list[RawTrade], t: int) -> None:
        """Nothing: the screen shows no print (``run.stream.TakesPrints``)."""

    def said(self, said: Said) -> None:
        self.pending.append(Happening(said, None))

    def event(self, event: ev.AnyEvent) -> None:
        if getattr(event, "entry", None) not in self.names:
            return
        run, history = self.run, self.history
        assert run is not None and history is not None, "bound when the run is built"
        history.event(event)
        if isinstance(event, ev.Accepted):
            self.order_asset[event.oid] = event.asset
        elif isinstance(event, ev.FundingPaid):
            key = (event.entry, event.asset)
            self.funding[key] = self.funding.get(key, 0) + event.payment
        if not isinstance(event, SHOWN):
            return
        asset = getattr(event, "asset", None)
        if asset is None and isinstance(event, ev.Closed):
            asset = self.order_asset.pop(event.oid, None)  # the order has left: forget it
            if asset is not None:
                self.closed_asset[event.oid] = asset
                if len(self.closed_asset) > CLOSED_KEPT:
                    self.closed_asset.popitem(last=False)
        elif isinstance(event, ev.Rejected) and event.request == "order":
            asset = self._refused_asset(run, event)
        elif asset is None:
            oid = getattr(event, "oid", -1)
            asset = self.order_asset.get(oid, self.closed_asset.get(oid))
        state = None if asset is None else run.engine.asset_state(asset)
        coin = None if state is None else state.coin
        note = run.notes.of(event) if type(event) is ev.Fill else None
        self.pending.append(Happening(event, coin, note))
        if isinstance(event, ev.Fill | ev.Rejected):
            self.found.append(event.entry)

    @staticmethod
    def _refused_asset(run: Run, event: ev.Rejected) -> int | None:
        """The asset of the order the engine just refused: the request being applied."""
        msg = run.applying
        if msg is None or msg.get("type") != "order" or msg.get("entry") != event.entry:
            return None
        asset = msg.get("asset")
        return asset if type(asset) is int else None


class History:
    """What the screen draws over time, kept as the run's events come (in the engine's
    thread, from ``on_event``): each entry's cap used and open orders at its minute marks
    and its recent fills, each coin's book mid at each minute. Bounded: the last day."""

    def __init__(self, bt: Run) -> None:
        self.bt = bt
        self.uses: dict[str, deque[Use]] = {e.name: deque(maxlen=MINUTES_KEPT) for e in bt.entrants}
        self.fills: dict[str, deque[FillMark]] = {
            e.name: deque(maxlen=FILLS_KEPT) for e in bt.entrants
        }
        self.mids: dict[str, deque[tuple[int, int]]] = {
            c: deque(maxlen=MINUTES_KEPT) for c in bt.markets
        }
        self.minute = -1

    def event(self, e: ev.AnyEvent) -> None:
        kind = type(e)
        if kind is ev.MinuteMark:
            self._mark(e)  # type: ignore[arg-type]
        elif kind is ev.Fill:
            fills = self.fills.get(e.entry)  # type: ignore[union-attr]
            if fills is not None:
                coin = _coin_of(self.bt.engine, e.asset)  # type: ignore[union-attr]
                fills.append(FillMark(e.t, coin, e.is_buy, e.px, e.taker))  # type: ignore[union-attr]

    def _mark(self, m: ev.MinuteMark) -> None:
        uses = self.uses.get(m.entry)
        if uses is None:
            return
        eng = self.bt.engine
        if m.t != self.minute:
            self.minute = m.t
            for coin, mids in self.mids.items():
                book = _state(eng.coin_state(coin)).book
                mid = book.mid() if book is not None and book.two_sided else None
                if mid is not None:
                    mids.append((m.t, mid))
        acct = eng.account(m.entry)
        if acct is None:
            return
        exposure = eng.exposure(m.entry)
        cap = tdiv(exposure * E8, m.equity) if m.equity > 0 else 0
        uses.append(Use(m.t, cap, len(acct.orders)))


def _score(bt: Backtest, name: str, acct: Account | None, row: dict[str, Any]) -> Score:
    eng = bt.engine
    rules = eng.rules
    marks = bt.by_name[name].stats.marks
    if acct is None:
        equity_now = peak = rules.starting_equity
        exposure = n_orders = fill_days = 0
        paused = False
    else:
        equity_now = eng.equity(name)
        peak = acct.peak
        exposure = eng.exposure(name)
        n_orders = len(acct.orders)
        fill_days = len(acct.fill_days)
        paused = acct.paused
    return Score(
        entry=name,
        rank=row.get("rank"),
        equity=row.get("equity", rules.starting_equity),
        ret=row.get("return", 0),
        mdd=row.get("mdd", 0),
        score=row.get("score", 0),
        eligible=bool(row.get("eligible", False)),
        equity_now=equity_now,
        exit_equity=marks[-1].exit_equity if marks else None,
        drawdown=max(0, tdiv((peak - equity_now) * E8, peak)),
        drawdown_limit_pct=rules.drawdown_limit_pct,
        exposure=exposure,
        cap_used=tdiv(exposure * E8, equity_now) if equity_now > 0 else 0,
        cap_pct=rules.position_cap_pct,
        open_orders=n_orders,
        max_open_orders=rules.max_open_orders,
        fill_days=fill_days,
        min_fill_days=rules.min_fill_days,
        active_marks=row.get("active_marks", 0),
        marks=row.get("marks", 0),
        min_active_pct=rules.min_active_pct,
        paused=paused,
    )


def _orders(bt: Backtest, acct: Account) -> tuple[Order, ...]:
    eng = bt.engine
    now = eng.t
    lifetime = eng.rules.order_lifetime_ms
    out = []
    for o in acct.orders.values():
        state = "cancelling" if o.cancel_at is not None else "pending"
        if o.cancel_at is None and o.state != PENDING:
            state = "resting"
        out.append(
            Order(
                oid=o.oid,
                coin=_coin_of(eng, o.asset),
                is_buy=o.is_buy,
                px=o.limit_px,
                sz=o.sz,
                filled=o.filled,
                reserve=o.reserve,
                age=now - o.received,
                expires_in=o.received + lifetime - now,
                state=state,
                reduce_only=o.reduce_only,
            )
        )
    return tuple(out)


def _positions(
    bt: Backtest, acct: Account, funding: dict[tuple[str, int], int]
) -> tuple[Position, ...]:
    out = []
    for asset, size in acct.positions.items():
        a = _state(bt.engine.asset_state(asset))
        mark = a.mark or 0
        paid = funding.get((acct.name, asset), 0)
        out.append(Position(a.coin, size, mark, tdiv(size * mark, E10), paid))
    return tuple(out)


def _coin(
    view: MarketView, funding: tuple[int, int] | None, mids: tuple[tuple[int, int], ...] = ()
) -> Coin:
    book = view.book
    bids: tuple[tuple[int, int], ...] = ()
    asks: tuple[tuple[int, int], ...] = ()
    if book is not None:
        bids = tuple((px, sz) for px, sz, _ in book.bids[:BOOK_LEVELS])
        asks = tuple((px, sz) for px, sz, _ in book.asks[:BOOK_LEVELS])
    last = itertools.islice(reversed(view.prints), LAST_PRINTS)
    prints = tuple((p.t, p.is_buy, p.px_e8, p.sz_e8) for p in last)
    return Coin(
        coin=view.coin,
        bids=bids,
        asks=asks,
        book_t=None if book is None else book.t,
        prints=prints,
        mark=view.mark_e8,
        oracle=view.oracle_e8,
        funding=funding,
        mids=mids,
    )


def take(
    bt: Backtest,
    *,
    seq: int,
    inputs: int,
    waiting: bool,
    funding: dict[tuple[str, int], int],
    history: History | None = None,
) -> Snapshot:
    """The run as it stands now (call it only between two inputs, in the engine's thread);
    ``history``: what the charts over time draw (none: they draw nothing)."""
    eng = bt.engine
    rows = {str(r["entry"]): r for r in ranking_rows(eng)}
    entries = []
    for e in bt.entrants:
        acct = eng.account(e.name)
        score = _score(bt, e.name, acct, rows.get(e.name, {}))
        positions = () if acct is None else _positions(bt, acct, funding)
        orders = () if acct is None else _orders(bt, acct)
        uses: tuple[Use, ...] = ()
        fills: tuple[FillMark, ...] = ()
        if history is not None:
            uses = tuple(history.uses.get(e.name, ()))
            fills = tuple(history.fills.get(e.name, ()))
        entries.append(Entry(score, positions, orders, tuple(e.stats.marks), uses, fills))
    leaders = tuple(
        Leader(
            r["rank"],
            r["entry"],
            r["score"],
            r["return"],
            r["mdd"],
            r["equity"],
            r["fill_days"],
            r["eligible"],
        )
        for r in rows.values()
        if r["entry"] in bt.by_name
    )
    coins = tuple(
        _coin(
            v, _state(eng.coin_state(c)).funding, () if history is None else tuple(history.mids[c])
        )
        for c, v in bt.markets.items()
    )
    season = bt.season
    return Snapshot(
        seq=seq,
        t=None if eng.t < 0 else eng.t,
        inputs=inputs,
        season=season.id,
        start=season.start,
        end=season.end,
        starting_equity=season.rules.starting_equity,
        over=eng.over,
        waiting=waiting,
        entries=tuple(entries),
        coins=coins,
        leaders=leaders,
    )


def _state(a: AssetState | None) -> AssetState:
    """A season market's state (the engine has one for every market it trades)."""
    assert a is not None
    return a


def _coin_of(eng: Engine, asset: int) -> str:
    return _state(eng.asset_state(asset)).coin
