"""The random twins: trips cut from fills, re-timed without overlap, traded as the strategy
traded them.

The trips are checked on hand-made fills; the placements as properties (every trip once,
in the window, never two on a coin at once, the same seed the same twins); the pass on the
hand-built market of ``tests.market``, where BTC climbs $1 a second, so a long trip earns
its length whenever it is held: a twin that trades the strategy's trips faithfully must
then score what the strategy scores, give or take the taker's slippage and fees.
"""

from __future__ import annotations

import itertools
import os
import random
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_tui.logs.daykeep import keep_day
from arena_tui.report import skill
from arena_tui.report.charts import pct_trunc
from arena_tui.report.skill import (
    MIN_FREEDOM_E8,
    Judging,
    Twins,
    Untimed,
    matched,
    measure_twins,
    planned_twins,
    skill_doc,
)
from arena_tui.report.verdict_text import skill_text
from arena_tui.run import sources
from arena_tui.run import twins as twins_module
from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.daysource import DaySource
from arena_tui.run.desk import Desk
from arena_tui.run.market import ALO, IOC, Book
from arena_tui.run.parts import Entrant
from arena_tui.run.replay import standing_row
from arena_tui.run.trips import SLACK_MS
from arena_tui.run.twins import (
    LEG_BUDGET,
    MAX_WORKERS,
    MIN_TWINS,
    SPLIT_MIN_BYTES,
    SPLIT_MIN_LEGS,
    SPLIT_MIN_TWINS,
    WORKERS_ENV,
    Leg,
    Trip,
    _groups,
    _rank,
    placements,
    run_twins,
    timing_freedom,
    trips_of,
    twin_count,
    twin_names,
    twin_workers,
)
from arena_tui.season.file import resolve_season
from arena_tui.strategy import Context, Strategy
from arena_tui.tui.judge import judging_line
from arena_tui.util.errors import ArenaError
from engine import Standing, ranking
from engine import events as ev
from engine.units import E8
from tests import build
from tests.market import fmt, market_rows, write_log

SEC, MIN = 1000, 60_000


def fill(t: int, oid: int, buy: bool, sz: int, taker: bool = True, asset: int = 0) -> ev.Fill:
    return ev.Fill(
        t=t, entry="s", oid=oid, cloid=0, asset=asset, is_buy=buy, px=100 * E8, sz=sz,
        taker=taker, venue_fee=0, exec_fee=0, quote=None,
    )  # fmt: skip


COIN = {0: "BTC", 5: "SOL"}.__getitem__


def test_trips_by_hand() -> None:
    fills = [
        fill(10 * SEC, 1, True, 1),  # an IOC walking two levels: one leg
        fill(10 * SEC, 1, True, 2),
        fill(40 * SEC, 2, False, 1, taker=False),  # a maker's partial exit
        fill(50 * SEC, 3, False, 4),  # through zero: closes, then opens a short of 2
        fill(70 * SEC, 4, True, 2, taker=False),  # closes the short
        fill(90 * SEC, 5, True, 5, asset=5),  # SOL, open at the end
    ]
    long, short, sol = trips_of(fills, COIN, end=100 * SEC)
    assert long == Trip(
        "BTC", 10 * SEC, 40 * SEC,
        (Leg(0, 3, True), Leg(30 * SEC, 2, False), Leg(40 * SEC, 0, True)), True,
    )  # fmt: skip
    assert short == Trip(
        "BTC", 50 * SEC, 20 * SEC, (Leg(0, -2, True), Leg(20 * SEC, 0, False)), True
    )
    assert (sol.coin, sol.start, sol.duration_ms, sol.closed) == ("SOL", 90 * SEC, 10 * SEC, False)
    assert long.long and not short.long


trip_lists = st.lists(
    st.tuples(st.sampled_from(["BTC", "ETH"]), st.integers(0, 600), st.integers(1, 3)),
    max_size=12,
)


@given(specs=trip_lists, seed=st.integers(0, 2**32))
def test_placements_lay_every_trip_once_in_the_window_without_overlap(
    specs: list[tuple[str, int, int]], seed: int
) -> None:
    start, span = 1_000_000, 3_600_000
    trips = [
        Trip(coin, 0, dur * SEC, tuple(Leg(0, 1, True) for _ in range(legs)), True)
        for coin, dur, legs in specs
    ]
    budget = {c: sum(t.duration_ms for t in trips if t.coin == c) for c in ("BTC", "ETH")}
    trips = [t for t in trips if budget[t.coin] <= span]
    laid = placements(trips, start, start + span, random.Random(seed))
    assert sorted(map(id, (p.trip for p in laid))) == sorted(map(id, trips))
    for coin in ("BTC", "ETH"):
        mine = sorted((p for p in laid if p.trip.coin == coin), key=lambda p: p.at)
        for a, b in itertools.pairwise(mine):
            assert a.at + a.trip.duration_ms <= b.at  # one trip at a time on a coin
        for p in mine:
            assert start <= p.at and p.at + p.trip.duration_ms <= start + span
    assert laid == placements(trips, start, start + span, random.Random(seed))


@given(specs=trip_lists, tail=st.integers(1, 900), seed=st.integers(0, 2**32))
def test_a_trip_open_at_the_end_stays_where_it_was_and_the_others_fit_before_it(
    specs: list[tuple[str, int, int]], tail: int, seed: int
) -> None:
    """The strategy's BTC trip still open at the run's end is laid where it was (held to
    the end by the twin, as the strategy held it), and the closed ones before it."""
    start, span = 1_000_000, 3_600_000
    end = start + span
    closed = [
        Trip(coin, 0, dur * SEC, tuple(Leg(0, 1, True) for _ in range(legs)), True)
        for coin, dur, legs in specs
    ]
    opened = Trip("BTC", end - tail * SEC, tail * SEC, (Leg(0, 1, True),), False)
    room = {"BTC": span - tail * SEC, "ETH": span}
    budget = {c: sum(t.duration_ms for t in closed if t.coin == c) for c in ("BTC", "ETH")}
    trips = [t for t in closed if budget[t.coin] <= room[t.coin]] + [opened]
    laid = placements(trips, start, end, random.Random(seed))
    assert sorted(map(id, (p.trip for p in laid))) == sorted(map(id, trips))
    (last,) = [p for p in laid if not p.trip.closed]
    assert last.at == opened.start
    assert all(p.at + p.trip.duration_ms <= last.at for p in laid if p.trip.coin == "BTC"
               and p.trip.closed)  # fmt: skip


def test_placements_are_uniform_over_the_free_time() -> None:
    """One trip of 9m45s in an hour (with its 15 s of slack, 10 minutes): its start is
    uniform over the 50 free minutes."""
    trip = Trip("BTC", 0, 10 * MIN - SLACK_MS, (Leg(0, 1, True), Leg(9 * MIN, 0, True)), True)
    rng = random.Random(1)
    starts = [placements([trip], 0, 60 * MIN, rng)[0].at for _ in range(4000)]
    assert min(starts) >= 0 and max(starts) <= 50 * MIN
    tenths = [sum(k * 5 * MIN <= s < (k + 1) * 5 * MIN for s in starts) for k in range(10)]
    assert all(340 <= n <= 460 for n in tenths), tenths  # 400 each, sd 19


def test_timing_freedom_and_how_many_twins() -> None:
    busy = [Trip("BTC", 0, 57 * MIN, (Leg(0, 1, True),), False)]
    assert timing_freedom(busy, 0, 60 * MIN) == 5 * E8 // 100
    assert timing_freedom([], 0, 60 * MIN) == E8
    few = [Trip("BTC", 0, 1, (Leg(0, 1, True), Leg(1, 0, True)), True)]
    assert twin_count(100, few) == 100
    many = [Trip("BTC", 0, 1, tuple(Leg(0, 1, True) for _ in range(LEG_BUDGET // 50)), True)]
    assert twin_count(100, many) == 50
    assert twin_count(100, many * 40) == MIN_TWINS and twin_count(10, many * 40) == 10
    assert twin_names(3, ["twin-002"]) == ["twin-001", "twin-003", "twin-004"]


class Trader(Strategy):
    """Every ``every_s`` seconds while flat: buy 0.005 BTC ($500, under the cap) with an IOC
    through the ask, then sell it ``hold_s`` later: an IOC through the bid, or (``maker``)
    a post-only ask, which the climb's prints fill; ``maker_entry``: buy with a post-only bid."""

    every_s = 240
    hold_s = 60
    maker = False
    maker_entry = False

    def __init__(self) -> None:
        self.bought_at: int | None = None
        self.next_at = 0

    def on_book(self, ctx: Context, book: Book) -> None:
        for o in ctx.account.open_orders:  # a quote unfilled for 15 s: cancel, quote again
            if ctx.t - o.received > 15 * SEC and not o.cancelling and not ctx.cancel_sent(o.oid):
                ctx.cancel(oid=o.oid)
        if book.coin != "BTC" or ctx.orders_on("BTC") or book.best_ask_e8 is None:
            return
        pos = ctx.account.position("BTC")
        bid, ask = book.best_bid_e8 or 0, book.best_ask_e8
        if not pos and ctx.t >= self.next_at:
            self.next_at = ctx.t + self.every_s * SEC
            self.bought_at = ctx.t
            if self.maker_entry:
                ctx.order(ctx.asset_of("BTC"), True, bid, 500_000, False, ALO)
            else:
                ctx.order(ctx.asset_of("BTC"), True, ask + 10 * E8, 500_000, False, IOC)
        elif pos and self.bought_at is not None and ctx.t - self.bought_at >= self.hold_s * SEC:
            px, tif = (ask, ALO) if self.maker else (bid - 10 * E8, IOC)  # at the touch
            ctx.order(ctx.asset_of("BTC"), False, px, pos, True, tif)


def swinging(minutes: int) -> list[dict[str, Any]]:
    """BTC wandering $1 at a time around $100,000 (a seeded walk): a book every 5 s ($1
    either side), a print every second at the ask then the bid, so a post-only order at the
    touch fills when the price comes through it."""
    rows: list[dict[str, Any]] = []
    start = build.T0 - 30_000
    rng = random.Random(5)
    level = 100_000
    for s in range(minutes * 60 + 31):
        t = start + s * 1000
        level += rng.choice((-1, 0, 1))
        px = level * E8
        if s % 5 == 0:
            bids = [(fmt(px - (1 + i) * E8), "2.0") for i in range(5)]
            asks = [(fmt(px + (1 + i) * E8), "2.0") for i in range(5)]
            rows.append(build.book(t, "BTC", t - 50, bids, asks))
        buy = s % 2 == 0
        row = build.trades(t, ("BTC", fmt(px + E8 if buy else px - E8), "0.001", t - 20, s + 1))
        row["hl"]["data"][0]["side"] = "B" if buy else "A"
        rows.append(row)
        if s % 10 == 0:
            rows.append(build.ctx(t, "BTC", mark=fmt(px), oracle=fmt(px), funding="0.0000125"))
    return rows


def traded(
    tmp_path: Path, strategy: Strategy, minutes: int = 30, swing: bool = False
) -> tuple[Any, Any, str]:
    rows = swinging(minutes) if swing else market_rows(minutes)
    log = str(write_log(tmp_path / "market.jsonl", rows))
    season = resolve_season([log], None)
    bt = Backtest(RunConfig(cache=False), season, [Entrant("s", strategy, Path("s.py"))])
    return season, bt.run([log]), log


def test_a_twin_on_a_steady_climb_scores_what_the_strategy_scores(tmp_path: Path) -> None:
    """Every 60-second long on a $1-a-second climb earns the same wherever it is laid: the
    twins (taker legs, the same sizes and holds) must land within a few dollars of it."""
    season, result, log = traded(tmp_path, Trader())
    e = result.entrants[0]
    end = result.replay.end
    trips = trips_of(e.stats.fills, COIN, end)
    assert len(trips) >= 6 and all(t.closed and t.long for t in trips)
    run = run_twins(season, [log], trips, n=8, seed=3, window=(season.start, end))
    mine = result.replay.ranking[0]
    for row, fills, evs in zip(run.rows, run.fills, run.fill_events, strict=True):
        assert fills == len(e.stats.fills)  # every leg traded, in one fill each
        twin_trips = trips_of(evs, COIN, end)
        assert len(twin_trips) == len(trips)
        held = sorted(t.duration_ms for t in trips)
        for got, want in zip(sorted(t.duration_ms for t in twin_trips), held, strict=True):
            assert abs(got - want) <= 5 * SEC  # a book comes every 5 s
        # the same gain ($0.30 a trip) to within 10 cents a trip of timing and rounding
        assert abs(row["equity"] - mine["equity"]) <= 100_000 * len(trips)
    starts = {tuple(p.at for p in plan) for plan in run.plans}
    assert len(starts) == 8  # each twin its own timing


def test_a_makers_twins_make_their_legs_as_a_maker(tmp_path: Path) -> None:
    """Post-only legs stay post-only: the twins' exits are maker fills (the entries are
    takers), except a trip's end finished as a taker when its post-only exit did not fill
    in time."""
    maker = Trader()
    maker.maker = True
    season, result, log = traded(tmp_path, maker, swing=True)
    e = result.entrants[0]
    assert e.stats.maker_fills >= 4
    end = result.replay.end
    trips = trips_of(e.stats.fills, COIN, end)
    run = run_twins(season, [log], trips, n=5, seed=1, window=(season.start, end))
    for book, evs in zip(run.books, run.fill_events, strict=True):
        sells = [f for f in evs if not f.is_buy]
        assert all(f.taker for f in evs if f.is_buy)
        assert sum(not f.taker for f in sells) >= len(sells) - book.finished > 0
        assert book.finished <= len(trips)


def test_a_passive_entry_is_never_taken_as_a_taker(tmp_path: Path) -> None:
    """A trip that began with a passive fill begins with one in every twin: its post-only
    entry is worked at the touch until it fills, or the trip is given up; never sent as an
    IOC, which would charge the twin a spread and taker fees the strategy never paid (random
    makers' twins once took 2.5 times its taker fills and were beaten by it 10% of the time
    on days with no edge: docs/verdict.md)."""
    maker = Trader()
    maker.maker = maker.maker_entry = True
    season, result, log = traded(tmp_path, maker, swing=True)
    e = result.entrants[0]
    end = result.replay.end
    trips = trips_of(e.stats.fills, COIN, end)
    assert len(trips) >= 3 and all(not t.legs[0].taker for t in trips)
    run = run_twins(season, [log], trips, n=6, seed=2, window=(season.start, end))
    for evs in run.fill_events:
        buys = [f for f in evs if f.is_buy]
        assert buys and not any(f.taker for f in buys)
    # waiting for a passive fill makes a twin no less active: its fills match the strategy's
    assert matched(len(e.stats.fills), sorted(run.fills)[len(run.fills) // 2]), run.fills


def test_the_same_seed_gives_the_same_twins(tmp_path: Path) -> None:
    season, result, log = traded(tmp_path, Trader(), minutes=20)
    end = result.replay.end
    trips = trips_of(result.entrants[0].stats.fills, COIN, end)
    a = run_twins(season, [log], trips, n=4, seed=9, window=(season.start, end))
    b = run_twins(season, [log], trips, n=4, seed=9, window=(season.start, end))
    c = run_twins(season, [log], trips, n=4, seed=10, window=(season.start, end))
    assert a.rows == b.rows and a.plans == b.plans
    assert a.plans != c.plans


class Holder(Trader):
    """Trader, but its last buy is never sold: open at the run's end."""

    def on_book(self, ctx: Context, book: Book) -> None:
        if ctx.t > self.last_buy_at and ctx.account.position("BTC"):
            return  # hold to the end
        super().on_book(ctx, book)

    last_buy_at = build.T0 + 20 * MIN


def test_a_trip_open_at_the_end_is_held_open_by_the_twins(tmp_path: Path) -> None:
    """The strategy never paid to close its last trip (its position is marked at the end):
    neither does a twin. Closing it would cost each twin a spread and taker fees, a small
    lead for the strategy on every day it ended in the market."""
    season, result, log = traded(tmp_path, Holder())
    e = result.entrants[0]
    end = result.replay.end
    trips = trips_of(e.stats.fills, COIN, end)
    assert not trips[-1].closed and all(t.closed for t in trips[:-1])
    run = run_twins(season, [log], trips, n=5, seed=4, window=(season.start, end))
    held_at_end = sum(f.sz if f.is_buy else -f.sz for f in e.stats.fills)
    assert held_at_end > 0
    for fills, evs, plan in zip(run.fills, run.fill_events, run.plans, strict=True):
        assert fills == len(e.stats.fills)  # no closing fill of its own
        assert sum(f.sz if f.is_buy else -f.sz for f in evs) == held_at_end
        (held,) = [p for p in plan if not p.trip.closed]
        assert held.at == trips[-1].start


def test_a_calm_maker_leg_skipped_at_a_book_changes_nothing(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The desk skips a maker leg at a book when nothing it reads has moved since a book
    that left it nothing to do (``Desk.calm``): the twins' trades must be those of a desk
    that looks at every leg at every book, order for order."""
    maker = Trader()
    maker.maker = maker.maker_entry = True
    season, result, log = traded(tmp_path, maker, swing=True)
    end = result.replay.end
    trips = trips_of(result.entrants[0].stats.fills, COIN, end)
    looks = [0]
    work = Desk._work

    def counted(self: Desk, *args: Any) -> bool:
        looks[0] += 1
        return work(self, *args)

    monkeypatch.setattr(Desk, "_work", counted)
    calm = run_twins(season, [log], trips, n=6, seed=2, window=(season.start, end))
    calm_looks, looks[0] = looks[0], 0
    # never calm: every working leg looked at on every book
    monkeypatch.setattr(Desk, "_watch", lambda self, twin, coin, t: (-(1 << 62), ()))
    every = run_twins(season, [log], trips, n=6, seed=2, window=(season.start, end))
    assert calm.fill_events == every.fill_events and calm.rows == every.rows
    assert [vars(b) for b in calm.books] == [vars(b) for b in every.books]
    assert looks[0] > calm_looks > 0  # the calm desk did look less


def test_a_leg_too_small_to_send_counts_once_however_often_it_is_tried(tmp_path: Path) -> None:
    """A maker entry under the minimum order value is worked at every book and checked
    each minute until its trip is given up: the report's ``legs_skipped`` must count it
    once (it counted every book's try: a quoter's twins once reported 210,247 legs skipped
    of 150,011 sent), and the trip given up once more; nothing trades."""
    maker = Trader()
    maker.maker = maker.maker_entry = True
    season, result, log = traded(tmp_path, maker, swing=True)
    end = result.replay.end
    trips = trips_of(result.entrants[0].stats.fills, COIN, end)
    assert len(trips) >= 3
    # every leg is $500: a minimum of $1,000 leaves each one too small to send
    dear = msgspec.structs.replace(
        season, rules=msgspec.structs.replace(season.rules, min_order_value=1_000 * 10**6)
    )
    run = run_twins(dear, [log], trips, n=4, seed=2, window=(season.start, end))
    for book, fills in zip(run.books, run.fills, strict=True):
        assert fills == 0
        assert book.legs > 0  # it tried
        # each first leg once, and at most each trip given up once: never once a book
        assert book.legs <= book.skipped <= book.legs + book.trips


class AlwaysIn(Strategy):
    """Buys 0.005 BTC at its first book and holds it to the end: always in the market."""

    def on_book(self, ctx: Context, book: Book) -> None:
        ask = book.best_ask_e8
        if book.coin != "BTC" or ask is None or ctx.account.position("BTC"):
            return
        if not ctx.orders_on("BTC"):
            ctx.order(ctx.asset_of("BTC"), True, ask + 10 * E8, 500_000, False, IOC)


def test_no_twin_is_traded_when_the_trips_leave_no_room_to_move(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A strategy in the market all the run gets "can't tell" before any twin could trade
    (its trips fill the window): the twins' pass, a whole extra engine pass, is not made,
    and the answer says how little room there was. One with room still gets its twins."""
    _, result, log = traded(tmp_path, AlwaysIn())
    how = Judging(twins=8, sources=(log,))

    def no_pass(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the twins traded for a strategy with no room to move")

    monkeypatch.setattr(skill, "run_twins", no_pass)
    untimed = measure_twins(result, how)
    assert isinstance(untimed, Untimed) and untimed.trips == 1
    # known from the trips: so even without the market data twins would trade on
    assert measure_twins(result, Judging(twins=8)) == untimed
    assert untimed.freedom_e8 < MIN_FREEDOM_E8
    doc = skill_doc(result.replay.ranking[0]["score"], 1, 1, 1, untimed)
    assert doc["answer"] == "no_freedom" and doc["twins"] == 0
    assert doc["freedom"] == untimed.freedom_e8 and doc["match"]["trips"] == 1
    text = skill_text(doc)
    assert text.startswith("can't tell") and "no random twins" in text
    assert f"leaves {pct_trunc(untimed.freedom_e8)} of the window free" in text
    # what a progress line may promise: no twin (arena-tui's line says none)
    assert planned_twins(result, how) == 0
    assert judging_line(how, result) == "judging, then writing the report..."
    monkeypatch.undo()
    _, result, log = traded(tmp_path, Trader())
    how = Judging(twins=4, sources=(log,))
    assert planned_twins(result, how) == 4
    assert judging_line(how, result).startswith("judging: trading 4 random twins,")
    twins = measure_twins(result, how)
    assert isinstance(twins, Twins) and len(twins.scores) == 4
    assert twins.freedom_e8 >= MIN_FREEDOM_E8
    # none asked for, or no market data to trade on: none promised
    assert planned_twins(result, Judging(twins=0, sources=(log,))) == 0
    assert planned_twins(result, Judging(twins=4)) == 0
    # many legs: the pass trades fewer than asked (run.twins.twin_count), and says so
    mine = trips_of(result.entrants[0].stats.fills, COIN, result.replay.end)
    monkeypatch.setattr(twins_module, "LEG_BUDGET", 2 * sum(len(t.legs) for t in mine))
    few = planned_twins(result, Judging(twins=100, sources=(log,)))
    assert few == twin_count(100, mine) < 100


@given(n=st.integers(1, 300), workers=st.integers(1, 16))
def test_twins_split_in_contiguous_nearly_equal_groups(n: int, workers: int) -> None:
    groups = _groups(n, workers)
    assert len(groups) == min(n, workers)
    assert groups[0][0] == 0 and groups[-1][1] == n
    assert all(a[1] == b[0] for a, b in itertools.pairwise(groups))
    sizes = [b - a for a, b in groups]
    assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1


def _same(a: Any, b: Any) -> None:
    assert a.rows == b.rows and a.plans == b.plans
    assert (a.fills, a.fees, a.active, a.marks) == (b.fills, b.fees, b.active, b.marks)
    assert [vars(x) for x in a.books] == [vars(x) for x in b.books]
    # a fill's oid is the engine's count over the pass: the rest of each fill is the same
    strip = [
        [(f.t, f.entry, f.is_buy, f.px, f.sz, f.taker, f.quote) for f in fl] for fl in a.fill_events
    ]
    assert strip == [
        [(f.t, f.entry, f.is_buy, f.px, f.sz, f.taker, f.quote) for f in fl] for fl in b.fill_events
    ]


def test_twins_split_over_worker_processes_trade_and_rank_as_one_pass(tmp_path: Path) -> None:
    """Twins never move each other's results (fills never deplete the book), so the pass
    split over processes is the same run: every row (ranks among all the twins
    included), book, fee and fill."""
    maker = Trader()
    maker.maker = True
    season, result, log = traded(tmp_path, maker, swing=True)
    end = result.replay.end
    trips = trips_of(result.entrants[0].stats.fills, COIN, end)
    one = run_twins(season, [log], trips, n=7, seed=2, window=(season.start, end))
    split = run_twins(season, [log], trips, n=7, seed=2, window=(season.start, end), workers=3)
    assert sum(one.fills) > 0
    _same(one, split)


def test_a_worker_that_dies_or_cannot_start_leaves_its_group_to_this_process(
    tmp_path: Path, monkeypatch: Any
) -> None:
    season, result, log = traded(tmp_path, Trader(), minutes=20)
    end = result.replay.end
    trips = trips_of(result.entrants[0].stats.fills, COIN, end)
    one = run_twins(season, [log], trips, n=4, seed=9, window=(season.start, end))

    class Dead:
        def __enter__(self) -> Dead:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def submit(self, fn: Any, *args: Any) -> Future[Any]:
            future: Future[Any] = Future()
            future.set_exception(BrokenProcessPool("killed"))
            return future

    monkeypatch.setattr(twins_module, "local_pool", lambda *a, **k: Dead())
    split = run_twins(season, [log], trips, n=4, seed=9, window=(season.start, end), workers=2)
    _same(one, split)

    class Barren(Dead):
        def submit(self, fn: Any, *args: Any) -> Future[Any]:
            raise OSError("no process may start here")

    monkeypatch.setattr(twins_module, "local_pool", lambda *a, **k: Barren())
    alone = run_twins(season, [log], trips, n=4, seed=9, window=(season.start, end), workers=3)
    _same(one, alone)


def test_how_many_workers_a_twins_pass_gets(tmp_path: Path, monkeypatch: Any) -> None:
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"x" * 1000)
    big = tmp_path / "big.jsonl"
    with big.open("wb") as f:
        f.truncate(SPLIT_MIN_BYTES)  # (sparse: its size is what is read)
    packed = tmp_path / "packed.jsonl.gz"  # a compressed log's lines: several times its size
    with packed.open("wb") as f:
        f.truncate(SPLIT_MIN_BYTES // 4)

    def trips(legs: int) -> list[Trip]:
        leg = Leg(0, E8, False)
        return [Trip("BTC", build.T0, MIN, (leg,) * legs, True)]

    busy = trips(SPLIT_MIN_LEGS // 100 + 1)  # 100 twins: just over the legs a split needs
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    monkeypatch.setattr(twins_module, "usable_cores", lambda: 8)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    assert twin_workers([str(big)], busy, 100) == MAX_WORKERS
    assert twin_workers([str(packed)], busy, 100) == MAX_WORKERS
    assert twin_workers([str(small)], busy, 100) == 1  # a pass too short for a worker's start
    quiet = trips(SPLIT_MIN_LEGS // 100 - 1)  # the market's replay is most of the pass
    assert twin_workers([str(big)], quiet, 100) == 1
    heavy = trips(2000)  # legs enough even for few twins
    assert twin_workers([str(big)], heavy, 2 * SPLIT_MIN_TWINS) == 2
    assert twin_workers([str(big)], heavy, 2 * SPLIT_MIN_TWINS - 1) == 1  # too few twins
    assert twin_workers([str(big)], heavy, MIN_TWINS) == MIN_TWINS // SPLIT_MIN_TWINS
    monkeypatch.setattr(os, "getloadavg", lambda: (7.4, 7.0, 7.0))
    assert twin_workers([str(big)], busy, 100) == 1  # every core busy already
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert twin_workers([str(small)], quiet, 5) == 3  # told
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(ArenaError, match=WORKERS_ENV):
            twin_workers([str(big)], busy, 100)


@given(
    scores=st.lists(
        st.tuples(st.integers(-5, 5), st.integers(0, 3), st.booleans()), min_size=1, max_size=30
    )
)
def test_twins_split_over_passes_are_ranked_as_the_engine_ranks_one_pass(
    scores: list[tuple[int, int, bool]],
) -> None:
    """Each group's pass ranks only its own twins; the merged rows are ranked again, by
    the engine's own order (S descending, lower MDD, registration: twin order)."""
    standings = [
        Standing(f"twin-{i:03d}", i, 0, 0, mdd, score, eligible, 0, 0, 0)
        for i, (score, mdd, eligible) in enumerate(scores)
    ]
    want = {s.entry: rank for rank, s in ranking(standings)}
    rows: list[dict[str, Any]] = [standing_row(0, s) for s in standings]
    _rank(rows)
    assert {r["entry"]: r["rank"] for r in rows} == want


def test_twins_read_the_days_caches_and_trade_as_from_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The twins' pass reads the days' caches when they are all there (every line applied,
    none held: the desk reads the engine after each), never writes one, and trades as the
    pass over the log itself."""
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    maker = Trader()
    maker.maker = True
    season, result, log = traded(tmp_path, maker, swing=True)
    end = result.replay.end
    trips = trips_of(result.entrants[0].stats.fills, COIN, end)
    # the log's coins only (a day's cache serves a season of coins it checked)
    season = msgspec.structs.replace(season, markets=[season.markets[0]])
    assert season.markets[0].coin == "BTC"
    warm: list[bool] = []

    class Seen(DaySource):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            warm.append(self.hold)

    monkeypatch.setattr(sources, "DaySource", Seen)
    cold = run_twins(season, [log], trips, n=5, seed=4, window=(season.start, end))
    assert warm == [] and not any((tmp_path / "cache").rglob("*.day"))  # none written
    keep_day(log)
    cached = run_twins(season, [log], trips, n=5, seed=4, window=(season.start, end))
    assert warm == [False]  # from the cache, nothing held
    _same(cold, cached)
    off = run_twins(season, [log], trips, n=5, seed=4, window=(season.start, end), cache=False)
    assert warm == [False]  # --no-cache: the log itself
    _same(cold, off)
