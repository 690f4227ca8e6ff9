"""The spectator screen's panels: the link, the season, the leaderboard, a book, an entry.

Why this module exists: a hosted season is seen through what its host serves, which is
not what a local run holds (no prints, no funding, rows per day), so these panels render
the host's answers (:mod:`arena_tui.tui.hostapi`) with the run screen's formats
(``arena_tui.tui.fmt``) and its table (``KeyedTable``); the entry's open orders reuse the
run screen's orders table. The leaderboard is the host's rows in the order served: its
ranking, never this screen's.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from arena_tui.tui.fmt import clock, pct, px, ratio_pct, stamp, sz, usd
from arena_tui.tui.hostapi import (
    AccountDoc,
    BookDoc,
    Level,
    OpenOrder,
    ScoreRow,
    SeasonDoc,
    paper_label,
)
from arena_tui.tui.snapshot import Order
from arena_tui.tui.spectated import Spectated
from arena_tui.tui.spectator import BOOK_NEEDS_KEY
from arena_tui.tui.widgets.table import Cell, Col, KeyedTable
from engine.units import E10, parse_e8, tdiv

BOOK_LEVELS = 10


def level_px(text: str) -> str:
    """A price or size string as the host relays it, in the run screen's format."""
    try:
        return px(parse_e8(text))
    except ValueError:
        return text


def link_text(s: Spectated | None, url: str) -> Text:
    """The status line: the link's state, the server's clock and the latest row's time."""
    where = url.split("://", 1)[-1]
    if s is None or s.link.state == "connecting":
        return Text(f"… connecting to {where}", style="bold")
    link = s.link
    if link.state != "connected":
        mark, head = ("✕", "host unreachable") if link.state == "unreachable" else ("○", "lost")
        text = Text(f"{mark} {head} ({link.reason})", style="bold red")
        if link.retry_in_s is not None:
            text.append(f"  retrying in {link.retry_in_s:.1f}s (try {link.attempt})")
        text.append(f"  {where}", style="dim")
        return text
    text = Text("● connected", style="bold green")
    text.append(f" {where}")
    if s.season is not None:
        text.append(f"  server {stamp(s.season.t)} UTC")
    if s.rows:
        text.append(f"  scores {clock(max(r.t for r in s.rows))}")
    if s.final:
        text.append("  final", style="bold")
    if link.reason is not None:  # connected, but waiting (the host's public budget)
        text.append(f"  {link.reason}", style="yellow")
    return text


def progress(season: SeasonDoc) -> str:
    """Where the season is by the server's clock: before, running N%, or over."""
    if season.state == "over":
        return "over"
    if season.state == "before" or season.t < season.start:
        return "before the start"
    length = max(1, season.end - season.start)
    return f"running {min(season.t - season.start, length) * 100 // length}%"


def window(season: SeasonDoc) -> str:
    start, end = stamp(season.start)[:16], stamp(season.end)[:16]
    if start[:10] == end[:10]:
        end = end[11:]
    return f"{start} → {end} UTC"


def top_of_book(s: Spectated | None, coin: str | None, index: int, count: int) -> Text:
    """One line: the selected coin's best bid and ask, and the mark."""
    if coin is None:
        return Text("no market yet", style="dim")
    text = Text.assemble((coin, "bold"), " ")
    book = None if s is None else s.book
    if s is not None and s.book_note is not None:
        short = "books for entries only (--key)" if s.book_note == BOOK_NEEDS_KEY else "no book"
        text.append(short, style="yellow")
    elif book is None or book.coin != coin:
        text.append("reading its book…", style="dim")
    elif book.t is None:
        text.append("no book yet", style="dim")
    else:
        bids, asks = book.levels
        text.append(_best("bid", bids[0] if bids else None), "green")
        text.append("  ")
        text.append(_best("ask", asks[0] if asks else None), "red")
        text.append(f"  mark {px(book.mark)}")
        if book.stale:
            text.append("  stale", "bold yellow")
    text.append(f"  c: next coin ({index + 1} of {count})", style="dim")
    return text


def _best(side: str, level: Level | None) -> str:
    return f"{side} -" if level is None else f"{side} {level_px(level.px)} × {level_px(level.sz)}"


class LinkBar(Widget):
    spectated: reactive[Spectated | None] = reactive(None)
    url: reactive[str] = reactive("")

    def render(self) -> Text:
        return link_text(self.spectated, self.url)

    @property
    def text(self) -> str:
        return self.render().plain


class CoinView(Widget):
    """A panel about one coin of the latest picture: ``index`` of ``count`` coins."""

    spectated: reactive[Spectated | None] = reactive(None)
    coin: reactive[str | None] = reactive(None)
    index: reactive[int] = reactive(0)
    count: reactive[int] = reactive(0)


class SeasonStrip(CoinView):
    """Two lines: the season (id, state, window, rules hash) and the coin's top of book."""

    def render(self) -> Text:
        s = self.spectated
        season = None if s is None else s.season
        if s is None or season is None:
            head = Text("season: not read yet", style="dim")
        else:
            head = Text.assemble((season.id, "bold"), f"  {progress(season)}")
            head.append(f"  {window(season)}  rules {season.rules_sha256[:12]}…")
            if label := paper_label(season.paper):
                head.append(f" · {label}", style="bold")
        text = Text("\n").join([head, top_of_book(s, self.coin, self.index, self.count)])
        text.no_wrap, text.overflow = True, "ellipsis"  # two lines, whatever the width
        return text

    @property
    def text(self) -> str:
        return self.render().plain


class ScoreRowsTable(KeyedTable):
    """The host's score rows of the latest day, in the order served (its provisional rank)."""

    # 79 columns; R, MDD and S with every digit (``ratio_pct``), S with a gap at -12.345678%
    COLUMNS = (
        Col("rank", "rank", 4),
        Col("entry", "entry", 14, right=False),
        Col("equity", "equity $", 10),
        Col("r", "R", 11),
        Col("mdd", "MDD", 10),
        Col("s", "S", 12),
        Col("eligible", "elig", 5, right=False),
        Col("days", "days", 5),
        Col("active", "active", 8),
    )

    def show(self, rows: Sequence[ScoreRow], watched: str | None = None) -> None:
        shown: dict[str, list[Cell]] = {}
        for place, r in enumerate(rows):
            style = "bold" if r.entry == watched else ""
            shown[str(place)] = [
                str(r.rank),
                Text(r.entry, style=style),
                usd(r.equity),
                ratio_pct(r.ret),
                ratio_pct(r.mdd),
                Text(ratio_pct(r.score), style=style),
                "yes" if r.eligible else "no",
                str(r.fill_days),
                pct(r.active_share),
            ]
        self.sync(shown)


def book_lines(book: BookDoc, index: int, count: int, levels: int = BOOK_LEVELS) -> list[Text]:
    got = "no book yet" if book.t is None else f"received {clock(book.t)}"
    if book.time is not None:
        got += f" (exchange {clock(book.time)})"
    head = Text.assemble((book.coin, "bold"), f"  mark {px(book.mark)}  book {got}")
    if book.stale:
        head.append("  stale: activates nothing", "bold yellow")
    lines = [
        head,
        Text(f"c: next coin ({index + 1} of {count})", style="dim"),
        Text(f"{'bid size':>12} {'bid':>12}  {'ask':<12} {'ask size':<12}", style="dim"),
    ]
    bids, asks = book.levels
    for bid, ask in list(zip_longest(bids, asks))[:levels]:
        bid_text = f"{level_px(bid.sz):>12} {level_px(bid.px):>12}" if bid else " " * 25
        ask_text = f"{level_px(ask.px):<12} {level_px(ask.sz):<12}" if ask else ""
        lines.append(Text.assemble((bid_text, "green"), "  ", (ask_text, "red")))
    if not bids and not asks:
        lines.append(Text("the host has no book of this coin yet", style="dim"))
    return lines


class BookPanel(CoinView, can_focus=True):
    def render(self) -> Text:
        s = self.spectated
        if s is not None and s.book_note is not None:
            return Text(s.book_note, style="yellow")
        if s is None or s.book is None or s.book.coin != self.coin:
            return Text(f"reading the book of {self.coin or 'the first coin'}…", style="dim")
        return Text("\n").join(book_lines(s.book, self.index, self.count))

    @property
    def text(self) -> str:
        return self.render().plain


def account_lines(a: AccountDoc) -> list[Text]:
    share = pct(a.active_marks * 10**8 // a.marks) if a.marks else "-"
    lines = [
        Text.assemble(
            (a.entry, "bold"), f"  equity ${usd(a.equity)}  cash ${usd(a.cash)}  at {clock(a.t)}"
        ),
        Text(
            f"exposure ${usd(a.exposure)} of cap ${usd(a.cap)}  reserved ${usd(a.reserved)}  "
            f"open orders {a.open_orders}"
        ),
        Text(
            f"peak ${usd(a.peak)}  MDD {pct(a.mdd)}  fill days {a.fill_days}  "
            f"active {a.active_marks} of {a.marks} marks ({share})"
        ),
    ]
    if a.paused:
        lines.append(Text("PAUSED at the drawdown limit: reduce-only", style="bold red"))
    held = [
        f"{p.coin} {sz(p.sz)} @ {px(p.mark)} (${usd(tdiv(p.sz * (p.mark or 0), E10))})"
        for p in a.positions
        if p.sz
    ]
    lines.append(Text("positions: " + ("  ".join(held) if held else "none"), style="dim"))
    return lines


class EntryPanel(Widget):
    spectated: reactive[Spectated | None] = reactive(None)

    def render(self) -> Text:
        s = self.spectated
        if s is None or (s.account is None and s.entry_note is None):
            return Text("reading the entry's account…", style="dim")
        lines = [] if s.account is None else account_lines(s.account)
        if s.entry_note is not None:
            lines.append(Text(s.entry_note, style="yellow"))
        return Text("\n").join(lines)

    @property
    def text(self) -> str:
        return self.render().plain


def as_orders(orders: Sequence[OpenOrder], now: int) -> tuple[Order, ...]:
    """The host's open orders as the run screen's orders table shows them, aged at ``now``."""
    return tuple(
        Order(
            oid=o.oid,
            coin=o.coin,
            is_buy=o.isBuy,
            px=o.limitPx,
            sz=o.sz,
            filled=o.filled,
            reserve=o.reserve,
            age=now - o.received,
            expires_in=o.expires_at - now,
            state="cancelling" if o.cancel_at is not None else o.state,
            reduce_only=o.reduceOnly,
        )
        for o in orders
    )
