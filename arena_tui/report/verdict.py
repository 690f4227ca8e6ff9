"""Does the strategy beat the random control? Block scores and a paired bootstrap.

Why this module exists: seed 004's point is that a result which does not beat a random
control over many epochs is indistinguishable from luck. One season score cannot say that;
many blocks can. The run is cut into blocks (UTC days, or ``--epoch`` blocks aligned to the
Unix epoch), each entry gets a block score from its own minute marks exactly as the engine
scores a season (integers, e8, truncating division), and the strategy's per-block lead over
the control is resampled to see whether its mean is clearly away from zero.

Block scores are integers like the engine's; the bootstrap is the shell's statistics, on
integer sums with a ``random.Random(seed)`` so the same run gives the same verdict. Its
mean and interval are integers in the block scores' unit (e8), truncated toward zero, and
the verdict is read from those integers, so report.json holds no float and a program
reading it can check the verdict against the interval it shows (floats are used only to
choose where to read the interval: the Student-t tail).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from arena_tui.run.parts import BacktestError
from arena_tui.run.stats import MarkRow
from arena_tui.util.human import plural
from engine.units import E8, tdiv

CONTROL = "control_random"
RESAMPLES = 10_000
CONFIDENCE_PCT = 95
FEW_BLOCKS = 10  # below this a bootstrap interval is rough (few distinct resamples)
UNIT_MS = {"m": 60_000, "h": 3_600_000, "d": 86_400_000}
_EPOCH = re.compile(r"([1-9][0-9]{0,8})([mhd])")


def parse_epoch(text: str) -> int:
    """``30m``, ``2h``, ``1d`` -> block length in ms; anything else is one clear line."""
    m = _EPOCH.fullmatch(text.strip())
    if m is None:
        raise BacktestError(
            f"--epoch {text!r}: expected a positive whole number and a unit m, h or d "
            "(e.g. 30m, 2h, 1d)"
        )
    return int(m.group(1)) * UNIT_MS[m.group(2)]


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


@dataclass(frozen=True)
class Bootstrap:
    """The mean block difference and the interval of the resampled means: integers in the
    block scores' unit (e8 of the starting equity: 1,000,000 is one percentage point),
    divided by the number of blocks truncating toward zero, like the engine's divisions."""

    mean: int
    low: int
    high: int
    resamples: int
    seed: int


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (Cornish-Fisher expansion in 1/df; within 1e-3 for df >= 3)."""
    z = NormalDist().inv_cdf(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def expanded_tail(n: int) -> float:
    """The tail to read the resampled means at, so the interval covers at small ``n``.

    A plain percentile interval of n blocks is too narrow when n is small: it spreads like
    a z interval with the divisor n. Hesterberg's expanded percentile interval reads the
    bootstrap distribution at ``Phi(sqrt(n / (n - 1)) * t_{n-1})`` instead, matching the
    Student-t interval's width; for 12 blocks that is the 1.1% and 98.9% points.
    """
    tail = (100 - CONFIDENCE_PCT) / 200
    if n < 3:
        return tail
    return NormalDist().cdf(math.sqrt(n / (n - 1)) * t_quantile(tail, n - 1))


def run_length(n: int) -> int:
    """How many consecutive blocks a resample draws at a time: about the cube root of n.

    Neighbouring blocks are not independent (a position held across a boundary moves both),
    so resampling single blocks would understate the spread; runs of ~n^(1/3) keep most of
    that dependence (the usual rule for a moving-block bootstrap) and 1 for a few blocks.
    """
    root: float = n ** (1 / 3)
    return max(1, round(root))


def bootstrap(diffs: Sequence[int], seed: int, resamples: int = RESAMPLES) -> Bootstrap:
    """A paired circular block bootstrap of the mean of ``diffs``, 95% expanded interval.

    Each resample is ``len(diffs)`` blocks made of runs of ``run_length`` consecutive blocks
    (wrapping around the end) starting at ``rng.randrange`` positions, summed as integers;
    the interval's ends are the sums of nearest rank ``tail`` and ``1 - tail``
    (``ceil(p * resamples)``-th smallest, ``tail`` from ``expanded_tail``), divided by the
    number of blocks (truncating toward zero: a whole number of e8).
    """
    n = len(diffs)
    if n == 0:
        raise ValueError("no blocks to resample")
    rng = random.Random(seed)
    pool = list(diffs)
    run = run_length(n)
    # the sum of each run of `run` blocks from each start, wrapping: one resample adds
    # n // run of them (and a shorter run for the rest)
    full = [sum(pool[(i + j) % n] for j in range(run)) for i in range(n)]
    rest = n % run
    part = [sum(pool[(i + j) % n] for j in range(rest)) for i in range(n)]
    starts = n // run
    sums = []
    for _ in range(resamples):
        total = sum(full[rng.randrange(n)] for _ in range(starts))
        if rest:
            total += part[rng.randrange(n)]
        sums.append(total)
    sums.sort()
    tail = expanded_tail(n)
    lo = sums[max(math.ceil(tail * resamples) - 1, 0)]
    hi = sums[min(math.ceil((1 - tail) * resamples), resamples) - 1]
    return Bootstrap(tdiv(sum(pool), n), tdiv(lo, n), tdiv(hi, n), resamples, seed)


def judge(boot: Bootstrap | None, blocks: int) -> tuple[str, str]:
    """(code, words): better / worse / indistinguishable / not_enough_blocks."""
    if boot is None or blocks < 2:
        return "not_enough_blocks", (
            f"not enough blocks to tell ({blocks}); run over more days or use --epoch"
        )
    if boot.low > 0:
        return "better", "better than the control"
    if boot.high < 0:
        return "worse", "worse than the control"
    return "indistinguishable", "indistinguishable from luck"


def paired_verdict(diffs: Sequence[int], seed: int) -> dict[str, Any]:
    """The block bootstrap of paired block differences and what it says: the fields
    report.json's "verdict" (and a sweep's held-out verdict) carry about it."""
    boot = bootstrap(diffs, seed) if len(diffs) >= 2 else None
    code, text = judge(boot, len(diffs))
    return {
        "paired_blocks": len(diffs),
        "mean_diff": None if boot is None else boot.mean,
        "interval": None if boot is None else [boot.low, boot.high],
        "confidence_pct": CONFIDENCE_PCT,
        "resamples": RESAMPLES,
        "seed": seed,
        "verdict": code,
        "text": text,
    }


def verdict_doc(
    entries: Sequence[tuple[str, Sequence[MarkRow]]],
    *,
    epoch: str,
    seed: int,
    starting_equity: int,
    lambda_num: int = 1,
    lambda_den: int = 1,
    control: str = CONTROL,
    no_control: str | None = None,
) -> dict[str, Any]:
    """Everything report.json says under "verdict"; ``entries[0]`` is the strategy.
    ``no_control``: what to say when no entry is the control (default: how to add it)."""
    block_ms = parse_epoch(epoch)
    strategy = entries[0][0] if entries else None
    scored = {
        name: block_scores(marks, block_ms, starting_equity, lambda_num, lambda_den)
        for name, marks in entries
    }
    starts = sorted({s for blocks in scored.values() for s in blocks})
    doc: dict[str, Any] = {
        "strategy": strategy,
        "control": control,
        "epoch": epoch,
        "block_ms": block_ms,
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
    if strategy is None or control not in scored or strategy == control:
        why = (
            f"the strategy is the control ({control}); compare another strategy with it"
            if strategy == control
            else no_control or f"no control in the run; add --vs baselines (it brings {control})"
        )
        return doc | {"verdict": "no_control", "text": why}
    mine, theirs = scored[strategy], scored[control]
    paired = [s for s in starts if s in mine and s in theirs]
    diffs = [mine[s].score - theirs[s].score for s in paired]
    for row in doc["blocks"]:
        s = row["start"]
        row["diff"] = mine[s].score - theirs[s].score if s in mine and s in theirs else None
    doc |= paired_verdict(diffs, seed) | {
        "note": (
            f"only {plural(len(diffs), 'block')}: the interval is rough; more days or a shorter "
            "--epoch tell more"
            if 2 <= len(diffs) < FEW_BLOCKS
            else None
        ),
    }
    return doc
