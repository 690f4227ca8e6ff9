"""An example agent that trades a hosted season over HTTP (not a backtest strategy).

It is a plain script, run beside `arena host` (or against the organisers' server), with
only httpx: it does over the network what a strategy file does in-process, and is the
shape of code an agent builder ships. See docs/api.md.

    ARENA_KEY=... .venv/bin/python strategies/http_agent.py --url http://127.0.0.1:8000

Each round (every --every seconds, so that it stays under the season's request limit):
reads the book and its account; when flat, buys a little through the ask with an IOC
(a taker fill), and rests a post-only bid well below the market; when long, sells the
position through the bid with a reduce-only IOC. A resting bid older than --quote-s is
cancelled, and so is everything still open when it stops (then the position is closed).

It handles the API's answers as an agent must:
- 422 (a rule said no): it reads the reason and adapts (PositionCapExceeded: smaller
  orders; OrderTooSmall: larger; TooManyOpenOrders: cancel what is open;
  OrderAlreadyExists: a new cloid; SeasonNotActive: wait for the start, or stop after the
  end); the order is in the log either way, so it never resends the same one blindly.
- 429 (over the limit): it waits the Retry-After seconds, then retries once.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

import httpx

E8 = 10**8
ALO, IOC = 1, 3


def on_grid(px_e8: int, sz_decimals: int, up: bool) -> int:
    """A price on Hyperliquid's perp grid: 5 significant figures, at most 6 - szDecimals
    decimals (whole numbers always valid), rounded up or down."""
    px = Decimal(px_e8) / E8
    decimals = min(max(0, 6 - sz_decimals), max(0, 4 - px.adjusted()))
    q = px.quantize(Decimal(1).scaleb(-decimals), ROUND_CEILING if up else ROUND_FLOOR)
    return int(q * E8)


def lots_for(usd: int, px_e8: int, sz_decimals: int) -> int:
    """The size (e8, whole lots, rounded up) worth about ``usd`` dollars at ``px_e8``."""
    lot = 10 ** (8 - sz_decimals)
    raw = usd * 10**6 * 10**10 // px_e8
    return max(lot, -(-raw // lot) * lot)


def e8(text: str) -> int:
    return int(Decimal(text) * E8)


class Agent:
    def __init__(self, url: str, key: str, coin: str, usd: int, quote_s: float) -> None:
        self.http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=10
        )
        self.coin = coin
        self.usd = usd
        self.quote_s = quote_s
        self.cloids = itertools.count(int(time.time() * 1000) << 16)
        self.quotes: dict[str, float] = {}  # cloid of a resting bid -> when it was sent
        self.fills_seen = 0
        self.since = 0
        self.over = False
        season = self.call("GET", "/v1/season")
        market = next((m for m in season["markets"] if m["coin"] == coin), None)
        if market is None:
            raise SystemExit(f"{coin} is not a market of season {season['id']}")
        self.asset, self.sz_decimals = market["asset"], market["szDecimals"]
        self.start_ms = season["start"]

    # ---- the API, with 429 handled ---------------------------------------------------

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """Send one request; on 429 wait Retry-After and retry once. Returns the JSON
        answer (an error's too: the caller looks at "error")."""
        for _ in (1, 2):
            r = self.http.request(method, path, json=body)
            if r.status_code != 429:
                break
            wait = int(r.headers.get("Retry-After", "1"))
            print(f"429 on {path}: waiting {wait} s", file=sys.stderr)
            time.sleep(wait)
        if r.status_code in (401, 400, 413) or r.status_code >= 500:
            raise SystemExit(f"{method} {path}: HTTP {r.status_code} {r.text}")
        return r.json()

    def order(self, is_buy: bool, px: int, sz: int, tif: int, reduce_only: bool) -> str | None:
        """Place an order; its cloid, or None when a rule refused it (after adapting)."""
        cloid = f"0x{next(self.cloids):x}"
        body = {
            "asset": self.asset,
            "isBuy": is_buy,
            "limitPx": px,
            "sz": sz,
            "reduceOnly": reduce_only,
            "encodedTif": tif,
            "cloid": cloid,
        }
        answer = self.call("POST", "/v1/orders", body)
        if "error" not in answer:
            return cloid
        reason = answer["error"]
        print(f"order refused: {reason}", file=sys.stderr)
        if reason == "PositionCapExceeded":
            self.usd = max(10, self.usd // 2)
        elif reason == "OrderTooSmall":
            self.usd += 5
        elif reason == "TooManyOpenOrders":
            self.cancel_all()
        elif reason == "SeasonNotActive":
            self.over = time.time() * 1000 >= self.start_ms
        return None

    def cancel(self, cloid: str) -> None:
        answer = self.call("POST", "/v1/cancel", {"cloid": cloid})
        if "error" in answer:  # OrderNotFound: it already left (filled IOC, expired, ...)
            print(f"cancel {cloid}: {answer['error']}", file=sys.stderr)
        self.quotes.pop(cloid, None)

    def cancel_all(self) -> None:
        for o in self.call("GET", "/v1/orders")["orders"]:
            if o["cancel_at"] is None:
                self.call("POST", "/v1/cancel", {"oid": o["oid"]})
        self.quotes.clear()

    # ---- one round ---------------------------------------------------------------------

    def round(self) -> None:
        book = self.call("GET", f"/v1/book/{self.coin}")
        bids, asks = book["levels"]
        if not bids or not asks or book["stale"]:
            return
        bid, ask = e8(bids[0]["px"]), e8(asks[0]["px"])
        account = self.call("GET", "/v1/account")
        pos = next((p["sz"] for p in account["positions"] if p["coin"] == self.coin), 0)
        now = time.monotonic()
        for cloid, sent in list(self.quotes.items()):
            if now - sent > self.quote_s:
                self.cancel(cloid)  # done with it: frees its slot and reserve
        if pos > 0:
            self.order(False, on_grid(bid * 99 // 100, self.sz_decimals, False), pos, IOC, True)
        elif pos == 0:
            take = on_grid(ask * 1001 // 1000, self.sz_decimals, True)
            self.order(True, take, lots_for(self.usd, take, self.sz_decimals), IOC, False)
            if not self.quotes:
                low = on_grid(bid * 98 // 100, self.sz_decimals, False)
                cloid = self.order(True, low, lots_for(self.usd, low, self.sz_decimals), ALO, False)
                if cloid is not None:
                    self.quotes[cloid] = now
        fills = self.call("GET", f"/v1/fills?since={self.since}")["fills"]
        new = [f for f in fills if f["seq"] > self.fills_seen]
        for f in new:
            side = "bought" if f["isBuy"] else "sold"
            print(f"fill: {side} {f['sz'] / E8:g} {self.coin} at {f['px'] / E8:g}")
        if new:
            self.fills_seen = new[-1]["seq"]
            self.since = new[-1]["t"]

    def finish(self) -> None:
        """Cancel everything still open and close the position."""
        self.cancel_all()
        account = self.call("GET", "/v1/account")
        for p in account["positions"]:
            if p["coin"] == self.coin and p["sz"] and p["mark"]:
                px = on_grid(
                    p["mark"] * (99 if p["sz"] > 0 else 101) // 100, self.sz_decimals, False
                )
                self.order(p["sz"] < 0, px, abs(p["sz"]), IOC, True)
        print(f"done: {self.fills_seen} fills, equity {account['equity'] / 10**6:,.2f} USDC")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="http://127.0.0.1:8000", help="the arena host")
    ap.add_argument("--key", default=os.environ.get("ARENA_KEY"), help="or $ARENA_KEY")
    ap.add_argument("--coin", default="BTC")
    ap.add_argument("--usd", type=int, default=15, help="order size in dollars")
    ap.add_argument("--seconds", type=float, default=300, help="how long to trade")
    ap.add_argument("--every", type=float, default=2.5, help="seconds between rounds")
    ap.add_argument("--quote-s", type=float, default=6, help="cancel resting bids this old")
    args = ap.parse_args(argv)
    if not args.key:
        ap.error("give --key KEY or set ARENA_KEY (arena register NAME prints it)")
    agent = Agent(args.url, args.key, args.coin, args.usd, args.quote_s)
    stop_at = time.monotonic() + args.seconds
    try:
        while time.monotonic() < stop_at and not agent.over:
            agent.round()
            time.sleep(args.every)
    except KeyboardInterrupt:
        pass
    agent.finish()


if __name__ == "__main__":
    main()
