"""The verdict: three questions about the strategy, each answered on its own evidence.

Why this module exists: a builder asks "does this version of my agent have an edge that
survives days it was not tuned on, under these costs?". One word cannot answer that, and a
wrong confident one is the worst thing a report can say. So a run gets three answers
(docs/verdict.md):

1. **Would it be ranked?** Season 0's eligibility, as the engine decides it, and for a run
   shorter than a season what the same activity gives over one (``eligibility.pace``). An
   entry with no fills gets "no trades to judge" and no other answer: doing nothing never
   beats anything.
2. **Does it make money after every cost?** The strategy's block scores (its S over each
   block of the run, net of every fee, funding and drawdown) against zero: their mean and a
   95% interval from the stationary bootstrap (``stats.mean_interval``).
3. **Is it skill, not luck?** Where the strategy's S falls among its random twins': the same
   trips re-timed at random (``run.twins``). Rank ``r`` of ``n + 1`` gives the exact
   permutation-style p-value ``(1 + twins at or above it) / (n + 1)``.

Beside them, **the floor**: the strategy against ``control_random`` (the season's fixed
random control, momentum with coin-flip entries), block by block as before. Beating it says
the strategy beats random entries with momentum's exits under these costs; it says nothing
about a maker's or a slow strategy's timing, which is what the twins are for.

Block scores are integers like the engine's (``block_scores``); statistics are floats from
``stats`` and every one is also kept as an integer, so report.json can be checked against
the table printed above the answers. The same run and seed give the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena_tui.report import stats
from arena_tui.report.eligibility import pace_doc
from arena_tui.report.judging import parse_epoch as parse_epoch
from arena_tui.report.skill import (
    ALPHA_PCT,
    Judging,
    Twins,
    Untimed,
    measure_twins,
    skill_doc,
)
from arena_tui.report.verdict_text import fill_texts
from arena_tui.run.parts import BacktestResult
from arena_tui.run.stats import MarkRow
from arena_tui.util.human import plural
from engine import Rules
from engine.units import E8, MINUTE_MS, tdiv

CONTROL = "control_random"
# block lengths a run's verdict may be given, longest first, and how many it should have
EPOCHS = ("1d", "12h", "6h", "4h", "2h", "1h", "30m", "15m", "10m", "5m")
TARGET_BLOCKS = 24


def choose_epoch(span_ms: int) -> str:
    """The longest block length that cuts ``span_ms`` into ``TARGET_BLOCKS`` blocks or
    more (the shortest offered when none does)."""
    for text in EPOCHS:
        if -(-span_ms // parse_epoch(text)) >= TARGET_BLOCKS:  # partial blocks count
            return text
    return EPOCHS[-1]


def epoch_of(span_ms: int, epoch: str | None) -> str:
    """The block length a run over ``span_ms`` is cut at: ``epoch``, or (None or ``auto``)
    the one chosen for it."""
    return choose_epoch(span_ms) if epoch is None or epoch == "auto" else str(epoch)


def may_need_intervals(span_ms: int, epoch: str | None) -> bool:
    """Whether a run over ``span_ms`` may be cut into ``stats.MIN_BLOCKS`` blocks or more
    at ``epoch`` (None or ``auto``: chosen for it): only then can its verdict call for a
    bootstrap interval (``report.statsworker`` is started for it before the pass)."""
    block_ms = parse_epoch(epoch_of(span_ms, epoch))
    return -(-max(0, span_ms) // block_ms) >= stats.MIN_BLOCKS


def span_words(span_ms: int) -> str:
    """A run's length for a person: ``6 h``, ``3 days``, ``45 min``."""
    minutes = -(-span_ms // MINUTE_MS)
    if minutes >= 2 * 1440:
        return f"{minutes / 1440:.3g} days"
    if minutes >= 60:
        return f"{minutes / 60:.2g} h" if minutes % 60 else f"{minutes // 60} h"
    return f"{minutes} min"


@dataclass(frozen=True)
class Block:
    """One entry's score over one block (money e6, ratios e8)."""

    start: int  # the block covers marks t with start < t <= end
    end: int
    marks: int
    open_equity: int
    close_equity: int
    ret: int
    mdd: int
    score: int


def block_scores(
    marks: Sequence[MarkRow],
    block_ms: int,
    starting_equity: int,
    lambda_num: int = 1,
    lambda_den: int = 1,
) -> dict[int, Block]:
    """Each block's R, MDD and S = R - lambda * MDD from ``marks``, keyed by block start.

    A mark at ``t`` belongs to the block ``(start, start + block_ms]`` (the mark at a
    block's boundary closes the minute before it, as the engine's day of a mark is
    ``(t - 1) // DAY``). The block opens at the equity of the last mark at or before its
    start (the starting equity before any mark); R runs from there to its last mark; MDD
    is the largest drawdown from the block's running peak, which starts at the opening.
    """
    out: dict[int, Block] = {}
    equity = starting_equity  # the last mark's equity so far
    i, n = 0, len(marks)
    while i < n:
        start = (marks[i].t - 1) // block_ms * block_ms
        end = start + block_ms
        opening = peak = equity
        mdd = 0
        j = i
        while j < n and marks[j].t <= end:
            equity = marks[j].equity
            peak = max(peak, equity)
            mdd = max(mdd, tdiv((peak - equity) * E8, peak))
            j += 1
        ret = tdiv((equity - opening) * E8, opening)
        score = ret - tdiv(mdd * lambda_num, lambda_den)
        out[start] = Block(start, end, j - i, opening, equity, ret, mdd, score)
        i = j
    return out


def interval_doc(values: Sequence[int], seed: int) -> dict[str, Any] | None:
    """``stats.mean_interval``'s document (None below ``stats.MIN_BLOCKS`` blocks)."""
    if len(values) < stats.MIN_BLOCKS:
        return None
    return stats.mean_interval(values, seed).doc()


def paired_verdict(diffs: Sequence[int], seed: int) -> dict[str, Any]:
    """A paired comparison: the mean of per-block differences (the strategy's block score
    minus the other's) and its interval: better, worse, indistinguishable or
    too_few_blocks. What report.json's "floor" and a sweep's held-out floor carry."""
    doc = interval_doc(diffs, seed)
    base: dict[str, Any] = {"paired_blocks": len(diffs)}
    if doc is None:
        return base | {
            "answer": "too_few_blocks",
            "text": f"{plural(len(diffs), 'paired block')}: too few to tell (at least "
            f"{stats.MIN_BLOCKS}; a shorter --epoch gives more)",
        }
    lo, hi = doc["interval"]
    answer = "better" if lo > 0 else "worse" if hi < 0 else "indistinguishable"
    return base | doc | {"answer": answer}


def money_doc(blocks: Sequence[int], seed: int, fills: int) -> dict[str, Any]:
    """Question 2: the strategy's block scores against zero."""
    if fills == 0:
        return {"answer": "no_trades", "blocks": len(blocks)}
    doc = interval_doc(blocks, seed)
    if doc is None:
        return {"answer": "too_few_blocks", "blocks": len(blocks)}
    lo, hi = doc["interval"]
    answer = "makes_money" if lo > 0 else "loses_money" if hi < 0 else "unclear"
    return {"answer": answer, "blocks": len(blocks)} | doc


@dataclass(frozen=True)
class Judged:
    """The strategy as the verdict needs it: its ranking row (the engine's figures), fills,
    fees and rejections, and its minute marks."""

    name: str
    row: dict[str, Any]
    marks: Sequence[MarkRow]
    fills: int
    fees: int
    rejections: dict[str, int]


def verdict_doc(
    strategy: Judged | None,
    others: Sequence[tuple[str, Sequence[MarkRow]]],
    *,
    rules: Rules,
    epoch: str | None,
    seed: int,
    span: tuple[int, int],
    twins: Twins | Untimed | str | None = None,
    control: str = CONTROL,
    no_control: str | None = None,
) -> dict[str, Any]:
    """Everything report.json says under "verdict" (see the module docstring).

    ``others``: the other entries' marks (the block table; the control among them for the
    floor). ``epoch``: the block length (None or ``auto``: chosen for the run's ``span``,
    the window its marks cover). ``no_control``: what to say when no entry is the control.
    """
    length = max(0, span[1] - span[0])
    chosen = epoch is None or epoch == "auto"
    text = epoch_of(length, epoch)
    block_ms = parse_epoch(text)
    entries = ([(strategy.name, strategy.marks)] if strategy is not None else []) + list(others)
    lam = (rules.lambda_num, rules.lambda_den)
    scored = {
        name: block_scores(marks, block_ms, rules.starting_equity, *lam) for name, marks in entries
    }
    starts = sorted({s for blocks in scored.values() for s in blocks})
    doc: dict[str, Any] = {
        "strategy": None if strategy is None else strategy.name,
        "control": control,
        "epoch": text,
        "block_ms": block_ms,
        "epoch_chosen": f"chosen: the run is {span_words(length)}" if chosen else None,
        "blocks": [
            {
                "start": s,
                "end": s + block_ms,
                "scores": {
                    name: {"return": b.ret, "mdd": b.mdd, "score": b.score, "marks": b.marks}
                    for name, blocks in scored.items()
                    if (b := blocks.get(s)) is not None
                },
            }
            for s in starts
        ],
    }
    if strategy is None:
        why = no_control or "no entry to judge"
        return doc | {"verdict": "no_strategy", "text": why}
    mine = scored[strategy.name]
    fills = strategy.fills
    doc["trades"] = {"fills": fills, "rejections": dict(sorted(strategy.rejections.items()))}
    doc["ranked"] = pace_doc(strategy.row, strategy.marks, rules, fills)
    doc["money"] = money_doc([mine[s].score for s in sorted(mine)], seed, fills)
    active = strategy.row.get("active_marks", 0)
    doc["skill"] = skill_doc(strategy.row["score"], fills, strategy.fees, active, twins)
    doc["floor"] = _floor(doc, strategy, scored, seed, control, no_control)
    doc["verdict"] = "no_trades" if fills == 0 else doc["skill"]["answer"]
    return fill_texts(doc)


def _floor(
    doc: dict[str, Any],
    strategy: Judged,
    scored: dict[str, dict[int, Block]],
    seed: int,
    control: str,
    no_control: str | None,
) -> dict[str, Any]:
    """The strategy against the season's fixed random control, block by block."""
    if strategy.fills == 0:
        return {"answer": "no_trades"}
    if strategy.name == control:
        return {"answer": "is_control", "why": f"the strategy is the control ({control})"}
    if control not in scored:
        why = no_control or f"no control in the run; add --vs baselines (it brings {control})"
        return {"answer": "no_control", "why": why}
    mine, theirs = scored[strategy.name], scored[control]
    paired = [s for s in sorted(mine) if s in theirs]
    for row in doc["blocks"]:
        s = row["start"]
        row["diff"] = mine[s].score - theirs[s].score if s in mine and s in theirs else None
    diffs = [mine[s].score - theirs[s].score for s in paired]
    return paired_verdict(diffs, seed) | {"diffs": diffs}


def judged(result: BacktestResult) -> Judged | None:
    """The run's strategy (its first entrant) as the verdict reads it."""
    if not result.entrants:
        return None
    e = result.entrants[0]
    rows = {r["entry"]: r for r in result.replay.ranking}
    s = e.stats
    return Judged(
        e.name,
        rows[e.name],
        s.marks,
        len(s.fills),
        s.venue_fees + s.exec_fees,
        dict(s.rejections),
    )


__all__ = [
    "ALPHA_PCT", "CONTROL", "Judged", "Judging", "Twins", "Untimed", "measure_twins",
    "skill_doc",
]  # fmt: skip
