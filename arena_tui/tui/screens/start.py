"""The start screen: choose recordings, a strategy, a season and a mode, then run.

Why this module exists: a builder should not have to type paths to watch a run. The lists
come from a :class:`~arena_tui.tui.catalog.Catalog` handed in (found on disk by the app,
fixed by the tests): the builder's own files first, then what arena ships, each marked where
it was found, so the strategy highlighted at first is the builder's own when there is one.
With no recording at all, the screen says where recordings come from
(:func:`~arena_tui.tui.catalog.no_recordings`), and ``r`` says it again. The mode decides
what runs: a backtest on the picked recordings, or live paper trading (``arena paper``: the
strategy on Hyperliquid's live feed for the coins typed in, under the highlighted season
file or by default Season 0 rules from the next minute for 24 hours), or spectating a
running ``arena host`` at the URL typed in.

The recording highlighted (and picked) at first is the first one that runs as it is (its
own season, or the defaults: see :func:`~arena_tui.tui.catalog.needs_season`). A backtest
that cannot start is explained here, in the screen's words, naming the recording, in a
box that ``esc`` hides: a log that spans no whole minute before anything starts (and the
season file that covers it highlighted), anything else when the run comes back failed.
Picked recordings read ``[x]``, the others ``[ ]``: no colour needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from rich.segment import Segment
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import Button, Checkbox, Footer, Input, OptionList, SelectionList, Static
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection

from arena_tui.logs.meta import MetaError, parse_coins
from arena_tui.run.config import LiveConfig, RunConfig
from arena_tui.tui.catalog import (
    Catalog,
    Span,
    covering,
    needs_season,
    no_recordings,
    runs_alone,
)
from arena_tui.tui.fmt import span as duration
from arena_tui.tui.fmt import stamp
from arena_tui.tui.hostapi import host_url
from arena_tui.tui.playback import SPEEDS, speed_label
from arena_tui.tui.source import watched_run
from arena_tui.tui.spectator import SpectateSpec

OWN_SEASON = "the log's own season (or the defaults)"
MODES = (
    Option("Backtest: a strategy on recorded logs", id="backtest"),
    Option("Live paper: the strategy on Hyperliquid's live feed", id="paper"),
    Option("Spectator: a running arena host's season (its URL)", id="spectator"),
)
COINS = ""  # typed in; with a season file and left empty: all its coins
URL = "http://127.0.0.1:8000"  # arena host's default
Chosen = RunConfig | SpectateSpec  # a backtest's or a paper run's config, or a host
HIDE = "  (esc hides this)"
# what a run's error says to do on a command line, and what to do here instead
IN_TUI = (("pass --season FILE", "choose a season file in the Season list"),)


class PickList(SelectionList[int]):
    """The recordings: ``[x]`` picked, ``[ ]`` not, readable without colour."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        if len(segments) < 3:
            return strip
        try:
            value = self.get_option_at_index(self.scroll_offset.y + y).value
        except LookupError:
            return strip
        style = segments[1].style  # the button's (with the option's meta, for the mouse)
        mark = "x" if value in self.selected else " "
        box = [Segment("[", style), Segment(mark, style), Segment("]", style)]
        return Strip([*box, *segments[3:]], strip.cell_length)


class Tick(Checkbox):
    """A checkbox that reads ``[x]`` or ``[ ]`` without colour."""

    BUTTON_LEFT = "["
    BUTTON_RIGHT = "]"

    def render(self) -> Content:
        self.BUTTON_INNER = "x" if self.value else " "
        return super().render()


HELP = (
    "Tab (and shift+tab) moves between the lists, the arrows move in a list, space picks "
    "recordings (several, in time order; none picked: the highlighted one); [x] is picked, "
    "[ ] is not. Each list has your files first (given, here, ./recordings or "
    "./strategies, the data directory), then what arena ships (sample recordings, "
    "baselines, season files), each marked where it was found. At first the recording "
    "picked is the first that runs as it is (a recording that spans no whole minute needs "
    "a season file: r says which covers it), and the strategy highlighted is your own when "
    "there is one. The highlighted strategy and season are the ones run. b runs the "
    "baselines beside it (momentum, reversion, control_random, maker: the leaderboard "
    "compares them), +/- choose the speed the run starts at, r runs. A run is written into "
    "the data directory's runs/ (or --out) as arena backtest --out writes one: when it "
    "reaches its end it is judged (the verdict in the Score tab) and its report.json and "
    "report.html are written beside its run log; arena runs list shows it. Live paper (the "
    "Mode list) trades the strategy on Hyperliquid's live feed instead, in real time, for "
    "the coins typed in the box that replaces the speed (enter runs): under the "
    "highlighted season file (its coins when the box is empty), else Season 0 rules from "
    "the next minute for 24 hours; recordings are not used, and the run log records the "
    "feed. On its run screen space pauses the view, never the run. Spectator (the Mode "
    "list) watches a running arena host instead, at the URL typed in the box (enter opens "
    "it): its season, leaderboard and books, read over HTTP; with arena-tui --key KEY also "
    "that entry's account and open orders. When a run cannot start, the reason shows below "
    "the Run button; esc hides it."
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
        Binding("escape", "hide_error", "Hide", tooltip="Hide the message below the Run button"),
    ]

    def __init__(
        self,
        catalog: Catalog,
        start_run: Callable[[Chosen, int | None], None],
        *,
        picked: tuple[int, ...] | None = None,
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
        self.picked = default_pick(catalog) if picked is None else picked
        self.season = season
        self.vs = vs
        self.speed = speed
        self.pending = ""  # a message to show once mounted
        self.shown_mode: str | None = None  # the mode the screen was last laid out for

    def compose(self) -> ComposeResult:
        c = self.catalog
        yield Static(
            "arena-tui: choose, then press r to run (tab moves between lists)", id="start-title"
        )
        with Grid(id="choices"):
            yield PickList(
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
            yield Tick("against the baselines (b)", self.vs, id="vs")
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
        if self.picked and self.catalog.recordings:
            self.query_one("#recordings", SelectionList).highlighted = min(self.picked)
        coins = self.query_one("#coins", Input)
        coins.border_title = "coins to trade live"
        coins.display = False
        url = self.query_one("#url", Input)
        url.border_title = "arena host's URL"
        url.display = False
        self.query_one("#error", Static).display = False
        if self.pending:
            self._error(self.pending)
        elif not self.catalog.recordings:
            self._error(no_recordings())

    def _speed_text(self) -> str:
        return f"start at {speed_label(self.speed)} (+/-)"

    def _error(self, text: str) -> None:
        box = self.query_one("#error", Static)
        box.update(text + HIDE if text else "")
        box.display = bool(text)
        self.refresh_bindings()

    @property
    def error(self) -> str:
        """The message shown below the Run button ("" when none)."""
        box = self.query_one("#error", Static)
        return str(box.content).removesuffix(HIDE) if box.display else ""

    def show_error(self, text: str) -> None:
        """A run that could not start: its reason, in this screen's words."""
        for cli, here in IN_TUI:
            text = text.replace(cli, here)
        if self.is_mounted:
            self._error(f"could not start: {text}")
        else:
            self.pending = f"could not start: {text}"

    def action_hide_error(self) -> None:
        self._error("")

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
        if mode != self.shown_mode:  # (not the first highlight: what is shown stays)
            shown, self.shown_mode = self.shown_mode, mode
            if shown is not None:
                lacking = mode == "backtest" and not self.catalog.recordings
                self._error(no_recordings() if lacking else "")
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.is_mounted:
            return True
        if action == "hide_error":
            return self.query_one("#error", Static).display
        if action in ("faster", "slower"):
            return self.mode not in ("paper", "spectator")
        return not (action == "toggle_vs" and self.mode == "spectator")

    def _strategy(self) -> int | None:
        strategy = self.query_one("#strategies", OptionList).highlighted
        if strategy is None or not self.catalog.strategies:
            self._error(
                "no strategy to run: save one here (docs/strategies.md's my_strategy.py) or "
                "pass --strategy FILE"
            )
            return None
        return strategy

    def paper_spec(self) -> RunConfig | None:
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
        return RunConfig(
            kind="paper",
            strategy=str(c.strategies[strategy].path),
            vs="baselines" if self.query_one("#vs", Checkbox).value else None,
            season=str(c.seasons[season - 1].path) if season > 0 else None,
            live=LiveConfig(coins=coins),
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
            if c.recordings:
                self._error("pick a recording first (space in the Recordings list)")
            else:
                self._error(no_recordings())  # where they come from
            return None
        strategy = self._strategy()
        if strategy is None:
            return None
        seasons = self.query_one("#seasons", OptionList)
        season = seasons.highlighted or 0
        logs = [c.recordings[i].path for i in chosen]
        span = needs_season(logs) if season == 0 else None
        if span is not None:
            fits = covering(c.seasons, span)
            if fits is not None:
                seasons.highlighted = c.seasons.index(fits) + 1
                seasons.focus()
            self._error(no_minute(logs, span, None if fits is None else fits.path.name))
            return None
        return watched_run(
            logs,
            c.strategies[strategy].path,
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


def default_pick(catalog: Catalog) -> tuple[int, ...]:
    """The first recording that runs as it is (else the first): what ``r`` runs at once."""
    for i, item in enumerate(catalog.recordings):
        if runs_alone(item.path):
            return (i,)
    return (0,) if catalog.recordings else ()


def no_minute(logs: Sequence[Path], span: Span, fits: str | None) -> str:
    """Why logs that span no whole minute do not run by default, and what to do here."""
    names = ", ".join(p.name for p in logs)
    start, end = stamp(span.first), stamp(span.last)[11:]
    spans, needs = ("spans", "it needs") if len(logs) == 1 else ("span", "they need")
    text = (
        f"{names} {spans} only {duration(span.last - span.first)} ({start} to {end} UTC): no "
        f"whole minute, so {needs} a season file; "
    )
    if fits is not None:
        return text + f"{fits} covers it, now highlighted in the Season list: r runs it."
    return text + "choose one that covers it in the Season list (./seasons)."
