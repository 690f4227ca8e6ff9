"""Gathering a run's data as it goes: the collector that rides a pass.

Why this module exists: report.html, ``arena export --parquet`` and the DataFrame loader
all show the same run (``report.runmodel``); if each gathered it its own way they could
disagree. A :class:`Collector` rides along the backtest's own pass (a subscriber of its
stream, ``run.stream``: after every applied input, with its line and events) and reads
the engine's state at each minute mark, so nothing is run twice; ``report.rundata``
replays a run log with the same collector when the run's file is missing.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from typing import Any

from arena_tui.logs.notes import note_in
from arena_tui.report.orderlives import OrderLives
from arena_tui.report.runmodel import (
    CoinInfo,
    EntryInfo,
    EntryMarks,
    FillRow,
    FundingRow,
    OrderRow,
    PerfFeeRow,
    PriceRow,
    RunData,
)
from arena_tui.report.runrows import (
    coin_pnl,
    fill_row,
    rejected_row,
    round_trips,
)
from arena_tui.run.fillrows import FillRows
from arena_tui.run.stream import Run
from arena_tui.util.introws import Mapped, opt
from engine import Engine, Line
from engine import events as ev
from engine.inputs import Order
from engine.inputs import Trade as RawTrade
from engine.inputs import Trades as TradesMsg
from engine.units import MINUTE_MS, parse_e8, tdiv


class Collector:
    """Gathers a :class:`RunData` from a pass; see the module docstring.

    ``observe(line, raw, events)`` after every applied input (a subscriber, ``run.stream``);
    ``engine``: the pass's engine, read at each minute mark; ``exit_of(entry)``: the
    exit-value equity at the mark just made (None: not computed)."""

    market_bytes = False  # (an order's note is read from its arena line's bytes)

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        entries: Sequence[EntryInfo] | None = None,
        exit_of: Callable[[str], int | None] | None = None,
    ) -> None:
        """``engine`` None: a collector for a run to be built, which binds it (``bind``)."""
        self.fills = FillRows()  # flat (run.fillrows)
        self.lives = OrderLives()  # every accepted order's life, flat
        self.orders: dict[tuple[str, int], int] = {}  # (entry, oid) -> its life's row
        self.rejected: list[OrderRow] = []
        # the order rows in the order they came: a life's row, or ~ a rejected row's number
        self.order_rows: array[int] = array("q")
        self.marks = EntryMarks()  # flat: the rows are made when read
        self.funding: list[FundingRow] = []
        self.perf: list[PerfFeeRow] = []
        self.minute = -1  # the minute whose prices were read last
        self.prices: list[PriceRow] = []
        # per coin: [minute, high, low, last, count] of the prints of the minute under way
        self.prints: dict[str, list[int]] = {}
        self.print_rows: dict[tuple[str, int], tuple[int, int, int, int]] = {}
        if engine is not None:
            self._start(engine, entries, exit_of)

    def _start(
        self,
        engine: Engine,
        entries: Sequence[EntryInfo] | None,
        exit_of: Callable[[str], int | None] | None,
    ) -> None:
        self.engine = engine
        season = engine.season
        self.season = season
        self.infos: dict[str, EntryInfo] = {e.name: e for e in entries or ()}
        self.fixed = entries is not None  # else: every entry that registers
        self.exit_of = exit_of
        self.coin_of = {m.asset: m.coin for m in season.markets}

    def bind(self, bt: Run) -> None:
        """Ride ``bt``'s pass (a subscriber, ``run.stream``): its entrants; exit value as
        the runner made it for its report, read from the entrant's last mark."""
        by_name = bt.by_name

        def exit_of(entry: str) -> int | None:
            return by_name[entry].stats.marks.last_exit()

        infos = [
            EntryInfo(e.name, e.path.name or None, dict(e.params) if e.path.name else None)
            for e in bt.entrants
        ]
        self._start(bt.engine, infos, exit_of)

    # ---- the hot path -----------------------------------------------------------------

    def observe(self, line: Line, raw: bytes, out: list[ev.AnyEvent]) -> None:
        hl = line.hl
        if hl is not None and type(hl) is TradesMsg:
            self.prints_applied(self.engine.applied_prints, line.t)
        if out:
            self._events(line, raw, out)

    def prints_applied(self, applied: list[RawTrade], t: int) -> None:
        """The prints a trades message applied at ``t``: each coin's high, low, last and
        count for the minute (``run.stream.TakesPrints``, and from ``observe``)."""
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
                self.fills.append(e)  # type: ignore[arg-type]
                row = self.orders.get((entry, e.oid))  # type: ignore[union-attr]
                if row is not None:
                    self.lives.filled(row, e.sz)  # type: ignore[union-attr]
            elif kind is ev.Accepted:
                note = note_in(raw) if b'"note"' in raw else None
                row = self.lives.accepted(e, note)  # type: ignore[arg-type]
                self.orders[(entry, e.oid)] = row  # type: ignore[union-attr]
                self.order_rows.append(row)
            elif kind is ev.Rejected:
                self._rejected(e, line)  # type: ignore[arg-type]
            elif kind is ev.Activated:
                row = self.orders.get((entry, e.oid))  # type: ignore[union-attr]
                if row is not None:
                    self.lives.activated(row, e.t)
            elif kind is ev.CancelPending:
                row = self.orders.get((entry, e.oid))  # type: ignore[union-attr]
                if row is not None:
                    self.lives.cancel_pending(row, e.t)
            elif kind is ev.Closed:
                row = self.orders.get((entry, e.oid))  # type: ignore[union-attr]
                if row is not None:
                    self.lives.closed(row, e.t, str(e.reason), e.filled)  # type: ignore[union-attr]
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
        self.order_rows.append(~len(self.rejected))
        self.rejected.append(rejected_row(e, o, self.coin_of))

    def _mark(self, m: ev.MinuteMark) -> None:
        eng = self.engine
        if m.t != self.minute:
            self.minute = m.t
            self._prices(m.t)
        acct = eng.account(m.entry)
        assert acct is not None  # it made a mark: it is registered
        exit_eq = self.exit_of(m.entry) if self.exit_of is not None else None
        self.marks.add(
            m.entry,
            (
                m.t,
                m.equity,
                opt(exit_eq),
                m.peak,
                m.drawdown,
                m.mdd,
                eng.exposure(m.entry),
                tdiv(m.equity * eng.rules.position_cap_pct, 100),
                len(acct.orders),
                int(m.active),
            ),
        )

    def _prices(self, t: int) -> None:
        """The minute before mark ``t``: the book's mid and the mark now, its prints."""
        minute = t - MINUTE_MS
        for a in self.engine.coin_states():
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
        coin_of, by_key, lives, rejected = self.coin_of, self.orders, self.lives, self.rejected

        def note_of(f: ev.Fill) -> str | None:
            row = by_key.get((f.entry, f.oid))
            return None if row is None else lives.note(row)

        # made from the flat stores as they are read (rundata.save, report.html): never all
        fills: Sequence[FillRow] = Mapped(
            self.fills, lambda f: fill_row(f, f.entry, note_of(f), coin_of)
        )
        orders: Sequence[OrderRow] = Mapped(
            self.order_rows,
            lambda k: rejected[~k] if k < 0 else lives.order_row(k, coin_of),
        )
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
            marks=self.marks,  # flat, as gathered (rundata.save writes it row by row)
            funding=list(self.funding),
            perf_fees=list(self.perf),
            coin_pnl=coin_pnl(season, names, fills, self.funding, self._mark_px),
            round_trips=round_trips(names, fills, self._mark_px),
            prices=list(self.prices),
            verdict=verdict,
        )

    def _mark_px(self, coin: str) -> int | None:
        a = self.engine.coin_state(coin)
        return None if a is None else a.mark
