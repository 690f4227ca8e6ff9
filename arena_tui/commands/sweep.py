"""``arena sweep``: many variants of a strategy over many days, judged out of sample.

``arena sweep STRATEGY DAYS... --param NAME=SPEC...`` starts one (a new directory holding
its store), ``arena sweep --resume DIR`` continues one that stopped, ``arena sweep show
DIR`` (a command of its own, with its own --help: :class:`SweepCommand`) prints a finished
one again. All three run the same deterministic driver; the store
answers every job it already holds (``show`` runs none). A new sweep saves its identity
(settings and days' paths) before it reads its days, so it can be resumed from its first
second; a sweep, new or resumed, locks its directory (``sweep.lock``) while it runs.

Why one module: one command with three forms sharing one set of options; the options'
declarations and help are most of it, and the work is in ``arena_tui.sweep``.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.main
from typer._click.core import Context
from typer.core import TyperCommand

from arena_tui.report.layout import terminal_width
from arena_tui.sweep import SweepError
from arena_tui.util.errors import ArenaError
from arena_tui.util.human import duration, plural
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import CoinsOpt, FromOpt, JsonOpt, LatencyOpt, ToOpt
from arena_tui.util.outputs import writing

if TYPE_CHECKING:
    from arena_tui.sweep.config import Config
    from arena_tui.sweep.store import SweepStore

RESULT_FILE = "sweep.json"
PLOT_FILE = "plot.svg"


def sweep_command(
    strategy: Annotated[
        str | None,
        typer.Argument(
            help="Strategy file to sweep (its parameters: docs/strategies.md); or 'show' "
            "and a sweep directory to print a finished sweep again.",
            metavar="STRATEGY",
            show_default=False,
        ),
    ] = None,
    days: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Recorded days: log files, or directories of them (every *.jsonl* in it); "
            "ordered by their first input time, each day a run of its own.",
            metavar="DAYS...",
            show_default=False,
        ),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-p",
            metavar="NAME=SPEC",
            help="A parameter's values: a list (lookback_s=30,60,120), a range lo..hi:step "
            "(edge_bps=5..50:5) or one value; repeat for each parameter. Wins over --file. "
            "Values outside the range the strategy declares are refused.",
            show_default=False,
        ),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            help="A TOML sweep file: a \\[params] table (lists, 'lo..hi:step' strings or "
            "values) and optional search, trials, seed, holdout, folds, epoch; the command "
            "line wins.",
            dir_okay=False,
        ),
    ] = None,
    search: Annotated[
        str | None,
        typer.Option(
            "--search",
            help="grid (every combination), random (seeded draws without repeats) or tpe "
            "(Optuna's TPE, seeded). Default: grid.",
            show_default=False,
        ),
    ] = None,
    trials: Annotated[
        int | None,
        typer.Option(
            "--trials", min=1, help="How many variants to try (random and tpe; caps grid)."
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="One seed for the search, the strategies' generators and the bootstraps: "
            "the same seed, the same sweep. Default: 0.",
            show_default=False,
        ),
    ] = None,
    holdout: Annotated[
        str | None,
        typer.Option(
            "--holdout",
            help="The share of days held out, the last ones by calendar order (30% or 0.3). "
            "Default: 30%.",
            show_default=False,
        ),
    ] = None,
    folds: Annotated[
        int | None,
        typer.Option(
            "--folds",
            min=1,
            help="Walk-forward folds instead of one holdout: K test stretches, each judged by "
            "a search over every day before it.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=0,
            help="Local worker processes (default: the usable cores; 1: in this process).",
        ),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            metavar="tcp://HOST:8786",
            help="Run the jobs on this Dask scheduler's workers (they read the days at the "
            "same paths, checked by SHA-256). README: starting a cluster.",
        ),
    ] = None,
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            min=1,
            help="Variants per engine pass (one job a day per batch). Default: 64 for grid "
            "and random, 8 for tpe (it learns between batches).",
            show_default=False,
        ),
    ] = None,
    epoch: Annotated[
        str | None,
        typer.Option(
            "--epoch",
            help="Block length of the block scores the bootstraps, SPA and the held-out "
            "answers read (30m, 1h, 1d). Default: 1h.",
            show_default=False,
        ),
    ] = None,
    min_fills: Annotated[
        int | None,
        typer.Option(
            "--min-fills",
            min=1,
            help="Training fills a variant needs to be chosen (default 1); a variant that "
            "would not be ranked at the training days' pace is never chosen either.",
            show_default=False,
        ),
    ] = None,
    twins: Annotated[
        int | None,
        typer.Option(
            "--twins",
            min=0,
            max=1000,
            help="Random twins of the chosen variant on each held-out day, for the skill "
            "answer (default 100; 0 skips it).",
            show_default=False,
        ),
    ] = None,
    latency_ms: LatencyOpt = 0,
    day_from: FromOpt = None,
    day_to: ToOpt = None,
    coins: CoinsOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="The sweep's directory (its store sweep.sqlite, sweep.json, plot.svg). "
            "Default: a new one under the data directory's sweeps/.",
            file_okay=False,
        ),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            metavar="DIR",
            help="Continue the sweep in DIR where it stopped, even in its first seconds "
            "(nothing finished is run again); a sweep still running in DIR holds its lock, "
            "and the resume is refused.",
            file_okay=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Sweep STRATEGY's parameters over DAYS and judge the best variant out of sample.

    The days are split by calendar order: the search ranks variants by their mean
    S on the training days only, among those that trade (--min-fills) and would
    be ranked at that pace; the chosen one then runs on the held-out days and
    gets the report's three answers there: would it be ranked, does it make
    money (its block scores against zero), is it skill (its S among its random
    twins'). On the training days, Hansen's SPA says whether the best of all the
    variants tried beats doing nothing by more than trying that many gives by
    luck, the model confidence set which are tied with the best, and CSCV the
    probability that the choice is overfit.

    Each batch of variants runs as one engine pass per day (fills never deplete
    the book, so variants cannot affect each other), days in parallel on local
    processes or a Dask cluster. Every finished job is stored at once: a stopped
    sweep resumes with --resume DIR. docs/sweep.md says more.

    Example: [cyan]arena sweep strategies/momentum.py days/
    --param window_ms=60000,300000 --param min_rise_e8=50000..250000:50000[/]

    Then [cyan]arena sweep show DIR[/] prints it again, and [cyan]arena sweep
    --resume DIR[/] continues one that stopped.
    """
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.logs.catalog import expand_logs
    from arena_tui.run.build import check_order
    from arena_tui.sweep import directory as dirs
    from arena_tui.sweep.config import new_config, with_days
    from arena_tui.sweep.driver import kill_point
    from arena_tui.sweep.store import STORE_FILE, SweepStore

    if strategy == "show" and not Path("show").is_file():  # (options before it)
        raise SweepError(
            "show takes its sweep's settings from DIR: give it first, --json at most: "
            "arena sweep show DIR [--json]"
        )
    if resume is not None:
        settings: tuple[Any, ...] = (strategy, days, param, file, search, trials, seed)
        settings += (holdout, folds, batch, epoch, min_fills, twins, out)
        _only("--resume DIR", latency_ms, dict(zip(SETTINGS, settings, strict=True)))
        dirs.open_store(resume).close()  # not a sweep directory: one line, and no lock file in it
        with dirs.SweepLock(resume, "--resume"):
            store = dirs.open_store(resume)
            try:
                cfg = dirs.saved_config(store, resume)
                cfg.check_strategy()
                pending = dirs.pending_days(store)
                if pending is not None:  # stopped before its days were read: read them now
                    cfg = starting(lambda: with_days(cfg, pending), resume)
                    store.save_config(cfg.to_doc())
            except BaseException:
                store.close()
                raise
            sweep(cfg, store, resume, workers, cluster, as_json)
        return
    if strategy is None:
        raise SweepError(
            "give a strategy file and days: arena sweep STRATEGY DAYS... --param "
            "NAME=SPEC (or --resume DIR, or show DIR)"
        )
    check_order(Path(strategy), days or [], "arena sweep STRATEGY DAYS... --param NAME=SPEC")
    if day_from or day_to or coins:  # the day files of the directories' range
        days = expand_logs(days or [], day_from, day_to, coins)
    cfg, day_paths = new_config(
        strategy,
        days or [],
        param or [],
        file,
        search,
        trials,
        seed,
        holdout,
        folds,
        batch,
        epoch,
        latency_ms,
        min_fills,
        twins,
    )
    made = out is None or not out.exists()
    directory = dirs.sweep_dir(out, cfg)
    with dirs.SweepLock(directory):
        if dirs.holds_sweep(directory):  # another sweep began here since sweep_dir looked
            raise SweepError(
                f"--out {directory} already holds a sweep: continue it with arena sweep "
                f"--resume {shlex.quote(str(directory))}, or choose another --out"
            )
        store = SweepStore(directory / STORE_FILE)
        try:
            store.save_config(dirs.pending_doc(cfg, day_paths))  # resumable from here on
            kill_point(0)
            cfg = starting(lambda: with_days(cfg, day_paths), directory)
            store.save_config(cfg.to_doc())
        except ArenaError:  # no sweep can start on these days: leave nothing behind
            store.close()
            dirs.discard(directory, made)
            raise
        except BaseException:
            store.close()
            raise
        sweep(cfg, store, directory, workers, cluster, as_json)


def starting(read: Callable[[], Config], directory: Path) -> Config:
    """``read()`` (the days being read before a sweep starts); Ctrl-C there says how to
    resume, as it does once the sweep runs."""
    try:
        return read()
    except KeyboardInterrupt:
        sys.stderr.write(
            f"arena: sweep interrupted before its first job; arena sweep --resume "
            f"{shlex.quote(str(directory))} starts it\n"
        )
        raise SystemExit(130) from None


# what a sweep's settings are given as, in the order a refusal names them
SETTINGS = (
    *("STRATEGY", "DAYS", "--param", "--file", "--search", "--trials", "--seed"),
    *("--holdout", "--folds", "--batch", "--epoch", "--min-fills", "--twins", "--out"),
)


def _only(what: str, latency_ms: int, given: dict[str, Any]) -> None:
    """With ``--resume``, the settings come from the sweep: refuse others (``given``: each
    setting by how it is written, :data:`SETTINGS`)."""
    extra = [k for k, v in given.items() if v not in (None, [], False)]
    if latency_ms:
        extra.append("--latency-ms")
    if extra:
        raise SweepError(
            f"{what} takes the sweep's settings from DIR: no {', '.join(extra)} with it"
        )


def sweep(
    cfg: Config,
    store: SweepStore,
    directory: Path,
    workers: int | None,
    cluster: str | None,
    as_json: bool,
) -> None:
    from arena_tui.report.runs import remember
    from arena_tui.sweep.config import load
    from arena_tui.sweep.driver import Runner, run_sweep
    from arena_tui.sweep.execute import executor
    from arena_tui.sweep.plotsvg import svg
    from arena_tui.sweep.progress import Line, Progress, expected_jobs
    from arena_tui.sweep.result import sweep_doc
    from arena_tui.sweep.space import make_search

    strat = load(cfg)
    total = make_search(cfg.search, strat.space, trials=cfg.trials, seed=cfg.seed).total  # type: ignore[arg-type]
    line = Line(expected_jobs(cfg, total))
    progress = Progress(report=line, total=total)
    sys.stderr.write(
        f"arena: sweep of {strat.base} ({cfg.search}"
        f"{', ' + plural(total, 'variant') if total else ''}) over {plural(len(cfg.days), 'day')}"
        f", writing {directory}\n"
    )
    try:
        with executor(workers, cluster) as pool:
            run = Runner(cfg, store, pool, progress)
            folds = run_sweep(run, strat)
    except KeyboardInterrupt:
        line.done()
        sys.stderr.write(
            f"arena: sweep interrupted; what finished is stored: arena sweep --resume "
            f"{shlex.quote(str(directory))} continues it\n"
        )
        raise SystemExit(130) from None
    finally:
        line.done()
        store.close()
    doc = sweep_doc(cfg, strat, folds) | where(directory)
    with writing(directory, "--out"):
        (directory / RESULT_FILE).write_text(dumps(doc) + "\n", encoding="utf-8")
        (directory / PLOT_FILE).write_text(svg(doc), encoding="utf-8")
    remember(directory)  # arena runs list shows it, wherever --out put it
    sys.stderr.write(
        f"arena: {plural(progress.jobs_done, 'job')} run now, {progress.jobs_reused:,} found in "
        f"the store; {duration(int((time.monotonic() - progress.started) * 1000))}\n"
    )
    emit(doc, as_json)


def where(directory: Path) -> dict[str, str]:
    d = directory.absolute()
    return {"dir": str(d), "plot": str(d / PLOT_FILE)}


def emit(doc: dict[str, Any], as_json: bool) -> None:
    from arena_tui.sweep.output import render

    if as_json:
        typer.echo(dumps(doc))
    else:
        typer.echo(render(doc, terminal_width()))


def show_command(
    directories: Annotated[
        list[Path] | None,
        typer.Argument(
            help="The sweep's directory (its --out).",
            metavar="DIR",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print a finished sweep again, from its store: the same driver, no job run.

    The text (or with --json the document) is what the sweep printed when it
    finished, byte for byte; a sweep that stopped is said to be unfinished, with
    the [cyan]arena sweep --resume DIR[/] that continues it.

    Example: [cyan]arena sweep show sweeps/momentum-20261206 --json[/]
    """
    if not directories or len(directories) != 1:
        raise SweepError("arena sweep show takes one sweep directory: arena sweep show DIR")
    show(directories[0], as_json)


class SweepCommand(TyperCommand):
    """``arena sweep``, whose first word ``show`` (a file of that name aside) is a command
    of its own: ``arena sweep show DIR``, with its own --help. ``arena sweep STRATEGY
    DAYS...`` and ``--resume DIR`` stay this command's, their help and errors as they were
    (a click group would put a command name into their usage lines)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Context | None = None,
        **extra: Any,
    ) -> Context:
        words = [a for a in args if a != "--json"]
        if words[:1] == ["show"] and not Path("show").is_file():
            bare = TyperCommand(self.name)  # (usage: "arena sweep show", no sweep arguments)
            outer = self.context_class(bare, info_name=info_name, parent=parent, **extra)
            rest = list(args)
            rest.remove("show")
            return _show().make_context("show", rest, parent=outer, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Context) -> Any:
        return super().invoke(ctx) if ctx.command is self else ctx.command.invoke(ctx)


def _show() -> TyperCommand:
    """``arena sweep show`` as a click command (typer's, as the others are)."""
    app = typer.Typer(rich_markup_mode="rich", add_completion=False)
    app.command("show")(show_command)
    command = typer.main.get_command(app)
    assert isinstance(command, TyperCommand)
    return command


def show(directory: Path, as_json: bool) -> None:
    """A sweep printed again from its store: the same driver, no job run."""
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.sweep.config import load
    from arena_tui.sweep.directory import open_store, pending_days, saved_config
    from arena_tui.sweep.driver import Missing, Runner, run_sweep
    from arena_tui.sweep.progress import Progress
    from arena_tui.sweep.result import sweep_doc

    store = open_store(directory)
    try:
        cfg = saved_config(store, directory)
        if pending_days(store) is not None:
            raise Missing("its days were never read")
        strat = load(cfg)
        run = Runner(cfg, store, None, Progress())
        folds = run_sweep(run, strat)
    except Missing:
        raise SweepError(
            f"{directory}: the sweep is not finished: arena sweep --resume "
            f"{shlex.quote(str(directory))} continues it"
        ) from None
    finally:
        store.close()
    doc = sweep_doc(cfg, strat, folds) | where(directory)
    emit(doc, as_json)
