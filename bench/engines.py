"""Benchmark: the compiled engine against its Python sources, side by side in one run.

Run from the repo root, with the engine built (``pip install -e .``)::

    python bench/engines.py                 # 3 interleaved rounds
    python bench/engines.py --rounds 5 --inputs 500000 --hours 12
    python bench/engines.py --json          # one JSON object on stdout

Each workload runs in fresh worker processes, one under ``ARENA_ENGINE=pure`` and one under
``ARENA_ENGINE=compiled``, interleaved (pure, compiled, pure, compiled, ...); a worker does
one untimed run (imports, page cache, memos) and then ``--repeat`` timed runs. The
workloads are the other benches' in-process rows:

  replay        ``replay([log], season)`` on bench/replay.py's generated log (``--inputs``);
  backtest      bench/backtest.py's (b'): ``Backtest.run`` with momentum, no files written,
                on ``arena synth --coins BTC,ETH,SOL --hours H --seed 7``;
  backtest-0    the same with a strategy that has no hooks (n): the engine and the runner;
  backtest-0w   (n) from the day cache (nw): books checked once, when the cache was written;
  touch         bench/peers.py's in-process touch quoter on its raw BTC day (``--peer-hours``);
  touch-0       the same day, a strategy with no hooks.

Both CPU seconds (``time.process_time``: what the work cost, whatever else the machine runs)
and wall seconds are reported, best of all rounds, with pure / compiled. Each pair's results
(inputs, fills) must agree, or the bench stops. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/engines.py``: make ``bench`` importable
    sys.path.insert(0, str(ROOT))

ENGINES = ("pure", "compiled")
WORKLOADS = ("replay", "backtest", "backtest-0", "backtest-0w", "touch", "touch-0")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---- the workers (one workload, one engine, a fresh process) -------------------------------


def workload(name: str, work: Path) -> Callable[[], dict[str, Any]]:
    """The workload ``name`` on the files in ``work``: a function running it once."""
    from arena_tui.run.replay import replay
    from arena_tui.season.file import load_season, resolve_season
    from bench.backtest import NOTHING, runner_only
    from bench.peers import arena_core

    if name == "replay":
        season = load_season(str(work / "bench-replay.toml"))
        log = str(work / "bench-replay.jsonl")
        return lambda: {"inputs": replay([log], season).inputs}
    if name.startswith("backtest"):
        day = str(work / "synth.jsonl")
        season = resolve_season([day], None)
        nothing = work / "nothing.py"
        nothing.write_text(NOTHING, encoding="utf-8")
        cached = name == "backtest-0w"
        strategy = ROOT / "strategies" / "momentum.py" if name == "backtest" else nothing

        def backtest() -> dict[str, Any]:
            res = runner_only(day, season, None, strategy, cache=cached)
            return {"inputs": res.inputs, "fills": len(res.entrants[0].stats.fills)}

        return backtest
    run = arena_core(work / "peers" / "day.jsonl.lz4", work / "peers")
    which = "touch" if name == "touch" else "nothing"
    return lambda: run(which)


def worker(name: str, work: Path, repeat: int) -> dict[str, Any]:
    import engine

    fn = workload(name, work)
    first = fn()
    walls, cpus = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        got = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        if {k: got.get(k) for k in ("inputs", "fills")} != {
            k: first.get(k) for k in ("inputs", "fills")
        }:
            raise SystemExit(f"{name}: one run gave {got}, another {first}")
    return {
        "engine": engine.ENGINE,
        "compiled": engine.COMPILED,
        "wall_s": min(walls),
        "cpu_s": min(cpus),
        "inputs": first.get("inputs"),
        "fills": first.get("fills"),
    }


# ---- the parent: the files once, then the workers interleaved --------------------------------


def prepare(work: Path, args: argparse.Namespace) -> None:
    from bench import genlog
    from bench.backtest import synth
    from bench.peers import META, NOTHING, TOUCH, write_raw

    say(f"bench/replay.py's log: {args.inputs:,} inputs ...")
    genlog.write_log(work, args.inputs, 20261207)
    say(f"arena synth --coins BTC,ETH,SOL --hours {args.hours:g} --seed 7 ...")
    synth(work / "synth.jsonl", "BTC,ETH,SOL", args.hours, 7)
    peers = work / "peers"
    peers.mkdir()
    say(f"bench/peers.py's raw BTC day: {args.peer_hours:g} h, imported ...")
    write_raw(peers / "raw.gz", args.peer_hours, 7, 620, 1.5)
    cmd = [sys.executable, "-m", "arena_tui.cli", "import", "hftbacktest", str(peers / "raw.gz")]
    cmd += ["--meta", str(META), "--out", str(peers / "day.jsonl.lz4")]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    (peers / "touch.py").write_text(TOUCH, encoding="utf-8")
    (peers / "nothing.py").write_text(NOTHING, encoding="utf-8")


def spawn(name: str, engine: str, work: Path, repeat: int) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--dir", str(work)]
    cmd += ["--repeat", str(repeat)]
    env = {**os.environ, "ARENA_ENGINE": engine, "ARENA_CACHE_DIR": str(work / "cache")}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name} under {engine} failed: {done.stderr.strip()[-2000:]}")
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from bench.replay import machine

    prepare(work, args)
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {
        w: {e: [] for e in ENGINES} for w in args.workloads
    }
    for i in range(args.rounds):
        for name in args.workloads:
            for engine in ENGINES:
                got = spawn(name, engine, work, args.repeat)
                rows[name][engine].append(got)
                say(
                    f"round {i + 1}/{args.rounds}  {name:12} {engine:8} "
                    f"cpu {got['cpu_s']:7.3f} s  wall {got['wall_s']:7.3f} s"
                )
            pure, compiled = rows[name]["pure"][-1], rows[name]["compiled"][-1]
            if not compiled["compiled"] or pure["compiled"]:
                raise SystemExit(f"the engines did not run as asked: {compiled['engine']}")
            for key in ("inputs", "fills"):
                if pure[key] != compiled[key]:
                    raise SystemExit(f"{name}: {key} {pure[key]} (pure) != {compiled[key]}")
    summary = {}
    for name, by in rows.items():
        best = {e: {k: min(r[k] for r in by[e]) for k in ("cpu_s", "wall_s")} for e in ENGINES}
        p, c = best["pure"], best["compiled"]
        inputs = by["pure"][0]["inputs"]
        summary[name] = {
            "inputs": inputs,
            "fills": by["pure"][0]["fills"],
            "pure": p,
            "compiled": c,
            "cpu_ratio": p["cpu_s"] / c["cpu_s"],
            "wall_ratio": p["wall_s"] / c["wall_s"],
            "compiled_inputs_per_cpu_s": inputs / c["cpu_s"] if inputs else None,
        }
    return {"machine": machine(), "args": vars(args), "rows": rows, "summary": summary}


def report(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    out = [
        f"# bench/engines.py: pure vs compiled engine, best of {doc['args']['rounds']} rounds "
        f"x {doc['args']['repeat']} runs",
        f"# {m.get('cpu')}, {m.get('cpus_usable')} usable cores, {m.get('python')}; "
        f"load average {m.get('loadavg')}",
        "",
        "| workload | inputs | pure cpu s | compiled cpu s | pure / compiled (cpu) "
        "| (wall) | compiled inputs per cpu s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in doc["summary"].items():
        rate = s["compiled_inputs_per_cpu_s"]
        out.append(
            f"| {name} | {s['inputs'] or 0:,} | {s['pure']['cpu_s']:.3f} | "
            f"{s['compiled']['cpu_s']:.3f} | {s['cpu_ratio']:.2f}x | {s['wall_ratio']:.2f}x | "
            f"{rate:,.0f} |"
            if rate
            else f"| {name} | | {s['pure']['cpu_s']:.3f} | {s['compiled']['cpu_s']:.3f} | "
            f"{s['cpu_ratio']:.2f}x | {s['wall_ratio']:.2f}x | |"
        )
    return "\n".join(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/engines.py",
        description="Time the compiled engine against its Python sources (ARENA_ENGINE), "
        "side by side, on the other benches' in-process workloads.",
    )
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--repeat", type=int, default=2, help="timed runs per worker (default 2)")
    p.add_argument("--inputs", type=int, default=200_000, help="replay log inputs (200,000)")
    p.add_argument("--hours", type=float, default=6.0, help="arena synth hours (default 6)")
    p.add_argument("--peer-hours", type=float, default=3.0, help="touch day hours (default 3)")
    p.add_argument(
        "--workloads",
        default=",".join(WORKLOADS),
        help=f"comma-separated, of {', '.join(WORKLOADS)}",
    )
    p.add_argument("--keep", action="store_true", help="keep the temp dir")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.add_argument("--worker", choices=WORKLOADS, help=argparse.SUPPRESS)
    p.add_argument("--dir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.workloads = [w for w in args.workloads.split(",") if w]
    bad = [w for w in args.workloads if w not in WORKLOADS]
    if bad:
        p.error(f"unknown workload {bad[0]!r}: want one of {', '.join(WORKLOADS)}")
    if args.rounds < 1 or args.repeat < 1:
        p.error("--rounds and --repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, Path(args.dir), args.repeat)))
        return 0
    work = Path(tempfile.mkdtemp(prefix="arena-engines-"))
    try:
        doc = run(args, work)
    finally:
        if args.keep:
            say(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(doc, indent=2) if args.json else report(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
