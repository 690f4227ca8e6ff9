"""``arena host`` on the live feed: the fake Hyperliquid (tests/fakehl.py) on loopback.

The host takes ``arena_tui.run.live.LiveFeed`` (the recorder's client) as its market source:
every market frame logged verbatim with its receive time, a gap when the connection
drops, the feed's own ticks replaced by the host's (exactly one a second), and an agent's
order filled against the books it delivered.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import httpx

from arena_tui.host.feeds import LiveHostFeed
from arena_tui.host.plan import HostOptions
from arena_tui.host.register import register
from arena_tui.host.server import Host
from arena_tui.logs.logfile import LogReader
from arena_tui.record.feed import Backoff, FeedConfig, wall_ms
from engine.units import E8
from tests.fakehl import FakeHL
from tests.hostkit import log_rows, order, season_file, wait_until


def test_live_market_data_is_logged_verbatim_and_trades_fill_on_it(tmp_path: Path) -> None:
    btc = [{"coin": "BTC", "asset": 0, "szDecimals": 5}]
    season = season_file(tmp_path / "season.json", markets=btc, rate_limit_requests=10**6)
    log = tmp_path / "season.jsonl"
    notes: list[str] = []
    with FakeHL() as srv:
        cfg = FeedConfig(srv.ws_url, ("BTC",))
        feed = LiveHostFeed(cfg, backoff=Backoff(1, 20), clock=wall_ms, note=notes.append)
        host = Host(HostOptions(log=log, season=season, port=0), feed=feed, note=notes.append)
        host.start()
        try:
            key = register(log, "alice", None, wall_ms).key
            auth = {"Authorization": f"Bearer {key}"}
            with httpx.Client(base_url=host.info["url"], headers=auth) as c:
                wait_until(lambda: c.get("/v1/book/BTC").json()["t"] is not None)
                ask = c.get("/v1/book/BTC").json()["levels"][1][0]["px"]
                limit = int(float(ask)) + 100  # a whole number of dollars is always on the grid
                placed = c.post("/v1/orders", json=order(px=limit, tif=3))
                assert placed.status_code == 200, placed.text
                wait_until(lambda: c.get("/v1/fills").json()["fills"] != [])
                (fill,) = c.get("/v1/fills").json()["fills"]
                assert fill["liquidity"] == "taker" and fill["px"] <= limit * E8
                srv.inject("close")  # the connection drops under the host
                srv.wait(lambda: srv.connections == 2 and srv.data_on(2) > 20, "a reconnect")
                wait_until(lambda: b'"type":"gap"' in log.read_bytes())
                wait_until(lambda: log.read_bytes().count(b'"type":"tick"') >= 2)
        finally:
            host.stop()
        sent = {s.frame for s in srv.market_sent()}
    rows = log_rows(log)
    raw_lines = log.read_bytes().split(b"\n")[1:-1]
    market = [x for x in raw_lines if b'"hl":' in x]
    assert market and all(x[x.index(b'"hl":') + 5 : -1] in sent for x in market)  # verbatim
    ts = [r["t"] for r in rows]
    assert ts == sorted(ts)
    ticks = [r["t"] for r in rows if r.get("arena", {}).get("type") == "tick"]
    seconds = [t // 1000 for t in ticks]  # (a tick is stamped max(its second, the last t))
    assert seconds and seconds == sorted(set(seconds))  # one a second: the feed's are dropped
    assert all(b - a <= 2000 for a, b in itertools.pairwise(ticks))
    (gap,) = [r["arena"] for r in rows if r.get("arena", {}).get("type") == "gap"]
    assert gap["reason"] == "disconnected"
    assert any("connected to" in n for n in notes) and any("lost the feed" in n for n in notes)
    assert sum(1 for _ in LogReader([str(log)])) == len(rows)
