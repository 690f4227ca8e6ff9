"""The start screen: choose recordings, a strategy, a season and a mode, then run.

Why this module exists: a builder should not have to type paths to watch a run. The lists
come from a :class:`~arena_tui.tui.catalog.Catalog` handed in (found on disk by the app,
fixed by the tests). The mode decides what runs: a backtest on the picked recordings, or
live paper trading (``arena paper``: the strategy on Hyperliquid's live feed for the coins
typed in, under the highlighted season file or by default Season 0 rules from the next
minute for 24 hours), or spectating a running ``arena host`` at the URL typed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Footer, Input, OptionList, SelectionList, Static
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection

from arena_tui.logs.meta import MetaError, parse_coins
from arena_tui.run.paper import PaperSpec
from arena_tui.tui.catalog import Catalog
from arena_tui.tui.hostapi import host_url
from arena_tui.tui.playback import SPEEDS, speed_label
from arena_tui.tui.source import RunSpec
from arena_tui.tui.spectator import SpectateSpec

OWN_SEASON = "the log's own season (or the defaults)"
MODES = (
    Option("Backtest: a strategy on recorded logs", id="backtest"),
    Option("Live paper: the strategy on Hyperliquid's live feed", id="paper"),
    Option("Spectator: a running arena host's season (its URL)", id="spectator"),
)
COINS = ""  # typed in; with a season file and left empty: all its coins
URL = "http://127.0.0.1:8000"  # arena host's default
Chosen = RunSpec | PaperSpec | SpectateSpec


HELP = (
    "Tab (and shift+tab) moves between the lists, the arrows move in a list, space picks "
    "recordings (several, in time order; none picked: the highlighted one). The highlighted "
    "strategy and season are the ones run. b runs the baselines beside it (momentum, "
    "reversion, control_random, maker: the leaderboard compares them), +/- choose the "
    "speed the run starts at, r runs. Live paper (the Mode list) trades the strategy on "
    "Hyperliquid's live feed instead, in real time, for the coins typed in the box that "
    "replaces the speed (enter runs): under the highlighted season file (its coins when the "
    "box is empty), else Season 0 rules from the next minute for 24 hours; recordings are "
    "not used, and the run log records the feed. On its run screen space pauses the view, "
    "never the run. Spectator (the Mode list) watches a running arena host instead, at the URL "
    "typed in the box (enter opens it): its season, leaderboard and books, read over HTTP; "
    "with arena-tui --key KEY also that entry's account and open orders."
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
        start_run: Callable[[Chosen, int | None], None],
        *,
        picked: tuple[int, ...] = (0,),
        season: int = 0,
        vs: bool = True,
        speed: int | None = 60,
        coins: str = COINS,
        url: str = URL,
    ) -> None:
        super().__init__()
        self.url = url
        self.coins = coins
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
            yield Input(self.coins, placeholder="BTC,ETH", id="coins")
            yield Input(self.url, placeholder=URL, id="url")
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
        coins = self.query_one("#coins", Input)
        coins.border_title = "coins to trade live"
        coins.display = False
        url = self.query_one("#url", Input)
        url.border_title = "arena host's URL"
        url.display = False
        if not self.catalog.recordings:
            self._error("no recordings found in ./recordings or the data directory")

    def _speed_text(self) -> str:
        return f"start at {speed_label(self.speed)} (+/-)"

    def _error(self, text: str) -> None:
        self.query_one("#error", Static).update(text)

    @property
    def mode(self) -> str | None:
        modes = self.query_one("#modes", OptionList)
        index = modes.highlighted
        return None if index is None else modes.get_option_at_index(index).id

    @property
    def live(self) -> bool:
        return self.mode == "paper"

    @on(OptionList.OptionHighlighted, "#modes")
    def _mode(self) -> None:
        mode = self.mode
        self.query_one("#coins", Input).display = mode == "paper"
        self.query_one("#url", Input).display = mode == "spectator"
        self.query_one("#speed", Static).display = mode not in ("paper", "spectator")
        self.query_one("#vs", Checkbox).display = mode != "spectator"
        self._error("")
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.is_mounted:
            return True
        if action in ("faster", "slower"):
            return self.mode not in ("paper", "spectator")
        return not (action == "toggle_vs" and self.mode == "spectator")

    def _strategy(self) -> int | None:
        strategy = self.query_one("#strategies", OptionList).highlighted
        if strategy is None or not self.catalog.strategies:
            self._error("no strategy to run: put one in ./strategies or pass --strategy FILE")
            return None
        return strategy

    def paper_spec(self) -> PaperSpec | None:
        """The live paper run the choices say, or None (with the reason shown)."""
        c = self.catalog
        strategy = self._strategy()
        if strategy is None:
            return None
        season = self.query_one("#seasons", OptionList).highlighted or 0
        text = self.query_one("#coins", Input).value
        try:
            coins = tuple(parse_coins(text)) if text.strip() or season == 0 else ()
        except MetaError:
            self._error("type the coins to trade live, e.g. BTC,ETH")
            return None
        return PaperSpec(
            strategy=c.strategies[strategy].path,
            coins=coins,
            vs="baselines" if self.query_one("#vs", Checkbox).value else None,
            season=c.seasons[season - 1].path if season > 0 else None,
        )

    def spectate_spec(self) -> SpectateSpec | None:
        try:
            return SpectateSpec(host_url(self.query_one("#url", Input).value))
        except ValueError as exc:
            self._error(str(exc))
            return None

    def spec(self) -> Chosen | None:
        """What the choices say to run, or None (with the reason shown)."""
        if self.mode == "spectator":
            return self.spectate_spec()
        if self.live:
            return self.paper_spec()
        c = self.catalog
        recs = self.query_one("#recordings", SelectionList)
        chosen = sorted(recs.selected)
        if not chosen and recs.highlighted is not None:
            chosen = [recs.highlighted]
        if not chosen:
            self._error("pick a recording first (space in the Recordings list)")
            return None
        strategy = self._strategy()
        if strategy is None:
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

    @on(Input.Submitted, "#coins, #url")
    def _coins_entered(self) -> None:
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
