"""Read-only views a strategy gets: books, prints, asset contexts, its market and account.

Why this module exists: a strategy must see the market and its account exactly as the
engine has them (a reserve, a cap headroom or an equity computed any other way would let
it plan orders the engine then rejects). Account views read the engine's state on every
access and never change it; market views wrap the inputs the engine applied, decoding a
book's levels only when a strategy asks for them. Prices and sizes are e8 integers, money
e6, ratios e8, as in the engine; ``human()`` turns one into a Decimal for printing.

Why one module: these views are the half of the strategy API a strategy reads (the other
half, ``strategy``, is what it does); a builder reads them in one file.
"""

from __future__ import annotations

from collections import deque
from decimal import ROUND_DOWN, Decimal
from typing import TYPE_CHECKING

from engine import PENDING, Account, OpenOrder
from engine.inputs import CtxData
from engine.inputs import Trade as RawTrade
from engine.units import E8, E8_MEMO, lot_e8, parse_e8, tdiv

if TYPE_CHECKING:
    from engine import BookLevels, Engine

ALO, GTC, IOC = 1, 2, 3
RECENT_PRINTS = 2_000  # prints kept per coin for strategies to look back on
E8_DEC = Decimal(E8)


def human(value_e8: int, scale: int = E8) -> Decimal:
    """An e8 (or, with ``scale=10**6``, e6) integer as an exact Decimal."""
    return Decimal(value_e8) / Decimal(scale)


def round_px(px: Decimal, sz_decimals: int, rounding: str) -> int:
    """``px`` on Hyperliquid's perp grid, as e8, rounded with ``rounding``.

    The grid: at most 5 significant figures and at most ``6 - szDecimals`` decimals; a
    whole number is always valid. A price <= 0 stays as it is (the engine rejects it).
    """
    if px <= 0:
        return int((px * E8_DEC).to_integral_value(ROUND_DOWN))
    max_decimals = max(0, 6 - sz_decimals)
    decimals = min(max_decimals, max(0, 4 - px.adjusted()))
    q = px.quantize(Decimal(1).scaleb(-decimals), rounding=rounding)
    return int(q * E8_DEC)


def round_sz(sz: Decimal, sz_decimals: int) -> int:
    """``sz`` in whole lots of ``10**-szDecimals``, as e8, rounded toward zero."""
    q = sz.quantize(Decimal(1).scaleb(-sz_decimals), rounding=ROUND_DOWN)
    return int(q * E8_DEC)


class Book:
    """One ``l2Book``: levels as ``(px_e8, sz_e8, n)``, best first.

    A view of the engine's own copy of the book (``engine.book.BookLevels``, checked when
    it arrived): nothing is decoded until a strategy reads it, the best prices convert only
    the top of the book, and what the engine decoded for an activation is not decoded again.
    """

    __slots__ = ("_levels", "coin", "t", "time")

    def __init__(self, levels: BookLevels) -> None:
        self._levels = levels
        self.coin = levels.coin
        self.t = levels.t  # receive time
        self.time = levels.time  # exchange time

    @property
    def bids(self) -> list[tuple[int, int, int]]:
        return self._levels.ints()[0]

    @property
    def asks(self) -> list[tuple[int, int, int]]:
        return self._levels.ints()[1]

    @property
    def best_bid_e8(self) -> int | None:
        return self._levels.best_px(0)

    @property
    def best_ask_e8(self) -> int | None:
        return self._levels.best_px(1)

    @property
    def mid_e8(self) -> int | None:
        return self._levels.mid()

    def stale(self, stale_book_ms: int) -> bool:
        """Whether the engine would skip this book for activation."""
        return self.t - self.time > stale_book_ms


class Trade:
    """One public print: ``side`` is the aggressor, ``"B"`` (buyer) or ``"A"`` (seller)."""

    __slots__ = ("_raw", "coin", "is_buy", "px_e8", "side", "t", "tid", "time")

    def __init__(self, raw: RawTrade, t: int) -> None:
        self._raw = raw
        self.coin = raw.coin
        self.px_e8 = E8_MEMO.get(raw.px) or parse_e8(raw.px)
        self.side = raw.side
        self.is_buy = raw.side == "B"
        self.time = raw.time
        self.tid = raw.tid
        self.t = t

    @property
    def sz_e8(self) -> int:
        return parse_e8(self._raw.sz)


class AssetContext:
    """One ``activeAssetCtx`` as received (fields it did not carry are None)."""

    __slots__ = ("coin", "funding", "mark_e8", "oracle_e8", "t")

    def __init__(self, data: CtxData, t: int) -> None:
        ctx = data.ctx
        self.coin = data.coin
        self.t = t
        self.mark_e8 = None if ctx.markPx is None else parse_e8(ctx.markPx)
        self.oracle_e8 = None if ctx.oraclePx is None else parse_e8(ctx.oraclePx)
        self.funding = None if ctx.funding is None else Decimal(ctx.funding)


class MarketView:
    """One coin: its latest book, recent prints, and the engine's mark, oracle and funding."""

    def __init__(self, engine: Engine, coin: str, asset: int, sz_decimals: int) -> None:
        state = engine.asset_state(asset)
        assert state is not None, f"asset {asset} is not one of the season's"
        self._state = state
        self.coin = coin
        self.asset = asset
        self.sz_decimals = sz_decimals
        self.lot_e8 = lot_e8(sz_decimals)
        self._book: Book | None = None
        self._prints: deque[Trade] = deque(maxlen=RECENT_PRINTS)
        # prints applied since ``prints`` was last read, as the engine gave them, with
        # their input's time: no Trade view is built for a print nobody reads
        self._unseen: deque[tuple[list[RawTrade], int]] = deque()
        self._unseen_n = 0

    @property
    def prints(self) -> deque[Trade]:
        """The recent prints (the last ``RECENT_PRINTS``), oldest first."""
        if self._unseen:
            view = self._prints
            for raws, t in self._unseen:
                view.extend([Trade(raw, t) for raw in raws])
            self._unseen.clear()
            self._unseen_n = 0
        return self._prints

    def applied(self, raws: list[RawTrade], t: int) -> None:
        """Prints the engine applied at ``t``, kept unviewed until ``prints`` is read."""
        unseen = self._unseen
        unseen.append((raws, t))
        self._unseen_n += len(raws)
        while self._unseen_n - len(unseen[0][0]) >= RECENT_PRINTS:  # older ones fall out
            self._unseen_n -= len(unseen.popleft()[0])

    @property
    def book(self) -> Book | None:
        """The latest book the engine applied (the same object until the next one)."""
        levels = self._state.book
        if levels is None:
            return None
        view = self._book
        if view is None or view._levels is not levels:
            view = self._book = Book(levels)
        return view

    @property
    def mark_e8(self) -> int | None:
        """The engine's mark: ctx markPx, else the book mid, else the last print."""
        return self._state.mark

    @property
    def oracle_e8(self) -> int | None:
        return self._state.oracle

    @property
    def funding(self) -> Decimal | None:
        """The hourly funding rate, exactly (positive: longs pay)."""
        rate = self._state.funding
        return None if rate is None else Decimal(rate[0]) / Decimal(rate[1])

    @property
    def mid_e8(self) -> int | None:
        return None if self.book is None else self.book.mid_e8


class OrderView:
    """One open order as the engine holds it, at the moment it was asked for."""

    __slots__ = (
        "cancel_at",
        "cloid",
        "coin",
        "expires_at",
        "filled_e8",
        "is_buy",
        "limit_px_e8",
        "oid",
        "pending",
        "received",
        "reduce_only",
        "reserve_e6",
        "sz_e8",
        "tif",
    )

    def __init__(self, o: OpenOrder, coin: str, lifetime_ms: int) -> None:
        self.oid = o.oid
        self.cloid = o.cloid
        self.coin = coin
        self.is_buy = o.is_buy
        self.limit_px_e8 = o.limit_px
        self.sz_e8 = o.sz
        self.filled_e8 = o.filled
        self.reserve_e6 = o.reserve  # held until the order leaves, even when fully filled
        self.tif = o.tif
        self.reduce_only = o.reduce_only
        self.pending = o.state == PENDING  # not yet activated
        self.received = o.received
        self.expires_at = o.received + lifetime_ms
        self.cancel_at = o.cancel_at

    @property
    def remaining_e8(self) -> int:
        return self.sz_e8 - self.filled_e8

    @property
    def cancelling(self) -> bool:
        """A cancel was received; the order still holds its slot and reserve until then."""
        return self.cancel_at is not None


class AccountView:
    """The entry's account, read from the engine at each access."""

    def __init__(self, entry: str, engine: Engine, markets: dict[str, MarketView]) -> None:
        self._entry = entry
        self._engine = engine
        self._markets = markets
        self._coins = {m.asset: m.coin for m in engine.season.markets}
        self._assets = {m.coin: m.asset for m in engine.season.markets}
        self._account: Account | None = None  # the engine's, once registered (it stays)

    @property
    def _acct(self) -> Account:
        acct = self._account
        if acct is None:
            acct = self._account = self._engine.account(self._entry)
            if acct is None:
                raise KeyError(self._entry)  # not registered (yet)
        return acct

    @property
    def cash_e6(self) -> int:
        return self._acct.cash

    @property
    def equity_e6(self) -> int:
        """Cash plus positions at the engine's marks (what the drawdown limit sees)."""
        return self._engine.equity(self._entry)

    @property
    def positions(self) -> dict[str, int]:
        """Signed sizes (e8, long > 0) by coin; coins with no position are left out."""
        return {self._coins[a]: sz for a, sz in self._acct.positions.items()}

    def position(self, coin: str) -> int:
        """The signed size (e8) held in ``coin``; 0 when flat."""
        return self._acct.positions.get(self._assets[coin], 0)

    def open_order_count(self, coin: str | None = None) -> int:
        """Open orders (of ``coin``), pending, resting and cancelling ones included."""
        orders = self._acct.orders
        if coin is None:
            return len(orders)
        asset = self._assets[coin]
        return sum(1 for o in orders.values() if o.asset == asset)

    @property
    def open_orders(self) -> list[OrderView]:
        lifetime = self._engine.rules.order_lifetime_ms
        return [OrderView(o, self._coins[o.asset], lifetime) for o in self._acct.orders.values()]

    @property
    def open_slots(self) -> int:
        return self._engine.rules.max_open_orders - len(self._acct.orders)

    @property
    def reserved_e6(self) -> int:
        """Sum of the reserves of open non-reduce-only orders (filled or not)."""
        return self._acct.reserved

    @property
    def exposure_e6(self) -> int:
        """|positions| at mark plus reserves: what the position cap counts."""
        return self._engine.exposure(self._entry)

    @property
    def cap_e6(self) -> int:
        """The most exposure the cap allows at the current equity."""
        return tdiv(self.equity_e6 * self._engine.rules.position_cap_pct, 100)

    @property
    def headroom_e6(self) -> int:
        """How much more reserve a new order may take (0 when at or over the cap)."""
        return max(0, self.cap_e6 - self.exposure_e6)

    @property
    def peak_e6(self) -> int:
        """The high-water mark of the minute marks so far."""
        return self._acct.peak

    @property
    def drawdown_e8(self) -> int:
        """From the peak to the equity now, as the next mark would see it."""
        peak = self._acct.peak
        return max(0, tdiv((peak - self.equity_e6) * E8, peak))

    @property
    def mdd_e8(self) -> int:
        return self._acct.mdd

    @property
    def paused(self) -> bool:
        """Past the drawdown limit: only reduce-only orders are accepted."""
        return self._acct.paused
