"""What a host run is: its season, its log's header, and where its market data comes from.

Why this module exists: a log is one season under one set of rules fed by one source, so
the choice is made once, when the log is created, and a restart must agree with it. A new
log takes ``--season`` (or, with ``--replay`` and no season, one made to cover the
replayed run: Season 0 rules, the recording's markets, from the current minute to the
minute after the re-stamped recording ends) and records in its header where its market
data comes from (``feed``: the WebSocket; or ``replay``: the recordings, the speed and the
map's origin, so a restart resumes on the same clock). An existing log is continued only
under the rules and the source it names; anything else is refused with one line.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from arena_tui.host.errors import HostError
from arena_tui.host.restamp import Restamp, speed_text
from arena_tui.logs.logfile import iter_raw_lines, read_header
from arena_tui.logs.meta import WS_URL, fetch_meta
from arena_tui.logs.readahead import is_compressed
from arena_tui.season.file import (
    input_bounds,
    load_season,
    log_header,
    log_markets,
    resolve_season,
    write_season,
)
from arena_tui.util.human import utc_minute
from engine import Season
from engine.season import MINUTE_MS, SEASON0_RULES, check_season

GENERATOR = "arena host"


@dataclass(frozen=True)
class HostOptions:
    log: Path
    season: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    replay: tuple[Path, ...] = ()
    speed: Fraction = Fraction(1)
    ws_url: str = WS_URL
    info_url: str | None = None
    body_max: int = 4096
    fsync: bool = True
    checkpoint_every_ms: int | None = 3_600_000  # log time between checkpoints; None: off
    checkpoint_check: str = "quick"  # or "full" (host.checkpoint)
    # the process is the host's own (``arena host``): what the session holds for good is
    # kept out of the garbage collector's full passes (``host.session.settle``)
    freeze_gc: bool = False
    readers_port: int | None = None  # the public reads from a child process too (host.readers)
    # the stacks of the loop's stalls longer than this go beside the log (host.stalls);
    # faulthandler's timer (its fallback) is the process's: one host with it at a time
    stall_trace_ms: int | None = None


@dataclass
class Plan:
    season: Season
    header: dict[str, Any]
    restamp: Restamp | None = None
    resumed: bool = False  # the log held inputs already: this run is a restart
    notes: list[str] = field(default_factory=list)


def raw_header(log: Path) -> dict[str, Any]:
    for raw in iter_raw_lines(log):
        doc = json.loads(raw)
        return doc if isinstance(doc, dict) else {}
    return {}


def plan(opts: HostOptions, now: int) -> Plan:
    log = opts.log
    if is_compressed(log):
        raise HostError(f"--log {log}: the host appends to a plain .jsonl log, not {log.suffix}")
    if log.is_file() and log.stat().st_size > 0:
        return _resume(opts, now)
    return _fresh(opts, now)


def _resume(opts: HostOptions, now: int) -> Plan:
    log = opts.log
    read_header(log)  # a bad header is one clear error
    header = raw_header(log)
    if header.get("generator") != GENERATOR:
        raise HostError(f"{log} was not written by arena host; give a new --log")
    season = resolve_season([str(log)], opts.season)  # other rules: refused, both hashes named
    _season_beside(season, log)  # (served as GET /v1/season/file: there even if moved away)
    replay = header.get("replay")
    if replay is None and opts.replay:
        raise HostError(f"{log} takes the live feed ({header.get('feed')}); drop --replay")
    if replay is None:
        return Plan(season, header, resumed=True)
    names = [p.name for p in opts.replay]
    speed = speed_text(opts.speed)
    if (
        not isinstance(replay, dict)
        or names != replay.get("sources")
        or speed != replay.get("speed")
    ):
        raise HostError(
            f"{log} replays {replay.get('sources') if isinstance(replay, dict) else replay} at "
            f"--speed {replay.get('speed') if isinstance(replay, dict) else '?'}; pass the same "
            "--replay and --speed to go on with it, or give a new --log"
        )
    stamp = Restamp(int(replay["origin_t"]), int(replay["origin_wall"]), opts.speed)
    return Plan(season, header, stamp, resumed=True)


def _fresh(opts: HostOptions, now: int) -> Plan:
    stamp: Restamp | None = None
    notes: list[str] = []
    if opts.replay:
        paths = [str(p) for p in opts.replay]
        first, last = input_bounds(paths)
        stamp = Restamp(first, now, opts.speed)
        if opts.season is None:
            season = replay_season(paths, now, stamp.at(last))
            notes.append(f"made season {season.id} for the replay: {_window(season)}")
        else:
            season = load_season(opts.season)
    elif opts.season is not None:
        season = load_season(opts.season)
        if opts.info_url:
            check_meta(season, opts.info_url)
    else:
        raise HostError(
            "pass --season FILE (or --replay RECORDING to rehearse on a recorded day, with a "
            "season made to cover it)"
        )
    if season.end <= now:
        raise HostError(f"season {season.id} ended at {utc_minute(season.end)}: nothing to host")
    _season_beside(season, opts.log)
    header = log_header(season, GENERATOR)
    if stamp is not None:
        header["replay"] = {
            "sources": [p.name for p in opts.replay],
            "speed": speed_text(opts.speed),
            "origin_t": stamp.origin_t,
            "origin_wall": stamp.origin_wall,
        }
    else:
        header["feed"] = opts.ws_url
    return Plan(season, header, stamp, notes=notes)


def _window(season: Season) -> str:
    return f"{utc_minute(season.start)} -> {utc_minute(season.end)}"


def replay_season(paths: list[str], now: int, end_wall: int) -> Season:
    """Season 0 rules on the recordings' markets, covering the re-stamped run."""
    markets = log_markets([read_header(p) for p in paths], paths)
    start = now // MINUTE_MS * MINUTE_MS
    end = max(-(-end_wall // MINUTE_MS) * MINUTE_MS, start + MINUTE_MS)
    name = dt.datetime.fromtimestamp(start / 1000, dt.UTC).strftime("replay-%Y%m%d-%H%M")
    season = Season(name, start, end, markets, SEASON0_RULES)
    check_season(season)
    return season


def season_path(season: Season, log: Path) -> Path:
    """The season file beside the log: where ``arena replay LOG`` looks first, and what
    ``GET /v1/season/file`` serves."""
    return log.parent / f"{season.id}.json"


def _season_beside(season: Season, log: Path) -> None:
    """The season file beside the log, written if it is not there (checked if it is)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    path = season_path(season, log)
    if path.exists():
        if load_season(path) != season:
            raise HostError(f"{path} holds another season {season.id!r}; use another directory")
        return
    write_season(season, log.parent)


def check_meta(season: Season, info_url: str) -> None:
    """The season's markets must be Hyperliquid's (a wrong asset index would misprice)."""
    by_asset = {m.asset: m for m in fetch_meta(info_url)}
    for m in season.markets:
        if by_asset.get(m.asset) != m:
            raise HostError(
                f"market {m.coin} (asset {m.asset}, szDecimals {m.szDecimals}) is not what "
                f"{info_url} lists ({by_asset.get(m.asset)}); fix the season file"
            )
