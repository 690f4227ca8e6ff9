"""The start screen: choose recordings, a strategy, a season and a mode, then run.

Why this module exists: a builder should not have to type paths to watch a run. The lists
come from a :class:`~arena_tui.tui.catalog.Catalog` handed in (found on disk by the app,
fixed by the tests). Live paper trading and spectating a hosted season are listed too,
plainly marked as not available yet (``arena paper`` and ``arena host`` do not exist yet).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Footer, OptionList, SelectionList, Static
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection

from arena_tui.tui.catalog import Catalog
from arena_tui.tui.playback import SPEEDS, speed_label
from arena_tui.tui.source import RunSpec

OWN_SEASON = "the log's own season (or the backtest defaults)"
MODES = (
    Option("Backtest: a strategy on recorded logs", id="backtest"),
    Option("Live paper: not available yet (arena paper is not built)", id="paper", disabled=True),
    Option("Spectator: not available yet (arena host is not built)", id="spectator", disabled=True),
)


HELP = (
    "Tab (and shift+tab) moves between the lists, the arrows move in a list, space picks "
    "recordings (several, in time order; none picked: the highlighted one). The highlighted "
    "strategy and season are the ones run. b runs the baselines beside it (momentum, "
    "reversion, control_random, maker: the leaderboard compares them), +/- choose the "
    "speed the run starts at, r runs. Live paper trading and spectating a hosted season "
    "will be modes here once arena paper and arena host exist."
)


class StartScreen(Screen[None]):
    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "run", "Run", tooltip="Run the chosen strategy on the chosen recordings"),
        Binding("b", "toggle_vs", "Baselines", tooltip="Run the baselines beside it, or not"),
        Binding(
            "plus,equals_sign",
            "faster",
            "Faster",
            key_display="+",
            tooltip="Start at a faster speed",
        ),
        Binding("minus", "slower", "Slower", key_display="-", tooltip="Start slower"),
    ]

    def __init__(
        self,
        catalog: Catalog,
        start_run: Callable[[RunSpec, int | None], None],
        *,
        picked: tuple[int, ...] = (0,),
        season: int = 0,
        vs: bool = True,
        speed: int | None = 60,
    ) -> None:
        super().__init__()
        self.catalog = catalog
        self.start_run = start_run
        self.picked = picked
        self.season = season
        self.vs = vs
        self.speed = speed

    def compose(self) -> ComposeResult:
        c = self.catalog
        yield Static(
            "arena-tui: choose, then press r to run (tab moves between lists)", id="start-title"
        )
        with Grid(id="choices"):
            yield SelectionList[int](
                *(
                    Selection(item.label, i, i in self.picked)
                    for i, item in enumerate(c.recordings)
                ),
                id="recordings",
            )
            yield OptionList(*(item.label for item in c.strategies), id="strategies")
            yield OptionList(OWN_SEASON, *(item.label for item in c.seasons), id="seasons")
            yield OptionList(*MODES, id="modes")
        with Horizontal(id="run-row"):
            yield Checkbox("against the baselines (b)", self.vs, id="vs")
            yield Static(self._speed_text(), id="speed")
            yield Button("Run (r)", id="run", variant="primary")
        yield Static("", id="error")
        yield Footer()

    def on_mount(self) -> None:
        titles = {
            "recordings": "Recordings (space picks)",
            "strategies": "Strategy",
            "seasons": "Season",
            "modes": "Mode",
        }
        for wid, title in titles.items():
            self.query_one(f"#{wid}").border_title = title
        for wid, index in (("strategies", 0), ("seasons", self.season), ("modes", 0)):
            self.query_one(f"#{wid}", OptionList).highlighted = index
        if not self.catalog.recordings:
            self._error("no recordings found in ./recordings or the data directory")

    def _speed_text(self) -> str:
        return f"start at {speed_label(self.speed)} (+/-)"

    def _error(self, text: str) -> None:
        self.query_one("#error", Static).update(text)

    def spec(self) -> RunSpec | None:
        """What the choices say to run, or None (with the reason shown)."""
        c = self.catalog
        recs = self.query_one("#recordings", SelectionList)
        chosen = sorted(recs.selected)
        if not chosen and recs.highlighted is not None:
            chosen = [recs.highlighted]
        if not chosen:
            self._error("pick a recording first (space in the Recordings list)")
            return None
        strategy = self.query_one("#strategies", OptionList).highlighted
        if strategy is None or not c.strategies:
            self._error("no strategy to run: put one in ./strategies or pass --strategy FILE")
            return None
        season = self.query_one("#seasons", OptionList).highlighted or 0
        return RunSpec(
            logs=tuple(c.recordings[i].path for i in chosen),
            strategy=c.strategies[strategy].path,
            vs="baselines" if self.query_one("#vs", Checkbox).value else None,
            season=c.seasons[season - 1].path if season > 0 else None,
        )

    def action_run(self) -> None:
        spec = self.spec()
        if spec is not None:
            self._error("")
            self.start_run(spec, self.speed)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run":
            self.action_run()

    def action_toggle_vs(self) -> None:
        box = self.query_one("#vs", Checkbox)
        box.value = not box.value

    def _set_speed(self, step: int) -> None:
        i = min(max(SPEEDS.index(self.speed) + step, 0), len(SPEEDS) - 1)
        self.speed = SPEEDS[i]
        self.query_one("#speed", Static).update(self._speed_text())

    def action_faster(self) -> None:
        self._set_speed(1)

    def action_slower(self) -> None:
        self._set_speed(-1)
