"""A paper run on the live feed, prepared: its season, its entries, its run log, its feed.

Why this module exists: ``arena paper`` and the live mode of ``arena-tui`` must run the
same thing, so what a :class:`PaperSpec` turns into is decided here once. The season is a
season file (whose window must not be over), or by default Season 0 rules over the coins
asked for (markets from Hyperliquid's ``meta``), from the next minute boundary for
``hours``. The run writes ``run.jsonl`` (durable: see ``arena_tui.logs.runlog``) and the season
beside it, as a backtest does, so ``arena replay`` of the run log gives the run's ranking.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from websockets.exceptions import InvalidURI
from websockets.uri import parse_uri

from arena_tui.logs.meta import INFO_URL, WS_URL, MetaError, get_markets, select
from arena_tui.record.feed import Backoff, FeedConfig, wall_ms
from arena_tui.run.backtest import Backtest
from arena_tui.run.build import entrants_for, run_dir
from arena_tui.run.config import RunConfig
from arena_tui.run.hooks import DEFAULT_TIMEOUT_S
from arena_tui.run.live import LiveFeed
from arena_tui.run.stats import exit_value
from arena_tui.run.stream import Subscriber
from arena_tui.season.file import SeasonError, load_season
from engine import Market, Season
from engine.season import MINUTE_MS, SEASON0_RULES, check_season


@dataclass(frozen=True)
class PaperSpec:
    """What to trade live, as the command line or the start screen chose it."""

    strategy: Path
    coins: tuple[str, ...] = ()  # with a season file: () = all its markets
    vs: str | None = None
    season: Path | None = None
    hours: float = 24.0  # the default season's length
    out: Path | None = None
    ws_url: str = WS_URL
    info_url: str = INFO_URL
    meta: Path | None = None
    latency_ms: int = 0
    seed: int = 0
    force: bool = False  # replace a run already in ``out``
    hook_timeout: float = DEFAULT_TIMEOUT_S  # seconds one hook call may run (<= 0: no limit)


def utc(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def default_season(markets: tuple[Market, ...], now_ms: int, hours: float) -> Season:
    """Season 0 rules on ``markets``, from the next minute boundary for ``hours``."""
    minutes = round(hours * 60)
    if minutes < 1:
        raise SeasonError(f"--hours {hours:g}: a season lasts at least one minute")
    start = (now_ms // MINUTE_MS + 1) * MINUTE_MS
    name = dt.datetime.fromtimestamp(start / 1000, dt.UTC).strftime("paper-%Y%m%d-%H%M")
    season = Season(name, start, start + minutes * MINUTE_MS, markets, SEASON0_RULES)
    try:
        check_season(season)
    except ValueError as exc:
        raise SeasonError(str(exc)) from None
    return season


def paper_season(spec: PaperSpec, now_ms: int) -> tuple[Season, tuple[str, ...]]:
    """The run's season and the coins to subscribe to."""
    if spec.season is None:
        if not spec.coins:
            raise MetaError("--coins: name the coins to trade, e.g. --coins BTC,ETH")
        markets = select(get_markets(spec.meta, spec.info_url), spec.coins)
        return default_season(markets, now_ms, spec.hours), spec.coins
    season = load_season(spec.season)
    if season.end <= now_ms:
        raise SeasonError(
            f"{spec.season}: season {season.id} ended at {utc(season.end)}; a live run "
            "needs a season that is not over"
        )
    names = [m.coin for m in season.markets]
    missing = [c for c in spec.coins if c not in names]
    if missing:
        raise SeasonError(
            f"--coins {','.join(missing)}: not in season {season.id} ({','.join(names)})"
        )
    return season, spec.coins or tuple(names)


def prepare_paper(
    spec: PaperSpec,
    *,
    clock: Callable[[], int] = wall_ms,
    backoff: Backoff | None = None,
    feed_cfg: dict[str, float] | None = None,
    subscribers: Sequence[Subscriber] = (),
) -> tuple[Backtest, LiveFeed]:
    """The runner and the feed for ``spec``; the season file is written beside the run log.

    ``feed_cfg``: FeedConfig timings (``ping_s``, ``silence_s``) other than Hyperliquid's.
    """
    try:
        parse_uri(spec.ws_url)
    except InvalidURI:
        raise MetaError(f"--ws-url: not a ws:// or wss:// URL: {spec.ws_url}") from None
    season, coins = paper_season(spec, clock())
    entrants = entrants_for(spec.strategy, spec.vs)
    run_log = run_dir(spec.out, spec.strategy, "paper", force=spec.force) / "run.jsonl"
    config = RunConfig(
        kind="paper",
        strategy=str(spec.strategy),
        vs=spec.vs,
        latency_ms=spec.latency_ms,
        seed=spec.seed,
        hook_timeout_s=spec.hook_timeout,
        run_log="full",
        cache=False,
    )
    bt = Backtest(
        config,
        season,
        entrants,
        run_dir=run_log.parent,
        subscribers=subscribers,
        exit_value=exit_value,
        generator="arena paper",
        feed=spec.ws_url,
    )
    cfg = FeedConfig(spec.ws_url, coins, **(feed_cfg or {}))
    return bt, LiveFeed(cfg, backoff=backoff, clock=clock)
