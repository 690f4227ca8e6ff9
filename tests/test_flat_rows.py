"""What a run keeps of its marks, fills and orders is kept flat and read back unchanged.

A backtest's memory must not grow with its days by an object per minute mark, fill or order
(issue 25): the stores (``util.introws``, ``run.fillrows``, ``report.orderlives``,
``report.runmodel.EntryMarks``) keep integers and read back the same rows, and
``rundata.save`` writes the same bytes as msgspec would from lists.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_tui.report import rundata
from arena_tui.report.orderlives import OrderLives
from arena_tui.report.runmodel import EntryMark, EntryMarks, OrderRow, RunData
from arena_tui.run.fillrows import FillRows
from arena_tui.run.stats import EntryStats, MarkRow, MarkRows
from arena_tui.util.introws import IntRows
from engine import events as ev
from engine import format_cloid

BIG = st.integers(-(2**70), 2**70)  # past 64 bits too: the store turns exact Python ints
MONEY = st.integers(-(10**15), 10**15)
NAMES = st.sampled_from(["momentum", "maker", "control_random", "x"])


def quotes() -> st.SearchStrategy[ev.Quote | None]:
    book = st.builds(
        ev.BookQuote,
        time=MONEY,
        level=st.integers(0, 20),
        px=MONEY,
        sz=MONEY,
        n=st.integers(0, 10**6),
    )
    prints = st.builds(ev.PrintQuote, tid=BIG, time=MONEY, px=MONEY, sz=MONEY)
    return st.none() | book | prints


FILLS = st.builds(
    ev.Fill,
    t=MONEY,
    entry=NAMES,
    oid=st.integers(0, 2**63 - 1),
    cloid=st.integers(0, 2**128 - 1),
    asset=st.integers(0, 300),
    is_buy=st.booleans(),
    px=BIG,
    sz=MONEY,
    taker=st.booleans(),
    venue_fee=MONEY,
    exec_fee=MONEY,
    quote=quotes(),
)

MARKS = st.builds(
    EntryMark,
    entry=NAMES,
    t=MONEY,
    equity=BIG,
    exit_equity=st.none() | MONEY,
    peak=MONEY,
    drawdown=MONEY,
    mdd=MONEY,
    cap_used=MONEY,
    cap=MONEY,
    open_orders=st.integers(0, 1000),
    active=st.booleans(),
)


@given(st.lists(FILLS, max_size=40))
def test_fills_read_back_as_the_same_events_in_order(fills: list[ev.Fill]) -> None:
    store = FillRows()
    for f in fills:
        store.append(f)
    assert list(store) == fills and len(store) == len(fills)
    if fills:
        assert store[-1] == fills[-1] and store[0] == fills[0]
    for name in {f.entry for f in fills}:
        assert list(store.of(name)) == [f for f in fills if f.entry == name]


@given(st.lists(MARKS, max_size=40))
def test_marks_read_back_in_order_and_by_entry(marks: list[EntryMark]) -> None:
    flat = EntryMarks(marks)
    assert flat == marks and list(flat) == marks and flat[:3] == marks[:3]
    by_entry: dict[str, list[EntryMark]] = {}
    for m in marks:
        by_entry.setdefault(m.entry, []).append(m)
    assert {k: list(v) for k, v in flat.by_entry().items()} == by_entry
    rows = [
        MarkRow(m.t, m.equity, m.peak, m.drawdown, m.mdd, m.active, m.exit_equity) for m in marks
    ]
    kept = MarkRows(rows)
    assert kept == rows and (kept.last_exit() == (rows[-1].exit_equity if rows else None))


@given(
    st.lists(
        st.tuples(
            st.builds(
                ev.Accepted,
                t=MONEY,
                entry=NAMES,
                oid=st.integers(0, 2**40),
                cloid=st.integers(0, 2**128 - 1),
                asset=st.integers(0, 300),
                is_buy=st.booleans(),
                limit_px=BIG,
                sz=MONEY,
                reduce_only=st.booleans(),
                tif=st.integers(1, 3),
                reserve=MONEY,
                activates_at=MONEY,
            ),
            st.none() | st.text(max_size=8),
            st.lists(st.tuples(st.sampled_from("facx"), MONEY), max_size=4),
        ),
        max_size=20,
    )
)
def test_an_orders_life_reads_back_as_it_was_lived(
    orders: list[tuple[ev.Accepted, str | None, list[tuple[str, int]]]],
) -> None:
    lives = OrderLives()
    for a, note, steps in orders:
        row = lives.accepted(a, note)
        want: dict[str, int | str | None] = {
            "activated": None,
            "cancel": None,
            "closed": None,
            "reason": None,
            "filled": 0,
        }
        for what, value in steps:
            if what == "f":
                lives.filled(row, value)
                want["filled"] = int(want["filled"] or 0) + value
            elif what == "a":
                lives.activated(row, value)
                want["activated"] = value
            elif what == "c":
                lives.cancel_pending(row, value)
                want["cancel"] = value
            else:
                lives.closed(row, value, "Filled", 7)
                want |= {"closed": value, "reason": "Filled", "filled": 7}
        o = lives.life(row)
        assert (o.first, o.note, o.activates_at) == (a, note, a.activates_at)
        got = {
            "activated": o.activated_t,
            "cancel": o.cancel_t,
            "closed": o.closed_t,
            "reason": o.close_reason,
            "filled": o.filled,
        }
        assert got == want
        # the row the run data keeps of it, read straight from the integers
        coin_of = {0: "BTC", 5: "SOL"}
        assert lives.order_row(row, coin_of) == OrderRow(
            a.entry,
            a.oid,
            format_cloid(a.cloid),
            coin_of.get(a.asset, str(a.asset)),
            a.is_buy,
            a.limit_px,
            a.sz,
            a.tif,
            a.reduce_only,
            a.t,
            "accepted",
            None,
            a.reserve,
            a.activates_at,
            o.activated_t,
            o.cancel_t,
            o.closed_t,
            o.close_reason,
            o.filled,
            note,
        )


def test_a_field_past_64_bits_keeps_every_row_exact() -> None:
    rows: IntRows[tuple[int, ...]] = IntRows(2, tuple)
    rows.add((1, 2))
    rows.add((3, 2**80))  # the store becomes Python ints; the row before is kept whole
    rows.set(0, 1, -(2**90))
    assert list(rows) == [(1, -(2**90)), (3, 2**80)]


def run_data(marks: list[EntryMark] | EntryMarks, n: int) -> RunData:
    return RunData(
        season="s0",
        rules_sha256="ab" * 32,
        start=0,
        end=n,
        starting_equity=10**11,
        position_cap_pct=500,
        drawdown_limit_pct=20,
        max_open_orders=10,
        entries=[],
        coins=[],
        fills=[],
        orders=[],
        marks=marks,
        funding=[],
        perf_fees=[],
        coin_pnl=[],
        round_trips=[],
        prices=[],
    )


@pytest.mark.parametrize("n", [0, 5, 15, 16, 300, 70_000])
def test_the_run_data_file_is_the_same_bytes_written_row_by_row(
    n: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rundata, "_CHUNK", 7)  # chunks that split the rows unevenly
    marks = [
        EntryMark(
            f"e{i % 3}",
            i * 60_000,
            10**11 + i,
            None if i % 5 else i,
            10**11 + i,
            i,
            i,
            i * 3,
            5 * 10**11,
            i % 4,
            bool(i % 2),
        )
        for i in range(n)
    ]
    want = msgspec.msgpack.encode(run_data(marks, n))
    flat = run_data(EntryMarks(marks), n)
    path = rundata.save(flat, tmp_path)
    assert path.read_bytes() == want
    assert rundata.load(tmp_path).marks == marks


def held_per_row(fill: ev.Fill, mark: ev.MinuteMark, accepted: ev.Accepted, n: int) -> float:
    """Bytes kept per (fill, mark, order) after ``n`` of each went into the stores a run
    keeps: the ledger's fills, an entry's marks, the collector's marks and orders' lives."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fills, lives, marks, stats = FillRows(), OrderLives(), EntryMarks(), EntryStats()
        for i in range(n):
            fills.append(fill)
            lives.accepted(accepted, None)
            stats.mark(mark, 10**11 + i)
            marks.add(mark.entry, (mark.t + i, 10**11 + i, 10**11, 10**11, 5, 6, 7, 8, 9, 1))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(fills) == len(lives) == len(marks) == len(stats.marks) == n
    return held / n


def test_what_a_run_keeps_is_integers_not_an_object_a_row() -> None:
    """As objects (a struct or a dataclass and its large ints) a fill, a mark kept twice and
    an order took about 1.5 KB; flat they take 8 bytes a field (about 460 bytes): a store
    that went back to an object a row would be seen here, whatever the machine's speed."""
    fill = ev.Fill(
        t=10**12,
        entry="momentum",
        oid=10**6,
        cloid=2**100,
        asset=0,
        is_buy=True,
        px=9 * 10**12,
        sz=10**6,
        taker=True,
        venue_fee=123_456,
        exec_fee=654_321,
        quote=ev.BookQuote(time=10**12, level=0, px=9 * 10**12, sz=10**9, n=3),
    )
    mark = ev.MinuteMark(
        t=10**12,
        entry="momentum",
        equity=10**11,
        peak=10**11,
        drawdown=10**6,
        mdd=10**6,
        active=True,
    )
    accepted = ev.Accepted(
        t=10**12,
        entry="momentum",
        oid=10**6,
        cloid=0,
        asset=0,
        is_buy=True,
        limit_px=9 * 10**12,
        sz=10**6,
        reduce_only=False,
        tif=2,
        reserve=10**10,
        activates_at=10**12,
    )
    per_row = held_per_row(fill, mark, accepted, 20_000)
    assert per_row < 700, f"{per_row:.0f} bytes kept a fill, mark and order"
