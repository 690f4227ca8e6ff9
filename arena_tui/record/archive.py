"""Hyperliquid's S3 archives: where each channel's objects are, and how they become messages.

Why this module exists: the archives hold what a recorder would have received, but in three
shapes of their own, and the node's trades in three layouts that changed over time. This is
the one place that knows them (docs/data.md says where each comes from and the dates):

- ``l2Book``: ``s3://hyperliquid-archive/market_data/YYYYMMDD/H/l2Book/COIN.lz4``, an LZ4
  frame a coin and hour, ``{"time": "<receive ISO, ns>", "ver_num": 1, "raw": <message>}``
  a line. The message is kept byte for byte (the importer's parser, ``logs.importers``).
- ``activeAssetCtx``: ``s3://hyperliquid-archive/asset_ctxs/YYYYMMDD.csv.lz4``, a CSV a day
  (``time,coin,funding,open_interest,prev_day_px,day_ntl_vlm,premium,oracle_px,mark_px,
  mid_px,impact_bid_px,impact_ask_px``); a row becomes the WebSocket's ``activeAssetCtx``
  message, numbers rewritten as plain decimal strings (never through a float).
- ``trades``: ``s3://hl-mainnet-node-data/<layout>/hourly/YYYYMMDD/H.lz4``, every coin in one
  object an hour. ``node_trades`` (a trade a line, both sides in ``side_info``, ISO time, no
  trade id), ``node_fills`` (a fill a line, ``[user, fill]`` as the API sends fills) and
  ``node_fills_by_block`` (a block a line, its fills in ``events``). A fill is one side of a
  trade; the two fills of a trade share its ``tid``, and the taker's says ``crossed``. A
  trade becomes one print shaped as the WebSocket's (``coin, side, px, sz, time, hash, tid,
  users: [buyer, seller]``), ``side`` being the taker's.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import IO, Any

import msgspec

from arena_tui.logs.importers import iso_ns, parse_archive
from arena_tui.util.errors import ArenaError
from engine.units import NS_PER_MS

ARCHIVE_BUCKET = "hyperliquid-archive"
NODE_BUCKET = "hl-mainnet-node-data"
FILL_LAYOUTS = ("node_fills_by_block", "node_fills", "node_trades")  # newest first
_HOUR_NAME = re.compile(r"^(\d{1,2})\.lz4$")
TID_PER_MS = 1_000_000  # node_trades has no trade id: tid = time ms * this + position


class ArchiveError(ArenaError):
    """An archive object that cannot be read as its layout says (one line naming it)."""


def book_prefix(day: str) -> str:
    return f"market_data/{day}/"


def parse_book_key(key: str) -> tuple[int, str] | None:
    """``market_data/D/H/l2Book/COIN.lz4`` -> (H, COIN); None for another data type."""
    parts = key.split("/")
    if len(parts) != 5 or parts[3] != "l2Book" or not parts[4].endswith(".lz4"):
        return None
    if not parts[2].isdigit():
        return None
    return int(parts[2]), parts[4][: -len(".lz4")]


def ctx_key(day: str) -> str:
    return f"asset_ctxs/{day}.csv.lz4"


def fills_prefix(layout: str, day: str) -> str:
    return f"{layout}/hourly/{day}/"


def parse_fills_key(key: str) -> int | None:
    """The hour of ``<layout>/hourly/D/H.lz4`` (``7.lz4`` or ``07.lz4``), None otherwise."""
    m = _HOUR_NAME.match(key.rsplit("/", 1)[-1])
    return int(m.group(1)) if m and int(m.group(1)) < 24 else None


# ---- books -------------------------------------------------------------------------------


def book_records(lines: Iterable[bytes], where: str) -> Iterator[tuple[int, bytes]]:
    """(receive ms, message bytes) of an archive l2Book object's lines, in file order."""
    for lineno, line in enumerate(lines, start=1):
        if line.strip():
            ns, msg = parse_archive(where, line, lineno)
            yield ns // NS_PER_MS, msg


# ---- asset contexts ----------------------------------------------------------------------

_CTX_FIELDS = {  # the CSV's column -> the WebSocket ctx's field
    "funding": "funding",
    "open_interest": "openInterest",
    "prev_day_px": "prevDayPx",
    "day_ntl_vlm": "dayNtlVlm",
    "premium": "premium",
    "oracle_px": "oraclePx",
    "mark_px": "markPx",
    "mid_px": "midPx",
}
_CTX_NEEDED = ("time", "coin", "funding", "oracle_px", "mark_px")


def decimal_text(text: str) -> str | None:
    """A CSV number as a plain decimal string (``1.25e-05`` -> ``0.0000125``); None if empty.

    Through ``Decimal``, never a float: the digits stay the ones written."""
    s = text.strip()
    if not s or s.lower() in ("nan", "null", "none"):
        return None
    try:
        d = Decimal(s)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    if not d.is_finite():
        return None
    out = format(d, "f")
    return "0" if out in ("-0", "") else out


def time_ms(text: str) -> int:
    """A CSV time: ISO 8601 in UTC (``T`` or a space, optional ``Z``), or epoch ms digits."""
    s = text.strip()
    if s.isdigit():
        return int(s) if len(s) > 11 else int(s) * 1000
    return iso_ns(s.replace(" ", "T", 1)) // NS_PER_MS


def ctx_records(f: IO[bytes], coins: frozenset[str], where: str) -> Iterator[tuple[int, bytes]]:
    """(time ms, activeAssetCtx message) for the rows of ``coins``, in file order."""
    reader = csv.DictReader(io.TextIOWrapper(f, encoding="utf-8", newline=""))
    missing = [c for c in _CTX_NEEDED if c not in (reader.fieldnames or [])]
    if missing:
        raise ArchiveError(f"{where}: no {', '.join(missing)} column in the CSV header")
    for row in reader:
        coin = row["coin"]
        if coin not in coins:
            continue
        try:
            t = time_ms(row["time"])
            ctx: dict[str, Any] = {
                name: decimal_text(row[col] or "")
                for col, name in _CTX_FIELDS.items()
                if col in row
            }
            bid, ask = (decimal_text(row.get(k) or "") for k in ("impact_bid_px", "impact_ask_px"))
        except ValueError as exc:
            raise ArchiveError(f"{where}:{reader.line_num}: {exc}") from None
        ctx["impactPxs"] = None if bid is None or ask is None else [bid, ask]
        msg = {"channel": "activeAssetCtx", "data": {"coin": coin, "ctx": ctx}}
        yield t, msgspec.json.encode(msg)


# ---- trades from the node's fills --------------------------------------------------------


class Fill(msgspec.Struct):
    coin: str
    px: str
    sz: str
    side: str
    time: int
    tid: int
    hash: str = ""
    crossed: bool = False


class _Block(msgspec.Struct):
    events: list[tuple[str, Fill]]


class _SideInfo(msgspec.Struct):
    user: str


class _NodeTrade(msgspec.Struct):
    coin: str
    side: str
    time: str
    px: str
    sz: str
    side_info: list[_SideInfo]
    hash: str = ""


_FILL_LINE = msgspec.json.Decoder(tuple[str, Fill])
_BLOCK = msgspec.json.Decoder(_Block)
_NODE_TRADE = msgspec.json.Decoder(_NodeTrade)


@dataclass
class Print:
    """One trade as the WebSocket's ``trades`` channel shows it."""

    coin: str
    side: str
    px: str
    sz: str
    time: int
    hash: str
    tid: int
    buyer: str
    seller: str

    def doc(self) -> dict[str, Any]:
        return {
            "coin": self.coin,
            "side": self.side,
            "px": self.px,
            "sz": self.sz,
            "time": self.time,
            "hash": self.hash,
            "tid": self.tid,
            "users": [self.buyer, self.seller],
        }


@dataclass
class FillStats:
    fills: int = 0  # fills of the chosen coins read
    unpaired: int = 0  # fills whose other side was not in the object (dropped)


def _quoted(coins: frozenset[str]) -> list[bytes]:
    """``"BTC"`` for each coin: a line without any of them holds none of their trades, and
    is not decoded (most of an hour's fills are other coins')."""
    return [b'"%s"' % c.encode() for c in sorted(coins)]


def _fills(
    layout: str, lines: Iterable[bytes], where: str, coins: frozenset[str]
) -> Iterator[tuple[str, Fill]]:
    quoted = _quoted(coins)
    for lineno, line in enumerate(lines, start=1):
        if not any(q in line for q in quoted):
            continue
        try:
            if layout == "node_fills":
                yield _FILL_LINE.decode(line)
            else:
                yield from _BLOCK.decode(line).events
        except msgspec.DecodeError as exc:
            raise ArchiveError(f"{where}:{lineno}: not a {layout} line: {exc}") from None


def prints_from_fills(
    layout: str, lines: Iterable[bytes], coins: frozenset[str], where: str, stats: FillStats
) -> list[Print]:
    """The trades of an hour's fills (``node_fills`` or ``node_fills_by_block``): the two
    fills of a ``tid`` become one print; ordered by time, then as the object lists them."""
    sides: dict[tuple[str, int], list[tuple[str, Fill]]] = {}
    for user, fill in _fills(layout, lines, where, coins):
        if fill.coin in coins:
            stats.fills += 1
            sides.setdefault((fill.coin, fill.tid), []).append((user, fill))
    out: list[Print] = []
    for pair in sides.values():
        buy = next((p for p in pair if p[1].side == "B"), None)
        sell = next((p for p in pair if p[1].side == "A"), None)
        if buy is None or sell is None:
            stats.unpaired += len(pair)
            continue
        taker = next((f for _, f in pair if f.crossed), pair[0][1])
        out.append(
            Print(
                taker.coin,
                taker.side,
                taker.px,
                taker.sz,
                taker.time,
                taker.hash,
                taker.tid,
                buy[0],
                sell[0],
            )
        )
    out.sort(key=lambda p: p.time)  # stable: the object's order within a time
    return out


def prints_from_node_trades(
    lines: Iterable[bytes], coins: frozenset[str], where: str, stats: FillStats
) -> list[Print]:
    """The trades of an hour of ``node_trades`` (a trade a line). It has no trade id: the
    print's ``tid`` is its time in ms times 10^6 plus its position among the coin's prints
    of that ms, unique per coin and time as the engine's duplicate rule needs."""
    out: list[Print] = []
    seen: dict[tuple[str, int], int] = {}
    quoted = _quoted(coins)
    for lineno, line in enumerate(lines, start=1):
        if not any(q in line for q in quoted):
            continue
        try:
            tr = _NODE_TRADE.decode(line)
            ms = iso_ns(tr.time) // NS_PER_MS
        except (msgspec.DecodeError, ValueError) as exc:
            raise ArchiveError(f"{where}:{lineno}: not a node_trades line: {exc}") from None
        if tr.coin not in coins:
            continue
        if len(tr.side_info) != 2:
            raise ArchiveError(f"{where}:{lineno}: side_info must hold [buyer, seller]")
        stats.fills += 2
        k = seen.get((tr.coin, ms), 0)
        seen[(tr.coin, ms)] = k + 1
        buyer, seller = tr.side_info[0].user, tr.side_info[1].user
        out.append(
            Print(tr.coin, tr.side, tr.px, tr.sz, ms, tr.hash, ms * TID_PER_MS + k, buyer, seller)
        )
    out.sort(key=lambda p: p.time)
    return out


def trades_messages(prints: Iterable[Print]) -> Iterator[tuple[int, bytes]]:
    """(time ms, trades message): consecutive prints of one coin at one time go in one
    message, as the WebSocket sends a block's prints."""
    batch: list[Print] = []
    for p in prints:
        if batch and (p.coin != batch[0].coin or p.time != batch[0].time):
            yield _message(batch)
            batch = []
        batch.append(p)
    if batch:
        yield _message(batch)


def _message(batch: list[Print]) -> tuple[int, bytes]:
    doc = {"channel": "trades", "data": [p.doc() for p in batch]}
    return batch[0].time, msgspec.json.encode(doc)
