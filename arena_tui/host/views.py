"""What the API reads besides the engine: keys, fills, notes, marks, books, score rows
and subscribers.

Why this module exists: the engine keeps only what the rules need; an API also answers
"my fills since t", "the latest book of BTC", "who holds this key", "this entry's equity
minute by minute", "the note of the order this fill came from". Each of these is a
projection of the log, built by the same ``apply`` during the start-up replay and live,
so a restarted server answers exactly as the one before it. A note is read from the
logged order line (the engine never sees it) and kept by (entry, oid), the oid being the
one the engine's ``Accepted`` for that line gave. Minute marks are kept in columns of
machine integers (:class:`Marks`): a 4-week season of 50 entries makes 2 million of them.
Stream subscribers (the WebSocket) get their messages from here too: their own events
(a fill with its order's note), and market data as logged.
"""

from __future__ import annotations

import asyncio
import bisect
from array import array
from typing import Any

import msgspec

from arena_tui.host.auth import Keys
from arena_tui.run.quotes import OrderNotes
from engine import Engine, Line, format_cloid
from engine import events as ev
from engine.inputs import Book, BookData, Order, Tick

QUEUE_MAX = 10_000  # messages a slow stream client may fall behind by before it is dropped
_ENCODE = msgspec.json.Encoder().encode


def event_doc(e: ev.AnyEvent, note: str | None = None) -> dict[str, Any]:
    """An engine event as the API shows it (``kind`` first; cloids as hex strings; a fill
    with its quote and its order's ``note``)."""
    doc: dict[str, Any] = msgspec.to_builtins(e)
    if "cloid" in doc:
        doc["cloid"] = format_cloid(doc["cloid"])
    if type(e) is ev.Fill:
        doc["note"] = note
    return doc


class Marks:
    """One entry's minute marks (``ev.MinuteMark``), oldest first, as integer columns."""

    __slots__ = ("active", "drawdown", "equity", "mdd", "peak", "t")

    def __init__(self) -> None:
        self.t = array("q")
        self.equity = array("q")
        self.peak = array("q")
        self.drawdown = array("q")
        self.mdd = array("q")
        self.active = bytearray()

    def __len__(self) -> int:
        return len(self.t)

    def add(self, e: ev.MinuteMark) -> None:
        self.t.append(e.t)
        self.equity.append(e.equity)
        self.peak.append(e.peak)
        self.drawdown.append(e.drawdown)
        self.mdd.append(e.mdd)
        self.active.append(1 if e.active else 0)

    def first_at(self, since: int) -> int:
        """The index of the first mark with ``t >= since``."""
        return bisect.bisect_left(self.t, since)


class Subscriber:
    """One stream client's queue; on overflow it is emptied and closed with a None."""

    def __init__(self, entry: str, market: bool) -> None:
        self.entry = entry
        self.market = market
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(QUEUE_MAX)
        self.dropped = False

    def offer(self, message: bytes) -> None:
        if self.dropped:
            return
        try:
            self.queue.put_nowait(message)
        except asyncio.QueueFull:
            self.dropped = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)


class Views:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.keys = Keys()
        self.fills: dict[str, list[ev.Fill]] = {}
        self.fill_times: dict[str, list[int]] = {}
        self.notes = OrderNotes()  # (entry, oid) -> its order's note
        self.marks: dict[str, Marks] = {}
        self.latest: dict[str, ev.ScoreRow] = {}  # each entry's row of its latest day
        self.books: dict[str, tuple[int, BookData]] = {}
        self.rows: dict[tuple[str, int], ev.ScoreRow] = {}
        self.changed: dict[tuple[str, int], ev.ScoreRow] = {}
        self.subscribers: dict[str, list[Subscriber]] = {}
        self.market_subscribers: list[Subscriber] = []
        self.version = 0  # moves with every mark, score row, fill and registration

    def apply(self, line: Line, raw: bytes, events: list[ev.AnyEvent], live: bool) -> None:
        """Take one applied input (its line, its logged bytes) and the events it caused."""
        hl = line.hl
        if type(hl) is Book and self.engine.coin_state(hl.data.coin) is not None:
            self.books[hl.data.coin] = (line.t, hl.data)
        if live and (hl is not None or type(line.arena) is Tick):
            for sub in self.market_subscribers:
                sub.offer(raw)
        if type(line.arena) is Order:
            self.notes.logged(raw, events)
        for e in events:
            match e:
                case ev.MinuteMark():
                    marks = self.marks.get(e.entry)
                    if marks is None:
                        marks = self.marks[e.entry] = Marks()
                    marks.add(e)
                    self.version += 1
                case ev.ScoreRow():
                    self.rows[(e.entry, e.day)] = self.changed[(e.entry, e.day)] = e
                    seen = self.latest.get(e.entry)
                    if seen is None or seen.day <= e.day:
                        self.latest[e.entry] = e
                    self.version += 1
                case ev.Fill():
                    self.fills.setdefault(e.entry, []).append(e)
                    self.fill_times.setdefault(e.entry, []).append(e.t)
                    self.version += 1
                case ev.Registered():
                    acct = self.engine.account(e.entry)
                    assert acct is not None  # it has just registered
                    self.keys.add(e.entry, acct.key_sha256)
                    self.version += 1
            if live:
                entry = getattr(e, "entry", None)
                subs = self.subscribers.get(entry) if entry is not None else None
                if subs:
                    note = self.note_of(e) if type(e) is ev.Fill else None
                    message = _ENCODE({"event": event_doc(e, note)})
                    for sub in subs:
                        sub.offer(message)

    def note_of(self, e: ev.Fill) -> str | None:
        return self.notes.of(e)

    def take_changed(self) -> list[ev.ScoreRow]:
        rows = list(self.changed.values())
        self.changed.clear()
        return rows

    def subscribe(self, sub: Subscriber) -> None:
        self.subscribers.setdefault(sub.entry, []).append(sub)
        if sub.market:
            self.market_subscribers.append(sub)

    def unsubscribe(self, sub: Subscriber) -> None:
        subs = self.subscribers.get(sub.entry, [])
        if sub in subs:
            subs.remove(sub)
        if sub in self.market_subscribers:
            self.market_subscribers.remove(sub)
