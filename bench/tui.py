"""Benchmark: a backtest watched in arena-tui at max speed vs the same backtest alone.

Run from the repo root::

    python bench/tui.py                        # the shipped 6-hour synthetic day
    python bench/tui.py --log LOG [--season FILE] [--strategy FILE] [--vs baselines]
    python bench/tui.py --json                 # one JSON object on stdout, for programs

Both sides run exactly what ``arena backtest`` runs (the strategy and the baselines, the
run log written), interleaved over a few rounds (a, b, a, b, ...):

  (a) ``Backtest.run`` alone, in this thread;
  (b) the same backtest in arena-tui's worker thread at max speed, the app headless
      (``App.run_test``, 80x24) applying every snapshot and event, timed from the app's
      start to the run's end as the screen hears of it.

Issue 5 asks for (b) to run at least half as fast as (a): the speed ratio (a)/(b) >= 0.5.
Nothing is asserted; the ratio is printed with whether it meets that.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/tui.py``: make ``bench`` importable
    sys.path.insert(0, str(ROOT))

from arena_tui.run.config import RunConfig  # noqa: E402
from arena_tui.tui.app import make_app  # noqa: E402
from arena_tui.tui.screens.run import RunScreen  # noqa: E402
from arena_tui.tui.source import prepare, watched_run  # noqa: E402
from arena_tui.tui.widgets.activity import ActivityLog  # noqa: E402
from bench.replay import machine, say  # noqa: E402

LOG = ROOT / "recordings" / "synth-3coins-20261201.jsonl.gz"
STRATEGY = ROOT / "strategies" / "momentum.py"
TARGET = 0.5  # (a)/(b): watched, at least half as fast


def alone(spec: RunConfig) -> tuple[float, int]:
    """(a): seconds, and the log inputs the runner read."""
    t0 = time.perf_counter()
    bt, paths = prepare(spec)
    result = bt.run(paths)
    return time.perf_counter() - t0, result.inputs


async def _watched(spec: RunConfig, tab: str) -> tuple[float, dict[str, int]]:
    app = make_app(spec=spec, speed=None)
    t0 = time.perf_counter()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, RunScreen)
        screen.action_tab(tab)
        await asyncio.wait_for(screen.finished.wait(), 3600)
        seconds = time.perf_counter() - t0
        await pilot.pause()
        snap = screen.snapshot
        outcome = screen.outcome
        assert snap is not None and outcome is not None and outcome.error is None
        counts = {
            "inputs": outcome.inputs,
            "snapshots_posted": snap.seq,
            "snapshots_applied": screen.applied,
            "events": screen.query_one(ActivityLog).received,
        }
    return seconds, counts


def watched(spec: RunConfig, tab: str = "orders") -> tuple[float, dict[str, int]]:
    """(b): seconds, and what the screen received, with ``tab`` showing."""
    return asyncio.run(_watched(spec, tab))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/tui.py",
        description="Time a backtest watched in arena-tui at max speed against it alone.",
    )
    p.add_argument("--log", type=Path, default=LOG, help="recording (default: the 6 h synth)")
    p.add_argument("--season", type=Path, help="season file (default: as arena backtest)")
    p.add_argument("--strategy", type=Path, default=STRATEGY, help="default: momentum")
    p.add_argument("--vs", default="baselines", help="as --vs (default: baselines)")
    p.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    p.add_argument(
        "--tab",
        default="orders",
        choices=["orders", "positions", "activity", "market", "leaders"],
        help="the tab showing while (b) runs (default: orders)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    return args


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    def spec(name: str) -> RunConfig:
        out = tmp / name
        shutil.rmtree(out, ignore_errors=True)
        return watched_run((args.log,), args.strategy, args.vs or None, args.season, out=out)

    a: list[float] = []
    b: list[float] = []
    counts: dict[str, int] = {}
    inputs = 0
    for i in range(args.rounds):
        seconds, inputs = alone(spec("alone"))
        a.append(seconds)
        say(f"round {i + 1}/{args.rounds}  (a) alone    {seconds:7.3f} s")
        seconds, counts = watched(spec("watched"), args.tab)
        b.append(seconds)
        say(f"round {i + 1}/{args.rounds}  (b) watched  {seconds:7.3f} s")
        if counts["inputs"] != inputs:
            raise SystemExit(f"(b) saw {counts['inputs']} inputs, (a) {inputs}")
    ratio_best = min(a) / min(b)
    ratio_median = statistics.median(a) / statistics.median(b)
    return {
        "machine": machine(),
        "log": str(args.log),
        "strategy": str(args.strategy),
        "vs": args.vs,
        "inputs": inputs,
        "rounds": args.rounds,
        "tab": args.tab,
        "alone_s": a,
        "watched_s": b,
        "screen": counts,
        "speed_ratio_best": ratio_best,
        "speed_ratio_median": ratio_median,
        "target": TARGET,
        "target_met": ratio_best >= TARGET,
    }


def text_report(doc: dict[str, Any]) -> str:
    m, s = doc["machine"], doc["screen"]
    vs = f" vs {doc['vs']}" if doc["vs"] else ""
    return "\n".join(
        [
            "arena-tui benchmark: watched at max speed vs alone",
            f"machine   {m['python']} on {m['platform']}; usable cpus {m['cpus_usable']}",
            f"run       {Path(doc['strategy']).name}{vs} on {doc['log']}: {doc['inputs']:,} inputs",
            f"(a) alone    best {min(doc['alone_s']):.3f} s  "
            f"median {statistics.median(doc['alone_s']):.3f} s",
            f"(b) watched  best {min(doc['watched_s']):.3f} s  "
            f"median {statistics.median(doc['watched_s']):.3f} s",
            f"screen    {doc['tab']} tab showing; {s['snapshots_posted']} snapshots posted, "
            f"{s['snapshots_applied']} applied, {s['events']:,} events received",
            f"speed (a)/(b): best {doc['speed_ratio_best']:.2f}, median "
            f"{doc['speed_ratio_median']:.2f} (target >= {doc['target']}: "
            f"{'met' if doc['target_met'] else 'NOT met'})",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="arena-bench-tui-") as tmp:
        doc = run(args, Path(tmp))
    print(json.dumps(doc) if args.json else text_report(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
