"""Benchmark: ``arena import`` of one raw Hyperliquid day, this tree against another.

Run from the repo root::

    python bench/imports.py                                    # 3 h raw BTC day, this tree
    python bench/imports.py --against /path/to/other/checkout  # and another, interleaved
    python bench/imports.py --hours 24 --rounds 3 --against OTHER --json

The day is bench/peers.py's (``write_raw``: BTC, ``l2Book`` of 20 levels a side about every
620 ms and ``trades`` at 1.5 times the synth's rate, in hftbacktest's collector format,
gzipped). Each round runs ``arena import hftbacktest RAW --meta META --out DAY.jsonl.lz4``
in a fresh process for each tree (the order alternating round by round), as a user runs it:
the check of every line, the log written (LZ4) and its day cache kept, each with an empty
cache directory. Another tree is a checkout with its own ``.venv`` (``--against``; its
interpreter runs with it as the working directory). What is timed: the child's CPU seconds
(user + system, ``os.wait4``) and wall seconds; best and median of the rounds, and the other
tree's over this one's. Every run's day cache must hold the same lines and columns (the bytes
between its preamble and its header, SHA-256) or the bench stops. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/imports.py``: make ``bench`` importable
    sys.path.insert(0, str(ROOT))

from arena_tui.logs.dayformat import PRE  # noqa: E402
from bench.peers import META, write_raw  # noqa: E402
from bench.replay import machine  # noqa: E402
from bench.scratch import in_scratch, say  # noqa: E402


def columns_sha256(cache: Path) -> str:
    """The SHA-256 of the one day cache in ``cache``: its lines and columns (not its header,
    which holds the time it was built)."""
    [day] = [p for p in cache.iterdir() if p.suffix == ".day"]
    data = day.read_bytes()
    *_, head_off, _ = PRE.unpack_from(data)
    return hashlib.sha256(data[PRE.size : head_off]).hexdigest()


def run_import(tree: Path, raw: Path, work: Path) -> dict[str, Any]:
    """``arena import`` of ``raw`` by ``tree``'s interpreter, in a fresh process."""
    out, cache = work / "day.jsonl.lz4", work / "cache"
    out.unlink(missing_ok=True)
    shutil.rmtree(cache, ignore_errors=True)
    python = tree / ".venv" / "bin" / "python" if tree != ROOT else Path(sys.executable)
    cmd = [str(python), "-m", "arena_tui.cli", "import", "hftbacktest", str(raw)]
    cmd += ["--meta", str(META), "--out", str(out)]
    env = {**os.environ, "ARENA_CACHE_DIR": str(cache)}
    t0 = time.perf_counter()
    with open(work / "stderr", "wb") as err:
        child = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        tail = (work / "stderr").read_text(errors="replace")[-2000:]
        raise SystemExit(f"arena import failed in {tree}: {tail}")
    cpu = usage.ru_utime + usage.ru_stime
    return {"cpu_s": cpu, "wall_s": wall, "columns_sha256": columns_sha256(cache)}


def summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    cpu, wall = [r["cpu_s"] for r in runs], [r["wall_s"] for r in runs]
    return {
        "cpu_best_s": min(cpu),
        "cpu_median_s": statistics.median(cpu),
        "wall_best_s": min(wall),
        "wall_median_s": statistics.median(wall),
    }


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    raw = work / "raw.gz"
    t0 = time.perf_counter()
    day = write_raw(raw, args.hours, args.seed, args.book_ms, args.activity)
    took = time.perf_counter() - t0
    say(f"raw day: {day['lines']:,} lines ({day['books']:,} books), in {took:.1f} s")
    trees = {"this": ROOT}
    if args.against:
        trees["other"] = Path(args.against).resolve()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for r in range(args.rounds):
        order = list(trees) if r % 2 == 0 else list(reversed(trees))
        for name in order:
            (work / name).mkdir(exist_ok=True)
            got = run_import(trees[name], raw, work / name)
            runs[name].append(got)
            cpu, wall = got["cpu_s"], got["wall_s"]
            say(f"round {r + 1}/{args.rounds} {name}: {cpu:.2f} s CPU, {wall:.2f} s wall")
        shas = {run["columns_sha256"] for rows in runs.values() for run in rows}
        if len(shas) != 1:
            raise SystemExit("the trees' day caches differ: not the same import")
    doc: dict[str, Any] = {
        "machine": machine(),
        "day": {**day, "hours": args.hours, "seed": args.seed},
        "trees": {name: str(path) for name, path in trees.items()},
        "runs": runs,
        "summary": {name: summary(rows) for name, rows in runs.items()},
    }
    if "other" in trees:
        this, other = doc["summary"]["this"], doc["summary"]["other"]
        doc["other_over_this"] = {k: other[k] / this[k] for k in this}
    return doc


def report(doc: dict[str, Any]) -> str:
    rows = [
        f"arena import hftbacktest: {doc['day']['lines']:,} lines, {doc['day']['hours']} h "
        f"(load average {doc['machine']['loadavg'][0]:.1f})"
    ]
    for name, s in doc["summary"].items():
        rows.append(
            f"  {name:5s} {doc['trees'][name]}: CPU best {s['cpu_best_s']:.2f} s, median "
            f"{s['cpu_median_s']:.2f} s; wall best {s['wall_best_s']:.2f} s, median "
            f"{s['wall_median_s']:.2f} s"
        )
    ratio = doc.get("other_over_this")
    if ratio:
        rows.append(
            f"  other / this: CPU {ratio['cpu_best_s']:.2f}x best, {ratio['cpu_median_s']:.2f}x "
            f"median; wall {ratio['wall_best_s']:.2f}x best, {ratio['wall_median_s']:.2f}x median"
        )
    rows.append("  day caches: the same lines and columns in every run")
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/imports.py",
        description="Time arena import of bench/peers.py's raw BTC day, this tree against "
        "another checkout (its own .venv), interleaved fresh processes, CPU seconds.",
    )
    p.add_argument("--hours", type=float, default=3.0, help="hours of market (default 3)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--against", help="another checkout with its own .venv, timed beside this")
    p.add_argument("--seed", type=int, default=7, help="the market's seed (default 7)")
    p.add_argument("--book-ms", type=int, default=620, help="ms between books (default 620)")
    p.add_argument("--activity", type=float, default=1.5, help="trading rate (default 1.5)")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (raw day, logs)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if not 0 < args.hours <= 72:
        p.error("--hours must be in (0, 72]")
    if args.against and not (Path(args.against) / ".venv" / "bin" / "python").exists():
        p.error(f"--against {args.against}: no .venv/bin/python there")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return in_scratch(
        "arena-imports-", lambda w: run(args, w), report, as_json=args.json, keep=args.keep
    )


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
