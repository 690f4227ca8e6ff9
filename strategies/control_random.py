"""The control: enters at random, exits on exactly the same rules as momentum.

Seed 004's floor: a strategy that does not beat this over many days is indistinguishable
from luck under these costs. It is momentum with the entry signal replaced by a coin flip
from the seeded generator the runner hands every strategy (``ctx.rng``), so the sizing,
the exits and the costs are the same; only the timing of entries is random. On average it
enters on about one print in 400, per coin, when flat.
"""

from __future__ import annotations

from typing import ClassVar

from arena_tui.strategy import Context
from strategies.momentum import Momentum


class ControlRandom(Momentum):
    one_in: int = 400  # the chance of an entry at each print, when flat: 1 in this
    ranges: ClassVar = {"one_in": (1, None)}  # and momentum's

    def wants_entry(self, ctx: Context, coin: str) -> bool:
        return ctx.rng.randrange(self.one_in) == 0
