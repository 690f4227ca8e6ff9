"""Benchmark: what the run-data collector (``arena_tui.report.rundata``) adds to a backtest.

Run from the repo root::

    python bench/rundata.py                   # arena synth: BTC,ETH,SOL, 24 h, seed 7
    python bench/rundata.py --hours 6 --rounds 5
    python bench/rundata.py --vs baselines    # four entries: many more orders and fills
    python bench/rundata.py --log LOG [--season FILE]   # an existing recording
    python bench/rundata.py --profile 15      # also cProfile one pass: the collector's part
    python bench/rundata.py --json            # one JSON object on stdout, for programs

``arena backtest`` gathers the data report.html and ``arena export`` draw from in its own
pass: a ``Collector`` subscribed to the runner's stream (``run.stream``), called after every
applied input. This times the same ``Backtest.run`` (momentum, no run log, no day cache)
without and with the collector (and its ``data()`` at the end), in one process, rounds
interleaved (without, with, without, ...), CPU time of this process
(``time.process_time``: what another program on a shared machine takes is not counted),
and reports best and median of each
and the collector's cost side by side. Target (reported, not asserted): under 2 % of the
backtest. Best vs best is the figure to quote; a single round's difference is noise.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/rundata.py``: make ``bench`` importable
    sys.path.insert(0, str(ROOT))

from arena_tui.report.rundata import Collector, RunData  # noqa: E402
from arena_tui.run.backtest import Backtest  # noqa: E402
from arena_tui.run.build import entrants_for  # noqa: E402
from arena_tui.run.config import RunConfig  # noqa: E402
from arena_tui.run.stats import exit_value  # noqa: E402
from arena_tui.season.file import resolve_season  # noqa: E402
from bench.backtest import STRATEGY, add_day_args, checked_day_args, day_log  # noqa: E402
from bench.replay import Series, in_scratch, machine, say  # noqa: E402
from engine import Line, Season  # noqa: E402
from engine import events as ev  # noqa: E402

TARGET_PCT = 2.0
CONFIG = RunConfig(cache=False)  # no run log, the logs read as they are


def one_pass(
    path: str, season: Season, collect: bool, vs: str | None = None
) -> tuple[float, RunData | None]:
    """One backtest (with the collector when ``collect``): CPU seconds, the run data."""
    c = Collector() if collect else None
    subscribers = () if c is None else (c,)
    bt = Backtest(
        CONFIG, season, entrants_for(STRATEGY, vs), subscribers=subscribers, exit_value=exit_value
    )
    gc.collect()
    t0 = time.process_time()
    bt.run([path])
    data = c.data() if c is not None else None
    return time.process_time() - t0, data


def in_pass(path: str, season: Season, vs: str | None = None) -> tuple[float, float]:
    """The collector timed inside a real pass, call by call (wall clock, ``perf_counter``:
    cheap to read), beside a do-nothing observer timed the same way in the same pass; the
    difference is the collector's own work (its ``data()`` added), free of the noise
    between passes. The call itself is in both, so taken off: a slight underestimate.
    Returns (collector s, do-nothing s)."""
    c = Collector()
    spent = [0.0, 0.0]
    clock = time.perf_counter

    def nothing(line: Line, raw: bytes, out: list[ev.AnyEvent]) -> None:
        pass

    class Timed:
        """A subscriber timing ``observe`` into ``spent[slot]``."""

        def __init__(self, observe: Callable[[Line, bytes, list[ev.AnyEvent]], None], slot: int):
            self.inner, self.slot = observe, slot

        def bind(self, run: Backtest) -> None:
            if self.slot == 0:
                c.bind(run)

        def observe(self, line: Line, raw: bytes, out: list[ev.AnyEvent]) -> None:
            t0 = clock()
            self.inner(line, raw, out)
            spent[self.slot] += clock() - t0

    timed = (Timed(nothing, 1), Timed(c.observe, 0))
    bt = Backtest(
        CONFIG, season, entrants_for(STRATEGY, vs), subscribers=timed, exit_value=exit_value
    )
    bt.run([path])
    t0 = clock()
    c.data()
    return spent[0] + clock() - t0, spent[1]


def profile(path: str, season: Season, top: int, vs: str | None = None) -> str:
    """One pass with the collector under cProfile: the collector's functions, by
    cumulative time, and the whole pass's total."""
    c = Collector()
    bt = Backtest(
        CONFIG, season, entrants_for(STRATEGY, vs), subscribers=(c,), exit_value=exit_value
    )
    prof = cProfile.Profile()
    prof.enable()
    bt.run([path])
    c.data()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(r"rundata\.py", top)
    return out.getvalue()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/rundata.py",
        description="Time a backtest with and without the run-data collector.",
    )
    add_day_args(p)
    p.add_argument("--profile", type=int, metavar="N", help="also profile: top N rows")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (the day)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    return checked_day_args(p, argv)


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    path, gen_s = day_log(args, tmp)
    season = resolve_season([path], args.season)
    say("untimed pass (warms the page cache and the decimal memo) ...")
    _, data = one_pass(path, season, True, args.vs)
    assert data is not None
    without, with_ = Series("without the collector"), Series("with the collector")
    for i in range(args.rounds):
        for series, collect in ((without, False), (with_, True)):
            seconds, _ = one_pass(path, season, collect, args.vs)
            series.seconds.append(seconds)
            say(f"round {i + 1}/{args.rounds}  {series.label:22} {seconds:7.3f} s")
    cost = with_.best - without.best
    say("the collector timed inside passes, beside a do-nothing observer ...")
    inside = [in_pass(path, season, args.vs) for _ in range(args.rounds)]
    own = min(collector - nothing for collector, nothing in inside)
    doc: dict[str, Any] = {
        "machine": machine(),
        "log": {"path": path, "synth_s": gen_s, "coins": args.coins, "hours": args.hours,
                "seed": args.seed},
        "gathered": {"prices": len(data.prices), "marks": len(data.marks),
                     "fills": len(data.fills), "orders": len(data.orders)},
        "vs": args.vs,
        "rounds": args.rounds,
        "without_s": without.seconds,
        "with_s": with_.seconds,
        "without_best_s": without.best,
        "with_best_s": with_.best,
        "cost_best_s": cost,
        "cost_best_pct": 100 * cost / without.best,
        "cost_median_s": with_.median - without.median,
        "cost_median_pct": 100 * (with_.median - without.median) / without.median,
        "alone_s": own,
        "alone_pct": 100 * own / without.best,
        "target_pct": TARGET_PCT,
        "target_met": 100 * own / without.best < TARGET_PCT,
    }  # fmt: skip
    if args.profile:
        say("profiling one pass ...")
        doc["profile"] = profile(path, season, args.profile, args.vs)
    return doc


def text_report(doc: dict[str, Any]) -> str:
    m, log, g = doc["machine"], doc["log"], doc["gathered"]
    made = f"{log['coins']}, {log['hours']:g} h, seed {log['seed']}" if log["synth_s"] else "given"
    lines = [
        "run-data collector benchmark",
        f"machine   {m['python']} on {m['platform']}; usable cpus {m['cpus_usable']}; "
        f"load {m['loadavg']}",
        f"log       {log['path']} ({made})",
        f"gathered  {g['prices']:,} price rows, {g['marks']:,} marks, {g['fills']:,} fills, "
        f"{g['orders']:,} orders",
        "",
        f"{doc['rounds']} rounds interleaved, CPU seconds of Backtest.run "
        f"(momentum{' --vs ' + doc['vs'] if doc['vs'] else ''}):",
        f"  {'':22} {'best s':>8} {'median s':>9}",
        f"  {'without the collector':22} {min(doc['without_s']):8.3f} "
        f"{sorted(doc['without_s'])[len(doc['without_s']) // 2]:9.3f}",
        f"  {'with the collector':22} {min(doc['with_s']):8.3f} "
        f"{sorted(doc['with_s'])[len(doc['with_s']) // 2]:9.3f}",
        f"  {'the collector costs':22} {doc['cost_best_s']:8.3f} {doc['cost_median_s']:9.3f}"
        f"   ({doc['cost_best_pct']:.1f} % best vs best, {doc['cost_median_pct']:.1f} % median)",
        "",
        f"the collector timed inside the pass, less a do-nothing observer's calls (best of "
        f"{doc['rounds']}): {doc['alone_s']:.3f} s = {doc['alone_pct']:.1f} % of the "
        "backtest without it",
        "",
        f"target (reported, not asserted): the collector alone under {doc['target_pct']:g} % "
        "of the backtest: " + ("met" if doc["target_met"] else "NOT met"),
    ]
    if "profile" in doc:
        lines += ["", "one pass under cProfile, the collector's functions:", doc["profile"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    doc = in_scratch("arena-bench-rundata-", args.keep, lambda tmp: run(args, tmp))
    print(json.dumps(doc, indent=2) if args.json else text_report(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
