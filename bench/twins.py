"""Benchmark: the verdict's twins' pass, in one process against split over worker processes.

Run from the repo root::

    python bench/twins.py                       # momentum, a 24 h 3-coin synth day, 1 vs 2
    python bench/twins.py --workers 1,2,4 --rounds 3
    python bench/twins.py --strategy strategies/maker.py --hours 6
    python bench/twins.py --json                # one JSON object on stdout

The day is ``arena synth --coins BTC,ETH,SOL --hours H --seed 7`` (a subprocess: the real
command), its day cache kept in the bench's own cache directory as ``arena synth`` keeps
it. The strategy runs once (untimed) for its trips; then ``run.twins.run_twins`` (100
twins, as ``arena backtest`` makes them for the verdict) runs with each ``--workers``
count in turn, interleaved over ``--rounds``: the wall time a user waits, and this
process's own CPU. Every run's twins (rows, fills, fees, active marks, the desk's books)
must be the same as the first's, or the bench stops: the split changes the time only.

Nothing is asserted. The machine's load average is printed beside the figures: workers
only help when cores are idle (``run.twins.twin_workers`` picks the count from them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/twins.py``: make ``bench`` importable
    sys.path.insert(0, str(ROOT))


def say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def synth_day(work: Path, hours: float) -> Path:
    day = work / "synth.jsonl"
    cmd = [sys.executable, "-m", "arena_tui.cli", "synth", "--coins", "BTC,ETH,SOL"]
    cmd += ["--hours", f"{hours:g}", "--seed", "7", "--out", str(day)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"arena synth failed: {done.stderr.strip()[-2000:]}")
    return day


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from arena_tui.run import twins as tw
    from arena_tui.run.backtest import Backtest
    from arena_tui.run.build import entrants_for
    from arena_tui.run.config import RunConfig
    from arena_tui.run.stats import exit_value
    from arena_tui.run.trips import trips_of
    from arena_tui.season.file import resolve_season
    from bench.replay import machine

    say(f"bench: arena synth, {args.hours:g} h of BTC, ETH, SOL")
    day = str(synth_day(work, args.hours))
    season = resolve_season([day], None)
    say(f"bench: {Path(args.strategy).name} once, for its trips")
    entrants = entrants_for(Path(args.strategy), None)
    result = Backtest(RunConfig(), season, entrants, exit_value=exit_value, echo=False).run([day])
    end = result.replay.end or season.start
    coin_of = {m.asset: m.coin for m in season.markets}.__getitem__
    trips = trips_of(result.entrants[0].stats.fills, coin_of, end)
    if not trips:
        raise SystemExit("the strategy made no trips: no twins to time")
    taken = [r["entry"] for r in result.replay.ranking]
    counts = [int(w) for w in args.workers.split(",")]
    runs: dict[int, list[dict[str, float]]] = {w: [] for w in counts}
    first: Any = None
    for r in range(args.rounds):
        for w in counts:
            say(f"round {r + 1}/{args.rounds}: {w} worker(s)")
            load = os.getloadavg()[0]
            wall, cpu = time.perf_counter(), time.process_time()
            run = tw.run_twins(
                season, [day], trips, window=(season.start, end), taken=taken, workers=w
            )
            runs[w].append(
                {
                    "wall_s": time.perf_counter() - wall,
                    "cpu_s": time.process_time() - cpu,
                    "load1": load,
                }
            )
            key = (run.rows, run.fills, run.fees, run.active, [vars(b) for b in run.books])
            if first is None:
                first = key
            elif key != first:
                raise SystemExit(f"{w} worker(s) gave other twins than the first run")
    twins, fills = len(first[0]), sum(first[1])
    return {
        "machine": machine(),
        "day": {"hours": args.hours, "inputs": result.inputs, "path": day},
        "strategy": args.strategy,
        "trips": len(trips),
        "twins": twins,
        "twin_fills": fills,
        "runs": {str(w): rows for w, rows in runs.items()},
    }


def report(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    rows = [
        f"# bench/twins.py: {Path(doc['strategy']).name}, {doc['day']['hours']:g} h synth day "
        f"({doc['day']['inputs']:,} inputs), {doc['trips']} trips, {doc['twins']} twins "
        f"({doc['twin_fills']:,} twin fills)",
        f"# {m['cpu']}, {m['cpus_usable']} usable cores, {m['python']}",
        "",
        "| workers | wall s (median) | wall s (best) | this process's CPU s | load at start |"
        " vs 1 worker (median wall) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    runs = doc["runs"]
    base = statistics.median(r["wall_s"] for r in runs[next(iter(runs))])
    for w, got in runs.items():
        wall = statistics.median(r["wall_s"] for r in got)
        rows.append(
            f"| {w} | {wall:.2f} | {min(r['wall_s'] for r in got):.2f} | "
            f"{statistics.median(r['cpu_s'] for r in got):.2f} | "
            f"{statistics.median(r['load1'] for r in got):.2f} | {base / wall:.2f}x |"
        )
    rows.append("")
    rows.append("every run's twins were the same (rows, fills, fees, marks, the desk's books)")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python bench/twins.py", description=__doc__.split("\n")[0])
    p.add_argument("--hours", type=float, default=24.0, help="hours of synth day (default 24)")
    p.add_argument("--strategy", default=str(ROOT / "strategies" / "momentum.py"))
    p.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    p.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = p.parse_args(argv)
    if args.rounds < 1 or not 0 < args.hours <= 48:
        p.error("--rounds at least 1, --hours in (0, 48]")
    try:
        if min(int(w) for w in args.workers.split(",")) < 1:
            raise ValueError
    except ValueError:
        p.error("--workers: counts of 1 or more, comma-separated")
    with tempfile.TemporaryDirectory(prefix="arena-twins-") as tmp:
        os.environ["ARENA_CACHE_DIR"] = str(Path(tmp) / "cache")
        doc = measure(args, Path(tmp))
    sys.stdout.write(json.dumps(doc) + "\n" if args.json else report(doc) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
