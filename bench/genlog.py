"""A deterministic, Hyperliquid-shaped version-1 season log for the replay benchmark.

The market data is ``arena synth``'s (``arena_tui.synth.generate.Synth``: BTC, ETH, SOL and HYPE;
``l2Book`` snapshots about every 5 s per coin with 20 levels a side on the perp tick grid,
``trades`` messages of 1-5 prints, ``activeAssetCtx`` every 1-3 s), at a busier trading rate
than the shipped sample (``ACTIVITY``). This module adds what a season log has besides: a
``tick`` every second, and a few hundred arena orders and cancels from six entries
registered before the season starts.

Everything is seeded: the same arguments give the same bytes. Lines are built as strings (no
json.dumps per line), so a million lines take seconds.
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

from arena_tui.synth.coins import BUILTIN
from arena_tui.synth.feed import BOOK, CTX, TRADES, CoinFeed
from arena_tui.synth.generate import Synth
from engine.units import E6, E8, MINUTE_MS, SECOND_MS

SEASON_ID = "bench-replay"
START_MS = 1_796_601_600_000  # 2026-12-07T00:00:00Z, Season 0's start
LEAD_MS = 20_000  # the log starts this long before the season (registrations go there)
EQUITY_E6 = 10_000 * E6  # Season 0 starting equity
ORDER_LIFETIME_MS = 3_600_000
CANCEL_DELAY_MS = 2_000
ENTRIES = ("alpha_mm", "bravo", "charlie-7", "delta_trend", "echo", "foxtrot")
MARKETS = tuple(BUILTIN[c][0] for c in ("BTC", "ETH", "SOL", "HYPE"))
ORDER_WEIGHTS = (40, 30, 18, 12)  # which market an order goes to
# Trading rate over the sample's: ~4 trades messages a second over the four coins, as a
# busy hour on Hyperliquid (the sample is a quiet day, to stay small in git).
ACTIVITY = 2.2
REGIME_RATE = 1.4  # trends and bursts trade more: the mean rate over the calm one


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


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def season_toml(start: int, end: int, note: str) -> str:
    """A season file in the format of seasons/season0.toml, with Season 0's rules."""
    markets = "".join(
        f'\n[[markets]]\ncoin = "{m.coin}"\nasset = {m.asset}\nszDecimals = {m.szDecimals}\n'
        for m in MARKETS
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
        f'{{"coin":"{m.coin}","asset":{m.asset},"szDecimals":{m.szDecimals}}}' for m in MARKETS
    )


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

    def __init__(self, rng: random.Random, markets: dict[str, CoinFeed], stats: GenStats) -> None:
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
        market = MARKETS[rng.choices(range(len(MARKETS)), weights=ORDER_WEIGHTS)[0]]
        m = self.markets[market.coin]  # the touch as of this second
        grid, lot_e8, bid, ask = m.grid, m.sizes.lot_e8, m.price.bid, m.price.ask
        mark_e8 = (bid + ask) * grid.unit_e8 // 2
        pos = entry.pos_lots.get(market.coin, 0)
        pos_usd = pos * lot_e8 * mark_e8 // (E8 * E8)
        held_e6 = 0
        for c, p in entry.pos_lots.items():
            other = self.markets[c]
            held_e6 += abs(p) * other.sizes.lot_e8 * other.price.bid * other.grid.unit_e8 // 10**10
        exposure_e6 = sum(o[1] for o in entry.open) + held_e6
        room_e6 = EQUITY_E6 * 10 // 100 - exposure_e6  # 10%: a margin under the 12% cap
        reduce = pos != 0 and (room_e6 < 30 * E6 or rng.random() < 0.12)
        buy = (pos < 0) if reduce else rng.random() < 0.5 - max(-0.35, min(0.35, pos_usd / 800))
        style = rng.random()
        # ten minutes' move, in ticks
        tick_vol = max(1, round(m.p.vol_day * bid * math.sqrt(600 / 86_400) / grid.tick(bid)))
        if reduce or style < 0.45:  # marketable: a GTC or IOC through the touch
            tif = 3 if reduce or style < 0.2 else 2
            through = 1 + rng.randrange(3)
            px = grid.above(ask, through) if buy else grid.below(bid, through)
        elif style < 0.75:  # passive GTC, some ticks behind the touch
            tif = 2
            k = rng.randrange(tick_vol + 1)
            px = grid.below(bid, k) if buy else grid.above(ask, k)
        else:  # ALO, mostly passive; one in eight would cross
            tif = 1
            if rng.random() < 0.125:
                px = ask if buy else bid
            else:
                k = rng.randrange(tick_vol + 1)
                px = grid.below(bid, k) if buy else grid.above(ask, k)
        limit_e8 = px * grid.unit_e8
        if reduce:
            lots = abs(pos)
        else:
            usd = max(15.0, min(rng.uniform(25, 160), room_e6 / E6 - 5))
            # notional e6 = px e8 * sz e8 / 1e10, sz e8 = lots * lot e8
            lots = max(1, math.ceil(usd * E6 * 10**10 / (max(limit_e8, mark_e8) * lot_e8)))
            while lots * lot_e8 * limit_e8 // 10**10 < 12 * E6:  # over the $10 minimum
                lots += 1
        sz_e8 = lots * lot_e8
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
            entry.pos_lots[market.coin] = pos + (lots if buy else -lots)
        if tif != 3 and rng.random() < 0.3:  # cancel it later, by cloid or by (guessed) oid
            later = t + 5_000 + rng.randrange(1_200_000)
            self.push(later, "cancel", idx, cloid if cloid else -oid_guess)
        self.stats.by_tif[("ALO", "GTC", "IOC")[tif - 1]] = (
            self.stats.by_tif.get(("ALO", "GTC", "IOC")[tif - 1], 0) + 1
        )
        return (
            f'{{"t":{t},"arena":{{"type":"order","entry":"{entry.name}","asset":{market.asset},'
            f'"isBuy":{"true" if buy else "false"},"limitPx":{limit_e8},"sz":{sz_e8},'
            f'"reduceOnly":{"true" if reduce else "false"},"encodedTif":{tif}{cloid_field}}}}}'
        )


def lines_per_second() -> float:
    """Expected inputs a second: ticks, books (5 s), contexts (2 s on average), trades."""
    trades = sum(BUILTIN[m.coin][1].trades_per_s for m in MARKETS) * ACTIVITY * REGIME_RATE
    return 1 + len(MARKETS) / 5 + len(MARKETS) / 2 + trades


TICK, ARENA = -1, -2  # kinds of line besides the market's


def count(stats: GenStats, kind: int, prints: int) -> None:
    if kind == BOOK:
        stats.books += 1
    elif kind == CTX:
        stats.ctxs += 1
    elif kind == TRADES:
        stats.trades += 1
        stats.prints += prints
    elif kind == TICK:
        stats.ticks += 1


def generate(out: IO[str], n_inputs: int, seed: int, rules_sha256: str) -> GenStats:
    """Write a header and exactly ``n_inputs`` inputs to ``out``; return what was written."""
    rng = random.Random(f"bench-genlog:{seed}")  # the arena inputs; the market is Synth's
    stats = GenStats()
    t0 = START_MS - LEAD_MS
    synth = Synth(MARKETS, seed, t0, activity=ACTIVITY)
    arena = Arena(rng, synth.by_coin, stats)
    span = int(n_inputs / lines_per_second() * SECOND_MS)
    n_orders = max(10, min(400, n_inputs // 3000))
    arena.plan(START_MS + 2 * MINUTE_MS, START_MS + span * 9 // 10, n_orders)

    header = (
        f'{{"arena_log":1,"season":"{SEASON_ID}","rules_sha256":"{rules_sha256}",'
        f'"markets":[{markets_json()}]}}\n'
    )
    out.write(header)
    stats.bytes = len(header)
    written = 0
    buf: list[str] = []
    stats.first_t = t0
    for sec, window in synth.windows():
        end = sec + SECOND_MS
        # (t, sequence, line, kind, prints): the tick first, then the market's, then arena's
        due: list[tuple[int, int, str, int, int]] = [
            (sec, 0, f'{{"t":{sec},"arena":{{"type":"tick"}}}}', TICK, 0)
        ]
        for t, _, kind, prints, line in window:
            due.append((t, len(due), line, kind, prints))
        for t, what, idx, arg in arena.due(end):
            due.append((t, len(due), arena.line(t, what, idx, arg), ARENA, 0))
        due.sort()
        for t, _, line, kind, prints in due:
            buf.append(line)
            count(stats, kind, prints)
            stats.last_t = t
            written += 1
            if written == n_inputs:
                break
        if len(buf) >= 4096 or written == n_inputs:
            text = "\n".join(buf) + "\n"
            out.write(text)
            stats.bytes += len(text)
            buf = []
        if written == n_inputs:
            break
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
    from arena_tui.season.file import load_season

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
