"""Everything a run can be drawn or analysed from, gathered once: the run data model.

Why this module exists: report.html, ``arena export --parquet`` and the DataFrame loader
all show the same run (its fills, every order's life, the minute marks with cap use and
open orders, funding and fees, per-coin PnL, round trips and prices); if each gathered it
its own way they could disagree. A :class:`Collector` rides along the backtest's own pass
(``Backtest.observers``: after every applied input, with its line and events) and reads
the engine's state at each minute mark, so nothing is run twice; :func:`save` keeps the
result beside the run (``rundata.msgpack``) and :func:`load` reads it back, or re-derives
it by replaying the run's log (a thin one finds its sources as ``arena replay`` does) with
the same collector when the file is missing. Integers throughout (money e6, prices and
sizes e8, ratios e8, times ms): presentation converts.

Round trips are *flat to flat*: one opens when a coin's position leaves zero and closes
when it is back at zero; a fill that flips the position closes the trip with the part that
reaches zero and opens the next with the rest (its fees split by size). Its PnL is what the
trip's fills paid and received, net of their fees (not of funding, which is per coin in
:class:`CoinPnl`); a trip still open at the end is valued at the engine's last mark.

Why one module: the model, the collector that fills it and the file that keeps it change
together (a new column is a field, the event that feeds it and the format number); apart,
each would restate the others' field lists.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from arena_tui.logs.notes import note_in
from arena_tui.logs.thinlog import open_logs
from arena_tui.run.market import MarketView
from arena_tui.run.rundir import RUN_LOG
from arena_tui.run.stats import exit_value
from arena_tui.season.file import resolve_season
from arena_tui.util.errors import ArenaError
from engine import Engine, Line, MalformedInput, Season
from engine import events as ev
from engine.inputs import Order
from engine.inputs import Trades as TradesMsg
from engine.orders import format_cloid
from engine.units import E10, notional, parse_e8, tdiv

if TYPE_CHECKING:
    from arena_tui.run.backtest import Backtest

RUNDATA_FILE = "rundata.msgpack"
FORMAT = 1  # bumped when a field changes meaning; load re-derives an older file
MINUTE_MS = 60_000


class RunDataError(ArenaError):
    """A run directory whose data cannot be read or re-derived (one line)."""


# ---- the model ----------------------------------------------------------------------------


class EntryInfo(msgspec.Struct, frozen=True, array_like=True):
    """An entry of the run: its name, its strategy file's name and parameters (None when
    the run was rebuilt from a log that names no file)."""

    name: str
    strategy: str | None = None
    params: dict[str, Any] | None = None


class CoinInfo(msgspec.Struct, frozen=True, array_like=True):
    coin: str
    asset: int
    sz_decimals: int


class FillRow(msgspec.Struct, frozen=True, array_like=True):
    """One fill; ``quote_*``: what it filled against (a book level for a taker, a print for
    a maker; ``quote_source`` "book", "print" or None); ``note``: its order's note."""

    entry: str
    t: int
    coin: str
    is_buy: bool
    px: int
    sz: int
    taker: bool
    venue_fee: int
    exec_fee: int
    oid: int
    cloid: str | None
    note: str | None
    quote_source: str | None
    quote_time: int | None
    quote_level: int | None
    quote_tid: int | None
    quote_px: int | None
    quote_sz: int | None


class OrderRow(msgspec.Struct, frozen=True, array_like=True):
    """One order request and its life: ``status`` "accepted" or "rejected" (then
    ``reject_reason``, oid 0); ``activated_t`` when it reached the venue, ``cancel_t`` when a
    cancel for it was accepted, ``closed_t``/``close_reason``/``filled`` when it left (None
    while still open at the end). ``tif``: 1 ALO, 2 GTC, 3 IOC."""

    entry: str
    oid: int
    cloid: str | None
    coin: str
    is_buy: bool
    limit_px: int
    sz: int
    tif: int
    reduce_only: bool
    received_t: int
    status: str
    reject_reason: str | None
    reserve: int
    activates_at: int | None
    activated_t: int | None
    cancel_t: int | None
    closed_t: int | None
    close_reason: str | None
    filled: int
    note: str | None


class EntryMark(msgspec.Struct, frozen=True, array_like=True):
    """One minute mark of one entry. ``equity``..``active`` are the engine's mark;
    ``exit_equity`` (None when not computed) as report.json's; ``cap_used``: the exposure the
    engine's position cap measures (open orders' reserves + |position notional| at mark,
    e6) and ``cap``: the limit in the same unit (equity x cap %); ``open_orders``: orders
    on the venue or waiting to activate. Cap and orders are read just after the input at
    which the mark fell due (the engine emits marks before applying that input)."""

    entry: str
    t: int
    equity: int
    exit_equity: int | None
    peak: int
    drawdown: int
    mdd: int
    cap_used: int
    cap: int
    open_orders: int
    active: bool


class FundingRow(msgspec.Struct, frozen=True, array_like=True):
    """One funding payment (paid; negative: received), e6."""

    entry: str
    t: int
    coin: str
    payment: int


class PerfFeeRow(msgspec.Struct, frozen=True, array_like=True):
    entry: str
    t: int
    fee: int
    equity: int


class CoinPnl(msgspec.Struct, frozen=True, array_like=True):
    """One entry's result on one coin, e6: ``pnl`` = what its fills paid and received +
    the position left valued at the engine's last mark - fees - funding (so an entry's
    coins' ``pnl`` add up to its equity change plus its performance fees)."""

    entry: str
    coin: str
    fills: int
    volume: int  # notional traded
    venue_fees: int
    exec_fees: int
    funding: int
    position: int  # e8, at the end
    pnl: int


class RoundTrip(msgspec.Struct, frozen=True, array_like=True):
    """One flat-to-flat round trip (module docstring); ``closed_t``/``avg_exit_px`` None
    when still open at the end. ``qty``: the size opened (e8); ``pnl`` net of fees."""

    entry: str
    coin: str
    side: str  # "long" or "short"
    opened_t: int
    closed_t: int | None
    qty: int
    avg_entry_px: int
    avg_exit_px: int | None
    fees: int
    pnl: int
    fills: int


class PriceRow(msgspec.Struct, frozen=True, array_like=True):
    """One coin in one minute ``t`` (its start): the book's mid and the engine's mark when
    the minute's mark fell due (None: no book yet), and the prints applied during the
    minute (high, low, last; None and 0 when there were none)."""

    coin: str
    t: int
    mid: int | None
    mark: int | None
    high: int | None
    low: int | None
    last: int | None
    prints: int


class RunData(msgspec.Struct):
    """One run, for drawing and analysis; see the module docstring."""

    season: str
    rules_sha256: str
    start: int
    end: int
    starting_equity: int
    position_cap_pct: int
    drawdown_limit_pct: int
    max_open_orders: int
    entries: list[EntryInfo]
    coins: list[CoinInfo]
    fills: list[FillRow]
    orders: list[OrderRow]
    marks: list[EntryMark]
    funding: list[FundingRow]
    perf_fees: list[PerfFeeRow]
    coin_pnl: list[CoinPnl]
    round_trips: list[RoundTrip]
    prices: list[PriceRow]
    verdict: dict[str, Any] | None = None  # report.json's "verdict"
    format: int = FORMAT

    def entry_names(self) -> list[str]:
        return [e.name for e in self.entries]


# ---- gathering ----------------------------------------------------------------------------


class _Order:
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


class Collector:
    """Gathers a :class:`RunData` from a pass; see the module docstring.

    ``observe(line, raw, events)`` after every applied input (``Backtest.observers``);
    ``engine``: the pass's engine, read at each minute mark; ``exit_of(entry)``: the
    exit-value equity at the mark just made (None: not computed)."""

    def __init__(
        self,
        engine: Engine,
        *,
        entries: Sequence[EntryInfo] | None = None,
        exit_of: Callable[[str], int | None] | None = None,
    ) -> None:
        self.engine = engine
        season = engine.season
        self.season = season
        self.infos: dict[str, EntryInfo] = {e.name: e for e in entries or ()}
        self.fixed = entries is not None  # else: every entry that registers
        self.exit_of = exit_of
        self.coin_of = {m.asset: m.coin for m in season.markets}
        self.fills: list[tuple[ev.Fill, str]] = []
        self.orders: dict[tuple[str, int], _Order] = {}
        self.order_rows: list[OrderRow | tuple[str, int]] = []  # rejected rows or keys
        self.marks: list[EntryMark] = []
        self.funding: list[FundingRow] = []
        self.perf: list[PerfFeeRow] = []
        self.minute = -1  # the minute whose prices were read last
        self.prices: list[PriceRow] = []
        # per coin: [minute, high, low, last, count] of the prints of the minute under way
        self.prints: dict[str, list[int]] = {}
        self.print_rows: dict[tuple[str, int], tuple[int, int, int, int]] = {}

    @classmethod
    def attach(cls, bt: Backtest) -> Collector:
        """A collector riding ``bt``'s pass (its entrants; exit value as the runner made
        it for its report, read from the entrant's last mark)."""
        by_name = bt.by_name

        def exit_of(entry: str) -> int | None:
            marks = by_name[entry].stats.marks
            return marks[-1].exit_equity if marks else None

        infos = [
            EntryInfo(e.name, e.path.name or None, dict(e.params) if e.path.name else None)
            for e in bt.entrants
        ]
        c = cls(bt.engine, entries=infos, exit_of=exit_of)
        bt.observers.append(c.observe)
        return c

    # ---- the hot path -----------------------------------------------------------------

    def observe(self, line: Line, raw: bytes, out: list[ev.AnyEvent]) -> None:
        hl = line.hl
        if hl is not None and type(hl) is TradesMsg:
            self._prints(line.t)
        if out:
            self._events(line, raw, out)

    def _prints(self, t: int) -> None:
        applied = self.engine.applied_prints
        if not applied:
            return
        minute = t - t % MINUTE_MS
        book = self.prints
        for p in applied:
            px = parse_e8(p.px)
            cur = book.get(p.coin)
            if cur is None or cur[0] != minute:
                if cur is not None:
                    self.print_rows[(p.coin, cur[0])] = (cur[1], cur[2], cur[3], cur[4])
                book[p.coin] = [minute, px, px, px, 1]
                continue
            if px > cur[1]:
                cur[1] = px
            elif px < cur[2]:
                cur[2] = px
            cur[3] = px
            cur[4] += 1

    def _events(self, line: Line, raw: bytes, out: list[ev.AnyEvent]) -> None:
        infos = self.infos
        for e in out:
            kind = type(e)
            if kind is ev.Registered:
                name = e.entry  # type: ignore[union-attr]
                if not self.fixed and name not in infos:
                    infos[name] = EntryInfo(name)
                continue
            entry = getattr(e, "entry", None)
            if entry is None or entry not in infos:
                continue
            if kind is ev.MinuteMark:
                self._mark(e)  # type: ignore[arg-type]
            elif kind is ev.Fill:
                self.fills.append((e, entry))  # type: ignore[arg-type]
                o = self.orders.get((entry, e.oid))  # type: ignore[union-attr]
                if o is not None:
                    o.filled += e.sz  # type: ignore[union-attr]
            elif kind is ev.Accepted:
                note = note_in(raw) if b'"note"' in raw else None
                key = (entry, e.oid)  # type: ignore[union-attr]
                self.orders[key] = _Order(e, note)  # type: ignore[arg-type]
                self.order_rows.append(key)
            elif kind is ev.Rejected:
                self._rejected(e, line)  # type: ignore[arg-type]
            elif kind is ev.Activated:
                o = self.orders.get((entry, e.oid))  # type: ignore[union-attr]
                if o is not None:
                    o.activated_t = e.t
            elif kind is ev.CancelPending:
                o = self.orders.get((entry, e.oid))  # type: ignore[union-attr]
                if o is not None:
                    o.cancel_t = e.t
            elif kind is ev.Closed:
                o = self.orders.get((entry, e.oid))  # type: ignore[union-attr]
                if o is not None:
                    o.closed_t = e.t
                    o.close_reason = str(e.reason)  # type: ignore[union-attr]
                    o.filled = e.filled  # type: ignore[union-attr]
            elif kind is ev.FundingPaid:
                coin = self.coin_of.get(e.asset, str(e.asset))  # type: ignore[union-attr]
                self.funding.append(FundingRow(entry, e.t, coin, e.payment))  # type: ignore[union-attr]
            elif kind is ev.PerformanceFee:
                self.perf.append(PerfFeeRow(entry, e.t, e.fee, e.equity))  # type: ignore[union-attr]

    def _rejected(self, e: ev.Rejected, line: Line) -> None:
        if e.request != "order":
            return  # a cancel naming no open order: not an order's life
        o = line.arena
        if not isinstance(o, Order):
            return
        self.order_rows.append(
            OrderRow(
                e.entry,
                0,
                format_cloid(e.cloid),
                self.coin_of.get(o.asset, str(o.asset)),
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
        )

    def _mark(self, m: ev.MinuteMark) -> None:
        eng = self.engine
        if m.t != self.minute:
            self.minute = m.t
            self._prices(m.t)
        acct = eng.accounts[m.entry]
        exit_eq = self.exit_of(m.entry) if self.exit_of is not None else None
        self.marks.append(
            EntryMark(
                m.entry,
                m.t,
                m.equity,
                exit_eq,
                m.peak,
                m.drawdown,
                m.mdd,
                acct.exposure(eng.assets),
                tdiv(m.equity * eng.rules.position_cap_pct, 100),
                len(acct.orders),
                m.active,
            )
        )

    def _prices(self, t: int) -> None:
        """The minute before mark ``t``: the book's mid and the mark now, its prints."""
        minute = t - MINUTE_MS
        for a in self.engine.by_coin.values():
            book = a.book
            mid = book.mid() if book is not None and book.two_sided else None
            hl = self.print_rows.pop((a.coin, minute), None)
            cur = self.prints.get(a.coin)
            if hl is None and cur is not None and cur[0] == minute:
                hl = (cur[1], cur[2], cur[3], cur[4])
                del self.prints[a.coin]
            if hl is None:
                self.prices.append(PriceRow(a.coin, minute, mid, a.mark, None, None, None, 0))
            else:
                self.prices.append(PriceRow(a.coin, minute, mid, a.mark, *hl))

    # ---- the result -------------------------------------------------------------------

    def data(self, verdict: dict[str, Any] | None = None) -> RunData:
        """The run as gathered so far (after the pass: all of it)."""
        season = self.season
        rules = season.rules
        fills = [self._fill_row(f, entry) for f, entry in self.fills]
        orders: list[OrderRow] = []
        for row in self.order_rows:
            orders.append(row if isinstance(row, OrderRow) else self._order_row(row))
        names = list(self.infos)
        return RunData(
            season=season.id,
            rules_sha256=season.rules_sha256,
            start=season.start,
            end=season.end,
            starting_equity=rules.starting_equity,
            position_cap_pct=rules.position_cap_pct,
            drawdown_limit_pct=rules.drawdown_limit_pct,
            max_open_orders=rules.max_open_orders,
            entries=list(self.infos.values()),
            coins=[CoinInfo(m.coin, m.asset, m.szDecimals) for m in season.markets],
            fills=fills,
            orders=orders,
            marks=list(self.marks),
            funding=list(self.funding),
            perf_fees=list(self.perf),
            coin_pnl=self._coin_pnl(names, fills),
            round_trips=self._round_trips(names, fills),
            prices=list(self.prices),
            verdict=verdict,
        )

    def _fill_row(self, f: ev.Fill, entry: str) -> FillRow:
        o = self.orders.get((entry, f.oid))
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
            self.coin_of.get(f.asset, str(f.asset)),
            f.is_buy,
            f.px,
            f.sz,
            f.taker,
            f.venue_fee,
            f.exec_fee,
            f.oid,
            format_cloid(f.cloid),
            None if o is None else o.note,
            *quote,
        )

    def _order_row(self, key: tuple[str, int]) -> OrderRow:
        o = self.orders[key]
        a = o.first
        return OrderRow(
            a.entry,
            a.oid,
            format_cloid(a.cloid),
            self.coin_of.get(a.asset, str(a.asset)),
            a.is_buy,
            a.limit_px,
            a.sz,
            a.tif,
            a.reduce_only,
            a.t,
            "accepted",
            None,
            a.reserve,
            o.activates_at,
            o.activated_t,
            o.cancel_t,
            o.closed_t,
            o.close_reason,
            o.filled,
            o.note,
        )

    def _mark_px(self, coin: str) -> int | None:
        a = self.engine.by_coin.get(coin)
        return None if a is None else a.mark

    def _coin_pnl(self, names: list[str], fills: list[FillRow]) -> list[CoinPnl]:
        coins = [m.coin for m in self.season.markets]
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
        for fr in self.funding:
            acc.setdefault((fr.entry, fr.coin), [0, 0, 0, 0, 0, 0, 0])[4] += fr.payment
        rows = []
        for (entry, coin), a in acc.items():
            mark = self._mark_px(coin)
            value = tdiv(a[5] * mark, E10) if a[5] and mark is not None else 0
            pnl = a[6] + value - a[2] - a[3] - a[4]
            rows.append(CoinPnl(entry, coin, a[0], a[1], a[2], a[3], a[4], a[5], pnl))
        return rows

    def _round_trips(self, names: list[str], fills: list[FillRow]) -> list[RoundTrip]:
        pos: dict[tuple[str, str], int] = {}
        open_: dict[tuple[str, str], _Trip] = {}
        done: list[RoundTrip] = []

        def close(key: tuple[str, str], trip: _Trip, side: int, t: int | None) -> None:
            if t is None:  # open at the end: valued at the last mark
                mark = self._mark_px(key[1])
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


# ---- the file -----------------------------------------------------------------------------

_ENC = msgspec.msgpack.Encoder()
_DEC = msgspec.msgpack.Decoder(RunData)


def save(data: RunData, run_dir: Path) -> Path:
    """``rundata.msgpack`` in ``run_dir``; its path."""
    path = run_dir / RUNDATA_FILE
    path.write_bytes(_ENC.encode(data))
    return path


def load(run_dir: Path, *, data_dir: str | None = None) -> RunData:
    """The run's data: ``rundata.msgpack``, else re-derived from the run log (then saved
    when the directory is writable). ``data_dir``: where a thin run log's sources may be
    (as ``arena replay --data``)."""
    path = run_dir / RUNDATA_FILE
    if path.is_file():
        try:
            data = _DEC.decode(path.read_bytes())
        except (msgspec.DecodeError, msgspec.ValidationError):
            data = None  # an older or torn file: derived again below
        if data is not None and data.format == FORMAT:
            return data
    data = derive(run_dir, data_dir=data_dir)
    with contextlib.suppress(OSError):  # a read-only run directory: derived again next time
        save(data, run_dir)
    return data


def _report(run_dir: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def derive(
    run_dir: Path,
    *,
    data_dir: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunData:
    """Replay ``run_dir``'s run log with a :class:`Collector` (exit value from the books as
    the runner computes it); entries' files and parameters and the verdict from its
    report.json when there is one."""
    report = _report(run_dir)
    named_log = report.get("run_log") if report is not None else None
    log = run_dir / (named_log if isinstance(named_log, str) and named_log else RUN_LOG)
    if not log.is_file():
        raise RunDataError(f"{run_dir}: not a run directory (no run log {log.name})")
    season = resolve_season([str(log)], None)
    by_name: dict[str, dict[str, Any]] = {}
    if report is not None:
        by_name = {str(e.get("entry")): e for e in report.get("entries", []) if isinstance(e, dict)}
    return replay_collect(
        [str(log)],
        season,
        named=lambda n: EntryInfo(
            n, by_name.get(n, {}).get("strategy"), by_name.get(n, {}).get("params")
        ),
        verdict=None if report is None else report.get("verdict"),
        data_dir=data_dir,
        progress=progress,
    )


def replay_collect(
    paths: Sequence[str],
    season: Season,
    *,
    named: Callable[[str], EntryInfo] = EntryInfo,
    verdict: dict[str, Any] | None = None,
    data_dir: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunData:
    """A :class:`RunData` of logs replayed: every entry that registers, in the order they
    registered (a backtest's strategy first), described by ``named``."""
    eng = Engine(season)
    eng.record_prints = True
    markets = {m.coin: MarketView(eng, m.coin, m.asset, m.szDecimals) for m in season.markets}
    c = Collector(eng, exit_of=lambda entry: exit_value(eng, entry, markets))
    reader = open_logs(paths, [m.coin for m in season.markets], data_dir)
    for n, line in enumerate(reader, 1):
        try:
            out = eng.apply(line)
        except MalformedInput as exc:
            raise reader.error(str(exc)) from None
        c.observe(line, reader.raw, out)
        if progress is not None and not n & 0x3FFF:
            progress(n, line.t)
    data = c.data(verdict)
    data.entries = [named(e.name) for e in data.entries]
    return data
