"""``arena paper``: a strategy (and the baselines) trading on Hyperliquid's live feed.

The pieces: ``arena_tui.run.paper`` (the season, the entries, the run log, the feed),
``arena_tui.run.live`` (the feed as the runner's line source), ``Backtest.run_live`` (the same
loop as ``arena backtest``), ``arena_tui.run.paperstatus`` (the status line), the backtest's
report. This module wires them to the command line and to the signals that stop a run.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena_tui.commands.configured import Fields, given, missing, run_config, run_fields, text
from arena_tui.commands.lockstep import judging_of
from arena_tui.commands.screens import screens
from arena_tui.logs.meta import WS_URL, meta_source, parse_coins
from arena_tui.run.config import DEFAULT_HOOK_TIMEOUT_S, DEFAULT_TWINS, LiveConfig
from arena_tui.util.options import (
    ConfigOpt,
    EpochOpt,
    ForceOpt,
    HookTimeoutOpt,
    InfoUrlOpt,
    JsonOpt,
    LatencyOpt,
    MetaOpt,
    OutOpt,
    RunStrategyArg,
    SeedOpt,
    TwinsOpt,
    VsOpt,
)

if TYPE_CHECKING:
    from arena_tui.run.backtest import Backtest
    from arena_tui.run.live import LiveFeed
    from arena_tui.run.parts import BacktestResult


def _hidden(name: str, help_: str) -> Any:
    """A hidden option for tests and tuning (the defaults are Hyperliquid's)."""
    return typer.Option(name, help=help_, hidden=True, min=1)


def stop_on_signals(feed: LiveFeed) -> Callable[[], None]:
    """SIGINT and SIGTERM end the run at the next input (a second one interrupts at once);
    returns what puts the previous handlers back."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if feed.stop_requested:
            raise KeyboardInterrupt
        feed.request_stop()

    old = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, previous in old.items():
            signal.signal(sig, previous)

    return restore


def paper_command(
    ctx: typer.Context,
    strategy: RunStrategyArg = None,
    config_file: ConfigOpt = None,
    coins: Annotated[
        str | None,
        typer.Option(
            "--coins",
            "-c",
            help="Coins to trade, comma-separated: BTC,ETH (with --season: some of its "
            "markets; default all of them).",
        ),
    ] = None,
    vs: VsOpt = None,
    season: Annotated[
        Path | None,
        typer.Option(
            "--season",
            "-s",
            help="Season file to trade under (its window must not be over; before its start "
            "the feed is only recorded). Default: Season 0 rules on --coins, from the next "
            "minute for --hours.",
            dir_okay=False,
        ),
    ] = None,
    hours: Annotated[
        float, typer.Option("--hours", min=0, help="Length of the default season, in hours.")
    ] = 24.0,
    out: OutOpt = None,
    force: ForceOpt = False,
    ws_url: Annotated[str, typer.Option("--ws-url", help="Hyperliquid WebSocket.")] = WS_URL,
    info_url: InfoUrlOpt = None,
    meta: MetaOpt = None,
    latency_ms: LatencyOpt = 0,
    seed: SeedOpt = 0,
    hook_timeout: HookTimeoutOpt = DEFAULT_HOOK_TIMEOUT_S,
    epoch: EpochOpt = "auto",
    twins: TwinsOpt = DEFAULT_TWINS,
    as_json: JsonOpt = False,
    tui: Annotated[
        bool,
        typer.Option(
            "--tui",
            help="Watch the run in arena-tui (space pauses the view, not the run); the "
            "report follows when you quit.",
        ),
    ] = False,
    retry_base_ms: Annotated[int, _hidden("--retry-base-ms", "First reconnect delay.")] = 500,
    retry_cap_ms: Annotated[int, _hidden("--retry-cap-ms", "Longest reconnect delay.")] = 30_000,
) -> None:
    """Trade STRATEGY on Hyperliquid's live feed, on paper, under Season 0.

    The engine and the run log of [cyan]arena backtest[/]: every input (each
    market message as received, a tick every second, a gap for each lost
    connection, every registration, order and cancel) is written to
    --out's run.jsonl before the engine applies it, so [cyan]arena replay[/]
    of it gives the run's ranking, byte for byte; it is also the recording
    of the feed. Runs until the season ends; Ctrl-C or SIGTERM stops it
    cleanly and prints the report for what ran.

    The run's settings are kept in --out's config.json: [cyan]arena paper
    --config DIR --out DIR2[/] trades them again (options given beside
    --config replace the config's values).

    Example: [cyan]arena paper strategies/maker.py --coins BTC,ETH --vs
    baselines --hours 2 --out runs/paper1[/]
    """
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.record.feed import Backoff
    from arena_tui.report.judging import check_epoch
    from arena_tui.report.render import write_report
    from arena_tui.report.rundata import Collector
    from arena_tui.run.paper import prepare_paper, utc

    if config_file is None and strategy is None:
        raise missing(ctx, "strategy")
    check_epoch(epoch)  # a bad --epoch fails now, not after the run
    meta_file, info = meta_source(meta, info_url)
    feed: Fields = {
        "coins": ("coins", tuple(parse_coins(coins)) if coins is not None else ()),
        "hours": ("hours", hours),
        "ws_url": ("ws_url", ws_url),
        "info_url": ("info_url", info),
        "meta": ("meta", text(meta_file)),
    }
    new = {"kind": "paper", "strategy": text(strategy), "live": LiveConfig(**dict(feed.values()))}
    named = ("strategy",)
    fields = run_fields(ctx)
    config = run_config(ctx, config_file, fields, new, kinds=("paper",), not_with_config=named)
    if config_file is not None:  # the feed's options given: they replace the config's
        changed = {field: v for name, (field, v) in feed.items() if given(ctx, name)}
        config = config.replace(live=config.live_part().replace(**changed))
        check_epoch(config.epoch)
    watch = screens(ctx).paper if tui else None
    collector = Collector()  # the run data (report.html, arena export)
    shown = (screens(ctx).capture(),) if tui else ()  # what the screen shows, as it goes
    bt, live = prepare_paper(
        config,
        backoff=Backoff(retry_base_ms, retry_cap_ms),
        subscribers=(collector, *shown),
        echo=not tui,
    )
    s = bt.season
    assert bt.log.path is not None
    out_dir = bt.log.path.parent
    typer.echo(
        f"arena: paper trading {', '.join(bt.by_name)} on {','.join(live.cfg.coins)} from "
        f"{config.live_part().ws_url}; season {s.id} {utc(s.start)} -> {utc(s.end)}; writing "
        f"{out_dir}; {'q quits' if tui else 'Ctrl-C stops'}",
        err=True,
    )
    name = config.strategy_path().name
    result = watch(bt, live, name) if watch is not None else _run(bt, live)
    if result is None:
        typer.echo(
            f"arena: stopped before the season started: no report (the run log "
            f"{bt.log.path} keeps what was received)",
            err=True,
        )
        return
    if not tui and not result.replay.final:  # (the TUI's watcher says it itself)
        typer.echo("arena: stopped before the season's end: the report covers it so far", err=True)
    # the run log is the recording of the feed: the twins trade on it
    write_report(
        result,
        out_dir,
        judging=judging_of(config, (str(bt.log.path),)),
        as_json=as_json,
        kind="paper",
        rundata=collector.data(),
    )


def _run(bt: Backtest, feed: LiveFeed) -> BacktestResult | None:
    from arena_tui.run.paperstatus import PaperStatus
    from arena_tui.run.parts import NotStarted

    restore = stop_on_signals(feed)
    try:
        return bt.run_live(feed, PaperStatus(bt, feed))
    except NotStarted:
        return None
    finally:
        restore()
