"""A deterministic, Hyperliquid-shaped version-1 season log for the replay benchmark.

What it writes looks like the feed of late 2026 for BTC, ETH, SOL and HYPE: ``l2Book``
snapshots about every 5 s per coin (20 levels a side, prices on the perp tick grid, sizes in
whole lots as decimal strings), ``trades`` messages of 1-5 prints (random 14-15 digit tids,
exchange times a little before receipt, 64-hex hashes, some all-zero as for TWAP fills,
buyer and seller addresses), ``activeAssetCtx`` every 1-3 s per coin with every field as a
string, a ``tick`` every second, and a few hundred arena orders and cancels from six entries
registered before the season starts. Keys are in the order Hyperliquid's own messages use
(``l2Book`` as in its historical archive, ``trades`` as in client libraries' fixtures).

Everything comes from one ``random.Random(seed)``: the same arguments give the same bytes.
Lines are built as strings (no json.dumps per line), so a million lines take seconds.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import heapq
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

SEASON_ID = "bench-replay"
START_MS = 1_796_601_600_000  # 2026-12-07T00:00:00Z, Season 0's start
LEAD_MS = 20_000  # the log starts this long before the season (registrations go there)
MINUTE_MS = 60_000
SECOND_MS = 1_000
E8 = 10**8
E6 = 10**6
EQUITY_E6 = 10_000 * E6  # Season 0 starting equity
ORDER_LIFETIME_MS = 3_600_000
CANCEL_DELAY_MS = 2_000
ENTRIES = ("alpha_mm", "bravo", "charlie-7", "delta_trend", "echo", "foxtrot")
ZERO_HASH = "0x" + "0" * 64
TABLE_BITS = 12  # quantile tables of 4096 entries, indexed by random bits
TABLE = 1 << TABLE_BITS
MASK = TABLE - 1


@dataclass(frozen=True)
class CoinSpec:
    """One market and the shape of its synthetic feed.

    Prices are kept as integers in ticks of ``10**-px_decimals``; the decimals are chosen so
    that every price in range has at most 5 significant figures and at most
    ``6 - szDecimals`` decimals (Hyperliquid's perp grid). Sizes are integers in lots.
    """

    coin: str
    asset: int
    sz_decimals: int
    px_decimals: int
    px0: int  # starting best bid, in ticks
    vol_day: float  # daily volatility of the price, as a fraction
    book_size: float  # median resting size of a level, in coins
    trade_size: float  # median size of a print, in coins
    trade_rate: float  # trades messages per second
    open_interest: float  # in coins
    day_volume: float  # notional USD per day
    max_gap: int  # largest gap between adjacent book levels, in ticks


SPECS = (
    CoinSpec("BTC", 0, 5, 0, 104_250, 0.030, 0.35, 0.012, 1.6, 31_500.0, 2.4e9, 3),
    CoinSpec("ETH", 1, 4, 1, 39_124, 0.040, 4.0, 0.25, 1.2, 610_000.0, 1.1e9, 4),
    CoinSpec("SOL", 5, 2, 2, 18_742, 0.050, 60.0, 6.0, 0.7, 3_900_000.0, 3.1e8, 3),
    CoinSpec("HYPE", 159, 2, 3, 41_873, 0.060, 220.0, 18.0, 0.5, 21_000_000.0, 2.6e8, 5),
)
MAX_TICKS = 99_999  # 5 significant figures at the coin's tick size (BTC's are integers)


@dataclass
class GenStats:
    """What the generator wrote."""

    inputs: int = 0
    bytes: int = 0
    books: int = 0
    trades: int = 0
    prints: int = 0
    ctxs: int = 0
    ticks: int = 0
    registers: int = 0
    orders: int = 0
    cancels: int = 0
    first_t: int = 0
    last_t: int = 0
    start: int = START_MS
    end: int = START_MS
    by_tif: dict[str, int] = field(default_factory=dict)


def frac_table(decimals: int) -> list[str]:
    """The text after the point for each fraction 0 .. 10**decimals - 1, trailing 0s cut."""
    if decimals == 0:
        return ["0"]
    return [f"{i:0{decimals}d}".rstrip("0") or "0" for i in range(10**decimals)]


def lognormal_table(median: float, sigma: float, unit: float) -> list[int]:
    """4096 quantiles of a lognormal size, in whole units (at least 1), smallest first."""
    out = []
    for i in range(TABLE):
        q = (i + 0.5) / TABLE
        # inverse normal CDF by bisection on erf, done once per table entry
        lo, hi = -8.0, 8.0
        for _ in range(40):
            mid = (lo + hi) / 2
            if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < q:
                lo = mid
            else:
                hi = mid
        out.append(max(1, round(median * math.exp(sigma * lo) / unit)))
    return out


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def season_toml(start: int, end: int, note: str) -> str:
    """A season file in the format of seasons/season0.toml, with Season 0's rules."""
    markets = "".join(
        f'\n[[markets]]\ncoin = "{s.coin}"\nasset = {s.asset}\nszDecimals = {s.sz_decimals}\n'
        for s in SPECS
    )
    return (
        f"# {note}\n"
        f'id = "{SEASON_ID}"\n'
        'description = "Synthetic Hyperliquid-shaped log for bench/replay.py"\n'
        f"start = {iso(start)}\n"
        f"end = {iso(end)}\n"
        f"{markets}\n"
        "[rules]\n"
        "starting_equity = 10000000000\n"
        "position_cap_pct = 12\n"
        "drawdown_limit_pct = 15\n"
        "max_open_orders = 8\n"
        "order_lifetime_ms = 3600000\n"
        "performance_fee_pct = 10\n"
        "performance_fee_period_ms = 604800000\n"
        "execution_fee_dbps = 20\n"
        "taker_fee_dbps = 45\n"
        "maker_fee_dbps = 15\n"
        "activation_delay_ms = 2000\n"
        "stale_book_ms = 10000\n"
        "take_fraction_pct = 25\n"
        "print_fraction_pct = 25\n"
        "deplete_book = false\n"
        "mark_interval_ms = 60000\n"
        "funding_interval_ms = 3600000\n"
        "lambda_num = 1\n"
        "lambda_den = 1\n"
        "min_fill_days = 10\n"
        "min_active_pct = 20\n"
        "min_order_value = 10000000\n"
        "rate_limit_requests = 20\n"
        "rate_limit_window_ms = 10000\n"
    )


def markets_json() -> str:
    return ",".join(
        f'{{"coin":"{s.coin}","asset":{s.asset},"szDecimals":{s.sz_decimals}}}' for s in SPECS
    )


class Market:
    """The synthetic state of one coin: its price path, book shape and context fields."""

    def __init__(self, spec: CoinSpec, rng: random.Random) -> None:
        self.spec = spec
        self.rng = rng
        self.px_scale = 10**spec.px_decimals
        self.px_frac = frac_table(spec.px_decimals)
        self.sz_scale = 10**spec.sz_decimals
        self.sz_frac = frac_table(spec.sz_decimals)
        self.lot_e8 = 10 ** (8 - spec.sz_decimals)
        self.tick_e8 = 10 ** (8 - spec.px_decimals)
        lot = 1 / self.sz_scale
        self.level_sizes = lognormal_table(spec.book_size, 1.5, lot)
        self.trade_sizes = lognormal_table(spec.trade_size, 1.4, lot)
        self.bid = spec.px0
        self.spread = 1
        self.t = 0  # time of the last price update
        self.sigma_ms = spec.vol_day * spec.px0 / math.sqrt(86_400_000)
        self.last_trade_time = 0
        self.funding_e10 = 125_000  # 0.0000125 an hour, Hyperliquid's interest-only rate
        self.oi_lots = round(spec.open_interest * self.sz_scale)
        self.day_ntl_e4 = round(spec.day_volume * 0.6 * 10_000)
        self.prev_day = spec.px0
        self.day = 0

    # ---- price path -------------------------------------------------------------------

    def move(self, t: int) -> None:
        """Advance the random walk of the best bid to ``t``."""
        dt_ms = t - self.t
        self.t = t
        if dt_ms <= 0:
            return
        step = round(self.rng.gauss(0.0, self.sigma_ms * math.sqrt(dt_ms)))
        bid = self.bid + step
        lo, hi = self.spec.px0 // 2, MAX_TICKS - 10 if self.spec.px_decimals else 10**9
        self.bid = min(max(bid, lo), hi)
        r = self.rng.random()
        self.spread = 1 if r < 0.86 else 2 if r < 0.96 else 3
        day = t // 86_400_000
        if day != self.day:
            self.day = day
            self.prev_day = self.bid

    @property
    def ask(self) -> int:
        return self.bid + self.spread

    def px(self, ticks: int) -> str:
        return f"{ticks // self.px_scale}.{self.px_frac[ticks % self.px_scale]}"

    def sz(self, lots: int) -> str:
        return f"{lots // self.sz_scale}.{self.sz_frac[lots % self.sz_scale]}"

    # ---- messages ---------------------------------------------------------------------

    def book(self, t: int) -> str:
        rng = self.rng
        getbits = rng.getrandbits
        sizes = self.level_sizes
        px_scale, px_frac = self.px_scale, self.px_frac
        sz_scale, sz_frac = self.sz_scale, self.sz_frac
        max_gap = self.spec.max_gap
        sides = []
        for start, sign in ((self.bid, -1), (self.ask, 1)):
            px = start
            levels = []
            for _ in range(20):
                bits = getbits(30)
                idx = bits & MASK
                lots = sizes[idx]
                n = 1 + ((idx * idx * ((bits >> 12) & 63)) >> 25)
                levels.append(
                    f'{{"px":"{px // px_scale}.{px_frac[px % px_scale]}",'
                    f'"sz":"{lots // sz_scale}.{sz_frac[lots % sz_scale]}","n":{n}}}'
                )
                gap = 1 + ((bits >> 18) & 63) * max_gap // 64 if (bits >> 24) & 3 else 1
                px += sign * gap
            sides.append(",".join(levels))
        time = t - 40 - (getbits(9))  # exchange time: 40-551 ms before receipt
        return (
            f'{{"t":{t},"hl":{{"channel":"l2Book","data":{{"coin":"{self.spec.coin}",'
            f'"time":{time},"levels":[[{sides[0]}],[{sides[1]}]]}}}}}}'
        )

    def trades(self, t: int, users: list[str]) -> tuple[str, int]:
        """A trades message and its number of prints."""
        rng = self.rng
        getbits = rng.getrandbits
        r = rng.random()
        count = 1 if r < 0.45 else 2 if r < 0.70 else 3 if r < 0.85 else 4 if r < 0.95 else 5
        time = max(self.last_trade_time, t - 30 - getbits(8))
        prints = []
        coin = self.spec.coin
        buy = getbits(1) == 1
        for _ in range(count):
            bits = getbits(40)
            if bits & 7 == 0:  # the aggressor side flips now and then within a message
                buy = not buy
            walk = 1 if (bits >> 3) & 15 == 0 else 0  # sometimes one tick through the top
            px = self.ask + walk if buy else self.bid - walk
            lots = self.trade_sizes[(bits >> 7) & MASK]
            h = ZERO_HASH if (bits >> 19) & 15 == 0 else f"0x{getbits(256):064x}"
            tid = (1 << 46) + getbits(49)
            buyer = users[getbits(11)]
            seller = users[getbits(11)]
            prints.append(
                f'{{"coin":"{coin}","side":"{"B" if buy else "A"}","px":"{self.px(px)}",'
                f'"sz":"{self.sz(lots)}","time":{time},"hash":"{h}","tid":{tid},'
                f'"users":["{buyer}","{seller}"]}}'
            )
            time += (bits >> 23) & 1  # prints of one message share a block time, or the next
        self.last_trade_time = time
        line = f'{{"t":{t},"hl":{{"channel":"trades","data":[{",".join(prints)}]}}}}'
        return line, count

    def ctx(self, t: int) -> str:
        rng = self.rng
        spec = self.spec
        mid2 = self.bid + self.ask  # twice the mid, in ticks
        mark = (mid2 + rng.choice((-1, 0, 0, 1))) // 2
        oracle = mark + round(rng.gauss(0.0, 1.5))
        self.funding_e10 += round(rng.gauss(0.0, 2_000))
        self.funding_e10 += (125_000 - self.funding_e10) // 50  # pulled back toward interest
        self.oi_lots = max(1, self.oi_lots + round(rng.gauss(0.0, 0.0004) * self.oi_lots))
        self.day_ntl_e4 += round(abs(rng.gauss(0.0, 1.0)) * spec.day_volume / 30_000 * 10_000)
        day_base = self.day_ntl_e4 * self.sz_scale * self.px_scale // (mark * 10_000)
        premium_e8 = (oracle - mark) * E8 // max(oracle, 1) + round(rng.gauss(0.0, 5_000))
        thin = rng.random() < 0.01  # a thin book: Hyperliquid sends null for these
        mid_s = "null" if thin else f'"{signed(mid2 * 5, spec.px_decimals + 1)}"'
        prem_s = "null" if thin else f'"{signed(premium_e8, 8)}"'
        lo, hi = self.px(self.bid - rng.randrange(2)), self.px(self.ask + rng.randrange(2))
        impact = "null" if thin else f'["{lo}","{hi}"]'
        ntl_w, ntl_f = divmod(self.day_ntl_e4, 10_000)
        return (
            f'{{"t":{t},"hl":{{"channel":"activeAssetCtx","data":{{"coin":"{spec.coin}",'
            f'"ctx":{{"funding":"{signed(self.funding_e10, 10)}",'
            f'"openInterest":"{self.sz(self.oi_lots)}","prevDayPx":"{self.px(self.prev_day)}",'
            f'"dayNtlVlm":"{ntl_w}.{ntl_f:04d}{rng.randrange(10**6):06d}","premium":{prem_s},'
            f'"oraclePx":"{self.px(oracle)}","markPx":"{self.px(mark)}","midPx":{mid_s},'
            f'"impactPxs":{impact},"dayBaseVlm":"{self.sz(max(day_base, 1))}"}}}}}}}}'
        )


def signed(value: int, decimals: int) -> str:
    """A signed fixed-point integer as a trimmed decimal string ("-0.0000015186")."""
    sign = "-" if value < 0 else ""
    whole, frac = divmod(abs(value), 10**decimals)
    text = f"{frac:0{decimals}d}".rstrip("0") or "0"
    return f"{sign}{whole}.{text}"


@dataclass
class Entry:
    """What the generator believes about one entry (it cannot know fills exactly)."""

    name: str
    cloid: int = 0
    pos_lots: dict[str, int] = field(default_factory=dict)
    # (leaves the venue at, reserve in e6, cloid): orders the generator thinks are open
    open: list[tuple[int, int, int]] = field(default_factory=list)


class Arena:
    """Orders and cancels on the price grid, in whole lots, sized under the 12% cap."""

    def __init__(self, rng: random.Random, markets: dict[str, Market], stats: GenStats) -> None:
        self.rng = rng
        self.markets = markets
        self.stats = stats
        self.entries = [Entry(name) for name in ENTRIES]
        self.heap: list[tuple[int, int, str, int, int]] = []  # (t, seq, kind, entry, arg)
        self.seq = 0
        self.emitted = 0  # orders written: a guess at the oids, for cancels by oid

    def push(self, t: int, kind: str, entry: int, arg: int = 0) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, kind, entry, arg))

    def plan(self, first_order: int, last_order: int, n_orders: int) -> None:
        for i, _ in enumerate(self.entries):
            self.push(START_MS - LEAD_MS + 500 + 137 * i, "register", i)
        span = max(1, last_order - first_order)
        for _ in range(n_orders):
            t = first_order + self.rng.randrange(span)
            self.push(t, "order", self.rng.randrange(len(self.entries)))

    def due(self, until: int) -> list[tuple[int, str, int, int]]:
        """Planned arena inputs with ``t < until``, in time order: (t, kind, entry, arg)."""
        out = []
        while self.heap and self.heap[0][0] < until:
            t, _, kind, idx, arg = heapq.heappop(self.heap)
            out.append((t, kind, idx, arg))
        return out

    def line(self, t: int, kind: str, idx: int, arg: int) -> str:
        """Build one planned input now, from the market as it stands at ``t``."""
        entry = self.entries[idx]
        if kind == "register":
            self.stats.registers += 1
            key = hashlib.sha256(f"bench-key-{entry.name}".encode()).hexdigest()
            return (
                f'{{"t":{t},"arena":{{"type":"register","entry":"{entry.name}",'
                f'"key_sha256":"{key}"}}}}'
            )
        if kind == "order":
            self.stats.orders += 1
            return self.order(t, idx, entry)
        self.stats.cancels += 1
        return self.cancel(t, entry, arg)

    def cancel(self, t: int, entry: Entry, cloid: int) -> str:
        entry.open = [o for o in entry.open if o[2] != cloid]
        ref = f'"cloid":"0x{cloid:x}"' if cloid > 0 else f'"oid":{-cloid}'
        return f'{{"t":{t},"arena":{{"type":"cancel","entry":"{entry.name}",{ref}}}}}'

    def order(self, t: int, idx: int, entry: Entry) -> str:
        rng = self.rng
        entry.open = [o for o in entry.open if o[0] > t]
        spec = SPECS[rng.choices(range(len(SPECS)), weights=(40, 30, 18, 12))[0]]
        m = self.markets[spec.coin]
        m.move(t)
        mark_e8 = (m.bid + m.ask) * m.tick_e8 // 2
        pos = entry.pos_lots.get(spec.coin, 0)
        pos_usd = pos * m.lot_e8 * mark_e8 // (E8 * E8)
        held_e6 = 0
        for c, p in entry.pos_lots.items():
            other = self.markets[c]
            held_e6 += abs(p) * other.lot_e8 * other.bid * other.tick_e8 // 10**10
        exposure_e6 = sum(o[1] for o in entry.open) + held_e6
        room_e6 = EQUITY_E6 * 10 // 100 - exposure_e6  # 10%: a margin under the 12% cap
        reduce = pos != 0 and (room_e6 < 30 * E6 or rng.random() < 0.12)
        buy = (pos < 0) if reduce else rng.random() < 0.5 - max(-0.35, min(0.35, pos_usd / 800))
        style = rng.random()
        tick_vol = max(1, round(m.sigma_ms * math.sqrt(600_000)))  # ten minutes' move
        if reduce or style < 0.45:  # marketable: a GTC or IOC through the touch
            tif = 3 if reduce or style < 0.2 else 2
            through = 1 + rng.randrange(3)
            px = m.ask + through if buy else m.bid - through
        elif style < 0.75:  # passive GTC, some ticks behind the touch
            tif = 2
            k = rng.randrange(tick_vol + 1)
            px = m.bid - k if buy else m.ask + k
        else:  # ALO, mostly passive; one in eight would cross
            tif = 1
            if rng.random() < 0.125:
                px = m.ask if buy else m.bid
            else:
                k = rng.randrange(tick_vol + 1)
                px = m.bid - k if buy else m.ask + k
        px = max(1, px)
        limit_e8 = px * m.tick_e8
        if reduce:
            lots = abs(pos)
        else:
            usd = max(15.0, min(rng.uniform(25, 160), room_e6 / E6 - 5))
            # notional e6 = px e8 * sz e8 / 1e10, sz e8 = lots * lot e8
            lots = max(1, math.ceil(usd * E6 * 10**10 / (max(limit_e8, mark_e8) * m.lot_e8)))
            while lots * m.lot_e8 * limit_e8 // 10**10 < 12 * E6:  # over the $10 minimum
                lots += 1
        sz_e8 = lots * m.lot_e8
        reserve_e6 = 0 if reduce else max(limit_e8, mark_e8) * sz_e8 // 10**10
        self.emitted += 1
        oid_guess = self.emitted
        cloid = 0
        cloid_field = ""
        if rng.random() < 0.8:
            entry.cloid += 1
            cloid = entry.cloid
            digits = f"{cloid:032x}" if rng.random() < 0.3 else f"{cloid:x}"
            cloid_field = f',"cloid":"0x{digits}"'
        if not reduce:
            leaves = t + (CANCEL_DELAY_MS if tif == 3 else ORDER_LIFETIME_MS)
            entry.open.append((leaves, reserve_e6, cloid))
        if tif != 1 and (reduce or style < 0.45):
            entry.pos_lots[spec.coin] = pos + (lots if buy else -lots)
        if tif != 3 and rng.random() < 0.3:  # cancel it later, by cloid or by (guessed) oid
            later = t + 5_000 + rng.randrange(1_200_000)
            self.push(later, "cancel", idx, cloid if cloid else -oid_guess)
        self.stats.by_tif[("ALO", "GTC", "IOC")[tif - 1]] = (
            self.stats.by_tif.get(("ALO", "GTC", "IOC")[tif - 1], 0) + 1
        )
        return (
            f'{{"t":{t},"arena":{{"type":"order","entry":"{entry.name}","asset":{spec.asset},'
            f'"isBuy":{"true" if buy else "false"},"limitPx":{limit_e8},"sz":{sz_e8},'
            f'"reduceOnly":{"true" if reduce else "false"},"encodedTif":{tif}{cloid_field}}}}}'
        )


def lines_per_second() -> float:
    """Expected inputs a second: ticks, books (5 s), contexts (2 s on average), trades."""
    return 1 + len(SPECS) / 5 + len(SPECS) / 2 + sum(s.trade_rate for s in SPECS)


def generate(out: IO[str], n_inputs: int, seed: int, rules_sha256: str) -> GenStats:
    """Write a header and exactly ``n_inputs`` inputs to ``out``; return what was written."""
    rng = random.Random(seed)
    stats = GenStats()
    markets = {s.coin: Market(s, rng) for s in SPECS}
    users = [f"0x{rng.getrandbits(160):040x}" for _ in range(2048)]
    arena = Arena(rng, markets, stats)
    span = int(n_inputs / lines_per_second() * SECOND_MS)
    n_orders = max(10, min(400, n_inputs // 3000))
    arena.plan(START_MS + 2 * MINUTE_MS, START_MS + span * 9 // 10, n_orders)

    header = (
        f'{{"arena_log":1,"season":"{SEASON_ID}","rules_sha256":"{rules_sha256}",'
        f'"markets":[{markets_json()}]}}\n'
    )
    out.write(header)
    stats.bytes = len(header)
    t0 = START_MS - LEAD_MS
    nxt: dict[tuple[str, str], float] = {}
    for i, s in enumerate(SPECS):
        nxt[(s.coin, "book")] = t0 + 300 + 1_234 * i
        nxt[(s.coin, "ctx")] = t0 + 100 + 457 * i
        nxt[(s.coin, "trades")] = t0 + rng.expovariate(s.trade_rate) * 1000
        markets[s.coin].t = t0
    written = 0
    buf: list[str] = []
    sec = t0
    stats.first_t = t0
    while written < n_inputs:
        end = sec + SECOND_MS
        due: list[tuple[int, int, str, str, int, int]] = [(sec, 0, "tick", "", 0, 0)]
        for (coin, kind), t in nxt.items():
            while t < end:
                due.append((int(t), len(due), kind, coin, 0, 0))
                spec = markets[coin].spec
                if kind == "book":
                    t += 5_000 + rng.randrange(-120, 121)
                elif kind == "ctx":
                    t += 1_000 + rng.randrange(2_001)
                else:
                    t += max(1.0, rng.expovariate(spec.trade_rate) * 1000)
            nxt[(coin, kind)] = t
        for t, kind, idx, arg in arena.due(end):
            due.append((t, len(due), "arena", kind, idx, arg))
        due.sort()
        for t, _, kind, what, idx, arg in due:
            if kind == "tick":
                line = f'{{"t":{t},"arena":{{"type":"tick"}}}}'
                stats.ticks += 1
            elif kind == "arena":
                line = arena.line(t, what, idx, arg)
            else:
                m = markets[what]
                m.move(t)
                if kind == "book":
                    line = m.book(t)
                    stats.books += 1
                elif kind == "ctx":
                    line = m.ctx(t)
                    stats.ctxs += 1
                else:
                    line, count = m.trades(t, users)
                    stats.trades += 1
                    stats.prints += count
            buf.append(line)
            stats.last_t = t
            written += 1
            if written == n_inputs:
                break
        if len(buf) >= 4096 or written == n_inputs:
            text = "\n".join(buf) + "\n"
            out.write(text)
            stats.bytes += len(text)
            buf = []
        sec = end
    stats.inputs = written
    stats.start = START_MS
    stats.end = stats.last_t // MINUTE_MS * MINUTE_MS
    return stats


def write_log(directory: Path, n_inputs: int, seed: int) -> tuple[Path, Path, GenStats]:
    """Write ``bench-replay.jsonl`` and its season file ``bench-replay.toml`` in ``directory``.

    The season's window is the whole minutes the log covers after its start; its rules are
    Season 0's, and their hash (from the season file, as the replay computes it) is in the
    log's header.
    """
    from arena_tui.seasonfile import load_season

    log = directory / f"{SEASON_ID}.jsonl"
    season = directory / f"{SEASON_ID}.toml"
    note = f"written by bench/genlog.py: {n_inputs:,} inputs, seed {seed}"
    season.write_text(season_toml(START_MS, START_MS + MINUTE_MS, note), encoding="utf-8")
    rules = load_season(season).rules_sha256
    with log.open("w", encoding="utf-8", buffering=1 << 20) as f:
        stats = generate(f, n_inputs, seed, rules)
    season.write_text(season_toml(stats.start, stats.end, note), encoding="utf-8")
    if load_season(season).rules_sha256 != rules:
        raise AssertionError("season file's rules changed while writing the log")
    return log, season, stats
