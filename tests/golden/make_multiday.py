"""Build tests/golden/multiday.jsonl.gz: a synthetic 12-day season that exercises the clock.

Two coins on a deterministic integer price path (a SOL squeeze from 150 to 400 and back),
a book, an asset context and a few prints every 5 minutes, and three entries:
``trend`` buys 0.01 BTC at 01:00 and closes it reduce-only at 13:00 every day (fills on 12
UTC days: eligible), ``maker`` quotes SOL post-only around the mid every 4 hours and cancels
2 hours later, ``squeezed`` shorts SOL near the 12% cap before the squeeze and is paused by
the 15% drawdown limit. Funding every hour, the weekly performance fee at day 7 and the final
one at the end. Run from the repository root: ``python tests/golden/make_multiday.py``.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import msgspec

from engine import Market, Rules, Season

OUT = Path("tests/golden/multiday.jsonl.gz")
SEASON_OUT = Path("tests/golden/multiday.toml")
START = 1_767_571_200_000  # 2026-01-05T00:00:00Z
MIN, HOUR, DAY = 60_000, 3_600_000, 86_400_000
END = START + 12 * DAY
MARKETS = (Market(coin="BTC", asset=0, szDecimals=5), Market(coin="SOL", asset=5, szDecimals=2))
ALO, GTC, IOC = 1, 2, 3


def btc_px(t: int) -> int:
    """Whole dollars: a triangle wave of +-2000 around 100,000 with a 30-hour period."""
    phase = (t - START) % (30 * HOUR)
    half = 15 * HOUR
    up = phase if phase < half else 2 * half - phase
    return 98_000 + 4_000 * up // half


def sol_cents(t: int) -> int:
    """Cents: 150.00, squeezed up to 400.00 over days 3-5, back to 150.00 by day 8."""
    d = t - START
    if d < 3 * DAY or d >= 8 * DAY:
        return 15_000
    if d < 5 * DAY:
        return 15_000 + 25_000 * (d - 3 * DAY) // (2 * DAY)
    return 40_000 - 25_000 * (d - 5 * DAY) // (3 * DAY)


def dec(value: int, places: int) -> str:
    whole, frac = divmod(value, 10**places)
    return f"{whole}.{frac:0{places}d}" if places else f"{whole}.0"


def market_lines(t: int, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for coin, mid, places, tick, size in (
        ("BTC", btc_px(t), 0, 1, "0.8"),
        ("SOL", sol_cents(t), 2, 1, "40.0"),
    ):
        bids = [{"px": dec(mid - tick * (i + 1), places), "sz": size, "n": i + 1} for i in range(5)]
        asks = [{"px": dec(mid + tick * (i + 1), places), "sz": size, "n": i + 1} for i in range(5)]
        funding = "0.0000125" if (t // HOUR) % 3 else "-0.0000031"
        out.append(
            {
                "t": t,
                "hl": {
                    "channel": "activeAssetCtx",
                    "data": {
                        "coin": coin,
                        "ctx": {
                            "funding": funding,
                            "markPx": dec(mid, places),
                            "oraclePx": dec(mid - tick, places),
                            "openInterest": "1000.0",
                            "midPx": dec(mid, places),
                            "premium": None,
                        },
                    },
                },
            }
        )
        out.append(
            {
                "t": t + 100,
                "hl": {
                    "channel": "l2Book",
                    "data": {"coin": coin, "time": t + 40, "levels": [bids, asks]},
                },
            }
        )
        prints = [
            {
                "coin": coin,
                "side": "A",
                "px": dec(mid - 3 * tick, places),
                "sz": size,
                "time": t + 150,
                "hash": "0x0",
                "tid": 2 * n + 1,
                "users": ["0xa", "0xb"],
            },
            {
                "coin": coin,
                "side": "B",
                "px": dec(mid + 3 * tick, places),
                "sz": size,
                "time": t + 150,
                "hash": "0x0",
                "tid": 2 * n + 2,
                "users": ["0xa", "0xb"],
            },
        ]
        out.append({"t": t + 200, "hl": {"channel": "trades", "data": prints}})
    return out


def order(
    t: int,
    entry: str,
    asset: int,
    is_buy: bool,
    px: int,
    sz: int,
    tif: int,
    ro: bool = False,
    cloid: str | None = None,
) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "type": "order",
        "entry": entry,
        "asset": asset,
        "isBuy": is_buy,
        "limitPx": px,
        "sz": sz,
        "reduceOnly": ro,
        "encodedTif": tif,
    }
    if cloid:
        msg["cloid"] = cloid
    return {"t": t, "arena": msg}


def arena_lines() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"t": START - HOUR, "arena": {"type": "register", "entry": e}}
        for e in ("trend", "maker", "squeezed")
    ]
    for day in range(12):
        d0 = START + day * DAY
        out.append(
            order(
                d0 + HOUR + 1000,
                "trend",
                0,
                True,
                110_000 * 10**8,
                10**6,
                GTC,
                cloid=f"0x{day + 1:x}",
            )
        )
        out.append(
            order(d0 + 13 * HOUR + 1000, "trend", 0, False, 90_000 * 10**8, 10**6, IOC, ro=True)
        )
        out.append(
            {
                "t": d0 + 13 * HOUR + 2000,
                "arena": {"type": "cancel", "entry": "trend", "cloid": f"0x{day + 1:x}"},
            }
        )
        for k in range(6):
            t = d0 + 4 * k * HOUR + 7 * MIN
            mid = sol_cents(t)
            out.append(order(t, "maker", 5, True, (mid - 2) * 10**6, 3 * 10**8, ALO))
            out.append(order(t, "maker", 5, False, (mid + 2) * 10**6, 3 * 10**8, ALO))
            out.append(
                {"t": t + 2 * HOUR, "arena": {"type": "cancel", "entry": "maker", "oid": 0}}
            )  # OrderNotFound, kept on purpose
    # 7.5 SOL at 150 = $1,125 of a $1,200 cap; the squeeze to 400 loses ~$1,875 (~19%).
    out.append(
        order(START + 2 * DAY + 30 * MIN, "squeezed", 5, False, 14_900 * 10**6, 750_000_000, IOC)
    )
    return out


def main() -> None:
    season = Season(id="golden-multiday", start=START, end=END, markets=MARKETS, rules=Rules())
    rows: list[dict[str, Any]] = []
    for n, t in enumerate(range(START - HOUR, END + 10 * MIN, 5 * MIN)):
        rows += market_lines(t, n)
    rows += arena_lines()
    rows.sort(key=lambda r: r["t"])  # stable
    header = {
        "arena_log": 1,
        "season": season.id,
        "rules_sha256": season.rules_sha256,
        "markets": [msgspec.to_builtins(m) for m in MARKETS],
    }
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        for row in [header, *rows]:
            f.write(msgspec.json.encode(row) + b"\n")
    SEASON_OUT.write_text(
        f'id = "{season.id}"\nstart = {START}\nend = {END}\n'
        + "".join(
            f'\n[[markets]]\ncoin = "{m.coin}"\nasset = {m.asset}\nszDecimals = {m.szDecimals}\n'
            for m in MARKETS
        )
        + "\n[rules]\n",
        encoding="utf-8",
    )
    print(f"wrote {OUT} ({len(rows)} inputs) and {SEASON_OUT}")


if __name__ == "__main__":
    main()
