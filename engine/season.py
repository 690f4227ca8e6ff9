"""A season: its window, its markets and its rules, and the hash that freezes them.

Why this module exists: every number that could change between seasons is a field of
:class:`Rules`, read from one place, so a season's rules can be hashed
(:func:`rules_sha256`) and a log started under other rules refused. Loading season files
from disk is the shell's job (``arena_tui.season.file``); this module only holds and checks
the values.

May not touch: files, clocks, floats.
"""

from __future__ import annotations

import hashlib
import json
import re

import msgspec

from engine.units import MINUTE_MS as MINUTE_MS  # its home is engine.units


class Rules(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Season rules, Season 0 values as defaults. Units are in the field names' suffixes."""

    starting_equity: int = 10_000_000_000
    position_cap_pct: int = 12
    drawdown_limit_pct: int = 15
    max_open_orders: int = 8
    order_lifetime_ms: int = 3_600_000
    performance_fee_pct: int = 10
    performance_fee_period_ms: int = 604_800_000
    execution_fee_dbps: int = 20
    taker_fee_dbps: int = 45
    maker_fee_dbps: int = 15
    activation_delay_ms: int = 2_000
    stale_book_ms: int = 10_000
    take_fraction_pct: int = 25
    print_fraction_pct: int = 25
    deplete_book: bool = False
    mark_interval_ms: int = 60_000
    funding_interval_ms: int = 3_600_000
    lambda_num: int = 1
    lambda_den: int = 1
    min_fill_days: int = 10
    min_active_pct: int = 20
    min_order_value: int = 10_000_000
    rate_limit_requests: int = 20
    rate_limit_window_ms: int = 10_000


class Market(msgspec.Struct, frozen=True):
    """One perp market as Hyperliquid's ``meta`` lists it (asset = index in the universe)."""

    coin: str
    asset: int
    szDecimals: int


class Season(msgspec.Struct, frozen=True):
    id: str
    start: int
    end: int
    markets: tuple[Market, ...]
    rules: Rules = Rules()

    @property
    def rules_sha256(self) -> str:
        return rules_sha256(self.markets, self.rules)


SEASON0_RULES = Rules()

_POSITIVE = (
    "starting_equity",
    "max_open_orders",
    "order_lifetime_ms",
    "performance_fee_period_ms",
    "mark_interval_ms",
    "funding_interval_ms",
    "lambda_den",
    "min_order_value",
    "rate_limit_requests",
    "rate_limit_window_ms",
)
_PERCENT = (
    "position_cap_pct",
    "drawdown_limit_pct",
    "performance_fee_pct",
    "take_fraction_pct",
    "print_fraction_pct",
    "min_active_pct",
)
_SEASON_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def rules_sha256(markets: tuple[Market, ...] | list[Market], rules: Rules) -> str:
    """SHA-256 of ``{"markets":[...sorted by asset...],"rules":{...}}``, sorted keys, no spaces."""
    doc = {
        "markets": [msgspec.to_builtins(m) for m in sorted(markets, key=lambda m: m.asset)],
        "rules": msgspec.to_builtins(rules),
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_rules(rules: Rules) -> None:
    """Raise ValueError for rules the engine cannot run."""
    for name in _POSITIVE:
        if getattr(rules, name) <= 0:
            raise ValueError(f"rules.{name} must be positive")
    for name in _PERCENT:
        if not 0 <= getattr(rules, name) <= 100:
            raise ValueError(f"rules.{name} must be between 0 and 100")
    for name in (
        "execution_fee_dbps",
        "taker_fee_dbps",
        "maker_fee_dbps",
        "activation_delay_ms",
        "stale_book_ms",
        "lambda_num",
        "min_fill_days",
    ):
        if getattr(rules, name) < 0:
            raise ValueError(f"rules.{name} must not be negative")
    if rules.deplete_book:
        raise ValueError("rules.deplete_book = true is not defined for Season 0; use false")


def check_markets(markets: tuple[Market, ...] | list[Market]) -> None:
    if not markets:
        raise ValueError("a season needs at least one market")
    coins: set[str] = set()
    assets: set[int] = set()
    for m in markets:
        if not m.coin or m.coin in coins:
            raise ValueError(f"market coin {m.coin!r} is empty or listed twice")
        if m.asset < 0 or m.asset in assets:
            raise ValueError(f"market asset {m.asset} is negative or listed twice")
        if not 0 <= m.szDecimals <= 8:
            raise ValueError(f"market {m.coin}: szDecimals must be 0..8")
        coins.add(m.coin)
        assets.add(m.asset)


def check_season(season: Season) -> None:
    """Raise ValueError naming the first thing wrong with a season."""
    if not _SEASON_ID.fullmatch(season.id):
        raise ValueError(f"season id {season.id!r} must be 1-64 of [A-Za-z0-9_.-]")
    if season.start % MINUTE_MS or season.end % MINUTE_MS:
        raise ValueError("season start and end must be on minute boundaries (ms % 60000 == 0)")
    if season.end <= season.start:
        raise ValueError("season end must be after its start")
    check_markets(season.markets)
    check_rules(season.rules)


def backtest_season(
    first_t: int, last_t: int, markets: tuple[Market, ...], season_id: str = "backtest"
) -> Season:
    """The contract's defaults for a log with no season file.

    Season 0 rules; ``start`` = first minute boundary at or after the first input; ``end`` =
    last minute boundary at or before the last input. Raises ValueError when the window is
    empty (the log does not span a whole minute).
    """
    start = -((-first_t) // MINUTE_MS) * MINUTE_MS
    end = (last_t // MINUTE_MS) * MINUTE_MS
    if end <= start:
        raise ValueError(
            "the log does not span a whole minute boundary to boundary, so it has no "
            "default season window; pass --season FILE"
        )
    return Season(id=season_id, start=start, end=end, markets=tuple(markets), rules=Rules())
