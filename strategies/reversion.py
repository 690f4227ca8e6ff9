"""Reversion: buy a drawdown over the last hour once short-term buying returns.

Two windows of prints per coin: an hour, for the drawdown (the last price at least 1.2%
under the hour's high), and two minutes, for the turn (buyers outnumber sellers and the
price is up over those two minutes). Everything else (sizing under the cap, one order per
coin, the exits at +0.6%, -0.4% or 30 minutes) is momentum's: this class replaces only
``observe`` and ``wants_entry``.

Its own parameters: ``drawdown_e8``, ``high_ms`` (the drawdown's window) and
``window_ms``, here the turn's two minutes (momentum's ``min_rise_e8`` is not read).
"""

from __future__ import annotations

from collections import deque
from typing import ClassVar

from arena_tui.strategy import Context, Trade
from engine.units import E8, tdiv
from strategies.common import MINUTE, Flow
from strategies.momentum import Momentum


class HourHigh:
    """The highest print over the last ``span_ms`` (an hour): a deque of (time, px) with
    prices falling."""

    def __init__(self, span_ms: int = 60 * MINUTE) -> None:
        self.span_ms = span_ms
        self.window: deque[tuple[int, int]] = deque()

    def add(self, trades: list[Trade]) -> None:
        for p in trades:
            while self.window and self.window[-1][1] <= p.px_e8:
                self.window.pop()
            self.window.append((p.time, p.px_e8))
        newest = trades[-1].time
        while len(self.window) > 1 and self.window[0][0] < newest - self.span_ms:
            self.window.popleft()

    @property
    def high(self) -> int:
        return self.window[0][1]


class Reversion(Momentum):
    window_ms: int = 2 * MINUTE  # the turn: buyers outnumber sellers and price is up over it
    drawdown_e8: int = 1_200_000  # how far under the high the last price must be (1.2%), e8
    high_ms: int = 60 * MINUTE  # the window whose highest print the drawdown is from, ms
    ranges: ClassVar = {"drawdown_e8": (0, E8), "high_ms": (1, 24 * 60 * MINUTE)}  # and momentum's

    def __init__(self) -> None:
        super().__init__()
        self.hour: dict[str, HourHigh] = {}

    def observe(self, coin: str, trades: list[Trade]) -> None:
        self.hour.setdefault(coin, HourHigh(self.high_ms)).add(trades)
        self.flow.setdefault(coin, Flow(self.window_ms)).add(trades)

    def wants_entry(self, ctx: Context, coin: str) -> bool:
        turn, high = self.flow[coin], self.hour[coin].high
        last = turn.last_px
        if last is None:
            return False
        down = tdiv((high - last) * E8, high)
        return down >= self.drawdown_e8 and turn.buys > turn.sells and turn.change_e8() > 0
