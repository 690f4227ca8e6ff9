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

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.desk import Desk, TwinBook
from arena_tui.run.parts import BacktestResult, Entrant, Status
from arena_tui.run.stats import EntryStats
from arena_tui.run.strategy import Strategy
from arena_tui.run.trips import Leg, Placed, Trip, placements, timing_freedom, trips_of
from engine import Season
from engine import events as ev

TWINS = 100  # twins a run gets unless told otherwise
# A strategy with many legs (a maker's thousands of fills) costs an order and a cancel a leg
# a twin: past this many legs in all, it gets fewer twins, never fewer than MIN_TWINS (so
# its p-value can still reach 1/40)
LEG_BUDGET = 60_000
MIN_TWINS = 39


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
) -> TwinRun:
    """``n`` twins of ``trips`` (fewer for many legs: ``twin_count``) over ``logs`` in one
    pass (no run log); ``window``: where they may be laid (default: the season's)."""
    start, end = window or (season.start, season.end)
    n = twin_count(n, trips)
    plans = plan_twins(trips, n, seed, start, end)
    names = twin_names(n, taken)
    entrants = [
        Entrant(name, Twin(), Path(""), stats=EntryStats(keep_marks=False)) for name in names
    ]
    desk = Desk(plans)
    config = RunConfig(latency_ms=latency_ms, seed=seed, run_log="full", cache=False)
    bt = Backtest(config, season, entrants, subscribers=(desk,))
    result: BacktestResult = bt.run(list(logs), progress)
    rows = {r["entry"]: r for r in result.replay.ranking}
    return TwinRun(
        rows=[rows[name] for name in names],
        books=desk.books,
        plans=plans,
        fill_events=[e.stats.fills for e in result.entrants],
        fills=[len(e.stats.fills) for e in result.entrants],
        fees=[e.stats.venue_fees + e.stats.exec_fees for e in result.entrants],
        active=[e.stats.active_marks for e in result.entrants],
        marks=max((e.stats.mark_count for e in result.entrants), default=0),
    )


__all__ = ["Leg", "Placed", "Trip", "placements", "timing_freedom", "trips_of"]
