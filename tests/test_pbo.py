"""The probability of backtest overfitting by CSCV (arena_tui/report/pbo.py), tested against
the paper and where the true answer is known.

The paper: D. H. Bailey, J. M. Borwein, M. López de Prado and Q. J. Zhu, "The Probability
of Backtest Overfitting", Journal of Computational Finance 20(4), 2017 (SSRN 2326253),
read in its February 2015 revision. Its exact, reachable numbers are few: the N = 3 ranking
example of section 2.1, the S = 4 splits of Figure 1 and the count of eq. (2.3); they are
checked as printed. Its PBOs (74% for Figure 2, 55% and 13% for the two seasonal strategies
of section 6) come from simulated series it does not publish (8,800 configurations on a
random walk made by the code of its reference [1]), so they cannot be reproduced; instead a
4 x 3 matrix is worked by hand split by split, and the paper's claims are checked where the
truth is known: pure noise gives 1/2, a lasting edge about 0, a zero-sum full sample 1
(the "compensation effects" of section 3.2), a negative performance-degradation slope on
noise. A slow reference, Algorithm 2.3 step by step in exact arithmetic, pins the fast code
on small random matrices, ties included.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arena_tui.report.pbo import PBOResult, choose_groups, cscv_splits, pbo_cscv

Matrix = list[list[int]]


@dataclass
class Reference:
    logits: list[float]
    chosen: list[int]
    is_best: list[float]
    oos_of_best: list[float]
    tied_in_sample: bool  # some split's best in-sample statistic is shared


def reference(matrix: Sequence[Sequence[float]], groups: int, statistic: str = "mean") -> Reference:
    """Algorithm 2.3 as the paper words it, one split at a time: join the rows of J and of
    its complement in their order, compute each column's statistic, rank. The mean is a
    Fraction (exact, for integer matrices); the Sharpe ratio is statistics' fmean / pstdev.
    The oldest T mod S rows are dropped (the module's choice; the paper assumes none)."""
    t, n = len(matrix), len(matrix[0])
    size = t // groups
    rows = matrix[t - size * groups :]
    subs = [rows[g * size : (g + 1) * size] for g in range(groups)]

    def perf(column: Sequence[float]) -> Fraction | float:
        if statistic == "mean":
            return sum((Fraction(v) for v in column), Fraction(0)) / len(column)
        spread = statistics.pstdev(column)
        return statistics.fmean(column) / spread if spread else 0.0

    out = Reference([], [], [], [], False)
    for ins in itertools.combinations(range(groups), groups // 2):
        j = [row for g in ins for row in subs[g]]  # a) the training set
        jbar = [row for g in range(groups) if g not in ins for row in subs[g]]  # b) testing
        r = [perf([row[c] for row in j]) for c in range(n)]  # c) in sample
        rbar = [perf([row[c] for row in jbar]) for c in range(n)]  # d) out of sample
        star = r.index(max(r))  # e) n*, the first of equals
        out.tied_in_sample |= r.count(max(r)) > 1
        below = sum(v < rbar[star] for v in rbar)
        rank = below + Fraction(sum(v == rbar[star] for v in rbar) + 1, 2)  # average rank
        w = rank / (n + 1)  # f)
        out.logits.append(math.log(w / (1 - w)))  # g)
        out.chosen.append(star)
        out.is_best.append(float(r[star]))
        out.oos_of_best.append(float(rbar[star]))
    return out


@st.composite
def matrices(
    draw: st.DrawFn, low: int = -3, high: int = 3, spare_rows: bool = True
) -> tuple[Matrix, int]:
    """(an integer matrix, S): S in 2, 4, 6, 1 to 3 rows a group, maybe up to S - 1 rows
    more (dropped), 2 to 5 columns. A narrow range of values makes ties common."""
    groups = draw(st.sampled_from([2, 4, 6]))
    t = groups * draw(st.integers(1, 3)) + (draw(st.integers(0, groups - 1)) if spare_rows else 0)
    n = draw(st.integers(2, 5))
    row = st.lists(st.integers(low, high), min_size=n, max_size=n)
    return draw(st.lists(row, min_size=t, max_size=t)), groups


def noise(seed: int, t: int = 160, n: int = 50) -> npt.NDArray[np.float64]:
    return np.random.default_rng(seed).standard_normal((t, n))


# --- the paper ---------------------------------------------------------------------------


def test_the_papers_ranking_example_of_section_2_1() -> None:
    """Section 2.1: N = 3, R = (0.5, 1.1, 0.7) in sample and (0.6, 0.7, 1.3) out of sample,
    ranked r = (1, 3, 2) and r-bar = (1, 2, 3) (1 = worst). As a matrix of those two rows
    and S = 2 the first split is exactly that pair: n* is column 1 (its r is 3), its
    out-of-sample rank 2 is the median of 3, w = 2 / 4, lambda = 0, which phi (the integral
    up to 0, section 3.1) counts as overfit. The second split swaps the halves: n* is column
    2 (1.3), out of sample 0.7 of (0.5, 1.1, 0.7), rank 2 again. So PBO = 1."""
    r = pbo_cscv([[0.5, 1.1, 0.7], [0.6, 0.7, 1.3]], groups=2)
    assert (r.pbo, r.overfit, r.combinations, r.variants) == (1.0, 2, 2, 3)
    assert r.logits == (0.0, 0.0)
    assert r.chosen == (1, 2)
    assert (r.is_best, r.oos_of_best) == ((1.1, 1.3), (0.7, 0.7))
    assert r.prob_oos_loss == 0.0
    assert (r.degradation_slope, r.degradation_intercept) == (0.0, 0.7)  # 0.7 whatever IS


def test_the_splits_are_figure_1s_and_each_half_is_used_both_ways() -> None:
    """Figure 1 (S = 4, groups A B C D): IS|OOS = AB|CD, AC|BD, AD|BC, BC|AD, BD|AC, CD|AB;
    "each training subset combination is re-used as a testing subset and vice-versa"."""
    a, b, c, d = 0, 1, 2, 3
    assert cscv_splits(4) == [
        ((a, b), (c, d)),
        ((a, c), (b, d)),
        ((a, d), (b, c)),
        ((b, c), (a, d)),
        ((b, d), (a, c)),
        ((c, d), (a, b)),
    ]
    for s in range(2, 17, 2):
        splits = cscv_splits(s)
        assert [(o, i) for i, o in splits] == splits[::-1]
        assert all(sorted(i + o) == list(range(s)) for i, o in splits)


def test_the_number_of_splits_is_eq_2_3() -> None:
    """Eq. (2.3): C(S, S/2) = prod_{i < S/2} (S - i) / (S/2 - i). Section 4: S = 12 gives 924.
    (The paper prints 12,780 for S = 16; its own product gives 12,870.)"""
    for s in range(2, 17, 2):
        product = math.prod(Fraction(s - i, s // 2 - i) for i in range(s // 2))
        assert len(cscv_splits(s)) == math.comb(s, s // 2) == product
    assert len(cscv_splits(16)) == 12_870
    r = pbo_cscv(noise(0, t=12, n=3), groups=12)
    assert r.combinations == len(r.logits) == 924


# --- worked by hand ----------------------------------------------------------------------

BY_HAND = [  # groups A, B, C, D of one row each; columns 0, 1, 2
    [4, 1, 2],  # A
    [3, 2, 1],  # B
    [1, 0, 3],  # C
    [2, 3, 0],  # D
]


def test_a_small_matrix_worked_by_hand() -> None:
    """Every split of BY_HAND, S = 4, statistic the mean (a half has 2 rows; sums below):

    IS|OOS  IS sums   n*             OOS sums  n*'s OOS rank (1 = worst)   w      lambda
    AB|CD   7, 3, 3   0              3, 3, 3   tie of all three: 2         2/4    0
    AC|BD   5, 1, 5   0 (0 = 2: 1st) 5, 5, 1   tie for top with 1: 2.5     2.5/4  ln(5/3)
    AD|BC   6, 4, 2   0              4, 2, 4   tie for top with 2: 2.5     2.5/4  ln(5/3)
    BC|AD   4, 2, 4   0 (0 = 2)      6, 4, 2   3                           3/4    ln 3
    BD|AC   5, 5, 1   0 (0 = 1)      5, 1, 5   tie for top with 2: 2.5     2.5/4  ln(5/3)
    CD|AB   3, 3, 3   0 (all equal)  7, 3, 3   3                           3/4    ln 3

    One lambda <= 0 of six: PBO = 1/6. Choosing the last of equals instead would pick
    column 2 in AC|BD, out of sample 1 of (5, 5, 1), rank 1: PBO 2/6. Column 0's means
    (in, out) add up to its total mean times 2 (10 / 4 * 2 = 5), so the line is y = 5 - x.
    """
    r = pbo_cscv(BY_HAND, groups=4)
    five_thirds, three = math.log(5 / 3), math.log(3)
    assert r.logits[0] == 0.0  # exactly: the median is overfit
    assert r.logits == pytest.approx((0.0, five_thirds, five_thirds, three, five_thirds, three))
    assert (r.pbo, r.overfit, r.combinations) == (1 / 6, 1, 6)
    assert r.chosen == (0,) * 6
    assert r.is_best == (3.5, 2.5, 3.0, 2.0, 2.5, 1.5)
    assert r.oos_of_best == (1.5, 2.5, 2.0, 3.0, 2.5, 3.5)
    assert (r.degradation_slope, r.degradation_intercept) == (-1.0, 5.0)
    assert r.prob_oos_loss == 0.0
    assert (r.groups, r.rows_used, r.rows_dropped, r.variants) == (4, 4, 0, 3)


@settings(max_examples=120, deadline=None)
@given(matrices())
def test_the_fast_code_is_algorithm_2_3_step_by_step(case: tuple[Matrix, int]) -> None:
    matrix, groups = case
    r, ref = pbo_cscv(matrix, groups), reference(matrix, groups)
    assert list(r.chosen) == ref.chosen
    assert list(r.logits) == pytest.approx(ref.logits, rel=1e-12, abs=1e-12)
    assert r.overfit == sum(lam <= 0 for lam in ref.logits)  # lambda = 0 exactly is exact
    assert list(r.is_best) == ref.is_best  # a sum / the rows, correctly rounded both ways
    assert list(r.oos_of_best) == ref.oos_of_best
    assert r.prob_oos_loss == sum(v < 0 for v in ref.oos_of_best) / r.combinations
    assert r.rows_dropped == len(matrix) % groups


@pytest.mark.parametrize("seed", range(4))
def test_the_sharpe_ratio_is_the_references_too(seed: int) -> None:
    m = noise(seed, t=12, n=5) + 0.3
    r, ref = pbo_cscv(m, 4, "sharpe"), reference(m.tolist(), 4, "sharpe")
    assert list(r.chosen) == ref.chosen
    assert list(r.logits) == pytest.approx(ref.logits, rel=1e-12, abs=1e-12)
    assert list(r.is_best) == pytest.approx(ref.is_best, rel=1e-9)
    assert list(r.oos_of_best) == pytest.approx(ref.oos_of_best, rel=1e-9)


# --- where the truth is known ------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(matrices(), st.data())
def test_a_variant_better_in_every_row_is_never_overfit(
    case: tuple[Matrix, int], data: st.DataObject
) -> None:
    """It is best in every half, in and out of sample: rank N, lambda = ln N, PBO 0."""
    matrix, groups = case
    n = len(matrix[0])
    k = data.draw(st.integers(0, n - 1))
    for row in matrix:
        row[k] = max(row) + 1
    r = pbo_cscv(matrix, groups)
    assert r.pbo == 0.0 and r.overfit == 0
    assert r.chosen == (k,) * r.combinations
    assert all(lam > 0 for lam in r.logits)
    assert r.logits == pytest.approx((math.log(n),) * r.combinations)  # w = N / (N + 1)


@settings(max_examples=60, deadline=None)
@given(matrices(low=-50, high=50, spare_rows=False), st.integers(-100, 100))
def test_when_every_variant_has_the_same_total_the_best_in_sample_is_the_worst_out(
    case: tuple[Matrix, int], total: int
) -> None:
    """Section 3.2's compensation effect at its purest: if every column adds up to the same
    total, a column's out-of-sample sum is that total minus its in-sample sum, so the best
    in sample is the worst out of sample (tied, at worst, at the median): PBO 1, and the
    out-of-sample mean is a line of slope -1 in the in-sample one."""
    matrix, groups = case
    for c in range(len(matrix[0])):
        matrix[-1][c] += total - sum(row[c] for row in matrix)
    r = pbo_cscv(matrix, groups)
    assert r.pbo == 1.0
    assert all(lam <= 0 for lam in r.logits)
    assert r.degradation_slope is None or r.degradation_slope == pytest.approx(-1.0)


@cache
def noise_runs() -> tuple[PBOResult, ...]:
    return tuple(pbo_cscv(noise(seed), groups=10) for seed in range(400))


def test_pure_noise_gives_a_pbo_of_one_half() -> None:
    """N = 50 columns of iid N(0, 1) blocks, T = 160, S = 10 (252 splits). The halves are
    independent and n* is chosen on one, so its rank on the other is uniform on 1..50, and
    ranks 1..25 (lambda < 0) are exactly half: the expected PBO is 1/2 (section 4: for an
    "informationless" backtest the relative ranks are about uniform and the logits about
    standard normal, centred on 0). One matrix's PBO scatters widely, its splits sharing
    rows (sd 0.17 over 300 seeds), so 400 are averaged: sd 0.0085, and 0.035 is 4 of them.
    (Code that judged n* on its own half would give 0; code that chose the worst, 1.)"""
    runs = noise_runs()
    assert statistics.fmean(r.pbo for r in runs) == pytest.approx(0.5, abs=0.035)
    assert statistics.fmean(statistics.fmean(r.logits) for r in runs) == pytest.approx(0, abs=0.1)


def test_pure_noise_degrades_out_of_sample() -> None:
    """Section 3.2: regressing the chosen variant's out-of-sample statistic on its
    in-sample one, "the beta will be negative in most practical cases". On this noise the
    slope averages -0.44 (sd 0.36 over 200 seeds): over 400, below -0.3 by 8 sd."""
    slopes = [r.degradation_slope for r in noise_runs()]
    assert None not in slopes
    assert statistics.fmean(s for s in slopes if s is not None) < -0.3


@pytest.mark.parametrize("seed", range(10))
def test_a_planted_edge_is_not_overfit(seed: int) -> None:
    """Noise, and column 7 half a standard deviation better in every block: it is chosen
    in most splits and stays above the median out of sample (at most 0.056 over 20 seeds)."""
    m = noise(seed)
    m[:, 7] += 0.5
    r = pbo_cscv(m, groups=10)
    assert r.pbo < 0.1
    assert r.chosen.count(7) > 0.8 * r.combinations
    assert r.prob_oos_loss < 0.1


def test_the_papers_default_sixteen_groups_on_noise_and_an_edge() -> None:
    m = noise(1)
    flat, edged = pbo_cscv(m), pbo_cscv(m + np.where(np.arange(50) == 7, 0.5, 0.0))
    assert flat.groups == edged.groups == 16 and flat.combinations == 12_870
    assert 0.1 < flat.pbo < 0.9 and edged.pbo < 0.01


# --- invariances -------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(matrices(low=-1000, high=1000), st.randoms(use_true_random=False))
def test_permuting_the_variants_changes_nothing_but_their_names(
    case: tuple[Matrix, int], rnd: random.Random
) -> None:
    matrix, groups = case
    assume(not reference(matrix, groups).tied_in_sample)
    order = list(range(len(matrix[0])))
    rnd.shuffle(order)
    shuffled = [[row[c] for c in order] for row in matrix]  # new column i is old order[i]
    a, b = pbo_cscv(matrix, groups), pbo_cscv(shuffled, groups)
    assert (a.pbo, a.overfit, a.logits) == (b.pbo, b.overfit, b.logits)
    assert a.chosen == tuple(order[i] for i in b.chosen)
    assert (a.is_best, a.oos_of_best, a.prob_oos_loss) == (
        b.is_best,
        b.oos_of_best,
        b.prob_oos_loss,
    )


def test_permuting_the_variants_keeps_the_sharpe_pbo() -> None:
    m = noise(3, t=40, n=9) + 0.1
    order = [4, 0, 8, 2, 6, 1, 7, 3, 5]
    a, b = pbo_cscv(m, 8, "sharpe"), pbo_cscv(m[:, order], 8, "sharpe")
    assert (a.pbo, a.logits) == (b.pbo, b.logits)
    assert a.chosen == tuple(order[i] for i in b.chosen)


@settings(max_examples=60, deadline=None)
@given(matrices(), st.integers(-(10**9), 10**9))
def test_adding_one_number_to_every_score_changes_no_rank(
    case: tuple[Matrix, int], shift: int
) -> None:
    matrix, groups = case
    a = pbo_cscv(matrix, groups)
    b = pbo_cscv([[v + shift for v in row] for row in matrix], groups)
    assert (a.pbo, a.overfit, a.logits, a.chosen) == (b.pbo, b.overfit, b.logits, b.chosen)
    assert [x + shift for x in a.is_best] == pytest.approx(b.is_best)


@settings(max_examples=60, deadline=None)
@given(matrices(low=-(10**6), high=10**6), st.sampled_from(["mean", "sharpe"]))
def test_the_same_matrix_gives_the_same_result_bit_for_bit(
    case: tuple[Matrix, int], statistic: str
) -> None:
    """Section 4: "running CSCV twice on the same inputs generates identical results";
    here also whatever holds the numbers (lists, int or float arrays, either memory order)."""
    matrix, groups = case
    try:
        first = pbo_cscv(matrix, groups, statistic)
    except ValueError:  # a Sharpe ratio of a constant nonzero half: refused, every time
        with pytest.raises(ValueError, match="infinite"):
            pbo_cscv(np.array(matrix), groups, statistic)
        return
    arrays = [np.array(matrix), np.array(matrix, dtype=float), np.asfortranarray(matrix)]
    for again in [pbo_cscv(matrix, groups, statistic)] + [
        pbo_cscv(a, groups, statistic) for a in arrays
    ]:
        assert again == first and repr(again) == repr(first)


def test_the_callers_matrix_is_left_alone_and_the_oldest_rows_are_dropped() -> None:
    m = noise(5, t=23, n=6)  # 23 = 4 * 5 + 3: the first 3 rows are dropped
    before = m.copy()
    r = pbo_cscv(m, groups=4)
    assert np.array_equal(m, before)
    assert (r.rows_used, r.rows_dropped) == (20, 3)
    assert dataclasses.replace(r, rows_dropped=0) == pbo_cscv(m[3:], groups=4)
    assert dataclasses.replace(r, rows_dropped=0) != pbo_cscv(m[:20], groups=4)  # not the last


# --- the Sharpe ratio ----------------------------------------------------------------------


def test_the_sharpe_ratio_prefers_the_steadier_variant() -> None:
    # every group has one 10 and one -6 in column 0 (mean 2, sd 8: Sharpe 0.25) and one 1
    # and one 1.2 in column 1 (mean 1.1, sd 0.1: Sharpe 11); column 2 is 0.5 and 0.7 (6)
    m = [[10, 1, 0.5], [-6, 1.2, 0.7]] * 4
    by_mean, by_sharpe = pbo_cscv(m, 4), pbo_cscv(m, 4, "sharpe")
    assert by_mean.chosen == (0,) * 6 and by_sharpe.chosen == (1,) * 6
    assert by_sharpe.is_best == pytest.approx((11.0,) * 6)
    assert by_sharpe.statistic == "sharpe" and by_mean.statistic == "mean"


def test_a_variant_that_never_trades_has_sharpe_ratio_zero() -> None:
    m = noise(2, t=16, n=4)
    m[:, 2] = 0.0
    r, ref = pbo_cscv(m, 4, "sharpe"), reference(m.tolist(), 4, "sharpe")  # ref: 0 there
    assert list(r.chosen) == ref.chosen
    assert list(r.logits) == pytest.approx(ref.logits, rel=1e-12, abs=1e-12)
    m[:, 2] = 1e-12  # positive on every row: a sure gain, refused
    with pytest.raises(ValueError, match=r"column 2 .* infinite") as exc:
        pbo_cscv(m, 4, "sharpe")
    assert "\n" not in str(exc.value)


# --- choosing S --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "most", "groups"),
    [
        (0, 16, None),
        (3, 16, None),
        (4, 16, 2),
        (5, 16, 2),
        (7, 16, 2),
        (8, 16, 4),
        (31, 16, 14),
        (32, 16, 16),
        (1000, 16, 16),
        (1000, 8, 8),
        (1000, 9, 8),
        (7, 2, 2),
    ],
)
def test_choose_groups(rows: int, most: int, groups: int | None) -> None:
    assert choose_groups(rows, most) == groups


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 500), st.integers(2, 24))
def test_choose_groups_is_the_largest_even_s_with_two_rows_a_group(rows: int, most: int) -> None:
    s = choose_groups(rows, most)
    fits = [g for g in range(2, most + 1, 2) if rows // g >= 2]
    assert s == (max(fits) if fits else None)
    if s is not None and s <= 8:
        assert pbo_cscv(noise(0, t=rows, n=2), s).groups == s  # and pbo_cscv takes it


@pytest.mark.parametrize(("rows", "most"), [(-1, 16), (10, 1), (10, 0), (10, 25)])
def test_choose_groups_refuses_nonsense(rows: int, most: int) -> None:
    with pytest.raises(ValueError, match="must be") as exc:
        choose_groups(rows, most)
    assert "\n" not in str(exc.value)


# --- bad input ---------------------------------------------------------------------------

GOOD = [[1, 2], [3, 4], [5, 6], [7, 8]]


@pytest.mark.parametrize(
    ("matrix", "groups", "statistic", "words"),
    [
        ([[1], [2], [3], [4]], 2, "mean", "at least 2 columns, got 1"),
        ([[]], 2, "mean", "at least 2 columns, got 0"),
        (GOOD, 3, "mean", "even and at least 2; got 3"),
        (GOOD, 0, "mean", "even and at least 2; got 0"),
        (GOOD, -2, "mean", "even and at least 2; got -2"),
        (GOOD, 6, "mean", "groups=6 needs 6 rows, one per group; got 4"),
        (GOOD, 26, "mean", "groups=26: 10,400,600 splits; at most 24"),
        ([[1, 2]], 2, "mean", "got 1: CSCV needs 2 rows"),
        ([[1, 2], [float("nan"), 3]], 2, "mean", "finite number; got nan at row 1, column 0"),
        ([[1, float("inf")], [2, 3]], 2, "mean", "got inf at row 0, column 1"),
        ([[1, 2], [3, -float("inf")]], 2, "mean", "got -inf at row 1, column 1"),
        ([[1, 2], [3]], 2, "mean", "T rows of N numbers each"),
        ([["a", "b"], ["c", "d"]], 2, "mean", "T rows of N numbers each"),
        ([1, 2, 3, 4], 2, "mean", "2-D .* got 1-D"),
        ([[1e200, 1], [1e200, 2]], 2, "mean", "too large"),
        (GOOD, 2, "median", "'mean' or 'sharpe'; got 'median'"),
        ([[1, 2], [1, 3], [5, 2], [5, 3]], 4, "sharpe", "column 0 scores 1 .* infinite"),
    ],
)
def test_bad_input_is_one_line(matrix: object, groups: int, statistic: str, words: str) -> None:
    with pytest.raises(ValueError, match=words) as exc:
        pbo_cscv(matrix, groups, statistic)  # type: ignore[arg-type]
    assert "\n" not in str(exc.value)
