"""The verdict's statistics: each one against ``arch`` (or scipy) called directly, seeded
determinism, and calibration and power where the truth is known.

``report.stats`` is a thin layer over arch: these tests call arch themselves with the same
inputs and seed and expect the same numbers, so a change in how arena calls it (a block
length, a sign: arch speaks of losses, arena of scores) shows. The calibration tests draw
series with a known mean and count how often the answer is wrong.
"""

from __future__ import annotations

import math
import random

import arch.bootstrap as ab
import numpy as np
import pytest
from scipy import stats as st

from arena_tui.report import stats
from arena_tui.report.verdict import skill_doc
from tests.test_report import USD, twins_of


def series(seed: int, n: int, mean: float = 0.0, sd: float = 100_000.0) -> list[int]:
    rng = random.Random(seed)
    return [round(rng.gauss(mean, sd)) for _ in range(n)]


def test_mean_interval_is_archs_stationary_bootstrap_read_at_the_expanded_tail() -> None:
    x = series(1, 30, mean=20_000)
    got = stats.mean_interval(x, seed=7, resamples=4_000)
    arr = np.asarray(x, dtype=np.float64)
    b = float(ab.optimal_block_length(arr)["stationary"].iloc[0])
    b = min(max(b, 1.0), 30 / 4)
    means = ab.StationaryBootstrap(b, arr, seed=7).apply(np.mean, 4_000)[:, 0]  # type: ignore[arg-type]
    tail = st.norm.cdf(math.sqrt(30 / 29) * st.t.ppf(0.025, 29))
    lo, hi = np.quantile(means, [tail, 1 - tail], method="inverted_cdf")
    # never narrower than the batch-means t: 30 blocks in batches of 3 (the cube root of 30
    # is 3.1), the last 10 whole batches, t with 9 degrees of freedom
    batches = arr.reshape(10, 3).mean(axis=1)
    half = st.t.ppf(0.975, 9) * math.sqrt(3 * np.var(batches, ddof=1) / 30)
    lo, hi = min(lo, arr.mean() - half), max(hi, arr.mean() + half)
    assert (got.low, got.high, got.block, got.tail, got.batch) == (lo, hi, b, tail, 3)
    assert got.mean_e8 == sum(x) // 30 if sum(x) >= 0 else -(-sum(x) // 30)
    assert got.low_e8 == int(lo) and got.high_e8 == int(hi)


def test_the_expanded_tail_matches_students_t_tables() -> None:
    """Phi(sqrt(12/11) * t_11(2.5%)): t_11 = -2.201 (tables), so about 1.08%; near 2.5% for
    many blocks, and 2.5% itself below 3."""
    assert abs(stats.expanded_tail(12) - 0.0108) < 2e-4
    assert 0.024 < stats.expanded_tail(1000) < 0.025
    assert stats.expanded_tail(2) == 0.025


def test_the_block_length_is_archs_kept_between_one_and_a_quarter() -> None:
    rng = random.Random(3)
    trend = [round(1000 * math.sin(i / 9) + rng.gauss(0, 50)) for i in range(200)]
    raw = float(ab.optimal_block_length(np.asarray(trend, float))["stationary"].iloc[0])
    assert stats.block_length(trend) == min(max(raw, 1.0), 50.0)
    assert stats.block_length([5] * 40) == 1.0  # a constant: nothing to keep together
    assert stats.block_length([1, 2, 3]) == 1.0


def test_same_series_same_seed_same_numbers_another_seed_others() -> None:
    """On a strongly dependent series (its bootstrap interval wider than Student's t, so
    the resampling decides it) the seed is what fixes the numbers."""
    rng = random.Random(2)
    level, x = 0.0, []
    for _ in range(40):
        level = 0.9 * level + rng.gauss(0, 1)
        x.append(round(level * 100_000))
    a, b = stats.mean_interval(x, seed=11), stats.mean_interval(x, seed=11)
    assert a == b
    c = stats.mean_interval(x, seed=12)
    assert (c.low, c.high) != (a.low, a.high)
    assert a.high - a.low > 2 * stats.batch_half_width(np.asarray(x, dtype=np.float64), a.batch)


@pytest.mark.parametrize(
    ("n", "batch"), [(7, 1), (8, 2), (11, 2), (12, 3), (24, 3), (48, 4), (100, 5), (1000, 10)]
)
def test_the_batch_is_about_the_cube_root_at_least_3_leaving_4_batches(n: int, batch: int) -> None:
    assert stats.batch_size(n) == batch


def test_batch_means_of_one_block_are_students_t_and_of_more_the_batch_means() -> None:
    x = np.asarray(series(4, 13), dtype=np.float64)
    plain = st.t.ppf(0.975, 12) * np.std(x, ddof=1) / math.sqrt(13)
    assert stats.batch_half_width(x, 1) == pytest.approx(plain, rel=1e-12)
    means = x[1:].reshape(4, 3).mean(axis=1)  # the first block left out of the batches only
    want = st.t.ppf(0.975, 3) * math.sqrt(3 * np.var(means, ddof=1) / 13)
    assert stats.batch_half_width(x, 3) == pytest.approx(want, rel=1e-12)


def dependent(seed: int, n: int) -> np.ndarray:
    """Heavy tails and dependence, as block scores of positions held across blocks have:
    Student-t(4) innovations, AR(1) 0.3, mean zero."""
    rng = np.random.default_rng(seed)
    e = rng.standard_t(4, n)
    x = np.empty(n)
    x[0] = e[0]
    for i in range(1, n):
        x[i] = 0.3 * x[i - 1] + e[i]
    return x


@pytest.mark.parametrize("n", [12, 24, 48])
def test_batch_means_cover_a_true_zero_on_dependent_heavy_tailed_blocks(n: int) -> None:
    """The floor the money and floor intervals are never narrower than: on 1,000 mean-zero
    dependent, heavy-tailed series it misses zero at most 9% of the time (5.3-7.2%
    measured over 2,000; plain Student's t missed 12-16%, the reason for the batches), and
    on independent normal ones about 5%."""
    for kind, bound in (("dependent", 0.09), ("normal", 0.07)):
        misses = 0
        for k in range(1_000):
            x = (
                dependent(k, n)
                if kind == "dependent"
                else np.random.default_rng(k).standard_normal(n)
            )
            misses += abs(float(x.mean())) > stats.batch_half_width(x, stats.batch_size(n))
        assert misses / 1_000 <= bound, (kind, misses)
    plain = sum(
        abs(float(dependent(k, n).mean())) > stats.batch_half_width(dependent(k, n), 1)
        for k in range(1_000)
    )
    assert plain / 1_000 > 0.1  # what the batches are for


def test_a_constant_series_has_a_point_interval() -> None:
    got = stats.mean_interval([0] * 24, seed=0)
    assert (got.mean, got.low, got.high, got.resamples) == (0.0, 0.0, 0.0, 0)


def test_spa_stepm_and_mcs_are_archs_on_losses() -> None:
    """arena passes scores; arch wants losses: the same test on ``-scores`` and a zero
    benchmark, with the block length arena chose, gives arena's answers."""
    rng = np.random.default_rng(5)
    k, n = 6, 120
    edge = np.zeros(k)
    edge[2] = 0.4
    scores = (rng.standard_normal((n, k)) + edge) * 100_000
    variants = [[round(v) for v in scores[:, j]] for j in range(k)]
    zero = [0] * n
    got = stats.spa(zero, variants, seed=3, resamples=500)
    models = np.asarray(variants, dtype=np.float64).T
    b = max(1, round(got.block))
    spa = ab.SPA(-np.zeros(n), -models, block_size=b, reps=500, seed=3)
    spa.compute()
    assert got.p_consistent == float(spa.pvalues["consistent"])
    assert got.p_upper == float(spa.pvalues["upper"])
    assert got.best == 2 and got.p_consistent < 0.05
    better = stats.stepm(zero, variants, seed=3, resamples=500)
    assert better == [2]
    tied = stats.mcs(variants, seed=3, resamples=500)
    mcs = ab.MCS(-models, size=0.05, reps=500, block_size=b, seed=3)
    mcs.compute()
    assert 2 in tied and tied == sorted(int(str(i)) for i in mcs.included)


def test_spa_finds_nothing_in_noise() -> None:
    rng = np.random.default_rng(8)
    noise = rng.standard_normal((100, 8)) * 100_000
    variants = [[round(v) for v in noise[:, j]] for j in range(8)]
    got = stats.spa([0] * 100, variants, seed=1, resamples=500)
    assert got.p_consistent > 0.05
    assert stats.stepm([0] * 100, variants, seed=1, resamples=500) == []


# ---- calibration and power, where the truth is known ---------------------------------------


def test_the_money_interval_covers_a_true_zero_about_as_often_as_it_says() -> None:
    """Mean-zero independent normal block scores: a "makes money" or "loses money" answer is
    wrong. The interval holds the batch-means one (so it misses no more often than that
    floor, measured on dependent series above) and, over 200 series of 24 blocks (the
    standard error of a 5% rate is 1.5%), misses zero within 8% of the time."""
    misses = 0
    for k in range(200):
        x = series(1000 + k, 24)
        iv = stats.mean_interval(x, seed=k, resamples=500)
        half = stats.batch_half_width(np.asarray(x, dtype=np.float64), iv.batch)
        assert iv.low <= iv.mean - half and iv.high >= iv.mean + half
        misses += iv.low > 0 or iv.high < 0
    assert misses / 200 <= 0.08


def test_the_money_interval_has_power_against_a_real_mean() -> None:
    """A mean of half a standard deviation a block over 48 blocks (t about 3.5): found."""
    hits = sum(
        stats.mean_interval(series(k, 48, mean=50_000), seed=k, resamples=1_000).low > 0
        for k in range(60)
    )
    assert hits / 60 >= 0.85


def test_the_twins_rank_is_calibrated_when_timing_is_no_skill() -> None:
    """A strategy exchangeable with its twins (its S drawn from the same distribution):
    "skill" at most 5% of the time (exactly floor(5% * 101) / 101 in expectation), and
    "worse than its twins" as often."""
    rng = random.Random(4)
    runs, skill, worse = 2_000, 0, 0
    for _ in range(runs):
        draws = [round(rng.gauss(0, 1e5)) for _ in range(101)]
        answer = skill_doc(draws[0], 10, 100 * USD, 1, twins_of(draws[1:]))["answer"]
        skill += answer == "skill"
        worse += answer == "worse_than_twins"
    # 5/101 = 4.95%; the standard error over 2,000 runs is 0.49%
    assert abs(skill / runs - 5 / 101) < 0.015 and abs(worse / runs - 5 / 101) < 0.015


def test_the_twins_rank_finds_a_real_timing_edge() -> None:
    """A strategy 2.5 twin-standard-deviations above its twins: "skill" almost always."""
    rng = random.Random(6)
    hits = 0
    for _ in range(300):
        twins = [round(rng.gauss(0, 1e5)) for _ in range(100)]
        hits += (
            skill_doc(round(rng.gauss(2.5e5, 1e5)), 10, 100 * USD, 1, twins_of(twins))["answer"]
            == "skill"
        )
    assert hits / 300 >= 0.6
