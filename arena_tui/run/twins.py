"""The strategy's random twins: the same trips, at random times, in one extra engine pass.

Why this module exists: "is it skill, not luck?" needs a control that takes the same risk
as the strategy and differs only in what the strategy claims as skill, its timing. A fixed
random strategy (``control_random``) is a fair floor for momentum and a meaningless one for
a maker or a strategy that trades once a day. So each run builds its own controls from what
the strategy did (docs/verdict.md):

- ``run.trips`` cuts the strategy's fills into **trips** (on one coin, flat to flat, with
  their **legs**: each order's fills, when, the position they left, taker or maker) and
  lays each twin's trips at random in the window, per coin in a random order with random
  gaps (every way of laying them end to end without overlap equally likely), so each twin
  holds the same sizes, on the same sides, for the same times, paying the same kind of
  fees, as often as the strategy did; only when differs.
- ``run_twins`` trades every twin as an entry of one engine pass over the same logs (fills
  never deplete the book, a Season 0 rule: entries cannot move each other's results, so
  the strategy's own pass need not be repeated). The desk (``run.desk``) sends each leg
  when it falls due, as the strategy sent it: taker or maker, the same size, the same
  hold.

The twins' own seeded generators (``random.Random(f"{seed}:twin:{i}")``) decide everything,
so the same run and seed give the same twins, and a twin's score is a season score like the
strategy's: the engine's, in integers.

May import: ``run`` (the runner, the strategy API), ``engine``, ``util``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import random
from collections.abc import Sequence
from concurrent.futures import Executor, Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_tui.logs.daycache import has_day
from arena_tui.logs.readahead import is_compressed
from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.desk import Desk, TwinBook
from arena_tui.run.parts import BacktestResult, Entrant, Status
from arena_tui.run.stats import EntryStats
from arena_tui.run.strategy import Strategy
from arena_tui.run.trips import Leg, Placed, Trip, placements, timing_freedom, trips_of
from arena_tui.util.errors import ArenaError
from arena_tui.util.workers import local_pool, usable_cores
from engine import Season, Standing, ranking
from engine import events as ev

TWINS = 100  # twins a run gets unless told otherwise
# A strategy with many legs (a maker's thousands of fills) costs an order and a cancel a leg
# a twin: past this many legs in all, it gets fewer twins, never fewer than MIN_TWINS (so
# its p-value can still reach 1/40)
LEG_BUDGET = 60_000
MIN_TWINS = 39
WORKERS_ENV = "ARENA_WORKERS"  # processes a twins' pass may use (twin_workers)
MAX_WORKERS = 4
# a group's fewest twins (a strategy with many legs gets as few as 39 twins: MIN_TWINS,
# and those are the passes a split helps most)
SPLIT_MIN_TWINS = 10
# logs this small (uncompressed, about 2 h of three coins' data) are one pass: a worker
# takes 1-2 s to start, and the pass over them is not much longer than that
SPLIT_MIN_BYTES = 16 << 20
# twins' legs in all below which a split does not pay: every worker replays the whole
# market, only the twins' own orders are shared out (bench/twins.py: momentum's 24 h day,
# 12k legs, 1.07x on 2 cores; the maker's 6 h, 60k legs, 1.50x)
SPLIT_MIN_LEGS = 30_000
PACKED = 6  # a .gz or .lz4 log's lines take about this many times its size on disk


class Twin(Strategy):
    """A twin's entry: it has no hooks; the :class:`Desk` trades it."""


@dataclass(frozen=True)
class TwinRun:
    """The twins' pass: each twin's ranking row and what its desk did."""

    rows: list[dict[str, Any]]  # the engine's ranking rows of the twins, in twin order
    books: list[TwinBook]
    plans: list[list[Placed]]  # where each twin's trips were laid
    fill_events: list[Sequence[ev.Fill]]  # per twin, in order
    fills: list[int]  # per twin
    fees: list[int]  # per twin: venue + execution fees, e6
    active: list[int]  # per twin: active marks
    marks: int


def twin_names(n: int, taken: Sequence[str] = ()) -> list[str]:
    """``twin-001`` ... (a name a log already uses is passed over)."""
    used = set(taken)
    out: list[str] = []
    for k in itertools.count(1):
        if len(out) == n:
            break
        name = f"twin-{k:03d}"
        if name not in used:
            out.append(name)
    return out


def twin_count(asked: int, trips: Sequence[Trip]) -> int:
    """How many twins to make: ``asked``, or fewer for a strategy with many legs."""
    legs = max(1, sum(len(t.legs) for t in trips))
    if asked * legs <= LEG_BUDGET:
        return asked
    return max(min(asked, MIN_TWINS), LEG_BUDGET // legs)


def plan_twins(
    trips: Sequence[Trip], n: int, seed: int, start: int, end: int
) -> list[list[Placed]]:
    """``n`` twins' placements, each from its own generator."""
    return [placements(trips, start, end, random.Random(f"{seed}:twin:{i}")) for i in range(n)]


def run_twins(
    season: Season,
    logs: Sequence[str],
    trips: Sequence[Trip],
    *,
    n: int = TWINS,
    seed: int = 0,
    latency_ms: int = 0,
    window: tuple[int, int] | None = None,
    taken: Sequence[str] = (),
    progress: Status | None = None,
    workers: int = 1,
    cache: bool = True,
) -> TwinRun:
    """``n`` twins of ``trips`` (fewer for many legs: ``twin_count``) over ``logs`` (no run
    log); ``window``: where they may be laid (default: the season's). ``workers``: the
    twins are split into that many groups (at most), each one engine pass, all but the
    first in worker processes; twins never move each other's results (the module
    docstring), so the run is the same whatever the split. ``cache``: read the days'
    caches when they are all there (the same run, quicker)."""
    start, end = window or (season.start, season.end)
    n = twin_count(n, trips)
    plans = plan_twins(trips, n, seed, start, end)
    names = twin_names(n, taken)
    groups = _groups(n, workers)
    jobs = [
        (season, tuple(logs), plans[a:b], names[a:b], seed, latency_ms, cache) for a, b in groups
    ]
    if len(jobs) == 1:
        parts = [_trade(*jobs[0], progress=progress)]
    else:  # the first group here while the others run in workers
        with local_pool(len(jobs) - 1, ["arena_tui.run.twins"], finish=False) as pool:
            later = [_submit(pool, job) for job in jobs[1:]]
            parts = [_trade(*jobs[0], progress=progress)]
            parts += [_result(f, job) for f, job in zip(later, jobs[1:], strict=True)]
    rows = [row for part in parts for row in part.rows]
    _rank(rows)
    return TwinRun(
        rows=rows,
        books=[b for part in parts for b in part.books],
        plans=plans,
        fill_events=[f for part in parts for f in part.fill_events],
        fills=[len(f) for part in parts for f in part.fill_events],
        fees=[fee for part in parts for fee in part.fees],
        active=[a for part in parts for a in part.active],
        marks=max((part.marks for part in parts), default=0),
    )


def _submit(pool: Executor, job: tuple[Any, ...]) -> Future[_Part] | None:
    """The group sent to a worker; None when no worker can start here (no fork server,
    no process allowed): it is run here."""
    try:
        return pool.submit(_trade_remote, *job)
    except (OSError, RuntimeError, BrokenProcessPool):
        return None


def _result(future: Future[_Part] | None, job: tuple[Any, ...]) -> _Part:
    """A worker's group, or the group run here when its worker could not start or died
    (killed, out of memory): the run is the same either way, only slower."""
    if future is None:
        return _trade(*job)
    try:
        return future.result()
    except BrokenProcessPool:
        return _trade(*job)


def twin_workers(logs: Sequence[str], trips: Sequence[Trip], n: int = TWINS) -> int:
    """How many processes a run's twins' pass is worth: ``ARENA_WORKERS`` if set, else the
    usable cores that are idle (by the load average; at most 4). One when a split cannot
    pay for a worker's start (1-2 s): each worker replays the whole market, so only the
    twins' own trading is shared out; it must be large (``SPLIT_MIN_LEGS`` legs in all)
    and the logs long enough (``SPLIT_MIN_BYTES`` of lines). Only the time changes with
    it, never the twins' results."""
    text = os.environ.get(WORKERS_ENV, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ArenaError(f"{WORKERS_ENV}={text!r}: a number of processes, 1 or more")
        return int(text)
    size = 0
    for path in logs:
        with contextlib.suppress(OSError):
            packed = is_compressed(path)
            size += os.stat(path).st_size * (PACKED if packed else 1)
    twins = twin_count(n, trips)
    legs = twins * sum(len(t.legs) for t in trips)
    if size < SPLIT_MIN_BYTES or legs < SPLIT_MIN_LEGS or twins < 2 * SPLIT_MIN_TWINS:
        return 1
    cores = usable_cores()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average here: take the cores as idle
        load = 0.0
    idle = round(cores - load + 0.5)  # a busy machine's cores are not free
    return max(1, min(cores, idle, MAX_WORKERS, twins // SPLIT_MIN_TWINS))


@dataclass(frozen=True)
class _Part:
    """One group's pass: its twins' rows (ranked among themselves), books and fills."""

    rows: list[dict[str, Any]]
    books: list[TwinBook]
    fill_events: list[Sequence[ev.Fill]]
    fees: list[int]
    active: list[int]
    marks: int


def _groups(n: int, workers: int) -> list[tuple[int, int]]:
    """Twins ``0..n`` in at most ``workers`` contiguous groups of (nearly) equal size."""
    k = max(1, min(workers, n))
    return [(i * n // k, (i + 1) * n // k) for i in range(k)]


def _trade(
    season: Season,
    logs: tuple[str, ...],
    plans: Sequence[Sequence[Placed]],
    names: Sequence[str],
    seed: int,
    latency_ms: int,
    cache: bool,
    progress: Status | None = None,
) -> _Part:
    """One engine pass of the twins ``names`` (their ``plans``); ``cache``: from the days'
    caches if they are all there."""
    entrants = [
        Entrant(name, Twin(), Path(""), stats=EntryStats(keep_marks=False)) for name in names
    ]
    desk = Desk(plans)
    # the days' caches when every one has one (never writing one here: workers share
    # them), every line applied from the columns, none held: the desk reads the engine
    warm = cache and _cached(logs, season)
    config = RunConfig(latency_ms=latency_ms, seed=seed, run_log="full", cache=warm)
    bt = Backtest(config, season, entrants, subscribers=(desk,), hold=False)
    result: BacktestResult = bt.run(list(logs), progress)
    rows = {r["entry"]: r for r in result.replay.ranking}
    return _Part(
        rows=[rows[name] for name in names],
        books=desk.books,
        fill_events=[e.stats.fills for e in result.entrants],
        fees=[e.stats.venue_fees + e.stats.exec_fees for e in result.entrants],
        active=[e.stats.active_marks for e in result.entrants],
        marks=max((e.stats.mark_count for e in result.entrants), default=0),
    )


def _trade_remote(*job: Any) -> _Part:
    """``_trade`` in a worker: its fills go back pickled, as lists (not the views over the
    worker's own ledger)."""
    part = _trade(*job)
    return dataclasses.replace(part, fill_events=[list(f) for f in part.fill_events])


def _cached(logs: Sequence[str], season: Season) -> bool:
    """Every one of ``logs`` has a day cache for the season's coins (by its index and
    header: the pass that opens them checks them whole, once)."""
    coins = [m.coin for m in season.markets]
    return all(has_day(log, coins) for log in logs)


def _rank(rows: list[dict[str, Any]]) -> None:
    """Rank the twins among all of them, as one pass would have: the engine's ranking of
    their standings, registered in twin order."""
    standings = [
        Standing(
            entry=r["entry"],
            idx=i,
            equity=r["equity"],
            ret=r["return"],
            mdd=r["mdd"],
            score=r["score"],
            eligible=r["eligible"],
            fill_days=r["fill_days"],
            active_marks=r["active_marks"],
            marks=r["marks"],
        )
        for i, r in enumerate(rows)
    ]
    for rank, standing in ranking(standings):
        rows[standing.idx]["rank"] = rank


__all__ = ["Leg", "Placed", "Trip", "placements", "timing_freedom", "trips_of"]
