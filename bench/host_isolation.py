"""Load 3 of ``bench/host.py``: do public readers slow an entrant's orders (issue 26)?

The same 100 entries' order latency (200 orders/s) with no reader, then with ``--readers``
(50) concurrent public readers on the host's main port, then with them on the reader port
(``arena host --readers-port``: a child process following the log), alternating for
``--rounds`` rounds in one run, so the sides share the machine's moments: p50/p95/p99 of
each and each reader side's ratio to idle (goal: p99 with readers within 2x of idle).
``--readers-at main`` or ``port`` runs one reader side only.

The readers run in a child process of the bench (their own CPU, not the bench's loop),
one thread and one kept-alive connection each, each from its own loopback address
(127.0.0.2, ...: a client of its own to the per-client limits), reading in a loop as fast
as answers come: half of them the whole log, the other half the views (the scores, the
entries, one entry's marks and another's fills, the season, in turn); each waits out a
429's Retry-After as a polite client does. They run at nice 19 (``--readers-nice``): they
stand for readers on other machines, whose CPU is not the host's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench.host import (
    HISTOGRAMS,
    LOG_PATHS,
    ROOT,
    TARGET_ISOLATION,
    VIEW_PATHS,
    Entry,
    bucket_percentiles,
    load,
    percentiles,
    say,
    scrape,
)

SIDES = {"main": "main_port", "port": "reader_port"}  # --readers-at: the result's side names
LABELS = {"main_port": "readers on the main port", "reader_port": "readers on the reader port"}


def sides_of(readers_at: str) -> list[str]:
    return list(SIDES.values()) if readers_at == "both" else [SIDES[readers_at]]


async def isolation(entries: list[Entry], port: int, args: argparse.Namespace) -> dict[str, Any]:
    """Load 3 (module docstring), and the host's own view of each side (its /metrics
    histograms: the orders' handling, the log's fsync), to tell the host's time from the
    machine's."""
    sides = sides_of(args.readers_at)
    lat: dict[str, list[float]] = {side: [] for side in ["idle", *sides]}
    got: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    host_side: dict[str, dict[str, dict[float, float]]] = {side: {} for side in lat}
    target = {"main_port": port, "reader_port": args.readers_port_number}
    lags: list[dict[str, float]] = []  # the reader port's own lag figures, after each round

    def add(side: str, before: dict[str, Any], after: dict[str, Any]) -> None:
        for name in HISTOGRAMS:
            acc = host_side[side].setdefault(name, {})
            for le, n in after[name].items():
                acc[le] = acc.get(le, 0.0) + n - before[name].get(le, 0.0)

    for r in range(args.rounds):
        for side in ["idle", *sides]:
            what = "idle" if side == "idle" else f"with {args.readers} {LABELS[side]}"
            say(f"load 3, round {r + 1}/{args.rounds}: 200 orders/s {what}")
            child = None
            if side != "idle":
                child = start_readers(
                    target[side], args.readers, args.seconds + 1.5, args.readers_nice
                )
            before = await asyncio.to_thread(scrape, port)
            lat[side] += (await load(entries, args.seconds))["latencies"]
            add(side, before, await asyncio.to_thread(scrape, port))
            if child is not None:
                out, _ = await asyncio.to_thread(child.communicate, None, 60)
                got[side].append(json.loads(out))
            if side == "reader_port":
                lags.append(await asyncio.to_thread(reader_lag, target[side]))
    for xs in lat.values():
        xs.sort()
    idle = percentiles(lat["idle"])
    result: dict[str, Any] = {
        "readers": args.readers,
        "readers_nice": args.readers_nice,
        "rounds": args.rounds,
        "load_average": os.getloadavg(),
        "idle": idle,
        "sides": sides,
        "host_side": {
            side: {name: bucket_percentiles({}, h) for name, h in by_name.items()}
            for side, by_name in host_side.items()
        },
    }
    for side in sides:
        b = percentiles(lat[side])
        ratio = {
            k: round(b[k] / idle[k], 2) if idle[k] else 0.0 for k in ("p50_ms", "p95_ms", "p99_ms")
        }
        statuses: dict[str, int] = {}
        for one in got[side]:
            for k, v in one["statuses"].items():
                statuses[k] = statuses.get(k, 0) + v
        seconds = sum(x["seconds"] for x in got[side])
        result[side] = {
            "latency": b,
            "ratio": ratio,
            "reader_mb_per_s": round(sum(x["bytes"] for x in got[side]) / 1e6 / seconds, 1),
            "reader_statuses": dict(sorted(statuses.items())),
            "target_met": ratio["p99_ms"] <= TARGET_ISOLATION,
        }
        if side == "reader_port":
            result[side]["lag_ms"] = lags
    return result


def reader_lag(port: int) -> dict[str, float]:
    """The reader port's ``GET /healthz`` ``lag_ms``: its latest lags, from the host's
    fsync of a batch to the batch served there (p50/p99/max, ms)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as c:
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := c.recv(1 << 16):
            data += chunk
    lag: dict[str, float] = json.loads(data.partition(b"\r\n\r\n")[2])["lag_ms"]
    return lag


def print_isolation(iso: dict[str, Any]) -> None:
    yes = {True: "met", False: "NOT met"}
    a = iso["idle"]
    load1, load5, _ = iso["load_average"]
    print(
        f"  load 3: 200 orders/s, {iso['rounds']} rounds, idle / with {iso['readers']} public "
        f"readers (load average {load1:.2f}, {load5:.2f} at the end):"
    )
    for side in iso["sides"]:
        s = iso[side]
        print(
            f"    {LABELS[side]} ({s['reader_mb_per_s']:,} MB/s read, statuses "
            f"{s['reader_statuses']}):"
        )
        b, r = s["latency"], s["ratio"]
        for k in ("p50_ms", "p95_ms", "p99_ms"):
            print(f"      {k[:-3]}: idle {a[k]} ms, with readers {b[k]} ms: {r[k]}x")
        print(
            f"      target p99 with readers <= {TARGET_ISOLATION:g}x idle: {yes[s['target_met']]}"
        )
        for lag in s.get("lag_ms", []):
            print(
                f"      the reader port's lag, the host's fsync to served (its last {lag['n']} "
                f"batches): p50 {lag.get('p50')} ms, p99 {lag.get('p99')} ms, max "
                f"{lag.get('max')} ms"
            )
    for name in HISTOGRAMS:
        cells = [iso["host_side"][side][name] for side in ["idle", *iso["sides"]]]
        print(
            f"    the host's own {name} time (its /metrics buckets), idle / "
            + " / ".join(LABELS[side] for side in iso["sides"])
            + ": p50 <= "
            + " / ".join(f"{c['p50_le_ms']:g}" for c in cells)
            + " ms, p99 <= "
            + " / ".join(f"{c['p99_le_ms']:g}" for c in cells)
            + " ms, over 10 ms "
            + " / ".join(f"{c['over_10ms']:.2%}" for c in cells)
        )


def start_readers(port: int, n: int, seconds: float, nice: int) -> subprocess.Popen[str]:
    script = str(Path(__file__).resolve().parent / "host.py")
    cmd = [sys.executable, script, "--reader-child", str(port), str(n), str(seconds)]
    child = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, preexec_fn=lambda: os.nice(nice)
    )
    assert child.stdout is not None
    if child.stdout.readline().strip() != "ready":
        raise SystemExit("bench: the readers did not start")
    return child


def reader_child(port: int, n: int, seconds: float) -> None:
    """The child: ``n`` reader threads for ``seconds``; prints ready, then one JSON line."""
    stop = time.monotonic() + seconds
    total = [0] * n
    statuses: dict[str, int] = {}
    lock = threading.Lock()

    def read(i: int) -> None:
        buf = bytearray(1 << 20)
        view = memoryview(buf)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((f"127.0.0.{2 + i}", 0))
        sock.connect(("127.0.0.1", port))
        sock.settimeout(30)
        turn = i // 2
        paths = LOG_PATHS if i % 2 == 0 else VIEW_PATHS
        while time.monotonic() < stop:
            path = paths[turn % len(paths)]
            turn += 1
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            head = b""
            while b"\r\n\r\n" not in head:
                got = sock.recv(65536)
                if not got:
                    return
                head += got
            head, _, rest = head.partition(b"\r\n\r\n")
            status = head[9:12].decode()
            pairs = (line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
            fields = {name.strip().lower(): value.strip() for name, value in pairs}
            length = int(fields.get(b"content-length", b"0"))
            left = length - len(rest)
            while left > 0:
                n_read = sock.recv_into(view[: min(left, len(buf))])
                if not n_read:
                    return
                left -= n_read
            total[i] += length
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
            if status == "429":
                wait = float(fields.get(b"retry-after", b"1"))
                time.sleep(max(0.0, min(wait, stop - time.monotonic())))
        sock.close()

    threads = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(n)]
    started = time.monotonic()
    print("ready", flush=True)
    for th in threads:
        th.start()
    for th in threads:
        th.join(seconds + 30)
    elapsed = time.monotonic() - started
    print(json.dumps({"bytes": sum(total), "seconds": elapsed, "statuses": statuses}))
