"""The ``arena`` command line: typer app, one module per command under ``commands/``.

The composition root: the one module that sees both ``commands/`` and ``tui/``, so it hands
the commands the screens ``--tui`` opens (:mod:`arena_tui.commands.screens`). A command's
module is imported when the command runs (``COMMANDS``, ``LazyCommands``), not at every
start: ``arena import`` no longer loads the host's, the season's and the replay's modules
(0.16-0.32 s of every start).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

import typer
import typer.main
from typer._click.core import Command
from typer.core import TyperGroup

from arena_tui.commands.screens import Screens
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

# Every command, in the order ``arena --help`` lists them: (its module, the function or the
# sub-app there, the click class for a function that needs its own). Each module is imported
# only when its command runs (or a help lists it): a command's start pays for its own
# module alone, not every command's (asyncio and the host's for ``arena import``...).
COMMANDS: dict[str, tuple[str, str, str | None]] = {
    "replay": ("arena_tui.commands.replay", "replay_command", None),
    "backtest": ("arena_tui.commands.backtest", "backtest_command", None),
    "paper": ("arena_tui.commands.paper", "paper_command", None),
    "host": ("arena_tui.commands.host", "host_command", None),
    "register": ("arena_tui.commands.host", "register_command", None),
    "record": ("arena_tui.commands.record", "record_command", None),
    "synth": ("arena_tui.commands.synth", "synth_command", None),
    "verify": ("arena_tui.commands.verify", "verify_command", None),
    "sweep": ("arena_tui.commands.sweep", "sweep_command", "SweepCommand"),
    "export": ("arena_tui.commands.export", "export_command", None),
    "fetch": ("arena_tui.commands.fetch", "fetch_command", None),
    "season": ("arena_tui.commands.season", "app", None),
    "import": ("arena_tui.commands.imports", "app", None),
    "logs": ("arena_tui.commands.logs", "app", None),
    "cache": ("arena_tui.commands.cache", "app", None),
    "data": ("arena_tui.commands.data", "app", None),
    "runs": ("arena_tui.commands.runs", "app", None),
}


def load_command(name: str) -> Command:
    """Command ``name`` of ``COMMANDS`` made a click command, as ``app.command(name)`` or
    ``app.add_typer(sub, name=name)`` would have made it in the app."""
    module_name, attr, cls_name = COMMANDS[name]
    module = importlib.import_module(module_name)
    found = getattr(module, attr)
    if isinstance(found, typer.Typer):
        return typer.main.get_group_from_info(
            typer.models.TyperInfo(found, name=name),
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode,
            suggest_commands=app.suggest_commands,
        )
    cls = None if cls_name is None else getattr(module, cls_name)
    one = typer.Typer(rich_markup_mode=app.rich_markup_mode, add_completion=False)
    one.command(name, cls=cls)(found)
    return typer.main.get_command_from_info(
        one.registered_commands[0],
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


class LazyCommands(MutableMapping[str, Command]):
    """A group's commands by name: every name of ``COMMANDS`` listed (in its order), each
    made (``load_command``) when first looked up."""

    def __init__(self, made: Mapping[str, Command]) -> None:
        self._made = dict(made)

    def __getitem__(self, name: str) -> Command:
        command = self._made.get(name)
        if command is None:
            if name not in COMMANDS:
                raise KeyError(name)
            command = self._made[name] = load_command(name)
        return command

    def __setitem__(self, name: str, command: Command) -> None:
        self._made[name] = command

    def __delitem__(self, name: str) -> None:
        del self._made[name]

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._made if name not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(name not in COMMANDS for name in self._made)


class LazyGroup(TyperGroup):
    """``arena``'s group: its commands are ``LazyCommands`` (the typo suggestions, the
    help's list and a lookup read them as any group's)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands(self.commands)


app = typer.Typer(
    name="arena",
    cls=LazyGroup,
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


def main() -> None:
    run_cli(app, "arena")


if __name__ == "__main__":
    main()
