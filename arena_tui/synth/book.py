"""One coin's synthetic order book: 20 levels a side that persist, move and get traded.

A real book five seconds later is mostly the same book: in the BTC capture 56% of the 40
levels are identical (price, size and count) after 5 s, and 93% of the prices are still
there. So levels here live on: when the price moves they are consumed on one side and new
ones appear on the other, a few change size at each snapshot, prints eat into the touch.
That is also what lets gzip find the previous snapshot in each new one and keeps a day of
books small on disk.

Sizes and counts come from a per-coin vocabulary of 256 (size, n) pairs drawn once
(lognormal sizes, n correlated with size, some dust), so a level is one table look-up, and
a size seen a few seconds before is a match gzip can use (prints still leave odd sizes).
"""

from __future__ import annotations

from random import Random

from arena_tui.synth.coins import Profile
from arena_tui.synth.exact import Grid, Sizes, exp_, normal

DEPTH = 20  # levels a side in a snapshot, as Hyperliquid sends by default
KEEP = 32  # levels a side remembered: deeper ones come back into view when the price does
VOCAB_BITS = 8
BIG = 1 << (VOCAB_BITS - 1)  # the upper half of the (sorted) vocabulary: the larger sizes


class Level:
    __slots__ = ("lots", "n", "px", "text")

    def __init__(self, px: int, lots: int, n: int) -> None:
        self.px = px
        self.lots = lots
        self.n = n
        self.text = ""  # the rendered level, "" when it changed


def level_vocab(rng: Random, p: Profile, sizes: Sizes) -> list[tuple[int, int]]:
    """(lots, n) pairs, smallest first: lognormal sizes, ``n`` ~ lognormal(2.5, 1.2)
    correlated 0.55 with size (as in the capture), and ``dust`` levels of $10-$60."""
    lots_per_usd = sizes.per_coin / p.px0
    out = []
    for _ in range(1 << VOCAB_BITS):
        z = normal(rng)
        if rng.random() < p.dust:
            lots, n = max(1, round((10 + 50 * rng.random()) * lots_per_usd)), 1
        else:
            lots = max(1, round(p.level_usd * exp_(p.level_sigma * z) * lots_per_usd))
            n = max(1, round(2.5 * exp_(1.2 * (0.55 * z + 0.835 * normal(rng)))))
        out.append((lots, n))
    out.sort()
    return out


class Book:
    """Bids (best first, descending) and asks (best first, ascending) of one coin."""

    def __init__(self, grid: Grid, sizes: Sizes, p: Profile, rng: Random) -> None:
        self.grid = grid
        self.sizes = sizes
        self.rng = rng
        self.gaps = p.gaps
        self.vocab = level_vocab(rng, p, sizes)
        self.bids: list[Level] = []
        self.asks: list[Level] = []

    def gap(self) -> int:
        u = self.rng.random()
        for i, c in enumerate(self.gaps):
            if u < c:
                return i + 1
        return len(self.gaps)

    def fresh(self, px: int) -> Level:
        idx = self.rng.getrandbits(VOCAB_BITS)
        if px % (10 * self.grid.tick(px)) == 0:
            idx |= BIG  # round prices attract the large orders (the capture's 105040, 105030)
        lots, n = self.vocab[idx]
        return Level(px, lots, n)

    def align(self, bid: int, ask: int) -> None:
        """Make ``bid`` and ``ask`` the touch: levels through them go, new ones fill in."""
        grid = self.grid
        bids, asks = self.bids, self.asks
        k = 0
        while k < len(bids) and bids[k].px > bid:
            k += 1
        del bids[:k]
        if not bids or bids[0].px < bid:
            stop, px = (bids[0].px if bids else 0), bid
            new: list[Level] = []
            while px > stop and len(new) < KEEP:
                new.append(self.fresh(px))
                px = grid.below(px, self.gap())
            bids[0:0] = new
        k = 0
        while k < len(asks) and asks[k].px < ask:
            k += 1
        del asks[:k]
        if not asks or asks[0].px > ask:
            stop, px = (asks[0].px if asks else 1 << 62), ask
            new = []
            while px < stop and len(new) < KEEP:
                new.append(self.fresh(px))
                px = grid.above(px, self.gap())
            asks[0:0] = new
        del bids[KEEP:], asks[KEEP:]
        while len(bids) < DEPTH and bids[-1].px > 1:
            bids.append(self.fresh(grid.below(bids[-1].px, self.gap())))
        while len(asks) < DEPTH:
            asks.append(self.fresh(grid.above(asks[-1].px, self.gap())))

    def churn(self, top: float, deep: float) -> None:
        """Orders come and go between snapshots: redraw a level with probability ``top``
        for the best three, ``deep`` below; now and then one is pulled or one appears."""
        rng, vocab = self.rng, self.vocab
        for side, step in ((self.bids, self.grid.below), (self.asks, self.grid.above)):
            i = 0
            while i < DEPTH and i + 1 < len(side):
                p = top if i < 3 else deep
                u = rng.random()
                if u < p * 0.1:  # pulled: its neighbours close the gap
                    del side[i]
                    continue
                if u < p * 0.2 and step(side[i].px) != side[i + 1].px:
                    side.insert(i + 1, self.fresh(step(side[i].px)))  # a new order in a gap
                elif u < p:
                    lvl = side[i]
                    lvl.lots, lvl.n = vocab[rng.getrandbits(VOCAB_BITS)]
                    lvl.text = ""
                i += 1

    def take(self, buy: bool, want: int) -> tuple[int, int] | None:
        """A print of up to ``want`` lots against the touch: (px, lots); the level shrinks,
        or goes and the next print is one level through."""
        side = self.asks if buy else self.bids
        if not side:
            return None
        lvl = side[0]
        got = min(want, lvl.lots)
        if got * lvl.n >= lvl.lots and lvl.n > 1:
            lvl.n -= 1  # a whole resting order filled
        lvl.lots -= got
        lvl.text = ""
        if lvl.lots == 0:
            del side[0]
        return lvl.px, got

    def impact(self, notional: int) -> tuple[int, int]:
        """The bid and ask prices a market order of ``notional`` (px units x lots) reaches."""
        out = []
        for side in (self.bids, self.asks):
            filled, px = 0, side[0].px
            for lvl in side[:DEPTH]:
                px = lvl.px
                filled += lvl.px * lvl.lots
                if filled >= notional:
                    break
            out.append(px)
        return out[0], out[1]

    def levels(self) -> str:
        """``[[bids...],[asks...]]`` as Hyperliquid writes them (px, sz, n)."""
        text, sz = self.grid.text, self.sizes.text
        sides = []
        for side in (self.bids, self.asks):
            parts = []
            for lvl in side[:DEPTH]:
                if not lvl.text:
                    lvl.text = f'{{"px":"{text(lvl.px)}","sz":"{sz(lvl.lots)}","n":{lvl.n}}}'
                parts.append(lvl.text)
            sides.append(",".join(parts))
        return f"[[{sides[0]}],[{sides[1]}]]"
