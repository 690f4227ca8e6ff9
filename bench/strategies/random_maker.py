"""Random maker: post-only quotes at the touch, at random times on random sides; no signal.

Why it exists: a skill-or-luck verdict must call a strategy with no edge "skill" rarely
(its calibration), and makers earn and lose differently from takers (the spread and lower
fees against being filled just before an adverse move), so the calibration needs one too.
Per coin, after a random flat spell it posts one ALO at the touch (bid or ask, even odds,
``share_pct`` of the position cap) and cancels it ``quote_ms`` later if it has not filled.
Once it holds a position it waits a random holding time, then flattens with a reduce-only
ALO at the touch on the reducing side, moved to the touch on each book; a position still
open ``flatten_ms`` after that goes with a reduce-only IOC (``strategies.common
.close_position``). Flat spells and holds are exponential (means ``mean_wait_ms``,
``mean_hold_ms``) drawn from ``ctx.rng``, the only randomness a strategy may use.

A resting order fills only when a print goes strictly through its price, and it keeps its
reserve and slot until it leaves the venue, filled or not; so, as ``strategies/maker.py``
does, a quote is cancelled as soon as it is filled, off the touch (the flattening quote) or
old, and one order a coin at a time is open, cancelling ones included.
"""

from __future__ import annotations

from arena_tui.strategy import ALO, Book, Context, OrderView, Strategy
from engine import events as ev
from strategies.common import MINUTE, close_position, order_size


class RandomMaker(Strategy):
    # Parameters (``arena backtest ... --param quote_ms=30000``):
    mean_wait_ms: int = 2 * MINUTE  # mean flat spell before a quote, per coin, ms
    quote_ms: int = MINUTE  # an entry quote not filled by then is cancelled, ms
    mean_hold_ms: int = 10 * MINUTE  # mean holding time before flattening starts, ms
    flatten_ms: int = 5 * MINUTE  # flattening quotes get this long, then an IOC, ms
    share_pct: int = 10  # each quote: this share of the position cap, %

    def __init__(self) -> None:
        self.next_quote: dict[str, int] = {}  # coin -> when to quote next, when flat
        self.flatten_at: dict[str, int] = {}  # coin -> when to start flattening, when held

    def draw_ms(self, ctx: Context, mean_ms: int) -> int:
        return round(ctx.rng.expovariate(1.0 / max(1, mean_ms)))

    def on_book(self, ctx: Context, book: Book) -> None:
        coin = book.coin
        if book.stale(ctx.season.rules.stale_book_ms):
            return
        bid, ask = book.best_bid_e8, book.best_ask_e8
        if bid is None or ask is None:
            return
        pos = ctx.account.position(coin)
        if not pos:
            self.flatten_at.pop(coin, None)
        elif coin not in self.flatten_at:
            self.flatten_at[coin] = ctx.t + self.draw_ms(ctx, self.mean_hold_ms)
        reduce_px = ask if pos > 0 else bid
        for o in self.live(ctx, coin):
            stale = ctx.t - o.received > self.quote_ms and not o.reduce_only
            moved = o.reduce_only and o.limit_px_e8 != reduce_px
            grown = pos != 0 and not o.reduce_only  # held already: no entry on top of it
            if o.remaining_e8 == 0 or stale or moved or grown:
                ctx.cancel(oid=o.oid)  # its slot and reserve go two seconds from now
        if ctx.orders_on(coin):  # one order a coin at a time, cancelling ones included
            return
        if pos:
            due = self.flatten_at[coin]
            if ctx.t >= due + self.flatten_ms:
                close_position(ctx, coin)
            elif ctx.t >= due:
                ctx.order(ctx.asset_of(coin), pos < 0, reduce_px, abs(pos), True, ALO)
            return
        start = self.next_quote.setdefault(coin, ctx.t + self.draw_ms(ctx, self.mean_wait_ms))
        if ctx.t < start or ctx.account.paused or ctx.open_slots <= 0:
            return
        is_buy = ctx.rng.random() < 0.5
        px = bid if is_buy else ask
        sz = order_size(ctx, coin, px, self.share_pct)
        if sz:
            ctx.order(ctx.asset_of(coin), is_buy, px, sz, False, ALO)
        self.next_quote[coin] = ctx.t + self.quote_ms + self.draw_ms(ctx, self.mean_wait_ms)

    def live(self, ctx: Context, coin: str) -> list[OrderView]:
        """This coin's open orders that no cancel is on its way to."""
        return [
            o
            for o in ctx.account.open_orders
            if o.coin == coin and not o.cancelling and not ctx.cancel_sent(o.oid)
        ]

    def on_event(self, ctx: Context, event: ev.AnyEvent) -> None:
        if isinstance(event, ev.Fill):
            # A filled quote keeps its reserve and slot until it leaves: cancel it now.
            for o in self.live(ctx, ctx.coin_of(event.asset)):
                if o.oid == event.oid and o.remaining_e8 == 0:
                    ctx.cancel(oid=o.oid)
