"""Benchmark: is the verdict calibrated, and has it power? Measured on synthetic days where
the truth is known.

Run from the repo root::

    python bench/verdict.py                  # 200 no-edge days, 100 signal days a length
    python bench/verdict.py --days 40 --power-days 20 --lengths 6     # a quick look
    python bench/verdict.py --json           # one JSON object on stdout, for programs

**Calibration.** ``arena synth --model walk`` days (a market with no edge for anyone: the mid
a martingale, the prints blind to the path), one per seed, and on each of them strategies
without skill: ``bench/strategies/random_taker.py`` (coin-flip longs and shorts, random
holds), ``bench/strategies/random_maker.py`` (post-only quotes at random times),
``strategies/momentum.py`` and ``strategies/reversion.py`` (signals that read a past the
walk does not repeat) and ``strategies/control_random.py``. Each run is judged exactly as
``arena backtest`` judges it (the block length chosen for the run, 100 random twins, seed =
the day's seed); the share called "skill" must be at most the nominal 5%. The report gives
each share with its Wilson 95% interval, and the other answers' counts.

**The money interval's coverage.** Series of block scores with a true mean of zero
(independent normal ones, and heavy-tailed autocorrelated ones: Student-t(4) innovations,
AR(1) 0.3) of 12, 24 and 48 blocks: how often the 95% interval ``report.stats.mean_interval``
gives misses zero (nominal: 5%).

**Power.** ``--model walk --signal BPS`` days, where a hidden drift state is announced by
the oracle, and ``bench/strategies/oracle_follower.py`` trading on it, over runs of several
lengths: the share called "skill" at each length, and the shortest length where it is at
least 80%.

Runs go to ``--workers`` processes (default: the usable cores), each day generated in a
scratch directory and deleted after. Nothing is asserted: the figures go into README's
Performance table and docs/verdict.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NULL_STRATEGIES = (
    "bench/strategies/random_taker.py",
    "bench/strategies/random_maker.py",
    "strategies/momentum.py",
    "strategies/reversion.py",
    "strategies/control_random.py",
)
SIGNAL_STRATEGY = "bench/strategies/oracle_follower.py"
COINS = ("BTC", "ETH")
START = "2026-12-01T00:00:00Z"


@dataclass(frozen=True)
class Task:
    """One day and the strategies judged on it."""

    seed: int
    hours: int
    signal: float | None
    strategies: tuple[str, ...]
    twins: int
    floor: bool = True  # also the floor's calibration (floor_one)


def judge_one(log: str, strategy: str, seed: int, twins: int) -> dict[str, Any]:
    """``arena backtest STRATEGY LOG --seed SEED`` as the command judges it, in process
    (no run log, no files): its answers, S, fills and the twins' p-value."""
    from arena_tui.report.verdict import Judging, judged, measure_twins, verdict_doc
    from arena_tui.run.backtest import Backtest
    from arena_tui.run.build import entrants_for
    from arena_tui.run.config import RunConfig
    from arena_tui.season.file import resolve_season

    season = resolve_season([log], None)
    config = RunConfig(seed=seed, cache=False)
    bt = Backtest(config, season, entrants_for(ROOT / strategy, None), echo=False)
    began = time.perf_counter()
    result = bt.run([log])
    passed = time.perf_counter()
    how = Judging(epoch=None, seed=seed, twins=twins, sources=(log,))
    tw = measure_twins(result, how)
    end = result.replay.end or season.start
    v = verdict_doc(
        judged(result), [], rules=season.rules, epoch=None, seed=seed,
        span=(season.start, end), twins=tw,
    )  # fmt: skip
    skill = v["skill"]
    return {
        "strategy": strategy,
        "seed": seed,
        "score": v["skill"].get("score", 0) if "score" in skill else 0,
        "fills": v["trades"]["fills"],
        "ranked": v["ranked"]["answer"],
        "money": v["money"]["answer"],
        "skill": skill["answer"],
        "p_value": skill.get("p_value"),
        "twins": skill.get("twins"),
        "pass_s": round(passed - began, 3),
        "twins_s": round(time.perf_counter() - passed, 3),
    }


FLOOR_EPOCHS = ("auto", "30m")  # the chosen blocks (15m on a 6 h day), and the 30m


def floor_one(log: str, seed: int) -> list[dict[str, Any]]:
    """The floor's calibration: control_random against a copy of itself under another name
    (its own coin flips), as ``arena backtest strategies/control_random.py:randy LOG --vs
    strategies/control_random.py`` judges it: the lead has a true mean of zero, so
    ``better`` or ``worse`` is wrong."""
    from arena_tui.report.verdict import judged, verdict_doc
    from arena_tui.run.backtest import Backtest
    from arena_tui.run.build import entrants_for
    from arena_tui.run.config import RunConfig
    from arena_tui.season.file import resolve_season

    season = resolve_season([log], None)
    control = ROOT / "strategies" / "control_random.py"
    entrants = entrants_for(Path(f"{control}:randy"), str(control))
    bt = Backtest(RunConfig(seed=seed, cache=False), season, entrants, echo=False)
    result = bt.run([log])
    end = result.replay.end or season.start
    others = [(e.name, e.stats.marks) for e in result.entrants[1:]]
    out = []
    for epoch in FLOOR_EPOCHS:
        v = verdict_doc(
            judged(result), others, rules=season.rules, epoch=epoch, seed=seed,
            span=(season.start, end),
        )  # fmt: skip
        out.append({"floor_epoch": epoch, "floor": v["floor"]["answer"], "seed": seed})
    return out


def run_task(task: Task) -> list[dict[str, Any]]:
    """Make the day, judge every strategy on it, delete the day."""
    from arena_tui.synth.generate import choose_markets, choose_model, parse_start, write_file

    with tempfile.TemporaryDirectory(prefix="arena-bench-verdict-") as tmp:
        log = Path(tmp) / "day.jsonl"
        model = choose_model("walk", task.signal)
        write_file(
            log, choose_markets(COINS, None), task.seed, parse_start(START), task.hours,
            model=model,
        )  # fmt: skip
        out = []
        for strategy in task.strategies:
            doc = judge_one(str(log), strategy, task.seed, task.twins)
            out.append(doc | {"hours": task.hours, "signal": task.signal})
        if task.signal is None and task.floor:
            out += floor_one(str(log), task.seed)
        return out


def coverage(kind: str, n: int, trials: int, seed: int = 0) -> dict[str, Any]:
    """How often the money interval misses a true mean of zero (see the module docstring)."""
    import numpy as np

    from arena_tui.report.stats import mean_interval

    rng = np.random.default_rng(seed)
    misses = 0
    for k in range(trials):
        e = rng.standard_t(4, n) if kind == "t4_ar03" else rng.standard_normal(n)
        x = np.empty(n)
        x[0] = e[0]
        for i in range(1, n):
            x[i] = (0.3 if kind == "t4_ar03" else 0.0) * x[i - 1] + e[i]
        iv = mean_interval([round(v * 100_000) for v in x], seed=k, resamples=2_000)
        misses += iv.low > 0 or iv.high < 0
    return {"series": kind, "blocks": n} | share(misses, trials)


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval of a share ``k / n``."""
    if n == 0:
        return (0.0, 1.0)
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def share(k: int, n: int) -> dict[str, Any]:
    lo, hi = wilson(k, n)
    return {
        "k": k,
        "n": n,
        "share": round(k / n, 4) if n else None,
        "ci95": [round(lo, 4), round(hi, 4)],
    }


def summarise(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted({r[key] for r in rows}, key=str):
        mine = [r for r in rows if r[key] == name]
        answers = Counter(r["skill"] for r in mine)
        out[str(name)] = {
            "runs": len(mine),
            "skill": share(answers["skill"], len(mine)),
            "worse_than_twins": share(answers["worse_than_twins"], len(mine)),
            "answers": dict(sorted(answers.items())),
            "money": dict(sorted(Counter(r["money"] for r in mine).items())),
            "median_fills": sorted(r["fills"] for r in mine)[len(mine) // 2],
            "seconds_a_run": round(sum(r["pass_s"] + r["twins_s"] for r in mine) / len(mine), 2),
        }
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--days", type=int, default=200, help="no-edge walk days (calibration)")
    p.add_argument("--hours", type=int, default=6, help="length of a calibration day")
    p.add_argument("--power-days", type=int, default=100, help="signal days per length")
    p.add_argument("--lengths", default="6,12,24", help="run lengths (hours) for power")
    p.add_argument("--signal", type=float, default=40.0, help="--signal BPS of power days")
    p.add_argument("--twins", type=int, default=100)
    p.add_argument(
        "--strategies",
        default=",".join(NULL_STRATEGIES),
        help="the no-skill strategies judged on each walk day (comma-separated paths)",
    )
    p.add_argument("--coverage-trials", type=int, default=400, help="series a coverage cell")
    p.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--json", action="store_true")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    lengths = [int(x) for x in args.lengths.split(",") if x.strip()]
    nulls = tuple(x.strip() for x in args.strategies.split(",") if x.strip())
    tasks = [Task(1000 + i, args.hours, None, nulls, args.twins) for i in range(args.days)]
    tasks += [
        Task(5000 + 100 * h + i, h, args.signal, (SIGNAL_STRATEGY,), args.twins)
        for h in lengths
        for i in range(args.power_days)
    ]
    began = time.monotonic()
    rows: list[dict[str, Any]] = []
    cells = [(kind, n) for kind in ("normal", "t4_ar03") for n in (12, 24, 48)]
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        covered = list(
            pool.map(coverage, *zip(*cells, strict=True), [args.coverage_trials] * len(cells))
        )
        for i, got in enumerate(pool.map(run_task, tasks), 1):
            rows += got
            if not args.json and sys.stderr.isatty():
                sys.stderr.write(f"\r{i}/{len(tasks)} days  {time.monotonic() - began:.0f} s")
    if not args.json and sys.stderr.isatty():
        sys.stderr.write("\n")
    floors = [r for r in rows if "floor_epoch" in r]
    rows = [r for r in rows if "floor_epoch" not in r]
    null = [r for r in rows if r["signal"] is None]
    power = [r for r in rows if r["signal"] is not None]
    by_length = summarise(power, "hours")
    needed = next(
        (
            h
            for h in lengths
            if (by_length.get(str(h), {}).get("skill", {}).get("share") or 0) >= 0.8
        ),
        None,
    )
    doc = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores, Python "
        f"{platform.python_version()}",
        "coins": list(COINS),
        "calibration": {
            "hours": args.hours,
            "days": args.days,
            "by_strategy": summarise(null, "strategy"),
        },
        "calibration_all": summarise([r | {"all": "all"} for r in null], "all").get("all"),
        "money_coverage": covered,
        "floor_calibration": {
            epoch: {
                "runs": len(mine),
                "better": share(sum(r["floor"] == "better" for r in mine), len(mine)),
                "worse": share(sum(r["floor"] == "worse" for r in mine), len(mine)),
                "either": share(sum(r["floor"] in ("better", "worse") for r in mine), len(mine)),
                "answers": dict(sorted(Counter(r["floor"] for r in mine).items())),
            }
            for epoch in FLOOR_EPOCHS
            if (mine := [r for r in floors if r["floor_epoch"] == epoch])
        },
        "power": {
            "signal_bps_per_hour": args.signal,
            "by_hours": by_length,
            "hours_for_80pct": needed,
        },
        "seconds": round(time.monotonic() - began, 1),
    }
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    else:
        sys.stdout.write(text_report(doc) + "\n")
    return 0


def text_report(doc: dict[str, Any]) -> str:
    def pct(s: dict[str, Any]) -> str:
        lo, hi = s["ci95"]
        return (
            f"{s['k']}/{s['n']} = {100 * (s['share'] or 0):.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
        )

    cal = doc["calibration"]
    lines = [
        f"verdict calibration and power ({doc['date']}, {doc['machine']}; coins "
        f"{', '.join(doc['coins'])}; {doc['seconds']:.0f} s)",
        "",
        f"calibration: {cal['days']} walk days of {cal['hours']} h (no edge): called skill "
        "(nominal at most 5%), Wilson 95% interval",
    ]
    for name, s in cal["by_strategy"].items():
        lines.append(
            f"  {name:<36} skill {pct(s['skill'])}  worse {pct(s['worse_than_twins'])}  "
            f"answers {s['answers']}  fills {s['median_fills']}  {s['seconds_a_run']} s a run"
        )
    if doc["calibration_all"]:
        lines.append(f"  {'all':<36} skill {pct(doc['calibration_all']['skill'])}")
    lines += ["", "money interval: misses a true mean of zero (nominal 5%)"]
    for c in doc["money_coverage"]:
        lines.append(f"  {c['series']:<8} {c['blocks']:>3} blocks  {pct(c)}")
    lines += ["", "floor: control_random against a copy of itself (called better or worse: "
              "nominal 5%)"]  # fmt: skip
    for epoch, f in doc["floor_calibration"].items():
        lines.append(
            f"  blocks {epoch:<5} either {pct(f['either'])}  better {pct(f['better'])}  "
            f"worse {pct(f['worse'])}"
        )
    pw = doc["power"]
    lines += ["", f"power: oracle_follower on --signal {pw['signal_bps_per_hour']:g} days"]
    for hours, s in pw["by_hours"].items():
        lines.append(
            f"  {hours:>3} h  skill {pct(s['skill'])}  answers {s['answers']}  "
            f"money {s['money']}  fills {s['median_fills']}"
        )
    need = pw["hours_for_80pct"]
    lines.append(
        f"  run length for >= 80% power: {need} h" if need else "  >= 80% power: not reached"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
