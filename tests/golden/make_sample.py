"""Build recordings/sample-btc-20250126.jsonl: the real BTC capture with entries trading.

The market data is ../shared/data/hyperliquid/hftbacktest_collector_btc_20250126.gz
verbatim (``<receive ns> <message>`` -> ``{"t": receive ms, "hl": message}``); the
registrations, orders, cancels and clock ticks are interleaved by receive time. Run from
the repository root: ``python tests/golden/make_sample.py [CAPTURE]``. The expected replay
outputs are tests/golden/sample-btc-20250126.{replay.json,fills.jsonl}; regenerate them only
after checking a change by hand (tests/test_golden.py says how).
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import Any

import lz4.frame

from arena_tui.logs.writer import LogWriter
from arena_tui.season.file import load_season

CAPTURE = (
    Path(__file__).parents[2] / "../shared/data/hyperliquid/hftbacktest_collector_btc_20250126.gz"
)
OUT = Path("recordings/sample-btc-20250126.jsonl")
PARTIAL = Path("tests/golden/sample-partial.jsonl.lz4")
S = 1000
T = 1_737_918_840_000  # 2025-01-26T19:14:00Z, the season's start


def order(
    entry: str,
    is_buy: bool,
    px: str,
    sz: str,
    tif: int,
    *,
    ro: bool = False,
    cloid: str | None = None,
    asset: int = 0,
) -> dict[str, Any]:
    """An order with human prices (decimal strings) turned into e8 integers."""

    def e8(text: str) -> int:
        whole, _, frac = text.partition(".")
        return int(whole) * 10**8 + int((frac + "0" * 8)[:8])

    msg: dict[str, Any] = {
        "type": "order",
        "entry": entry,
        "asset": asset,
        "isBuy": is_buy,
        "limitPx": e8(px),
        "sz": e8(sz),
        "reduceOnly": ro,
        "encodedTif": tif,
    }
    if cloid:
        msg["cloid"] = cloid
    return msg


ALO, GTC, IOC = 1, 2, 3
ARENA: list[tuple[int, dict[str, Any]]] = [
    (T + 1 * S, {"type": "register", "entry": "alice"}),
    (T + 1 * S, {"type": "register", "entry": "bob"}),
    (T + 1 * S, {"type": "register", "entry": "carol"}),
    (T + 1 * S, {"type": "register", "entry": "dave"}),
    (T + 1 * S, {"type": "register", "entry": "Bad Name"}),  # ignored: not [a-z0-9_-]
    (T + 1 * S, {"type": "register", "entry": "bob"}),  # ignored: already used
    # alice takes 0.01 BTC at the ask, later closes it with a reduce-only IOC of 0.02.
    (T + 4 * S, order("alice", True, "105060", "0.01", GTC, cloid="0x1")),
    (T + 27 * S, order("alice", False, "105000", "0.02", IOC, ro=True)),
    (T + 28 * S, {"type": "cancel", "entry": "alice", "cloid": "0x1"}),
    # bob rests a post-only bid below the ask; the sweep at 19:14:25.696 prints through it.
    (T + 5 * S, order("bob", True, "105054", "0.005", ALO, cloid="0xb0b")),
    (T + 5 * S, order("bob", True, "105060", "0.001", ALO)),  # would cross: closed
    (T + 6 * S, order("bob", False, "105060", "0.002", ALO, ro=True)),  # never printed through
    # carol: one of each rejection, then a taker sell that leaves her short.
    (T + 7 * S, order("carol", True, "105055.5", "0.001", GTC)),  # InvalidPrice: 7 sig figs
    (T + 7 * S, order("carol", True, "105055", "0.000015", GTC)),  # InvalidSize: not whole lots
    (T + 7 * S, order("carol", True, "105055", "0.00009", GTC)),  # OrderTooSmall: $9.45
    (T + 7 * S, order("carol", True, "3300", "1", GTC, asset=1)),  # MarketNotAllowed
    (T + 7 * S, order("carol", True, "105055", "0.001", 4)),  # InvalidTif
    (T + 7 * S, order("carol", True, "105055", "0.02", GTC)),  # PositionCapExceeded: $2101
    (T + 7 * S, {"type": "cancel", "entry": "carol", "oid": 99}),  # OrderNotFound
    (T + 8 * S, order("carol", False, "105040", "0.001", GTC, cloid="0xC")),
    (T + 8 * S, order("mallory", True, "105055", "0.001", GTC)),  # unregistered: ignored
]
ARENA += [(T + s * S, {"type": "tick"}) for s in range(30, 121, 10)]


def main() -> None:
    capture = Path(sys.argv[1]) if len(sys.argv) > 1 else CAPTURE
    season = load_season("seasons/sample-btc-20250126.toml")
    rows: list[tuple[int, int, bytes | dict[str, Any]]] = []
    with gzip.open(capture, "rb") as f:
        for raw in f:
            ns, _, msg = raw.rstrip(b"\n").partition(b" ")
            rows.append((int(ns) // 1_000_000, 1, msg))
    rows += [(t, 0, msg) for t, msg in ARENA]
    rows.sort(key=lambda r: (r[0], r[1]))  # stable: same-time arena inputs keep their order
    OUT.unlink(missing_ok=True)
    header = {
        "season": season.id,
        "rules_sha256": season.rules_sha256,
        "markets": [{"coin": "BTC", "asset": 0, "szDecimals": 5}],
    }
    with LogWriter(OUT, header, fsync=False) as w:
        for t, _, item in rows:
            if isinstance(item, bytes):
                w.write(t, hl=item)
            else:
                w.write(t, arena=item)
    print(f"wrote {OUT} ({len(rows)} inputs)")
    write_partial()


def write_partial() -> None:
    """The same log cut at 19:15:30 with a torn last line, LZ4-compressed: final = false."""
    keep: list[bytes] = []
    for raw in OUT.read_bytes().splitlines(keepends=True):
        if raw.startswith(b'{"t":') and int(raw[5:18]) >= T + 90 * S:
            keep.append(raw[: len(raw) // 2])  # a torn write: no newline
            break
        keep.append(raw)
    with lz4.frame.open(PARTIAL, "wb") as f:
        f.write(b"".join(keep))
    print(f"wrote {PARTIAL}")


if __name__ == "__main__":
    main()
