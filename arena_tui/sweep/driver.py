"""The sweep's driver: per fold, the search run in batches, each batch a job per training
day, results stored as they finish, then the chosen variant judged on the held-out days.

Why this module exists: the pieces (``space`` and ``luck``: what to try and how to judge
it; ``jobs``, ``execute`` and ``store``: running a job anywhere and keeping its result)
know nothing of each other; this is the one loop that joins them. It is deterministic
given its config: the search is seeded, batches run in ask order and are told in trial
order, so a resumed sweep replays the same sequence and the store answers every
(entry, day) it already holds without running it. ``arena sweep show`` is the same loop
with no executor at all (``Missing`` if a job would be needed).
"""

from __future__ import annotations

import os
import signal
from concurrent.futures import BrokenExecutor, Executor, Future, as_completed
from dataclasses import dataclass, field
from typing import Any

from arena_tui.report.verdict import CONTROL
from arena_tui.run.config import RunConfig
from arena_tui.run.params import ParamValue
from arena_tui.season.file import resolve_season
from arena_tui.sweep import SweepError
from arena_tui.sweep.config import Config, Strategy, split_days
from arena_tui.sweep.execute import InProcess
from arena_tui.sweep.jobs import (
    DayFile,
    DayResult,
    EntryResult,
    Job,
    Variant,
    run_job,
)
from arena_tui.sweep.judge import Trial, judge_fold, mean
from arena_tui.sweep.progress import Progress
from arena_tui.sweep.result import Fold, reproduce
from arena_tui.sweep.space import make_search
from arena_tui.sweep.store import SweepStore
from arena_tui.sweep.twinjob import TwinJob, run_twin_job

# tests: kill -9 itself after N stored jobs (0: once the sweep's identity is saved, before
# it reads its days: ``arena sweep``'s first seconds)
KILL_AFTER_ENV = "ARENA_SWEEP_KILL_AFTER_JOBS"


def kill_point(jobs: int) -> None:
    """Tests: ``kill -9`` this process if ``$ARENA_SWEEP_KILL_AFTER_JOBS`` is ``jobs``."""
    if os.environ.get(KILL_AFTER_ENV) == str(jobs):
        os.kill(os.getpid(), signal.SIGKILL)


def run_config(cfg: Config) -> RunConfig:
    """What a sweep's passes share with any run: the strategy, latency and seed (each job
    adds its day and variants: ``jobs.Job.of``)."""
    return RunConfig(
        strategy=cfg.strategy,
        latency_ms=cfg.latency_ms,
        seed=cfg.seed,
        epoch=cfg.epoch,
        twins=cfg.twins,
    )


class Missing(SweepError):
    """``show`` of a sweep whose store lacks a result the sweep needs (not finished)."""


@dataclass
class Runner:
    """Runs jobs through an executor (None: everything must be in the store) and keeps
    the store up to date; ``results[split][(name, sha)]`` mirrors what it holds."""

    cfg: Config
    store: SweepStore
    pool: Executor | None
    progress: Progress
    results: dict[str, dict[tuple[str, str], EntryResult]] = field(default_factory=dict)
    kill_after: int | None = None
    run: RunConfig = field(init=False)

    def __post_init__(self) -> None:
        self.run = run_config(self.cfg)  # what every job's pass shares
        for split, sha, res in self.store.results():
            self.results.setdefault(split, {})[(res.name, sha)] = res
        stop = os.environ.get(KILL_AFTER_ENV)
        self.kill_after = int(stop) if stop else None

    def job(self, variants: list[Variant], day: DayFile, split: str) -> Job | None:
        have = self.results.get(split, {})
        todo = [v for v in variants if (v.name, day.sha256) not in have]
        control = (CONTROL, day.sha256) not in have
        if not todo and not control:
            return None
        return Job.of(self.run, day, todo, control=control, epoch=self.cfg.epoch)

    def ensure(self, variants: list[Variant], days: list[DayFile], split: str) -> None:
        """Every variant and the control on every day of ``days``: stored, or run now."""
        jobs = [j for d in days if (j := self.job(variants, d, split)) is not None]
        self.progress.jobs_reused += len(days) - len(jobs)
        self._run([(run_job, j, [v.name for v in j.variants]) for j in jobs], split)

    def ensure_twins(self, variant: Variant, days: list[DayFile]) -> list[list[EntryResult]]:
        """The variant's random twins on each of ``days`` (stored, or run now), a list a
        day, in twin order (empty for a day the variant made no trip on)."""
        split = twins_split(variant.name)
        done = self.store.finished_days(split)
        todo = [
            TwinJob(
                strategy=self.cfg.strategy,
                day=d,
                variant=variant,
                twins=self.cfg.twins,
                latency_ms=self.run.latency_ms,
                seed=self.run.seed,
            )
            for d in days
            if d.sha256 not in done
        ]
        self.progress.jobs_reused += len(days) - len(todo)
        self._run([(run_twin_job, j, []) for j in todo], split)
        have = self.results.get(split, {})
        return [
            sorted((r for (name, sha), r in have.items() if sha == d.sha256), key=_twin_order)
            for d in days
        ]

    def _run(self, jobs: list[tuple[Any, Any, list[str]]], split: str) -> None:
        """Run ``(function, job, trial names)`` triples and keep each result as it comes."""
        if not jobs:
            return
        if self.pool is None:
            raise Missing("the sweep is not finished")
        self.progress.jobs_left = len(jobs)
        if isinstance(self.pool, InProcess):  # one at a time: each stored as it finishes
            for fn, j, names in jobs:
                self.keep(names, self.pool.submit(fn, j).result(), split)
            return
        futures: dict[Future[DayResult], list[str]] = {
            self.pool.submit(fn, j): names for fn, j, names in jobs
        }
        try:
            for fut in as_completed(futures):
                self.keep(futures[fut], fut.result(), split)
        except BrokenExecutor as exc:
            raise SweepError(
                f"a worker stopped ({exc or type(exc).__name__}); the jobs finished are stored: "
                "arena sweep --resume DIR continues"
            ) from None
        finally:
            for fut in futures:
                fut.cancel()

    def keep(self, trial_names: list[str], result: DayResult, split: str) -> None:
        self.store.save_day(trial_names, result, split)
        have = self.results.setdefault(split, {})
        for entry in result.entries:
            have[(entry.name, result.day.sha256)] = entry
        self.progress.jobs_done += 1
        self.progress.jobs_left -= 1
        self.progress.report(self.progress)
        if self.kill_after is not None and self.progress.jobs_done >= self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)  # a test's kill -9, at a known point

    def entries(self, name: str, days: list[DayFile], split: str) -> list[EntryResult]:
        have = self.results.get(split, {})
        return [have[(name, d.sha256)] for d in days]


def search_fold(
    run: Runner, strat: Strategy, train: list[DayFile]
) -> list[tuple[dict[str, ParamValue], Variant]]:
    """The search over the training days: batches asked, run (one job a day), told in
    trial order; returns every trial, in ask order."""
    cfg = run.cfg
    search = make_search(cfg.search, strat.space, trials=cfg.trials, seed=cfg.seed)  # type: ignore[arg-type]
    trials: list[tuple[dict[str, ParamValue], Variant]] = []
    while batch := search.ask(cfg.batch_size):
        variants = [strat.variant(values) for values in batch]
        for values, v in zip(batch, variants, strict=True):
            run.store.add_trial(dict(values), v.name)
        run.progress.trials += len(batch)
        run.ensure(variants, train, "train")
        for values, v in zip(batch, variants, strict=True):
            score = mean([e.score for e in run.entries(v.name, train, "train")])
            search.tell(dict(values), score)
            best = run.progress.best
            if best is None or (-score, v.name) < (-best[1], best[0]):  # as the ranking
                run.progress.best = (v.name, score)
        trials += list(zip(batch, variants, strict=True))
    return trials


def twins_split(name: str) -> str:
    """Where a variant's twins are stored."""
    return f"twins:{name}"


def _twin_order(r: EntryResult) -> str:
    return r.name


def run_sweep(run: Runner, strat: Strategy) -> list[Fold]:
    """Every fold: its search on its training days, the chosen variant (the best mean
    training S among those that may be chosen: ``judge.order``) with the control on its
    held-out days, its twins there, and the judgement."""
    out = []
    cfg = run.cfg
    for i, (train, held) in enumerate(split_days(cfg)):
        rules = resolve_season([train[0].path], None).rules
        asked = search_fold(run, strat, train)
        unique = {
            v.name: Trial(v.name, values, run.entries(v.name, train, "train"))
            for values, v in asked
        }
        trials = list(unique.values())
        control_train = run.entries(CONTROL, train, "train")
        first = judge_fold(
            i, trials, control_train, None, [], None,
            rules=rules, seed=cfg.seed, epoch=cfg.epoch, min_fills=cfg.min_fills,
        )  # fmt: skip
        best = first["variants"][0]
        fold = Fold(first)
        if best["excluded"] is None:
            variant = strat.variant(best["params"])
            run.ensure([variant], held, "holdout")
            fold.held = run.entries(variant.name, held, "holdout")
            fold.control_held = run.entries(CONTROL, held, "holdout")
            fold.twins = run.ensure_twins(variant, held) if cfg.twins > 0 else []
            fold.doc = judge_fold(
                i, trials, control_train, fold.held, fold.control_held,
                fold.twins if cfg.twins > 0 else None,
                rules=rules, seed=cfg.seed, epoch=cfg.epoch, min_fills=cfg.min_fills,
            )  # fmt: skip
            fold.doc["reproduce"] = reproduce(cfg, best["params"], held[0])
        else:
            fold.doc["reproduce"] = None
        fold.doc["train_days"] = [d.path for d in train]
        fold.doc["holdout_days"] = [d.path for d in held]
        out.append(fold)
    return out
