"""The ``arena`` command line: typer app, one module per command under ``commands/``.

The composition root: the one module that sees both ``commands/`` and ``tui/``, so it hands
the commands the screens ``--tui`` opens (:mod:`arena_tui.commands.screens`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer

from arena_tui.commands import cache, data, imports, logs, runs, season
from arena_tui.commands.backtest import backtest_command
from arena_tui.commands.export import export_command
from arena_tui.commands.fetch import fetch_command
from arena_tui.commands.host import host_command, register_command
from arena_tui.commands.paper import paper_command
from arena_tui.commands.record import record_command
from arena_tui.commands.replay import replay_command
from arena_tui.commands.screens import Screens
from arena_tui.commands.sweep import SweepCommand, sweep_command
from arena_tui.commands.synth import synth_command
from arena_tui.commands.verify import verify_command
from arena_tui.util.errors import run_cli

if TYPE_CHECKING:
    from arena_tui.run.backtest import Backtest
    from arena_tui.run.live import LiveFeed
    from arena_tui.run.parts import BacktestResult
    from arena_tui.run.stream import Subscriber


def watch_backtest(bt: Backtest, paths: Sequence[str], title: str) -> BacktestResult | None:
    from arena_tui.tui.app import watch_backtest  # Textual only when a screen is asked for

    return watch_backtest(bt, paths, title=title)


def watch_paper(bt: Backtest, feed: LiveFeed, title: str) -> BacktestResult | None:
    from arena_tui.tui.app import watch_paper

    return watch_paper(bt, feed, title=title)


def capture() -> Subscriber:
    from arena_tui.tui.capture import Capture

    return Capture()


SCREENS = Screens(backtest=watch_backtest, paper=watch_paper, capture=capture)

app = typer.Typer(
    name="arena",
    help="Local simulator, backtester and season engine for Circle Arena Season 0 "
    "(paper trading on Hyperliquid perps).",
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"], "obj": SCREENS},
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        import engine

        try:
            number = version("arena")
        except PackageNotFoundError:
            number = "not installed"
        typer.echo(f"arena {number}\nengine: {engine.ENGINE}")
        raise typer.Exit()


@app.callback()
def _options(
    show_version: bool = typer.Option(
        False,
        "--version",
        callback=_version,
        is_eager=True,
        help="Print arena's version and which engine runs (compiled by Cython at install, "
        "or the pure-Python sources, and why), then exit.",
    ),
) -> None:
    """Local simulator, backtester and season engine for Circle Arena Season 0."""


app.command("replay")(replay_command)
app.command("backtest")(backtest_command)
app.command("paper")(paper_command)
app.command("host")(host_command)
app.command("register")(register_command)
app.command("record")(record_command)
app.command("synth")(synth_command)
app.command("verify")(verify_command)
app.command("sweep", cls=SweepCommand)(sweep_command)
app.command("export")(export_command)
app.command("fetch")(fetch_command)
app.add_typer(season.app, name="season")
app.add_typer(imports.app, name="import")
app.add_typer(logs.app, name="logs")
app.add_typer(cache.app, name="cache")
app.add_typer(data.app, name="data")
app.add_typer(runs.app, name="runs")


def main() -> None:
    run_cli(app, "arena")


if __name__ == "__main__":
    main()
