"""The API's bodies as frozen msgspec Structs: requests, answers, score pages, books.

Why this module exists: what the server accepts and answers is written once, here. The
host encodes its answers from these types and decodes requests into them
(``arena_tui.host.schemas``: strictly), the OpenAPI document is generated from them
(``arena_tui.host.openapi``), and a reader (arena-tui's ``HostClient``) decodes the answers
with them: unknown fields are ignored there, so a newer host still reads. The seven order
fields keep the vault's names (``isBuy``, ``limitPx``, ...); everything else is snake_case
like the engine's events. The Structs are frozen: an answer, once built or read, keeps its
fields (its lists stay lists, so ``msgspec.to_builtins`` of one is the JSON it encodes to).

The class names and docstrings are the document's schema names and descriptions: renaming
one or writing a docstring changes ``/openapi.json``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from engine.events import BookQuote, PrintQuote

U8 = Annotated[int, Meta(ge=0, le=255)]
U32 = Annotated[int, Meta(ge=0, le=2**32 - 1)]
U64 = Annotated[int, Meta(ge=0)]  # the upper bound (2**64 - 1) is checked by the host
U64_MAX = 2**64 - 1
CLOID_PATTERN = "^0x[0-9a-fA-F]{1,32}$"
Cloid = Annotated[str, Meta(pattern=CLOID_PATTERN, description="0x and 1-32 hex digits")]
Ms = Annotated[int, Meta(description="ms since the Unix epoch, UTC")]


class OrderRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """The vault's seven-field limit order (prices and sizes at 1e8)."""

    asset: U32
    isBuy: bool
    limitPx: U64
    sz: U64
    reduceOnly: bool
    encodedTif: U8
    cloid: Cloid | None = None
    note: str | None = None  # at most MAX_NOTE_CHARS characters (checked after the decode)


class CancelRequest(Struct, frozen=True, forbid_unknown_fields=True):
    """Cancel one of your open orders: exactly one of ``oid`` and ``cloid`` (null: absent)."""

    oid: U64 | None = None
    cloid: Cloid | None = None


class Error(Struct, frozen=True, omit_defaults=True):
    error: str
    detail: str | None = None


class OrderAccepted(Struct, frozen=True):
    oid: int
    cloid: str | None
    t: Ms
    activates_at: Ms


class CancelAccepted(Struct, frozen=True):
    oid: int
    t: Ms
    effective_at: Ms


class OpenOrder(Struct, frozen=True):
    oid: int
    cloid: str | None
    asset: int
    coin: str
    isBuy: bool
    limitPx: int  # e8
    sz: int  # e8
    reduceOnly: bool
    encodedTif: int
    filled: int  # e8
    state: Literal["pending", "resting"]
    received: Ms
    reserve: int  # e6
    cancel_at: int | None
    expires_at: Ms
    note: str | None


class Orders(Struct, frozen=True):
    orders: list[OpenOrder]


class Fill(Struct, frozen=True):
    seq: int
    t: Ms
    entry: str
    oid: int
    cloid: str | None
    asset: int
    isBuy: bool
    px: int
    sz: int
    liquidity: Literal["taker", "maker"]
    venue_fee: int
    exec_fee: int
    quote: BookQuote | PrintQuote | None  # what it filled against (None: none recorded)
    note: str | None  # its order's note


class Fills(Struct, frozen=True):
    fills: list[Fill]
    more: bool


class Position(Struct, frozen=True):
    asset: int
    coin: str
    sz: int  # e8
    mark: int | None  # e8


class Account(Struct, frozen=True):
    entry: str
    t: Ms
    cash: int  # e6, and so the money fields below
    equity: int
    positions: list[Position]
    reserved: int
    exposure: int
    cap: int
    open_orders: int
    paused: bool
    peak: int
    mdd: int  # e8
    fee_hwm: int
    marks: int
    active_marks: int
    fill_days: int


class MarketOut(Struct, frozen=True):
    coin: str
    asset: int
    szDecimals: int


class Limits(Struct, frozen=True):
    rate_limit_requests: int
    rate_limit_window_ms: int
    body_max_bytes: int


class SeasonInfo(Struct, frozen=True):
    id: str
    start: Ms
    end: Ms
    markets: list[MarketOut]
    rules: dict[str, Any]
    rules_sha256: str
    paper: bool  # Season 0 is paper trading: no money is at stake
    t: Ms  # the server's clock
    state: Literal["before", "running", "over"]
    limits: Limits


class ScoreRow(Struct, frozen=True):
    day: int
    t: Ms
    entry: str
    rank: int
    equity: int  # e6
    ret: int = msgspec.field(name="return")  # e8
    mdd: int  # e8
    score: int  # e8
    eligible: bool
    fill_days: int
    active_share: int  # e8


class Scores(Struct, frozen=True):
    season: str
    paper: bool
    final: bool
    rows: list[ScoreRow]


class MarkOut(Struct, frozen=True):
    """One minute mark of an entry: equity (USDC 1e6), its peak, drawdown and MDD (1e8)."""

    t: Ms
    equity: int
    peak: int
    drawdown: int
    mdd: int
    active: bool


class EntryOut(Struct, frozen=True):
    entry: str
    fills: int  # fills so far
    marks: int  # minute marks so far
    mark: MarkOut | None  # the latest (None: none yet)
    row: ScoreRow | None  # the score row of its latest day (None: none yet)


class Entries(Struct, frozen=True):
    season: str
    paper: bool
    entries: list[EntryOut]


class Equity(Struct, frozen=True):
    entry: str
    marks: list[MarkOut]
    more: bool


class Level(Struct, frozen=True):
    px: str
    sz: str
    n: int


class BookOut(Struct, frozen=True):
    coin: str
    asset: int
    t: int | None  # receive time (None: no book yet)
    time: int | None  # the exchange's time
    levels: list[list[Level]]  # bids, asks (best first)
    mark: int | None  # e8
    stale: bool


ANSWERS = (  # every body of the document, in its order
    OrderRequest,
    CancelRequest,
    Error,
    OrderAccepted,
    CancelAccepted,
    Orders,
    Fills,
    Account,
    SeasonInfo,
    Scores,
    BookOut,
    Entries,
    Equity,
)
