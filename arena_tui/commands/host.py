"""``arena host`` (serve a season over HTTP) and ``arena register`` (add an entry to it)."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from arena_tui.commands.configured import text
from arena_tui.commands.lockstep import (
    ConnectTimeoutOpt,
    StepTimeoutOpt,
    ThinkOpt,
    announce_keys,
    lockstep_report,
)
from arena_tui.host.checkpoint import CHECKS
from arena_tui.host.clients import (
    PUBLIC_PATHS,
    LimitError,
    ReaderOptions,
    parse_limits,
    parse_total,
    parse_trusted,
)
from arena_tui.host.plan import HostOptions
from arena_tui.host.restamp import SpeedError, parse_speed
from arena_tui.logs.meta import WS_URL
from arena_tui.record.clock import wall_ms
from arena_tui.report.judging import Judging
from arena_tui.run.config import LockstepConfig, RunConfig
from arena_tui.util.human import plural
from arena_tui.util.options import ForceOpt, LatencyOpt, SeedOpt, VsOpt

LogOpt = Annotated[
    Path,
    typer.Option(
        "--log",
        "-l",
        help="The season's log (plain .jsonl): created with its header on the first start, "
        "appended to and replayed on every start after.",
        dir_okay=False,
    ),
]


def host_command(
    log: Annotated[
        Path | None,
        typer.Option(
            "--log",
            "-l",
            help="The season's log (plain .jsonl): created with its header on the first "
            "start, appended to and replayed on every start after. Not with --lockstep.",
            dir_okay=False,
        ),
    ] = None,
    season: Annotated[
        Path | None,
        typer.Option(
            "--season",
            "-s",
            help="Season file (TOML or JSON). Needed for a new log unless --replay is given "
            "(then a season covering the replayed run is made and written beside the log).",
            dir_okay=False,
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", "-p", min=0, max=65535, help="Port (0: any free one).")
    ] = 8000,
    replay: Annotated[
        list[Path] | None,
        typer.Option(
            "--replay",
            help="Rehearse on a recorded log instead of the live feed (repeat for several "
            "files, in order): its market data is replayed at --speed, re-stamped onto this "
            "server's clock.",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    speed: Annotated[
        str, typer.Option("--speed", help="With --replay: times real time (60, 0.5).")
    ] = "1",
    ws_url: Annotated[
        str, typer.Option("--ws-url", help="Hyperliquid WebSocket for live market data.")
    ] = WS_URL,
    info_url: Annotated[
        str | None,
        typer.Option(
            "--info-url",
            help="Check the season's markets against this Hyperliquid info endpoint's meta "
            "before starting a new live log (e.g. https://api.hyperliquid.xyz/info).",
        ),
    ] = None,
    body_max: Annotated[
        int, typer.Option("--body-max", min=256, help="Largest request body, in bytes.")
    ] = 4096,
    lockstep: Annotated[
        bool,
        typer.Option(
            "--lockstep",
            help="With --replay: a backtest over the API instead of a season: the clock "
            "moves to the next input only when every agent (--entry) is done with the "
            "current one (docs/api.md). Prints the URL and each entry's key, then the "
            "report when the run ends; Ctrl-C or SIGTERM stops it with one line, its run "
            "log kept.",
        ),
    ] = False,
    entry: Annotated[
        list[str] | None,
        typer.Option(
            "--entry", metavar="NAME", help="--lockstep: an agent's entry (repeat; default agent)."
        ),
    ] = None,
    vs: VsOpt = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="--lockstep: the run's directory.", file_okay=False),
    ] = None,
    force: ForceOpt = False,
    latency_ms: LatencyOpt = 0,
    seed: SeedOpt = 0,
    think_time: ThinkOpt = "zero",
    step_timeout: StepTimeoutOpt = 30.0,
    connect_timeout: ConnectTimeoutOpt = 30.0,
    checkpoint_every: Annotated[
        str,
        typer.Option(
            "--checkpoint-every",
            metavar="DURATION",
            help="Log time between checkpoints of the host's state beside the log (30m, "
            "1h, 6h, 1d); a restart loads the newest one that matches the log and replays "
            "only the rest. 'off': neither write nor use them (every start replays the "
            "whole log). docs/operating.md.",
        ),
    ] = "1h",
    checkpoint_check: Annotated[
        str,
        typer.Option(
            "--checkpoint-check",
            metavar="HOW",
            help="How a restart checks a checkpoint against the log. 'quick': its size and "
            "first and last MiB at once, the whole prefix in a thread while orders are "
            "taken (a mismatch stops the host and removes the checkpoints): restart time "
            "flat in the season's length. 'full': the whole prefix before the first order "
            "(a pass over the log).",
        ),
    ] = "quick",
    as_json: Annotated[
        bool, typer.Option("--json", help="When ready, print one JSON line (url, port, ...).")
    ] = False,
    public_limit: Annotated[
        list[str] | None,
        typer.Option(
            "--public-limit",
            metavar="[PATH=]N/SECONDS|off",
            help="Requests each client (by address) may make to each public endpoint in "
            "any SECONDS; over it: 429 with Retry-After. N/SECONDS sets every public "
            "endpoint's, PATH=N/SECONDS one's (repeat; e.g. /v1/log=10/10), off none. "
            "Default 20/10, and 10/10 for /v1/log. Entrants' keyed requests keep the "
            "season's own limit.",
        ),
    ] = None,
    trust_proxy: Annotated[
        list[str] | None,
        typer.Option(
            "--trust-proxy",
            metavar="ADDR",
            help="A reverse proxy (address or network, repeat) whose X-Forwarded-For names "
            "the client the public limits count; from any other peer the header is ignored. "
            "Behind a proxy on this machine: --trust-proxy 127.0.0.1.",
        ),
    ] = None,
    public_total: Annotated[
        str,
        typer.Option(
            "--public-total",
            metavar="N/SECONDS|off",
            help="Public requests all clients together may make in any SECONDS (GET "
            "/healthz and /metrics apart); over it: 429 with Retry-After. However many "
            "readers come, the event loop the orders share spends a bounded part of its "
            "time on them. Default 50/1 (about 20 season pages at once); behind a caching "
            "proxy, raise it or turn it off.",
        ),
    ] = "50/1",
    readers_port: Annotated[
        int | None,
        typer.Option(
            "--readers-port",
            metavar="PORT",
            min=0,
            max=65535,
            help="Also serve the public reads (GET /v1/season, /v1/scores, /v1/log, "
            "/v1/entries..., the page) on PORT, at the same --host, from a second process "
            "that follows the log: readers then cost the orders' loop nothing. Route the "
            "public paths there at your reverse proxy; its answers are the main port's "
            "at a log offset a moment behind (GET /healthz there says how far). Keyed "
            "paths are not served there; the main port still serves everything. 0: any "
            "free port. docs/operating.md.",
        ),
    ] = None,
    stall_trace: Annotated[
        str,
        typer.Option(
            "--stall-trace",
            metavar="MS|off",
            help="When the event loop the orders share is held MS milliseconds or more "
            "(a long computation, the machine), write the stack it is stuck in to "
            "LOG.stalls, caught while it happens, then the stall's length. For finding "
            "what delays orders; costs under 0.1% of a core. The loop's lateness is on "
            "/metrics (arena_loop_lag_seconds) either way.",
        ),
    ] = "off",
    log_rate: Annotated[
        float,
        typer.Option(
            "--log-rate",
            min=0,
            help="MB/s that GET /v1/log may send, all readers together (0: no cap), so "
            "readers cannot take the CPU the orders need.",
        ),
    ] = 50.0,
) -> None:
    """Serve a season over HTTP: agents trade with the seven-field order.

    Every order and cancel that passes the key, the rate limit and the
    body checks is appended to --log and fsynced before the engine
    applies it and before it is answered; market data comes from
    Hyperliquid's live feed (or --replay), and a tick every second. A
    restart loads the newest checkpoint that matches the log and
    replays the rest of it (the whole log without one). Score rows are kept in
    LOG.scores.sqlite (rebuilt from the log at each start). The API:
    docs/api.md, and GET /openapi.json.

    Register entries with [cyan]arena register NAME --log LOG[/]
    (the server running or not). Ctrl-C or SIGTERM stops it.

    Example: [cyan]arena host --replay
    recordings/synth-3coins-20261201.jsonl.gz --speed 60 --log
    runs/host/season.jsonl[/]

    Lockstep (a backtest of agents you start yourself, docs/api.md):
    [cyan]arena host --replay recordings/synth-3coins-20261201.jsonl.gz
    --lockstep --entry alice --vs baselines[/]
    """
    from arena_tui.host.server import Host  # uvicorn and Starlette only when serving

    if lockstep:
        if not replay:
            raise typer.BadParameter("--lockstep replays recorded logs: give --replay LOG")
        if log is not None:
            raise typer.BadParameter(
                "--lockstep writes DIR/run.jsonl: no --log", param_hint="--log"
            )
        if readers_port is not None:
            raise typer.BadParameter(
                "a lockstep run has no reader process", param_hint="--readers-port"
            )
        if stall_trace.strip().lower() != "off":
            raise typer.BadParameter(
                "a lockstep run waits for its agents: no stall trace", param_hint="--stall-trace"
            )
        steps = LockstepConfig(
            names=tuple(entry or ["agent"]),
            think=think_time,  # type: ignore[arg-type]  # (checked by lockstep_report)
            step_timeout_s=step_timeout,
            connect_timeout_s=connect_timeout,
            host=host,
            port=port,
            body_max=body_max,
            generator="arena host --lockstep",
        )
        config = RunConfig(
            kind="lockstep",
            logs=tuple(str(p) for p in replay),
            season=text(season),
            vs=vs,
            out=text(out),
            force=force,
            latency_ms=latency_ms,
            seed=seed,
            lockstep=steps,
        )
        ready = partial(announce_keys, as_json=as_json)
        judging = Judging(sources=config.logs)  # (the defaults: not the run's seed)
        lockstep_report(config, judging=judging, as_json=as_json, on_ready=ready)
        return
    if log is None:
        raise typer.BadParameter("give the season's log (or --lockstep)", param_hint="--log")
    try:
        rate = parse_speed(speed)
    except SpeedError as exc:
        raise typer.BadParameter(str(exc), param_hint="--speed") from None
    every_ms = parse_every(checkpoint_every)
    if checkpoint_check not in CHECKS:
        raise typer.BadParameter(
            f"{checkpoint_check!r}: quick or full", param_hint="--checkpoint-check"
        )
    if replay is None and speed != "1":
        raise typer.BadParameter("--speed goes with --replay", param_hint="--speed")
    if readers_port is not None and readers_port == port and port != 0:
        raise typer.BadParameter(
            f"{readers_port} is --port's; give the reader process another port (or 0)",
            param_hint="--readers-port",
        )
    opts = HostOptions(
        log=log,
        season=season,
        host=host,
        port=port,
        replay=tuple(replay or ()),
        speed=rate,
        ws_url=ws_url,
        info_url=info_url,
        body_max=body_max,
        checkpoint_every_ms=every_ms,
        checkpoint_check=checkpoint_check,
        freeze_gc=True,  # this process is the host's alone
        readers_port=readers_port,
        stall_trace_ms=parse_stall_trace(stall_trace),
    )
    readers = reader_options(public_limit or [], trust_proxy or [], log_rate, public_total)
    server = Host(opts, on_ready=lambda info: _announce(info, as_json), readers=readers)
    server.run()
    session = server.session
    written = session.written if session is not None else 0
    typer.echo(
        f"arena: host: stopped; {plural(written, 'input')} written to {log} this run", err=True
    )


_EVERY = re.compile(r"([0-9]{1,9})(ms|s|m|h|d)")
_EVERY_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_every(text: str) -> int | None:
    """``--checkpoint-every``: ``30m``, ``1h``, ``1d`` -> ms; ``off`` -> None."""
    if text.strip().lower() == "off":
        return None
    m = _EVERY.fullmatch(text.strip())
    ms = 0 if m is None else int(m.group(1)) * _EVERY_MS[m.group(2)]
    if ms <= 0:
        raise typer.BadParameter(
            f"{text!r}: want a whole number and a unit ms, s, m, h or d (e.g. 30m, 1h), or off",
            param_hint="--checkpoint-every",
        )
    return ms


def parse_stall_trace(text: str) -> int | None:
    """``--stall-trace``: milliseconds (at least 20), or ``off`` -> None."""
    if text.strip().lower() == "off":
        return None
    ms = int(text) if text.strip().isdigit() and len(text.strip()) < 7 else 0
    if ms < 20:
        raise typer.BadParameter(
            f"{text!r}: want milliseconds, 20 or more (e.g. 250), or off",
            param_hint="--stall-trace",
        )
    return ms


def reader_options(
    limits: list[str], proxies: list[str], log_rate: float, total: str = "50/1"
) -> ReaderOptions:
    """The public side's options, or a one-line error naming the option."""
    try:
        default, by_path = parse_limits(limits, PUBLIC_PATHS)
    except LimitError as exc:
        raise typer.BadParameter(str(exc), param_hint="--public-limit") from None
    try:
        budget = parse_total(total)
    except LimitError as exc:
        raise typer.BadParameter(str(exc), param_hint="--public-total") from None
    try:
        trusted = parse_trusted(proxies)
    except LimitError as exc:
        raise typer.BadParameter(str(exc), param_hint="--trust-proxy") from None
    return ReaderOptions(default, by_path, trusted, round(log_rate * 1_000_000), budget)


def _announce(info: dict[str, object], as_json: bool) -> None:
    typer.echo(json.dumps(info) if as_json else str(info["url"]))


def register_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Entry name: 1-32 of \\[a-z0-9_-].")],
    log: LogOpt,
    season: Annotated[
        Path | None,
        typer.Option(
            "--season",
            "-s",
            help="Season file the log must have been started under (default: the one its "
            "header names, beside the log or in ./seasons).",
            dir_okay=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print {entry, key, t, via} as one JSON line.")
    ] = False,
) -> None:
    """Add an entry to a hosted season and print its API key, once.

    Works whether the season's [cyan]arena host[/] is running (it is
    asked over LOG.sock, a socket only your user can open) or not (the
    register input is appended to the log under its lock). Only the
    key's SHA-256 is logged; the key is printed here and nowhere else:
    keep it. The agent sends it as [bold]Authorization: Bearer KEY[/].

    Example: [cyan]arena register alice --log runs/host/season.jsonl[/]
    """
    from arena_tui.host.register import register

    done = register(log, name, season, wall_ms)
    if as_json:
        typer.echo(json.dumps({"entry": done.entry, "key": done.key, "t": done.t, "via": done.via}))
    else:
        typer.echo(done.key)
    where = "through the running host" if done.via == "server" else f"in {log}"
    typer.echo(f"arena: registered {done.entry} {where}; its key is shown only now", err=True)
