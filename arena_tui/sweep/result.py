"""A sweep's result: every fold's document, the held-out answers pooled over the folds, the
settings, and the line that reruns the chosen variant.

Why this module exists: ``driver`` runs the folds; what a finished sweep *says* (the
document ``--json`` prints, sweep.json holds and ``output`` renders) is assembled here,
from the folds alone, so ``arena sweep show`` and a resumed sweep say exactly what the
first run said.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arena_tui.run.params import ParamValue
from arena_tui.season.file import resolve_season
from arena_tui.sweep.config import Config, Strategy
from arena_tui.sweep.jobs import DayFile, EntryResult
from arena_tui.sweep.judge import holdout_doc, twins_of
from arena_tui.sweep.luck import HOLDOUT


@dataclass
class Fold:
    """A fold judged, and what the sweep's pooled held-out answers read of it."""

    doc: dict[str, Any]
    held: list[EntryResult] = field(default_factory=list)
    control_held: list[EntryResult] = field(default_factory=list)
    twins: list[list[EntryResult]] = field(default_factory=list)


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


def pooled(cfg: Config, folds: list[Fold], rules: Any) -> dict[str, Any] | None:
    """The held-out answers over every fold (each fold's chosen variant on its own held-out
    days, the twins a day beside it); the one fold's with ``--holdout``."""
    if len(folds) == 1:
        held: dict[str, Any] | None = folds[0].doc.get("verdict")
        return held
    judged = [f for f in folds if f.held]
    if not judged:
        return None
    twins = [d for f in judged for d in f.twins] if cfg.twins > 0 else None
    return holdout_doc(
        [r for f in judged for r in f.held],
        [r for f in judged for r in f.control_held],
        twins_of(twins, cfg.seed) if twins is not None else None,
        rules,
        cfg.seed,
        cfg.epoch,
    )


def sweep_doc(cfg: Config, strat: Strategy, run_folds: list[Fold]) -> dict[str, Any]:
    """The sweep's result (``--json``, ``sweep.json``): its settings, the days, every fold,
    and the held-out answers (over every fold's held-out days with ``--folds``)."""
    folds = [f.doc for f in run_folds]
    rules = resolve_season([cfg.days[0].path], None).rules
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
        "min_fills": cfg.min_fills,
        "twins": cfg.twins,
        "objective": folds[-1]["objective"],
        "folds": folds,
        "chosen": folds[-1]["chosen"],
        "verdict": pooled(cfg, run_folds, rules),
        "luck": folds[-1]["luck"],
        "reproduce": folds[-1]["reproduce"],
    }
