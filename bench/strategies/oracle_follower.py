"""Oracle follower: trades the edge ``arena synth --model walk --signal BPS`` plants.

Why it exists: the power of a skill-or-luck verdict is measured on a strategy whose edge is
known. On a ``--signal`` day each coin's mid drifts at ``s * BPS`` bps an hour while a hidden
state ``s`` in {-1, 0, +1} holds (about 30 minutes at a time), and the asset context
announces ``s``: ``oraclePx = mid * (1 + s * 0.001)`` (arena_tui/synth/walk.py). So this
strategy holds a long while the oracle is at least half that lead (5 bps) over the book's
mid, a short while it is as far under, and nothing otherwise. On a day without the signal
(or ``--signal 0``, where the states are announced but drift nothing) it is a strategy with
no edge that still trades.

The gap it reads is an average over the last ``smooth_ms`` (an exponential one, in time),
not a single look: the oracle moves every 3 s and a book comes every ~5 s, so one look's gap
holds the mid's own move in between, 1-3 bps (more for the livelier coins). At half the lead
that noise alone would close and reopen a position many times in a state, paying the fees
each time; averaged over 30 s it is a fraction of a bp, and a state change still shows
within seconds of the announcement (the average crosses the threshold about half way).
``--param smooth_ms=0`` reads single looks.

It acts on every book and every asset context of a coin, with one order a coin in flight
or open: an IOC through the touch (``slippage_e8``) sized at ``share_pct`` of the position
cap (``strategies.common.order_size``) to enter, and a reduce-only IOC for the whole
position (``strategies.common.close_position``) to leave or before turning around.
"""

from __future__ import annotations

from arena_tui.strategy import IOC, AssetContext, Book, Context, Strategy
from engine.units import E8, tdiv
from strategies.common import close_position, order_size


class OracleFollower(Strategy):
    # Parameters (``arena backtest ... --param threshold_pct=80``):
    lead_e8: int = 100_000  # the oracle's lead the walk plants (0.001 of the mid), e8
    threshold_pct: int = 50  # hold a side while the gap is this share of lead_e8 or more, %
    smooth_ms: int = 30_000  # the gap is averaged over about this long (0: single looks), ms
    share_pct: int = 25  # each position: this share of the position cap, %
    slippage_e8: int = 100_000  # an entry IOC's limit through the touch (0.1%), e8

    def __init__(self) -> None:
        self.gap: dict[str, tuple[int, int]] = {}  # coin -> (averaged gap e8, when)

    def on_book(self, ctx: Context, book: Book) -> None:
        self.act(ctx, book.coin)

    def on_asset_ctx(self, ctx: Context, asset_ctx: AssetContext) -> None:
        self.act(ctx, asset_ctx.coin)

    def observe(self, ctx: Context, coin: str) -> int | None:
        """The averaged (oracle - mid) / mid, e8, with this look in (None: nothing yet)."""
        market = ctx.market(coin)
        oracle, mid = market.oracle_e8, market.mid_e8
        if oracle is None or mid is None or mid <= 0:
            return None
        gap = tdiv((oracle - mid) * E8, mid)
        last = self.gap.get(coin)
        if last is not None and self.smooth_ms > 0:
            avg, when = last
            gap = avg + tdiv((gap - avg) * min(ctx.t - when, self.smooth_ms), self.smooth_ms)
        self.gap[coin] = (gap, ctx.t)
        return gap

    def act(self, ctx: Context, coin: str) -> None:
        gap = self.observe(ctx, coin)  # every look counts, order in flight or not
        if gap is None or ctx.orders_on(coin):  # one order a coin at a time
            return
        threshold = tdiv(self.lead_e8 * self.threshold_pct, 100)
        want = 1 if gap >= threshold else -1 if gap <= -threshold else 0
        pos = ctx.account.position(coin)
        held = (pos > 0) - (pos < 0)
        if held == want:
            return
        if held:
            close_position(ctx, coin)  # flat first; the new side on a later look
        elif not ctx.account.paused:
            self.enter(ctx, coin, want > 0)

    def enter(self, ctx: Context, coin: str, is_buy: bool) -> None:
        """An IOC through the touch on ``is_buy``'s side, sized under the cap's headroom."""
        book = ctx.market(coin).book
        if book is None or ctx.open_slots < 2:
            return
        ref = book.best_ask_e8 if is_buy else book.best_bid_e8
        if ref is None:
            return
        through = tdiv(ref * self.slippage_e8, E8)
        px = ctx.grid_e8(coin, ref + through if is_buy else ref - through, is_buy)
        sz = order_size(ctx, coin, px, self.share_pct)
        if sz:
            ctx.order(ctx.asset_of(coin), is_buy, px, sz, False, IOC)
