"""A small hand-built market for backtests: BTC climbing $1 a second, and a flat SOL.

A book of each coin every 5 s (BTC five levels of 2 BTC a side around the price), a BTC
print every second (two buys at the ask, then a sell at the bid), and asset contexts
every 10 s. Sizes are deep so a taker fills whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from tests import build

E8 = build.E8
BTC_PX = 100_000  # dollars, at 30 s before build.T0
MARKETS = [
    {"coin": "BTC", "asset": 0, "szDecimals": 5},
    {"coin": "SOL", "asset": 5, "szDecimals": 2},
]


def fmt(px_e8: int) -> str:
    """An e8 integer as the feed writes a decimal: ``100000.0``, ``150.05``."""
    whole, frac = divmod(px_e8, E8)
    return f"{whole}.{frac:08d}".rstrip("0").rstrip(".") if frac else f"{whole}.0"


def market_rows(
    minutes: int = 10, start: int = build.T0 - 30_000, sol_ctx: bool = False
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for s in range(minutes * 60 + 31):
        t = start + s * 1000
        px = (BTC_PX + s) * E8
        bid, ask = px - E8, px + E8
        if s % 5 == 0:
            bids = [(fmt(bid - i * E8), "2.0") for i in range(5)]
            asks = [(fmt(ask + i * E8), "2.0") for i in range(5)]
            rows.append(build.book(t, "BTC", t - 50, bids, asks))
            rows.append(build.book(t, "SOL", t - 50, [("150.0", "100.0")], [("150.1", "100.0")]))
        buy = s % 3 != 2
        row = build.trades(t, ("BTC", fmt(ask if buy else bid), "0.001", t - 20, s + 1))
        row["hl"]["data"][0]["side"] = "B" if buy else "A"
        rows.append(row)
        if s % 10 == 0:
            rows.append(build.ctx(t, "BTC", mark=fmt(px), oracle=fmt(px), funding="0.0000125"))
            if sol_ctx:
                rows.append(build.ctx(t, "SOL", mark="150.05", oracle="150.0", funding="0.00001"))
    return rows


def write_log(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A recording (header, then the rows) at ``path``."""
    header = {"arena_log": 1, "recording": "synthetic", "markets": MARKETS}
    with path.open("wb") as f:
        f.write(msgspec.json.encode(header) + b"\n")
        for r in rows:
            f.write(msgspec.json.encode(r) + b"\n")
    return path
