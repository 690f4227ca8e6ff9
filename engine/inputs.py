"""The engine's inputs: one typed line of the version-1 log.

Why this module exists: the log is the season, so the engine's inputs are exactly the log's
lines, decoded by one msgspec schema. A line is decoded in one pass; a book's ``levels``
stay :class:`msgspec.Raw` (undecoded bytes) until an order needs them, so a book nobody
trades against is never parsed. Schema changes: new fields get defaults; never reorder.

Decimal strings stay strings here; ``engine.units`` parses them exactly when used.

May not touch: files, clocks, floats.
"""

from __future__ import annotations

import msgspec
from msgspec import Raw, Struct

from engine.season import Market


class MalformedInput(ValueError):
    """A line that decoded but carries a malformed known field (a bad decimal, a bad cloid).

    The shell turns it into one error naming the file and line.
    """


# ---- Hyperliquid market data (the ``hl`` field, verbatim WebSocket messages) -------------


class Level(Struct, frozen=True, gc=False):
    px: str
    sz: str
    n: int


class BookData(Struct, frozen=True, gc=False):
    coin: str
    time: int
    levels: Raw


class Trade(Struct, frozen=True, gc=False):
    coin: str
    px: str
    sz: str
    time: int
    tid: int
    side: str = ""  # the aggressor, "B" or "A": for strategies; the engine does not use it


class Ctx(Struct, frozen=True, gc=False):
    funding: str | None = None
    markPx: str | None = None
    oraclePx: str | None = None


class CtxData(Struct, frozen=True, gc=False):
    coin: str
    ctx: Ctx


class Book(Struct, frozen=True, gc=False, tag_field="channel", tag="l2Book"):
    data: BookData


class Trades(Struct, frozen=True, gc=False, tag_field="channel", tag="trades"):
    data: list[Trade]


class AssetCtx(Struct, frozen=True, gc=False, tag_field="channel", tag="activeAssetCtx"):
    data: CtxData


MarketData = Book | Trades | AssetCtx
KNOWN_CHANNELS = ("l2Book", "trades", "activeAssetCtx")

# ---- arena's own inputs (the ``arena`` field) --------------------------------------------


class Register(Struct, frozen=True, gc=False, tag_field="type", tag="register"):
    entry: str
    key_sha256: str | None = None


class Order(Struct, frozen=True, gc=False, tag_field="type", tag="order"):
    """The vault's seven-field limit order, for one entry. ``cloid``: ``0x`` + 1-32 hex."""

    entry: str
    asset: int
    isBuy: bool
    limitPx: int
    sz: int
    reduceOnly: bool
    encodedTif: int
    cloid: str | None = None


class Cancel(Struct, frozen=True, gc=False, tag_field="type", tag="cancel"):
    entry: str
    oid: int | None = None
    cloid: str | None = None


class Tick(Struct, frozen=True, gc=False, tag_field="type", tag="tick"):
    pass


class Gap(Struct, frozen=True, gc=False, tag_field="type", tag="gap"):
    """The recorder lost the feed from ``from_`` to ``to`` (informational)."""

    from_: int = msgspec.field(name="from")
    to: int
    reason: str = ""


ArenaInput = Register | Order | Cancel | Tick | Gap
KNOWN_ARENA_TYPES = ("register", "order", "cancel", "tick", "gap")


class Line(Struct, frozen=True, gc=False):
    """One log line after the header. ``hl`` and ``arena`` both None: an ignored input."""

    t: int
    hl: MarketData | None = None
    arena: ArenaInput | None = None


class Header(Struct, frozen=True):
    """Line 1 of every log file."""

    arena_log: int
    season: str | None = None
    rules_sha256: str | None = None
    recording: str | None = None
    markets: list[Market] | None = None
    start: int | None = None  # a run log's season window, checked against the season file
    end: int | None = None


def tick(t: int) -> Line:
    return Line(t=t, arena=Tick())
