"""The arena-tui App: thin, with one factory shared by the console script and the tests.

Why this module exists: the App only knows which screen comes first and how a run is
started; screens and widgets do the rest. What it runs is injected: a ``Catalog`` for the
start screen, functions that turn a :class:`~arena_tui.run.config.RunConfig` (a backtest,
or a live paper run: ``kind`` says which) or a
:class:`~arena_tui.tui.spectator.SpectateSpec` (a running ``arena host`` to watch) into a
source (the real ones by default), or a source already built (``arena backtest --tui``
and ``arena paper --tui`` hand their own run in).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.parts import BacktestError, BacktestResult
from arena_tui.tui.catalog import Catalog
from arena_tui.tui.playback import Playback
from arena_tui.tui.screens.help import HelpScreen
from arena_tui.tui.screens.run import RunScreen
from arena_tui.tui.screens.spectate import SpectatorScreen
from arena_tui.tui.screens.start import StartScreen
from arena_tui.tui.source import BacktestSource
from arena_tui.tui.spectator import SpectateSpec, SpectatorSource

if TYPE_CHECKING:
    from arena_tui.run.live import LiveFeed

Sources = Callable[[RunConfig], BacktestSource]  # a backtest's config
LiveSources = Callable[[RunConfig], BacktestSource]  # a paper run's
Spectators = Callable[[SpectateSpec], SpectatorSource]
SIGNALS = (signal.SIGTERM, signal.SIGINT)  # (a terminal's ctrl+c is a key here, not SIGINT)
FINISH_S = 30.0  # how long to wait, after the app is gone, for its run to close its log


class ArenaApp(App[None]):
    CSS_PATH = "arena.tcss"
    TITLE = "arena-tui"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit", tooltip="Quit (a run stops; its run log is kept)"),
        Binding("question_mark", "help", "Help", key_display="?", tooltip="This help"),
    ]

    def __init__(
        self,
        *,
        catalog: Catalog | None = None,
        spec: RunConfig | None = None,
        source: BacktestSource | None = None,
        sources: Sources = BacktestSource.of_spec,
        speed: int | None = 60,
        paused: bool = False,
        picked: tuple[int, ...] | None = None,
        season: int = 0,
        vs: bool = True,
        playback: Playback | None = None,
        live_sources: LiveSources = BacktestSource.of_paper,
        quit_on_signals: bool = False,
        spectate: SpectateSpec | None = None,
        spectators: Spectators = SpectatorSource.of_spec,
        key: str | None = None,
    ) -> None:
        """The spectator screen for ``spectate``, the run screen for ``spec`` (made into a
        source by ``sources``) or ``source``, at once; else the start screen.

        ``esc`` on a run screen goes back to the start screen, made from ``catalog`` for a
        run handed in (``arena-tui LOG --strategy X``); a run handed in without a catalog
        (``arena backtest --tui``) has none to go back to."""
        super().__init__()
        if spec is not None and source is None:
            source = sources(spec)
        self.spectate = spectate
        self.spectators = spectators
        self.key = key  # an entry's key, for a host chosen on the start screen
        self.live_sources = live_sources
        self.quit_on_signals = quit_on_signals
        self.season = season
        self.playback = playback  # for ``source``; made from speed and paused when None
        self.has_start = catalog is not None or (source is None and spectate is None)
        self.catalog = catalog or Catalog((), (), ())
        self.source = source
        self.started: list[BacktestSource] = [] if source is None else [source]  # every run
        self.sources = sources
        self.speed = speed
        self.paused = paused
        self.picked = picked
        self.vs = vs

    def on_mount(self) -> None:
        if self.quit_on_signals:  # a supervisor (or kill) stopping the run stops it cleanly
            with contextlib.suppress(ValueError, NotImplementedError, RuntimeError):
                loop = asyncio.get_running_loop()
                for sig in SIGNALS:
                    loop.add_signal_handler(sig, lambda: self.call_later(self.action_quit))
        if self.spectate is not None:
            self.push_screen(SpectatorScreen(self.spectators(self.spectate)))
        elif self.source is not None:
            playback = self.playback or self.source.playback(self.speed, self.paused)
            self.push_screen(RunScreen(self.source, playback))
        else:
            self.push_screen(self.start_screen())

    def start_screen(self) -> StartScreen:
        return StartScreen(
            self.catalog,
            self.start_run,
            picked=self.picked,
            season=self.season,
            vs=self.vs,
            speed=self.speed,
        )

    def back_to_start(self, error: str | None = None) -> bool:
        """Show the start screen (made now for a run started directly), with ``error`` (why
        the run could not start) on it; False if this app has none."""
        below = [s for s in self.screen_stack if isinstance(s, StartScreen)]
        if below:
            start = below[-1]
            while self.screen is not start:
                self.pop_screen()
        elif self.has_start:
            start = self.start_screen()
            self.switch_screen(start)
        else:
            return False
        if error is not None:
            start.show_error(error)
        return True

    def on_unmount(self) -> None:
        if self.quit_on_signals:
            with contextlib.suppress(ValueError, NotImplementedError, RuntimeError):
                for sig in SIGNALS:
                    asyncio.get_running_loop().remove_signal_handler(sig)

    def start_run(self, spec: RunConfig | SpectateSpec, speed: int | None) -> None:
        if isinstance(spec, SpectateSpec):
            chosen = SpectateSpec(spec.url, spec.key or self.key)
            self.push_screen(SpectatorScreen(self.spectators(chosen)))
            return
        source = self.live_sources(spec) if spec.kind == "paper" else self.sources(spec)
        self.source = source
        self.started.append(source)
        self.push_screen(RunScreen(source, source.playback(speed, self.paused)))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    async def action_quit(self) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, RunScreen):
                screen.playback.stop()
            elif isinstance(screen, SpectatorScreen):
                screen.source.stop()
        self.exit()


make_app = ArenaApp  # the name the CLI and the tests build the app by


def _run(app: ArenaApp) -> None:
    app.run()


def watch_backtest(
    bt: Backtest,
    logs: Sequence[str],
    *,
    title: str,
    speed: int | None = 60,
    paused: bool = False,
    drive: Callable[[ArenaApp], None] = _run,
) -> BacktestResult | None:
    """``arena backtest --tui``: run ``bt`` on the run screen; its result once the app quits.

    None when it was stopped before there was anything to report; a known failure of the
    run is raised again as one line once the screen is gone. ``drive`` runs the app (the
    terminal; a test drives it headless).
    """
    source = BacktestSource.of_backtest(bt, logs, title=title)
    drive(make_app(source=source, speed=speed, paused=paused))
    return _watched(source)


def watch_paper(
    bt: Backtest, feed: LiveFeed, *, title: str, drive: Callable[[ArenaApp], None] = _run
) -> BacktestResult | None:
    """``arena paper --tui``: the live run on the run screen; its result once the app quits.

    As :func:`watch_backtest`; SIGTERM (or SIGINT) quits the app, ending the run cleanly.
    """
    source = BacktestSource.of_feed(bt, feed, title=title)
    drive(make_app(source=source, quit_on_signals=True))
    return _watched(source)


def _watched(source: BacktestSource) -> BacktestResult | None:
    if source.started:
        source.done.wait(FINISH_S)  # the worker thread closes the run log (and the feed)
    out = source.outcome
    if source.result is None and out is not None and out.error is not None:
        if out.stopped:
            return None  # stopped before the season started: nothing ran
        raise BacktestError(out.error)
    if out is not None and out.stopped and not out.final:
        sys.stderr.write("arena: the run was stopped before its end: the report covers it so far\n")
    return source.result
