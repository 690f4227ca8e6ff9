"""The random twins of a sweep's chosen variant on one held-out day: a job like any other.

Why this module exists: the held-out skill answer needs the chosen variant's twins
(``run.twins``) on each held-out day; like a batch of variants they are a job that may run
on any worker and whose result is stored at once, so a resumed sweep does not trade them
again. The variant runs alone to give its trips, then its twins in one more pass; the
result's entries are the twins, as :class:`~arena_tui.sweep.jobs.EntryResult` rows.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import msgspec

from arena_tui.logs.daycache import cache_enabled
from arena_tui.report.skill import MIN_FREEDOM_E8
from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.twins import run_twins, timing_freedom, trips_of
from arena_tui.sweep import SweepError
from arena_tui.sweep.jobs import (
    DayFile,
    DayResult,
    EntryResult,
    Job,
    Variant,
    check_day,
    job_season,
    variant_entrant,
)
from arena_tui.util.errors import ArenaError


class TwinJob(msgspec.Struct, frozen=True):
    """The random twins of one variant over one day (``run.twins``): the variant runs
    alone to give its trips, then ``twins`` twins of them in one more pass."""

    strategy: str
    day: DayFile
    variant: Variant
    twins: int
    season_toml: str | None = None
    latency_ms: int = 0
    seed: int = 0


UNTIMED = "untimed"  # the one row of a day whose trips leave no room: no twin traded


def untimed_row(freedom: int) -> EntryResult:
    """What a twin job stores for a day the variant's trips fill (``freedom`` under
    ``MIN_FREEDOM_E8``): no twin, only that share (``judge.twins_of`` reads it)."""
    return EntryResult(UNTIMED, 0, 0, 0, 0, 0, {}, [], "", freedom=freedom)


def twin_seed(seed: int, day: DayFile) -> int:
    """A day's twins' seed: the sweep's, and the day's bytes (each day its own twins)."""
    return int(hashlib.sha256(f"{seed}:{day.sha256}".encode()).hexdigest()[:12], 16)


def run_twin_job(job: TwinJob) -> DayResult:
    """The variant alone, then its twins; the result's entries are the twins (``twin-001``
    ...), in order, each as an :class:`EntryResult` without block scores."""
    began = time.perf_counter()
    try:
        check_day(job.day)
        season = job_season(Job(job.strategy, job.day, [], season_toml=job.season_toml))
        path = Path(job.strategy)
        config = RunConfig(
            logs=(job.day.path,),
            latency_ms=job.latency_ms,
            seed=job.seed,
            run_log="full",
            cache=cache_enabled(),
        )
        entrant = variant_entrant(path, job.variant.name, job.variant.params)
        bt = Backtest(config, season, [entrant], echo=False)
        result = bt.run([job.day.path])
        e = result.entrants[0]
        end = result.replay.end or season.start
        coin_of = {m.asset: m.coin for m in season.markets}.__getitem__
        trips = trips_of(e.stats.fills, coin_of, end)
        if not trips:
            return DayResult(job.day, [], time.perf_counter() - began, result.inputs)
        freedom = timing_freedom(trips, season.start, end)
        if freedom < MIN_FREEDOM_E8:  # "can't tell" whatever twins would score: none traded
            row = untimed_row(freedom)
            return DayResult(job.day, [row], time.perf_counter() - began, result.inputs)
        twins = run_twins(
            season,
            [job.day.path],
            trips,
            n=job.twins,
            seed=twin_seed(job.seed, job.day),
            latency_ms=job.latency_ms,
            window=(season.start, end),
            taken=[e.name],
        )
    except SweepError:
        raise
    except ArenaError as exc:
        raise SweepError(str(exc)) from None
    out = [
        EntryResult(
            name=row["entry"],
            score=row["score"],
            ret=row["return"],
            mdd=row["mdd"],
            equity=row["equity"],
            fills=fills,
            rejections={},
            blocks=[],
            fills_sha256="",
            fill_days=row["fill_days"],
            active_marks=active,
            marks=row["marks"],
            fees=fees,
            freedom=freedom,
        )
        for row, fills, fees, active in zip(
            twins.rows, twins.fills, twins.fees, twins.active, strict=True
        )
    ]
    return DayResult(job.day, out, time.perf_counter() - began, result.inputs)
