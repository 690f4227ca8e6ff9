"""What the engine says: rejection reasons and the events it returns.

Why this module exists: rejections are values, not exceptions. Each event is a frozen
msgspec Struct in one tagged union (``kind``), so the shell can write them as JSON, show
them in the TUI or answer an HTTP request from them without knowing the engine's state.

May not touch: engine state, files, clocks, floats.
"""

from __future__ import annotations

import enum

from msgspec import Struct


class Reason(enum.StrEnum):
    """Rejection and close reasons, named as the contract (and the vault) name them."""

    SeasonNotActive = "SeasonNotActive"
    VaultNotActive = "VaultNotActive"
    MarketNotAllowed = "MarketNotAllowed"
    InvalidTif = "InvalidTif"
    InvalidPrice = "InvalidPrice"
    InvalidSize = "InvalidSize"
    OrderTooSmall = "OrderTooSmall"
    OrderAlreadyExists = "OrderAlreadyExists"
    TooManyOpenOrders = "TooManyOpenOrders"
    PositionCapExceeded = "PositionCapExceeded"
    OrderNotFound = "OrderNotFound"
    # Why an open order left the venue.
    Cancelled = "Cancelled"
    OrderExpired = "OrderExpired"
    IocRemainder = "IocRemainder"
    IocFilled = "IocFilled"
    PostOnlyWouldCross = "PostOnlyWouldCross"
    VaultPaused = "VaultPaused"


# Events and quotes are frozen and hold only numbers, strings and quotes: they can never be
# part of a reference cycle, so the garbage collector does not track them (``gc=False``). A
# season's views keep every fill; tracked, the collector's full passes scanned them all,
# stalls that grew with the season (a four-week, 50-entry state: 54 ms a pass).


class Event(Struct, frozen=True, gc=False, tag_field="kind"):
    t: int  # the time of the input or timed event that produced it


class Registered(Event, frozen=True, tag="registered"):
    entry: str


class Accepted(Event, frozen=True, tag="accepted"):
    entry: str
    oid: int
    cloid: int
    asset: int
    is_buy: bool
    limit_px: int
    sz: int
    reduce_only: bool
    tif: int
    reserve: int
    activates_at: int  # earliest: the first fresh book at or after this instant


class Rejected(Event, frozen=True, tag="rejected"):
    entry: str
    reason: Reason
    request: str  # "order" or "cancel"
    cloid: int = 0
    oid: int = 0  # for a cancel naming an oid


class Activated(Event, frozen=True, tag="activated"):
    entry: str
    oid: int
    book_time: int  # exchange time of the book it activated on


class CancelPending(Event, frozen=True, tag="cancel_pending"):
    entry: str
    oid: int
    effective_at: int


class BookQuote(Struct, frozen=True, gc=False, tag_field="source", tag="book"):
    """What a taker fill took from: one level of the book its order activated on."""

    time: int  # the book's exchange time
    level: int  # 0 = the best level of the side it took from
    px: int  # the level's price (1e8), which is the fill's price
    sz: int  # the level's displayed size (1e8), of which the fill took at most 25%
    n: int  # the level's order count, as the book said


class PrintQuote(Struct, frozen=True, gc=False, tag_field="source", tag="print"):
    """What a maker fill filled against: one applied public trade."""

    tid: int
    time: int  # the trade's exchange time
    px: int  # the print's price (1e8); the fill is at the order's limit
    sz: int  # the print's size (1e8), of which the fill took at most 10%


Quote = BookQuote | PrintQuote


class Fill(Event, frozen=True, tag="fill"):
    entry: str
    oid: int
    cloid: int
    asset: int
    is_buy: bool
    px: int
    sz: int
    taker: bool
    venue_fee: int
    exec_fee: int
    # What it filled against. Not part of the contract's fills file (its fields and hash
    # are unchanged); the shell shows it beside the fill. None only in hand-made events.
    quote: Quote | None = None


class Closed(Event, frozen=True, tag="closed"):
    entry: str
    oid: int
    reason: Reason
    filled: int  # size filled over the order's life


class FundingPaid(Event, frozen=True, tag="funding"):
    entry: str
    asset: int
    payment: int  # subtracted from cash; negative = received


class PerformanceFee(Event, frozen=True, tag="performance_fee"):
    entry: str
    equity: int
    fee: int
    fee_hwm: int


class Paused(Event, frozen=True, tag="paused"):
    entry: str
    equity: int
    peak: int


class MinuteMark(Event, frozen=True, tag="mark"):
    entry: str
    equity: int
    peak: int
    drawdown: int  # e8 ratio
    mdd: int
    active: bool


class ScoreRow(Event, frozen=True, tag="score"):
    """The entry's row for UTC day ``day`` as of the mark at ``t``."""

    entry: str
    day: int
    equity: int
    ret: int
    mdd: int
    score: int
    rank: int  # provisional: all entries, eligibility ignored
    eligible: bool
    fill_days: int
    active_marks: int
    marks: int
    active_share: int  # e8


class SeasonOver(Event, frozen=True, tag="season_over"):
    pass


AnyEvent = (
    Registered
    | Accepted
    | Rejected
    | Activated
    | CancelPending
    | Fill
    | Closed
    | FundingPaid
    | PerformanceFee
    | Paused
    | MinuteMark
    | ScoreRow
    | SeasonOver
)
