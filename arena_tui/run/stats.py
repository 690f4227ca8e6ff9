"""What a backtest remembers of each entry for its report, gathered from engine events.

Why this module exists: the report must say what the engine did, not what a second
calculation thinks it did, so every figure here is a sum or a count of the engine's own
events (fills and their fees, funding, performance fees, rejections and closes by reason,
minute marks). Exit-value equity is the one figure the engine does not make; it is
computed by ``exit_equity`` from the engine's positions and the latest books.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arena_tui.run.fillrows import EntryFills
from arena_tui.util.introws import IntRows, opt, unopt
from engine import events as ev
from engine.units import DAY_MS, notional, tdiv

if TYPE_CHECKING:
    from arena_tui.run.market import MarketView
    from engine import Engine


@dataclass(frozen=True)
class MarkRow:
    """One minute mark of one entry (money e6, ratios e8)."""

    t: int
    equity: int
    peak: int
    drawdown: int
    mdd: int
    active: bool
    exit_equity: int | None


def _mark_row(f: Sequence[int]) -> MarkRow:
    return MarkRow(f[0], f[1], f[2], f[3], f[4], bool(f[5]), unopt(f[6]))


class MarkRows(IntRows[MarkRow]):
    """An entry's minute marks, kept flat (``util.introws``): 56 bytes a mark, not an
    object; read back as :class:`MarkRow`."""

    __slots__ = ()

    def __init__(self, rows: Iterable[MarkRow] = ()) -> None:
        super().__init__(7, _mark_row)
        for row in rows:
            self.append(row)

    def append(self, m: MarkRow) -> None:
        self.add((m.t, m.equity, m.peak, m.drawdown, m.mdd, int(m.active), opt(m.exit_equity)))

    def last_exit(self) -> int | None:
        """The last mark's exit-value equity (None: no mark, or not computed)."""
        return self[-1].exit_equity if self else None


@dataclass
class EntryStats:
    # a list, or (a backtest's entrant) the entry's fills in the run's flat store
    fills: list[ev.Fill] | EntryFills = field(default_factory=list)
    taker_fills: int = 0
    maker_fills: int = 0
    venue_fees: int = 0
    exec_fees: int = 0
    perf_fees: int = 0
    funding: int = 0  # paid (negative: received)
    orders_accepted: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    closes: Counter[str] = field(default_factory=Counter)
    marks: MarkRows = field(default_factory=MarkRows)
    paused_at: int | None = None
    # False: the marks are counted, not kept (a reader that needs only how many, like the
    # twins' pass: a hundred entries' every minute would grow with the days)
    keep_marks: bool = True
    mark_count: int = 0
    active_marks: int = 0

    def event(self, e: ev.AnyEvent) -> None:
        # by exact type (the engine's events have no subclasses), the commonest first; an
        # activation or a pending cancel counts nothing
        if type(e) is ev.Accepted:
            self.orders_accepted += 1
        elif type(e) is ev.Closed:
            self.closes[str(e.reason)] += 1
        elif type(e) is ev.Fill:
            if isinstance(self.fills, list):  # else the run's store has it (run.ledger)
                self.fills.append(e)
            if e.taker:
                self.taker_fills += 1
            else:
                self.maker_fills += 1
            self.venue_fees += e.venue_fee
            self.exec_fees += e.exec_fee
        elif type(e) is ev.Rejected:
            self.rejections[str(e.reason)] += 1
        elif type(e) is ev.FundingPaid:
            self.funding += e.payment
        elif type(e) is ev.PerformanceFee:
            self.perf_fees += e.fee
        elif type(e) is ev.Paused:
            self.paused_at = e.t

    def mark(self, m: ev.MinuteMark, exit_equity: int | None) -> None:
        self.mark_count += 1
        if m.active:
            self.active_marks += 1
        if self.keep_marks:
            self.marks.add(
                (m.t, m.equity, m.peak, m.drawdown, m.mdd, int(m.active), opt(exit_equity))
            )

    @property
    def fill_days(self) -> int:
        return len({tdiv(f.t, DAY_MS) for f in self.fills})


def exit_value(engine: Engine, entry: str, markets: dict[str, MarketView]) -> int:
    """Equity if every position were closed now against the latest book (seed 004).

    Each position walks the opposite side of its coin's latest book at full displayed
    size, paying the taker and execution fees on each level. What the displayed depth
    cannot absorb is priced at the last (worst) displayed level; with no book, or an empty
    opposite side, the position counts at the engine's mark.
    """
    rules = engine.rules
    acct = engine.account(entry)
    if acct is None:
        raise KeyError(entry)  # not registered
    total = acct.cash
    for asset, pos in acct.positions.items():
        a = engine.asset_state(asset)
        assert a is not None  # a position is only ever in a season market
        market = markets.get(a.coin)
        book = market.book if market is not None else None
        side = [] if book is None else (book.bids if pos > 0 else book.asks)
        levels = [(px, sz) for px, sz, _ in side]
        left = abs(pos)
        if levels:
            levels[-1] = (levels[-1][0], max(levels[-1][1], left))  # the rest at the worst
        else:
            levels = [(a.mark or 0, left)]
        for px, sz in levels:
            if left <= 0:
                break
            q = min(left, sz)
            n = notional(px, q)
            fees = tdiv(n * rules.taker_fee_dbps, 100_000) + tdiv(
                n * rules.execution_fee_dbps, 100_000
            )
            total += (n if pos > 0 else -n) - fees
            left -= q
    return total
