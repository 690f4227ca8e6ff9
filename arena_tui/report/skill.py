"""Question 3 of the verdict, "is it skill, not luck?": the strategy's S among its twins'.

Why this module exists: the twins (``run.twins``: the strategy's own trips re-timed at
random, traded in one extra engine pass) are the control that takes the strategy's risk;
this module makes that pass for a run (``measure_twins``) and reads it (``skill_doc``):
where the strategy's S falls among the twins' S, with the exact rank p-value
``(1 + twins at or above it) / (n + 1)``, and the checks that the twins are a control at
all: the strategy's timing had room to move (``MIN_FREEDOM_E8``), and the twins repeated
its trading (their median fills and fees within ``MATCH_PCT`` of its own). See
docs/verdict.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena_tui.report.judging import Judging as Judging  # its home: light, for commands
from arena_tui.run.parts import BacktestResult, Status
from arena_tui.run.trips import Trip
from arena_tui.run.twins import run_twins, timing_freedom, trips_of, twin_count, twin_workers

ALPHA_PCT = 5


@dataclass(frozen=True)
class Twins:
    """What the twins' pass gave the verdict: each twin's S, how the twins matched the
    strategy, and how free its timing was (``run.twins``)."""

    scores: list[int]
    seed: int
    trips: int
    freedom_e8: int  # run.twins.timing_freedom
    fills: list[int]
    fees: list[int]
    active: list[int]
    marks: int
    skipped: int  # legs the twins could not send, over all twins
    legs: int  # legs sent, over all twins


@dataclass(frozen=True)
class Untimed:
    """A strategy whose timing leaves its trips no room to move (``MIN_FREEDOM_E8``): the
    answer is "can't tell" before any twin trades, so none is traded (a quoter in the
    market all day would otherwise cost a whole extra pass of twins that can only sit
    where it sat)."""

    seed: int
    trips: int
    freedom_e8: int  # run.twins.timing_freedom, under MIN_FREEDOM_E8


def _median(values: Sequence[int]) -> int:
    s = sorted(values)
    return s[(len(s) - 1) // 2] if s else 0


def _quantile(values: Sequence[int], pct: int) -> int:
    """The nearest-rank ``pct``-th percentile (an integer of the values)."""
    s = sorted(values)
    k = max(1, -(-len(s) * pct // 100))
    return s[k - 1]


MIN_FREEDOM_E8 = 5_000_000  # under 5% of the window to move in: timing cannot be judged
MATCH_PCT = (67, 150)  # the twins' median fills and fees within this share of the strategy's


def matched(mine: int, twins: int) -> bool:
    """Whether a twin figure (a median) is within ``MATCH_PCT`` of the strategy's."""
    lo, hi = MATCH_PCT
    return mine * lo <= twins * 100 <= mine * hi


def skill_doc(
    score: int, fills: int, fees: int, active: int, twins: Twins | Untimed | str | None
) -> dict[str, Any]:
    """Question 3: the strategy's S among its twins'. ``twins``: the twins' pass, the
    trips that left no room for one (``Untimed``), or why there is none (a string), or None
    (turned off)."""
    if fills == 0:
        return {"answer": "no_trades"}
    if twins is None:
        return {"answer": "off", "why": "no twins asked for (--twins 0)"}
    if isinstance(twins, str):
        return {"answer": "not_measured", "why": twins}
    if isinstance(twins, Untimed):
        return {
            "answer": "no_freedom",
            "twins": 0,
            "seed": twins.seed,
            "score": score,
            "freedom": twins.freedom_e8,
            "match": {"trips": twins.trips, "fills": fills, "fees": fees},
        }
    n = len(twins.scores)
    above = sum(1 for s in twins.scores if s > score)
    ties = sum(1 for s in twins.scores if s == score)
    below = n - above - ties
    p_skill = (1 + above + ties) / (n + 1)
    p_worse = (1 + below + ties) / (n + 1)
    doc: dict[str, Any] = {
        "twins": n,
        "seed": twins.seed,
        "score": score,
        "below": below,
        "ties": ties,
        "above": above,
        "p_value": round(p_skill, 4),
        "p_worse": round(p_worse, 4),
        "alpha_pct": ALPHA_PCT,
        "twin_scores": list(twins.scores),
        "twin_median": _median(twins.scores),
        "twin_range_90": [_quantile(twins.scores, 5), _quantile(twins.scores, 95)],
        "freedom": twins.freedom_e8,
        "match": {
            "trips": twins.trips,
            "fills": fills,
            "twin_fills_median": _median(twins.fills),
            "fees": fees,
            "twin_fees_median": _median(twins.fees),
            "active_marks": active,
            "twin_active_median": _median(twins.active),
            "marks": twins.marks,
            "legs": twins.legs,
            "legs_skipped": twins.skipped,
        },
    }
    if twins.freedom_e8 < MIN_FREEDOM_E8:
        return doc | {"answer": "no_freedom"}
    if ties == n:  # every twin scored exactly what it did: timing made no difference
        return doc | {"answer": "no_spread"}
    m = doc["match"]
    if not (matched(fills, m["twin_fills_median"]) and matched(fees, m["twin_fees_median"])):
        return doc | {"answer": "unmatched"}
    if p_skill * 100 <= ALPHA_PCT:
        answer = "skill"
    elif p_worse * 100 <= ALPHA_PCT:
        answer = "worse_than_twins"
    else:
        answer = "luck"
    return doc | {"answer": answer}


def _trips(result: BacktestResult) -> tuple[list[Trip], int] | None:
    """The run's strategy's trips and its timing freedom (``run.twins``); None: no fills."""
    e = result.entrants[0] if result.entrants else None
    if e is None or not e.stats.fills:
        return None
    season = result.replay.season
    end = result.replay.end or season.start
    coin_of = {m.asset: m.coin for m in season.markets}.__getitem__
    trips = trips_of(e.stats.fills, coin_of, end)
    return trips, timing_freedom(trips, season.start, end)


def planned_twins(result: BacktestResult, how: Judging) -> int:
    """How many twins ``measure_twins`` will trade for this run: 0 when it trades none (none
    asked for, no fills, no room to move, no market data), else ``run.twins.twin_count``
    (fewer than asked for a strategy with many legs). What a progress line may promise."""
    plan = _trips(result) if how.twins > 0 and how.sources else None
    if plan is None or plan[1] < MIN_FREEDOM_E8:
        return 0
    return twin_count(how.twins, plan[0])


def measure_twins(
    result: BacktestResult, how: Judging, progress: Status | None = None
) -> Twins | Untimed | str | None:
    """The twins' pass for the run's strategy: its trips re-timed ``how.twins`` times over
    ``how.sources`` (``run.twins``); None when none are asked for, a reason when they
    cannot be made, nothing at all to do for a strategy with no fills, and no pass for one
    whose trips leave no room to move (``Untimed``: the answer is known without it)."""
    if how.twins <= 0:
        return None
    plan = _trips(result)
    if plan is None:
        return "no trades"
    trips, freedom = plan
    if freedom < MIN_FREEDOM_E8:  # (no market data needed: no twin would trade)
        return Untimed(seed=how.seed, trips=len(trips), freedom_e8=freedom)
    if not how.sources:
        return how.no_twins
    season = result.replay.season
    end = result.replay.end or season.start
    run = run_twins(
        season,
        how.sources,
        trips,
        n=how.twins,
        seed=how.seed,
        latency_ms=how.latency_ms,
        window=(season.start, end),
        taken=[r["entry"] for r in result.replay.ranking],
        progress=progress,
        workers=twin_workers(how.sources, trips, how.twins),
        cache=how.cache,
    )
    return Twins(
        scores=[r["score"] for r in run.rows],
        seed=how.seed,
        trips=len(trips),
        freedom_e8=freedom,
        fills=run.fills,
        fees=run.fees,
        active=run.active,
        marks=run.marks,
        skipped=sum(b.skipped for b in run.books),
        legs=sum(b.legs for b in run.books),
    )
