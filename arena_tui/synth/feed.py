"""One coin's synthetic WebSocket messages: ``l2Book``, ``trades`` and ``activeAssetCtx``.

The price under them is ``market.Price`` (the default model) or ``walk.Walk`` (``--model
walk``): both hand the feed the same few numbers (the touch, the regime, the trading rate,
the odds of a buy, the oracle's reference and the basis), so the messages are built alike.

Shaped as Hyperliquid sends them (keys in its order, every number a decimal string but a
book's ``time``, a level's ``n``, a trade's ``time`` and ``tid``), built as strings because a
day is hundreds of thousands of lines. Cadences: a book every ~5 s (as in late 2026), an
asset context every 1-3 s (the oracle moving every 3 s), trades as a Poisson stream that the
regime speeds up. Exchange times trail receive times as in the capture (books 350-650 ms,
trades 250-520 ms).

Trades take from the book: a print is at the touch, several prints of one message walk
through the levels when they empty them (a sweep wants 8x a print, so it empties levels),
and the next snapshot shows what they took. One taker per message (usually), makers from a
small pool; 40% of hashes are the all-zero hash Hyperliquid shows for TWAP slices (as in the
capture).
"""

from __future__ import annotations

from collections import deque
from random import Random

from arena_tui.synth.book import Book
from arena_tui.synth.coins import Profile
from arena_tui.synth.exact import Grid, Sizes, exp_, normal, poisson, signed
from arena_tui.synth.market import BURST, Price
from arena_tui.synth.walk import WALK_MODEL, Model, Walk
from engine.season import Market
from engine.units import DAY_MS, E10, HOUR_MS, MINUTE_MS

TRADES, BOOK, CTX = 0, 1, 2  # the kinds of line, in the order they sort at one instant
# One line of output: (t, coin's position, kind, prints if a trades message, the line).
Item = tuple[int, int, int, int, str]
ZERO_HASH = "0x" + "0" * 64
PRINTS = (0.58, 0.75, 0.85, 0.93, 1.0)  # cumulative: 1-5 prints in one trades message
PRINT_VOCAB = 1024  # print sizes, drawn by 10 random bits
TID_LO, TID_HI = 10**13, 1 << 50  # the capture's tids: 9.7e12 .. 1.1e15
INTEREST_E10 = 1_000_000  # 0.0001 per 8 h: Hyperliquid's interest rate
CLAMP_E10 = 5_000_000  # funding = premium + clamp(interest - premium, -0.0005, 0.0005)


class Users:
    """Addresses that trade: a few market makers on most fills, many takers (Zipf-like)."""

    def __init__(self, rng: Random) -> None:
        self.makers = [f"0x{rng.getrandbits(160):040x}" for _ in range(12)]
        self.takers = [f"0x{rng.getrandbits(160):040x}" for _ in range(300)]

    def maker(self, rng: Random) -> str:
        return self.makers[int(12 * rng.random() ** 3)]  # one maker on ~half the fills

    def taker(self, rng: Random) -> str:
        return self.takers[int(300 * rng.random() ** 3.5)]  # the top 5 on ~30%


def print_vocab(rng: Random, p: Profile, sizes: Sizes) -> list[int]:
    """``PRINT_VOCAB`` print sizes in lots: lognormal around ``print_usd`` (log-sd 1.9) and 15%
    minimum-size orders of $10-$15 (7 of the capture's 30 prints are 0.0001-0.00015 BTC)."""
    lots_per_usd = sizes.per_coin / p.px0
    out = []
    for _ in range(PRINT_VOCAB):
        if rng.random() < 0.15:
            usd = 10 + 5 * rng.random()
        else:
            usd = max(10.0, p.print_usd * exp_(1.9 * normal(rng)))
        out.append(max(1, round(usd * lots_per_usd)))
    return out


class CoinFeed:
    """The messages of one coin; :meth:`second` gives one second of them, in time order."""

    def __init__(
        self,
        market: Market,
        p: Profile,
        seed: int,
        start_ms: int,
        users: Users,
        activity: float,
        model: Model | None = None,
    ) -> None:
        self.coin = market.coin
        self.p = p
        self.users = users
        self.rng = rng = Random(f"arena-synth:{seed}:{market.coin}")
        self.grid = grid = Grid(market.szDecimals)
        self.sizes = sizes = Sizes(market.szDecimals)
        self.book = Book(grid, sizes, p, rng)
        self.price: Price | Walk
        if model is not None and model.name == WALK_MODEL:
            # The walk draws from a stream of its own: the same shocks with or without a
            # signal, and none of the feed's draws in between (see walk.py).
            walk_rng = Random(f"arena-synth:{seed}:{market.coin}:walk")
            self.price = Walk(p, grid, self.book, walk_rng, model.signal_bps)
        else:
            self.price = Price(p, grid, self.book, rng, start_ms)
        self.print_sizes = print_vocab(rng, p, sizes)
        self.rate = p.trades_per_s * activity
        self.next_book = start_ms + 200 + rng.randrange(5_000)
        self.next_ctx = start_ms + 100 + rng.randrange(2_000)
        self.trade_time = 0
        # the asset context: oracle, premium, funding, open interest, day volumes
        self.unit_lot = grid.unit * sizes.per_coin  # px units x lots in one USD
        self.impact = round(p.impact_usd * self.unit_lot)
        self.basis = self.gap_ema = 0.0
        self.oracle = 0
        self.oracle_at = self.ctx_at = start_ms - 3_000
        self.premium_avg_e10 = 0
        self.oi_target = self.oi = round(p.open_interest_usd / p.px0 * sizes.per_coin)
        self.day_ntl = p.day_volume_usd  # USD
        self.day_base = p.day_volume_usd / p.px0  # coins
        mean_print = sum(self.print_sizes) / PRINT_VOCAB / sizes.per_coin * p.px0
        self.volume_scale = p.day_volume_usd / max(1e-9, self.rate * 86_400 * 1.9 * mean_print)
        self.minutes: deque[int] = deque(maxlen=1441)  # twice the mid, each minute
        self.prev_day = grid.of(p.px0 * (1 + p.vol_day * normal(rng)))
        self.printed = 0  # prints in the last trades message
        self.p0: dict[float, float] = {}  # P(no trade in a second), by rate

    def second(self, t0: int, out: list[Item], order: int) -> None:
        """Step the price to ``t0`` and append this second's lines to ``out``."""
        rng, price = self.rng, self.price
        price.step(t0)
        if t0 % MINUTE_MS < 1000:
            self.minutes.append(price.bid + price.ask)
        due: list[tuple[int, int]] = []
        lam = self.rate * price.rate_mult
        p0 = self.p0.get(lam)
        if p0 is None:
            p0 = self.p0[lam] = exp_(-lam)
        n = poisson(rng, lam, p0)
        due += ((t0 + rng.randrange(1000), TRADES) for _ in range(n))
        end = t0 + 1000
        while self.next_book < end:
            due.append((self.next_book, BOOK))
            self.next_book += 5_000 + rng.randrange(-150, 151)
        while self.next_ctx < end:
            due.append((self.next_ctx, CTX))
            self.next_ctx += 1_000 + rng.randrange(2_001)
        due.sort()
        render = (self.trades_line, self.book_line, self.ctx_line)
        for t, kind in due:
            line = render[kind](t)
            if line:  # a trades message finds no book only if the book is empty
                out.append((t, order, kind, self.printed if kind == TRADES else 0, line))

    def book_line(self, t: int) -> str:
        rng = self.rng
        burst = self.price.regime == BURST
        self.book.churn(0.75 if burst else 0.45, 0.3 if burst else 0.12)
        self.book.align(self.price.bid, self.price.ask)
        time = t - 350 - rng.randrange(300)
        return (
            f'{{"t":{t},"hl":{{"channel":"l2Book","data":{{"coin":"{self.coin}",'
            f'"time":{time},"levels":{self.book.levels()}}}}}}}'
        )

    def trades_line(self, t: int) -> str:
        rng, users, book = self.rng, self.users, self.book
        buy = rng.random() < self.price.p_buy
        u = rng.random()
        count = next(i + 1 for i, c in enumerate(PRINTS) if u < c)
        sweep = rng.random() < (0.2 if self.price.regime == BURST else 0.04)
        one_taker = sweep or rng.random() < 0.85
        time = self.trade_time = max(self.trade_time, t - 250 - rng.randrange(270))
        taker, tx = users.taker(rng), self._hash(rng)
        side, grid, sizes = ("B" if buy else "A"), self.grid, self.sizes
        prints = []
        for _ in range(count):
            got = book.take(buy, self.print_sizes[rng.getrandbits(10)] * (8 if sweep else 1))
            if got is None:
                break
            px, lots = got
            if not one_taker:
                taker, tx = users.taker(rng), self._hash(rng)
            maker = users.maker(rng)
            buyer, seller = (taker, maker) if buy else (maker, taker)
            tid = rng.randrange(TID_LO, TID_HI)
            prints.append(
                f'{{"coin":"{self.coin}","side":"{side}","px":"{grid.text(px)}",'
                f'"sz":"{sizes.text(lots)}","time":{time},"hash":"{tx}","tid":{tid},'
                f'"users":["{buyer}","{seller}"]}}'
            )
            coins = lots / sizes.per_coin
            self.day_ntl += coins * px / grid.unit * self.volume_scale
            self.day_base += coins * self.volume_scale
            self.oi = max(1, self.oi + (lots if rng.random() < 0.5 else -lots))
        if not prints:
            return ""
        self.printed = len(prints)
        return f'{{"t":{t},"hl":{{"channel":"trades","data":[{",".join(prints)}]}}}}'

    @staticmethod
    def _hash(rng: Random) -> str:
        return ZERO_HASH if rng.random() < 0.4 else f"0x{rng.getrandbits(256):064x}"

    def ctx_line(self, t: int) -> str:
        rng, grid, price = self.rng, self.grid, self.price
        dt = t - self.ctx_at
        self.ctx_at = t
        bid, ask = price.bid, price.ask
        self.basis += (price.basis_target - self.basis) * min(1.0, dt / 600_000)
        self.basis += price.basis_noise * normal(rng)
        if t - self.oracle_at >= 3_000:  # the oracle moves every 3 s
            self.oracle_at = t
            self.oracle = grid.of(price.oracle_mid / (1 + self.basis))
        oracle = self.oracle
        self.gap_ema += ((bid + ask) / 2 - oracle - self.gap_ema) * min(1.0, dt / 150_000)
        mark = sorted((bid, ask, grid.down(max(1, oracle + int(self.gap_ema)))))[1]
        impact_bid, impact_ask = self.book.impact(self.impact)
        premium = (max(impact_bid - oracle, 0) - max(oracle - impact_ask, 0)) * E10
        premium_e10 = premium // oracle if premium >= 0 else -(-premium // oracle)
        self.premium_avg_e10 += (premium_e10 - self.premium_avg_e10) * min(dt, HOUR_MS) // HOUR_MS
        avg = self.premium_avg_e10
        rate = avg + max(-CLAMP_E10, min(CLAMP_E10, INTEREST_E10 - avg))
        funding = rate // 8 if rate >= 0 else -(-rate // 8)  # per hour, 10 decimals
        self.oi += round((self.oi_target - self.oi) * dt / 21_600_000)
        decay = 1 - dt / DAY_MS
        self.day_ntl *= decay
        self.day_base *= decay
        if len(self.minutes) == self.minutes.maxlen:
            self.prev_day = grid.down(self.minutes[0] // 2)
        base = signed(int(self.day_base * self.sizes.per_coin), self.sizes.decimals)
        return (
            f'{{"t":{t},"hl":{{"channel":"activeAssetCtx","data":{{"coin":"{self.coin}",'
            f'"ctx":{{"funding":"{signed(funding, 10)}",'
            f'"openInterest":"{self.sizes.text(self.oi)}",'
            f'"prevDayPx":"{grid.text(self.prev_day)}",'
            f'"dayNtlVlm":"{signed(int(self.day_ntl * 100), 2)}",'
            f'"premium":"{signed(premium_e10, 10)}",'
            f'"oraclePx":"{grid.text(oracle)}","markPx":"{grid.text(mark)}",'
            f'"midPx":"{grid.half_text(bid + ask)}",'
            f'"impactPxs":["{grid.text(impact_bid)}","{grid.text(impact_ask)}"],'
            f'"dayBaseVlm":"{base}"'
            f"}}}}}}}}"
        )
