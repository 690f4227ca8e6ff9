"""The verdict's statistics, from maintained libraries: ``arch.bootstrap`` and ``scipy``.

Why this module exists: a bootstrap, a reality check and a model confidence set written by
hand are easy to get subtly wrong; ``arch`` (Kevin Sheppard's, maintained, seeded, used by
econometricians) has them. This module is the one place arena calls it, so every verdict
uses the same resampling, the same block lengths and the same seeds, and the rest of the
report speaks of integers and answers, never of arch's objects.

- ``mean_interval``: the mean of a series of block scores (e8 integers) with a 95% interval
  from arch's **stationary bootstrap** (Politis and Romano, 1994), its mean block length
  chosen by arch's ``optimal_block_length`` (Politis and White, 2004, with Patton, Politis
  and White's 2009 correction), kept between 1 and a quarter of the series. The interval is
  Hesterberg's *expanded percentile* interval: the resampled means read at
  ``Phi(sqrt(n / (n - 1)) * t_{n-1}(2.5%))`` instead of 2.5%, which widens a plain
  percentile interval toward the Student-t interval's width when there are few blocks, and
  it is never narrower than the **batch-means** Student t interval (``batch_half_width``):
  the blocks grouped into batches of ``batch_size(n)`` consecutive blocks (about the cube
  root of n, at least 3, at least 4 batches), the long-run variance read from the batch
  means, t with one degree of freedom fewer than the batches. The bootstrap keeps the
  blocks' dependence but its spread of means is too small with few blocks; plain t keeps
  the width few blocks need but not the dependence (a position held across a boundary moves
  both blocks), so alone either missed a true zero two to three times as often as it said
  on dependent, heavy-tailed series; batches keep both (docs/verdict.md has the coverage
  measured).
- ``spa``: Hansen's (2005) test for superior predictive ability, arch's ``SPA``, on the
  stationary bootstrap: is the best of K variants better than a benchmark by more than
  trying K gives by luck? (White's reality check is its upper p-value.)
- ``stepm``: Romano and Wolf's (2005) StepM, arch's ``StepM``: which of the K, each.
- ``mcs``: Hansen, Lunde and Nason's (2011) model confidence set, arch's ``MCS``: the
  variants statistically tied with the best.

Floats live here and in the p-values the report prints; every mean and bound is also
given as an integer in the block scores' unit (e8), truncated toward zero, so a program
can check an answer against the figures beside it. The same series and seed give the same
numbers: arch draws from ``numpy.random.default_rng(seed)``.

``arch`` is imported when first needed (it brings numpy, scipy and pandas: about two
seconds), so commands that judge nothing never pay for it; a backtest long enough to be
judged has it imported in a second process while its pass runs, and ``mean_interval`` is
computed there (``report.statsworker``; ``WORKER_CALLS`` is what it may be asked).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.units import tdiv

RESAMPLES = 10_000  # bootstrap resamples of a mean's interval
TEST_RESAMPLES = 2_000  # resamples of SPA, StepM and the MCS (each costs more)
CONFIDENCE_PCT = 95
ALPHA = 0.05
MIN_BLOCKS = 8  # fewer: no interval is worth printing


def _arch() -> Any:
    import arch.bootstrap

    return arch.bootstrap


def warm() -> None:
    """Import what the statistics need now (``report.statsworker``'s child does, while the
    pass runs)."""
    _arch()
    from scipy import stats as _st  # noqa: F401


def truncate(x: float) -> int:
    """A float statistic as the block scores' integers: truncated toward zero."""
    return int(x) if math.isfinite(x) else 0


def block_length(values: Sequence[float]) -> float:
    """arch's optimal mean block length for the stationary bootstrap, kept in
    ``[1, n / 4]`` (1 for a constant series: nothing to keep together)."""
    import numpy as np

    n = len(values)
    x = np.asarray(values, dtype=np.float64)
    if n < 4 or float(np.ptp(x)) == 0.0:
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = float(_arch().optimal_block_length(x)["stationary"].iloc[0])
    if not math.isfinite(b):
        b = 1.0
    return min(max(b, 1.0), max(1.0, n / 4))


def expanded_tail(n: int) -> float:
    """The lower tail to read resampled means at (Hesterberg's expanded percentile
    interval): ``Phi(sqrt(n / (n - 1)) * t_{n-1}(alpha / 2))``; ``alpha / 2`` below 3."""
    from scipy import stats as st

    tail = (100 - CONFIDENCE_PCT) / 200
    if n < 3:
        return tail
    return float(st.norm.cdf(math.sqrt(n / (n - 1)) * st.t.ppf(tail, n - 1)))


@dataclass(frozen=True)
class MeanInterval:
    """The mean of ``n`` block scores and its interval (floats, e8 units) and the same
    as integers truncated toward zero (``mean_e8`` is the exact ``tdiv(sum, n)``)."""

    n: int
    mean_e8: int
    mean: float
    low: float
    high: float
    block: float  # mean block length of the stationary bootstrap, in blocks
    resamples: int
    seed: int
    tail: float  # where the interval was read (each side)
    batch: int = 1  # blocks a batch of the batch-means t interval

    @property
    def low_e8(self) -> int:
        return truncate(self.low)

    @property
    def high_e8(self) -> int:
        return truncate(self.high)

    def doc(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean": self.mean_e8,
            "interval": [self.low_e8, self.high_e8],
            "mean_float": round(self.mean, 4),
            "interval_float": [round(self.low, 4), round(self.high, 4)],
            "confidence_pct": CONFIDENCE_PCT,
            "method": (
                "stationary bootstrap (arch), expanded percentile interval, never narrower "
                "than the batch-means t interval"
            ),
            "block_length": round(self.block, 4),
            "batch": self.batch,
            "resamples": self.resamples,
            "seed": self.seed,
        }


def mean_interval(values: Sequence[int], seed: int, resamples: int = RESAMPLES) -> MeanInterval:
    """The stationary bootstrap of the mean of ``values`` (see the module docstring); in
    ``report.statsworker``'s child when one runs (the same numbers), else here."""
    from arena_tui.report import statsworker

    worker = statsworker.running()
    if worker is not None:
        try:
            got: MeanInterval = worker.call("mean_interval", list(values), seed, resamples)
            return got
        except statsworker.Failed:
            pass
    return _mean_interval(values, seed, resamples)


def _mean_interval(values: Sequence[int], seed: int, resamples: int) -> MeanInterval:
    import numpy as np

    n = len(values)
    if n == 0:
        raise ValueError("no blocks to resample")
    mean_e8 = tdiv(sum(values), n)
    x = np.asarray(values, dtype=np.float64)
    mean = float(x.mean())
    b = block_length(values)
    tail = expanded_tail(n)
    batch = batch_size(n)
    if float(np.ptp(x)) == 0.0:
        return MeanInterval(n, mean_e8, mean, mean, mean, b, 0, seed, tail, batch)
    bs = _arch().StationaryBootstrap(b, x, seed=seed)
    means = bs.apply(np.mean, resamples)[:, 0]
    low, high = np.quantile(means, [tail, 1 - tail], method="inverted_cdf")
    # never narrower than the batch-means t interval: with few blocks the bootstrap's
    # spread of means is too small (docs/verdict.md has the coverage measured)
    half = batch_half_width(x, batch)
    low, high = min(float(low), mean - half), max(float(high), mean + half)
    return MeanInterval(n, mean_e8, mean, low, high, b, resamples, seed, tail, batch)


def batch_size(n: int) -> int:
    """Blocks a batch for ``n`` blocks: the cube root of ``n`` rounded, at least 3, and
    small enough to leave at least 4 batches (1 below 8 blocks: plain t)."""
    if n < 8:
        return 1
    root = round(math.pow(n, 1 / 3))
    return max(1, min(max(3, root), n // 4))


def batch_half_width(x: Any, batch: int = 1) -> float:
    """Half the width of the 95% batch-means t interval of the mean of ``x``: the last
    ``m = n // batch`` whole batches of ``batch`` consecutive values give the long-run
    variance (``batch`` times their means' variance), the mean is of all ``n``, and t has
    ``m - 1`` degrees of freedom. ``batch`` 1 is Student's t interval. (Schmeiser, 1982,
    "Batch size effects in the analysis of simulation output", Operations Research 30.)"""
    import numpy as np
    from scipy import stats as st

    n = len(x)
    m = n // max(1, batch)
    if m < 2:
        return 0.0
    means = np.asarray(x, dtype=np.float64)[n - m * batch :].reshape(m, batch).mean(axis=1)
    long_run = batch * float(np.var(means, ddof=1))
    return float(st.t.ppf(1 - (100 - CONFIDENCE_PCT) / 200, m - 1)) * math.sqrt(long_run / n)


@dataclass(frozen=True)
class SpaResult:
    """Hansen's SPA over K variants' block scores against a benchmark's (higher better)."""

    p_consistent: float  # Hansen's p-value (the one to read)
    p_lower: float
    p_upper: float  # White's reality check
    best: int  # the variant with the highest mean block score
    block: float
    resamples: int
    seed: int


def spa(
    benchmark: Sequence[int],
    variants: Sequence[Sequence[int]],
    seed: int,
    resamples: int = TEST_RESAMPLES,
) -> SpaResult:
    """``variants[k][b]`` and ``benchmark[b]``: block scores over the same blocks."""
    import numpy as np

    bench = np.asarray(benchmark, dtype=np.float64)
    models = np.asarray(variants, dtype=np.float64).T  # blocks x K
    means = models.mean(axis=0)
    best = int(np.argmax(means))
    diffs = models - bench[:, None]
    if float(np.ptp(diffs, axis=0).max()) == 0.0:  # every lead the same in every block
        p_const = 0.0 if float(diffs[0].max()) > 0 else 1.0
        return SpaResult(p_const, p_const, p_const, best, 1.0, 0, seed)
    b = block_length([float(v) for v in diffs.mean(axis=1)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test = _arch().SPA(
            -bench, -models, block_size=max(1, round(b)), reps=resamples, seed=seed
        )  # arch speaks of losses: lower is better
        test.compute()
    p = test.pvalues
    return SpaResult(
        float(p["consistent"]), float(p["lower"]), float(p["upper"]), best, b, resamples, seed
    )


def stepm(
    benchmark: Sequence[int],
    variants: Sequence[Sequence[int]],
    seed: int,
    resamples: int = TEST_RESAMPLES,
) -> list[int]:
    """The variants better than the benchmark, each, at 5% familywise (Romano-Wolf)."""
    import numpy as np

    bench = np.asarray(benchmark, dtype=np.float64)
    models = np.asarray(variants, dtype=np.float64).T
    diffs = models - bench[:, None]
    const = np.ptp(diffs, axis=0) == 0  # a lead the same in every block: no test needed
    sure = [int(k) for k in np.flatnonzero(const) if diffs[0, k] > 0]
    rest = np.flatnonzero(~const)
    if len(rest) == 0:
        return sure
    b = block_length([float(v) for v in diffs[:, rest].mean(axis=1)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test = _arch().StepM(
            -bench, -models[:, rest], size=ALPHA, block_size=max(1, round(b)),
            reps=resamples, seed=seed,
        )  # fmt: skip
        test.compute()
    return sorted(sure + [int(rest[int(str(i))]) for i in test.superior_models])


def mcs(variants: Sequence[Sequence[int]], seed: int, resamples: int = TEST_RESAMPLES) -> list[int]:
    """The model confidence set at 95%: the variants not told apart from the best."""
    import numpy as np

    models = np.asarray(variants, dtype=np.float64).T  # blocks x K
    if models.shape[1] == 1 or float(np.ptp(models - models[:, :1], axis=0).max()) == 0.0:
        return list(range(models.shape[1]))  # one variant, or all the same in every block
    b = block_length([float(v) for v in models.mean(axis=1)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test = _arch().MCS(
            -models, size=ALPHA, reps=resamples, block_size=max(1, round(b)), seed=seed
        )
        test.compute()
    return sorted(int(str(i)) for i in test.included)


# what ``report.statsworker``'s child may be asked to compute, by name
WORKER_CALLS = {"mean_interval": _mean_interval}
