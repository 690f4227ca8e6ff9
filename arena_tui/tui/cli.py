"""``arena-tui``: the console script's options, checked before the screen opens.

With recordings and ``--strategy`` it opens the run screen at once; with ``--spectate
URL`` the spectator screen of a running ``arena host``; otherwise the start screen, with
whatever was given listed first and picked. A bad file or season fails here, as one
``arena: error:`` line, before Textual takes the terminal. A run started here writes its
run directory as ``arena backtest --out`` does (by default a new one under the data
directory's ``runs/``): its run log, and once it reaches its end its report (report.json,
report.html, the CSVs, the chart), judged on the screen (the Score tab) and indexed for
``arena runs list``. Once the screen is gone, each run of the session says where it left
its report (waited for, saying so, if it is still being written) or its run log.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from arena_tui.run.config import DEFAULT_HOOK_TIMEOUT_S  # run.hooks' default, without the runner
from arena_tui.tui.playback import parse_speed
from arena_tui.util.errors import fail, run_cli
from arena_tui.util.options import ForceOpt, HookTimeoutOpt, SeasonOpt
from arena_tui.util.text import printable

if TYPE_CHECKING:
    from arena_tui.run.config import RunConfig
    from arena_tui.tui.source import BacktestSource

cli = typer.Typer(
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _url(text: str | None) -> str | None:
    if text is None:
        return None
    from arena_tui.tui.hostapi import host_url

    try:
        return host_url(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _speed(text: str) -> str:
    try:
        parse_speed(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return text


@cli.command()
def tui_command(
    logs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Recordings (in time order); with --strategy, run at once.",
            metavar="LOG",
            dir_okay=False,
        ),
    ] = None,
    strategy: Annotated[
        Path | None,
        typer.Option(
            "--strategy",
            help="Strategy file to run (listed first on the start screen when no LOG is given).",
            dir_okay=False,
        ),
    ] = None,
    vs: Annotated[
        str | None,
        typer.Option(
            "--vs",
            help="Also run these as entries: 'baselines' and/or strategy "
            "files, comma-separated (as arena backtest --vs).",
        ),
    ] = None,
    season: SeasonOpt = None,
    speed: Annotated[
        str,
        typer.Option(
            "--speed", callback=_speed, help="Start at 1, 10, 60 or 600 times real time, or max."
        ),
    ] = "60",
    paused: Annotated[bool, typer.Option("--paused", help="Open paused (space plays).")] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            file_okay=False,
            help="Directory for the run: its run log, and once it reaches its end its "
            "report (default: a new one in the data directory's runs/); one holding a run "
            "already is refused unless --force. Later runs of the session go beside it "
            "(DIR-2, DIR-3...), or with --force replace it.",
        ),
    ] = None,
    force: ForceOpt = False,
    latency_ms: Annotated[
        int, typer.Option("--latency-ms", min=0, help="As arena backtest --latency-ms.")
    ] = 0,
    seed: Annotated[int, typer.Option("--seed", help="As arena backtest --seed.")] = 0,
    hook_timeout: HookTimeoutOpt = DEFAULT_HOOK_TIMEOUT_S,
    spectate: Annotated[
        str | None,
        typer.Option(
            "--spectate",
            callback=_url,
            metavar="URL",
            help="Watch a running arena host's season (its leaderboard, books, clock) at URL, "
            "e.g. http://127.0.0.1:8000.",
        ),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option(
            "--key",
            envvar="ARENA_KEY",
            show_envvar=True,
            help="With --spectate (or the start screen's Spectator): an entry's API key "
            "(what arena register printed), to also show its account and open orders. Its "
            "reads count against the entry's rate limit.",
        ),
    ] = None,
) -> None:
    """Watch a backtest live: fills, equity, drawdown, the score and every rejection.

    With LOG... and --strategy it runs at once; else the start screen lists what
    it finds: your strategies and recordings (here, ./strategies, ./recordings,
    the data directory), then the shipped sample recordings and baselines.

    Each run is written as arena backtest --out writes one (a new directory in
    the data directory's runs/, or --out): its run log, and once it reaches its
    end its verdict (the Score tab) and report.json, report.html and the rest;
    arena runs list shows it.

    Keys: space pause/play, +/- speed (1x 10x 60x 600x max), n the watched
    entry's next fill or rejection;

    c coin, e entry, 1-5 tabs, ? help, esc back to the start screen (from a run
    started here too), q quit.

    With --spectate URL it watches a hosted season instead (c coin, r read again
    now).

    Example: [cyan]arena-tui recordings/synth-3coins-20261201.jsonl.gz --strategy
    strategies/maker.py --vs baselines --speed 600[/]

    Example: [cyan]arena-tui --spectate http://127.0.0.1:8000[/]
    """
    from arena_tui.run.rundir import refuse_held_run, session_dir
    from arena_tui.tui.app import make_app
    from arena_tui.tui.catalog import discover
    from arena_tui.tui.source import BacktestSource, judging_of, prepare, watched_run
    from arena_tui.tui.spectator import SpectateSpec

    given = list(logs or [])
    rate = parse_speed(speed)
    if spectate is not None:
        if given or strategy is not None:
            raise typer.BadParameter("--spectate watches a host: give no LOG and no --strategy")
        make_app(spectate=SpectateSpec(spectate, key or None), quit_on_signals=True).run()
        return
    source: BacktestSource | None = None
    if given and strategy is not None:
        spec = watched_run(
            given,
            strategy,
            vs,
            season,
            out,
            latency_ms=latency_ms,
            seed=seed,
            force=force,
            hook_timeout_s=hook_timeout,
        )
        bt, paths = prepare(spec)  # fails here, before the screen opens
        # judged and reported at its end, as the start screen's runs are
        source = BacktestSource.of_backtest(
            bt, paths, title=strategy.name, judging=judging_of(spec)
        )
    catalog = discover(  # the start screen's (esc goes there from a run started here)
        logs=given,
        strategies=[strategy] if strategy else [],
        seasons=[season] if season else [],
    )

    if source is None and out is not None and not force:
        refuse_held_run(out)  # now, as one line, rather than on the screen after a pick

    def run_out() -> Path | None:
        """--out for this session's first run, then beside it (out-2, ...); --force: --out."""
        return out if out is None or force else session_dir(out)

    def tuned(chosen: RunConfig) -> RunConfig:
        """A run config from the start screen, with this command line's run options."""
        where = run_out()
        return chosen.replace(
            out=None if where is None else str(where),
            latency_ms=latency_ms,
            seed=seed,
            force=force,
            hook_timeout_s=hook_timeout,
        )

    def sources(chosen: RunConfig) -> BacktestSource:
        return BacktestSource.of_spec(tuned(chosen))

    def live_sources(chosen: RunConfig) -> BacktestSource:
        return BacktestSource.of_paper(tuned(chosen))

    app = make_app(
        catalog=catalog,
        source=source,
        sources=sources,
        live_sources=live_sources,
        speed=rate,
        paused=paused,
        picked=tuple(range(len(given))) or None,
        season=1 if season else 0,
        quit_on_signals=True,
        key=key or None,
    )
    app.run()
    for run in app.started:
        said(run)
    source = app.source
    if source is None:
        return
    outcome = source.outcome
    if outcome is not None and outcome.error is not None and not outcome.stopped:
        fail(outcome.error)  # (stopped before the season began: the viewer's choice)


def said(source: BacktestSource, err: TextIO | None = None) -> None:
    """What a run of the session left, on stderr once the screen is gone: its report (waited
    for while it is still being written: a run that reached its end always gets one), or
    its run log alone (a run stopped before its end)."""
    stream = err or sys.stderr

    def say(line: str) -> None:  # (file names are the user's, but a terminal is at stake)
        stream.write(printable(f"arena-tui: {line}") + "\n")
        stream.flush()

    outcome = source.outcome
    if outcome is None or outcome.run_log is None:
        return
    reporter = source.reporter
    if reporter is None:
        say(f"run log {outcome.run_log} (arena replay gives its ranking)")
        return
    if not reporter.done.is_set():
        from arena_tui.tui.judge import judging_line

        say(f"{judging_line(reporter.how, reporter.result)} ({source.title})")
        reporter.done.wait()
    reported = reporter.outcome
    if reported is None or reported.error is not None:
        why = "its report failed" if reported is None else reported.error
        say(f"run log {outcome.run_log}; no report: {why}")
        return
    say(f"report {reported.page or reported.out} (arena runs list shows the run)")


def main() -> None:
    """The ``arena-tui`` console script."""
    run_cli(cli, "arena-tui")
