"""The run screen: one backtest, watched live.

Why this module exists: it joins the worker to the widgets and owns nothing else. It
starts the source in a thread worker, applies each snapshot to every panel in one
``batch_update`` (attributes down), appends every event to the activity table, and turns
keys into playback commands. Which entry and which coin are shown is the viewer's choice,
kept here; everything shown comes from the latest snapshot. A live run has no speed and no
seeking (those keys are hidden); space pauses its view while the run goes on, and the
header shows the feed's link as it is (connected, or why not and when the next try comes),
read from the feed a few times a second whether the view is paused or not.

``n`` runs to the next fill or rejection of the entry watched (``e`` changes it). A run
that fails says why in a box under the header (``esc`` hides it); one that could not even
start (a choice of files the runner refuses) goes back to the start screen and says it
there. ``esc`` goes back to the start screen, the one it came from or, for a run started
from the command line, a new one.

When a run started in arena-tui reaches its end, it is judged and its report written into
its directory (``tui.judge``: the twins' pass, then every file ``arena backtest --out``
writes, in a thread of its own, so the screen stays live; "judging: trading 100 random
twins..." meanwhile), and the Score tab shows the verdict's three answers and the floor as
the terminal report words them, and where report.html is; a failure there is one line in
the tab. A run handed in by ``arena backtest --tui`` is judged by that command after the
screen, so the tab says the verdict comes with the report.
"""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial
from typing import Any, ClassVar, Protocol, runtime_checkable

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from arena_tui.tui.feedlink import FeedLink
from arena_tui.tui.judge import Reported, judging_line
from arena_tui.tui.messages import Happened, Outcome, RunEnded, SnapshotPosted, VerdictReady
from arena_tui.tui.playback import Playback
from arena_tui.tui.snapshot import Snapshot
from arena_tui.tui.source import BacktestSource
from arena_tui.tui.widgets.activity import ActivityLog
from arena_tui.tui.widgets.chart import EquityChart
from arena_tui.tui.widgets.leaders import LeaderTable
from arena_tui.tui.widgets.market import MarketPanel
from arena_tui.tui.widgets.orders import LEGEND, OrdersTable, PositionsTable
from arena_tui.tui.widgets.pricechart import PriceChart
from arena_tui.tui.widgets.score import ScorePanel
from arena_tui.tui.widgets.status import StatusBar, ended_words, season_part
from arena_tui.tui.widgets.usage import UsageChart
from arena_tui.tui.widgets.verdict import ELSEWHERE, VerdictPanel

LIVE_HIDDEN = frozenset({"faster", "slower", "seek"})
LINK_S = 0.2  # how often a live run's header reads the feed's link
HIDE = "  (esc hides this)"
WIDE = 120  # columns from which the market tab's chart goes beside the book, not above it
TABS = (
    ("orders", "Orders"),
    ("positions", "Positions"),
    ("activity", "Activity"),
    ("market", "Market"),
    ("leaders", "Leaderboard"),
    ("score-tab", "Score"),
)


@runtime_checkable
class Home(Protocol):
    """The app as this screen needs it: somewhere to go back to."""

    has_start: bool

    def back_to_start(self, error: str | None = None) -> bool: ...


class RunScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "play_pause", "Pause", priority=True, tooltip="Pause or play"),
        Binding(
            "plus,equals_sign",
            "faster",
            "Faster",
            key_display="+",
            tooltip="Faster: 1x, 10x, 60x, 600x, max (simulated time against wall time)",
        ),
        Binding("minus", "slower", "Slower", key_display="-", tooltip="Slower"),
        Binding(
            "n",
            "seek",
            "Next fill",
            tooltip="Run to the watched entry's next fill or rejection, then pause",
        ),
        Binding("c", "next_coin", "Coin", show=False, tooltip="Market tab: the next coin"),
        Binding(
            "e",
            "next_entry",
            "Entry",
            tooltip="Watch the next entry (score, chart, orders, positions)",
        ),
        *(
            Binding(str(i), f"tab('{tab}')", label, show=False, tooltip=f"Tab: {label}")
            for i, (tab, label) in enumerate(TABS, start=1)
        ),
        Binding(
            "escape",
            "back",
            "Back",
            show=False,
            key_display="esc",
            tooltip="Hide the error shown, else stop the run and go back to the start screen",
        ),
    ]

    def __init__(self, source: BacktestSource, playback: Playback) -> None:
        super().__init__()
        self.source = source
        self.playback = playback
        self.snapshot: Snapshot | None = None
        self.outcome: Outcome | None = None
        self.applied = 0  # snapshots applied (fewer than posted when they coalesce)
        self.watched = 0
        self.coin = 0
        self.settled = asyncio.Event()  # the worker is paused, or the run has ended
        self.finished = asyncio.Event()
        self.link: FeedLink | None = None  # a live run's feed, once the worker has it
        self.verdict: dict[str, Any] | None = None  # report.json's "verdict", once judged
        self.judged = asyncio.Event()  # the verdict is shown (or why there is none)

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        yield Static("", id="run-error")
        with Horizontal(id="top"):
            yield ScorePanel(id="score")
            yield EquityChart(id="chart")
        with TabbedContent(id="tabs", initial="orders"):
            with TabPane("Orders", id="orders"):
                yield OrdersTable(id="orders-table")
                yield Static(LEGEND, id="legend")
            with TabPane("Positions", id="positions"):
                yield PositionsTable(id="positions-table")
            with TabPane("Activity", id="activity"):
                yield Static(ActivityLog.HEADER, id="activity-header")
                yield ActivityLog(id="activity-log")
            with TabPane("Market", id="market"), Container(id="market-row"):
                yield PriceChart(id="price-chart")
                yield MarketPanel(id="market-panel")
            with TabPane("Leaderboard", id="leaders"):
                yield LeaderTable(id="leaders-table")
            with TabPane("Score", id="score-tab"), VerticalScroll(id="score-scroll"):
                yield VerdictPanel(id="verdict")
                yield UsageChart(id="usage-chart")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#chart", EquityChart).border_title = "equity and drawdown"
        status = self.query_one(StatusBar)
        status.live = self.source.live
        status.playback = self.playback.state()
        self.query_one("#run-error", Static).display = False
        if self.source.judging is None:
            self.query_one(VerdictPanel).note(ELSEWHERE)
        if self.source.live:
            self.set_interval(LINK_S, self.read_link)
        work = partial(self.source.run, self.playback, self.post_message)
        self.run_worker(work, name="backtest", thread=True, exclusive=True)

    def on_resize(self, event: events.Resize) -> None:
        self.query_one("#market-row").set_class(event.size.width >= WIDE, "wide")

    def read_link(self) -> None:
        """The live feed's link, as it is now, into the header."""
        feed = self.source.feed
        if feed is None:
            return
        if self.link is None:
            self.link = FeedLink(feed)
        self.query_one(StatusBar).link = self.link.read()

    def on_unmount(self) -> None:
        self.playback.stop()  # a paused worker must not outlive the screen

    # ---- messages from the worker ----------------------------------------------------

    @on(SnapshotPosted)
    def _snapshot(self, message: SnapshotPosted) -> None:
        self.snapshot = message.snapshot
        self.applied += 1
        with self.app.batch_update():
            self.show()
        if message.snapshot.waiting:
            self.settled.set()

    @on(Happened)
    def _happened(self, message: Happened) -> None:
        table = self.query_one(ActivityLog)
        table.append(message.happenings)
        self._label("activity", f"Activity {table.received}")

    @on(RunEnded)
    def _ended(self, message: RunEnded) -> None:
        out = self.outcome = message.outcome
        self.query_one(StatusBar).ended = ended_words(out.final, out.stopped, out.error)
        self.settled.set()
        self.finished.set()
        reporter, how = self.source.reporter, self.source.judging
        if reporter is not None:  # the run reached its end: judged, and its report written
            self.query_one(VerdictPanel).note(judging_line(reporter.how, reporter.result))
            reporter.listen(self._reported)
        elif how is not None:
            self.query_one(VerdictPanel).note("no verdict: the run did not reach its end")
            self.judged.set()
        if out.error is None:
            return
        home = self.app if isinstance(self.app, Home) else None
        if not out.prepared and home is not None and home.back_to_start(out.error):
            return  # the choices were wrong: say so where they are made
        self.show_error(f"the run failed: {out.error}")

    # ---- the verdict and the report, once the run has ended ----------------------------

    def _reported(self, reported: Reported) -> None:
        """From the reporter's thread: how the report went, to show (if still shown)."""
        message = VerdictReady(reported.verdict, reported.error, reported.page or reported.out)
        with contextlib.suppress(RuntimeError):  # the app's loop is gone: nobody to show it
            self.post_message(message)

    @on(VerdictReady)
    def _verdict_ready(self, message: VerdictReady) -> None:
        panel = self.query_one(VerdictPanel)
        if message.verdict is None:
            panel.note(f"no verdict: {message.error}", failed=True)
        else:
            self.verdict = message.verdict
            panel.show(message.verdict, message.report)
        self.judged.set()

    def show_error(self, text: str) -> None:
        box = self.query_one("#run-error", Static)
        box.update(text + HIDE if text else "")
        box.display = bool(text)
        self.refresh_bindings()

    @property
    def error(self) -> str:
        """The error shown under the header ("" when none)."""
        box = self.query_one("#run-error", Static)
        return str(box.content).removesuffix(HIDE) if box.display else ""

    # ---- applying a snapshot ---------------------------------------------------------

    def show(self) -> None:
        snap = self.snapshot
        if snap is None:
            return
        status = self.query_one(StatusBar)
        status.t = snap.t
        status.inputs = snap.inputs
        status.season = season_part(snap.t, snap.start, snap.end, snap.over)
        status.playback = self.playback.state()
        if snap.entries:
            entry = snap.entries[self.watched % len(snap.entries)]
            self.query_one(ScorePanel).score = entry.score
            chart = self.query_one(EquityChart)
            chart.starting_equity = snap.starting_equity
            chart.limit_pct = entry.score.drawdown_limit_pct
            chart.marks = entry.marks
            self.query_one(OrdersTable).show(entry.orders)
            self.query_one(PositionsTable).show(entry.positions)
            self.query_one(LeaderTable).show(snap.leaders, entry.score.entry)
            self._label("orders", f"Orders {len(entry.orders)}")
            self._label("positions", f"Positions {len(entry.positions)}")
            score = entry.score
            self.query_one(UsageChart).show(entry.uses, score.cap_pct, score.max_open_orders)
        if snap.coins:
            market = self.query_one(MarketPanel)
            market.index = self.coin % len(snap.coins)
            market.count = len(snap.coins)
            market.coin = snap.coins[market.index]
            if snap.entries:
                watched = snap.entries[self.watched % len(snap.entries)]
                self.query_one(PriceChart).show(
                    market.coin, watched.score.entry, watched.fills, watched.orders
                )

    def _label(self, tab: str, label: str) -> None:
        t = self.query_one(TabbedContent).get_tab(tab)
        if str(t.label) != label:
            t.label = label

    # ---- keys ------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back" and self.is_mounted:
            home = self.app if isinstance(self.app, Home) else None
            return self.error != "" or (home is not None and home.has_start)
        return not (self.source.live and action in LIVE_HIDDEN)  # live: no speed, no seek

    def _commanded(self) -> None:
        state = self.playback.state()
        self.query_one(StatusBar).playback = state
        if not state.paused and self.outcome is None:
            self.settled.clear()

    def action_play_pause(self) -> None:
        self.playback.toggle()
        self._commanded()

    def action_faster(self) -> None:
        self.playback.faster()
        self._commanded()

    def action_slower(self) -> None:
        self.playback.slower()
        self._commanded()

    def action_seek(self) -> None:
        if self.outcome is None:
            self.playback.seek(self.watched_entry)
            self._commanded()

    @property
    def watched_entry(self) -> str | None:
        """The entry the score, chart, orders and positions show (None before any)."""
        snap = self.snapshot
        if snap is None or not snap.entries:
            return None
        return snap.entries[self.watched % len(snap.entries)].score.entry

    def action_next_coin(self) -> None:
        self.coin += 1
        self.show()

    def action_next_entry(self) -> None:
        self.watched += 1
        self.show()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_back(self) -> None:
        if self.error:
            self.show_error("")
            return
        home = self.app if isinstance(self.app, Home) else None
        if home is not None and home.has_start:
            self.playback.stop()
            home.back_to_start()
