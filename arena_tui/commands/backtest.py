"""``arena backtest``: a strategy (and the baselines) on recorded days, under Season 0."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from arena_tui.commands.lockstep import (
    AgentNameOpt,
    AgentOpt,
    ConnectTimeoutOpt,
    StepTimeoutOpt,
    ThinkOpt,
    lockstep_report,
)
from arena_tui.commands.screens import screens
from arena_tui.logs.catalog import expand_logs
from arena_tui.report.render import write_report
from arena_tui.report.rundata import Collector
from arena_tui.report.verdict import Judging, check_epoch
from arena_tui.run.build import build_backtest, check_order
from arena_tui.run.hooks import DEFAULT_TIMEOUT_S
from arena_tui.run.parts import BacktestResult
from arena_tui.run.twins import TWINS
from arena_tui.util.human import Progress, plural
from arena_tui.util.options import (
    CoinsOpt,
    EpochOpt,
    ForceOpt,
    FromOpt,
    HookTimeoutOpt,
    JsonOpt,
    LatencyOpt,
    SeasonOpt,
    SeedOpt,
    StrategyArg,
    ToOpt,
    TwinsOpt,
    VsOpt,
)


def backtest_command(
    ctx: typer.Context,
    strategy: StrategyArg,
    logs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Recorded logs, in time order (plain, .gz or .lz4), or a directory of day "
            "logs (choose days with --from/--to/--coins).",
            metavar="LOG",
        ),
    ] = None,
    season: SeasonOpt = None,
    vs: VsOpt = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            help="Set one of STRATEGY's parameters, NAME=VALUE (repeat for more), e.g. "
            "--param window_ms=120000. Its entry is then named after the values "
            "(momentum-wind120000). An unknown NAME lists the ones it declares; a VALUE "
            "outside the range it declares (docs/strategies.md) is refused, naming it.",
            metavar="NAME=VALUE",
        ),
    ] = None,
    epoch: EpochOpt = "auto",
    twins: TwinsOpt = TWINS,
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
    full_log: Annotated[
        bool,
        typer.Option(
            "--full-log",
            help="Write a self-contained run log (the market lines too, as arena paper "
            "and arena-tui do) instead of a thin one that names its sources.",
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Neither read nor write the day cache (a binary copy of each LOG kept "
            "after its first run, so later runs skip decompressing and re-reading it; "
            "see arena cache). ARENA_CACHE=0 turns it off everywhere.",
        ),
    ] = False,
    latency_ms: LatencyOpt = 0,
    seed: SeedOpt = 0,
    hook_timeout: HookTimeoutOpt = DEFAULT_TIMEOUT_S,
    day_from: FromOpt = None,
    day_to: ToOpt = None,
    coins: CoinsOpt = None,
    agent: AgentOpt = None,
    agent_name: AgentNameOpt = "agent",
    think_time: ThinkOpt = "zero",
    step_timeout: StepTimeoutOpt = 30.0,
    connect_timeout: ConnectTimeoutOpt = 30.0,
    as_json: JsonOpt = False,
    tui: Annotated[
        bool,
        typer.Option(
            "--tui",
            help="Watch the run live in arena-tui (pause, speed, next fill); the report "
            "follows when you quit.",
        ),
    ] = False,
) -> None:
    """Run STRATEGY on LOG... through the Season 0 engine and report how it did.

    The run writes its own log into --out: a thin one unless --full-log (every
    registration, order and cancel, and the SHA-256 of each LOG it read, not
    their lines). [cyan]arena replay[/] of it finds the LOGs (beside it, where
    they were, or under --data DIR) and gives the same ranking, byte for byte.

    The report fits the terminal's width; it ranks eligible entries and says
    why the others are not (Season 0 needs fills on 10 UTC days: a shorter run
    ranks nobody). --out also gets report.json, fills.csv, equity.csv and
    chart.svg (docs/report.md describes them).

    Then the verdict, three answers (docs/verdict.md): would it be ranked (at
    this pace over a season), does it make money after every cost (its block
    scores against zero), is it skill (its S among --twins random twins: its
    own trips re-timed at random, one extra engine pass). No fills: no trades
    to judge.

    A strategy's parameters are typed class attributes with defaults
    (docs/strategies.md); --param NAME=VALUE runs it with another value, and
    report.json records every entry's values under "params".

    Example:

    [cyan]arena backtest strategies/momentum.py \\
      recordings/synth-3coins-20261201.jsonl.gz --vs baselines --out /tmp/run[/]

    An agent of any language, over the season's HTTP API in lockstep
    (docs/api.md), beside the baselines:

    [cyan]arena backtest --agent ".venv/bin/python strategies/http_agent.py" \\
      recordings/synth-3coins-20261201.jsonl.gz --vs baselines[/]
    """
    if agent is not None:  # lockstep: an HTTP agent, and every positional is a LOG
        if param or tui:
            raise typer.BadParameter("--param and --tui go with a STRATEGY, not --agent")
        every = [strategy, *(logs or [])]
        found = [str(p) for p in expand_logs(every, day_from, day_to, coins)]
        knobs: dict[str, Any] = {"season": season, "vs": vs, "out": out, "force": force}
        knobs |= {"latency_ms": latency_ms, "seed": seed, "think": think_time}
        knobs |= {"step_timeout_s": step_timeout, "connect_timeout_s": connect_timeout}
        knobs |= {"full_log": full_log, "command": agent, "hook_timeout_s": hook_timeout}
        judging = Judging(epoch, seed, twins, tuple(found), latency_ms)
        lockstep_report(found, [agent_name], knobs, judging=judging, as_json=as_json)
        return
    if not logs:
        raise typer.BadParameter("give at least one LOG after STRATEGY", param_hint="LOG")
    check_order(strategy, logs)  # before the days of a directory are chosen
    paths = [str(p) for p in expand_logs(logs, day_from, day_to, coins)]
    check_epoch(epoch)  # a bad --epoch fails now, not after the run
    watch = screens(ctx).backtest if tui else None
    collector = Collector()  # the run data (report.html, arena export)
    bt, out_dir = build_backtest(
        strategy,
        paths,
        season=season,
        vs=vs,
        out=out,
        latency_ms=latency_ms,
        seed=seed,
        force=force,
        hook_timeout_s=hook_timeout,
        full_log=full_log,
        params=param or (),
        cache=not no_cache and not tui,
        subscribers=(collector,),
    )
    typer.echo(
        f"arena: backtest of {plural(len(bt.entrants), 'entry', 'entries')}, writing {out_dir}",
        err=True,
    )
    chosen = bt.season
    if watch is not None:
        watched = watch(bt, paths, strategy.name)
        if watched is None:
            typer.echo("arena: stopped before the season started: no report", err=True)
            return
        result: BacktestResult = watched
    else:
        progress = Progress(label="backtest", span=(chosen.start, chosen.end))
        result = bt.run(paths, progress)
    judging = Judging(epoch, seed, twins, tuple(paths), latency_ms)
    write_report(result, out_dir, judging=judging, as_json=as_json, rundata=collector.data())
