"""Honest about luck: which days a sweep may tune on, and how lucky its best variant is.

Why this module exists: a search that tries K variants and reports the best one's score on
the days it was chosen on reports luck as skill. Two guards, both here. The days are split
by calendar order, never shuffled: the search ranks variants on the training days only and
the chosen variant is then judged on later days it never saw (``split_holdout``, or
``walk_forward`` folds). And on the training days themselves, White's reality check asks
how often the best of K variants would lead the control by as much as the observed best
does if no variant had an edge at all (``reality_check``).

The reality check speaks the verdict's units and uses its bootstrap: the inputs are block
score differences against the control (e8 of the starting equity, the blocks of
``report.verdict.block_scores``), resampled in circular runs of ``report.verdict.run_length``
consecutive blocks drawn with a ``random.Random(seed)``, summed as integers, so the same
sweep gives the same p-value. Floats appear only in the p-value itself (a share of
resamples) and in reading a holdout fraction.

May import: ``report`` (the block bootstrap's conventions), ``util``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import TypeVar

from arena_tui.sweep import SweepError

T = TypeVar("T")

RESAMPLES = 2000
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
