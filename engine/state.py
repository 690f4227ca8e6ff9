"""The engine's mutable state: markets, accounts and open orders.

Why this module exists: one place says what the engine remembers between inputs, and how
the derived quantities (mark, equity, exposure) are computed from it. Rules that change the
state live in ``orders``, ``fills``, ``funding`` and ``scoring``; this module only answers
questions about it.

May not touch: files, clocks, floats, set iteration (dicts keep insertion order).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.units import E10, lot_e8, tdiv

if TYPE_CHECKING:
    from engine.book import BookLevels

PENDING = 0  # accepted, waiting for the first fresh book at or after activation time
RESTING = 1  # activated and on the venue (possibly fully filled)


class OpenOrder:
    """An order from acceptance until it leaves the venue."""

    __slots__ = (
        "act_book_time",
        "asset",
        "cancel_at",
        "cloid",
        "entry",
        "filled",
        "is_buy",
        "limit_px",
        "oid",
        "received",
        "reduce_only",
        "reserve",
        "state",
        "sz",
        "tif",
    )

    def __init__(
        self,
        oid: int,
        entry: Account,
        asset: int,
        is_buy: bool,
        limit_px: int,
        sz: int,
        reduce_only: bool,
        tif: int,
        cloid: int,
        received: int,
        reserve: int,
    ) -> None:
        self.oid = oid
        self.entry = entry
        self.asset = asset
        self.is_buy = is_buy
        self.limit_px = limit_px
        self.sz = sz
        self.reduce_only = reduce_only
        self.tif = tif
        self.cloid = cloid
        self.received = received
        self.reserve = reserve
        self.state = PENDING
        self.filled = 0
        self.act_book_time = 0
        self.cancel_at: int | None = None

    @property
    def remaining(self) -> int:
        return self.sz - self.filled


class AssetState:
    """What the engine knows of one market: its marks, funding, trade history and orders."""

    __slots__ = (
        "asset",
        "book",
        "book_mid",
        "coin",
        "ctx_mark",
        "funding",
        "last_trade_tids",
        "last_trade_time",
        "lot",
        "mid_book",
        "oracle",
        "pending",
        "resting",
        "sz_decimals",
        "trade_px",
    )

    def __init__(self, coin: str, asset: int, sz_decimals: int) -> None:
        self.coin = coin
        self.asset = asset
        self.sz_decimals = sz_decimals
        self.lot = lot_e8(sz_decimals)
        self.ctx_mark: int | None = None
        self.book_mid: int | None = None
        # The latest two-sided book applied before any ctx mark, its mid not yet taken:
        # the mid is computed when the mark is first read, not on every book.
        self.mid_book: BookLevels | None = None
        self.book: BookLevels | None = None  # the latest book applied (strategies read it)
        self.trade_px: int | None = None
        self.oracle: int | None = None
        self.funding: tuple[int, int] | None = None  # exact rate num / den
        self.last_trade_time: int | None = None
        self.last_trade_tids: set[int] = set()  # membership only, never iterated
        self.pending: list[OpenOrder] = []  # oid order
        self.resting: list[OpenOrder] = []  # oid order, activated with size left

    @property
    def awaits_book(self) -> bool:
        """An order of the coin waits for a book to activate: a book applied now may."""
        return bool(self.pending)

    @property
    def marks_by_book(self) -> bool:
        """No context mark yet: the coin's mark is its last two-sided book's mid (a shell
        holding books back must keep the last two-sided one)."""
        return self.ctx_mark is None

    @property
    def prints_are_inert(self) -> bool:
        """A print applied now fills nothing: no order rests on the coin."""
        return not self.resting

    @property
    def mark(self) -> int | None:
        """ctx markPx, else the latest book mid, else the last applied trade price."""
        if self.ctx_mark is not None:
            return self.ctx_mark
        if self.mid_book is not None:
            self.book_mid = self.mid_book.mid()
            self.mid_book = None
        if self.book_mid is not None:
            return self.book_mid
        return self.trade_px


class Account:
    """One entry: cash, positions, open orders and its score-keeping."""

    __slots__ = (
        "active_marks",
        "cash",
        "fee_hwm",
        "fill_days",
        "idx",
        "key_sha256",
        "last_equity",
        "marks",
        "mdd",
        "name",
        "orders",
        "paused",
        "peak",
        "positions",
        "reserved",
        "standing",
    )

    def __init__(self, name: str, idx: int, key_sha256: str | None, equity: int) -> None:
        self.name = name
        self.idx = idx  # registration order
        self.key_sha256 = key_sha256
        self.cash = equity
        self.positions: dict[int, int] = {}  # asset -> signed size e8, non-zero only
        self.orders: dict[int, OpenOrder] = {}  # oid -> open order, in oid order
        self.reserved = 0  # sum of open non-reduce-only orders' reserves
        self.peak = equity
        self.fee_hwm = equity
        self.mdd = 0
        self.paused = False
        self.marks = 0
        self.active_marks = 0
        self.fill_days: set[int] = set()  # counted, never iterated
        self.last_equity = equity  # equity at the last minute mark
        self.standing: object | None = None  # scoring.Standing as of the last mark

    def equity(self, assets: dict[int, AssetState]) -> int:
        total = self.cash
        for asset, pos in self.positions.items():
            mark = assets[asset].mark
            assert mark is not None, "a position always has a mark"
            total += tdiv(pos * mark, E10)
        return total

    def exposure(self, assets: dict[int, AssetState]) -> int:
        total = self.reserved
        for asset, pos in self.positions.items():
            mark = assets[asset].mark
            assert mark is not None, "a position always has a mark"
            total += abs(tdiv(pos * mark, E10))
        return total

    def is_active(self) -> bool:
        """A position, or an open order with unfilled size."""
        if self.positions:
            return True
        return any(o.filled < o.sz for o in self.orders.values())
