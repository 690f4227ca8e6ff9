"""An example agent that trades a season over HTTP (a script, not a backtest strategy).

It is a plain script with only httpx: it does over the network what a strategy file does
in-process, and is the shape of code an agent builder ships. See docs/api.md. It runs
beside `arena host` (or against the organisers' server) in wall time:

    ARENA_KEY=... .venv/bin/python strategies/http_agent.py --url http://127.0.0.1:8000

or, unchanged, in lockstep over recorded days (`arena backtest --agent`, which sets
ARENA_URL, ARENA_KEY and ARENA_LOCKSTEP=1 in its environment):

    arena backtest --agent ".venv/bin/python strategies/http_agent.py" LOG --vs baselines

Each round it reads the book and its account; when flat, it buys a little through the ask
with an IOC (a taker fill) and rests a post-only bid well below the market; when long, it
sells the position through the bid with a reduce-only IOC. A resting bid older than
--quote-s is cancelled.

When rounds happen: live, every --every seconds of wall time (it stays under the
season's request limit), and at the end it cancels everything open and closes the
position. In lockstep (--lockstep, or ARENA_LOCKSTEP=1) it loops on POST /v1/step instead
of sleeping: with --wake book (the default) the server wakes it on every book of its coin
and it plays a round on the first book of each --every-ms period (a minute); with --wake
timer it is woken only once a --every-ms, by the server's timer, and plays a round each
time. Its cloids then come from the step's simulated time, never the wall clock, so two
runs send the same bytes. strategies/http_twin.py is the --wake book logic as a Python
strategy: both give the same fills.

It handles the API's answers as an agent must:
- 422 (a rule said no): it reads the reason and adapts at its next round
  (PositionCapExceeded: smaller orders; OrderTooSmall: larger; TooManyOpenOrders: cancel
  what is open; live, SeasonNotActive: wait for the start, or stop after the end); the
  order is in the log either way, so it never resends the same one blindly.
- 429 (over the limit): live, it waits the Retry-After seconds, then retries once; in
  lockstep it gives up the rest of the step (waiting would not move the simulated clock).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import sys
import time
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

import httpx

E8 = 10**8
ALO, IOC = 1, 3
WAKE_BOOK = {"channels": ["l2Book"], "events": False, "marks": False, "every_ms": None}
WAKE_TIMER = {"coins": [], "channels": [], "events": False, "marks": False}


def on_grid(px_e8: int, sz_decimals: int, up: bool) -> int:
    """A price on Hyperliquid's perp grid: 5 significant figures, at most 6 - szDecimals
    decimals (whole numbers always valid), rounded up or down."""
    px = Decimal(px_e8) / E8
    decimals = min(max(0, 6 - sz_decimals), max(0, 4 - px.adjusted()))
    q = px.quantize(Decimal(1).scaleb(-decimals), ROUND_CEILING if up else ROUND_FLOOR)
    return int(q * E8)


def lots_for(usd: int, px_e8: int, sz_decimals: int) -> int:
    """The size (e8, whole lots, rounded up) worth about ``usd`` dollars at ``px_e8``."""
    lot: int = 10 ** (8 - sz_decimals)
    raw = usd * 10**6 * 10**10 // px_e8
    return max(lot, -(-raw // lot) * lot)


def e8(text: str) -> int:
    return int(Decimal(text) * E8)


def adapt_usd(usd: int, reason: str) -> int:
    """The order size after a 422 ``reason`` (the twin strategy adapts the same way)."""
    if reason == "PositionCapExceeded":
        return max(10, usd // 2)
    if reason == "OrderTooSmall":
        return usd + 5
    return usd


class Skip(Exception):
    """A 429 in lockstep: the rest of this step is given up (the clock waits for no one)."""


class Agent:
    def __init__(
        self, url: str, key: str, coin: str, usd: int, quote_s: float, lockstep: bool = False
    ) -> None:
        # a lockstep step is a long poll: it waits as long as the other agents think
        self.http = httpx.Client(
            base_url=url,
            headers={"Authorization": f"Bearer {key}"},
            timeout=httpx.Timeout(10, read=None if lockstep else 10),
        )
        self.coin = coin
        self.usd = usd
        self.quote_ms = int(quote_s * 1000)
        self.lockstep = lockstep
        self.t = 0  # lockstep: the simulated time (ms) of the step being handled
        self.cloids = itertools.count(int(time.time() * 1000) << 16)
        self.quotes: dict[str, int] = {}  # cloid of a resting bid -> when it was sent (ms)
        self.refused: list[str] = []  # 422 reasons of orders, adapted to at the next round
        self.fills_seen = 0
        self.since = 0
        self.over = False
        season = self.call("GET", "/v1/season")
        market = next((m for m in season["markets"] if m["coin"] == coin), None)
        if market is None:
            raise SystemExit(f"{coin} is not a market of season {season['id']}")
        self.asset, self.sz_decimals = market["asset"], market["szDecimals"]
        self.start_ms = season["start"]

    def now_ms(self) -> int:
        """The clock rounds are timed by: simulated in lockstep, else the wall's."""
        return self.t if self.lockstep else int(time.monotonic() * 1000)

    # ---- the API, with 429 handled ---------------------------------------------------

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """Send one request; on 429 wait Retry-After and retry once (in lockstep: Skip).
        Returns the JSON answer (an error's too: the caller looks at "error")."""
        for _ in (1, 2):
            r = self.http.request(method, path, json=body)
            if r.status_code != 429:
                break
            if self.lockstep:
                print(f"429 on {path}: skipping the rest of the step at {self.t}", file=sys.stderr)
                raise Skip
            wait = int(r.headers.get("Retry-After", "1"))
            print(f"429 on {path}: waiting {wait} s", file=sys.stderr)
            time.sleep(wait)
        if r.status_code in (401, 400, 413) or r.status_code >= 500:
            raise SystemExit(f"{method} {path}: HTTP {r.status_code} {r.text}")
        return r.json()

    def order(self, is_buy: bool, px: int, sz: int, tif: int, reduce_only: bool) -> str | None:
        """Place an order; its cloid, or None when a rule refused it (noted, to adapt)."""
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
        print(f"order refused: {answer['error']}", file=sys.stderr)
        self.refused.append(answer["error"])
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

    def adapt(self) -> None:
        """Act on the 422s of the last round."""
        refused, self.refused = self.refused, []
        for reason in refused:
            self.usd = adapt_usd(self.usd, reason)
            if reason == "TooManyOpenOrders":
                self.cancel_all()
            elif reason == "SeasonNotActive" and not self.lockstep:
                self.over = time.time() * 1000 >= self.start_ms

    def round(self) -> None:
        self.adapt()
        book = self.call("GET", f"/v1/book/{self.coin}")
        bids, asks = book["levels"]
        if not bids or not asks or book["stale"]:
            return
        bid, ask = e8(bids[0]["px"]), e8(asks[0]["px"])
        account = self.call("GET", "/v1/account")
        pos = next((p["sz"] for p in account["positions"] if p["coin"] == self.coin), 0)
        now = self.now_ms()
        for cloid, sent in list(self.quotes.items()):
            if now - sent > self.quote_ms:
                self.cancel(cloid)  # done with it: frees its slot and reserve
        if pos > 0:
            self.order(False, on_grid(bid * 99 // 100, self.sz_decimals, False), pos, IOC, True)
        elif pos == 0:
            take = on_grid(ask * 1001 // 1000, self.sz_decimals, True)
            self.order(True, take, lots_for(self.usd, take, self.sz_decimals), IOC, False)
            if not self.quotes:
                low = on_grid(bid * 98 // 100, self.sz_decimals, False)
                bid_cloid = self.order(
                    True, low, lots_for(self.usd, low, self.sz_decimals), ALO, False
                )
                if bid_cloid is not None:
                    self.quotes[bid_cloid] = now
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

    # ---- lockstep --------------------------------------------------------------------

    def step(self, done: int | None, wake: dict[str, Any] | None = None) -> dict[str, Any]:
        """Say "done with step ``done``" and wait for the next step (or the end)."""
        body: dict[str, Any] = {"done": done}
        if wake is not None:
            body["wake"] = wake
        for attempt in range(5):  # a dropped long poll: ask again (the step is re-delivered)
            try:
                r = self.http.post("/v1/step", json=body)
                break
            except httpx.TransportError:
                if attempt == 4:
                    raise
                time.sleep(0.2)
        if r.status_code != 200:
            raise SystemExit(f"POST /v1/step: HTTP {r.status_code} {r.text}")
        answer: dict[str, Any] = r.json()
        return answer

    def run_lockstep(self, wake: str, every_ms: int) -> None:
        """Loop on POST /v1/step: a round on each due step, until the run is over."""
        if wake == "timer":
            step = self.step(None, WAKE_TIMER | {"every_ms": every_ms})
        else:
            step = self.step(None, WAKE_BOOK | {"coins": [self.coin]})
        period: int | None = None  # --wake book: the period of the last round
        steps = rounds = 0
        while not step.get("over"):
            steps += 1
            self.t = step["t"]
            if wake == "timer":
                due = "timer" in step["why"]
            else:  # the first book of its coin in each period
                due = f"book:{self.coin}" in step["why"] and self.t // every_ms != period
            if due:
                period = self.t // every_ms
                self.cloids = itertools.count(self.t << 16)  # the same every run
                rounds += 1
                with contextlib.suppress(Skip):
                    self.round()
            step = self.step(step["step"])
        print(f"over: {steps} steps, {rounds} rounds, {self.fills_seen} fills seen")


def main(argv: list[str] | None = None) -> None:
    env = os.environ
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--url", default=env.get("ARENA_URL", "http://127.0.0.1:8000"), help="or $ARENA_URL"
    )
    ap.add_argument("--key", default=env.get("ARENA_KEY"), help="or $ARENA_KEY")
    ap.add_argument("--coin", default="BTC")
    ap.add_argument("--usd", type=int, default=15, help="order size in dollars")
    ap.add_argument("--seconds", type=float, default=300, help="live: how long to trade")
    ap.add_argument("--every", type=float, default=2.5, help="live: seconds between rounds")
    ap.add_argument("--quote-s", type=float, default=6, help="cancel resting bids this old")
    ap.add_argument(
        "--lockstep",
        action="store_true",
        default=env.get("ARENA_LOCKSTEP") == "1",
        help="loop on POST /v1/step (arena backtest --agent sets ARENA_LOCKSTEP=1)",
    )
    ap.add_argument(
        "--wake",
        choices=("book", "timer"),
        default="book",
        help="lockstep: woken by every book of --coin (a round on the first of each period) "
        "or by a timer once a period",
    )
    ap.add_argument(
        "--every-ms", type=int, default=60_000, help="lockstep: the period of rounds (ms)"
    )
    args = ap.parse_args(argv)
    if not args.key:
        ap.error("give --key KEY or set ARENA_KEY (arena register NAME prints it)")
    if args.every_ms <= 0:
        ap.error("--every-ms: a positive number of milliseconds")
    agent = Agent(args.url, args.key, args.coin, args.usd, args.quote_s, args.lockstep)
    if args.lockstep:
        agent.run_lockstep(args.wake, args.every_ms)
        return
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
