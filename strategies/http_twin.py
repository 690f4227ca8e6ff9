"""strategies/http_agent.py's lockstep logic as a Python strategy: the agent's twin.

Why this file exists: to show that an HTTP agent backtested in lockstep is the same thing
as a strategy run in-process. `http_agent.py --lockstep --wake book` is woken on every book
of its coin and plays a round on the first book of each minute, reading the book and its
account over HTTP, sending each order and waiting for its answer. This strategy plays the
same round in ``on_book`` on the same books, with the same numbers (the helpers are
imported from the agent), so the two give the same fills (time, price, size and side) at
the same latency; tests/test_lockstep_agents.py checks it at --latency-ms 0:

    arena backtest --agent ".venv/bin/python strategies/http_agent.py" LOG
    arena backtest strategies/http_twin.py LOG

Where the two could differ, they are made to agree: the agent adapts to a 422 at its next
round (not at once), and this strategy to the ``Rejected`` event, which arrives before its
next round; both name their orders' cloids after the round's time. The agent's --wake timer
mode has no twin: a Python strategy's hooks run after an input, never between two.
"""

from __future__ import annotations

import itertools

from arena_tui.strategy import ALO, IOC, Book, Context, Strategy
from engine import events as ev
from strategies.http_agent import adapt_usd, lots_for, on_grid


class HttpTwin(Strategy):
    coin: str = "BTC"  # the agent's --coin
    usd: int = 15  # the agent's --usd: order size in dollars
    quote_s: float = 6.0  # the agent's --quote-s: cancel resting bids this old
    every_ms: int = 60_000  # the agent's --every-ms: a round on the first book of each

    def __init__(self) -> None:
        self.quote_ms = int(self.quote_s * 1000)
        self.quotes: dict[int, int] = {}  # cloid of a resting bid -> when it was sent (ms)
        self.refused: list[str] = []  # 422 reasons of orders, adapted to at the next round
        self.period: int | None = None  # the period of the last round
        self.cloids = itertools.count(1)

    def on_book(self, ctx: Context, book: Book) -> None:
        if book.coin != self.coin or ctx.t // self.every_ms == self.period:
            return
        self.period = ctx.t // self.every_ms
        self.cloids = itertools.count(ctx.t << 16)  # as the agent names them
        self.round(ctx, book)

    def on_event(self, ctx: Context, event: ev.AnyEvent) -> None:
        if isinstance(event, ev.Rejected) and event.request == "order":
            self.refused.append(str(event.reason))  # the agent's 422
            self.quotes.pop(event.cloid, None)  # the agent keeps only accepted bids

    def round(self, ctx: Context, book: Book) -> None:
        refused, self.refused = self.refused, []
        for reason in refused:
            self.usd = adapt_usd(self.usd, reason)
            if reason == "TooManyOpenOrders":
                ctx.cancel_all()
                self.quotes.clear()
        bid, ask = book.best_bid_e8, book.best_ask_e8
        if bid is None or ask is None or book.stale(ctx.season.rules.stale_book_ms):
            return
        pos = ctx.account.position(self.coin)
        decimals = ctx.market(self.coin).sz_decimals
        for cloid, sent in list(self.quotes.items()):
            if ctx.t - sent > self.quote_ms:
                ctx.cancel(cloid=cloid)  # done with it: frees its slot and reserve
                del self.quotes[cloid]
        if pos > 0:
            self.send(ctx, False, on_grid(bid * 99 // 100, decimals, False), pos, IOC, True)
        elif pos == 0:
            take = on_grid(ask * 1001 // 1000, decimals, True)
            self.send(ctx, True, take, lots_for(self.usd, take, decimals), IOC, False)
            if not self.quotes:
                low = on_grid(bid * 98 // 100, decimals, False)
                cloid = self.send(ctx, True, low, lots_for(self.usd, low, decimals), ALO, False)
                self.quotes[cloid] = ctx.t

    def send(self, ctx: Context, is_buy: bool, px: int, sz: int, tif: int, ro: bool) -> int:
        cloid = next(self.cloids)
        ctx.order(ctx.asset_of(self.coin), is_buy, px, sz, ro, tif, cloid)
        return cloid
