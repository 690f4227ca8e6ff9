"""The strategy API: what an agent sees and the only two things it can do.

A strategy is a Python file with one subclass of :class:`Strategy`. The runner calls its
hooks with a :class:`Context` after the engine has applied each input: market data
(``on_book``, ``on_trades``, ``on_asset_ctx``), the entry's own answers (``on_event``:
accepted, rejected, activated, cancel pending, fill, closed, paused) and minute marks
(``on_mark``). It acts only through :meth:`Context.order` (the seven fields the HTTP API
and the vault take) and :meth:`Context.cancel`, which become log inputs stamped with the
handling input's time plus the run's latency; the engine checks them exactly as it checks
a hosted agent's. Everything a strategy reads is the engine's own state, never a copy the
strategy could drift from. See docs/strategies.md.

Why one module: :class:`Context` is the whole surface a strategy acts through (orders,
cancels, the helpers that size and price them), documented method by method; split, a
builder would read two files to learn one object.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Mapping
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any, ClassVar

from arena_tui.run.fields import U8, U32, U64, Call, Human, to_decimal
from arena_tui.run.market import (
    ALO,
    E8_DEC,
    GTC,
    IOC,
    AccountView,
    AssetContext,
    Book,
    MarketView,
    Trade,
    round_px,
    round_sz,
)
from engine import Engine, Season
from engine import events as ev
from engine.units import notional

TIFS = {"alo": ALO, "gtc": GTC, "ioc": IOC}
AUTO_CLOID_BASE = 1 << 96  # cloids the helpers assign: far above any a strategy picks by hand


class Strategy:
    """Override the hooks you need; each gets the :class:`Context` first.

    Hooks run after the engine applied the input, so ``ctx.account`` already shows what it
    did (a fill caused by a print is in the position when ``on_trades`` runs).
    """

    #: The values each number parameter takes, both ends included (None: no bound), e.g.
    #: ``ranges = {"window_ms": (1_000, None)}``: a value outside is refused (run.params).
    ranges: ClassVar[Mapping[str, tuple[int | float | None, int | float | None]]] = {}

    def on_start(self, ctx: Context) -> None:
        """Once, right after the entry is registered (before any market data it trades)."""

    def on_book(self, ctx: Context, book: Book) -> None:
        """A new ``l2Book`` of one of the season's coins."""

    def on_trades(self, ctx: Context, trades: list[Trade]) -> None:
        """New public prints of one coin (resent duplicates are left out)."""

    def on_asset_ctx(self, ctx: Context, asset_ctx: AssetContext) -> None:
        """A new ``activeAssetCtx`` (mark, oracle, funding) of one coin."""

    def on_event(self, ctx: Context, event: ev.AnyEvent) -> None:
        """One of the entry's own events: Accepted, Rejected, Activated, CancelPending,
        Fill, Closed, FundingPaid, PerformanceFee, Paused."""

    def on_mark(self, ctx: Context, mark: ev.MinuteMark) -> None:
        """The entry's minute mark: equity, peak, drawdown, as the score sees them."""

    def on_end(self, ctx: Context) -> None:
        """Once, after the last input."""


class Context:
    """A strategy's window on the run: time, market, account, and its two actions."""

    def __init__(
        self,
        entry: str,
        engine: Engine,
        send: Callable[[int, dict[str, Any]], None],
        seed: int,
        latency_ms: int = 0,
        path: Path | None = None,
    ) -> None:
        """``path``: the strategy's file, named by a refused call (its line too)."""
        self.entry = entry
        self.path = path
        self.season: Season = engine.season
        self._engine = engine
        self._send = send
        self.latency_ms = latency_ms
        self.t = 0  # receive time (ms) of the input being handled
        self.rng = random.Random(f"{seed}:{entry}")  # the only randomness a strategy may use
        self.markets: dict[str, MarketView] = {}
        self.account = AccountView(entry, engine, self.markets)
        self.in_flight: deque[dict[str, Any]] = deque()  # sent, not yet received
        self._next_cloid = AUTO_CLOID_BASE
        self._asset = {m.coin: m.asset for m in engine.season.markets}
        self._coin = {m.asset: m.coin for m in engine.season.markets}
        self._sz_decimals = {m.coin: m.szDecimals for m in engine.season.markets}

    # ---- reading ---------------------------------------------------------------------

    @property
    def coins(self) -> list[str]:
        """The season's coins, in the season file's order."""
        return list(self._asset)

    def market(self, coin: str) -> MarketView:
        """Book, prints, mark, oracle and funding of ``coin`` as the engine has them."""
        return self.markets[coin]

    def coin_of(self, asset: int) -> str:
        return self._coin[asset]

    def asset_of(self, coin: str) -> int:
        try:
            return self._asset[coin]
        except KeyError:
            raise ValueError(f"{coin!r} is not one of this season's coins {self.coins}") from None

    # ---- acting ----------------------------------------------------------------------

    def order(
        self,
        asset: int,
        is_buy: bool,
        limit_px: int,
        sz: int,
        reduce_only: bool,
        encoded_tif: int,
        cloid: int = 0,
        *,
        note: str | None = None,
    ) -> None:
        """The seven fields exactly (prices and sizes as e8 integers), sent unchanged.

        A field the HTTP API would refuse (a float price, a string asset, a size out of
        uint64, a cloid out of uint128, a note over 280 characters or with a control
        character) raises :class:`StrategyError` here, naming the calling line, the field
        and the value; nothing is sent. ``note``: one line of words logged with the order
        and shown with its fills (never read by the engine).
        """
        c = Call("ctx.order", self.path)
        asset_hint = " (use ctx.asset_of(coin))"
        e8 = ": prices and sizes are integers at 1e8 (ctx.buy and ctx.sell take dollars)"
        self._order(
            c.whole("asset", asset, U32, asset_hint),
            c.flag("is_buy", is_buy),
            c.whole("limit_px", limit_px, U64, e8),
            c.whole("sz", sz, U64, e8),
            c.flag("reduce_only", reduce_only),
            c.whole("encoded_tif", encoded_tif, U8, ": ALO (1), GTC (2) or IOC (3)"),
            c.cloid(cloid),
            None if note is None else c.note(note),
        )

    def _order(
        self,
        asset: int,
        is_buy: bool,
        limit_px: int,
        sz: int,
        reduce_only: bool,
        encoded_tif: int,
        cloid: int,
        note: str | None = None,
    ) -> None:
        msg: dict[str, Any] = {
            "type": "order",
            "entry": self.entry,
            "asset": asset,
            "isBuy": is_buy,
            "limitPx": limit_px,
            "sz": sz,
            "reduceOnly": reduce_only,
            "encodedTif": encoded_tif,
        }
        if cloid:
            msg["cloid"] = f"0x{cloid:032x}"
        if note:
            msg["note"] = note  # logged with the order; the engine ignores it
        self._submit(msg)

    def buy(
        self,
        coin: str,
        px: Human,
        sz: Human,
        tif: str = "gtc",
        reduce_only: bool = False,
        cloid: int | None = None,
        *,
        note: str | None = None,
    ) -> int:
        """Buy ``sz`` coins at ``px`` dollars (human units), rounded to the grid.

        The price rounds down to Hyperliquid's grid and the size down to whole lots, so the
        order never pays more or buys more than asked. Returns the order's cloid (one is
        assigned when not given), to cancel it before its oid is known. ``note``: one line of
        at most 280 characters (no tab, newline or other control character), logged with
        the order and shown with its fills.
        """
        return self._human(coin, True, px, sz, tif, reduce_only, cloid, note)

    def sell(
        self,
        coin: str,
        px: Human,
        sz: Human,
        tif: str = "gtc",
        reduce_only: bool = False,
        cloid: int | None = None,
        *,
        note: str | None = None,
    ) -> int:
        """Sell ``sz`` coins at ``px`` dollars; the price rounds up, the size down."""
        return self._human(coin, False, px, sz, tif, reduce_only, cloid, note)

    def cancel(self, oid: int | None = None, cloid: int | None = None) -> None:
        """Cancel an open order by oid (which decides when given) or by cloid.

        It takes effect ``activation_delay_ms`` after the engine receives it; until then the
        order can still fill and still holds its slot and reserve.
        """
        c = Call("ctx.cancel", self.path)
        if oid is not None:
            oid = c.whole("oid", oid, U64)
        cloid = c.cloid(cloid)
        if oid is None and not cloid:
            raise c.refused("no oid and no cloid: give oid=... or a non-zero cloid=...")
        msg: dict[str, Any] = {"type": "cancel", "entry": self.entry}
        if oid is not None:
            msg["oid"] = oid
        if cloid:
            msg["cloid"] = f"0x{cloid:032x}"
        self._submit(msg)

    def cancel_all(self, coin: str | None = None) -> int:
        """Cancel every open order (of ``coin``) not already being cancelled; how many."""
        if coin is not None:
            Call("ctx.cancel_all", self.path).coin(coin, self._asset)
        n = 0
        for o in self.account.open_orders:
            if o.cancelling or self.cancel_sent(o.oid) or (coin is not None and o.coin != coin):
                continue
            self.cancel(oid=o.oid)
            n += 1
        return n

    def _submit(self, msg: dict[str, Any]) -> None:
        self.in_flight.append(msg)
        self._send(self.t + self.latency_ms, msg)

    # ---- planning with what is in flight ---------------------------------------------
    # Requests sent while handling an input reach the engine after it (and after the
    # latency): until then the account does not show them. These count them in.

    @property
    def open_slots(self) -> int:
        """Order slots left, less the orders sent and not yet received."""
        sent = sum(1 for m in self.in_flight if m["type"] == "order")
        return self.account.open_slots - sent

    @property
    def headroom_e6(self) -> int:
        """Cap headroom, less the reserves that orders in flight will take (at today's mark)."""
        held = 0
        for m in self.in_flight:
            coin = self._coin.get(m["asset"]) if m["type"] == "order" else None
            if coin is not None and not m["reduceOnly"]:  # other assets will be rejected
                mark = self.markets[coin].mark_e8 or 0
                held += notional(max(m["limitPx"], mark), m["sz"])
        return max(0, self.account.headroom_e6 - held)

    def orders_on(self, coin: str) -> int:
        """Open orders of ``coin`` plus those in flight."""
        if not self.in_flight:
            acct = self._engine.account(self.entry)
            if acct is None:
                raise KeyError(self.entry)  # not registered (yet)
            if not acct.orders:
                return 0
        asset = self._asset[coin]
        sent = sum(1 for m in self.in_flight if m["type"] == "order" and m["asset"] == asset)
        return self.account.open_order_count(coin) + sent

    def cancel_sent(self, oid: int) -> bool:
        """Whether a cancel naming ``oid`` is in flight."""
        return any(m["type"] == "cancel" and m.get("oid") == oid for m in self.in_flight)

    # ---- helpers ---------------------------------------------------------------------

    def next_cloid(self) -> int:
        """A fresh cloid (unique for the run), to follow an order before its oid is known."""
        self._next_cloid += 1
        return self._next_cloid

    def px_e8(self, coin: str, px: Human, is_buy: bool) -> int:
        """A human price on Hyperliquid's grid, rounded toward the passive side."""
        rounding = ROUND_FLOOR if is_buy else ROUND_CEILING
        return round_px(to_decimal(px), self._sz_decimals[coin], rounding)

    def grid_e8(self, coin: str, px_e8: int, is_buy: bool) -> int:
        """An e8 price moved onto Hyperliquid's grid, toward the passive side."""
        return self.px_e8(coin, Decimal(px_e8) / E8_DEC, is_buy)

    def sz_e8(self, coin: str, sz: Human) -> int:
        """A human size in whole lots, rounded toward zero."""
        return round_sz(to_decimal(sz), self._sz_decimals[coin])

    def size_for(self, coin: str, usd: Human, px: Human) -> Decimal:
        """How many coins ``usd`` dollars buy at ``px`` (not yet rounded to lots)."""
        return to_decimal(usd) / to_decimal(px)

    def _human(
        self,
        coin: str,
        is_buy: bool,
        px: Human,
        sz: Human,
        tif: str,
        reduce_only: bool,
        cloid: int | None,
        note: str | None = None,
    ) -> int:
        c = Call("ctx.buy" if is_buy else "ctx.sell", self.path)
        coin = c.coin(coin, self._asset)
        price, size = c.amount("px", px), c.amount("sz", sz)
        encoded = TIFS.get(tif.lower()) if isinstance(tif, str) else None
        if encoded is None:
            raise c.bad("tif", tif, f"is not one of {', '.join(map(repr, TIFS))}")
        c.flag("reduce_only", reduce_only)
        cloid = self.next_cloid() if cloid is None else c.cloid(cloid)
        if note is not None:
            note = c.note(note)
        decimals = self._sz_decimals[coin]
        rounding = ROUND_FLOOR if is_buy else ROUND_CEILING
        limit_px = round_px(price, decimals, rounding)
        size_e8 = round_sz(size, decimals)
        self._order(self._asset[coin], is_buy, limit_px, size_e8, reduce_only, encoded, cloid, note)
        return cloid
