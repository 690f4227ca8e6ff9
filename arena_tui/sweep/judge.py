"""A fold judged: variants ranked on training days, the reality check over all of them, the
chosen one against the control on the held-out days (the report's block bootstrap).

Pure: it reads the stored per-day results (``EntryResult``: the day's score and its block
scores) and returns a JSON-able document; the driver decides what ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena_tui.report.verdict import paired_verdict
from arena_tui.run.params import ParamValue
from arena_tui.sweep.jobs import EntryResult
from arena_tui.sweep.luck import reality_check
from engine.units import tdiv

ALPHA_PCT = (
    5  # the reality check's p-value below this: the best beats the control by more than luck
)


def mean(values: Sequence[int]) -> int:
    return tdiv(sum(values), len(values)) if values else 0


def block_diffs(mine: Sequence[EntryResult], control: Sequence[EntryResult]) -> dict[int, int]:
    """Block start -> this entry's block score minus the control's, over the days given in
    parallel (the same day at each index); blocks only one of them has are left out."""
    out: dict[int, int] = {}
    for a, b in zip(mine, control, strict=True):
        theirs = dict(b.blocks)
        for start, score in a.blocks:
            if start in theirs:
                out[start] = score - theirs[start]
    return out


def summed(results: Sequence[EntryResult]) -> tuple[int, dict[str, int]]:
    """Fills and rejections by reason over days."""
    fills = sum(r.fills for r in results)
    rejections: dict[str, int] = {}
    for r in results:
        for reason, n in r.rejections.items():
            rejections[reason] = rejections.get(reason, 0) + n
    return fills, dict(sorted(rejections.items()))


def row(
    name: str, values: Mapping[str, ParamValue], results: Sequence[EntryResult]
) -> dict[str, Any]:
    fills, rejections = summed(results)
    return {
        "name": name,
        "params": dict(values),
        "score": mean([r.score for r in results]),
        "day_scores": [r.score for r in results],
        "fills": fills,
        "rejections": rejections,
    }


def luck_doc(
    diffs: Sequence[Sequence[int]], names: Sequence[str], seed: int
) -> dict[str, Any] | None:
    """White's reality check over every variant's training block leads (None below 2 blocks)."""
    if not diffs or len(diffs[0]) < 2:
        return None
    rc = reality_check(diffs, seed=seed)
    k = len(diffs)
    if rc.p_value * 100 < ALPHA_PCT:
        text = f"the best of {k} beats the control by more than luck gives {k} tries"
    else:
        text = f"the best of {k}'s lead over the control is within what luck gives {k} tries"
    return {
        "variants": k,
        "blocks": len(diffs[0]),
        "best": names[rc.best],
        "best_mean_diff": rc.best_mean,
        "p_value": round(rc.p_value, 4),
        "resamples": rc.resamples,
        "seed": rc.seed,
        "verdict": "better" if rc.p_value * 100 < ALPHA_PCT else "luck",
        "text": text,
    }


def verdict_doc(diffs: Sequence[int], seed: int) -> dict[str, Any]:
    """The held-out verdict: the report's block bootstrap of the chosen variant's lead."""
    return paired_verdict(diffs, seed)


@dataclass(frozen=True)
class Trial:
    """One variant of a fold: its swept values and its results on the fold's days."""

    name: str
    values: dict[str, ParamValue]
    train: list[EntryResult]


def judge_fold(
    index: int,
    trials: Sequence[Trial],
    control_train: Sequence[EntryResult],
    best_held: Sequence[EntryResult],
    control_held: Sequence[EntryResult],
    seed: int,
) -> dict[str, Any]:
    """A fold's document; ``trials`` ranked best first (``trials[0]`` is the chosen one)."""
    control_keys = set(block_diffs(control_train, control_train))
    leads = [block_diffs(t.train, control_train) for t in trials]
    common = sorted(control_keys.intersection(*[set(d) for d in leads]))
    luck = luck_doc([[d[k] for k in common] for d in leads], [t.name for t in trials], seed)
    held_diffs = block_diffs(best_held, control_held)
    chosen = trials[0]
    held_row = row(chosen.name, chosen.values, best_held)
    control = row("control_random", {}, control_train)
    control_h = row("control_random", {}, control_held)
    return {
        "fold": index,
        "variants": [
            {"rank": i + 1} | row(t.name, t.values, t.train) for i, t in enumerate(trials)
        ],
        "control": control | {"holdout_score": control_h["score"]},
        "chosen": {
            "name": chosen.name,
            "params": dict(chosen.values),
            "train_score": mean([r.score for r in chosen.train]),
            "holdout_score": held_row["score"],
            "holdout_day_scores": held_row["day_scores"],
            "holdout_fills": held_row["fills"],
            "holdout_rejections": held_row["rejections"],
        },
        "holdout_diffs": [held_diffs[k] for k in sorted(held_diffs)],
        "verdict": verdict_doc([held_diffs[k] for k in sorted(held_diffs)], seed),
        "reality_check": luck,
    }
