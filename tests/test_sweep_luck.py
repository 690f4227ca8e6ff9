"""Honest about luck (arena_tui/sweep/luck.py): the days split by calendar order, and
White's reality check for the best of K variants.

The reality check is tested where the true answer is known: variants that are copies of
the control (no edge) must not "beat" it, and over many independent null sweeps it rejects
at 5% about 5% of the time, while judging the best of them alone, as if it were the only
variant tried, rejects far more often; a variant with a real edge gets a small p-value.
A slow reference implementation pins the exact numbers, drawn as the verdict's bootstrap
draws.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_tui.report.verdict import bootstrap, expanded_tail, run_length
from arena_tui.sweep import SweepError
from arena_tui.sweep.luck import (
    RealityCheck,
    parse_fraction,
    reality_check,
    split_holdout,
    walk_forward,
)
from arena_tui.util.errors import ArenaError
from engine.units import tdiv

DAYS = [f"2026-12-{d:02d}" for d in range(1, 15)]  # 14 days, calendar order


def one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert isinstance(exc.value, ArenaError), repr(exc.value)
    assert "\n" not in text, text
    return text


# --- the split --------------------------------------------------------------------------


def test_the_holdout_is_the_last_days_in_calendar_order() -> None:
    train, held = split_holdout(DAYS, "30%")  # ceil(0.3 * 14) = 5
    assert train == DAYS[:9] and held == DAYS[9:]
    assert split_holdout(DAYS, 0.3) == (train, held)
    assert split_holdout(DAYS[:10], 0.7) == (DAYS[:3], DAYS[3:10])  # 0.7 * 10 is 7, not 8
    assert split_holdout(DAYS[:10], "70%") == (DAYS[:3], DAYS[3:10])
    # 0.28 * 25 is 7.000000000000001 in floats: the exact product holds out 7 days, not 8
    assert split_holdout(list(range(25)), 0.28) == (list(range(18)), list(range(18, 25)))
    assert split_holdout(list(range(50)), "14%")[1] == list(range(43, 50))
    assert split_holdout(DAYS[:2], "1%") == ([DAYS[0]], [DAYS[1]])  # at least one held out
    assert split_holdout(DAYS[:3], Fraction(2, 3)) == ([DAYS[0]], DAYS[1:3])


@settings(max_examples=200, deadline=None)
@given(n=st.integers(2, 60), pct=st.integers(1, 99))
def test_the_split_never_shuffles_and_holds_out_the_ceiling(n: int, pct: int) -> None:
    days = list(range(n))
    held_n = math.ceil(Fraction(pct, 100) * n)
    if held_n >= n:
        with pytest.raises(SweepError):
            split_holdout(days, f"{pct}%")
        return
    train, held = split_holdout(days, f"{pct}%")
    assert train + held == days  # every day once, in order: held-out days come last
    assert len(held) == held_n
    assert split_holdout(days, pct / 100) == (train, held)


@pytest.mark.parametrize(
    ("days", "share", "words"),
    [
        (DAYS[:1], "30%", "at least one training day and one held-out day"),
        (DAYS[:3], "90%", "leaves no training day"),
        (DAYS, "0%", "strictly between 0 and 1"),
        (DAYS, "100%", "strictly between 0 and 1"),
        (DAYS, "thirty", "strictly between 0 and 1"),
        (DAYS, 1.5, "strictly between 0 and 1"),
    ],
)
def test_a_split_without_both_sides_is_one_line(
    days: list[str], share: str | float, words: str
) -> None:
    with pytest.raises(SweepError) as exc:
        split_holdout(days, share)
    assert words in one_line(exc)


def test_a_holdout_share_reads_as_written() -> None:
    assert parse_fraction("30%") == Fraction(3, 10)
    assert parse_fraction(" 0.25 ") == Fraction(1, 4)
    assert parse_fraction("12.5%") == Fraction(1, 8)
    for bad in ("", "%", "-10%", "1", "0", "3/10", "nan"):
        with pytest.raises(SweepError, match="--holdout"):
            parse_fraction(bad)


def test_walk_forward_folds_expand_and_test_each_later_day_once() -> None:
    folds = walk_forward(DAYS, 3)  # 14 days: a stretch of 3 per test, the first training 5
    assert [(len(tr), len(te)) for tr, te in folds] == [(5, 3), (8, 3), (11, 3)]
    assert folds[0] == (DAYS[:5], DAYS[5:8])
    assert folds[2] == (DAYS[:11], DAYS[11:14])
    assert walk_forward(DAYS[:2], 1) == [([DAYS[0]], [DAYS[1]])]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(2, 40), k=st.integers(1, 12))
def test_walk_forward_never_tests_on_a_day_before_training(n: int, k: int) -> None:
    days = list(range(n))
    if n < k + 1:
        with pytest.raises(SweepError, match=f"needs at least {k + 1} days"):
            walk_forward(days, k)
        return
    folds = walk_forward(days, k)
    assert len(folds) == k
    tested = [d for _, test in folds for d in test]
    assert tested == sorted(set(tested))  # each test day once, in order
    assert tested == days[n - len(tested) :]  # the test stretches end the days
    for i, (train, test) in enumerate(folds):
        assert train == days[: len(train)]  # from the first day: an expanding window
        assert test and max(train) < min(test) and train + test == days[: len(train) + len(test)]
        if i:
            assert len(train) > len(folds[i - 1][0])


def test_bad_folds_are_one_line() -> None:
    with pytest.raises(SweepError) as exc:
        walk_forward(DAYS, 0)
    assert "at least 1 fold" in one_line(exc)
    with pytest.raises(SweepError) as exc:
        walk_forward(DAYS[:3], 3)
    assert one_line(exc) == (
        "--folds 3 needs at least 4 days (a training day, then a test day per fold); "
        "there are 3 days"
    )


# --- the reality check ------------------------------------------------------------------


def reference(diffs: Sequence[Sequence[int]], seed: int, resamples: int) -> float:
    """The reality check written out slowly: each resample is block indices drawn exactly
    as report.verdict.bootstrap draws them; the same indices for every variant."""
    n = len(diffs[0])
    run = run_length(n)
    rng = random.Random(seed)
    observed = max(sum(row) for row in diffs)
    hits = 0
    for _ in range(resamples):
        idx = [(s + j) % n for s in [rng.randrange(n) for _ in range(n // run)] for j in range(run)]
        if n % run:
            s = rng.randrange(n)
            idx += [(s + j) % n for j in range(n % run)]
        assert len(idx) == n
        if max(sum(row[i] for i in idx) - sum(row) for row in diffs) >= observed:
            hits += 1
    return (hits + 1) / (resamples + 1)


def noise(rng: random.Random, n: int, scale: int = 2_000_000) -> list[int]:
    return [round(rng.gauss(0, scale)) for _ in range(n)]


def null_sweep(seed: int, k: int, n: int) -> list[list[int]]:
    """K copies of the control, each run with its own luck: every variant's block score
    minus the control's is its noise minus the control's (no edge, correlated leads)."""
    rng = random.Random(seed)
    control = noise(rng, n)
    return [[v - c for v, c in zip(noise(rng, n), control, strict=True)] for _ in range(k)]


@pytest.mark.parametrize(("k", "n"), [(1, 2), (3, 7), (5, 24), (2, 10)])
def test_the_check_is_the_written_out_bootstrap(k: int, n: int) -> None:
    rng = random.Random(k * 100 + n)
    diffs = [[v + 300_000 for v in noise(rng, n)] for _ in range(k)]
    rc = reality_check(diffs, seed=42, resamples=300)
    assert rc.p_value == reference(diffs, 42, 300)
    assert (rc.variants, rc.blocks, rc.run, rc.resamples, rc.seed) == (k, n, run_length(n), 300, 42)


def test_one_variant_resamples_as_the_verdict_does() -> None:
    """The reference draws what report.verdict.bootstrap draws: the interval it reads from
    the same resampled sums is the verdict's interval, to the unit."""
    diffs = noise(random.Random(5), 24)
    n, resamples, seed = len(diffs), 400, 9
    run = run_length(n)
    rng = random.Random(seed)
    sums = []
    for _ in range(resamples):
        total = sum(
            sum(diffs[(s + j) % n] for j in range(run))
            for s in [rng.randrange(n) for _ in range(n // run)]
        )
        if n % run:
            s = rng.randrange(n)
            total += sum(diffs[(s + j) % n] for j in range(n % run))
        sums.append(total)
    sums.sort()
    tail = expanded_tail(n)
    boot = bootstrap(diffs, seed, resamples)
    assert boot.low == tdiv(sums[math.ceil(tail * resamples) - 1], n)
    assert boot.high == tdiv(sums[math.ceil((1 - tail) * resamples) - 1], n)
    # and the reality check of this one variant counts those same sums
    centred = sum(s - sum(diffs) >= sum(diffs) for s in sums)
    assert reality_check([diffs], seed=seed, resamples=resamples).p_value == (centred + 1) / (
        resamples + 1
    )


def test_copies_of_the_control_do_not_beat_it() -> None:
    same = [[0] * 24 for _ in range(8)]  # the control itself, eight times: leads all zero
    rc = reality_check(same, seed=1, resamples=500)
    assert rc.p_value == 1.0
    assert (rc.best, rc.best_mean) == (0, 0)


def test_the_check_is_calibrated_where_the_answer_is_known() -> None:
    """200 sweeps of 10 variants with no edge. At 5%, the reality check rejects about 5%
    of them (a loose bound: it is a bootstrap on 30 blocks); the best variant judged
    alone, as if it were the only one tried, "beats" the control far more often: that is
    the luck of trying ten."""
    rejected = naive = 0
    sweeps = 200
    for seed in range(sweeps):
        diffs = null_sweep(seed, k=10, n=30)
        rc = reality_check(diffs, seed=seed, resamples=199)
        rejected += rc.p_value <= 0.05
        alone = reality_check([diffs[rc.best]], seed=seed, resamples=199)
        naive += alone.p_value <= 0.05
    assert rejected <= 0.11 * sweeps, rejected
    assert naive >= 0.2 * sweeps, naive
    assert naive >= 3 * max(rejected, 1), (naive, rejected)


def test_a_real_edge_gets_a_small_p_value_and_is_the_best() -> None:
    diffs = null_sweep(3, k=12, n=48)
    diffs[7] = [v + 1_500_000 for v in diffs[7]]  # about half a noise sd a block, every block
    rc = reality_check(diffs, seed=3, resamples=999)
    assert rc.best == 7
    assert rc.p_value < 0.01
    assert rc.best_mean == math.trunc(sum(diffs[7]) / 48)


def test_the_check_is_deterministic_for_a_seed() -> None:
    diffs = null_sweep(8, k=6, n=20)
    first = reality_check(diffs, seed=21, resamples=300)
    assert reality_check(diffs, seed=21, resamples=300) == first
    others = {reality_check(diffs, seed=s, resamples=300).p_value for s in range(5)}
    assert len(others) > 1  # the seed is what is fixed, not the answer


def test_the_best_mean_truncates_toward_zero_like_the_verdict() -> None:
    rc = reality_check([[-7, 0, 0], [-5, 0, 0]], seed=0, resamples=10)
    assert rc == RealityCheck(1, -1, rc.p_value, 10, 0, 2, 3, 1)  # -5 / 3 -> -1, not -2
    assert rc.best_mean == bootstrap([-5, 0, 0], 0, 10).mean


@settings(max_examples=40, deadline=None)
@given(
    diffs=st.integers(1, 4).flatmap(
        lambda k: st.integers(2, 12).flatmap(
            lambda n: st.lists(
                st.lists(st.integers(-(10**8), 10**8), min_size=n, max_size=n),
                min_size=k,
                max_size=k,
            )
        )
    ),
    shift=st.integers(0, 10**7),
    seed=st.integers(0, 2**32),
)
def test_a_larger_lead_is_never_more_likely_luck(
    diffs: list[list[int]], shift: int, seed: int
) -> None:
    """Adding the same lead to every block of every variant moves the observed best and
    nothing the resamples centre, so the p-value cannot rise; the order of the variants
    does not matter."""
    base = reality_check(diffs, seed=seed, resamples=60)
    shifted = reality_check([[v + shift for v in row] for row in diffs], seed=seed, resamples=60)
    assert 0 < shifted.p_value <= base.p_value <= 1
    flipped = reality_check(diffs[::-1], seed=seed, resamples=60)
    assert flipped.p_value == base.p_value
    assert sum(diffs[::-1][flipped.best]) == sum(diffs[base.best])


@pytest.mark.parametrize(
    ("diffs", "kwargs", "words"),
    [
        ([], {}, "at least one variant"),
        ([[1, 2], [1]], {}, "the same blocks for every variant"),
        ([[1]], {}, "at least 2 blocks"),
        ([[1, 2]], {"resamples": 0}, "resamples"),
        ([[1, 2, 3]], {"block": 4}, "do not fit"),
    ],
)
def test_a_check_it_cannot_make_is_one_line(
    diffs: list[list[int]], kwargs: dict[str, int], words: str
) -> None:
    with pytest.raises(SweepError) as exc:
        reality_check(diffs, seed=0, **kwargs)
    assert words in one_line(exc)
