"""Writing a new season file (``arena season new``): a window, markets from meta, Season 0 rules.

Why this module exists: a season file freezes what a season is scored under, and a wrong
asset index or szDecimals typed by hand would silently change fills. This takes the markets
from Hyperliquid's ``meta``, writes every rule at its Season 0 value with a comment saying
what it means, in the format of ``seasons/season0.toml``, and checks that the text loads
back (``arena_tui.season.file``) to exactly the season meant before it is put in place.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path

import msgspec

from arena_tui.logs.meta import parse_coins, select
from arena_tui.season.file import SeasonError, parse_season
from arena_tui.util.outputs import writing
from engine import Market, Season
from engine.season import SEASON0_RULES, check_season
from engine.units import MINUTE_MS

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

RULE_NOTES = {
    "starting_equity": "USDC e6: $10,000",
    "position_cap_pct": "exposure (positions at mark + open reserves) vs equity",
    "drawdown_limit_pct": "from the peak, checked at each minute mark; then paused",
    "order_lifetime_ms": "1 h",
    "performance_fee_pct": "of equity above the fee high-water mark",
    "performance_fee_period_ms": "weekly, and once at the end",
    "execution_fee_dbps": "tenths of a basis point: 2 bps",
    "taker_fee_dbps": "4.5 bps (Hyperliquid tier 0)",
    "maker_fee_dbps": "1.5 bps",
    "stale_book_ms": "a book is stale when receive t - book time is above this",
    "take_fraction_pct": "of each displayed level, taking liquidity",
    "print_fraction_pct": "of each print through a resting order's price",
    "lambda_num": "S = R - lambda * MDD, lambda = 1/1",
    "min_order_value": "USDC e6: $10",
}


def parse_time(text: str, flag: str) -> int:
    """``2026-12-07T00:00:00Z`` (any ISO time with a zone) or integer ms, on a minute."""
    text = text.strip()
    if re.fullmatch(r"-?[0-9]+", text):
        ms = int(text)
    else:
        try:
            when = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise SeasonError(
                f"{flag} {text!r}: not an ISO time or integer ms (e.g. 2026-12-07T00:00:00Z)"
            ) from None
        if when.tzinfo is None:
            raise SeasonError(f"{flag} {text}: give the time zone (Z for UTC)")
        ms = (when - _EPOCH) // dt.timedelta(milliseconds=1)
    if ms % MINUTE_MS:
        raise SeasonError(f"{flag} {text}: not on a minute boundary (seconds and ms must be 0)")
    return ms


def toml_time(ms: int) -> str:
    try:
        when = _EPOCH + dt.timedelta(milliseconds=ms)
    except OverflowError:
        raise SeasonError(f"{ms} ms is out of range for a date") from None
    return (
        f"{when.year:04d}-{when.month:02d}-{when.day:02d}T"
        f"{when.hour:02d}:{when.minute:02d}:{when.second:02d}Z"
    )


def toml_str(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, DEL aside)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def new_season(
    season_id: str, coins: str, start: int, end: int, universe: Sequence[Market]
) -> Season:
    """The season ``arena season new`` writes; SeasonError/MetaError say what is wrong."""
    markets = select(universe, parse_coins(coins))
    season = Season(id=season_id, start=start, end=end, markets=markets, rules=SEASON0_RULES)
    try:
        check_season(season)
    except ValueError as exc:
        raise SeasonError(str(exc)) from None
    return season


def check_args(season_id: str, start: int, end: int) -> None:
    """The id and window checked before meta is fetched, so a typo fails fast."""
    if end <= start:
        raise SeasonError("--end must be after --start")
    placeholder = (Market(coin="-", asset=0, szDecimals=0),)
    try:
        check_season(Season(id=season_id, start=start, end=end, markets=placeholder))
    except ValueError as exc:
        raise SeasonError(str(exc)) from None


def season_toml(season: Season, description: str | None, meta_source: str) -> str:
    coins = ", ".join(m.coin for m in season.markets)
    out = [
        f"# Season {season.id}, written by `arena season new`: the Season 0 rules",
        f"# (docs/rules.md) on {coins}; asset = the coin's index in Hyperliquid's `meta`",
        f"# universe, szDecimals as meta lists it (meta from {meta_source}).",
        f"# `arena season show` prints it with its rules_sha256 ({season.rules_sha256[:16]}...).",
        "# Neither `id` nor the window is part of rules_sha256; the markets and rules are.",
        "",
        f"id = {toml_str(season.id)}",
    ]
    if description is not None:
        out.append(f"description = {toml_str(description)}")
    out += [f"start = {toml_time(season.start)}", f"end = {toml_time(season.end)}"]
    for m in season.markets:
        out += ["", "[[markets]]", f"coin = {toml_str(m.coin)}"]
        out += [f"asset = {m.asset}", f"szDecimals = {m.szDecimals}"]
    out += ["", "[rules]"]
    for name, value in msgspec.structs.asdict(season.rules).items():
        text = f"{name} = {str(value).lower() if isinstance(value, bool) else value}"
        note = RULE_NOTES.get(name)
        out.append(f"{text:<{max(35, len(text) + 2)}}# {note}" if note else text)
    return "\n".join(out) + "\n"


def write_season(
    path: Path, season: Season, description: str | None, meta_source: str, force: bool
) -> None:
    """Write the file (refusing to replace one unless ``force``), checked to load back."""
    if path.exists() and not force:
        raise SeasonError(f"{path} already exists; pass --force to overwrite it")
    text = season_toml(season, description, meta_source)
    loaded = parse_season(tomllib.loads(text), str(path))
    if loaded != season:
        raise AssertionError(f"season file text does not load back: {loaded} != {season}")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
