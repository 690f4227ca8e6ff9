"""Fills, rejections, cancels and closes, with the engine's reasons, oldest first; and
what the strategies print (``said`` rows: each line as it was written).

Every event the worker sends is counted (the tab's title says how many); the newest
``KEEP`` are kept and only the lines on screen are ever formatted and drawn, so a run
with tens of thousands of events costs the screen next to nothing (a DataTable re-indexes
every row to drop one; a RichLog renders every line it is given).

What an entry wrote (a fill's note, a line it printed) is shown without control characters
(``util.text.printable``): a note logged before notes were checked, or a strategy printing
escape sequences, cannot recolour or move the screen.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from arena_tui.run.hooks import Said
from arena_tui.tui.fmt import clock, sz, usd
from arena_tui.tui.fmt import px as fpx
from arena_tui.tui.snapshot import Happening
from arena_tui.util.text import printable
from engine import events as ev

KEEP = 2_000


def quote_brief(quote: ev.Quote | None) -> str:
    """What a fill filled against, briefly: ``book L0 @ 00:00:04.950`` (the level it took
    and the book's exchange time) or ``print tid 123 @ 00:00:04.980``."""
    if quote is None:
        return ""
    at = f"{clock(quote.time)}.{quote.time % 1000:03d}"
    if isinstance(quote, ev.BookQuote):
        return f"book L{quote.level} @ {at}"
    return f"print tid {quote.tid} @ {at}"


def describe(h: Happening) -> tuple[str, str, str]:
    """(what, style, detail) of one event; a fill's ends with its quote and its note."""
    e = h.event
    if isinstance(e, Said):
        return "said", "cyan", printable(e.text.expandtabs(4))
    if isinstance(e, ev.Fill):
        side = "buy" if e.is_buy else "sell"
        how = "taker" if e.taker else "maker"
        fees = usd(e.venue_fee + e.exec_fee)
        text = f"{side} {sz(e.sz)} @ {fpx(e.px)} {how}, fees ${fees}"
        if e.quote is not None:
            text += f" · {quote_brief(e.quote)}"
        if h.note:
            text += f" · “{printable(h.note)}”"
        return "fill", "bold green", text
    if isinstance(e, ev.Rejected):
        ref = f" oid {e.oid}" if e.oid else ""
        return "rejected", "bold red", f"{e.request}{ref}: {e.reason}"
    if isinstance(e, ev.CancelPending):
        return "cancel", "yellow", f"oid {e.oid}: takes effect at {clock(e.effective_at)}"
    if isinstance(e, ev.Closed):
        style = "yellow" if e.reason == ev.Reason.Cancelled else "dim"
        return "closed", style, f"oid {e.oid}: {e.reason}, filled {sz(e.filled)}"
    if isinstance(e, ev.Paused):
        return (
            "PAUSED",
            "bold red",
            (f"drawdown limit: equity ${usd(e.equity)}, peak ${usd(e.peak)}; reduce-only now"),
        )
    if isinstance(e, ev.PerformanceFee):
        return "perf fee", "", f"${usd(e.fee)} on equity ${usd(e.equity)}"
    return type(e).__name__, "", ""


WHAT = {
    ev.Fill: "fill",
    ev.Rejected: "rejected",
    ev.CancelPending: "cancel",
    ev.Closed: "closed",
    ev.Paused: "PAUSED",
    ev.PerformanceFee: "perf fee",
    Said: "said",
}


def row(h: Happening) -> tuple[str, str, str, str, str]:
    """(time, entry, what, coin, detail) of one event, as plain text."""
    what, _, detail = describe(h)
    entry = printable(str(getattr(h.event, "entry", "")))
    return clock(h.event.t), entry, what, h.coin or "", detail


class ActivityLog(ScrollView, can_focus=True):
    """The newest ``KEEP`` events, one a line, drawn only where they are seen (line API);
    every one counted. It follows the newest line unless scrolled up."""

    HEADER = f"{'time':<8} {'entry':<13} {'what':<9} {'coin':<5} detail"
    WIDTH = 120  # at least; a fill with a long note widens it (scroll right to read it)
    MAX_WIDTH = 40 + 80 + 2 + 280 + 2  # a fill's row with its quote and the longest note

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.counts: Counter[str] = Counter()
        self.received = 0
        self.kept: deque[Happening] = deque(maxlen=KEEP)
        self.follow = True  # keep the newest line in view (until the viewer scrolls up)
        self.line_width = self.WIDTH

    def append(self, happenings: Sequence[Happening]) -> None:
        if self.size.height:  # shown: it follows if it was at the bottom
            self.follow = self.scroll_offset.y >= self.max_scroll_y
        for h in happenings:
            self.counts[WHAT.get(type(h.event), "other")] += 1
        self.received += len(happenings)
        self.kept.extend(happenings)
        if any(h.note for h in happenings):
            self.line_width = min(
                self.MAX_WIDTH, max(self.line_width, *(len(row(h)[4]) + 40 for h in happenings))
            )
        self.virtual_size = Size(self.line_width, len(self.kept))
        if self.follow:
            self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def on_resize(self) -> None:
        if self.follow:
            self.scroll_end(animate=False, immediate=True)

    @property
    def history(self) -> list[tuple[str, str, str, str, str]]:
        """The kept events as plain rows, oldest first (for tests)."""
        return [row(h) for h in self.kept]

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        if index >= len(self.kept):
            return Strip.blank(width, self.rich_style)
        h = self.kept[index]
        what, style, detail = describe(h)
        t, entry, _, coin, _ = row(h)
        line = Text(f"{t:<8} {entry[:13]:<13} ")
        line.append(f"{what:<9}", style=style)
        line.append(f" {coin:<5} {detail}")
        strip = Strip(list(line.render(self.app.console))).apply_style(self.rich_style)
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)

    @property
    def summary(self) -> str:
        c = self.counts
        return (
            f"fills {c['fill']}, rejected {c['rejected']}, "
            f"cancels {c['cancel']}, closed {c['closed']}"
        )
