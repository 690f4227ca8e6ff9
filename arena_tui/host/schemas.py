"""The API's bodies as msgspec Structs: requests decoded strictly, answers encoded from them.

Why this module exists: what the server accepts and answers is written once, here, and the
OpenAPI document is generated from these same types (``arena_tui.host.openapi``), so the
document cannot drift from the code. Requests are strict: an unknown field, a wrong type,
a fraction or a bool or a string where an integer belongs, or a value out of its type's
range fails the decode (400) before anything reaches the log. An integer is a number with
no fractional part however it is written (``111``, ``111.0``, ``1.11e2``): that is how
JSON Schema reads the document's ``"type": "integer"``, and no keyword could say
otherwise, so the server reads it so too, exactly (never through a float). Whatever a
body is, its decode fails only as :class:`BadBody`, one line (400): JSON nested deeper than
the decoder can follow (``RecursionError``) or anything else a decoder raises included,
never a 5xx. The seven
order fields keep the vault's names (``isBuy``, ``limitPx``, ...); everything else is
snake_case like the engine's events.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import Meta, Struct

from engine.events import BookQuote, PrintQuote

U8 = Annotated[int, Meta(ge=0, le=255)]
U32 = Annotated[int, Meta(ge=0, le=2**32 - 1)]
U64 = Annotated[int, Meta(ge=0)]  # the upper bound (2**64 - 1) is checked in check_u64
U64_MAX = 2**64 - 1
CLOID_PATTERN = "^0x[0-9a-fA-F]{1,32}$"
Cloid = Annotated[str, Meta(pattern=CLOID_PATTERN, description="0x and 1-32 hex digits")]
Ms = Annotated[int, Meta(description="ms since the Unix epoch, UTC")]


class OrderRequest(Struct, forbid_unknown_fields=True):
    """The vault's seven-field limit order (prices and sizes at 1e8)."""

    asset: U32
    isBuy: bool
    limitPx: U64
    sz: U64
    reduceOnly: bool
    encodedTif: U8
    cloid: Cloid | None = None
    note: str | None = None  # at most MAX_NOTE_CHARS characters (checked after the decode)


class CancelRequest(Struct, forbid_unknown_fields=True):
    """Cancel one of your open orders: exactly one of ``oid`` and ``cloid`` (null: absent)."""

    oid: U64 | None = None
    cloid: Cloid | None = None


class Error(Struct, omit_defaults=True):
    error: str
    detail: str | None = None


class OrderAccepted(Struct):
    oid: int
    cloid: str | None
    t: Ms
    activates_at: Ms


class CancelAccepted(Struct):
    oid: int
    t: Ms
    effective_at: Ms


class OpenOrder(Struct):
    oid: int
    cloid: str | None
    asset: int
    coin: str
    isBuy: bool
    limitPx: int
    sz: int
    reduceOnly: bool
    encodedTif: int
    filled: int
    state: Literal["pending", "resting"]
    received: Ms
    reserve: int
    cancel_at: int | None
    expires_at: Ms
    note: str | None


class Orders(Struct):
    orders: list[OpenOrder]


class Fill(Struct):
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


class Fills(Struct):
    fills: list[Fill]
    more: bool


class Position(Struct):
    asset: int
    coin: str
    sz: int
    mark: int | None


class Account(Struct):
    entry: str
    t: Ms
    cash: int
    equity: int
    positions: list[Position]
    reserved: int
    exposure: int
    cap: int
    open_orders: int
    paused: bool
    peak: int
    mdd: int
    fee_hwm: int
    marks: int
    active_marks: int
    fill_days: int


class MarketOut(Struct):
    coin: str
    asset: int
    szDecimals: int


class Limits(Struct):
    rate_limit_requests: int
    rate_limit_window_ms: int
    body_max_bytes: int


class SeasonInfo(Struct):
    id: str
    start: Ms
    end: Ms
    markets: list[MarketOut]
    rules: dict[str, Any]
    rules_sha256: str
    paper: bool  # Season 0 is paper trading: no money is at stake
    t: Ms
    state: Literal["before", "running", "over"]
    limits: Limits


class ScoreRow(Struct):
    day: int
    t: Ms
    entry: str
    rank: int
    equity: int
    ret: int = msgspec.field(name="return")
    mdd: int
    score: int
    eligible: bool
    fill_days: int
    active_share: int


class Scores(Struct):
    season: str
    paper: bool
    final: bool
    rows: list[ScoreRow]


class MarkOut(Struct):
    """One minute mark of an entry: equity (USDC 1e6), its peak, drawdown and MDD (1e8)."""

    t: Ms
    equity: int
    peak: int
    drawdown: int
    mdd: int
    active: bool


class EntryOut(Struct):
    entry: str
    fills: int  # fills so far
    marks: int  # minute marks so far
    mark: MarkOut | None  # the latest (None: none yet)
    row: ScoreRow | None  # the score row of its latest day (None: none yet)


class Entries(Struct):
    season: str
    paper: bool
    entries: list[EntryOut]


class Equity(Struct):
    entry: str
    marks: list[MarkOut]
    more: bool


class Level(Struct):
    px: str
    sz: str
    n: int


class BookOut(Struct):
    coin: str
    asset: int
    t: int | None
    time: int | None
    levels: list[list[Level]]
    mark: int | None
    stale: bool


ANSWERS = (
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

ENCODE = msgspec.json.Encoder().encode
_NUMBERS = msgspec.json.Decoder(float_hook=Decimal)  # a non-integer literal: exactly, as text
_Request = TypeVar("_Request", OrderRequest, CancelRequest)


def decode(body: bytes, kind: type[_Request]) -> _Request:
    """A request body as ``kind`` (BadBody, one line, if not), integers read as above."""
    try:
        doc = _NUMBERS.decode(body)
        if isinstance(doc, dict):
            doc = {name: _whole(value) for name, value in doc.items()}
        return msgspec.convert(doc, kind, strict=True)
    except Exception as exc:
        raise BadBody(decode_failure(exc)) from None


def decode_failure(exc: BaseException) -> str:
    """Why a body did not decode, in one line: the decoder's own words when it has them."""
    if isinstance(exc, RecursionError):
        return "the JSON is nested too deeply (a request body is an object of plain values)"
    if isinstance(exc, msgspec.DecodeError):  # (a ValidationError too)
        text = str(exc)
    else:
        text = f"not a valid body ({type(exc).__name__})"
    return " ".join(text.split()) or "not a valid body"


def _whole(value: Any) -> Any:
    """A number written with a fraction or an exponent: the int it equals, if whole."""
    if not isinstance(value, Decimal):
        return value
    if value.is_zero():
        return 0
    if value.adjusted() > 20:  # 10**21 or more: out of every range (and 1e999999999 must not
        return U64_MAX + 1 if value > 0 else -1  # become an int of a billion digits)
    whole = value.to_integral_value()
    return int(whole) if whole == value else float(value)  # (a float: "got `float`", 400)


class BadBody(ValueError):
    """A request body the API refuses (400), with why."""


def check_u64(name: str, value: int | None) -> None:
    if value is not None and value > U64_MAX:
        raise BadBody(f"Expected `int` <= {U64_MAX} - at `$.{name}`")


def check_cancel(c: CancelRequest) -> None:
    """Exactly one of ``oid`` and ``cloid`` names the order (the document's ``oneOf``)."""
    check_u64("oid", c.oid)
    if c.oid is None and c.cloid is None:
        raise BadBody("name the order to cancel: oid or cloid")
    if c.oid is not None and c.cloid is not None:
        raise BadBody("name the order to cancel by oid or by cloid, not both")
