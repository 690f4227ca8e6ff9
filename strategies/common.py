"""Pieces the baselines share: sizing under the cap, a rolling window of prints, exits.

Not a strategy itself (it defines no Strategy subclass); the baselines import it as
``strategies.common``. Every number is an e8 integer (prices, sizes, ratios) or e6 money,
as the engine has them, so what a baseline plans is what the engine will check.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from arena_tui.strategy import IOC, Context, Trade
from engine.units import E8, MINUTE_MS, lots_down, notional, tdiv

MINUTE = MINUTE_MS  # the baselines' windows are written in minutes


def order_size(ctx: Context, coin: str, px_e8: int, share_pct: int) -> int:
    """Whole lots worth ``share_pct``% of the cap, never more than the cap's headroom.

    The engine reserves ``notional(max(limit, mark), sz)`` at acceptance and counts it
    until the order leaves, so the size is planned on the larger of the two prices and
    kept 10% under the headroom (the mark may move before the order arrives).
    """
    market = ctx.market(coin)
    mark = market.mark_e8 or px_e8
    price = max(px_e8, mark)
    budget = min(tdiv(ctx.account.cap_e6 * share_pct, 100), tdiv(ctx.headroom_e6 * 9, 10))
    if budget < ctx.season.rules.min_order_value or price <= 0:
        return 0
    sz = lots_down(tdiv(budget * 10**10, price), market.lot_e8)
    if notional(px_e8, sz) < ctx.season.rules.min_order_value:
        return 0
    return sz


class Flow:
    """Prints of one coin over a rolling window: aggressor counts and the price path."""

    def __init__(self, window_ms: int) -> None:
        self.window_ms = window_ms
        self.prints: deque[Trade] = deque()
        self.buys = 0
        self.sells = 0

    def add(self, trades: list[Trade]) -> None:
        for p in trades:
            self.prints.append(p)
            if p.is_buy:
                self.buys += 1
            else:
                self.sells += 1
        newest = self.prints[-1].time if self.prints else 0
        while self.prints and self.prints[0].time < newest - self.window_ms:
            old = self.prints.popleft()
            if old.is_buy:
                self.buys -= 1
            else:
                self.sells -= 1

    def change_e8(self) -> int:
        """The move from the window's first print to its last, as an e8 ratio."""
        if len(self.prints) < 2:
            return 0
        first, last = self.prints[0].px_e8, self.prints[-1].px_e8
        return tdiv((last - first) * E8, first)

    @property
    def last_px(self) -> int | None:
        return self.prints[-1].px_e8 if self.prints else None


@dataclass(frozen=True)
class ExitRules:
    """Take profit, stop loss and a time stop, as e8 ratios and ms."""

    take_profit_e8: int = 600_000  # +0.6%
    stop_loss_e8: int = 400_000  # -0.4%
    max_hold_ms: int = 30 * MINUTE


@dataclass
class Holding:
    """A position a baseline opened: when, and at what price."""

    entry_px_e8: int
    since: int


def exit_reason(rules: ExitRules, h: Holding, now: int, px_e8: int, is_long: bool) -> str | None:
    """Why to close ``h`` now (or None): take profit, stop loss or time."""
    move = tdiv((px_e8 - h.entry_px_e8) * E8, h.entry_px_e8)
    if not is_long:
        move = -move
    if move >= rules.take_profit_e8:
        return "take profit"
    if move <= -rules.stop_loss_e8:
        return "stop loss"
    if now - h.since >= rules.max_hold_ms:
        return "time"
    return None


def close_position(ctx: Context, coin: str, slippage_e8: int = 200_000) -> bool:
    """A reduce-only IOC for the whole position, through the book by ``slippage``.

    Returns whether it was sent (not when there is nothing to close, or no book).
    """
    pos = ctx.account.position(coin)
    book = ctx.market(coin).book
    if not pos or book is None:
        return False
    ref = book.best_bid_e8 if pos > 0 else book.best_ask_e8
    if ref is None:
        return False
    is_buy = pos < 0
    px = ref + tdiv(ref * slippage_e8, E8) * (1 if is_buy else -1)
    ctx.order(ctx.asset_of(coin), is_buy, ctx.grid_e8(coin, px, is_buy), abs(pos), True, IOC)
    return True
