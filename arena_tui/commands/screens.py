"""How a command shows its run on a screen without importing the screen.

``arena backtest --tui`` and ``arena paper --tui`` hand their run to arena-tui, but
``tui/`` stands beside ``commands/``, not under it (arena-tui has a command line of its own
that builds runs from ``run/``). So a command asks its typer context for :func:`screens`,
and ``cli.py``, which sees both rooms, puts them in the app's ``context_settings`` as
``obj``. Textual is imported only when a screen is opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer

from arena_tui.util.errors import ArenaError

if TYPE_CHECKING:  # types only: the runner is imported when a command runs, not at start
    from collections.abc import Callable, Sequence

    from arena_tui.run.backtest import Backtest
    from arena_tui.run.live import LiveFeed
    from arena_tui.run.parts import BacktestResult
    from arena_tui.run.stream import Subscriber

    # (the run, its logs, a title) -> its result once the screen is closed; None: nothing ran
    WatchBacktest = Callable[[Backtest, Sequence[str], str], BacktestResult | None]
    WatchPaper = Callable[[Backtest, LiveFeed, str], BacktestResult | None]


@dataclass(frozen=True)
class Screens:
    backtest: WatchBacktest
    paper: WatchPaper
    capture: Callable[[], Subscriber]  # what a watched run is built with (tui.capture)


def screens(ctx: typer.Context) -> Screens:
    """The screens of the command line running the command (``cli.py`` gives them)."""
    obj = ctx.obj
    if not isinstance(obj, Screens):
        raise ArenaError("--tui needs arena-tui: run this through the arena command")
    return obj
