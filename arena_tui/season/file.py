"""Season files on disk (TOML or JSON) and choosing the season a log is replayed under.

Format (docs/rules.md, "Season file"): ``id``; ``start`` and ``end`` as UTC datetimes or
integer ms, on minute boundaries; ``[[markets]]`` tables of ``coin``, ``asset`` (index in
Hyperliquid's ``meta`` universe) and ``szDecimals``; a ``[rules]`` table (any rule left out
takes its Season 0 value; an unknown rule is an error, so a typo cannot pass unseen).
"""

from __future__ import annotations

import datetime as dt
import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.logs import span
from arena_tui.logs.thinlog import read_any_header
from arena_tui.util.errors import ArenaError
from arena_tui.util.paths import ARENA_TREE
from engine import Header, Market, Rules, Season, backtest_season
from engine.season import check_markets, check_season
from engine.units import MINUTE_MS

PAPER = True  # Season 0 is paper trading: every score shown says so (seed 000)


class SeasonError(ArenaError):
    """A season file that cannot be used, or a log that does not fit its season."""


class EmptyWindow(SeasonError):
    """Logs with no season whose inputs span no whole minute: the default window is empty.

    ``season`` is what the defaults give (Season 0 rules, the headers' markets, ``start``
    after ``end``); there is nothing to mark or score, but the logs can still be checked.
    """

    def __init__(self, message: str, season: Season) -> None:
        super().__init__(message)
        self.season = season


def _ms(value: Any, field: str) -> int:
    if isinstance(value, bool):
        raise SeasonError(f"{field} must be a UTC datetime or integer ms")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise SeasonError(f"{field}: not an ISO datetime: {value!r}") from None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise SeasonError(f"{field} needs a time zone (write it with Z for UTC)")
        epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        delta = value - epoch
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    raise SeasonError(f"{field} must be a UTC datetime or integer ms")


def parse_season(doc: dict[str, Any], source: str = "season") -> Season:
    """Build and check a Season from a decoded TOML/JSON document."""
    try:
        known = {"id", "start", "end", "markets", "rules", "description"}
        extra = sorted(set(doc) - known)
        if extra:
            raise SeasonError(f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(extra)}")
        for key in ("id", "start", "end", "markets"):
            if key not in doc:
                raise SeasonError(f"missing {key!r}")
        markets = msgspec.convert(doc["markets"], tuple[Market, ...])
        rules = msgspec.convert(doc.get("rules", {}), Rules)
        season = Season(
            id=str(doc["id"]),
            start=_ms(doc["start"], "start"),
            end=_ms(doc["end"], "end"),
            markets=markets,
            rules=rules,
        )
        check_season(season)
    except msgspec.ValidationError as exc:
        raise SeasonError(f"{source}: {exc}") from None
    except (SeasonError, ValueError) as exc:
        raise SeasonError(f"{source}: {exc}") from None
    return season


def season_doc(season: Season) -> dict[str, Any]:
    """The season as a JSON season file holds it: what ``parse_season`` reads back."""
    return {
        "id": season.id,
        "start": season.start,
        "end": season.end,
        "markets": msgspec.to_builtins(list(season.markets)),
        "rules": msgspec.to_builtins(season.rules),
    }


def log_header(season: Season, generator: str) -> dict[str, Any]:
    """A run log's header fields for ``season`` (its window is checked on replay)."""
    return {
        "season": season.id,
        "rules_sha256": season.rules_sha256,
        "markets": msgspec.to_builtins(list(season.markets)),
        "start": season.start,
        "end": season.end,
        "generator": generator,
    }


def write_season(season: Season, directory: Path) -> Path:
    """The season beside a run log, where ``arena replay`` of the log looks first."""
    path = directory / f"{season.id}.json"
    path.write_bytes(msgspec.json.encode(season_doc(season)) + b"\n")
    return path


def load_season(path: str | Path) -> Season:
    p = Path(path)
    try:
        text = p.read_bytes()
    except OSError as exc:
        raise SeasonError(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        doc = json.loads(text) if p.suffix == ".json" else tomllib.loads(text.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        kind = "JSON" if p.suffix == ".json" else "TOML"
        raise SeasonError(f"{p}: not valid {kind}: {exc}") from None
    if not isinstance(doc, dict):
        raise SeasonError(f"{p}: a season file holds one table/object")
    return parse_season(doc, str(p))


def find_season_file(season_id: str, logs: Sequence[str | Path]) -> Path | None:
    """Where a log naming season ``season_id`` may find its file.

    Beside the log first (a backtest writes its season there), then ``../seasons`` from
    the log, then ``./seasons``, then arena's own ``seasons/`` (the shipped samples'
    seasons, for a copy of a sample in the builder's own directory).
    """
    dirs: list[Path] = []
    for log in logs:
        parent = Path(log).resolve().parent
        dirs += [parent, parent.parent / "seasons"]
    dirs += [Path("seasons"), ARENA_TREE / "seasons"]
    for d in dirs:
        for ext in (".toml", ".json"):
            candidate = d / f"{season_id}{ext}"
            if candidate.is_file():
                return candidate
    return None


def log_markets(headers: Sequence[Header], paths: Sequence[str]) -> tuple[Market, ...]:
    """The union of the headers' markets; the same coin must keep its asset index."""
    by_asset: dict[int, Market] = {}
    for header, path in zip(headers, paths, strict=True):
        for m in header.markets or []:
            seen = by_asset.get(m.asset)
            if seen is not None and seen != m:
                raise SeasonError(f"{path}: market {m} disagrees with {seen} in another file")
            by_asset[m.asset] = m
    markets = tuple(by_asset[a] for a in sorted(by_asset))
    if not markets:
        raise SeasonError("the logs' headers list no markets and no --season was given")
    try:
        check_markets(markets)
    except ValueError as exc:
        raise SeasonError(f"markets in the logs' headers: {exc}") from None
    return markets


def input_bounds(paths: Sequence[str]) -> tuple[int, int]:
    """``t`` of the first and the last input across the logs (headers and torn tails aside).

    Without a second pass: from the files' heads and the last file's end or its header's
    ``last_t`` (``arena_tui.logs.span``)."""
    bounds = span.input_bounds(paths)
    if bounds is None:
        raise SeasonError("the logs hold no inputs")
    return bounds


def resolve_season(paths: Sequence[str], season_path: str | Path | None) -> Season:
    """The season to replay ``paths`` under, refusing a log started under other rules."""
    headers = [read_any_header(p) for p in paths]  # a thin run log's: its full log's
    if season_path is not None:
        season = load_season(season_path)
    else:
        named = sorted({h.season for h in headers if h.season})
        if len(named) > 1:
            raise SeasonError(f"the logs name different seasons: {', '.join(named)}")
        if named:
            found = find_season_file(named[0], paths)
            if found is None:
                raise SeasonError(
                    f"the log was written for season {named[0]!r}; its season "
                    "file was not found beside the log, in ./seasons or in arena's own: "
                    "pass --season FILE"
                )
            season = load_season(found)
        else:
            first, last = input_bounds(paths)
            markets = log_markets(headers, paths)
            try:
                season = backtest_season(first, last, markets)
            except ValueError as exc:
                start = -((-first) // MINUTE_MS) * MINUTE_MS
                empty = Season("backtest", start, (last // MINUTE_MS) * MINUTE_MS, markets)
                raise EmptyWindow(str(exc), empty) from None
    want = season.rules_sha256
    for header, path in zip(headers, paths, strict=True):
        if header.rules_sha256 is not None and header.rules_sha256 != want:
            raise SeasonError(
                f"{path} was started under rules {header.rules_sha256}, but season "
                f"{season.id!r} has rules {want}: refusing to replay under other rules"
            )
        window = (header.start, header.end)
        if header.start is not None and window != (season.start, season.end):
            raise SeasonError(
                f"{path} was written for the window {header.start} -> {header.end}, but "
                f"season {season.id!r} runs {season.start} -> {season.end}: pass the season "
                "file it was run under"
            )
    return season
