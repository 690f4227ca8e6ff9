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
from typing import Annotated, Any

import typer

from arena_tui.commands.screens import screens
from arena_tui.logs.meta import WS_URL, meta_source, parse_coins
from arena_tui.record.feed import Backoff
from arena_tui.report.render import write_report
from arena_tui.report.rundata import Collector
from arena_tui.report.verdict import Judging, check_epoch
from arena_tui.run.backtest import Backtest
from arena_tui.run.hooks import DEFAULT_TIMEOUT_S
from arena_tui.run.live import LiveFeed
from arena_tui.run.paper import PaperSpec, prepare_paper, utc
from arena_tui.run.paperstatus import PaperStatus
from arena_tui.run.parts import BacktestResult, NotStarted
from arena_tui.run.twins import TWINS
from arena_tui.util.options import (
    EpochOpt,
    ForceOpt,
    HookTimeoutOpt,
    InfoUrlOpt,
    JsonOpt,
    LatencyOpt,
    MetaOpt,
    SeedOpt,
    StrategyArg,
    TwinsOpt,
    VsOpt,
)


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
    strategy: StrategyArg,
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
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Directory for the run log and the report files (default: a new one under "
            "the data directory); one holding a run already is refused unless --force.",
            file_okay=False,
        ),
    ] = None,
    force: ForceOpt = False,
    ws_url: Annotated[str, typer.Option("--ws-url", help="Hyperliquid WebSocket.")] = WS_URL,
    info_url: InfoUrlOpt = None,
    meta: MetaOpt = None,
    latency_ms: LatencyOpt = 0,
    seed: SeedOpt = 0,
    hook_timeout: HookTimeoutOpt = DEFAULT_TIMEOUT_S,
    epoch: EpochOpt = "auto",
    twins: TwinsOpt = TWINS,
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

    Example: [cyan]arena paper strategies/maker.py --coins BTC,ETH --vs
    baselines --hours 2 --out runs/paper1[/]
    """
    check_epoch(epoch)  # a bad --epoch fails now, not after the run
    watch = screens(ctx).paper if tui else None
    meta_file, info = meta_source(meta, info_url)
    spec = PaperSpec(
        strategy=strategy,
        coins=tuple(parse_coins(coins)) if coins is not None else (),
        vs=vs,
        season=season,
        hours=hours,
        out=out,
        ws_url=ws_url,
        info_url=info,
        meta=meta_file,
        latency_ms=latency_ms,
        seed=seed,
        force=force,
        hook_timeout=hook_timeout,
    )
    collector = Collector()  # the run data (report.html, arena export)
    bt, feed = prepare_paper(
        spec, backoff=Backoff(retry_base_ms, retry_cap_ms), subscribers=(collector,)
    )
    s = bt.season
    assert bt.log.path is not None
    out_dir = bt.log.path.parent
    typer.echo(
        f"arena: paper trading {', '.join(bt.by_name)} on {','.join(feed.cfg.coins)} from "
        f"{ws_url}; season {s.id} {utc(s.start)} -> {utc(s.end)}; writing {out_dir}; "
        f"{'q quits' if tui else 'Ctrl-C stops'}",
        err=True,
    )
    result = watch(bt, feed, strategy.name) if watch is not None else _run(bt, feed)
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
    judging = Judging(epoch, seed, twins, (str(bt.log.path),), latency_ms)
    write_report(
        result,
        out_dir,
        judging=judging,
        as_json=as_json,
        kind="paper",
        rundata=collector.data(),
    )


def _run(bt: Backtest, feed: LiveFeed) -> BacktestResult | None:
    restore = stop_on_signals(feed)
    try:
        return bt.run_live(feed, PaperStatus(bt, feed))
    except NotStarted:
        return None
    finally:
        restore()
