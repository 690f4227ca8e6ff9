"""What the live paper tests share: a season that is running now, a strategy that trades at
once, and readers for the run log.

The season's window includes now (so the entries join at the first input, with no wait for
a minute boundary), marks every second and activates orders after 200 ms, so a few
seconds of the fake Hyperliquid's feed (tests/fakehl.py: the real BTC capture at ~1000
messages a second, exchange times now) show marks, fills and a cancel.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from arena_tui.record.feed import wall_ms
from engine.units import MINUTE_MS

MARKETS = [{"coin": "BTC", "asset": 0, "szDecimals": 5}]
TEST_RULES = {"mark_interval_ms": 1000, "activation_delay_ms": 200}

TAKER = """
from arena_tui.strategy import GTC, IOC, Context, Strategy

E8 = 10**8


class Taker(Strategy):
    \"\"\"On its first BTC book: buys 0.001 BTC through the ask and rests a bid far below;
    once it holds BTC: cancels what is open and sells the position through the bid.\"\"\"

    def __init__(self) -> None:
        self.books = 0
        self.sold = False

    def on_book(self, ctx: Context, book) -> None:
        if book.coin != "BTC" or book.best_ask_e8 is None or book.best_bid_e8 is None:
            return
        self.books += 1
        btc = ctx.asset_of("BTC")
        if self.books == 1:
            ask = ctx.grid_e8("BTC", book.best_ask_e8 + 50 * E8, True)
            ctx.order(btc, True, ask, 100_000, False, IOC)
            low = ctx.grid_e8("BTC", book.best_bid_e8 - 5000 * E8, True)
            ctx.order(btc, True, low, 100_000, False, GTC)
        elif not self.sold and ctx.account.position("BTC") > 0:
            self.sold = True
            ctx.cancel_all()
            pos = ctx.account.position("BTC")
            ctx.sell("BTC", px=book.best_bid_e8 / E8 - 50, sz=pos / E8, tif="ioc", reduce_only=True)
"""


def running_season(
    path: Path, *, now_ms: int | None = None, minutes: int = 10, **rules: int
) -> Path:
    """A season file whose window began a minute before ``now_ms`` (default: now)."""
    now = wall_ms() if now_ms is None else now_ms
    start = (now // MINUTE_MS - 1) * MINUTE_MS
    doc = {
        "id": "live-test",
        "start": start,
        "end": start + minutes * MINUTE_MS,
        "markets": MARKETS,
        "rules": {**TEST_RULES, **rules},
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def write_taker(path: Path) -> Path:
    path.write_text(TAKER, encoding="utf-8")
    return path


def lines(run_log: Path) -> list[dict[str, Any]]:
    """Every input of a run log (complete lines only), decoded."""
    rows = run_log.read_bytes().split(b"\n")[1:]
    return [json.loads(r) for r in rows[:-1]]


def arena_type(row: dict[str, Any]) -> str | None:
    arena = row.get("arena")
    return arena["type"] if isinstance(arena, dict) else None


def check_ticks(rows: list[dict[str, Any]]) -> list[int]:
    """``t`` never decreases; ticks fall on whole seconds, exactly one second apart, and
    every other input lies in the second its last tick opened. Returns the ticks' ``t``."""
    ts = [r["t"] for r in rows]
    assert ts == sorted(ts)
    ticks = [r["t"] for r in rows if arena_type(r) == "tick"]
    assert ticks and all(t % 1000 == 0 for t in ticks)
    assert [b - a for a, b in itertools.pairwise(ticks)] == [1000] * (len(ticks) - 1)
    last_tick: int | None = None
    for r in rows:
        if arena_type(r) == "tick":
            last_tick = r["t"]
        elif last_tick is not None:
            assert last_tick <= r["t"] < last_tick + 1000, (last_tick, r)
        elif arena_type(r) == "register":
            # registrations come before the input they are stamped with, and that first
            # input may be the first tick itself (no market message came before it)
            assert r["t"] <= ticks[0] <= r["t"] + 1000
        else:
            assert r["t"] < ticks[0] <= r["t"] + 1000  # before the first tick: within 1 s
    return ticks
