"""Benchmark: a four-week synthetic season on ``arena host``, 50 entrants trading over HTTP.

Run from the repo root::

    python bench/season.py --days 2 --agents 10 --speed 2880 --no-verify   # ~2 minutes
    python bench/season.py                  # 28 days, 50 agents at 2016x: see the end
    python bench/season.py --json           # one JSON object on stdout, for programs
    python bench/season.py --report .bench-season/last-result.json   # a saved run's table

The season's market data is ``arena synth`` days (BTC, ETH, SOL and HYPE, Season 0's coins:
a 20-level book per coin every ~5 s, every print, asset contexts; about 393,000 lines and
250 MB a day), generated once into ``--work``/days and reused. The real server runs them as
a subprocess, ``arena host --season soak.json --log ... --replay DAY... --speed N`` (fsync on,
its log on this machine's disk), under Season 0's rules (seasons/season0.toml: the same
rules_sha256) with a window covering the run. ``--agents`` entries register through the
running host and trade on loopback through the API (bench/season_agents.py: 40% makers,
30% takers, 10% readers, 20% idle). While it runs, every second: the host's RSS and CPU
(/proc), the log's size and ``/metrics`` (feed lag, book age, lines written).

At the end the host is restarted on the same log, each start timed from the process's
start to the answer of an authenticated order: when ``arena host --checkpoint-every``
exists, with checkpoints after a kill -9, with them after SIGINT, and without them
(``off``) after a kill -9; else once, today's host after SIGINT (checkpoints "not
available"). Then ``arena verify URL`` (download, replay, compare) and ``arena replay LOG``
of the final log are timed (inputs/s, MB/s).

Time here is the log's: the host re-stamps the days onto its wall clock, so one simulated
day lasts 86,400 / speed seconds (~43 s at 2016x) and the rules' times (activation delay,
rate limit, minute marks, checkpoints) run on that clock. The agents' rates are wall rates
under the rate limit (20 requests in 10 s): at 2016x a maker's order every ~2.5 s is one
every ~84 simulated minutes. Nothing is asserted; the goals (RSS flat and under
--rss-ceiling-mib, order p99 flat, restart with checkpoints under 3 s) are reported as met
or not.

The full run (28 days, 50 agents, 2016x) took 27.6 minutes with --no-verify on this shared
2-core machine (2026-12-06, load 12-22), the days cached: 20 minutes of season, then the
restarts (a full replay of the 7 GB log: 4 minutes) and arena replay (2.5 minutes); arena
verify adds about 8-10 minutes more. The first run also generates the days (about 30 s
each, two at a time: 8-15 minutes, 1.8 GB).
"""

from __future__ import annotations

import argparse
import asyncio
import calendar
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402

from arena_tui.host.plan import raw_header  # noqa: E402
from arena_tui.host.register import register  # noqa: E402
from arena_tui.host.restamp import SpeedError, parse_speed  # noqa: E402
from arena_tui.host.stalls import trace_path  # noqa: E402
from arena_tui.season.file import input_bounds, load_season, write_season  # noqa: E402
from bench.host import Entry, http_request, launch, say, wall_ms  # noqa: E402
from bench.replay import machine  # noqa: E402
from bench.season_agents import Agent, Market, Record, kinds  # noqa: E402
from bench.season_stalls import print_stalls, stall_figures  # noqa: E402
from bench.season_stats import px_e8, rss_kib  # noqa: E402
from bench.season_watch import Watch, flatness, report_figures, sim_clock  # noqa: E402

SEASON0 = ROOT / "seasons" / "season0.toml"
FIRST_DAY = "2026-12-07"  # Season 0's first day
COINS = "BTC,ETH,SOL,HYPE"
REACHED = "reached the end of the recording"  # what the host says when the replay is over
MARGIN_MS = 3 * 3_600_000  # the season's window outlasts the replay: restarts take orders


def arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena_tui.cli", *args]


def host_has(option: str) -> bool:
    """Whether this tree's ``arena host`` has ``option`` (from its --help)."""
    env = os.environ | {"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    out = subprocess.run(
        arena("host", "--help"), cwd=ROOT, capture_output=True, text=True, env=env, check=False
    )
    return option in out.stdout


# ---- the days ------------------------------------------------------------------------------


def day_path(work: Path, i: int, seed: int) -> Path:
    day = time.strftime("%Y%m%d", time.gmtime(_first_day_s() + i * 86_400))
    return work / "days" / f"synth-BTC-ETH-SOL-HYPE-{day}-24h-seed{seed + i}.jsonl.lz4"


def _first_day_s() -> int:
    return calendar.timegm(time.strptime(FIRST_DAY, "%Y-%m-%d"))


def make_day(work: Path, i: int, seed: int) -> dict[str, Any]:
    """Day ``i`` (cached): ``arena synth`` of 24 h from FIRST_DAY + i, seed + i."""
    path = day_path(work, i, seed)
    meta = path.with_name(path.name + ".json")
    if path.is_file() and meta.is_file():
        doc: dict[str, Any] = json.loads(meta.read_text())
        return doc
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.lz4")
    start = time.strftime("%Y-%m-%d", time.gmtime(_first_day_s() + i * 86_400))
    cmd = arena("synth", "--coins", COINS, "--hours", "24", "--seed", str(seed + i))
    cmd += ["--start", start, "--out", str(tmp), "--force", "--json"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench: arena synth failed: {done.stderr.strip()[-300:]}")
    tmp.rename(path)
    meta.write_text(done.stdout)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def ensure_days(work: Path, days: int, seed: int, jobs: int) -> list[dict[str, Any]]:
    missing = sum(not day_path(work, i, seed).is_file() for i in range(days))
    if missing:
        say(f"generating {missing} synth day(s) into {work / 'days'} ({jobs} at a time)")
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda i: make_day(work, i, seed), range(days)))


# ---- the host ------------------------------------------------------------------------------


class Run:
    """One season's run directory: its season file, log and host arguments."""

    def __init__(
        self, work: Path, days: list[Path], speed: str, checkpoint: str | None, stall_ms: int
    ) -> None:
        self.dir = work / time.strftime("run-%Y%m%dT%H%M%SZ", time.gmtime())
        self.dir.mkdir(parents=True)
        self.days = days
        self.speed = speed
        self.checkpoint = checkpoint
        self.stall_ms = stall_ms if host_has("--stall-trace") else 0  # 0: not traced
        self.log = self.dir / "season.jsonl"
        self.err = (self.dir / "host.err").open("ab")
        first, last = input_bounds([str(p) for p in days])
        self.span_ms = last - first
        rate = parse_speed(speed)
        start = wall_ms() // 60_000 * 60_000
        length = math.ceil(self.span_ms * rate.denominator / rate.numerator / 60_000) * 60_000
        season = msgspec.structs.replace(
            load_season(SEASON0), id="soak", start=start, end=start + length + MARGIN_MS
        )
        self.season_file = write_season(season, self.dir)

    def args(self, checkpoint: str | None) -> list[str]:
        args = ["--season", str(self.season_file), "--log", str(self.log)]
        for p in self.days:
            args += ["--replay", str(p)]
        # every agent connects from 127.0.0.1, where a real season's come from their own
        # addresses: the public endpoints' per-client limits would count 50 entrants as one
        args += ["--speed", self.speed, "--public-limit", "off", "--public-total", "off"]
        if self.stall_ms:
            args += ["--stall-trace", str(self.stall_ms)]
        return args + (["--checkpoint-every", checkpoint] if checkpoint else [])

    def start(self, checkpoint: str | None) -> tuple[subprocess.Popen[str], dict[str, Any]]:
        return launch(self.args(checkpoint), timeout=1800, stderr=self.err)

    def noted(self, text: str) -> bool:
        return text in (self.dir / "host.err").read_text(errors="replace")


def stop(proc: subprocess.Popen[str], crash: bool = False) -> float:
    """SIGINT (a clean stop: the host drains, and writes a last checkpoint if it keeps them)
    or, ``crash``, SIGKILL (kill -9: what was not checkpointed must be replayed)."""
    began = time.perf_counter()
    if crash:
        proc.kill()
        proc.wait()
        return time.perf_counter() - began
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(300)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return time.perf_counter() - began


# ---- the season ----------------------------------------------------------------------------


async def trade(
    run: Run, proc: subprocess.Popen[str], port: int, keys: list[tuple[str, str, str]], pace: float
) -> tuple[Record, Watch, dict[str, Any]]:
    """The agents trade until the replay's scheduled end; the watch samples meanwhile, and
    on until the host says the replay reached its end (or 10 min more)."""
    header = raw_header(run.log)["replay"]
    clock = sim_clock(header["origin_t"], header["origin_wall"], Fraction(header["speed"]))
    end_wall = clock.wall(header["origin_t"] + run.span_ms)
    markets = [Market(m.coin, m.asset, m.szDecimals) for m in load_season(SEASON0).markets]
    record = Record()
    agents = [
        Agent(kind, name, key, port, markets, record, seed=i, pace=pace)
        for i, (kind, name, key) in enumerate(keys)
    ]
    watch = Watch(proc.pid, run.log, port, clock)
    watching = asyncio.create_task(watch.run())
    end = time.perf_counter() + (end_wall - wall_ms()) / 1000
    await asyncio.gather(*(a.run(end) for a in agents))
    while not run.noted(REACHED) and wall_ms() - end_wall < 600_000:
        if proc.poll() is not None:
            raise SystemExit(
                f"bench: the host stopped during the run (exit {proc.returncode}): see "
                f"{run.dir / 'host.err'}"
            )
        await asyncio.sleep(0.1)
    finish: dict[str, Any] = {"late_s": round((wall_ms() - end_wall) / 1000, 2)}
    finish["reached_end"] = run.noted(REACHED)
    finish["restart_order"] = await restart_order(port, keys[-1][2])
    watch.stop()
    await watching
    return record, watch, finish


async def restart_order(port: int, key: str) -> bytes:
    """An order to time restarts with: a buy at the deepest bid of BTC's last book (it rests
    unfilled; the book no longer moves), as one request's bytes."""
    conn = Entry(port, key, b"")
    await conn.connect()
    _, raw, _ = await conn.exchange(http_request("GET", "/v1/book/BTC", key))
    assert conn.writer is not None
    conn.writer.close()
    bids = msgspec.json.decode(raw)["levels"][0]
    px = px_e8(bids[-1]["px"])
    body = {"asset": 0, "isBuy": True, "limitPx": px, "sz": 100_000, "reduceOnly": False}
    return http_request("POST", "/v1/orders", key, msgspec.json.encode(body | {"encodedTif": 2}))


async def one_order(port: int, request: bytes) -> int:
    conn = Entry(port, "", b"")
    await conn.connect()
    status, _, _ = await conn.exchange(request)
    assert conn.writer is not None
    conn.writer.close()
    return status


def restart(run: Run, checkpoint: str | None, request: bytes) -> tuple[dict[str, Any], Any]:
    """Start the host on the log; seconds until it listens and until it answers an order."""
    began = time.perf_counter()
    proc, info = run.start(checkpoint)
    listening = time.perf_counter() - began
    status = asyncio.run(one_order(info["port"], request))
    answered = time.perf_counter() - began
    status_text = Path(f"/proc/{proc.pid}/status").read_text()
    row = {
        "checkpoint": checkpoint or "(none)",
        "listening_s": round(listening, 2),
        "answered_s": round(answered, 2),
        "status": status,
        "replayed": info.get("replayed"),
        "peak_rss_mib": round((rss_kib(status_text, "VmHWM") or 0) / 1024, 1),
    }
    return row, (proc, info)


def timed(cmd: list[str]) -> tuple[float, dict[str, Any]]:
    began = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    try:
        doc: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        doc = {"error": (done.stderr or done.stdout).strip()[-300:]}
    return seconds, doc | {"exit": done.returncode}


def season(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    began = time.perf_counter()
    summaries = ensure_days(work, args.days, args.seed, args.jobs)
    days_s = time.perf_counter() - began
    ckpt = host_has("--checkpoint-every")
    days = [day_path(work, i, args.seed) for i in range(args.days)]
    run = Run(work, days, args.speed, None, args.stall_trace)
    run_ckpt = args.checkpoint_every if ckpt else None
    say(
        f"season of {args.days} days at {args.speed}x in {run.dir}; checkpoints: "
        f"{run_ckpt or 'not available in this tree'}"
    )
    proc, info = run.start(run_ckpt)
    names = [(k, f"{k}-{i:02d}") for i, k in enumerate(kinds(args.agents))]
    keys = [(k, n, register(run.log, n, None, wall_ms).key) for k, n in names]
    say(f"host on {info['url']} (pid {proc.pid}); {len(keys)} agents registered; trading")
    record, watch, finish = asyncio.run(trade(run, proc, info["port"], keys, args.pace))
    request = finish.pop("restart_order")
    stalls = stall_figures(trace_path(run.log), watch.clock, watch, args.days)  # (the season's)
    # (checkpoints, how the host before it stopped): with checkpoints after a crash (the
    # tail since the last periodic one replayed) and after a clean stop, then without
    plan: list[tuple[str | None, bool]] = [(None, False)]
    if ckpt:
        plan = [(run_ckpt, True), (run_ckpt, False), ("off", True)]
    stop_s = stop(proc, crash=plan[0][1])
    restarts = []
    live: Any = None
    for n in range(args.restarts):
        for i, (mode, crashed) in enumerate(plan):
            after = "kill -9" if crashed else "SIGINT"
            say(f"restart {n + 1}: checkpoints {mode or '(option not available)'}, after {after}")
            row, live = restart(run, mode, request)
            restarts.append(row | {"after": after})
            if n < args.restarts - 1 or i < len(plan) - 1:
                following = plan[(i + 1) % len(plan)]
                stop(live[0], crash=following[1])
    proc, info = live
    log_bytes = run.log.stat().st_size
    verify: dict[str, Any] = {"skipped": True}
    if args.verify:
        say("arena verify URL (download + replay + compare)")
        verify_s, doc = timed(arena("verify", info["url"], "--json"))
        verify = _rates(verify_s, doc, log_bytes)
    stop(proc)
    say("arena replay LOG")
    replay_s, replay = timed(arena("replay", str(run.log), "--json"))
    result = report_figures(record, watch, args, summaries, log_bytes)
    result["stall_trace_ms"] = run.stall_ms or None
    result["stalls"] = stalls
    result |= {"restarts": restarts, "checkpoints_available": ckpt, "finish": finish}
    result["verify"] = verify
    result["replay"] = _rates(replay_s, replay | {"inputs": count_inputs(run.log)}, log_bytes)
    result["machine"] = machine()
    result |= {"stop_s": round(stop_s, 2), "days_prepare_s": round(days_s, 1)}
    result |= {"rules_sha256": info.get("rules_sha256"), "run_dir": str(run.dir)}
    result["wall_s"] = round(time.perf_counter() - began, 1)
    result["flatness"] = flatness(result)
    if not args.keep:
        shutil.rmtree(run.dir, ignore_errors=True)
    return result


def count_inputs(log: Path) -> int:
    """The log's lines less its header."""
    lines = 0
    with log.open("rb") as f:
        while chunk := f.read(1 << 24):
            lines += chunk.count(b"\n")
    return lines - 1


def _rates(seconds: float, doc: dict[str, Any], log_bytes: int) -> dict[str, Any]:
    inputs = doc.get("inputs")
    out = {"seconds": round(seconds, 2), "exit": doc.get("exit"), "ok": doc.get("ok")}
    out["mb_per_s"] = round(log_bytes / 1e6 / seconds, 1)
    if isinstance(inputs, int):
        out |= {"inputs": inputs, "inputs_per_s": round(inputs / seconds)}
    if "error" in doc:
        out["error"] = doc["error"]
    return out


def main(argv: list[str] | None = None) -> None:
    from bench.season_watch import print_report

    ap = argparse.ArgumentParser(
        description=__doc__,
        epilog="The full run (the defaults): ~28 minutes here with --no-verify, ~38 without it.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--days", type=int, default=28, help="simulated days (default 28)")
    ap.add_argument("--agents", type=int, default=50, help="entrants (default 50)")
    ap.add_argument("--speed", default="2016", help="times real time (2016: a week in 5 min)")
    ap.add_argument("--pace", type=float, default=1.0, help="agents' periods times this")
    ap.add_argument("--seed", type=int, default=7, help="day i is arena synth --seed SEED+i")
    ap.add_argument("--jobs", type=int, default=2, help="synth days generated at a time")
    ap.add_argument("--restarts", type=int, default=1, help="rounds of restarts (each mode)")
    ap.add_argument(
        "--checkpoint-every",
        default="10s",
        help="passed to arena host when it has the option: log (= wall) time between "
        "checkpoints (default 10s: 5.6 simulated hours at 2016x)",
    )
    ap.add_argument(
        "--rss-ceiling-mib", type=float, default=400.0, help="the host's RSS goal (default 400)"
    )
    ap.add_argument(
        "--work",
        type=Path,
        default=ROOT / ".bench-season",
        help="days cached in WORK/days, each run in WORK/run-* (default .bench-season)",
    )
    ap.add_argument(
        "--stall-trace",
        type=int,
        default=100,
        metavar="MS",
        help="the host's --stall-trace: each stall of its loop of MS or more, with the stack "
        "that held it, summed by cause in the report (0: off; default 100)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the run's log and files")
    ap.add_argument(
        "--no-verify", dest="verify", action="store_false", help="skip arena verify URL"
    )
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--report", type=Path, help="print the table of a saved run's JSON; no run")
    args = ap.parse_args(argv)
    if args.report is not None:
        saved = json.loads(args.report.read_text())
        print_report(saved)
        print_stalls(saved)
        return
    try:
        parse_speed(args.speed)
    except SpeedError as exc:
        ap.error(str(exc))
    if not 1 <= args.days <= 28 or args.agents < 2 or args.restarts < 1:
        ap.error("--days 1..28, --agents >= 2, --restarts >= 1")
    result = season(args, args.work.resolve())
    saved = args.work.resolve() / "last-result.json"
    saved.write_text(json.dumps(result, indent=1) + "\n")
    say(f"figures kept in {saved}")
    if args.json:
        print(json.dumps(result))
    else:
        print_report(result)
        print_stalls(result)


if __name__ == "__main__":
    main()
