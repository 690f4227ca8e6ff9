"""``arena synth``: write a synthetic, Hyperliquid-shaped recording to backtest on."""

from __future__ import annotations

import re
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena_tui.util.errors import fail
from arena_tui.util.human import Ticker, plural, time_range
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import JsonOpt
from arena_tui.util.outputs import writing
from arena_tui.util.paths import DATA_DIR_ENV, recordings_dir

if TYPE_CHECKING:
    from arena_tui.synth.generate import Stats
    from arena_tui.synth.walk import Model

# synth.generate.DEFAULT_START and synth.walk.REGIMES_MODEL, LEAD and MEAN_HOLD_S, for the
# options' defaults and help, written here rather than imported: those modules are the
# generator, which no --help needs (tests/test_cli_startup.py checks that they agree)
DEFAULT_START = "2026-12-01T00:00:00Z"
REGIMES_MODEL = "regimes"
LEAD = 0.001
MEAN_HOLD_S = 1_800


def default_out(
    coins: list[str], start_ms: int, hours: float, seed: int, model: Model | None = None
) -> Path:
    """``<data dir>/recordings/synth-BTC-ETH-SOL-20261201T0000Z-24h-seed7.jsonl.gz``: where
    ``arena record`` writes, never the project's git-tracked ``recordings/``. Another model
    adds its words (``-walk``, ``-walk-signal40``), so no model's day overwrites another's."""
    from arena_tui.synth.generate import hours_text, number_text

    names = "-".join(re.sub(r"[^A-Za-z0-9]", "_", c) for c in coins[:4])
    if len(coins) > 4:
        names += f"-and-{len(coins) - 4}-more"
    stamp = time.strftime("%Y%m%dT%H%MZ", time.gmtime(start_ms // 1000))
    tail = ""
    if model is not None and not model.is_default:
        tail = f"-{model.name}"
        if model.signal_bps is not None:
            tail += f"-signal{number_text(model.signal_bps)}"
    return (
        recordings_dir() / f"synth-{names}-{stamp}-{hours_text(hours)}h-seed{seed}{tail}.jsonl.gz"
    )


def summary(
    out: str,
    stats: Stats,
    coins: list[str],
    seed: int,
    start_ms: int,
    end_ms: int,
    seconds: float,
    model: Model | None = None,
) -> dict[str, Any]:
    from arena_tui.synth.generate import signal_value
    from arena_tui.synth.walk import Model

    size = Path(out).stat().st_size if out != "-" else stats.bytes
    model = model or Model()
    return {
        "out": out,
        "coins": coins,
        "seed": seed,
        "start": start_ms,
        "end": end_ms,
        "model": model.name,
        "signal_bps_per_hour": signal_value(model),
        "lines": stats.lines + 1,
        "bytes": stats.bytes,
        "file_bytes": size,
        "books": stats.total("books"),
        "trades": stats.total("trades"),
        "prints": stats.total("prints"),
        "ctxs": stats.total("ctxs"),
        "by_coin": stats.by_coin,
        "seconds": round(seconds, 3),
    }


def synth_command(
    coins: Annotated[
        str,
        typer.Option(
            "--coins",
            "-c",
            help="Coins, comma-separated. Built in: BTC, ETH, SOL, HYPE (Hyperliquid "
            "mainnet's asset indexes and szDecimals); others need --meta.",
        ),
    ] = "BTC,ETH,SOL",
    hours: Annotated[
        float, typer.Option("--hours", help="How long the recording runs (0.5 = 30 min).")
    ] = 24.0,
    seed: Annotated[
        int, typer.Option("--seed", help="The random seed: same seed, same bytes.")
    ] = 7,
    start: Annotated[
        str, typer.Option("--start", help="Its first instant, UTC (ISO 8601; a date = midnight).")
    ] = DEFAULT_START,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="The file to write (.gz: gzip, .lz4: LZ4, else plain JSON Lines; - for "
            "stdout). Default: synth-<coins>-<start>-<hours>h-seed<seed>.jsonl.gz in "
            f"{recordings_dir()} (${DATA_DIR_ENV} sets the data directory).",
            dir_okay=False,
        ),
    ] = None,
    meta: Annotated[
        Path | None,
        typer.Option(
            "--meta",
            help='A saved answer of Hyperliquid\'s {"type":"meta"} (JSON): asset indexes and '
            "szDecimals for coins the built-in table lacks (they get a generic market shape).",
            dir_okay=False,
        ),
    ] = None,
    model_name: Annotated[
        str,
        typer.Option(
            "--model",
            help="regimes: trends, bursts, overshoots, flow that leads the price; walk: no "
            "edge for anyone (the mid a martingale, prints blind to the future).",
        ),
    ] = REGIMES_MODEL,
    signal: Annotated[
        float | None,
        typer.Option(
            "--signal",
            metavar="BPS",
            help=f"Walk only: a drift of BPS bps an hour, its sign (-1, 0, +1; held "
            f"~{MEAN_HOLD_S // 60} min) announced as oraclePx = mid x (1 + sign x {LEAD:g}).",
            show_default=False,
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --out if it exists.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Write a [bold]synthetic[/] recording: made-up, Hyperliquid-shaped market data, offline.

    Per coin, a seeded random market. --model regimes (the default): a random
    walk with trends, bursts and overshoots; trades lean the way the price is
    about to go.

    --model walk: no edge for anyone, to measure luck on; --signal BPS plants a
    known edge (the header records both). Trades print at or through the touch.

    As Hyperliquid's WebSocket sends it: a 20-level l2Book every ~5 s, trades,
    activeAssetCtx.

    The header says "recording": "synthetic". Same arguments, same bytes; shorter
    = a prefix.

    Backtest on it with [cyan]arena backtest STRATEGY FILE[/]; --json: a summary on stdout.

    Example: [cyan]arena synth --coins BTC,ETH,SOL --hours 6 --seed 7 --out day.jsonl.gz[/]
    """
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.logs.daykeep import keep_days
    from arena_tui.logs.meta import load_meta_file, parse_coins
    from arena_tui.synth.generate import (
        SynthError,
        choose_markets,
        choose_model,
        end_of,
        number_text,
        parse_start,
        write,
        write_file,
    )

    try:
        model = choose_model(model_name, signal)
        names = parse_coins(coins)
        markets = choose_markets(names, load_meta_file(meta) if meta is not None else None)
        start_ms = parse_start(start)
        end_ms = end_of(start_ms, hours)
        began = time.monotonic()
        if out is not None and str(out) == "-":
            if as_json:
                raise SynthError("--json prints a summary on stdout: give --out FILE with it")
            stats = write(sys.stdout.buffer, markets, seed, start_ms, hours, model=model)
            sys.stdout.buffer.flush()
            target = "-"
        else:
            path = out if out is not None else default_out(names, start_ms, hours, seed, model)
            ticker = Ticker("synth")
            try:
                with writing(path):
                    stats = write_file(
                        path,
                        markets,
                        seed,
                        start_ms,
                        hours,
                        force=force,
                        progress=ticker,
                        model=model,
                    )
            finally:
                ticker.done()
            target = str(path)
    except SynthError as exc:
        fail(str(exc))
    seconds = time.monotonic() - began
    coin_names = [m.coin for m in markets]
    doc = summary(target, stats, coin_names, seed, start_ms, end_ms, seconds, model)
    what = "synthetic data"
    if not model.is_default:
        what += f" ({model.name}" + (
            f", signal {number_text(model.signal_bps)} bps/h)"
            if model.signal_bps is not None
            else ", no signal)"
        )
    sys.stderr.write(
        f"wrote {target}: {plural(doc['books'], 'book')}, "
        f"{plural(doc['trades'], 'trades message')} ({plural(doc['prints'], 'print')}), "
        f"{plural(doc['ctxs'], 'asset context')}; "
        f"{time_range(stats.first_t, stats.last_t)}; {doc['file_bytes'] / 1e6:.1f} MB "
        f"({stats.bytes / 1e6:.1f} MB uncompressed) in {seconds:.1f} s; {what}\n"
    )
    if target != "-":
        sys.stderr.write(f"backtest on it: arena backtest STRATEGY {shlex.quote(target)}\n")
        keep_days([target])  # the day cache, so the first backtest of it is already warm
    if as_json:
        typer.echo(dumps(doc))
