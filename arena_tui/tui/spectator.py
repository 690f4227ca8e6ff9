"""The spectator's data source: a running ``arena host``, polled in a worker thread.

Why this module exists: like a run's source, it must keep the network off the UI thread
and hand the screen only immutable snapshots (:class:`Spectated`, posted as
:class:`~arena_tui.tui.messages.SpectatorPosted`, the newest superseding one still queued).
It reads the host's public endpoints: the season and the latest day's score rows every
``SCORES_S``, and the selected coin's book every ``BOOK_S``. With an entry's key it also
reads that entry's account and open orders; keyed reads count against the entry's rate
limit, which it shares with its own agent, so they are spaced to take about a third of
it (``keyed_intervals``) and a 429 is waited out (``Retry-After``), never retried at once.
A 429 from the host's budget for public reads is waited out likewise, and the round it
stopped resumes with the read it lacks: the reads already made are kept, not made again.

Between rounds the worker waits on an Event, woken early by a refresh, a coin switch or
the screen going away: no busy loop. A host that does not answer is never an exception on
screen: the link is ``unreachable`` (never reached yet) or ``retrying`` (lost after being
connected), with the reason and the next try, and is retried with capped backoff.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from textual.message import Message

from arena_tui.record.feed import Backoff
from arena_tui.tui.hostapi import (
    AccountDoc,
    BookDoc,
    HostClient,
    HostDown,
    OpenOrder,
    Refused,
    ScoreRow,
    SeasonDoc,
    latest_day,
)
from arena_tui.tui.messages import SpectatorPosted
from arena_tui.tui.spectated import Link, LinkState, Spectated
from engine.units import DAY_MS

SCORES_S = 2.0  # the season and the score rows (public)
BOOK_S = 1.0  # the selected coin's book, when the host serves it without a key
KEYED_BOOK_S = 2.0  # the book with a key, at the default limit (20 requests per 10 s)
ENTRY_S = 10.0  # the entry's account and open orders (two requests), likewise
BOOK_NEEDS_KEY = (
    "this host serves its books to entries only: spectate with --key (an entry's key, "
    "or ARENA_KEY) to see the market"
)
Post = Callable[[Message], object]


@dataclass(frozen=True)
class SpectateSpec:
    """Which host to watch, and optionally as which entry."""

    url: str
    key: str | None = None


def keyed_intervals(season: SeasonDoc | None) -> tuple[float, float]:
    """(book, account and orders) intervals with a key: about a third of the entry's limit."""
    scale = 1.0
    if season is not None and season.limits.rate_limit_requests > 0:
        lim = season.limits
        scale = max(1.0, lim.rate_limit_window_ms / lim.rate_limit_requests / 500)
    return KEYED_BOOK_S * scale, ENTRY_S * scale


class SpectatorSource:
    """One host to watch; ``run`` is the worker's body (see the module docstring)."""

    def __init__(
        self,
        spec: SpectateSpec,
        *,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = time.monotonic,
        client: Callable[[SpectateSpec], HostClient] | None = None,
    ) -> None:
        self.spec = spec
        self.backoff = backoff or Backoff(500, 10_000)
        self.clock = clock
        self.make_client = client or (lambda s: HostClient(s.url, s.key))
        self.coin: str | None = None  # the coin whose book to read (None: the first market)
        self._wake = threading.Event()
        self._refresh = threading.Event()
        self._stop = threading.Event()
        self.done = threading.Event()

    @classmethod
    def of_spec(cls, spec: SpectateSpec) -> SpectatorSource:
        return cls(spec)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def select(self, coin: str) -> None:
        """Read ``coin``'s book from now on (at once)."""
        if coin != self.coin:
            self.coin = coin
            self._wake.set()

    def refresh(self) -> None:
        """Read everything again now, retrying a host that was down at once."""
        self._refresh.set()
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def run(self, post: Post) -> None:
        client = self.make_client(self.spec)
        try:
            _Poll(self, client, post).loop()
        finally:
            client.close()
            self.done.set()


class _Poll:
    """The worker's state between rounds (worker thread only)."""

    def __init__(self, src: SpectatorSource, client: HostClient, post: Post) -> None:
        self.src = src
        self.client = client
        self.post = post
        self.keyed = bool(src.spec.key)
        self.due_scores = self.due_book = self.due_entry = 0.0
        self.retry_at = 0.0  # the host was down: nothing before then
        self.keyed_at = 0.0  # a 429: no keyed read before then
        self.book_locked = False  # a 401 on the book: not again until a refresh
        self.entry_locked = False
        self.ever_connected = False
        self.link = Link("connecting")
        self.seq = 0
        self.season: SeasonDoc | None = None
        self.final = False
        self.paper: bool | None = None
        self.rows: tuple[ScoreRow, ...] = ()
        self.scores_read = 0
        # how far the public reads' round got before a 429 stopped it (it resumes there)
        self.season_read = False  # the season is read (and kept)
        self.today_empty = False  # and today's rows, none yet: the latest day's are next
        self.book: BookDoc | None = None
        self.book_note: str | None = None
        self.account: AccountDoc | None = None
        self.orders: tuple[OpenOrder, ...] = ()
        self.entry_note: str | None = None

    def loop(self) -> None:
        src = self.src
        read_coin: str | None = None
        while not src.stopped:
            src._wake.clear()
            now = src.clock()
            if src._refresh.is_set():
                src._refresh.clear()
                self.due_scores = self.due_book = self.due_entry = now
                self.retry_at = self.keyed_at = 0.0
                self.book_locked = self.entry_locked = False
                self.season_read = self.today_empty = False  # everything again
                src.backoff.reset()
            coin = self.coin()
            if coin != read_coin:
                self.due_book = now  # a new coin: its book at once (the key's wait holds)
            if now >= self.retry_at:
                read = self.round(now, coin)
                read_coin = read if self.link.state == "connected" else read_coin
                self.show()
            wait = self.next_due() - src.clock()
            if wait > 0:
                src._wake.wait(wait)

    def coin(self) -> str | None:
        if self.src.coin is not None:
            return self.src.coin
        markets = self.season.markets if self.season is not None else ()
        return markets[0].coin if markets else None

    def next_due(self) -> float:
        if self.retry_at > self.src.clock():
            return self.retry_at
        times = [self.due_scores]
        if self.coin() is not None and not self.book_locked:
            times.append(max(self.due_book, self.keyed_at if self.keyed else 0.0))
        if self.keyed and not self.entry_locked:
            times.append(max(self.due_entry, self.keyed_at))
        return min(times)

    def round(self, now: float, coin: str | None) -> str | None:
        """One round of the reads that are due; the coin it was for."""
        throttled = None
        try:
            if now >= self.due_scores:
                throttled = self.read_public(now)
                coin = coin or self.coin()
            keyed_ok = now >= self.keyed_at  # no 429 to wait out
            book_due = now >= self.due_book and not self.book_locked
            if coin is not None and book_due and (keyed_ok or not self.keyed):
                self.read_book(coin, now)
            if self.keyed and not self.entry_locked and now >= self.due_entry and keyed_ok:
                self.read_entry(now)
        except HostDown as exc:
            self.season_read = self.today_empty = False  # a host found again: read afresh
            delay = self.src.backoff.next_ms() / 1000
            self.retry_at = now + delay
            state: LinkState = "retrying" if self.ever_connected else "unreachable"
            self.link = Link(state, str(exc), delay, self.src.backoff.attempt)
            return coin
        self.ever_connected = True
        self.src.backoff.reset()
        self.link = Link("connected", throttled)
        return coin

    def read_public(self, now: float) -> str | None:
        """The season, then the latest day's rows (today's, or if there are none yet, the
        latest day's that has any); None, or what to say of a 429 part way.

        Each read is kept as it comes, and a round a 429 stopped resumes after the wait
        with the read it lacks. Starting over would spend the host's budget for public
        reads on the reads already made: under a budget of a read or two per window (an
        organiser's ``--public-total``), the season read would take each window's share
        and the rows would never be read.
        """
        try:
            season = self.season
            if season is None or not self.season_read:
                season = self.season = self.client.season()
                self.season_read = True
            doc = None
            if not self.today_empty:
                doc = self.client.scores(season.t // DAY_MS)
                self.today_empty = not doc.rows
            if doc is None or not doc.rows:
                doc = self.client.scores()
        except Refused as exc:
            if exc.status != 429:
                raise HostDown(f"the host answered {exc.status} {exc.code}") from None
            # the host's budget for public reads: waited out (from when it was said)
            wait = exc.retry_after_s if exc.retry_after_s is not None else 1.0
            self.due_scores = self.src.clock() + wait
            return f"public reads rate limited (429): again in {wait:g}s"
        self.season_read = self.today_empty = False  # the round is done
        self.final, self.rows, self.paper = doc.final, latest_day(doc.rows), doc.paper
        self.scores_read += 1
        self.due_scores = now + SCORES_S
        return None

    def read_book(self, coin: str, now: float) -> None:
        self.due_book = now + (keyed_intervals(self.season)[0] if self.keyed else BOOK_S)
        try:
            self.book, self.book_note = self.client.book(coin), None
        except Refused as exc:
            self.book = None
            self.book_note = self.refused(exc, now, f"{coin}: ")
            if exc.status == 401:
                self.book_locked = True
                self.book_note = BOOK_NEEDS_KEY if not self.keyed else self.book_note

    def read_entry(self, now: float) -> None:
        self.due_entry = now + keyed_intervals(self.season)[1]
        try:
            account = self.client.account()
            self.orders = tuple(self.client.orders().orders)
            self.account, self.entry_note = account, None
        except Refused as exc:
            self.entry_note = self.refused(exc, now, "")
            if exc.status == 401:
                self.entry_locked = True
                self.account, self.orders = None, ()

    def refused(self, exc: Refused, now: float, what: str) -> str:
        if exc.status == 429:
            wait = exc.retry_after_s if exc.retry_after_s is not None else 1.0
            self.keyed_at = now + wait
            return (
                f"{what}rate limited (429): the entry's limit is shared with its agent; "
                f"reading again in {wait:g}s"
            )
        if exc.status == 401:
            return f"{what}the host refused the key (401): check --key (arena register prints it)"
        if exc.code == "UnknownCoin":
            return f"{what}not a market of this season"
        return f"{what}the host answered {exc.status} {exc.code}"

    def show(self) -> None:
        self.seq += 1
        snap = Spectated(
            seq=self.seq,
            url=self.src.spec.url,
            keyed=self.keyed,
            link=self.link,
            season=self.season,
            final=self.final,
            rows=self.rows,
            scores_read=self.scores_read,
            book=self.book,
            book_note=self.book_note,
            account=self.account,
            orders=self.orders,
            entry_note=self.entry_note,
            paper=self.paper,
        )
        self.post(SpectatorPosted(snap))
