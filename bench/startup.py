"""Benchmark: what starting the command lines costs (``arena --help`` and the like).

Run from anywhere with arena installed::

    python bench/startup.py                        # this interpreter's arena, 20 runs each
    python bench/startup.py --against OTHER/.venv/bin/python   # and another checkout's
    python bench/startup.py --runs 50 --json

Each case is a fresh interpreter (``-B``: no bytecode written) run from an empty directory,
so each interpreter imports its own installed checkout: ``import arena_tui.cli``, ``arena
--help``, ``arena --version``, ``arena replay --help`` and ``arena-tui --help``. With
``--against`` the two interpreters alternate run by run (the machine's load falls on both
alike) and the table gives each one's median and the ratio other / this. Wall time is
``time.perf_counter``; CPU time is the child's user + system time
(``resource.getrusage(RUSAGE_CHILDREN)``). Then, for each interpreter, how many modules
``import arena_tui.cli`` loads and which heavy ones among them (tests/test_cli_startup.py
asserts that none of its longer list is). Nothing is asserted here.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

CASES: dict[str, list[str]] = {
    "import arena_tui.cli": ["-c", "import arena_tui.cli"],
    "arena --help": ["-m", "arena_tui.cli", "--help"],
    "arena --version": ["-m", "arena_tui.cli", "--version"],
    "arena replay --help": ["-m", "arena_tui.cli", "replay", "--help"],
    "arena-tui --help": ["-c", "from arena_tui.tui.cli import main; main()", "--help"],
}
HEAVY = (
    "numpy",
    "scipy",
    "polars",
    "pyarrow",
    "plotly",
    "textual",
    "websockets",
    "sqlite3",
    "engine.core",
    "arena_tui.logs.daycache",
    "arena_tui.report.html",
    "arena_tui.run.backtest",
    "arena_tui.sweep.config",
)
MODULES = (
    "import json, sys; import arena_tui.cli; "
    f"print(json.dumps([len(sys.modules), [m for m in {HEAVY!r} if m in sys.modules]]))"
)


def one_run(python: str, args: list[str], cwd: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh interpreter running ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [python, "-B", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(pythons: list[str], runs: int) -> dict[str, dict[str, dict[str, float]]]:
    """case -> python -> {"wall": median s, "cpu": median s}, the pythons alternating."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as cwd:
        for case, args in CASES.items():
            walls: dict[str, list[float]] = {p: [] for p in pythons}
            cpus: dict[str, list[float]] = {p: [] for p in pythons}
            for python in pythons:  # a warm-up each: the page cache, not the code, is cold
                one_run(python, args, cwd)
            for _ in range(runs):
                for python in pythons:
                    wall, cpu = one_run(python, args, cwd)
                    walls[python].append(wall)
                    cpus[python].append(cpu)
            out[case] = {
                p: {"wall": statistics.median(walls[p]), "cpu": statistics.median(cpus[p])}
                for p in pythons
            }
    return out


def modules(python: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run(
            [python, "-B", "-c", MODULES], cwd=cwd, capture_output=True, text=True, check=True
        )
    count, heavy = json.loads(done.stdout)
    return {"modules": count, "heavy": heavy}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of each case (default 20)")
    parser.add_argument("--against", metavar="PYTHON", help="another checkout's interpreter")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    opts = parser.parse_args()
    pythons = [sys.executable] + ([opts.against] if opts.against else [])
    times = measure(pythons, opts.runs)
    loaded = {p: modules(p) for p in pythons}
    if opts.json:
        print(json.dumps({"runs": opts.runs, "times": times, "import": loaded}))
        return
    this = sys.executable
    print(f"{opts.runs} runs of each, medians; this: {this}")
    if opts.against:
        print(f"other: {opts.against}")
        head = f"{'':<22} {'this wall':>10} {'other':>8} {'ratio':>6}   {'this cpu':>9} "
        print(head + f"{'other':>8} {'ratio':>6}")
    for case, by in times.items():
        a = by[this]
        line = f"{case:<22} {a['wall'] * 1000:>8.0f}ms"
        if opts.against:
            b = by[opts.against]
            line += f" {b['wall'] * 1000:>6.0f}ms {b['wall'] / a['wall']:>5.2f}x"
            line += f"   {a['cpu'] * 1000:>7.0f}ms {b['cpu'] * 1000:>6.0f}ms"
            line += f" {b['cpu'] / a['cpu']:>5.2f}x"
        else:
            line += f"  cpu {a['cpu'] * 1000:.0f}ms"
        print(line)
    for python, doc in loaded.items():
        heavy = ", ".join(doc["heavy"]) or "none"
        print(f"import arena_tui.cli ({python}): {doc['modules']} modules; heavy: {heavy}")


if __name__ == "__main__":
    main()
