"""Honest about luck: which days a sweep may tune on, and how lucky its choice is.

Why this module exists: a search that tries K variants and reports the best one's score on
the days it was chosen on reports luck as skill. Two guards, both here. The days are split
by calendar order, never shuffled: the search ranks variants on the training days only and
the chosen variant is then judged on later days it never saw (``split_holdout``, or
``walk_forward`` folds). And on the training days themselves (``luck_doc``), over the
variants that may be chosen: Hansen's SPA asks whether the best of K beats doing nothing
by more than trying K gives by luck, Romano and Wolf's StepM which do each, the model
confidence set which are tied with the best (all from ``report.stats``, on arch), and
CSCV the probability that choosing the best on some blocks picks one below the median on
the others (``report.pbo``). Block scores are the verdict's (e8, ``report.verdict``).

May import: ``report`` (the statistics and the block scores' conventions), ``util``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, TypeVar

from arena_tui.report import stats
from arena_tui.sweep import SweepError

T = TypeVar("T")

RESAMPLES = 2000
MCS_MAX = 50  # the model confidence set is made over at most this many best-ranked variants
HOLDOUT = "30%"  # the default share of days held out (the last ones, by calendar order)
_FRACTION = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(%?)\s*")


def parse_fraction(text: str) -> Fraction:
    """``--holdout``: ``30%`` or ``0.3`` -> 3/10; strictly between 0 and 1, else one line."""
    m = _FRACTION.fullmatch(text)
    value = None if m is None else Fraction(m.group(1)) / (100 if m.group(2) else 1)
    if value is None or not 0 < value < 1:
        raise SweepError(
            f"--holdout {text!r}: expected a share of the days strictly between 0 and 1, "
            "as a percentage (30%) or a fraction (0.3)"
        )
    return value


def split_holdout(days: Sequence[T], fraction: float | Fraction | str) -> tuple[list[T], list[T]]:
    """(training days, held-out days): the LAST ``ceil(fraction * n)`` days are held out.

    ``days`` must already be in calendar order (the caller sorts them by first input time);
    they are never shuffled, so every held-out day comes after every training day. At least
    one day on each side, else a ``SweepError`` saying how many days there are.
    ``fraction``: a number in (0, 1) or a ``parse_fraction`` text (``"30%"``). The product
    is exact (``0.3 * 10`` holds out 3 days, not 4).
    """
    share = parse_fraction(fraction) if isinstance(fraction, str) else _exact(fraction)
    n = len(days)
    held = math.ceil(share * n)
    if n < 2 or held >= n:
        raise SweepError(
            f"holding out {_percent(share)} of {_days(n)} leaves no "
            f"{'day to hold out' if n < 2 else 'training day'}: a sweep needs at least one "
            "training day and one held-out day (give more days or a smaller --holdout)"
        )
    return list(days[: n - held]), list(days[n - held :])


def walk_forward(days: Sequence[T], k: int) -> list[tuple[list[T], list[T]]]:
    """K walk-forward folds by calendar order, with an expanding training window.

    The days are cut into a first training stretch and K test stretches of ``n // (k + 1)``
    days each (the first stretch takes the remainder); fold i trains on every day before
    its test stretch. So each test day is judged once, by a variant tuned only on earlier
    days. Needs ``n >= k + 1`` days and ``k >= 1``, else a ``SweepError``.
    """
    n = len(days)
    if k < 1:
        raise SweepError(f"--folds {k}: expected at least 1 fold")
    if n < k + 1:
        raise SweepError(
            f"--folds {k} needs at least {k + 1} days (a training day, then a test day per "
            f"fold); there {'is' if n == 1 else 'are'} {_days(n)}"
        )
    size = n // (k + 1)
    folds = []
    for i in range(k):
        cut = n - (k - i) * size
        folds.append((list(days[:cut]), list(days[cut : cut + size])))
    return folds


def _exact(fraction: float | Fraction) -> Fraction:
    """A float share as the decimal it was written as (0.3 -> 3/10), checked in (0, 1)."""
    value = Fraction(repr(fraction)) if isinstance(fraction, float) else Fraction(fraction)
    if not 0 < value < 1:
        raise SweepError(f"holdout {fraction}: expected a share strictly between 0 and 1")
    return value


def _percent(share: Fraction) -> str:
    pct = share * 100
    return f"{pct.numerator}%" if pct.denominator == 1 else f"{float(pct):g}%"


def _days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


def luck_doc(
    names: Sequence[str], per: Sequence[Mapping[int, int]], seed: int
) -> dict[str, Any] | None:
    """SPA, StepM and the MCS over the qualifying variants' training block scores against
    zero, and PBO by CSCV; None below two common blocks or with no variant to judge."""
    if not names:
        return None
    common = sorted(set(per[0]).intersection(*per[1:]))
    if len(common) < stats.MIN_BLOCKS:
        return {"variants": len(names), "blocks": len(common), "answer": "too_few_blocks"}
    matrix = [[p[b] for b in common] for p in per]
    zero = [0] * len(common)
    spa = stats.spa(zero, matrix, seed)
    better = stats.stepm(zero, matrix, seed)
    tied = stats.mcs(matrix[:MCS_MAX], seed)  # the best-ranked: it grows as K squared
    doc: dict[str, Any] = {
        "variants": len(names),
        "blocks": len(common),
        "benchmark": "zero (no trading)",
        "spa": {
            "p_value": round(spa.p_consistent, 4),
            "p_lower": round(spa.p_lower, 4),
            "p_upper": round(spa.p_upper, 4),
            "best": names[spa.best],
            "block_length": round(spa.block, 4),
            "resamples": spa.resamples,
            "seed": spa.seed,
        },
        "stepm": [names[i] for i in better],
        "mcs": [names[i] for i in tied],
        "chosen": names[0],
        "chosen_beats_zero": 0 in better,
        "answer": "edge" if spa.p_consistent * 100 < stats.ALPHA * 100 else "luck",
    }
    from arena_tui.report.pbo import choose_groups, pbo_cscv  # numpy: only when judging

    groups = choose_groups(len(common))
    if len(names) >= 2 and groups is not None:
        result = pbo_cscv([[m[b] for m in matrix] for b in range(len(common))], groups)
        doc["pbo"] = {
            "pbo": round(result.pbo, 4),
            "combinations": result.combinations,
            "groups": result.groups,
            "prob_oos_loss": round(result.prob_oos_loss, 4),
        }
    return doc
