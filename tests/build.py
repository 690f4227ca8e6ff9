"""Build log lines and small seasons for tests, the way the log carries them.

Every builder returns the JSON line as a dict; :func:`lines` encodes them and decodes them
with the reader's own schema, so tests exercise exactly what a log on disk would give.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import msgspec

from arena_tui.logs import logfile, readahead
from engine import Engine, Line, Market, Rules, Season
from engine.events import Accepted, AnyEvent, Fill, Reason, Rejected
from engine.units import DAY_MS, HOUR_MS, MINUTE_MS
from engine.units import E6 as E6  # money is integer USDC at 1e6
from engine.units import E8 as E8  # prices and sizes are integers at 1e8

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z, a day boundary
MIN, HOUR, DAY = MINUTE_MS, HOUR_MS, DAY_MS

BTC = Market(coin="BTC", asset=0, szDecimals=5)
ETH = Market(coin="ETH", asset=1, szDecimals=4)
SOL = Market(coin="SOL", asset=5, szDecimals=2)
HYPE = Market(coin="HYPE", asset=159, szDecimals=2)

_LINE = msgspec.json.Decoder(Line)


def season(
    start: int = T0, end: int = T0 + DAY, markets: tuple[Market, ...] = (BTC, ETH), **rules: Any
) -> Season:
    return Season(id="test", start=start, end=end, markets=markets, rules=Rules(**rules))


def book(
    t: int,
    coin: str,
    time: int | None = None,
    bids: list[tuple[str, str]] | None = None,
    asks: list[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """An l2Book message; ``time`` (exchange time) defaults to ``t``."""
    side = [[{"px": px, "sz": sz, "n": 1} for px, sz in lv] for lv in (bids or [], asks or [])]
    return {
        "t": t,
        "hl": {
            "channel": "l2Book",
            "data": {"coin": coin, "time": t if time is None else time, "levels": side},
        },
    }


def trades(t: int, *prints: tuple[str, str, str, int, int]) -> dict[str, Any]:
    """A trades message; each print is (coin, px, sz, exchange time, tid)."""
    data = [
        {
            "coin": c,
            "side": "B",
            "px": px,
            "sz": sz,
            "time": time,
            "hash": "0x0",
            "tid": tid,
            "users": ["0xa", "0xb"],
        }
        for c, px, sz, time, tid in prints
    ]
    return {"t": t, "hl": {"channel": "trades", "data": data}}


def ctx(
    t: int,
    coin: str,
    mark: str | None = None,
    oracle: str | None = None,
    funding: str | None = None,
) -> dict[str, Any]:
    fields = {"funding": funding, "markPx": mark, "oraclePx": oracle, "openInterest": "1.0"}
    return {
        "t": t,
        "hl": {
            "channel": "activeAssetCtx",
            "data": {"coin": coin, "ctx": {k: v for k, v in fields.items() if v is not None}},
        },
    }


def register(t: int, entry: str, key_sha256: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "register", "entry": entry}
    if key_sha256:
        msg["key_sha256"] = key_sha256
    return {"t": t, "arena": msg}


def order(
    t: int,
    entry: str,
    asset: int,
    is_buy: bool,
    limit_px: int,
    sz: int,
    *,
    tif: int = 2,
    reduce_only: bool = False,
    cloid: str | None = None,
) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "type": "order",
        "entry": entry,
        "asset": asset,
        "isBuy": is_buy,
        "limitPx": limit_px,
        "sz": sz,
        "reduceOnly": reduce_only,
        "encodedTif": tif,
    }
    if cloid is not None:
        msg["cloid"] = cloid
    return {"t": t, "arena": msg}


def cancel(t: int, entry: str, oid: int | None = None, cloid: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "cancel", "entry": entry}
    if oid is not None:
        msg["oid"] = oid
    if cloid is not None:
        msg["cloid"] = cloid
    return {"t": t, "arena": msg}


def tick(t: int) -> dict[str, Any]:
    return {"t": t, "arena": {"type": "tick"}}


def lines(rows: list[dict[str, Any]]) -> list[Line]:
    return [_LINE.decode(msgspec.json.encode(r)) for r in rows]


def run(s: Season, rows: list[dict[str, Any]]) -> tuple[Engine, list[AnyEvent]]:
    """Apply every row in order; return the engine and all events."""
    eng = Engine(s)
    out: list[AnyEvent] = []
    for line in lines(rows):
        out.extend(eng.apply(line))
    return eng, out


def of(events: list[AnyEvent], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def reasons(events: list[AnyEvent]) -> list[Reason]:
    """The reasons of every rejection, in order."""
    return [e.reason for e in events if isinstance(e, Rejected)]


def accepted(events: list[AnyEvent]) -> list[Accepted]:
    return [e for e in events if isinstance(e, Accepted)]


def fill_rows(events: list[AnyEvent]) -> list[tuple[str, int, int, int, bool, int, int]]:
    """Every fill as (entry, oid, px, sz, taker, venue_fee, exec_fee), in order."""
    return [
        (e.entry, e.oid, e.px, e.sz, e.taker, e.venue_fee, e.exec_fee)
        for e in events
        if isinstance(e, Fill)
    ]


@contextmanager
def chunked(size: int, ahead: bool) -> Iterator[None]:
    """Logs read ``size`` bytes a chunk (read from disk, and decompressed: the pieces a line
    may be cut across), ahead in a reader thread (``logs.readahead``) or not."""
    with (
        mock.patch.object(logfile, "CHUNK", size),
        mock.patch.object(readahead, "OUT", size),
        mock.patch.object(readahead, "GZIP_OUT", size),
        mock.patch.object(readahead, "RAW", size),
        mock.patch.object(readahead, "MIN_BYTES", 0 if ahead else 1 << 60),
    ):
        yield
