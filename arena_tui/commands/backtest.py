"""``arena backtest``: a strategy (and the baselines) on recorded days, under Season 0."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena_tui.commands.configured import Fields, given, missing, run_config, run_fields
from arena_tui.commands.lockstep import (
    AgentNameOpt,
    AgentOpt,
    ConnectTimeoutOpt,
    StepTimeoutOpt,
    ThinkOpt,
    judging_of,
    lockstep_report,
)
from arena_tui.commands.screens import screens
from arena_tui.run.config import DEFAULT_HOOK_TIMEOUT_S, DEFAULT_TWINS, LockstepConfig
from arena_tui.util.human import Progress, plural
from arena_tui.util.options import (
    CoinsOpt,
    ConfigOpt,
    EpochOpt,
    ForceOpt,
    FromOpt,
    HookTimeoutOpt,
    JsonOpt,
    LatencyOpt,
    OutOpt,
    RunStrategyArg,
    SeasonOpt,
    SeedOpt,
    ToOpt,
    TwinsOpt,
    VsOpt,
)

if TYPE_CHECKING:
    from arena_tui.run.parts import BacktestResult


def backtest_command(
    ctx: typer.Context,
    strategy: RunStrategyArg = None,
    logs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Recorded logs, in time order (plain, .gz or .lz4), or a directory of day "
            "logs (choose days with --from/--to/--coins).",
            metavar="LOG",
        ),
    ] = None,
    config_file: ConfigOpt = None,
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
    twins: TwinsOpt = DEFAULT_TWINS,
    out: OutOpt = None,
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
    hook_timeout: HookTimeoutOpt = DEFAULT_HOOK_TIMEOUT_S,
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

    The run's settings are kept in --out's config.json: [cyan]arena backtest
    --config DIR --out DIR2[/] runs it again from that alone, the same report
    byte for byte. Options given beside --config replace the config's values
    (STRATEGY, LOG, --from/--to/--coins and --agent are not given: it names
    what runs).

    Example:

    [cyan]arena backtest strategies/momentum.py \\
      recordings/synth-3coins-20261201.jsonl.gz --vs baselines --out /tmp/run[/]

    An agent of any language, over the season's HTTP API in lockstep
    (docs/api.md), beside the baselines:

    [cyan]arena backtest --agent ".venv/bin/python strategies/http_agent.py" \\
      recordings/synth-3coins-20261201.jsonl.gz --vs baselines[/]
    """
    # the run's modules here, not at the top: --help and the other commands need none of them
    from arena_tui.logs.catalog import expand_logs
    from arena_tui.report import statsworker
    from arena_tui.report.judging import check_epoch
    from arena_tui.report.render import write_report
    from arena_tui.report.rundata import Collector
    from arena_tui.report.verdict import may_need_intervals
    from arena_tui.run.build import build_backtest, check_order

    fields: Fields = run_fields(ctx) | {
        "param": ("params", tuple(param or ())),
        "full_log": ("run_log", "full" if full_log else "thin"),
        "no_cache": ("cache", not no_cache),
    }
    steps: Fields = {
        "think_time": ("think", think_time),
        "step_timeout": ("step_timeout_s", step_timeout),
        "connect_timeout": ("connect_timeout_s", connect_timeout),
    }
    new: dict[str, Any] = {}
    if config_file is None and agent is not None:  # lockstep: every positional is a LOG
        if param or tui:
            raise typer.BadParameter("--param and --tui go with a STRATEGY, not --agent")
        every = [p for p in (strategy, *(logs or [])) if p is not None]
        found = tuple(str(p) for p in expand_logs(every, day_from, day_to, coins))
        part = dict(steps.values()) | {"names": (agent_name,), "command": agent}
        new = {"kind": "lockstep", "logs": found, "lockstep": LockstepConfig(**part)}
    elif config_file is None:
        if strategy is None:
            raise missing(ctx, "strategy")
        if not logs:
            raise typer.BadParameter("give at least one LOG after STRATEGY", param_hint="LOG")
        check_order(strategy, logs)  # before the days of a directory are chosen
        paths = tuple(str(p) for p in expand_logs(logs, day_from, day_to, coins))
        new = {"strategy": str(strategy), "logs": paths}
    named = ("strategy", "logs", "day_from", "day_to", "coins", "agent", "agent_name")
    config = run_config(
        ctx, config_file, fields, new, kinds=("backtest", "lockstep"), not_with_config=named
    )
    if config.kind == "lockstep":
        if param or tui:
            raise typer.BadParameter("--param and --tui go with a STRATEGY, not --agent")
        live = config.lockstep_part()
        changed = {field: v for name, (field, v) in steps.items() if given(ctx, name)}
        config = config.replace(lockstep=live.replace(**changed))
        lockstep_report(config, judging=judging_of(config), as_json=as_json)
        return
    check_epoch(config.epoch)  # a bad --epoch fails now, not after the run
    if tui:
        config = config.replace(cache=False)  # a watched run is paced: no day cache
    watch = screens(ctx).backtest if tui else None
    collector = Collector()  # the run data (report.html, arena export)
    shown = (screens(ctx).capture(),) if tui else ()  # what the screen shows, as it goes
    bt, out_dir = build_backtest(config, subscribers=(collector, *shown), echo=not tui)
    typer.echo(
        f"arena: backtest of {plural(len(bt.entrants), 'entry', 'entries')}, writing {out_dir}",
        err=True,
    )
    chosen = bt.season
    logs_read = list(config.logs)
    if may_need_intervals(chosen.end - chosen.start, config.epoch):
        statsworker.start()  # arch imported in a second process, on the other core
    if watch is not None:
        watched = watch(bt, logs_read, config.strategy_path().name)
        if watched is None:
            typer.echo("arena: stopped before the season started: no report", err=True)
            return
        result: BacktestResult = watched
    else:
        progress = Progress(label="backtest", span=(chosen.start, chosen.end))
        result = bt.run(logs_read, progress)
    write_report(
        result, out_dir, judging=judging_of(config), as_json=as_json, rundata=collector.data()
    )
