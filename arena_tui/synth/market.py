"""One coin's synthetic price, a second at a time: random walk, overshoots, trends, bursts.

The price is an anchor that random-walks (the coin's volatility) times a deviation that
reverts to zero (half-life 10 minutes), both moved each second by the same shock. Part of
the shock is the order-flow imbalance of the second before: the trades printed during a
second lean to the side the next move will take, so the flow leads the book. A regime
machine adds calm spells, trends (20-120 min of flow leaning one way, the perp rich or cheap
to the oracle) and bursts (2-12 min of 3.5x volatility after a jump, triple the trading,
wider spreads; what follows a burst often trends the jump's way). Momentum strategies find
the trends, mean-reversion strategies the overshoots.

Everything is drawn from the coin's own ``random.Random`` in a fixed order, so the same seed
gives the same path, and a shorter run is a prefix of a longer one.
"""

from __future__ import annotations

import math
from random import Random

from arena_tui.synth.book import Book
from arena_tui.synth.coins import Profile
from arena_tui.synth.exact import Grid, normal
from engine.units import MINUTE_MS

CALM, TREND, BURST = 0, 1, 2
# (minutes lo, hi), volatility multiplier, trading-rate multiplier, P(spread of 1 tick)
REGIMES = {
    CALM: ((15, 90), 1.0, 1.0, 0.93),
    TREND: ((20, 120), 1.15, 1.5, 0.93),
    BURST: ((2, 12), 3.5, 3.0, 0.55),
}
FLOW_AR, FLOW_NEW = 0.7, 0.714142842854285  # the flow: AR(1), unit variance, ~3 s memory
LEAD, NOISE = 0.5, 0.8660254037844386  # weights of the flow and of fresh noise in a move
# The flow's memory makes moves add up faster than independent ones: this brings a long run
# of moves back to the volatility asked for: sqrt(LEAD**2 * (1 + AR) / (1 - AR) + NOISE**2).
MEMORY = 1.4719601443879744
KAPPA = 0.6931471805599453 / 600  # the deviation's reversion a second: half-life 10 min
REVERT = 0.6  # each move overshoots by this share, given back as the deviation decays
VOL_FIX = 1.7  # bursts, trends and overshoots raise the realised volatility this much


def touch(grid: Grid, book: Book, mid_px: float, spread: int) -> tuple[int, int]:
    """The best bid and ask (grid units) ``spread`` ticks apart, centred on the latent mid:
    the bid is the grid price at or under mid - (spread - 1) ticks / 2, so the book's mid
    lies within half a tick of the latent one whatever the spread; the book follows."""
    mid = mid_px * grid.unit
    tick = grid.tick(max(1, int(mid)))
    bid = grid.down(max(1, int(mid - (spread - 1) * tick / 2)))
    ask = grid.above(bid, spread)
    book.align(bid, ask)
    return bid, ask


class Price:
    """The latent price of one coin and the touch (best bid, best ask) it puts on the book."""

    basis_noise = 0.00002  # the basis's shock at each asset context (~2.5 bps wander)

    def __init__(self, p: Profile, grid: Grid, book: Book, rng: Random, start_ms: int) -> None:
        self.grid = grid
        self.book = book
        self.rng = rng
        self.sigma = p.vol_day / math.sqrt(86_400.0) / VOL_FIX
        self.anchor = p.px0 * (1 + 0.02 * normal(rng))
        self.dev = self.flow = self.bias = 0.0
        self.jump = 1.0
        self.regime = CALM
        self.until = start_ms + MINUTE_MS * (5 + rng.randrange(55))
        self.vol_mult = self.rate_mult = 1.0
        self.tight = REGIMES[CALM][3]
        self.basis_target = 0.00005  # the perp's premium to the oracle the market leans to
        self.p_buy = 0.5
        self.bid = self.ask = 0

    @property
    def mid(self) -> float:
        return self.anchor * (1 + self.dev)

    @property
    def oracle_mid(self) -> float:
        """The price the oracle follows (the basis aside): the mid itself (walk.py's
        ``--signal`` moves it)."""
        return self.mid

    def _regime(self, t: int) -> None:
        rng = self.rng
        u = rng.random()
        if self.regime == BURST:
            nxt = TREND if u < 0.5 else CALM
            sign = self.jump  # after a burst, the trend follows the jump
        else:
            nxt = TREND if u < 0.45 else BURST if u < 0.65 else CALM
            sign = 1.0 if rng.random() < 0.5 else -1.0
        (lo, hi), self.vol_mult, self.rate_mult, self.tight = REGIMES[nxt]
        self.regime = nxt
        self.until = t + MINUTE_MS * rng.randrange(lo, hi)
        self.bias, self.basis_target = 0.0, 0.00005
        if nxt == TREND:
            self.bias = sign * (0.008 + 0.017 * rng.random())
            self.basis_target = sign * (0.0002 + 0.0009 * rng.random())
        elif nxt == BURST:
            self.jump = 1.0 if rng.random() < 0.5 else -1.0
            self.anchor *= 1 + self.jump * self.sigma * (15 + 35 * rng.random())

    def step(self, t: int) -> None:
        """One second: the move the last second's flow announced, then this second's flow."""
        rng = self.rng
        if t >= self.until:
            self._regime(t)
        r = self.sigma * self.vol_mult * (LEAD * self.flow + NOISE * normal(rng)) / MEMORY
        self.anchor *= 1 + r
        self.dev = self.dev * (1 - KAPPA) + REVERT * r
        f = self.flow = FLOW_AR * self.flow + FLOW_NEW * normal(rng) + self.bias
        self.p_buy = 0.5 + 0.42 * f / (1 + abs(f))
        u = rng.random()
        spread = 1 if u < self.tight else 2 if u < (1 + self.tight) / 2 else 3
        if spread == 3 and self.regime == BURST:
            spread += rng.randrange(3)
        self.bid, self.ask = touch(self.grid, self.book, self.mid, spread)
