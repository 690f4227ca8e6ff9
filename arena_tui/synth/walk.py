"""``arena synth --model walk``: a market in which no strategy has an edge, unless one is planted.

Why it exists: a verdict that tells skill from luck must be measured where the truth is
known. The default model (``market``) has trends, overshoots and order flow that leads the
price, so a momentum or reversion strategy may really profit from it; it cannot be the "no
edge" null. Here the latent mid is a martingale at every horizon: each second it is
multiplied by ``1 + sigma * z`` (``z`` an exact-arithmetic standard normal, mean 0, one draw
a second; ``sigma`` from the coin's own ``vol_day``, constant), so ``E[mid(t+h) | all that
is known at t] = mid(t)`` for every ``h``. The martingale is in the price, not the log price:
profit and loss are linear in the price, and a driftless log walk would drift up by
``sigma**2 / 2`` a second. No regimes, no overshoot, no flow lead: the feed draws the prints'
sides (even odds), sizes and times independently of the path (``feed``), and the basis keeps
one level, with only stationary noise (the feed's ``ctx_line``).

``--signal BPS`` plants a known, predictable component. Each coin holds a drift state
``s`` in {-1, 0, +1}; each second it switches with probability ``1 / MEAN_HOLD_S`` to one of
the two other states (even odds), so a state lasts a geometric (discrete exponential) time
of mean ``MEAN_HOLD_S`` and the three states are equally likely in the long run. While ``s``
is held the mid's multiplier is ``1 + s * drift + sigma * z`` with ``drift = BPS / 10**4 /
3600`` a second, and the state is announced through the asset context: the oracle the feed
writes is ``mid * (1 + s * LEAD) / (1 + basis)`` (``basis``: the feed's small stationary
noise). So the truth is ``E[mid(t+h) / mid(t) - 1 | s held over (t, t+h]] = (1 + s * drift)
** h_seconds - 1``, which is ``s * BPS * h_hours`` basis points to well under a part in a
thousand; over a horizon in which ``s`` may switch, ``E[... | s(t)] = s * BPS * tau * (1 -
exp(-h / tau))`` with ``tau = MEAN_HOLD_S * 2 / 3`` (the chain's relaxation time). ``--signal
0`` announces the states and plants no drift: a placebo with no edge.

What the feed makes of it (``feed``, unchanged): books, prints and asset contexts as the
default model's calm regime has them (one trading rate, spreads of 1-3 ticks, the same book
churn). The mark is the median of the touch and the oracle carried to the book, so it stays
inside the touch; the premium is measured against the oracle, so a state of +1 makes it
about -9 bps (the book under the oracle) and -1 about +9 bps. Funding is the hour's average
premium plus the interest clamped to +-5 bps an 8 hours: so it stays at the interest-only
0.125 bps an hour unless one state holds long enough to pull the average past the clamp,
and then pays the side the state favours (longs in +1, shorts in -1) up to ~0.5 bps an hour
(-0.3 bps seen in a 6-hour day). That is part of the planted edge, tiny next to any drift
worth measuring (0.5 of 40 bps an hour).

The walk's draws (start price, shocks, state switches, spreads) come from a stream of its
own, seeded from (seed, coin) apart from the feed's: the same seed gives the same shocks and
states with or without ``--signal`` (the signal adds its drift to the same walk), and the
feed's draws stay in the coin's feed stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from random import Random

from arena_tui.synth.book import Book
from arena_tui.synth.coins import Profile
from arena_tui.synth.exact import Grid, normal
from arena_tui.synth.market import CALM, REGIMES, touch

REGIMES_MODEL, WALK_MODEL = "regimes", "walk"
MODELS = (REGIMES_MODEL, WALK_MODEL)
LEAD = 0.001  # the oracle's announcement: this far above the mid (10 bps) when s = +1
MEAN_HOLD_S = 1_800  # a drift state's mean holding time: 30 minutes
SWITCH_P = 1 / MEAN_HOLD_S  # the chance a second that the state switches
MAX_SIGNAL_BPS = 1_000.0  # 10% an hour: past this the "small drift" reading stops being true
SECONDS_PER_HOUR = 3_600
BASIS = 0.00005  # the perp's premium to the oracle the basis keeps (the calm regime's)
# The basis's shock at each asset context: a quarter of the regimes model's, so its wander
# (~0.6 bps) stays well inside the announcement (LEAD, 10 bps) and the oracle tells the state
# apart without a smoothing; it is independent of the mid, so it predicts nothing either way.
BASIS_NOISE = 0.000005


@dataclass(frozen=True)
class Model:
    """Which market ``arena synth`` generates: ``regimes`` (the default, the ``market``
    module) or ``walk``; ``signal_bps``: the walk's planted drift, bps an hour (None: none)."""

    name: str = REGIMES_MODEL
    signal_bps: float | None = None

    @property
    def is_default(self) -> bool:
        return self.name == REGIMES_MODEL


def drift_per_second(bps_per_hour: float) -> float:
    """The mid's multiplier drift a second for a drift of ``bps_per_hour`` (bps an hour)."""
    return bps_per_hour / (10_000.0 * SECONDS_PER_HOUR)


def expected_return(s: int, bps_per_hour: float, seconds: int) -> float:
    """The truth: the mean return of the mid over ``seconds`` during which ``s`` is held."""
    mult = 1.0 + s * drift_per_second(bps_per_hour)
    return float(mult**seconds) - 1.0  # for checks only: the generator never calls it


class Walk:
    """The latent mid of one coin and the touch it puts on the book: a martingale walk.

    It offers what the feed reads of ``market.Price`` (``bid``, ``ask``, ``mid``, ``regime``,
    ``rate_mult``, ``p_buy``, ``basis_target``, ``oracle_mid``, ``step``), with nothing that
    depends on the future: constant trading rate, even odds for a print's side, the calm
    regime's books and spreads.
    """

    def __init__(
        self,
        p: Profile,
        grid: Grid,
        book: Book,
        rng: Random,
        signal_bps: float | None = None,
    ) -> None:
        self.grid = grid
        self.book = book
        self.rng = rng
        self.sigma = p.vol_day / math.sqrt(86_400.0)  # sqrt is exactly rounded: exact
        self.mid = p.px0 * (1 + 0.02 * normal(rng))
        self.announce = signal_bps is not None
        self.drift = drift_per_second(signal_bps) if signal_bps is not None else 0.0
        self.state = rng.randrange(3) - 1  # drawn with no signal too: one stream for both
        self.regime = CALM
        self.rate_mult = 1.0
        self.p_buy = 0.5
        self.basis_target = BASIS
        self.basis_noise = BASIS_NOISE
        self.tight = REGIMES[CALM][3]
        self.bid = self.ask = 0

    @property
    def oracle_mid(self) -> float:
        """The price the oracle follows: the mid, moved by ``LEAD`` the state's way when the
        state is announced (``--signal``)."""
        if not self.announce:
            return self.mid
        return self.mid * (1 + self.state * LEAD)

    def step(self, t: int) -> None:
        """One second: the move under the state announced so far, then maybe a new state.

        The state that drives this move was in force (and in the oracle) during the second
        before, so what the data announced is what the next move follows; a switch drawn now
        drives the moves from the next second on. ``t`` is unused: the walk has no clock
        (the same signature as ``market.Price.step``).
        """
        rng = self.rng
        self.mid *= 1 + self.state * self.drift + self.sigma * normal(rng)
        if rng.random() < SWITCH_P:
            self.state = (self.state + 2 + rng.randrange(2)) % 3 - 1  # one of the other two
        u = rng.random()
        spread = 1 if u < self.tight else 2 if u < (1 + self.tight) / 2 else 3
        # The touch is centred on the latent mid (as market.Price does it): the bid is the
        # grid price at or under mid - (spread - 1) ticks / 2, so the book's mid, (bid +
        # ask) / 2, lies within half a tick of the latent mid either way, whatever the
        # spread. Flooring the bid alone would lift the book's mid half a tick over the walk
        # whenever the spread is even. The rounding error has mean zero and never adds up:
        # each second rounds the unrounded walk afresh, so the book's mid is the martingale
        # plus a bounded, centred error (under half a tick: 0.05 bps for BTC).
        self.bid, self.ask = touch(self.grid, self.book, self.mid, spread)
