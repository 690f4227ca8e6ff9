"""A paper run on the live feed, prepared: its season, its entries, its run log, its feed.

Why this module exists: ``arena paper`` and the live mode of ``arena-tui`` must run the
same thing, so what a paper run's :class:`~arena_tui.run.config.RunConfig` (its live part:
:class:`~arena_tui.run.config.LiveConfig`) turns into is decided here once. The season is a
season file (whose window must not be over), or by default Season 0 rules over the coins
asked for (markets from Hyperliquid's ``meta``), from the next minute boundary for
``hours``. The run writes ``run.jsonl`` (durable: see ``arena_tui.logs.runlog``) and the season
beside it, as a backtest does, so ``arena replay`` of the run log gives the run's ranking.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from websockets.exceptions import InvalidURI
from websockets.uri import parse_uri

from arena_tui.logs.meta import MetaError, get_markets, select
from arena_tui.record.feed import Backoff, FeedConfig, wall_ms
from arena_tui.run.backtest import Backtest
from arena_tui.run.build import entrants_for, kept, run_dir
from arena_tui.run.config import LiveConfig, RunConfig, write_config
from arena_tui.run.live import LiveFeed
from arena_tui.run.stats import exit_value
from arena_tui.run.stream import Subscriber
from arena_tui.season.file import SeasonError, load_season
from engine import Market, Season
from engine.season import MINUTE_MS, SEASON0_RULES, check_season


def paper_config(
    strategy: str | Path,
    *,
    season: str | Path | None = None,
    out: str | Path | None = None,
    force: bool = False,
    vs: str | None = None,
    **live: Any,
) -> RunConfig:
    """The config of a paper run of ``strategy``; ``live``: fields of its
    :class:`~arena_tui.run.config.LiveConfig` (coins, hours, ws_url...)."""
    return RunConfig(
        kind="paper",
        strategy=str(strategy),
        vs=vs,
        season=None if season is None else str(season),
        out=None if out is None else str(out),
        force=force,
        live=LiveConfig(**live),
    )


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


def paper_season(config: RunConfig, now_ms: int) -> tuple[Season, tuple[str, ...]]:
    """The run's season and the coins to subscribe to."""
    live = config.live_part()
    season_file = config.season_path()
    if season_file is None:
        if not live.coins:
            raise MetaError("--coins: name the coins to trade, e.g. --coins BTC,ETH")
        markets = select(get_markets(live.meta, live.info_url), live.coins)
        return default_season(markets, now_ms, live.hours), live.coins
    season = load_season(season_file)
    if season.end <= now_ms:
        raise SeasonError(
            f"{season_file}: season {season.id} ended at {utc(season.end)}; a live run "
            "needs a season that is not over"
        )
    names = [m.coin for m in season.markets]
    missing = [c for c in live.coins if c not in names]
    if missing:
        raise SeasonError(
            f"--coins {','.join(missing)}: not in season {season.id} ({','.join(names)})"
        )
    return season, live.coins or tuple(names)


def prepare_paper(
    config: RunConfig,
    *,
    clock: Callable[[], int] = wall_ms,
    backoff: Backoff | None = None,
    feed_cfg: dict[str, float] | None = None,
    subscribers: Sequence[Subscriber] = (),
    echo: bool = True,
) -> tuple[Backtest, LiveFeed]:
    """The runner and the feed for ``config`` (a paper run: its ``live`` part, or the
    defaults); the season file is written beside the run log, the config into the run's
    directory (``config.json``).

    ``feed_cfg``: FeedConfig timings (``ping_s``, ``silence_s``) other than Hyperliquid's.
    """
    ws_url = config.live_part().ws_url
    try:
        parse_uri(ws_url)
    except InvalidURI:
        raise MetaError(f"--ws-url: not a ws:// or wss:// URL: {ws_url}") from None
    season, coins = paper_season(config, clock())
    strategy = config.strategy_path()
    entrants = entrants_for(strategy, config.vs)
    out_dir = run_dir(config.out_path(), strategy, "paper", force=config.force)
    bt = Backtest(
        config.replace(run_log="full", cache=False),  # a live run's log is always whole
        season,
        entrants,
        run_dir=out_dir,
        subscribers=subscribers,
        exit_value=exit_value,
        generator="arena paper",
        feed=ws_url,
        echo=echo,
    )
    write_config(kept(config, entrants), out_dir)
    cfg = FeedConfig(ws_url, coins, **(feed_cfg or {}))
    return bt, LiveFeed(cfg, backoff=backoff, clock=clock)
