"""bench/season.py's entrants: makers, takers, readers and idle entries over the real API.

Each agent is one kept-alive loopback connection (``bench.host.Entry``: a minimal HTTP/1.1
client on asyncio streams) and a loop that acts every ``period`` seconds of wall time
(jittered 0.75-1.25x, phases spread):

- **maker**: reads a coin's book, rests a post-only (ALO) order at one of the three best
  levels of a random side, and cancels its oldest once it holds four;
- **taker**: reads a coin's book and sends an IOC through the touch (to the second level);
  every fifth step, and whenever the position cap refuses it, closes its largest position
  with a reduce-only IOC;
- **reader**: polls its fills, open orders and account, and the public scores;
- **idle**: reads its account now and then, never trades.

Every answer's latency is kept with the wall time it was sent at (orders, cancels and
reads apart); 429s are counted and waited out. Sizes are whole lots of $30-150 (the cap
is 12% of $10,000), prices the book's own level prices (always on the tick grid).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import msgspec

from bench.host import Entry, http_request, wall_ms
from bench.season_stats import lots_for, px_e8

PERIOD_S = {"maker": 2.5, "taker": 4.0, "reader": 5.0, "idle": 20.0}
MIX = (("maker", 0.4), ("taker", 0.3), ("reader", 0.1))  # the rest idle
ALO, IOC = 1, 3
_DECODE = msgspec.json.Decoder()
_ENCODE = msgspec.json.Encoder().encode


def kinds(n: int) -> list[str]:
    """The behaviours of ``n`` agents: 40% makers, 30% takers, 10% readers, the rest idle."""
    out: list[str] = []
    for kind, share in MIX:
        out += [kind] * round(n * share)
    out = out[:n]
    return out + ["idle"] * (n - len(out))


@dataclass(frozen=True)
class Market:
    coin: str
    asset: int
    sz_decimals: int


@dataclass
class Record:
    """What every agent measured: (wall ms sent, latency ms) per kind of request."""

    orders: list[tuple[int, float]] = field(default_factory=list)
    cancels: list[tuple[int, float]] = field(default_factory=list)
    reads: list[tuple[int, float]] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    errors: int = 0


class Agent:
    def __init__(
        self,
        kind: str,
        name: str,
        key: str,
        port: int,
        markets: list[Market],
        record: Record,
        *,
        seed: int,
        pace: float = 1.0,
    ) -> None:
        self.kind = kind
        self.name = name
        self.key = key
        self.conn = Entry(port, key, b"")
        self.markets = markets
        self.record = record
        self.rng = random.Random(seed)
        self.period = PERIOD_S[kind] * pace
        self.open: deque[int] = deque()
        self.steps = 0
        self.fills_since = 0

    async def run(self, end: float) -> None:
        """Act every ``period`` (jittered) until ``end`` (``time.perf_counter``)."""
        rng = self.rng
        await self.conn.connect()
        due = time.perf_counter() + rng.uniform(0, self.period)
        while True:
            await asyncio.sleep(max(0.0, min(due, end) - time.perf_counter()))
            if time.perf_counter() >= end:
                break
            try:
                await self.step()
            except (ConnectionError, asyncio.IncompleteReadError, OSError):
                self.record.errors += 1
                self.close()
                try:
                    await self.conn.connect()
                except OSError:  # the host is gone: the bench says so after the run
                    await asyncio.sleep(1.0)
            self.steps += 1
            due = max(due + self.period * rng.uniform(0.75, 1.25), time.perf_counter())
        self.close()

    def close(self) -> None:
        if self.conn.writer is not None:
            self.conn.writer.close()

    async def step(self) -> None:
        if self.kind == "maker":
            await self.make()
        elif self.kind == "taker":
            await self.take()
        elif self.kind == "reader":
            await self.read()
        else:
            await self.call("GET", "/v1/account")

    # ---- the requests --------------------------------------------------------------

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request: (status, decoded body); 429s counted and waited out (not timed)."""
        data = b"" if body is None else _ENCODE(body)
        sent = wall_ms()
        status, raw, ms = await self.conn.exchange(http_request(method, path, self.key, data))
        doc = _DECODE.decode(raw) if raw else None
        rec = self.record
        if status == 429:
            rec.outcomes["429"] += 1
            await asyncio.sleep(1.0)
            return status, doc
        what = "order" if path == "/v1/orders" else "cancel" if path == "/v1/cancel" else "read"
        {"order": rec.orders, "cancel": rec.cancels, "read": rec.reads}[what].append((sent, ms))
        reason = doc.get("error") if status != 200 and isinstance(doc, dict) else None
        rec.outcomes[f"{what} {status}" + (f" {reason}" if reason else "")] += 1
        return status, doc

    async def book(self, coin: str) -> tuple[list[Any], list[Any]] | None:
        status, doc = await self.call("GET", f"/v1/book/{coin}")
        if status != 200 or doc.get("stale"):
            return None
        bids, asks = doc["levels"]
        return (bids, asks) if bids and asks else None

    async def order(
        self, m: Market, buy: bool, px: int, usd: int, tif: int, reduce: int = 0
    ) -> tuple[int, str | None, Any]:
        """(status, the 422 reason or None, the answer)."""
        sz = reduce or lots_for(usd, px, m.sz_decimals)
        body = {"asset": m.asset, "isBuy": buy, "limitPx": px, "sz": sz}
        body |= {"reduceOnly": bool(reduce), "encodedTif": tif}
        status, doc = await self.call("POST", "/v1/orders", body)
        reason = doc.get("error") if status == 422 and isinstance(doc, dict) else None
        return status, reason, doc

    # ---- the behaviours ------------------------------------------------------------

    async def make(self) -> None:
        rng = self.rng
        m = rng.choice(self.markets)
        book = await self.book(m.coin)
        if book is None:
            return
        buy = rng.random() < 0.5
        side = book[0] if buy else book[1]
        level = side[min(rng.randrange(3), len(side) - 1)]
        status, reason, doc = await self.order(
            m, buy, px_e8(level["px"]), rng.randint(30, 150), ALO
        )
        if status == 200:
            self.open.append(doc["oid"])
        elif reason == "PositionCapExceeded":
            await self.flatten()
        elif reason == "TooManyOpenOrders":
            await self.forget_open()
        if len(self.open) >= 4:
            await self.call("POST", "/v1/cancel", {"oid": self.open.popleft()})

    async def forget_open(self) -> None:
        """Our count went wrong (expiries): cancel what the server says is open."""
        status, doc = await self.call("GET", "/v1/orders")
        if status == 200:
            self.open = deque(o["oid"] for o in doc["orders"] if o.get("cancel_at") is None)

    async def take(self) -> None:
        rng = self.rng
        if self.steps % 5 == 4:
            await self.flatten()
        m = rng.choice(self.markets)
        book = await self.book(m.coin)
        if book is None:
            return
        buy = rng.random() < 0.5
        side = book[1] if buy else book[0]
        px = px_e8(side[min(1, len(side) - 1)]["px"])
        _, reason, _ = await self.order(m, buy, px, rng.randint(30, 120), IOC)
        if reason == "PositionCapExceeded":
            await self.flatten()

    async def flatten(self) -> None:
        """Close the largest position with a reduce-only IOC through the book."""
        status, acct = await self.call("GET", "/v1/account")
        if status != 200:
            return
        held = [p for p in acct["positions"] if p["sz"]]
        if not held:
            return
        p = max(held, key=lambda p: abs(p["sz"]) * p["mark"])
        m = next((x for x in self.markets if x.asset == p["asset"]), None)
        book = await self.book(p["coin"]) if m is not None else None
        if m is None or book is None:
            return
        buy = p["sz"] < 0
        side = book[1] if buy else book[0]
        px = px_e8(side[min(2, len(side) - 1)]["px"])
        await self.order(m, buy, px, 0, IOC, reduce=abs(p["sz"]))

    async def read(self) -> None:
        what = self.steps % 4
        if what == 0:
            status, doc = await self.call("GET", f"/v1/fills?since={self.fills_since}")
            if status == 200 and doc["fills"]:
                self.fills_since = doc["fills"][-1]["t"]
        elif what == 1:
            await self.call("GET", "/v1/orders")
        elif what == 2:
            await self.call("GET", "/v1/account")
        else:
            await self.call("GET", "/v1/scores")
