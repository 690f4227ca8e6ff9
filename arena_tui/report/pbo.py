"""How often does picking a sweep's best variant pick a loser? The probability of backtest
overfitting (PBO), by combinatorially symmetric cross-validation (CSCV).

Why this module exists: a sweep ranks N variants by their block scores and keeps the best.
The reality check (``sweep.luck``) asks whether the best one's lead is larger than luck
gives; the PBO asks a different question, about the act of choosing: when the variant that
is best on some of the blocks is judged on the others, how often does it land in the bottom
half of the variants? Pure noise gives about 1/2 (choosing is a coin toss), an edge that
lasts gives about 0, a choice that picks what will do worst gives 1. It judges a way of
choosing; choosing by it would overfit it in turn (the paper's section 5.2).

Reference: D. H. Bailey, J. M. Borwein, M. López de Prado and Q. J. Zhu, "The Probability
of Backtest Overfitting", Journal of Computational Finance 20(4), 2017, 39-69 (SSRN
2326253); sections and figures are numbered as in its February 2015 revision.

The algorithm (the paper's Algorithm 2.3): the performance matrix has T rows, the blocks in
time order, by N columns, the variants. The rows are cut into S consecutive groups of equal
size (S even). Each of the C(S, S/2) choices of S/2 groups is a split: those groups, joined
in their order, are the in-sample half, the others the out-of-sample half. On each half
every column gets a statistic; n* is the column best in sample; its out-of-sample rank r
(1 = worst ... N = best) gives the relative rank w = r / (N + 1) and the logit
lambda = ln(w / (1 - w)). The PBO is the share of splits with lambda <= 0 (the paper's
phi, the integral of the logits' distribution up to 0, section 3.1): the chosen variant did
no better than the median one out of sample. The same splits give section 3.2's pairs (the
chosen variant's statistic in sample, out of sample), the least-squares line through them
(a negative slope: a better score in sample foretold a worse one out of sample) and the
probability of loss, the share of splits whose chosen variant has a statistic below 0.

Where the paper is silent, these choices:

- Rows that do not divide by S: the first ``T mod S`` (the oldest) are dropped, so every
  group has ``T // S`` rows; the paper notes the most recent observations are often the
  most representative (section 1). The order is never changed.
- The statistic: ``"mean"`` (the default), the mean block score, which is what a sweep
  ranks; or ``"sharpe"``, the mean over the population standard deviation, the paper's
  (both halves have T/2 rows, so the degrees of freedom change no rank or sign). A half
  in which a column never varies has Sharpe ratio 0 if it is all zeros (a variant that
  did not trade there) and is refused otherwise (a sure gain's ratio is infinite).
- Ties in sample: n* is the lowest column index among equals (the result is a function
  of the matrix alone). Ties out of sample: n* gets the average of the ranks it shares.
- lambda = 0 (n* exactly at the median, possible when N is odd or with ties) counts as
  overfit, as phi's integral up to 0 does (Definition 2.2's strict "below N/2" would not).
- S is the caller's: even, 2 to 24 and at most T; ``choose_groups`` is one rule for it.

The mean ranks as the sum does (a half's columns share its rows), so sums are compared:
integer scores (the verdict's e8 block scores) add up exactly below 2**53, and adding one
number to every cell changes no rank. No randomness: the splits come in
``itertools.combinations`` order (Figure 1's for S = 4), and the same matrix gives the
same result bit for bit ("running CSCV twice on the same inputs generates identical
results", section 4). Each group's column sums are taken once and a split's are a 0/1
matrix times them, in chunks of splits: no Python loop over rows or splits (S = 16 is quick).

May import: nothing of arena (numpy only).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

GROUPS = 16  # the paper's choice for most cases (section 4)
STATISTICS = ("mean", "sharpe")
MAX_GROUPS = 24  # 2,704,156 splits, the most the paper considers (section 4)
MIN_ROWS_PER_GROUP = 2  # choose_groups' rule
_CHUNK_CELLS = 1 << 22  # split x group x variant cells per step: about 32 MB of floats

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PBOResult:
    """One CSCV run. The per-split tuples are in ``cscv_splits(groups)`` order.

    ``pbo``: ``overfit / combinations``, the share of splits whose chosen variant ranks at
    or below the out-of-sample median. ``logits``: each split's lambda (finite: the rank
    is between 1 and N). ``chosen``: each split's n* (a column index). ``is_best`` and
    ``oos_of_best``: that column's statistic in and out of sample (mean block score, or
    Sharpe ratio). ``prob_oos_loss``: the share of splits with ``oos_of_best < 0``.
    ``degradation_slope`` / ``_intercept``: the least-squares line of ``oos_of_best`` on
    ``is_best`` (None when every ``is_best`` is the same, so no line is defined).
    """

    pbo: float
    combinations: int
    overfit: int  # splits with lambda <= 0
    groups: int  # S
    rows_used: int
    rows_dropped: int  # the oldest T mod S rows
    variants: int  # N
    statistic: str
    logits: tuple[float, ...]
    chosen: tuple[int, ...]
    is_best: tuple[float, ...]
    oos_of_best: tuple[float, ...]
    prob_oos_loss: float
    degradation_slope: float | None
    degradation_intercept: float | None


def cscv_splits(groups: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every (in-sample groups, out-of-sample groups) pair, in the order results use.

    The in-sample halves are the ``groups // 2``-subsets of ``range(groups)`` in
    lexicographic order, so for S = 4 the six splits are Figure 1's: AB|CD, AC|BD, AD|BC,
    BC|AD, BD|AC, CD|AB. Split i's halves are split ``len - 1 - i``'s, swapped.
    """
    _check_groups(groups)
    inside, outside = _split_arrays(groups)
    return [(tuple(i), tuple(o)) for i, o in zip(inside.tolist(), outside.tolist(), strict=True)]


@functools.cache
def _split_arrays(groups: int) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """(in-sample groups, out-of-sample groups), splits x S/2 each, ascending within a row;
    small integers with no Python tuple per split (S = 24 has 2,704,156 splits), kept per
    S (read-only), as a sweep's report may ask for several matrices."""
    count = math.comb(groups, groups // 2)
    flat = itertools.chain.from_iterable(itertools.combinations(range(groups), groups // 2))
    inside = np.fromiter(flat, dtype=np.int8, count=count * (groups // 2))
    inside = inside.reshape(count, groups // 2)
    member = np.zeros((count, groups), dtype=bool)
    np.put_along_axis(member, inside.astype(np.intp), True, axis=1)
    outside = np.nonzero(~member)[1].astype(np.int8).reshape(inside.shape)
    inside.setflags(write=False)
    outside.setflags(write=False)
    return inside, outside


def choose_groups(t_rows: int, max_groups: int = GROUPS) -> int | None:
    """The largest even S <= ``max_groups`` that leaves every group at least 2 rows.

    That is ``min(max_groups, t_rows // 2)`` rounded down to even, or None when even S = 2
    does not fit (fewer than 4 rows). Two rows a group keeps a group from being a single
    block; more groups give more splits (a finer distribution of logits) and shorter ones.
    """
    if t_rows < 0:
        raise ValueError(f"t_rows must be a number of rows, at least 0; got {t_rows}")
    if not 2 <= max_groups <= MAX_GROUPS:
        raise ValueError(f"max_groups must be from 2 to {MAX_GROUPS}; got {max_groups}")
    s = min(max_groups, t_rows // MIN_ROWS_PER_GROUP)
    s -= s % 2
    return s if s >= 2 else None


def pbo_cscv(
    matrix: Sequence[Sequence[float]] | npt.NDArray[Any],
    groups: int = GROUPS,
    statistic: str = "mean",
) -> PBOResult:
    """The PBO of choosing the best of N variants, by CSCV over ``groups`` groups of rows.

    ``matrix[t][n]``: variant n's score in block t, the blocks in time order (T x N, any
    numbers; the caller's array is not changed). ``groups``: S, even and at most T.
    ``statistic``: ``"mean"`` or ``"sharpe"``. A bad input is a one-line ``ValueError``.
    """
    m = _matrix(matrix)
    t, n = m.shape
    if n < 2:
        raise ValueError(f"the PBO ranks variants: needs at least 2 columns, got {n}")
    _check_groups(groups)
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be 'mean' or 'sharpe'; got {statistic!r}")
    if t < groups:
        hint = f"pass an even number of groups, at most {t}" if t >= 2 else "CSCV needs 2 rows"
        raise ValueError(f"groups={groups} needs {groups} rows, one per group; got {t}: {hint}")
    size = t // groups
    dropped = t - size * groups
    blocks = m[dropped:].reshape(groups, size, n)
    sums = blocks.sum(axis=1)
    inside, outside = _split_arrays(groups)
    splits = len(inside)
    parts = _group_parts(blocks) if statistic == "sharpe" else ()
    step = max(1, _CHUNK_CELLS // (groups * n))
    chunks = [
        _rank(sums, parts, inside[lo : lo + step], outside[lo : lo + step], size)
        for lo in range(0, splits, step)
    ]
    twice, best, x, y = (np.concatenate(c) for c in zip(*chunks, strict=True))
    overfit = int(np.count_nonzero(twice <= n + 1))
    slope, intercept = _line(x, y)
    return PBOResult(
        pbo=overfit / splits,
        combinations=splits,
        overfit=overfit,
        groups=groups,
        rows_used=t - dropped,
        rows_dropped=dropped,
        variants=n,
        statistic=statistic,
        logits=tuple(np.log(twice / (2 * (n + 1) - twice)).tolist()),  # ln(w / (1 - w))
        chosen=tuple(best.tolist()),
        is_best=tuple(x.tolist()),
        oos_of_best=tuple(y.tolist()),
        prob_oos_loss=int(np.count_nonzero(y < 0)) / splits,  # a Sharpe ratio < 0 iff its mean is
        degradation_slope=slope,
        degradation_intercept=intercept,
    )


def _rank(
    sums: Floats,
    parts: tuple[Floats, ...],
    inside: npt.NDArray[np.int8],
    outside: npt.NDArray[np.int8],
    size: int,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], Floats, Floats]:
    """For some splits: twice n*'s out-of-sample rank, n*, and its statistic in and out of
    sample. ``sums``: each group's column sums (S x N); ``parts``: ``_group_parts`` for the
    Sharpe ratio, empty for the mean; ``size``: rows in a group."""
    member = np.zeros((len(inside), len(sums)))
    np.put_along_axis(member, inside.astype(np.intp), 1.0, axis=1)
    half = size * inside.shape[1]
    is_key = member @ sums  # exact for integer scores (see the module docstring)
    oos_key = (1.0 - member) @ sums
    is_val, oos_val = is_key / half, oos_key / half
    if parts:
        is_key = is_val = _sharpe(parts, inside, is_val, size)
        oos_key = oos_val = _sharpe(parts, outside, oos_val, size)
    rows = np.arange(len(inside))
    best = np.argmax(is_key, axis=1)  # the first of equals: the lowest column index
    v = oos_key[rows, best][:, None]
    # the average of the ranks n* shares, doubled to stay an integer: 2 * below + equal + 1
    twice = 2 * np.count_nonzero(oos_key < v, axis=1) + np.count_nonzero(oos_key == v, axis=1)
    return twice + 1, best, is_val[rows, best], oos_val[rows, best]


def _matrix(matrix: Sequence[Sequence[float]] | npt.NDArray[Any]) -> Floats:
    try:
        m = np.array(matrix, dtype=np.float64, order="C")  # a copy, laid out one way
    except (TypeError, ValueError, OverflowError):
        raise ValueError(
            "the performance matrix must be T rows of N numbers each (blocks by variants)"
        ) from None
    if m.ndim != 2:
        raise ValueError(f"the performance matrix must be 2-D (T by N); got {m.ndim}-D")
    bad = np.argwhere(~np.isfinite(m))
    if bad.size:
        r, c = (int(i) for i in bad[0])
        raise ValueError(f"a score must be a finite number; got {m[r, c]} at row {r}, column {c}")
    if np.abs(m).max(initial=0.0) * len(m) > 1e150:  # then no sum or square overflows
        raise ValueError("the performance matrix's values are too large to add up and square")
    return m


def _check_groups(groups: int) -> None:
    if groups < 2 or groups % 2:
        raise ValueError(f"groups (the paper's S) must be even and at least 2; got {groups}")
    if groups > MAX_GROUPS:  # every split keeps a logit and a pair in the result
        raise ValueError(f"groups={groups}: {math.comb(groups, groups // 2):,} splits; at most 24")


def _group_parts(blocks: Floats) -> tuple[Floats, ...]:
    """Per group (S x N): the mean, the sum of squares about it, the least and the most."""
    means = blocks.mean(axis=1)
    squares = ((blocks - means[:, None, :]) ** 2).sum(axis=1)
    return means, squares, blocks.min(axis=1), blocks.max(axis=1)


def _sharpe(
    parts: tuple[Floats, ...], picks: npt.NDArray[np.int8], mean: Floats, size: int
) -> Floats:
    """Each split's mean / population standard deviation per column, over the groups
    ``picks`` (splits x S/2) of ``size`` rows each; ``mean`` is the halves' mean.

    The variance is summed from parts that are never negative (each group's squares about
    its own mean, plus the group means' squares about the half's), so no cancellation
    makes a spread vanish; whether a half has no spread at all is read from its extremes.
    """
    means, squares, least, most = parts
    between = ((means[picks] - mean[:, None, :]) ** 2).sum(axis=1) * size
    variance = (squares[picks].sum(axis=1) + between) / (size * picks.shape[1])
    low, high = least[picks].min(axis=1), most[picks].max(axis=1)
    flat = low == high
    if (flat & (low != 0)).any():
        split, col = (int(i) for i in np.argwhere(flat & (low != 0))[0])
        raise ValueError(
            f"statistic 'sharpe': column {col} scores {low[split, col]:g} on every row of the "
            f"half made of groups {picks[split].tolist()}: its Sharpe ratio is infinite; "
            "use statistic='mean'"
        )
    out: Floats = np.where(flat, 0.0, mean / np.sqrt(np.where(flat, 1.0, variance)))
    return out


def _line(x: Floats, y: Floats) -> tuple[float | None, float | None]:
    """Least squares y = intercept + slope * x, or (None, None) when x has no spread."""
    dx = x - x.mean()
    denominator = float((dx * dx).sum())
    if denominator == 0:
        return None, None
    slope = float((dx * (y - y.mean())).sum()) / denominator
    return slope, float(y.mean()) - slope * float(x.mean())
