"""The spectator screen: a running ``arena host``'s season, watched through its HTTP API.

Why this module exists: it joins the spectator's worker (``arena_tui.tui.spectator``) to
the panels and owns nothing else: it starts the worker, applies each picture the worker
posts to every panel in one ``batch_update``, and turns keys into the worker's commands
(the next coin, read again now). Which coin is shown is the viewer's choice, kept here;
everything shown comes from the latest picture, so the leaderboard is the host's rows as
served (its order, its provisional ranks), never re-ranked here.
"""

from __future__ import annotations

from functools import partial
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from arena_tui.tui.fmt import stamp
from arena_tui.tui.hostapi import paper_label
from arena_tui.tui.messages import SpectatorPosted
from arena_tui.tui.spectated import Spectated
from arena_tui.tui.spectator import SpectatorSource
from arena_tui.tui.widgets.hosted import (
    BookPanel,
    EntryPanel,
    LinkBar,
    ScoreRowsTable,
    SeasonStrip,
    as_orders,
)
from arena_tui.tui.widgets.orders import LEGEND, OrdersTable
from engine.units import DAY_MS

TABS = (("board", "Leaderboard"), ("book", "Market"), ("entry", "Entry"))
HELP = (
    "Spectating a hosted season: what a running arena host serves over HTTP, read every "
    "few seconds (r reads it again now). Top line: the link (connected; host unreachable or "
    "lost, retried with growing waits; never a crash), the server's clock and the time of "
    "the latest score row. Below: the season (id, how far it is, window, rules hash, and "
    "paper when the host says its season is paper trading) and the selected coin's best "
    "bid and ask (c: the next coin).\n\n"
    "Leaderboard: the host's score rows of the latest day, exactly as GET /v1/scores serves "
    "them, in its order: rank (provisional: eligibility ignored; the final ranking is "
    "arena replay's), equity, R, MDD and S as of the last mark, eligibility, fill days and "
    "active share. Market: the coin's book as the host last received it. The host serves "
    "books to entries only: without --key the Market tab says so. Entry (with --key, an "
    "entry's key): its account and open orders, read sparingly: keyed reads count against "
    "the entry's rate limit, which its agent shares."
)


class SpectatorScreen(Screen[None]):
    HELP = HELP

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "next_coin", "Coin", tooltip="The next coin (top of book and Market tab)"),
        Binding("r", "refresh", "Refresh", tooltip="Read the host again now (and retry it)"),
        *(
            Binding(str(i), f"tab('{tab}')", label, show=False, tooltip=f"Tab: {label}")
            for i, (tab, label) in enumerate(TABS, start=1)
        ),
        Binding(
            "escape",
            "back",
            "Back",
            key_display="esc",
            tooltip="Stop watching, back to the start screen",
        ),
    ]

    def __init__(self, source: SpectatorSource) -> None:
        super().__init__()
        self.source = source
        self.spectated: Spectated | None = None
        self.applied = 0  # pictures applied (fewer than posted when they coalesce)
        self.coin_index = 0
        key = source.spec.key
        self.watched = key.split(".", 1)[0] if key else None  # a key is NAME.secret

    @property
    def coins(self) -> list[str]:
        season = None if self.spectated is None else self.spectated.season
        return [] if season is None else [m.coin for m in season.markets]

    @property
    def coin(self) -> str | None:
        coins = self.coins
        return coins[self.coin_index % len(coins)] if coins else None

    def compose(self) -> ComposeResult:
        yield LinkBar(id="link")
        yield SeasonStrip(id="season-strip")
        with TabbedContent(id="spectate-tabs", initial="board"):
            with TabPane("Leaderboard", id="board"):
                yield ScoreRowsTable(id="board-table")
                yield Static("", id="board-note")
            with TabPane("Market", id="book"):
                yield BookPanel(id="book-panel")
            with TabPane("Entry", id="entry"):
                yield EntryPanel(id="entry-panel")
                yield OrdersTable(id="entry-orders")
                yield Static(LEGEND, id="entry-legend")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(LinkBar).url = self.source.spec.url
        if self.watched is None:
            self.query_one(TabbedContent).hide_tab("entry")
        else:
            self.query_one(TabbedContent).get_tab("entry").label = f"Entry {self.watched}"
        work = partial(self.source.run, self.post_message)
        self.run_worker(work, name="spectator", thread=True, exclusive=True)

    def on_unmount(self) -> None:
        self.source.stop()

    @on(SpectatorPosted)
    def _posted(self, message: SpectatorPosted) -> None:
        self.spectated = message.spectated
        self.applied += 1
        with self.app.batch_update():
            self.show()

    def show(self) -> None:
        s = self.spectated
        if s is None:
            return
        coin = self.coin
        if coin is not None:
            self.source.select(coin)
        self.query_one(LinkBar).spectated = s
        for panel in (self.query_one(SeasonStrip), self.query_one(BookPanel)):
            panel.spectated = s
            panel.coin = coin
            panel.index = self.coin_index % max(1, len(self.coins))
            panel.count = len(self.coins)
        self.query_one(ScoreRowsTable).show(s.rows, self.watched)
        if s.rows:
            day = stamp(s.rows[0].day * DAY_MS)[:10]
            note = f"{day} UTC, as the host ranks it (provisional: eligibility ignored)"
        else:
            note = "no score rows yet: the host writes them at every mark"
        if label := paper_label(s.paper):
            note += f" · {label}"
        self.query_one("#board-note", Static).update(note)
        self._label("board", f"Leaderboard {len(s.rows)}")
        if self.watched is not None:
            self.query_one(EntryPanel).spectated = s
            now = s.account.t if s.account is not None else 0
            self.query_one(OrdersTable).show(as_orders(s.orders, now))

    def _label(self, tab: str, label: str) -> None:
        t = self.query_one(TabbedContent).get_tab(tab)
        if str(t.label) != label:
            t.label = label

    # ---- keys ------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        entry_tab = action == "tab('entry')" or (action == "tab" and parameters == ("entry",))
        return not (entry_tab and self.watched is None)  # no key: no Entry tab

    def action_next_coin(self) -> None:
        if self.coins:
            self.coin_index = (self.coin_index + 1) % len(self.coins)
            self.show()

    def action_refresh(self) -> None:
        self.source.refresh()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.source.stop()
            self.app.pop_screen()
