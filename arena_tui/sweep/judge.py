"""A fold judged: which variants may be chosen, the luck of having tried them all, and the
chosen one's three answers on the held-out days.

Pure: it reads the stored per-day results (``EntryResult``: the day's score, its block
scores, its fills and activity) and returns a JSON-able document; the driver decides what
ran. The three questions are the report's (``report.verdict``, docs/verdict.md), asked of
the chosen variant on days it was not chosen on:

- **the objective** is what the season ranks: mean training S among the variants that
  trade (at least ``min_fills`` fills over the training days) and would be ranked at the
  training days' pace (``report.eligibility.pace``); the others are listed, marked, and
  never chosen. If none qualifies, nothing is chosen and the sweep says so.
- **luck over the variants tried** (training blocks, qualifying variants): Hansen's SPA
  against zero (is the best of K better than nothing after trying K?), Romano and Wolf's
  StepM (which, each), the model confidence set (which are tied with the best), and the
  probability of backtest overfitting by CSCV (``report.pbo``).
- **the held-out answers** for the chosen variant: ranked at the held-out pace, money
  (its held-out block scores against zero), skill (its mean held-out S among its random
  twins', ``run.twins``, one set a day) and the floor (against control_random).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena_tui.report.eligibility import pace
from arena_tui.report.skill import MIN_FREEDOM_E8
from arena_tui.report.verdict import (
    Twins,
    Untimed,
    money_doc,
    paired_verdict,
    skill_doc,
)
from arena_tui.report.verdict_text import fill_texts
from arena_tui.run.params import ParamValue
from arena_tui.sweep.jobs import EntryResult
from arena_tui.sweep.luck import luck_doc
from arena_tui.util.human import plural
from engine import Rules
from engine.units import tdiv

MIN_FILLS = 1  # a variant needs this many training fills to be chosen (--min-fills)
DAY_MARKS = 1440


def mean(values: Sequence[int]) -> int:
    return tdiv(sum(values), len(values)) if values else 0


def summed(results: Sequence[EntryResult]) -> tuple[int, dict[str, int]]:
    """Fills and rejections by reason over days."""
    fills = sum(r.fills for r in results)
    rejections: dict[str, int] = {}
    for r in results:
        for reason, n in r.rejections.items():
            rejections[reason] = rejections.get(reason, 0) + n
    return fills, dict(sorted(rejections.items()))


def blocks_of(results: Sequence[EntryResult]) -> dict[int, int]:
    """Block start -> block score over the days given."""
    return {start: score for r in results for start, score in r.blocks}


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


def ranked_doc(results: Sequence[EntryResult], rules: Rules) -> dict[str, Any]:
    """Would it be ranked, at the pace of these days (each day its own run)."""
    fills = sum(r.fills for r in results)
    days = sum(max(1, -(-r.marks // DAY_MARKS)) for r in results)
    return pace(
        rules,
        eligible=False,
        fill_days=sum(r.fill_days for r in results),
        days=days,
        active_marks=sum(r.active_marks for r in results),
        marks=sum(r.marks for r in results),
        fills=fills,
    )


@dataclass(frozen=True)
class Trial:
    """One variant of a fold: its swept values and its results on the fold's days."""

    name: str
    values: dict[str, ParamValue]
    train: list[EntryResult]


def row(
    name: str, values: Mapping[str, ParamValue], results: Sequence[EntryResult], rules: Rules
) -> dict[str, Any]:
    fills, rejections = summed(results)
    ranked = ranked_doc(results, rules)
    return {
        "name": name,
        "params": dict(values),
        "score": mean([r.score for r in results]),
        "day_scores": [r.score for r in results],
        "fills": fills,
        "rejections": rejections,
        "ranked": ranked["answer"],
        "fill_days": ranked["fill_days"],
        "days": ranked["days"],
        "active_share": ranked["active_share"],
    }


def qualifies(r: dict[str, Any], min_fills: int) -> str | None:
    """Why a variant may not be chosen (None: it may)."""
    if r["fills"] < max(1, min_fills):
        return "no fills" if r["fills"] == 0 else f"{r['fills']} fills, under --min-fills"
    if r["ranked"] not in ("yes", "at_pace"):
        return "would not be ranked at this pace"
    return None


def order(trials: Sequence[Trial], rules: Rules, min_fills: int) -> list[dict[str, Any]]:
    """Every variant's row, the ones that may be chosen first by mean training S (ties by
    name), then the others by the same; ``rank`` only for the former."""
    rows = [row(t.name, t.values, t.train, rules) for t in trials]
    for r in rows:
        r["excluded"] = qualifies(r, min_fills)
    rows.sort(key=lambda r: (r["excluded"] is not None, -r["score"], r["name"]))
    for i, r in enumerate(rows):
        r["rank"] = i + 1 if r["excluded"] is None else None
    return rows


def twins_of(days: Sequence[Sequence[EntryResult]], seed: int) -> Twins | Untimed | str:
    """The chosen variant's twins over the held-out days: twin ``j``'s mean S over the
    days (each day's twins are its own), as many twins as every day has; ``Untimed`` when
    its trips left a day no room to move (that day's job traded no twin: ``twinjob``; a
    store from before has the day's twins, each with that day's freedom)."""
    n = min((len(d) for d in days), default=0)
    if n == 0:
        return "no twins: the chosen variant made no trip on a held-out day"
    freedom = min(d[0].freedom for d in days)
    if freedom < MIN_FREEDOM_E8:
        return Untimed(seed=seed, trips=0, freedom_e8=freedom)
    return Twins(
        scores=[mean([d[j].score for d in days]) for j in range(n)],
        seed=seed,
        trips=0,
        freedom_e8=freedom,
        fills=[sum(d[j].fills for d in days) for j in range(n)],
        fees=[sum(d[j].fees for d in days) for j in range(n)],
        active=[sum(d[j].active_marks for d in days) for j in range(n)],
        marks=sum(d[0].marks for d in days),
        skipped=0,
        legs=0,
    )


def holdout_doc(
    held: Sequence[EntryResult],
    control: Sequence[EntryResult],
    twins: Twins | Untimed | str | None,
    rules: Rules,
    seed: int,
    epoch: str,
) -> dict[str, Any]:
    """The chosen variant's answers on the held-out days (the report's, docs/verdict.md)."""
    fills = sum(r.fills for r in held)
    diffs = block_diffs(held, control)
    doc: dict[str, Any] = {
        "epoch": epoch,
        "control": "control_random",
        "strategy": None,
        "ranked": ranked_doc(held, rules),
        "money": money_doc([s for _, s in sorted(blocks_of(held).items())], seed, fills),
        "skill": skill_doc(
            mean([r.score for r in held]),
            fills,
            sum(r.fees for r in held),
            sum(r.active_marks for r in held),
            twins,
        ),
        "floor": (
            {"answer": "no_trades"}
            if fills == 0
            else paired_verdict([diffs[k] for k in sorted(diffs)], seed)
        ),
    }
    if len(held) > 1 and "score" in doc["skill"]:
        doc["skill"]["days"] = len(held)  # S is the mean daily S, the twins' too
    doc["verdict"] = "no_trades" if fills == 0 else doc["skill"]["answer"]
    return fill_texts(doc)


def judge_fold(
    index: int,
    trials: Sequence[Trial],
    control_train: Sequence[EntryResult],
    held: Sequence[EntryResult] | None,
    control_held: Sequence[EntryResult],
    twins: Sequence[Sequence[EntryResult]] | None,
    *,
    rules: Rules,
    seed: int,
    epoch: str,
    min_fills: int = MIN_FILLS,
) -> dict[str, Any]:
    """A fold's document; ``held``/``twins``: the chosen variant's held-out results and
    its twins a day (None: nothing qualified, nothing was chosen)."""
    rows = order(trials, rules, min_fills)
    by_name = {t.name: t for t in trials}
    names = [r["name"] for r in rows if r["excluded"] is None]
    luck = luck_doc(names, [blocks_of(by_name[n].train) for n in names], seed)
    if luck is not None and "mcs" in luck:
        for r in rows:
            r["beats_zero"] = r["name"] in luck["stepm"]
            r["tied_best"] = r["name"] in luck["mcs"]
    control = row("control_random", {}, control_train, rules)
    control["holdout_score"] = mean([r.score for r in control_held])
    doc: dict[str, Any] = {
        "fold": index,
        "objective": (
            f"mean training S among the variants with at least "
            f"{plural(max(1, min_fills), 'training fill')} that would be ranked at the "
            "training days' pace"
        ),
        "min_fills": min_fills,
        "variants": rows,
        "control": control,
        "luck": luck,
    }
    if held is None or rows[0]["excluded"] is not None:
        return doc | {"chosen": None, "verdict": None, "holdout_diffs": []}
    chosen = by_name[rows[0]["name"]]
    held_row = row(chosen.name, chosen.values, held, rules)
    twin_doc = twins_of(twins, seed) if twins is not None else None
    diffs = block_diffs(held, control_held)
    return doc | {
        "chosen": {
            "name": chosen.name,
            "params": dict(chosen.values),
            "train_score": rows[0]["score"],
            "holdout_score": held_row["score"],
            "holdout_day_scores": held_row["day_scores"],
            "holdout_fills": held_row["fills"],
            "holdout_rejections": held_row["rejections"],
        },
        "holdout_diffs": [diffs[k] for k in sorted(diffs)],
        "holdout_blocks": [s for _, s in sorted(blocks_of(held).items())],
        "verdict": holdout_doc(held, control_held, twin_doc, rules, seed, epoch),
    }
