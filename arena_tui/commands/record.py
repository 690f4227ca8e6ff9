"""``arena record``: record Hyperliquid's live feed into daily version-1 log files.

The pieces: ``arena_tui.record.feed`` (the socket), ``arena_tui.record.recorder`` (what is written),
``arena_tui.logs.daylog`` (which file), ``arena_tui.record.status`` (what is shown). This module
wires them to the command line, the wall clock and the signals that stop a recording.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer

from arena_tui.logs.dayfiles import current_name
from arena_tui.logs.meta import (
    WS_URL,
    MetaError,
    load_meta_file,
    meta_source,
    offline_hint,
    parse_coins,
    select,
)
from arena_tui.util.options import InfoUrlOpt, MetaOpt
from arena_tui.util.paths import DATA_DIR_ENV, recordings_dir

if TYPE_CHECKING:
    from arena_tui.record.feed import Backoff, FeedConfig
    from arena_tui.record.recorder import Recorder
    from arena_tui.record.status import Reporter
    from engine import Market

TICK_S = 1.0


def _ms(name: str, help_: str) -> Any:
    """A hidden option for tests and tuning (the defaults are Hyperliquid's)."""
    return typer.Option(name, help=help_, hidden=True, min=1)


def record_command(
    coins: Annotated[
        str, typer.Option("--coins", "-c", help="Coins to record, comma-separated: BTC,ETH.")
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help=f"Directory for the daily files. Default: {recordings_dir()} "
            f"(${DATA_DIR_ENV} sets the data directory).",
            file_okay=False,
        ),
    ] = None,
    ws_url: Annotated[str, typer.Option("--ws-url", help="Hyperliquid WebSocket.")] = WS_URL,
    info_url: InfoUrlOpt = None,
    meta: MetaOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Events and status as JSON lines on stdout.")
    ] = False,
    retry_base_ms: Annotated[int, _ms("--retry-base-ms", "First reconnect delay.")] = 500,
    retry_cap_ms: Annotated[int, _ms("--retry-cap-ms", "Longest reconnect delay.")] = 30_000,
    ping_ms: Annotated[int, _ms("--ping-ms", "Heartbeat period.")] = 30_000,
    silence_ms: Annotated[int, _ms("--silence-ms", "No data this long: lost.")] = 60_000,
    status_ms: Annotated[int | None, _ms("--status-ms", "Status line period.")] = None,
) -> None:
    """Record Hyperliquid's l2Book, trades and activeAssetCtx, until stopped.

    One file per UTC day by receive time, [bold]hl-YYYY-MM-DD.jsonl[/],
    compressed to .jsonl.lz4 when the day closes (days closed as .jsonl.gz
    by an older arena are still read); each message verbatim with
    its receive time. Reconnects forever: every interruption, and a restart
    over an existing recording, is one [bold]gap[/] input in the log.
    The header's markets come from Hyperliquid's meta (retried with the
    same backoff until it answers), or from a saved answer with --meta.
    Ctrl-C or SIGTERM stops cleanly; a kill -9 loses nothing received.
    Replay the files in order with [cyan]arena replay[/].

    Example: [cyan]arena record --coins BTC,ETH,SOL,HYPE --out rec/live[/]
    """
    # here, not at the top: --help and the other commands need none of these
    from websockets.exceptions import InvalidURI
    from websockets.uri import parse_uri

    from arena_tui.logs.daylog import DayLog
    from arena_tui.record.feed import Backoff, FeedConfig, wall_ms
    from arena_tui.record.recorder import Recorder
    from arena_tui.record.status import Reporter

    names = parse_coins(coins)
    try:
        parse_uri(ws_url)
    except InvalidURI:
        raise MetaError(f"--ws-url: not a ws:// or wss:// URL: {ws_url}") from None
    meta_file, url = meta_source(meta, info_url)
    every_s = (status_ms / 1000) if status_ms is not None else (10.0 if as_json else 60.0)
    reporter = Reporter(as_json=as_json, tty=sys.stderr.isatty(), every_s=every_s)
    if meta_file is not None:
        universe = load_meta_file(meta_file)
    else:
        fetched = asyncio.run(_fetch_meta(url, Backoff(retry_base_ms, retry_cap_ms), reporter))
        if fetched is None:
            reporter.event({"event": "stopped", "detail": "before meta answered; nothing recorded"})
            return
        universe = fetched
    markets = select(universe, names)
    header = {"recording": "hyperliquid", "markets": msgspec.to_builtins(list(markets))}
    folder = out if out is not None else recordings_dir()
    rec = Recorder(DayLog(folder, header), wall_ms)
    rec.start()  # a refused day file fails here, before anything is said
    rec.on_event = reporter.event
    sys.stderr.write(
        f"arena: recording {','.join(names)} from {ws_url} into {folder} "
        f"({rec.log.path}); Ctrl-C stops\n"
    )
    if as_json:
        reporter.event(
            {"event": "start", "coins": names, "out": str(folder), "file": str(rec.log.path)}
        )
    cfg = FeedConfig(ws_url, tuple(names), ping_s=ping_ms / 1000, silence_s=silence_ms / 1000)
    try:
        asyncio.run(_record(rec, cfg, Backoff(retry_base_ms, retry_cap_ms), reporter))
    finally:
        rec.close(finish_compression=False)
        files = [str(current_name(p)) for p in rec.log.opened]
        reporter.summary(rec.status(), wall_ms() - rec.started_at, files)


async def _fetch_meta(url: str, backoff: Backoff, reporter: Reporter) -> list[Market] | None:
    """``meta``, retried until it answers; None if a signal stops the wait first."""
    from arena_tui.record.feed import fetch_meta_retrying

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    fetch = asyncio.create_task(fetch_meta_retrying(url, backoff, reporter.event))
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({fetch, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    if not fetch.done():
        fetch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await fetch
        return None
    try:
        return fetch.result()
    except MetaError as exc:
        raise offline_hint(exc) from None


async def _record(rec: Recorder, cfg: FeedConfig, backoff: Backoff, reporter: Reporter) -> None:
    """Run the feed, tick the status and the group fsync, until a signal or a log error."""
    from arena_tui.record.feed import run_feed

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    feed = asyncio.create_task(run_feed(rec, cfg, backoff))
    stopping = asyncio.create_task(stop.wait())
    try:
        while not feed.done() and not stop.is_set():
            await asyncio.wait({feed, stopping}, timeout=TICK_S)
            rec.log.tick()
            reporter.tick(rec.status())
    finally:
        stopping.cancel()
        feed.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await feed  # re-raises a log error (LogError: one line, exit 1)
