"""Maker: quote both sides with post-only orders, and cancel what it is done with.

On each fresh book of a coin (at most every 20 s per coin) it wants one bid at the best
bid and one ask at the best ask, as ALO orders (an ALO that would cross when it activates
is closed by the engine with PostOnlyWouldCross, never filled as a taker). Resting orders
fill only when a print goes strictly through their price, at their own price, as maker.

What it shows about reservations: an open order holds its reserve (the notional at the
larger of its limit and the mark) and its slot until it is cancelled or expires, even when
it is fully filled, and a cancel takes effect two seconds after it is received. So the
maker cancels a quote as soon as it is filled, or off the touch, or a minute old; it counts
the slots of orders still being cancelled before placing new ones (8 at most, cancelling
ones included), and it sizes quotes under the cap's headroom. Inventory is bounded: past
a fifth of the cap in one coin it only quotes the side that reduces it, as reduce-only
(which reserves nothing).
"""

from __future__ import annotations

from typing import ClassVar

from arena_tui.strategy import ALO, Book, Context, Strategy
from engine import events as ev
from engine.units import notional
from strategies.common import order_size


class Maker(Strategy):
    requote_ms: int = 20_000  # look at a coin's quotes at most this often, ms
    max_age_ms: int = 60_000  # a quote older than this is cancelled and replaced, ms
    share_pct: int = 10  # each quote: this share of the position cap, %
    inventory_pct: int = 20  # past this share of the cap in one coin, only reduce, %
    # the values each takes, both ends included (None: no bound); others are refused
    ranges: ClassVar = {
        "requote_ms": (0, None),
        "max_age_ms": (0, None),
        "share_pct": (1, 100),
        "inventory_pct": (1, 100),
    }

    def __init__(self) -> None:
        self.looked: dict[str, int] = {}

    def on_book(self, ctx: Context, book: Book) -> None:
        coin = book.coin
        if book.stale(ctx.season.rules.stale_book_ms):
            return
        if ctx.t - self.looked.get(coin, -self.requote_ms) < self.requote_ms:
            return
        self.looked[coin] = ctx.t
        bid, ask = book.best_bid_e8, book.best_ask_e8
        if bid is None or ask is None:
            return
        for is_buy, px in ((True, bid), (False, ask)):
            if not self.keep_quote(ctx, coin, is_buy, px):
                self.quote(ctx, coin, is_buy, px)

    def keep_quote(self, ctx: Context, coin: str, is_buy: bool, px: int) -> bool:
        """Cancel this side's quotes that are done with; whether one good quote is left."""
        kept = False
        for o in ctx.account.open_orders:
            if o.coin != coin or o.is_buy != is_buy or o.cancelling or ctx.cancel_sent(o.oid):
                continue
            done = (
                o.remaining_e8 == 0 or o.limit_px_e8 != px or ctx.t - o.received > self.max_age_ms
            )
            if done or kept:
                ctx.cancel(oid=o.oid)  # frees its slot and reserve two seconds from now
            else:
                kept = True
        return kept

    def quote(self, ctx: Context, coin: str, is_buy: bool, px: int) -> None:
        if ctx.open_slots <= 0:
            return  # all eight slots are taken (orders being cancelled hold theirs too)
        pos = ctx.account.position(coin)
        reduces = (pos < 0) if is_buy else (pos > 0)
        held = abs(notional(ctx.market(coin).mark_e8 or px, pos))
        heavy = held * 100 >= ctx.account.cap_e6 * self.inventory_pct
        if reduces and (heavy or ctx.account.paused):
            sz = min(abs(pos), order_size(ctx, coin, px, self.share_pct) or abs(pos))
            reduce_only = True
        elif heavy or ctx.account.paused:
            return
        else:
            sz = order_size(ctx, coin, px, self.share_pct)
            reduce_only = False
        if sz <= 0:
            return
        ctx.order(ctx.asset_of(coin), is_buy, px, sz, reduce_only, ALO)

    def on_event(self, ctx: Context, event: ev.AnyEvent) -> None:
        if isinstance(event, ev.Fill):
            # A filled quote keeps its reserve until it leaves: cancel it right away.
            for o in ctx.account.open_orders:
                if o.oid == event.oid and o.remaining_e8 == 0 and not o.cancelling:
                    if ctx.cancel_sent(o.oid):
                        continue
                    ctx.cancel(oid=o.oid)
