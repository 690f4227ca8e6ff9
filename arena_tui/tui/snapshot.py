"""Immutable pictures of a run: what the worker posts and the run screen shows.

Why this module exists: the engine is not thread-safe and the UI must never read it. The
worker, while the engine is between two inputs, copies what the run screen shows into
these frozen dataclasses (``arena_tui.tui.capture`` builds them), integers as the engine
keeps them (money e6, prices, sizes and ratios e8, times ms), and posts them; the UI only
formats them.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena_tui.run.hooks import Said
from arena_tui.run.stats import MarkRow
from engine import events as ev


@dataclass(frozen=True)
class Score:
    """The score panel of one entry: the score as of its last minute mark, and now."""

    entry: str
    rank: int | None
    equity: int  # e6, at the last mark (the score's equity)
    ret: int  # e8
    mdd: int  # e8
    score: int  # e8
    eligible: bool
    equity_now: int  # e6, at the marks now
    exit_equity: int | None  # e6, at the last mark, closing into the book
    drawdown: int  # e8, from the peak to now
    drawdown_limit_pct: int
    exposure: int  # e6: |positions| at mark plus reserves
    cap_used: int  # e8 of equity now
    cap_pct: int
    open_orders: int
    max_open_orders: int
    fill_days: int
    min_fill_days: int
    active_marks: int
    marks: int
    min_active_pct: int
    paused: bool  # past the drawdown limit: reduce-only from now on


@dataclass(frozen=True)
class Position:
    coin: str
    size: int  # e8, long > 0
    mark: int  # e8
    value: int  # e6, signed
    funding_paid: int  # e6 over the run (negative: received)


@dataclass(frozen=True)
class Order:
    oid: int
    coin: str
    is_buy: bool
    px: int  # e8
    sz: int  # e8
    filled: int  # e8
    reserve: int  # e6
    age: int  # ms
    expires_in: int  # ms
    state: str  # "pending", "resting" or "cancelling"
    reduce_only: bool

    @property
    def holding(self) -> bool:
        """Fully filled yet still open: it holds its slot and its reserve until it leaves."""
        return self.filled >= self.sz


@dataclass(frozen=True)
class Use:
    """An entry's use of its limits at one minute mark: cap used (e8 of equity, as the
    score panel's) and open orders."""

    t: int
    cap_used: int
    open_orders: int


@dataclass(frozen=True)
class FillMark:
    """One of an entry's recent fills, where the market tab's chart marks it."""

    t: int
    coin: str
    is_buy: bool
    px: int  # e8
    taker: bool


@dataclass(frozen=True)
class Entry:
    score: Score
    positions: tuple[Position, ...]
    orders: tuple[Order, ...]
    marks: tuple[MarkRow, ...]
    uses: tuple[Use, ...] = ()  # one per minute mark (the last day of them)
    fills: tuple[FillMark, ...] = ()  # the most recent, oldest first


@dataclass(frozen=True)
class Coin:
    coin: str
    bids: tuple[tuple[int, int], ...]  # (px e8, sz e8), best first
    asks: tuple[tuple[int, int], ...]
    book_t: int | None
    prints: tuple[tuple[int, bool, int, int], ...]  # (t, buyer aggressor, px, sz), newest first
    mark: int | None
    oracle: int | None
    funding: tuple[int, int] | None  # hourly rate, exactly num / den
    mids: tuple[tuple[int, int], ...] = ()  # (minute mark t, book mid e8), the last day


@dataclass(frozen=True)
class Leader:
    rank: int | None
    entry: str
    score: int
    ret: int
    mdd: int
    equity: int
    fill_days: int
    eligible: bool


@dataclass(frozen=True)
class Happening:
    """One of an entry's fills, rejections, cancels, closes or pauses, as the engine said it,
    or a line its strategy printed (:class:`~arena_tui.run.hooks.Said`)."""

    event: ev.AnyEvent | Said
    coin: str | None  # the order's coin, where the event names an order
    note: str | None = None  # a fill's: the note its order was logged with


@dataclass(frozen=True)
class Snapshot:
    seq: int
    t: int | None  # the simulated clock: the time of the last input applied
    inputs: int  # log inputs applied
    season: str
    start: int
    end: int
    starting_equity: int  # e6
    over: bool  # the season's end has been run: the numbers are final
    waiting: bool  # the worker is paused here
    entries: tuple[Entry, ...]
    coins: tuple[Coin, ...]
    leaders: tuple[Leader, ...]
