"""Benchmark: a backtest's peak memory against the number of days it covers.

Run from the repo root::

    python bench/memory.py                        # 1, 7 and 30 days of BTC, momentum + baselines
    python bench/memory.py --days 1,3,7 --coins BTC,ETH,SOL
    python bench/memory.py --keep --dir /tmp/mem   # keep (and reuse) the days and caches
    python bench/memory.py --json

The days are written by ``arena synth --coins C --hours 24 --start DAY --seed 7+i``, one
file a day (as ``arena record`` leaves them), under a temporary directory (or ``--dir``,
where days already written are reused). Each measurement is ``arena backtest
strategies/momentum.py DAY1 .. DAYn --vs baselines --out DIR --json`` in a fresh process,
as a user runs it, with the day cache in the work directory (``ARENA_CACHE_DIR``): once
with ``--no-cache`` and once warm (the caches written by an untimed run before);
``--cache none`` or ``warm`` measures one of the two.

What is reported, per measurement:

- peak RSS: the child's ``ru_maxrss`` (``os.wait4``), what ``/proc/self/status``'s VmHWM
  says at its end: every resident page, the day cache's mapped file pages too;
- peak private: the largest ``Private_Clean + Private_Dirty`` of
  ``/proc/<pid>/smaps_rollup``, read every ``--every`` seconds while it runs: the memory
  that is the process's own (a day cache's mapping is shared with the page cache, so not
  in it), its children's added (the statistics worker that imports ``arch`` while the pass
  runs, ``report.statsworker``; peak RSS is the process's alone).

The goal (issue 25): peak memory for 30 days under 2x that for 1 day; the ratios are
printed, nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DAY_MS = 86_400_000
START = "2026-11-01"


def say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def day_files(work: Path, n: int, coins: str) -> list[Path]:
    """``n`` synth days, one file each (written unless already there)."""
    from datetime import date, timedelta

    out: list[Path] = []
    first = date.fromisoformat(START)
    for i in range(n):
        day = first + timedelta(days=i)
        path = work / "days" / f"synth-{coins.replace(',', '-')}-{day.isoformat()}.jsonl.gz"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            cmd = [sys.executable, "-m", "arena_tui.cli", "synth", "--coins", coins]
            cmd += ["--hours", "24", "--start", day.isoformat(), "--seed", str(7 + i)]
            cmd += ["--out", str(path)]
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"arena synth failed: {done.stderr.strip()[-2000:]}")
        out.append(path)
    return out


def private_kib(pid: int) -> int | None:
    """Private_Clean + Private_Dirty of ``pid`` and its children now (the backtest's
    statistics worker, ``report.statsworker``, is its child), KiB (None once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    total = 0
    for line in text.splitlines():
        if line.startswith(("Private_Clean:", "Private_Dirty:")):
            total += int(line.split()[1])
    return total + sum(private_kib(int(k)) or 0 for k in kids)


def measure(
    days: list[Path], out: Path, work: Path, cache: bool, every: float, tree: Path = ROOT
) -> dict[str, Any]:
    """One ``arena backtest`` over ``days`` in a fresh process (arena imported from
    ``tree``): peak RSS and private."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "arena_tui.cli", "backtest", "strategies/momentum.py"]
    cmd += [str(d) for d in days]
    cmd += ["--vs", "baselines", "--out", str(out), "--json"]
    if not cache:
        cmd.append("--no-cache")
    env = {**os.environ, "ARENA_CACHE_DIR": str(work / "cache")}
    t0 = time.perf_counter()
    with (work / "child.out").open("wb") as so, (work / "child.err").open("wb") as se:
        child = subprocess.Popen(cmd, cwd=tree, env=env, stdout=so, stderr=se)
        peak_private = 0
        while True:
            got, status, usage = os.wait4(child.pid, os.WNOHANG)
            if got:
                break
            kib = private_kib(child.pid)
            if kib is not None:
                peak_private = max(peak_private, kib)
            time.sleep(every)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        err = (work / "child.err").read_text(errors="replace")
        raise SystemExit(f"arena backtest failed: {err.strip()[-2000:]}")
    doc = json.loads((work / "child.out").read_text())
    fills = sum(
        sum(e["fills"].values()) if isinstance(e["fills"], dict) else int(e["fills"])
        for e in doc["entries"]
    )
    return {
        "days": len(days),
        "cache": cache,
        "s": time.perf_counter() - t0,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "peak_private_mib": peak_private / 1024,
        "fills": fills,
    }


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from bench.replay import machine

    counts = sorted({int(x) for x in args.days.split(",")})
    tree = Path(args.tree).resolve()
    t0 = time.perf_counter()
    say(f"writing {max(counts)} synth days of {args.coins} under {work} ...")
    files = day_files(work, max(counts), args.coins)
    say(f"  in {time.perf_counter() - t0:.0f} s")
    rows: list[dict[str, Any]] = []
    for n in counts:
        if args.cache in ("none", "both"):
            say(f"{n} day(s): --no-cache ...")
            rows.append(measure(files[:n], work / "run", work, False, args.every, tree))
        if args.cache in ("warm", "both"):
            say(f"{n} day(s): warm (caches written first) ...")
            measure(files[:n], work / "run", work, True, args.every, tree)  # writes the caches
            rows.append(measure(files[:n], work / "run", work, True, args.every, tree))
    return {"machine": machine(), "coins": args.coins, "tree": str(tree), "rows": rows}


def report(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    out = [
        f"# bench/memory.py: arena backtest momentum --vs baselines, {doc['coins']}, synth days",
        f"# {m['cpu']}, {m['python']}; load average {m['loadavg']}",
        "",
        "| days | cache | fills | wall s | peak RSS MiB | peak private MiB |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in doc["rows"]:
        out.append(
            f"| {r['days']} | {'warm' if r['cache'] else 'none'} | {r['fills']:,} | "
            f"{r['s']:.1f} | {r['peak_rss_mib']:.0f} | {r['peak_private_mib']:.0f} |"
        )
    out.append("")
    for cache in (False, True):
        rows = [r for r in doc["rows"] if r["cache"] is cache]
        if len(rows) < 2:
            continue
        one, most = rows[0], rows[-1]
        for key, what in (("peak_private_mib", "private"), ("peak_rss_mib", "RSS")):
            ratio = most[key] / one[key]
            met = "met" if ratio < 2 else "NOT met"
            out.append(
                f"{'warm' if cache else 'no cache'}: peak {what} for {most['days']} days is "
                f"{ratio:.2f}x that for {one['days']} (goal < 2x: {met})"
            )
    return "\n".join(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/memory.py",
        description="A backtest's peak memory (RSS and private) for 1, 7 and 30 synth days.",
    )
    p.add_argument("--days", default="1,7,30", help="day counts, comma-separated (1,7,30)")
    p.add_argument("--coins", default="BTC", help="the synth days' coins (default BTC)")
    p.add_argument("--dir", help="work here (days already there are reused) and keep it")
    p.add_argument("--keep", action="store_true", help="keep the temp dir")
    p.add_argument(
        "--cache",
        choices=("none", "warm", "both"),
        default="both",
        help="measure with --no-cache, warm from the day caches, or both (default)",
    )
    p.add_argument("--every", type=float, default=0.05, help="s between private samples")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.add_argument(
        "--tree", default=str(ROOT), help="the arena tree the backtests import (default: this one)"
    )
    args = p.parse_args(argv)
    try:
        if not all(int(x) > 0 for x in args.days.split(",")):
            raise ValueError
    except ValueError:
        p.error("--days must be positive integers, comma-separated")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench.scratch import in_scratch

    return in_scratch(
        "arena-memory-",
        lambda w: run(args, w),
        report,
        as_json=args.json,
        keep=args.keep,
        where=args.dir,
    )


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
