"""Benchmark: ``arena host`` under many entries at their rate limit and a market-data burst.

Run from the repo root::

    python bench/host.py                      # 1,200 entries, 10 s a load, market at 600x
    python bench/host.py --entries 1500 --seconds 20 --speed 3000
    python bench/host.py --json               # one JSON object on stdout, for programs

It starts the real server (``arena host --replay recordings/synth-3coins-20261201.jsonl.gz
--speed S``, a subprocess, fsync on, its log on this machine's disk) under a season of
Season 0 rules (20 requests per entry in any 10 s), registers the entries through the
running server (``arena_tui.host.register``: the control socket), then runs two loads on
loopback from this process, one keep-alive connection per entry, each entry sending an
order every 500 ms (its limit, evenly spaced, phases spread):

  load 1: all the entries (2 x entries orders/s offered): accepted orders per second;
  load 2: 100 entries (200 orders/s): the answer latency, p50 and p99.

Orders are IOC bids 5% under the mark: accepted (200), never filled, closed when they
activate on the next fresh book, so no entry runs out of slots. The client is a minimal
HTTP/1.1 writer on asyncio streams (httpx would cost more CPU than the server on 2 cores).
Nothing is asserted: the targets (>= 2,000 accepted orders/s; p99 < 20 ms at 200 orders/s)
are reported as met or not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena_tui.host.register import register  # noqa: E402
from engine.season import MINUTE_MS  # noqa: E402

SYNTH = ROOT / "recordings" / "synth-3coins-20261201.jsonl.gz"
MARKETS = [
    {"coin": "BTC", "asset": 0, "szDecimals": 5},
    {"coin": "ETH", "asset": 1, "szDecimals": 4},
    {"coin": "SOL", "asset": 5, "szDecimals": 2},
]
TARGET_RATE = 2_000
TARGET_P99_MS = 20.0
PERIOD_S = 0.5  # 20 requests per 10 s


def say(text: str) -> None:
    sys.stderr.write(f"bench: {text}\n")
    sys.stderr.flush()


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def start_host(work: Path, speed: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    start = wall_ms() // MINUTE_MS * MINUTE_MS
    season = work / "bench.json"
    doc = {"id": "bench", "start": start, "end": start + 60 * MINUTE_MS, "markets": MARKETS}
    season.write_text(json.dumps(doc))
    args = ["--season", str(season), "--log", str(work / "season.jsonl")]
    return launch([*args, "--replay", str(SYNTH), "--speed", speed])


def launch(
    args: list[str], *, timeout: float = 60, stderr: IO[Any] | None = None
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """``arena host ARGS --port 0 --json`` as a subprocess; once it listens, its ready line."""
    cmd = [sys.executable, "-m", "arena_tui.cli", "host", *args, "--port", "0", "--json"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True)
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline() if ready else ""
    if not line:
        proc.kill()
        raise SystemExit(f"bench: the host did not start (exit {proc.wait()})")
    return proc, json.loads(line)


def http_request(method: str, path: str, key: str | None = None, body: bytes = b"") -> bytes:
    """One HTTP/1.1 request's bytes, kept alive, with the entry's key if given."""
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    kind = "Content-Type: application/json\r\n" if body else ""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}{kind}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class Entry:
    def __init__(self, port: int, key: str, body: bytes) -> None:
        self.port = port
        self.request = http_request("POST", "/v1/orders", key, body)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def send(self) -> tuple[int, float]:
        """One order; (status, latency in ms)."""
        status, _, ms = await self.exchange(self.request)
        return status, ms

    async def exchange(self, request: bytes) -> tuple[int, bytes, float]:
        """Any request (``http_request``) on this connection: (status, body, ms)."""
        assert self.reader is not None and self.writer is not None
        started = time.perf_counter()
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        body = await self.reader.readexactly(length)
        return status, body, (time.perf_counter() - started) * 1000


async def load(entries: list[Entry], seconds: float) -> dict[str, Any]:
    """Every entry sends an order every PERIOD_S for ``seconds``; statuses and latencies."""
    statuses: dict[int, int] = {}
    latencies: list[float] = []
    begin = time.perf_counter() + 0.2
    end = begin + seconds

    async def run(e: Entry, phase: float) -> None:
        n = 0
        while True:
            due = begin + phase + n * PERIOD_S
            if due >= end:
                return
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            status, ms = await e.send()
            statuses[status] = statuses.get(status, 0) + 1
            latencies.append(ms)
            n += 1

    rng = random.Random(7)
    await asyncio.gather(*(run(e, rng.uniform(0, PERIOD_S)) for e in entries))
    elapsed = time.perf_counter() - begin
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else 0.0

    return {
        "offered_per_s": round(len(entries) / PERIOD_S),
        "seconds": round(elapsed, 2),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "accepted_per_s": round(statuses.get(200, 0) / elapsed, 1),
        "p50_ms": round(pct(0.50), 2),
        "p99_ms": round(pct(0.99), 2),
        "max_ms": round(latencies[-1], 2) if latencies else 0.0,
    }


async def bench(port: int, keys: list[str], body: bytes, seconds: float) -> dict[str, Any]:
    entries = [Entry(port, k, body) for k in keys]
    for i in range(0, len(entries), 100):
        await asyncio.gather(*(e.connect() for e in entries[i : i + 100]))
    say(f"load 1: {len(entries):,} entries at their limit for {seconds:g} s")
    full = await load(entries, seconds)
    await asyncio.sleep(10)  # the limiter's window empties before the second load
    light_entries = entries[:100]
    for e in light_entries:  # (a fresh connection each: idle ones may have been closed)
        assert e.writer is not None
        e.writer.close()
        await e.connect()
    say(f"load 2: 100 entries at their limit (200 orders/s) for {seconds:g} s")
    light = await load(light_entries, seconds)
    for e in entries:
        assert e.writer is not None
        e.writer.close()
    return {"load_full": full, "load_200": light}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=1200)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--speed", default="600", help="market data: times real time")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.entries < 100:
        ap.error("--entries: at least 100 (the second load uses 100)")
    with tempfile.TemporaryDirectory(dir=ROOT, prefix=".bench-host-") as tmp:
        work = Path(tmp)
        proc, info = start_host(work, args.speed)
        try:
            say(f"host on {info['url']}; registering {args.entries:,} entries")
            log = work / "season.jsonl"
            keys = [register(log, f"e{i}", None, wall_ms).key for i in range(args.entries)]
            mark = 101_900  # ~ the recording's first BTC price: 5% under it, a lot of 0.0002
            body = json.dumps(
                {"asset": 0, "isBuy": True, "limitPx": int(mark * 0.95) * 10**8, "sz": 20_000}
                | {"reduceOnly": False, "encodedTif": 3}
            ).encode()
            lines_before = sum(1 for _ in log.open("rb"))
            started = time.perf_counter()
            result = asyncio.run(bench(info["port"], keys, body, args.seconds))
            lines = sum(1 for _ in log.open("rb")) - lines_before
            result["log_lines_per_s"] = round(lines / (time.perf_counter() - started))
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
    full, light = result["load_full"], result["load_200"]
    result["target_rate_met"] = full["accepted_per_s"] >= TARGET_RATE
    result["target_p99_met"] = light["p99_ms"] < TARGET_P99_MS
    result |= {"entries": args.entries, "speed": args.speed, "fsync": True}
    if args.json:
        print(json.dumps(result))
        return
    yes = {True: "met", False: "NOT met"}
    print(
        f"arena host: {args.entries:,} entries at 20 requests per 10 s, market data replayed "
        f"at {args.speed}x, fsync on; {result['log_lines_per_s']:,} log lines/s overall"
    )
    print(
        f"  load 1: {full['offered_per_s']:,} orders/s offered: {full['accepted_per_s']:,.0f} "
        f"accepted/s (statuses {full['statuses']}), p50 {full['p50_ms']} ms, p99 "
        f"{full['p99_ms']} ms; target >= {TARGET_RATE:,}/s: {yes[result['target_rate_met']]}"
    )
    print(
        f"  load 2: {light['offered_per_s']} orders/s: p50 {light['p50_ms']} ms, p99 "
        f"{light['p99_ms']} ms, max {light['max_ms']} ms; target p99 < {TARGET_P99_MS:g} ms: "
        f"{yes[result['target_p99_met']]}"
    )


if __name__ == "__main__":
    main()
