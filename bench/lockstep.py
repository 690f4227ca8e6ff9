"""Benchmark: an agent over HTTP in lockstep vs the same logic in-process.

Run from the repo root::

    python bench/lockstep.py                  # the shipped 6 h sample, 3 rounds
    python bench/lockstep.py --hours 1 --rounds 5
    python bench/lockstep.py --json           # one JSON object on stdout, for programs

Issue 15's question: how many lockstep steps a second does the server sustain with a
trivial agent over loopback, and what does backtesting an agent over HTTP cost against
the same logic as a Python strategy? Every measurement is ``arena backtest`` as a user
runs it (a subprocess: interpreter start, the lockstep server, the agent's process, the
run log and the report included), rounds interleaved (n, s, r, w, p, h, n, ...):

  (n) a Python strategy whose ``on_book`` does nothing, woken at every book of every coin:
      the in-process floor for the same wake-ups;
  (s) a trivial agent woken at every book of every coin over ``POST /v1/step`` (httpx,
      one keep-alive connection): it says done and nothing else;
  (r) the same with the standard library's http.client instead of httpx (less client CPU:
      closer to what the server alone sustains);
  (w) the same agent over the WebSocket (``{"method": "done"}`` for each step message);
  (p) strategies/http_twin.py, in-process;
  (h) strategies/http_agent.py in lockstep (``--wake book``), the same logic over HTTP:
      its fills are checked equal to (p)'s.

Printed: steps per second of (s), (r) and (w) over the whole run, and per step beyond (n)
(the cost of a round trip); (h)/(p), the wall-time ratio of the agent to its twin.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/lockstep.py``: make ``bench`` importable
    sys.path.insert(0, str(ROOT))

from arena_tui.host.lockstep_run import OUTPUT_FILE  # noqa: E402
from bench.replay import Series, machine, say  # noqa: E402

SAMPLE = "recordings/synth-3coins-20261201.jsonl.gz"
PYTHON = shlex.quote(sys.executable)

NOOP_BOOKS = """\
from arena_tui.strategy import Book, Context, Strategy


class NoopBooks(Strategy):
    def on_book(self, ctx: Context, book: Book) -> None:
        pass
"""

STEP_AGENT = """\
import os

import httpx

api = httpx.Client(
    base_url=os.environ["ARENA_URL"],
    headers={"Authorization": "Bearer " + os.environ["ARENA_KEY"]},
    timeout=httpx.Timeout(10, read=None),
)
body = {"done": None, "wake": {"channels": ["l2Book"]}}
n = 0
while True:
    step = api.post("/v1/step", json=body).json()
    if step.get("over"):
        break
    n += 1
    body = {"done": step["step"]}
print(f"steps {n}")
"""

RAW_AGENT = """\
import http.client
import json
import os
from urllib.parse import urlsplit

url = urlsplit(os.environ["ARENA_URL"])
conn = http.client.HTTPConnection(url.hostname, url.port)
head = {"Authorization": "Bearer " + os.environ["ARENA_KEY"], "Content-Type": "application/json"}
body = {"done": None, "wake": {"channels": ["l2Book"]}}
n = 0
while True:
    conn.request("POST", "/v1/step", json.dumps(body), head)
    step = json.loads(conn.getresponse().read())
    if step.get("over"):
        break
    n += 1
    body = {"done": step["step"]}
print(f"steps {n}")
"""

WS_AGENT = """\
import json
import os

from websockets.sync.client import connect

url = os.environ["ARENA_URL"].replace("http", "ws", 1) + "/v1/stream?market=0"
key = {"Authorization": "Bearer " + os.environ["ARENA_KEY"]}
n = 0
with connect(url, additional_headers=key, max_size=None) as ws:
    ws.send(json.dumps({"method": "wake", "channels": ["l2Book"]}))
    for raw in ws:
        msg = json.loads(raw)
        if msg.get("channel") == "error":
            raise SystemExit(f"error: {msg}")
        if msg.get("channel") != "step":
            continue
        if msg["data"].get("over"):
            break
        n += 1
        ws.send(json.dumps({"method": "done", "step": msg["data"]["step"]}))
print(f"steps {n}")
"""


def season_file(path: Path, hours: float) -> Path:
    """The first ``hours`` of the sample (whole minutes), Season 0 rules."""
    end = 1796083200000 + int(hours * 3_600_000) // 60_000 * 60_000
    markets = "".join(
        f'\n[[markets]]\ncoin = "{c}"\nasset = {a}\nszDecimals = {d}\n'
        for c, a, d in (("BTC", 0, 5), ("ETH", 1, 4), ("SOL", 5, 2))
    )
    path.write_text(f'id = "bench-lockstep"\nstart = 1796083200000\nend = {end}\n{markets}')
    return path


def backtest(tmp: Path, label: str, args: list[str], season: Path | None) -> tuple[float, Path]:
    """One ``arena backtest ARGS SAMPLE``: its wall time and its run directory."""
    out = tmp / f"{label}-{time.monotonic_ns()}"
    cmd = [sys.executable, "-m", "arena_tui.cli", "backtest", *args, SAMPLE, "--out", str(out)]
    if season is not None:
        cmd += ["--season", str(season)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        log = out / OUTPUT_FILE
        said = log.read_text()[-1500:] if log.exists() else ""
        raise SystemExit(f"({label}) failed: {done.stderr.strip()[-1500:]}\n{said}")
    return seconds, out


def steps_of(out: Path) -> int:
    """What the trivial agent counted (its last line of output: ``steps N``)."""
    lines = (out / OUTPUT_FILE).read_text().split()
    return int(lines[lines.index("steps") + 1])


def fills_of(out: Path) -> list[dict[str, Any]]:
    rows = [json.loads(s) for s in (out / "fills.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k != "entry"} for r in rows]


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    season = season_file(tmp / "season.toml", args.hours) if args.hours else None
    (tmp / "noop_books.py").write_text(NOOP_BOOKS)
    (tmp / "step_agent.py").write_text(STEP_AGENT)
    (tmp / "raw_agent.py").write_text(RAW_AGENT)
    (tmp / "ws_agent.py").write_text(WS_AGENT)
    plan = {
        "n": [str(tmp / "noop_books.py")],
        "s": ["--agent", f"{PYTHON} {shlex.quote(str(tmp / 'step_agent.py'))}"],
        "r": ["--agent", f"{PYTHON} {shlex.quote(str(tmp / 'raw_agent.py'))}"],
        "w": ["--agent", f"{PYTHON} {shlex.quote(str(tmp / 'ws_agent.py'))}"],
        "p": ["strategies/http_twin.py"],
        "h": ["--agent", f"{PYTHON} strategies/http_agent.py"],
    }
    if args.no_ws:
        del plan["w"]
    series = {label: Series(label) for label in plan}
    steps: dict[str, int] = {}
    same_fills = True
    fills = 0
    for r in range(args.rounds):
        outs: dict[str, Path] = {}
        for label, argv in plan.items():
            say(f"round {r + 1}/{args.rounds}: ({label})")
            seconds, outs[label] = backtest(tmp, label, argv, season)
            series[label].seconds.append(seconds)
        for label in ("s", "r", "w"):
            if label in outs:
                steps[label] = steps_of(outs[label])
        agent, twin = fills_of(outs["h"]), fills_of(outs["p"])
        same_fills = same_fills and agent == twin
        fills = len(agent)
    doc: dict[str, Any] = {
        "sample": SAMPLE,
        "hours": args.hours or 6,
        "rounds": args.rounds,
        "seconds": {
            k: {"best": round(s.best, 3), "median": round(s.median, 3)} for k, s in series.items()
        },
        "steps": steps,
        "agent_fills": fills,
        "agent_fills_equal_twin": same_fills,
        "machine": machine(),
    }
    n = series["n"].best
    for label in steps:
        best = series[label].best
        doc[f"{label}_steps_per_s"] = round(steps[label] / best)
        extra = best - n
        doc[f"{label}_step_us_beyond_n"] = round(extra / steps[label] * 1e6) if extra > 0 else None
    doc["h_over_p_best"] = round(series["h"].best / series["p"].best, 2)
    doc["h_over_p_median"] = round(series["h"].median / series["p"].median, 2)
    return doc


def report(doc: dict[str, Any]) -> str:
    s = doc["seconds"]
    names = {
        "n": "(n) in-process, on_book does nothing",
        "s": "(s) trivial agent, POST /v1/step (httpx)",
        "r": "(r) the same, http.client",
        "w": "(w) trivial agent, WebSocket",
        "p": "(p) strategies/http_twin.py, in-process",
        "h": "(h) strategies/http_agent.py, lockstep",
    }
    rows = [
        f"lockstep: {doc['sample']}, {doc['hours']:g} h, {doc['rounds']} rounds, "
        f"{doc['machine']['cpu'] or 'cpu ?'}, {doc['machine']['python']}",
        f"{'measurement':<42} {'best s':>8} {'median s':>9}",
    ]
    for label, name in names.items():
        if label in s:
            rows.append(f"{name:<42} {s[label]['best']:>8.3f} {s[label]['median']:>9.3f}")
    for label, how in (
        ("s", "POST /v1/step, httpx"),
        ("r", "POST /v1/step, http.client"),
        ("w", "WebSocket"),
    ):
        if label in doc["steps"]:
            beyond = doc[f"{label}_step_us_beyond_n"]
            extra = f"; {beyond} us a step beyond (n)" if beyond is not None else ""
            rows.append(
                f"{how}: {doc['steps'][label]:,} steps, {doc[f'{label}_steps_per_s']:,} "
                f"steps/s over the whole run{extra}"
            )
    same = "the same" if doc["agent_fills_equal_twin"] else "NOT the same"
    rows.append(
        f"(h)/(p) = {doc['h_over_p_best']} best, {doc['h_over_p_median']} median: the agent "
        f"over HTTP against its twin in-process ({doc['agent_fills']} fills, {same})"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=0, help="cut the sample (default: all 6 h)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-ws", action="store_true", help="leave out (w)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds: at least 1")
    with tempfile.TemporaryDirectory(prefix="bench-lockstep-") as tmp:
        doc = run(args, Path(tmp))
    print(json.dumps(doc) if args.json else report(doc))


if __name__ == "__main__":
    main()
