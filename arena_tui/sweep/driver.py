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
import shlex
import signal
from collections.abc import Mapping
from concurrent.futures import BrokenExecutor, Executor, Future, as_completed
from dataclasses import dataclass, field
from typing import Any

from arena_tui.report.verdict import CONTROL
from arena_tui.run.params import ParamValue
from arena_tui.sweep import SweepError
from arena_tui.sweep.config import Config, Strategy, split_days
from arena_tui.sweep.execute import InProcess
from arena_tui.sweep.jobs import DayFile, DayResult, EntryResult, Job, Variant, run_job
from arena_tui.sweep.judge import Trial, judge_fold, mean, verdict_doc
from arena_tui.sweep.luck import HOLDOUT
from arena_tui.sweep.progress import Progress
from arena_tui.sweep.space import make_search
from arena_tui.sweep.store import SweepStore

KILL_AFTER_ENV = "ARENA_SWEEP_KILL_AFTER_JOBS"  # tests: kill -9 itself after N stored jobs


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

    def __post_init__(self) -> None:
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
        return Job(
            strategy=self.cfg.strategy,
            day=day,
            variants=todo,
            control=control,
            latency_ms=self.cfg.latency_ms,
            seed=self.cfg.seed,
            epoch=self.cfg.epoch,
        )

    def ensure(self, variants: list[Variant], days: list[DayFile], split: str) -> None:
        """Every variant and the control on every day of ``days``: stored, or run now."""
        jobs = [j for d in days if (j := self.job(variants, d, split)) is not None]
        self.progress.jobs_reused += len(days) - len(jobs)
        if not jobs:
            return
        if self.pool is None:
            raise Missing("the sweep is not finished")
        self.progress.jobs_left = len(jobs)
        if isinstance(self.pool, InProcess):  # one at a time: each stored as it finishes
            for j in jobs:
                self.keep(j, self.pool.submit(run_job, j).result(), split)
            return
        futures: dict[Future[DayResult], Job] = {self.pool.submit(run_job, j): j for j in jobs}
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

    def keep(self, job: Job, result: DayResult, split: str) -> None:
        self.store.save_day([v.name for v in job.variants], result, split)
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


def run_sweep(run: Runner, strat: Strategy) -> list[dict[str, Any]]:
    """Every fold: its search on its training days, the best variant (mean training S,
    then name) with the control on its held-out days, and the judgement."""
    out = []
    for i, (train, held) in enumerate(split_days(run.cfg)):
        asked = search_fold(run, strat, train)
        unique = {
            v.name: Trial(v.name, values, run.entries(v.name, train, "train"))
            for values, v in asked
        }
        ranked = sorted(unique.values(), key=lambda t: (-mean([e.score for e in t.train]), t.name))
        best = ranked[0]
        run.ensure([strat.variant(best.values)], held, "holdout")
        fold = judge_fold(
            i,
            ranked,
            run.entries(CONTROL, train, "train"),
            run.entries(best.name, held, "holdout"),
            run.entries(CONTROL, held, "holdout"),
            run.cfg.seed,
        )
        fold["train_days"] = [d.path for d in train]
        fold["holdout_days"] = [d.path for d in held]
        fold["reproduce"] = reproduce(run.cfg, best.values, held[0])
        out.append(fold)
    return out


def reproduce(cfg: Config, values: Mapping[str, ParamValue], day: DayFile) -> str:
    """The ``arena backtest`` line that reruns one trial on one day exactly."""
    words = ["arena", "backtest", cfg.strategy, day.path]
    for name, value in values.items():
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        words += ["--param", f"{name}={text}"]
    if cfg.seed:
        words += ["--seed", str(cfg.seed)]
    if cfg.latency_ms:
        words += ["--latency-ms", str(cfg.latency_ms)]
    return shlex.join(words)


def sweep_doc(cfg: Config, strat: Strategy, folds: list[dict[str, Any]]) -> dict[str, Any]:
    """The sweep's result (``--json``, ``sweep.json``): its settings, the days, every fold,
    and the held-out verdict (over every fold's held-out blocks with ``--folds``)."""
    diffs = [d for f in folds for d in f["holdout_diffs"]]
    verdict = folds[0]["verdict"] if len(folds) == 1 else verdict_doc(diffs, cfg.seed)
    return {
        "strategy": cfg.strategy,
        "base": strat.base,
        "search": cfg.search,
        "trials": cfg.trials,
        "seed": cfg.seed,
        "holdout": None if cfg.folds else (cfg.holdout or HOLDOUT),
        "folds_asked": cfg.folds,
        "epoch": cfg.epoch,
        "batch": cfg.batch_size,
        "latency_ms": cfg.latency_ms,
        "params": {
            name: {
                "type": strat.params[name].type.__name__,
                "default": strat.params[name].default,
                "values": dim.doc(),
            }
            for name, dim in strat.space.items()
        },
        "days": [
            {"path": d.path, "sha256": d.sha256, "first_t": d.first_t, "last_t": d.last_t}
            for d in cfg.days
        ],
        "folds": folds,
        "chosen": folds[-1]["chosen"],
        "verdict": verdict,
        "reality_check": folds[-1]["reality_check"],
        "reproduce": folds[-1]["reproduce"],
    }
