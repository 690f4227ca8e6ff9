"""Random taker: long or short at random times, held a random time; no signal at all.

Why it exists: a skill-or-luck verdict must call a strategy with no edge "skill" rarely
(its calibration). This one trades like a taker with a view, crossing the spread and paying
taker fees, but its views are coin flips: per coin, after a flat spell it enters long or
short (even odds) with an IOC through the touch, holds for a random time, and exits with a
reduce-only IOC (``strategies.common.close_position``). Flat spells and holds are
exponential, of mean ``mean_wait_ms`` and ``mean_hold_ms``, drawn from ``ctx.rng`` (the only
randomness a strategy may use), so a run is repeatable.

It looks at a coin on each of its books (every ~5 s), with one order a coin in flight or
open. A hold is timed from the entry's sending; an entry that did not fill leaves it flat,
and the next look draws a new flat spell.
"""

from __future__ import annotations

from arena_tui.strategy import IOC, Book, Context, Strategy
from engine.units import E8, tdiv
from strategies.common import MINUTE, close_position, order_size


class RandomTaker(Strategy):
    # Parameters (``arena backtest ... --param mean_hold_ms=300000``):
    mean_wait_ms: int = 5 * MINUTE  # mean flat spell before an entry, per coin, ms
    mean_hold_ms: int = 10 * MINUTE  # mean holding time, ms
    share_pct: int = 25  # each position: this share of the position cap, %
    slippage_e8: int = 100_000  # an entry IOC's limit through the touch (0.1%), e8

    def __init__(self) -> None:
        self.due: dict[str, int] = {}  # coin -> when to act next (enter when flat, else exit)
        self.holding: dict[str, bool] = {}  # coin -> whether the last act was an entry

    def draw_ms(self, ctx: Context, mean_ms: int) -> int:
        return round(ctx.rng.expovariate(1.0 / max(1, mean_ms)))

    def on_book(self, ctx: Context, book: Book) -> None:
        coin = book.coin
        if ctx.orders_on(coin):  # one order a coin at a time, open or in flight
            return
        due = self.due.get(coin)
        if due is None:
            self.due[coin] = ctx.t + self.draw_ms(ctx, self.mean_wait_ms)
            return
        pos = ctx.account.position(coin)
        if self.holding.get(coin) and not pos:  # the entry did not fill, or a close did
            self.holding[coin] = False
            self.due[coin] = ctx.t + self.draw_ms(ctx, self.mean_wait_ms)
            return
        if ctx.t < due:
            return
        if pos:
            close_position(ctx, coin)  # a close that does not fill is sent again next look
            self.due[coin] = ctx.t
        elif not ctx.account.paused and self.enter(ctx, coin, ctx.rng.random() < 0.5):
            self.holding[coin] = True
            self.due[coin] = ctx.t + self.draw_ms(ctx, self.mean_hold_ms)

    def enter(self, ctx: Context, coin: str, is_buy: bool) -> bool:
        """An IOC through the touch on ``is_buy``'s side; whether it was sent."""
        book = ctx.market(coin).book
        if book is None or ctx.open_slots < 2:
            return False
        ref = book.best_ask_e8 if is_buy else book.best_bid_e8
        if ref is None:
            return False
        through = tdiv(ref * self.slippage_e8, E8)
        px = ctx.grid_e8(coin, ref + through if is_buy else ref - through, is_buy)
        sz = order_size(ctx, coin, px, self.share_pct)
        if not sz:
            return False
        ctx.order(ctx.asset_of(coin), is_buy, px, sz, False, IOC)
        return True
