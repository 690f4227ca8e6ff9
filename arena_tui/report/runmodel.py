"""The run data model: everything a run can be drawn or analysed from, as plain rows.

Why this module exists: report.html, ``arena export --parquet`` and the DataFrame loader
all show the same run (its fills, every order's life, the minute marks with cap use and
open orders, funding and fees, per-coin PnL, round trips and prices); these rows are what
they share. ``report.collector`` fills them from a pass, ``report.runrows`` derives the
per-coin PnL and the round trips, ``report.rundata`` keeps them in a file. Integers
throughout (money e6, prices and sizes e8, ratios e8, times ms): presentation converts.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from arena_tui.util.introws import IntRows, opt, unopt

FORMAT = 1  # bumped when a field changes meaning; load re-derives an older file


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


class EntryMarks(Sequence[EntryMark]):
    """The marks of a run in the order they came, kept flat (``util.introws``, 80 bytes a
    mark, not a struct): a reader sees a sequence of :class:`EntryMark`; ``by_entry``
    gives each entry's own, in order, without copying them."""

    __slots__ = ("_at", "_entry", "_idx", "_rows")

    def __init__(self, rows: Sequence[EntryMark] = ()) -> None:
        self._idx: dict[str, int] = {}
        self._rows: list[IntRows[EntryMark]] = []
        self._entry: array[int] = array("i")  # each mark's entry, as an index of _rows
        self._at: array[int] = array("q")  # each mark's row in its entry's rows
        for m in rows:
            self.append(m)

    def append(self, m: EntryMark) -> None:
        self.add(
            m.entry,
            (m.t, m.equity, opt(m.exit_equity), m.peak, m.drawdown, m.mdd, m.cap_used, m.cap,
             m.open_orders, int(m.active)),
        )  # fmt: skip

    def add(self, entry: str, fields: Sequence[int]) -> None:
        """One mark of ``entry``: its fields after the entry, in order (``opt`` for a None,
        0 or 1 for ``active``)."""
        k = self._idx.get(entry)
        if k is None:
            k = self._idx[entry] = len(self._rows)
            self._rows.append(IntRows(10, _entry_mark(entry)))
        rows = self._rows[k]
        self._entry.append(k)
        self._at.append(len(rows))
        rows.add(fields)

    def by_entry(self) -> dict[str, Sequence[EntryMark]]:
        """Each entry's marks in order, the entries in the order of their first mark."""
        return {name: self._rows[k] for name, k in self._idx.items()}

    def __len__(self) -> int:
        return len(self._entry)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self._rows[self._entry[i]][self._at[i]]

    def __iter__(self) -> Iterator[EntryMark]:
        its = [iter(rows) for rows in self._rows]
        for k in self._entry:
            yield next(its[k])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


def _entry_mark(entry: str) -> Any:
    def make(f: Sequence[int]) -> EntryMark:
        return EntryMark(entry, f[0], f[1], unopt(f[2]), f[3], f[4], f[5], f[6], f[7], f[8],
                         bool(f[9]))  # fmt: skip

    return make


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
    fills: Sequence[FillRow]  # lists when read from a file; made as read when gathered
    orders: Sequence[OrderRow]
    marks: Sequence[EntryMark]  # a list when read from a file; EntryMarks when gathered
    funding: list[FundingRow]
    perf_fees: list[PerfFeeRow]
    coin_pnl: list[CoinPnl]
    round_trips: list[RoundTrip]
    prices: list[PriceRow]
    verdict: dict[str, Any] | None = None  # report.json's "verdict"
    format: int = FORMAT

    def entry_names(self) -> list[str]:
        return [e.name for e in self.entries]
