"""The lockstep run's options and its report: ``arena backtest --agent`` and ``arena host
--lockstep`` share them (``arena_tui.host.lockstep_run`` runs it); and how a run's config
is judged (:func:`judging_of`: ``arena backtest``, ``arena paper`` and lockstep alike)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena_tui.report.judging import Judging
from arena_tui.util.human import Progress, plural

if TYPE_CHECKING:
    from arena_tui.run.config import RunConfig

AgentOpt = Annotated[
    str | None,
    typer.Option(
        "--agent",
        metavar="CMD",
        help="Backtest an HTTP agent instead of a STRATEGY (every positional is then a LOG): "
        "CMD is run (no shell) with ARENA_URL, ARENA_KEY and ARENA_LOCKSTEP=1 in its "
        "environment and trades over the season's API in lockstep (docs/api.md); its "
        "output goes to DIR/agent.out.log (its first 4 MiB). Ctrl-C or SIGTERM stops the "
        "run with one line, its run log kept.",
    ),
]
AgentNameOpt = Annotated[
    str, typer.Option("--agent-name", metavar="NAME", help="The --agent's entry name.")
]
ThinkOpt = Annotated[
    str,
    typer.Option(
        "--think-time",
        metavar="zero|measured",
        help="Lockstep: stamp an agent's requests at its step's time (zero: deterministic) "
        "or later by the wall time it took to send them (measured: what a live season "
        "does to a slow agent).",
    ),
]
StepTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--step-timeout",
        metavar="SECONDS",
        min=0,
        help="Lockstep: an agent that has not finished a step in this many wall seconds "
        "passes it (counted in the report) and the run goes on; a run in which nothing "
        "moves for this long (no input applied, no later step) ends with one line, its run "
        "log kept; 0: wait forever.",
    ),
]
ConnectTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--connect-timeout",
        metavar="SECONDS",
        min=0,
        help="Lockstep: how long every agent has to make its first call before the run.",
    ),
]


def judging_of(config: RunConfig, sources: Sequence[str] | None = None) -> Judging:
    """How a run of ``config`` is judged: its block length, seed, twins and latency, the
    twins trading on ``sources`` (default: the config's logs)."""
    logs = tuple(config.logs if sources is None else sources)
    return Judging(
        config.epoch, config.seed, config.twins, logs, config.latency_ms, cache=config.cache
    )


def lockstep_report(
    config: RunConfig,
    *,
    judging: Judging | None = None,
    as_json: bool = False,
    on_ready: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """A lockstep run (``host.lockstep_run``) of ``config`` and its report, as ``arena
    backtest`` prints one: ``arena backtest --agent`` and ``arena host --lockstep``.
    ``judging``: how the verdict is judged (default: the twins on the config's logs, the
    rest at the defaults, as ``arena host --lockstep`` judges)."""
    # here, not at the top: every command's start imports this module for its options
    from arena_tui.host.lockstep_run import OUTPUT_FILE, THINK, LockstepRun
    from arena_tui.report.judging import check_epoch
    from arena_tui.report.render import write_report
    from arena_tui.report.rundata import Collector

    how = judging or Judging(sources=tuple(config.logs))
    check_epoch(how.epoch)  # a bad --epoch fails now, not after the run
    opts = config.lockstep_part()
    if opts.think not in THINK:
        raise typer.BadParameter(f"{opts.think!r}: zero or measured", param_hint="--think-time")
    collector = Collector()  # the run data (report.html, arena export)
    run = LockstepRun(
        config,
        on_ready=on_ready,
        note=lambda text: typer.echo(f"arena: {text}", err=True),
        subscribers=(collector,),
    )
    run.prepare()
    bt = run.bt
    assert bt is not None
    said = f"arena: lockstep backtest of {plural(len(bt.entrants), 'entry', 'entries')}"
    said += f", writing {run.out_dir}"
    if opts.command is not None:
        said += f" (the agent's output: {run.out_dir / OUTPUT_FILE})"
    typer.echo(said, err=True)
    progress = Progress(label="lockstep", span=(bt.season.start, bt.season.end))
    with run.on_signals():  # SIGINT, SIGTERM: one line, the run log kept
        result = run.run(progress)
        out_dir = run.out_dir
        write_report(result, out_dir, judging=how, as_json=as_json, rundata=collector.data())


def announce_keys(info: dict[str, Any], as_json: bool) -> None:
    """--lockstep: the URL and each entry's key (one JSON line with --json)."""
    if as_json:
        typer.echo(json.dumps(info))
        return
    typer.echo(str(info["url"]))
    for name, key in info["keys"].items():
        typer.echo(f"{name} {key}")
