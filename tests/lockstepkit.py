"""What the lockstep tests share: a short season of the shipped sample, one small HTTP agent
that misbehaves on request, and readers for what a run leaves.

The agent (:data:`AGENT`) is a plain script with httpx (and websockets for ``--ws``), run
through ``arena backtest --agent`` exactly as a builder's agent would be: it knows only
``ARENA_URL`` and ``ARENA_KEY``. Its flags make it slow, hang, crash, reconnect or read
too much at given steps; it prints one line per step (``step N t why``) and one per
answer, into the run's ``agent.out.log``, for the tests to read.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.clirun import ROOT, arena, sample_season

SYNTH = ROOT / "recordings/synth-3coins-20261201.jsonl.gz"
MINUTES = 10  # the season: the sample's first 10 minutes of trading

AGENT = r"""
import argparse, json, os, sys, time
from decimal import Decimal

import httpx

p = argparse.ArgumentParser()
p.add_argument("--wake", default=None)  # a JSON wake set, sent with the first call
p.add_argument("--trade", type=int, default=0)  # an IOC at the touch every N steps
p.add_argument("--sleep", type=float, default=0.0)  # seconds of "thinking" per step
p.add_argument("--hang-at", type=int, default=0)
p.add_argument("--exit-at", type=int, default=0)
p.add_argument("--reads", type=int, default=0)  # GET /v1/account this often at step 1
p.add_argument("--ws", action="store_true")  # steps over the stream instead of /v1/step
p.add_argument("--reconnect-at", type=int, default=0)  # close the stream at this step
p.add_argument("--market", default="0")  # the stream's ?market=
a = p.parse_args()
url, key = os.environ["ARENA_URL"], os.environ["ARENA_KEY"]
auth = {"Authorization": f"Bearer {key}"}
c = httpx.Client(base_url=url, headers=auth, timeout=120)
season = c.get("/v1/season").json()
wake = json.loads(a.wake) if a.wake else None


def act(step):
    n = step["step"]
    print("step", n, step["t"], ",".join(step["why"]), len(step["events"]), flush=True)
    if n == a.exit_at:
        sys.exit(3)
    if n == a.hang_at:
        time.sleep(3600)
    if a.sleep:
        time.sleep(a.sleep)
    if n == 1 and a.reads:
        codes = [c.get("/v1/account").status_code for _ in range(a.reads)]
        print("reads", " ".join(map(str, codes)), flush=True)
    if n == 2 and a.reads:
        print("read2", c.get("/v1/account").status_code, flush=True)
    if a.trade and n % a.trade == 0:
        book = c.get("/v1/book/BTC").json()
        bids, asks = book["levels"]
        buy = (n // a.trade) % 2 == 1
        px = int(Decimal((asks if buy else bids)[0]["px"]) * 10**8)
        body = {"asset": 0, "isBuy": buy, "limitPx": px, "sz": 100000, "reduceOnly": False,
                "encodedTif": 3}
        r = c.post("/v1/orders", json=body)
        print("order", n, step["t"], r.status_code, r.json().get("t"), flush=True)


def by_polling():
    body = {"done": None}
    if wake is not None:
        body["wake"] = wake
    while True:
        step = c.post("/v1/step", json=body).json()
        if step.get("over"):
            print("over", step["end"], flush=True)
            return
        act(step)
        body = {"done": step["step"]}


def by_stream():
    from websockets.sync.client import connect

    ws_url = url.replace("http://", "ws://") + "/v1/stream?market=" + a.market
    first = True
    reconnected = False
    seen = {"market": 0, "other": 0}
    while True:
        with connect(ws_url, additional_headers=auth) as ws:
            if first and wake is not None:
                ws.send(json.dumps({"method": "wake", **wake}))
            first = False
            while True:
                doc = json.loads(ws.recv())
                if "event" in doc:
                    print("event", doc["event"]["kind"], flush=True)
                if doc.get("channel") != "step":
                    seen["market" if "hl" in doc else "other"] += 1
                    continue
                step = doc["data"]
                if step.get("over"):
                    print("over", step["end"], seen["market"], flush=True)
                    return
                if step["step"] == a.reconnect_at and not reconnected:
                    reconnected = True
                    print("closing at", step["step"], flush=True)
                    break  # (the with closes the stream; the step is sent again)
                act(step)
                ws.send(json.dumps({"method": "done", "step": step["step"]}))


if a.ws:
    by_stream()
else:
    by_polling()
"""


def season_file(tmp: Path, minutes: int = MINUTES) -> Path:
    """The sample's season cut to its first ``minutes`` minutes."""
    return sample_season(tmp / "season.json", minutes, name=f"lockstep-{minutes}m")


def agent_file(tmp: Path) -> Path:
    """The agent's program in ``tmp``, written whole or not at all (an agent started while
    another thread rewrote it in place once ran an empty file: exit 0, no call made)."""
    path = tmp / "agent.py"
    part = tmp / f".agent.py.{os.getpid()}.{threading.get_ident()}"
    part.write_text(AGENT, encoding="utf-8")
    os.replace(part, path)
    return path


def agent_cmd(tmp: Path, *flags: str) -> str:
    """The --agent command: this interpreter running the agent with ``flags``."""
    quoted = " ".join(f"'{f}'" for f in flags)
    return f"{sys.executable} {agent_file(tmp)} {quoted}"


def run_agent(
    tmp: Path, out: str, *flags: str, extra: tuple[str, ...] = (), thin: bool = False
) -> Any:
    """``arena backtest --agent ... --json`` over the short season into ``tmp/out``; a full
    run log unless ``thin`` (a thin one hashes the rest of the 6-hour sample at its end)."""
    args = ["backtest", "--agent", agent_cmd(tmp, *flags), str(SYNTH)]
    args += ["--season", str(season_file(tmp)), "--out", str(tmp / out), *extra, "--json"]
    if not thin:
        args.append("--full-log")
    return arena(*args, timeout=120)


def run_agents(
    tmp: Path, *runs: tuple[str, tuple[str, ...], tuple[str, ...]], thin: bool = False
) -> list[Any]:
    """Several ``run_agent(tmp, out, *flags, extra=extra)`` at once (each is mostly
    waiting on the other process: two cores run three of them in little more than one's
    time)."""
    season_file(tmp)  # (written once, before they start)
    agent_file(tmp)
    with ThreadPoolExecutor(len(runs)) as pool:
        jobs = [
            pool.submit(run_agent, tmp, out, *flags, extra=extra, thin=thin)
            for out, flags, extra in runs
        ]
        return [job.result() for job in jobs]


def output(tmp: Path, out: str) -> list[str]:
    """The agent's printed lines."""
    return (tmp / out / "agent.out.log").read_text(encoding="utf-8").splitlines()


def remote(report: dict[str, Any], entry: str = "agent") -> dict[str, int]:
    for e in report["entries"]:
        if e["entry"] == entry:
            counts: dict[str, int] = e["remote"]
            return counts
    raise AssertionError(f"no entry {entry} in the report")


def own_lines(run_log: Path) -> list[dict[str, Any]]:
    """The run log's own inputs (orders, cancels), as dicts."""
    out = []
    for raw in run_log.read_text(encoding="utf-8").splitlines()[1:]:
        doc = json.loads(raw)
        if "arena" in doc and doc["arena"]["type"] in ("order", "cancel"):
            out.append(doc)
    return out
