"""Hyperliquid's S3 archives in miniature, on moto's S3 server on loopback.

The objects are built here in the archives' own formats (docs/data.md) from a synthetic
market (``arena_tui.synth``): each book becomes an archive ``l2Book`` line, each print the
two fills of its trade (``node_fills``: ``[user, fill]`` a line; ``node_fills_by_block``: a
block a line; ``node_trades``: a trade a line), the asset contexts a CSV row a minute. So a
fetched day can be compared with the market it was built from.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
import lz4.frame
from moto.server import ThreadedMotoServer

from arena_tui.synth.feed import BOOK, CTX, TRADES
from arena_tui.synth.generate import Synth, choose_markets
from engine.units import HOUR_MS

ARCHIVE, NODE = "hyperliquid-archive", "hl-mainnet-node-data"
REGION = "ap-northeast-1"
KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
CSV_HEAD = (
    "time,coin,funding,open_interest,prev_day_px,day_ntl_vlm,premium,oracle_px,mark_px,"
    "mid_px,impact_bid_px,impact_ask_px\n"
)


def day_ms(day: str) -> int:
    d = dt.datetime.strptime(day, "%Y%m%d").replace(tzinfo=dt.UTC)
    return int(d.timestamp()) * 1000


def iso(ms: int, ns: int = 0) -> str:
    d = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}{ns:06d}"


@contextmanager
def moto_s3() -> Iterator[tuple[str, Any]]:
    """moto's S3 on 127.0.0.1 (a free port) with the two buckets: (endpoint, client)."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    for bucket in (ARCHIVE, NODE):
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    try:
        yield endpoint, s3
    finally:
        server.stop()


def lz4_bytes(text: bytes) -> bytes:
    return bytes(lz4.frame.compress(text))


@dataclass
class Market:
    """What one day's synthetic market held, by hour: the expected contents of a fetch."""

    books: dict[tuple[str, int], list[tuple[int, bytes]]] = field(default_factory=dict)
    prints: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # hour -> prints
    ctxs: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def synth_day(day: str, coins: list[str], hours: list[int], seed: int = 7) -> Market:
    start = day_ms(day) + min(hours) * HOUR_MS
    end = day_ms(day) + (max(hours) + 1) * HOUR_MS
    synth = Synth(choose_markets(coins, None), seed, start)
    m = Market()
    last_minute: dict[str, int] = {}
    for t, _, kind, _, line in synth.items(end):
        hour = (t - day_ms(day)) // HOUR_MS
        if hour not in hours:
            continue
        doc = json.loads(line)
        raw = line[line.index('"hl":') + 5 : -1].encode()
        hl = doc["hl"]
        if kind == BOOK:
            m.books.setdefault((hl["data"]["coin"], hour), []).append((t, raw))
        elif kind == TRADES:
            m.prints.setdefault(hour, []).extend(hl["data"])
        elif kind == CTX:
            coin = hl["data"]["coin"]
            if last_minute.get(coin) != t // 60_000:  # the archive's CSV: a row a minute
                last_minute[coin] = t // 60_000
                m.ctxs.append((t, hl["data"]))
    return m


def book_object(lines: list[tuple[int, bytes]]) -> bytes:
    out = [
        b'{"time":"%s","ver_num":1,"raw":%s}' % (iso(t, 138_942).encode(), raw) for t, raw in lines
    ]
    return lz4_bytes(b"\n".join(out) + b"\n")


def ctx_object(rows: list[tuple[int, dict[str, Any]]]) -> bytes:
    out = [CSV_HEAD]
    for t, data in rows:
        c = data["ctx"]
        funding = f"{float(c['funding']):.6e}"  # as a float writer spells it: 1.250000e-05
        impact = c.get("impactPxs") or ["", ""]
        cells = [
            iso(t - t % 60_000)[:19] + "Z",
            data["coin"],
            funding,
            c.get("openInterest", ""),
            c.get("prevDayPx", ""),
            c.get("dayNtlVlm", ""),
            c.get("premium") or "",
            c["oraclePx"],
            c["markPx"],
            c.get("midPx") or "",
            impact[0],
            impact[1],
        ]
        out.append(",".join(str(x) for x in cells) + "\n")
    return lz4_bytes("".join(out).encode())


def fills_of(p: dict[str, Any]) -> list[list[Any]]:
    """The two fills of a print, taker first, as the node writes them: ``[user, fill]``."""
    buyer, seller = p["users"]
    out = []
    for user, side in ((buyer, "B"), (seller, "A")):
        fill = {
            "coin": p["coin"],
            "px": p["px"],
            "sz": p["sz"],
            "side": side,
            "time": p["time"],
            "startPosition": "0.0",
            "dir": "Open Long" if side == "B" else "Open Short",
            "closedPnl": "0.0",
            "hash": p["hash"],
            "oid": p["tid"] % 1_000_003,
            "crossed": side == p["side"],
            "fee": "0.0",
            "tid": p["tid"],
            "feeToken": "USDC",
        }
        out.append([user, fill])
    out.sort(key=lambda uf: not uf[1]["crossed"])
    return out


def node_fills_object(prints: list[dict[str, Any]]) -> bytes:
    lines = [json.dumps(uf) for p in prints for uf in fills_of(p)]
    return lz4_bytes(("\n".join(lines) + "\n").encode())


def by_block_object(prints: list[dict[str, Any]], first_block: int = 676_000_000) -> bytes:
    blocks: dict[int, list[list[Any]]] = {}
    for p in prints:
        blocks.setdefault(p["time"], []).extend(fills_of(p))
    lines = []
    for i, (time, events) in enumerate(sorted(blocks.items())):
        doc = {
            "local_time": iso(time + 40, 1),
            "block_time": iso(time, 2),
            "block_number": first_block + i,
            "events": events,
        }
        lines.append(json.dumps(doc))
    return lz4_bytes(("\n".join(lines) + "\n").encode())


def node_trades_object(prints: list[dict[str, Any]]) -> bytes:
    lines = []
    for p in prints:
        side_info = [
            {"user": u, "start_pos": "0.0", "oid": 1, "twap_id": None, "cloid": None}
            for u in p["users"]
        ]
        doc = {
            "coin": p["coin"],
            "side": p["side"],
            "time": iso(p["time"], 984),
            "px": p["px"],
            "sz": p["sz"],
            "hash": p["hash"],
            "trade_dir_override": "Na",
            "side_info": side_info,
        }
        lines.append(json.dumps(doc))
    return lz4_bytes(("\n".join(lines) + "\n").encode())


FILLS = {
    "node_fills": node_fills_object,
    "node_fills_by_block": by_block_object,
    "node_trades": node_trades_object,
}


def put_day(s3: Any, day: str, m: Market, layouts: dict[int, list[str]], coins: list[str]) -> None:
    """Upload a day: books of ``coins`` a coin and hour, the CSV, and each hour's fills in
    each layout ``layouts[hour]`` names."""
    for (coin, hour), lines in m.books.items():
        if coin in coins:
            key = f"market_data/{day}/{hour}/l2Book/{coin}.lz4"
            s3.put_object(Bucket=ARCHIVE, Key=key, Body=book_object(lines))
    s3.put_object(Bucket=ARCHIVE, Key=f"asset_ctxs/{day}.csv.lz4", Body=ctx_object(m.ctxs))
    for hour, names in layouts.items():
        for layout in names:
            body = FILLS[layout](m.prints.get(hour, []))
            s3.put_object(Bucket=NODE, Key=f"{layout}/hourly/{day}/{hour}.lz4", Body=body)


def objects(s3: Any) -> dict[str, int]:
    """Every fixture object's ``s3://bucket/key`` and size."""
    out: dict[str, int] = {}
    for bucket in (ARCHIVE, NODE):
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for o in page.get("Contents", []):
                out[f"s3://{bucket}/{o['Key']}"] = o["Size"]
    return out


def lz4_text(data: bytes) -> bytes:
    return bytes(lz4.frame.decompress(data))
