"""The coins ``arena synth`` knows, and the shape of each one's synthetic market.

Asset indexes and szDecimals are Hyperliquid mainnet's (a coin's index is its position in
``meta``'s universe). The shape numbers are calibrated on the real captures in
``shared/data/hyperliquid`` (see recordings/README.md for what was measured): BTC's book and
prints are measured there; the other coins are scaled by price and liquidity. A coin from
``--meta`` that is not in the table gets a generic shape from its szDecimals (on Hyperliquid
one lot is worth roughly $0.1-$1, so the price is about ``0.5 * 10**szDecimals``).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.season import Market


@dataclass(frozen=True)
class Profile:
    """How one coin's synthetic feed looks. Money in USD, rates per second."""

    px0: float  # starting price
    vol_day: float  # daily volatility (fraction), before bursts and trends
    level_usd: float  # median resting size of a book level
    level_sigma: float  # log-sd of level sizes (the BTC capture: ~2.9 with dust, ~2 without)
    dust: float  # share of levels holding a few lots only (BTC capture: ~8% at <= 10 lots)
    print_usd: float  # median size of a print
    trades_per_s: float  # trades messages a second, in a calm market
    gaps: tuple[float, ...]  # cumulative probability of a gap of 1, 2, ... ticks between levels
    impact_usd: float  # the notional behind impactPxs
    open_interest_usd: float
    day_volume_usd: float


# BTC's gaps are the capture's (1: 75%, 2: 16%, 3: 7%, 4: 2%); coins with a finer tick relative
# to their price (ETH's $0.1 at ~$3,900, HYPE's $0.001 at ~$42) leave more empty ticks.
BTC = Profile(
    px0=104_250,
    vol_day=0.025,
    level_usd=30_000,
    level_sigma=2.0,
    dust=0.08,
    print_usd=700,
    trades_per_s=0.45,
    gaps=(0.75, 0.91, 0.98, 1.0),
    impact_usd=20_000,
    open_interest_usd=3.3e9,
    day_volume_usd=2.4e9,
)
ETH = Profile(
    px0=3_912.4,
    vol_day=0.035,
    level_usd=20_000,
    level_sigma=2.0,
    dust=0.06,
    print_usd=500,
    trades_per_s=0.35,
    gaps=(0.62, 0.84, 0.94, 1.0),
    impact_usd=20_000,
    open_interest_usd=2.4e9,
    day_volume_usd=1.1e9,
)
SOL = Profile(
    px0=187.42,
    vol_day=0.045,
    level_usd=12_000,
    level_sigma=1.9,
    dust=0.06,
    print_usd=380,
    trades_per_s=0.25,
    gaps=(0.7, 0.9, 0.97, 1.0),
    impact_usd=10_000,
    open_interest_usd=7.3e8,
    day_volume_usd=3.1e8,
)
HYPE = Profile(
    px0=41.873,
    vol_day=0.06,
    level_usd=8_000,
    level_sigma=1.9,
    dust=0.05,
    print_usd=300,
    trades_per_s=0.25,
    gaps=(0.5, 0.75, 0.9, 0.96, 1.0),
    impact_usd=10_000,
    open_interest_usd=8.8e8,
    day_volume_usd=2.6e8,
)

BUILTIN: dict[str, tuple[Market, Profile]] = {
    "BTC": (Market(coin="BTC", asset=0, szDecimals=5), BTC),
    "ETH": (Market(coin="ETH", asset=1, szDecimals=4), ETH),
    "SOL": (Market(coin="SOL", asset=5, szDecimals=2), SOL),
    "HYPE": (Market(coin="HYPE", asset=159, szDecimals=2), HYPE),
}


def generic(sz_decimals: int) -> Profile:
    """A plausible shape for a coin the table lacks, from its szDecimals alone."""
    return Profile(
        px0=0.5 * 10**sz_decimals,
        vol_day=0.05,
        level_usd=5_000,
        level_sigma=1.9,
        dust=0.05,
        print_usd=220,
        trades_per_s=0.2,
        gaps=(0.6, 0.85, 0.95, 1.0),
        impact_usd=5_000,
        open_interest_usd=5e7,
        day_volume_usd=5e7,
    )


def profile_for(market: Market) -> Profile:
    known = BUILTIN.get(market.coin)
    return known[1] if known is not None else generic(market.szDecimals)
