"""Momentum: buy short-term strength when buyers outnumber sellers; exit on fixed rules.

Every print updates a five-minute window per coin. When a coin has risen at least 0.15%
over the window and aggressive buyers outnumber sellers 3 to 2, and we hold nothing in it,
we buy with an IOC a little through the best ask, sized at a quarter of the position cap
and never more than the cap's headroom (the engine would reject it with
PositionCapExceeded). The position is closed by a reduce-only IOC at +0.6%, at -0.4%, or
after 30 minutes (``strategies.common.ExitRules``).

At most one order per coin is in flight or open, so the entry uses a few of its eight
order slots at most; an IOC leaves the venue at activation and releases its reserve then.

The reversion baseline and the random control are this strategy with another entry
signal: they override ``observe`` and ``wants_entry`` only.

Each of these numbers is a parameter (the class attributes below, defaults as said here):
``arena backtest strategies/momentum.py LOG --param min_rise_e8=300000`` runs another.
"""

from __future__ import annotations

from typing import ClassVar

from arena_tui.strategy import IOC, Context, Strategy, Trade
from engine import events as ev
from engine.units import E8, tdiv
from strategies.common import (
    MINUTE,
    ExitRules,
    Flow,
    Holding,
    close_position,
    exit_reason,
    order_size,
)


class Momentum(Strategy):
    # Parameters (``arena backtest ... --param window_ms=120000``; docs/strategies.md):
    window_ms: int = 5 * MINUTE  # the window of prints the signal reads, per coin
    min_rise_e8: int = 150_000  # the rise over the window that counts (+0.15%), e8
    share_pct: int = 25  # each position: this share of the position cap, %
    slippage_e8: int = 100_000  # an entry IOC's limit through the best ask (0.1%), e8
    take_profit_e8: int = ExitRules.take_profit_e8  # close at this gain (+0.6%), e8
    stop_loss_e8: int = ExitRules.stop_loss_e8  # close at this loss (-0.4%), e8
    max_hold_ms: int = ExitRules.max_hold_ms  # close after this long (30 minutes), ms
    # the values each takes, both ends included (None: no bound); others are refused
    ranges: ClassVar = {
        "window_ms": (1, 24 * 60 * MINUTE),
        "min_rise_e8": (0, E8),
        "share_pct": (1, 100),
        "slippage_e8": (0, E8 // 10),
        "take_profit_e8": (1, None),
        "stop_loss_e8": (1, E8),
        "max_hold_ms": (1, None),
    }

    def __init__(self) -> None:
        self.exits = ExitRules(self.take_profit_e8, self.stop_loss_e8, self.max_hold_ms)
        self.flow: dict[str, Flow] = {}
        self.held: dict[str, Holding] = {}  # coin -> when and where we got in

    # ---- the signal (what the other baselines replace) -------------------------------

    def observe(self, coin: str, trades: list[Trade]) -> None:
        self.flow.setdefault(coin, Flow(self.window_ms)).add(trades)

    def wants_entry(self, ctx: Context, coin: str) -> bool:
        flow = self.flow[coin]
        return flow.change_e8() >= self.min_rise_e8 and flow.buys * 2 >= flow.sells * 3

    # ---- hooks -----------------------------------------------------------------------

    def on_trades(self, ctx: Context, trades: list[Trade]) -> None:
        coin = trades[0].coin
        self.observe(coin, trades)
        if ctx.orders_on(coin):  # one order a coin at a time, open or in flight
            return
        pos = ctx.account.position(coin)
        holding = self.held.get(coin)
        if pos and holding is not None:
            if exit_reason(self.exits, holding, ctx.t, trades[-1].px_e8, pos > 0):
                close_position(ctx, coin)
        elif not pos and not ctx.account.paused and self.wants_entry(ctx, coin):
            self.enter(ctx, coin)

    def on_event(self, ctx: Context, event: ev.AnyEvent) -> None:
        if isinstance(event, ev.Fill):
            coin = ctx.coin_of(event.asset)
            if not ctx.account.position(coin):
                self.held.pop(coin, None)
            elif coin not in self.held:
                self.held[coin] = Holding(event.px, ctx.t)

    # ---- acting ----------------------------------------------------------------------

    def enter(self, ctx: Context, coin: str) -> None:
        """An IOC buy through the best ask, sized under the cap's headroom."""
        book = ctx.market(coin).book
        if book is None or book.best_ask_e8 is None or ctx.open_slots < 2:
            return
        ask = book.best_ask_e8
        px = ctx.grid_e8(coin, ask + tdiv(ask * self.slippage_e8, E8), True)
        sz = order_size(ctx, coin, px, self.share_pct)
        if sz:
            ctx.order(ctx.asset_of(coin), True, px, sz, False, IOC)
