"""Benchmark: backtesting a strategy on a synthetic day vs. merely decoding the day's lines.

Run from the repo root::

    python bench/backtest.py                  # arena synth: BTC,ETH,SOL, 24 h, seed 7
    python bench/backtest.py --hours 6 --vs baselines
    python bench/backtest.py --log LOG [--season FILE]   # an existing recording
    python bench/backtest.py --json           # one JSON object on stdout, for programs

It writes the day with ``arena synth --coins BTC,ETH,SOL --hours 24 --seed 7`` (a
subprocess: the real command), then times, three rounds interleaved (a, b', b, a, ...):

  (a)  every line read in binary and ``msgspec.json.decode``-d (bench/replay.py's (a));
  (r)  ``arena replay``'s pass over the same day (the engine alone, no strategy);
  (n)  the runner with a strategy that does nothing (no hook): the runner's own work;
  (b') the runner alone: ``Backtest(...).run`` with momentum, no run log written;
  (b)  ``arena backtest strategies/momentum.py LOG --out DIR`` in this process, through
       the typer app the console script runs (``arena_tui.cli.app``): the runner, the run log, the
       report, report.json, the CSVs and chart.svg, as a user waits for them, with
       ``--no-cache``;
  (nw) (n) read from the day cache (``arena_tui.logs.daycache``, built by an untimed run
       into the bench's own cache directory);
  (w)  (b) read from the day cache: a second run of the same day;
  (k)  the runner with a strategy reading the top of every book (``on_book``): every book
       is applied, none held; (kw) the same from the day cache.

``ARENA_BENCH_CLOCK=cpu`` times the CPU this process used instead of the wall (steadier on
a shared, busy machine).

Nothing is asserted: the target (b)/(a) <= 1.5 is reported as met or not. The extra rows
say where (b) goes: the engine (r), the runner's bookkeeping (n - r), the strategy's own
code (b' - n) and the files (b - b'); (r) plus the files is a floor no strategy can beat.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/backtest.py``: make ``bench`` importable
    sys.path.insert(0, str(ROOT))

from arena_tui.cli import app  # noqa: E402
from arena_tui.logs.logfile import iter_raw_lines  # noqa: E402
from arena_tui.run.backtest import Backtest  # noqa: E402
from arena_tui.run.build import entrants_for  # noqa: E402
from arena_tui.run.config import RunConfig  # noqa: E402
from arena_tui.run.parts import BacktestResult  # noqa: E402
from arena_tui.run.replay import replay  # noqa: E402
from arena_tui.run.stats import exit_value  # noqa: E402
from arena_tui.season.file import resolve_season  # noqa: E402
from bench.replay import (  # noqa: E402
    CLOCK_ENV,
    Series,
    decode_generic,
    in_scratch,
    machine,
    mb,
    say,
    timed,
    yes,
)
from engine import Season  # noqa: E402

TARGET_RATIO = 1.5
STRATEGY = ROOT / "strategies" / "momentum.py"
NOTHING = "from arena_tui.strategy import Strategy\n\n\nclass Nothing(Strategy):\n    pass\n"
BOOKS = (
    "from arena_tui.strategy import Strategy\n\n\nclass Books(Strategy):\n"
    "    def on_book(self, ctx, book):\n        self.top = book.best_bid_e8, book.best_ask_e8\n"
)


def synth(out: Path, coins: str, hours: float, seed: int) -> float:
    """The day, written by ``arena synth`` as a user would; returns the seconds it took."""
    cmd = [sys.executable, "-m", "arena_tui.cli", "synth", "--coins", coins]
    cmd += ["--hours", str(hours), "--seed", str(seed), "--out", str(out), "--force"]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"arena synth failed: {done.stderr.strip()}")
    return time.perf_counter() - t0


def runner_only(
    path: str, season: Season, vs: str | None, strategy: Path = STRATEGY, cache: bool = False
) -> BacktestResult:
    """(b'), or (n) with the do-nothing strategy: the pass alone; no file written.
    ``cache``: from the day cache (built by an untimed run first)."""
    entrants = entrants_for(strategy, vs)
    bt = Backtest(RunConfig(cache=cache), season, entrants, exit_value=exit_value)
    return bt.run([path])


def full_command(
    path: str, season_file: str | None, vs: str | None, out: Path, cache: bool = False
) -> str:
    """(b): ``arena backtest`` in-process; its stdout (the JSON report) is returned.
    ``cache``: (w), the same command reading the day cache (else ``--no-cache``)."""
    shutil.rmtree(out, ignore_errors=True)
    stdout, stderr = io.StringIO(), io.StringIO()
    args = ["backtest", str(STRATEGY), path, "--out", str(out), "--json"]
    args += [] if cache else ["--no-cache"]
    args += [] if season_file is None else ["--season", season_file]
    args += [] if vs is None else ["--vs", vs]
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        app(args, standalone_mode=False)
    return stdout.getvalue()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/backtest.py",
        description="Time arena backtest against plain msgspec decoding of the same day.",
    )
    add_day_args(p)
    p.add_argument("--keep", action="store_true", help="keep the temp dir (log, run)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    return checked_day_args(p, argv)


def add_day_args(p: argparse.ArgumentParser) -> None:
    """The day a backtest bench runs on (synthesised, or --log) and its rounds."""
    p.add_argument("--coins", default="BTC,ETH,SOL", help="coins for arena synth")
    p.add_argument("--hours", type=float, default=24.0, help="hours for arena synth")
    p.add_argument("--seed", type=int, default=7, help="arena synth's seed")
    p.add_argument("--log", help="take this existing recording instead of synthesising one")
    p.add_argument("--season", help="season file for --log (default: as `arena backtest`)")
    p.add_argument("--vs", help="also run these entries (e.g. baselines), as --vs does")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")


def checked_day_args(p: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    args = p.parse_args(argv)
    if args.season and not args.log:
        p.error("--season goes with --log")
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    return args


def day_log(args: argparse.Namespace, tmp: Path) -> tuple[str, float | None]:
    """The day's log (--log, or synthesised in ``tmp``) and the seconds synthesising took."""
    if args.log:
        return str(args.log), None
    path = tmp / "synth.jsonl"
    say(f"arena synth --coins {args.coins} --hours {args.hours:g} --seed {args.seed} ...")
    return str(path), synth(path, args.coins, args.hours, args.seed)


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    os.environ["ARENA_CACHE_DIR"] = str(tmp / "cache")  # the bench's own, removed with tmp
    os.environ.pop("ARENA_CACHE", None)  # (arena synth keeps the day's cache as it writes)
    path, gen_s = day_log(args, tmp)
    size = sum(len(raw) + 1 for raw in iter_raw_lines(path))  # also warms the page cache
    season = resolve_season([path], args.season)
    out = tmp / "run"

    say("untimed backtest (what the strategy did) ...")
    first = runner_only(path, season, args.vs)
    n = first.inputs  # the runner stops at the season's end: a few lines short of (a)
    n_decoded = decode_generic(path)
    entries = {
        e.name: {"fills": len(e.stats.fills), "orders_accepted": e.stats.orders_accepted}
        for e in first.entrants
    }
    nothing = tmp / "nothing.py"
    nothing.write_text(NOTHING, encoding="utf-8")
    books = tmp / "books.py"
    books.write_text(BOOKS, encoding="utf-8")
    series = {
        "a": Series("(a)  msgspec.json.decode, every line"),
        "r": Series("(r)  arena replay's pass (engine alone)"),
        "b_nothing": Series("(n)  Backtest.run, a do-nothing strategy"),
        "b_runner": Series("(b') Backtest.run alone (no files)"),
        "b": Series("(b)  arena backtest, in-process (all files)"),
        "n_warm": Series("(nw) (n) from the day cache"),
        "w": Series("(w)  (b) from the day cache"),
        "k": Series("(k)  Backtest.run, a strategy reading every book"),
        "k_warm": Series("(kw) (k) from the day cache"),
    }
    runs: list[tuple[str, Callable[[], object]]] = [
        ("a", lambda: decode_generic(path)),
        ("r", lambda: replay([path], season)),
        ("b_nothing", lambda: runner_only(path, season, None, nothing)),
        ("b_runner", lambda: runner_only(path, season, args.vs)),
        ("b", lambda: full_command(path, args.season, args.vs, out)),
        ("n_warm", lambda: runner_only(path, season, None, nothing, cache=True)),
        ("w", lambda: full_command(path, args.season, args.vs, out, cache=True)),
        ("k", lambda: runner_only(path, season, None, books)),
        ("k_warm", lambda: runner_only(path, season, None, books, cache=True)),
    ]
    say("untimed backtest writing the day cache ...")
    full_command(path, args.season, args.vs, out, cache=True)
    report: dict[str, Any] = {}
    for i in range(args.rounds):
        for key, fn in runs:
            seconds, got = timed(fn)
            if isinstance(got, BacktestResult) and key == "b_runner" and got.inputs != n:
                raise SystemExit(f"{key} saw {got.inputs} inputs, expected {n}")
            if isinstance(got, int) and got != n_decoded:
                raise SystemExit(f"{key} decoded {got} inputs, expected {n_decoded}")
            if isinstance(got, str):
                report = json.loads(got)
            series[key].seconds.append(seconds)
            say(f"round {i + 1}/{args.rounds}  {key:8} {seconds:7.3f} s")

    a, br, b = series["a"], series["b_runner"], series["b"]
    r, bn = series["r"], series["b_nothing"]
    return {
        "machine": machine(),
        "log": {"path": path, "bytes": size, "inputs": n_decoded, "backtested": n,
                "synth_s": gen_s,
                "coins": args.coins, "hours": args.hours, "seed": args.seed},
        "season": {"id": season.id, "start": season.start, "end": season.end},
        "entries": entries,
        "own_inputs": first.own_inputs,
        "verdict": report.get("verdict", {}).get("text"),
        "rounds": args.rounds,
        "clock": "cpu" if os.environ.get(CLOCK_ENV) == "cpu" else "wall",
        "measurements": {
            k: {"label": s.label, "seconds": s.seconds, "best_s": s.best, "median_s": s.median}
            for k, s in series.items()
        },
        "ratios": {
            "b_a_best": b.best / a.best,
            "b_a_median": b.median / a.median,
            "runner_a_best": br.best / a.best,
            "files_s_best": b.best - br.best,
            "r_a_best": r.best / a.best,
            "runner_own_s_best": bn.best - r.best,
            "strategy_s_best": br.best - bn.best,
            "floor_a_best": (r.best + b.best - br.best) / a.best,
            "w_b_best": series["w"].best / b.best,
            "w_b_median": series["w"].median / b.median,
            "nw_n_best": series["n_warm"].best / bn.best,
            "nw_a_best": series["n_warm"].best / a.best,
            "nw_a_median": series["n_warm"].median / a.median,
            "kw_k_best": series["k_warm"].best / series["k"].best,
            "kw_a_best": series["k_warm"].best / a.best,
            "kw_a_median": series["k_warm"].median / a.median,
            "w_a_best": series["w"].best / a.best,
        },
        "targets": {
            "ratio_max": TARGET_RATIO,
            "ratio_best": b.best / a.best <= TARGET_RATIO,
            "ratio_median": b.median / a.median <= TARGET_RATIO,
        },
    }  # fmt: skip


def text_report(doc: dict[str, Any]) -> str:
    m, log, runs = doc["machine"], doc["log"], doc["measurements"]
    n, nb = log["inputs"], log["backtested"]
    made = (
        f"arena synth --coins {log['coins']} --hours {log['hours']:g} --seed {log['seed']} "
        f"({log['synth_s']:.1f} s)"
        if log["synth_s"] is not None
        else "given"
    )
    lines = [
        "arena backtest benchmark",
        f"machine   {m['python']} on {m['platform']}",
        f"          {m['cpu'] or 'cpu model unknown'}; usable cpus {m['cpus_usable']}; "
        f"msgspec {m['msgspec']}",
        f"log       {log['path']}: {n:,} inputs, {mb(log['bytes'])}; {made}",
        f"          the backtest reads {nb:,} of them (it stops at the season's last minute)",
        f"season    {doc['season']['id']}; entries "
        + ", ".join(f"{k} ({v['fills']} fills)" for k, v in doc["entries"].items())
        + f"; {doc['own_inputs']:,} strategy inputs",
        "",
        f"{doc['rounds']} rounds ({doc['clock']} time), interleaved a, r, n, b', b, nw, w, k, "
        "kw; inputs/s over the inputs each read:",
        f"  {'':46} {'best s':>8} {'median s':>9} {'best in/s':>11} {'median in/s':>12}",
    ]
    for key in ("a", "r", "b_nothing", "b_runner", "b", "n_warm", "w", "k", "k_warm"):
        r, k = runs[key], n if key in ("a", "r") else nb
        lines.append(
            f"  {r['label']:46} {r['best_s']:8.3f} {r['median_s']:9.3f} "
            f"{k / r['best_s']:11,.0f} {k / r['median_s']:12,.0f}"
        )
    rt, t = doc["ratios"], doc["targets"]
    lines += [
        "",
        f"  (b)/(a)   best {rt['b_a_best']:.2f}   median {rt['b_a_median']:.2f}",
        f"  (b')/(a)  best {rt['runner_a_best']:.2f}; the files and the report add "
        f"{rt['files_s_best']:.2f} s to the runner (best vs best)",
        "",
        "where (b) goes (best vs best): the engine "
        f"{runs['r']['best_s']:.2f} s ({rt['r_a_best']:.2f}x (a)), the runner's bookkeeping "
        f"{rt['runner_own_s_best']:.2f} s, momentum's own code {rt['strategy_s_best']:.2f} s, "
        f"the files {rt['files_s_best']:.2f} s",
        f"  floor: the engine plus the files alone are {rt['floor_a_best']:.2f}x (a)",
        "",
        f"target (reported, not asserted): (b)/(a) <= {TARGET_RATIO}: best "
        f"{yes(t['ratio_best'])}, median {yes(t['ratio_median'])}",
        f"day cache: (w)/(b) best {rt['w_b_best']:.2f}, median {rt['w_b_median']:.2f} "
        f"(target: under 1/3: {yes(rt['w_b_median'] < 1 / 3)}); a strategy that hooks "
        f"nothing, warm/cold {rt['nw_n_best']:.2f}",
        f"warm vs bare decode (a), best / median: (nw) {rt['nw_a_best']:.2f} / "
        f"{rt['nw_a_median']:.2f}, (kw) {rt['kw_a_best']:.2f} / {rt['kw_a_median']:.2f}; "
        f"a strategy reading every book, warm/cold {rt['kw_k_best']:.2f}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    doc = in_scratch("arena-bench-bt-", args.keep, lambda tmp: run(args, tmp))
    out = json.dumps(doc, indent=1) if args.json else text_report(doc)
    sys.stdout.write(out + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
