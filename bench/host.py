"""Benchmark: ``arena host`` under many entries at their rate limit and a market-data burst.

Run from the repo root::

    python bench/host.py                      # 1,200 entries, 10 s a load, market at 600x
    python bench/host.py --entries 1500 --seconds 20 --speed 3000
    python bench/host.py --json               # one JSON object on stdout, for programs
    python bench/host.py --only isolation     # only load 3 (readers vs idle)

It starts the real server (``arena host --replay recordings/synth-3coins-20261201.jsonl.gz
--speed S``, a subprocess, fsync on, its log on this machine's disk) under a season of
Season 0 rules (20 requests per entry in any 10 s), registers the entries through the
running server (``arena_tui.host.register``: the control socket), then runs two loads on
loopback from this process, one keep-alive connection per entry, each entry sending an
order every 500 ms (its limit, evenly spaced, phases spread):

  load 1: all the entries (2 x entries orders/s offered): accepted orders per second;
  load 2: 100 entries (200 orders/s): the answer latency, p50 and p99;
  load 3 (reader isolation, ``bench/host_isolation.py``): the same 100 entries' order
  latency with no reader, with ``--readers`` (50) concurrent public readers on the main
  port, and with them on the reader port (``--readers-port``), alternating for
  ``--rounds`` rounds: p50/p95/p99 of each side and each side's ratio to idle (goal: p99
  with readers within 2x of idle).

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
import re
import select
import signal
import socket
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
TARGET_ISOLATION = 2.0  # order p99 with readers / idle p99
LOG_PATHS = ("/v1/log",)
VIEW_PATHS = (
    "/v1/scores",
    "/v1/entries",
    "/v1/entries/e0/equity",
    "/v1/entries/e1/fills",
    "/v1/season",
)


def say(text: str) -> None:
    sys.stderr.write(f"bench: {text}\n")
    sys.stderr.flush()


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def start_host(
    work: Path, speed: str, extra: list[str]
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    start = wall_ms() // MINUTE_MS * MINUTE_MS
    season = work / "bench.json"
    doc = {"id": "bench", "start": start, "end": start + 60 * MINUTE_MS, "markets": MARKETS}
    season.write_text(json.dumps(doc))
    args = ["--season", str(season), "--log", str(work / "season.jsonl")]
    return launch([*args, "--replay", str(SYNTH), "--speed", speed, *extra])


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

    return {
        "offered_per_s": round(len(entries) / PERIOD_S),
        "seconds": round(elapsed, 2),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "accepted_per_s": round(statuses.get(200, 0) / elapsed, 1),
        **percentiles(latencies),
        "latencies": latencies,
    }


def percentiles(latencies: list[float]) -> dict[str, float]:
    """p50/p95/p99/max of sorted ``latencies`` (ms)."""

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else 0.0

    out = {f"p{round(p * 100)}_ms": round(pct(p), 2) for p in (0.50, 0.95, 0.99)}
    return out | {"max_ms": round(latencies[-1], 2) if latencies else 0.0}


async def bench(
    port: int, keys: list[str], body: bytes, args: argparse.Namespace
) -> dict[str, Any]:
    seconds = args.seconds
    entries = [Entry(port, k, body) for k in keys]
    for i in range(0, len(entries), 100):
        await asyncio.gather(*(e.connect() for e in entries[i : i + 100]))
    out: dict[str, Any] = {}
    if args.only in (None, "throughput"):
        say(f"load 1: {len(entries):,} entries at their limit for {seconds:g} s")
        out["load_full"] = await load(entries, seconds)
        await asyncio.sleep(10)  # the limiter's window empties before the second load
        light_entries = await fresh(entries[:100])
        say(f"load 2: 100 entries at their limit (200 orders/s) for {seconds:g} s")
        out["load_200"] = await load(light_entries, seconds)
        out["load_full"].pop("latencies")
        out["load_200"].pop("latencies")
    if args.only in (None, "isolation"):
        if "load_200" in out:
            await asyncio.sleep(10)
        from bench.host_isolation import isolation

        out["isolation"] = await isolation(await fresh(entries[:100]), port, args)
    for e in entries:
        assert e.writer is not None
        e.writer.close()
    return out


async def fresh(entries: list[Entry]) -> list[Entry]:
    """``entries`` on fresh connections (idle ones may have been closed)."""
    for e in entries:
        assert e.writer is not None
        e.writer.close()
        await e.connect()
    return entries


HISTOGRAMS = {  # the host's own view, from GET /metrics: (bucket series, labels it must have)
    "orders": ("arena_request_duration_seconds_bucket", {"route": "/v1/orders", "method": "POST"}),
    "fsync": ("arena_log_fsync_duration_seconds_bucket", {}),
}
_SAMPLE = re.compile(r"([a-z_]+)\{([^}]*)\} ([0-9.e+]+)")
_LABEL = re.compile(r'([a-z_]+)="([^"]*)"')


def scrape(port: int) -> dict[str, dict[float, float]]:
    """The cumulative bucket counts of :data:`HISTOGRAMS` now."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
        c.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := c.recv(1 << 16):
            data += chunk
    out: dict[str, dict[float, float]] = {name: {} for name in HISTOGRAMS}
    for m in _SAMPLE.finditer(data.decode()):
        labels = dict(_LABEL.findall(m.group(2)))
        for name, (series, want) in HISTOGRAMS.items():
            if m.group(1) == series and all(labels.get(k) == v for k, v in want.items()):
                out[name][float(labels["le"])] = float(m.group(3))
    return out


def bucket_percentiles(before: dict[float, float], after: dict[float, float]) -> dict[str, Any]:
    """p50/p99 as the upper bound of the bucket they fall in (ms), of the counts between
    two scrapes; and the share of them over 10 ms."""
    delta = sorted((le, after[le] - before.get(le, 0.0)) for le in after)
    total = delta[-1][1] if delta else 0.0

    def upper(p: float) -> float:
        for le, n in delta:
            if n >= p * total:
                return le * 1000
        return float("inf")

    over = total - next((n for le, n in delta if le >= 0.01), total)
    return {
        "n": int(total),
        "p50_le_ms": upper(0.5),
        "p99_le_ms": upper(0.99),
        "over_10ms": round(over / total, 4) if total else 0.0,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=1200)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--speed", default="600", help="market data: times real time")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", choices=["throughput", "isolation"], help="run only these loads")
    ap.add_argument("--readers", type=int, default=50, help="load 3: public readers")
    ap.add_argument("--rounds", type=int, default=3, help="load 3: idle/readers rounds")
    ap.add_argument("--readers-nice", type=int, default=19, help="load 3: the readers' nice")
    ap.add_argument(
        "--readers-at",
        choices=["both", "main", "port"],
        default="both",
        help="load 3: readers on the main port, on the reader port (arena host "
        "--readers-port), or both sides in turn (default)",
    )
    ap.add_argument(
        "--host-arg", action="append", default=[], help="one more argument to arena host"
    )
    ap.add_argument("--reader-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.reader_child:
        from bench.host_isolation import reader_child

        port, n, seconds = args.reader_child
        reader_child(int(port), int(n), float(seconds))
        return
    if args.entries < 100:
        ap.error("--entries: at least 100 (the second load uses 100)")
    with tempfile.TemporaryDirectory(dir=ROOT, prefix=".bench-host-") as tmp:
        work = Path(tmp)
        extra = list(args.host_arg)
        if args.only in (None, "isolation") and args.readers_at != "main":
            extra += ["--readers-port", "0"]
        proc, info = start_host(work, args.speed, extra)
        args.readers_port_number = info.get("readers_port")
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
            result = asyncio.run(bench(info["port"], keys, body, args))
            lines = sum(1 for _ in log.open("rb")) - lines_before
            result["log_lines_per_s"] = round(lines / (time.perf_counter() - started))
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
    result |= {"entries": args.entries, "speed": args.speed, "fsync": True}
    full, light = result.get("load_full"), result.get("load_200")
    if full is not None and light is not None:
        result["target_rate_met"] = full["accepted_per_s"] >= TARGET_RATE
        result["target_p99_met"] = light["p99_ms"] < TARGET_P99_MS
    if args.json:
        print(json.dumps(result))
        return
    yes = {True: "met", False: "NOT met"}
    print(
        f"arena host: {args.entries:,} entries at 20 requests per 10 s, market data replayed "
        f"at {args.speed}x, fsync on; {result['log_lines_per_s']:,} log lines/s overall"
    )
    if full is not None and light is not None:
        print(
            f"  load 1: {full['offered_per_s']:,} orders/s offered: "
            f"{full['accepted_per_s']:,.0f} accepted/s (statuses {full['statuses']}), p50 "
            f"{full['p50_ms']} ms, p99 {full['p99_ms']} ms; target >= {TARGET_RATE:,}/s: "
            f"{yes[result['target_rate_met']]}"
        )
        print(
            f"  load 2: {light['offered_per_s']} orders/s: p50 {light['p50_ms']} ms, p99 "
            f"{light['p99_ms']} ms, max {light['max_ms']} ms; target p99 < "
            f"{TARGET_P99_MS:g} ms: {yes[result['target_p99_met']]}"
        )
    iso = result.get("isolation")
    if iso is not None:
        from bench.host_isolation import print_isolation

        print_isolation(iso)


if __name__ == "__main__":
    main()
