"""Benchmark: K variants of a strategy in one engine pass vs. K separate runs vs. one run.

Run from the repo root::

    python bench/sweep.py                    # K = 64 momentum variants, 24 h, 3 coins (long)
    python bench/sweep.py --k 16 --hours 6   # quicker
    python bench/sweep.py --log LOG          # an existing recording
    python bench/sweep.py --json             # one JSON object on stdout, for programs

It writes the day with ``arena synth --coins BTC,ETH,SOL --hours 24 --seed 7`` (a
subprocess: the real command), makes K variants of the strategy from its declared
parameters (the first two numeric ones, each at 8 multiples of its default: 0.5x to 2x,
a grid of up to 64), then times, in interleaved rounds (1, K, sep, 1, K, sep, ...):

  (1)   ``run_job`` with one variant: one run of the strategy over the day;
  (K)   ``run_job`` with the K variants: one pass, the day decoded once (``arena sweep``'s
        job);
  (sep) ``run_job`` K times with one variant each, in this process, one after another.

Each job is what a sweep's worker runs: the day's SHA-256 checked, the strategies loaded,
the pass, the results; no run log. The control is left out of all three (a sweep adds it
to every pass), so they compare the same K runs. The separate runs' results must equal the
one pass's, variant by variant (score, fills without order ids, equity curve): a
difference stops the benchmark. Nothing is asserted about time: the goals (one pass at
least 10x faster than separate runs, and under 10x one run) are reported as met or not.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/sweep.py``: make ``bench`` importable
    sys.path.insert(0, str(ROOT))

from arena_tui.run.loader import entry_name, load_strategy  # noqa: E402
from arena_tui.run.params import ParamValue, strategy_params, variant_name  # noqa: E402
from arena_tui.sweep.jobs import DayResult, Job, Variant, day_file, run_job  # noqa: E402
from bench.backtest import synth  # noqa: E402
from bench.replay import Series, in_scratch, machine, say, timed, yes  # noqa: E402

STRATEGY = ROOT / "strategies" / "momentum.py"
FACTORS = (0.5, 0.625, 0.75, 0.875, 1.0, 1.25, 1.5, 2.0)
SEPARATE_MIN = 10.0  # goal: the one pass at least this many times faster than separate runs
SINGLE_MAX = 10.0  # goal: the one pass under this many times one run


def _scaled(default: ParamValue, factor: float) -> ParamValue:
    if isinstance(default, int):
        return max(1, round(default * factor)) if default > 0 else default
    assert isinstance(default, float)
    return default * factor


def variants(strategy: Path, k: int) -> list[Variant]:
    """K distinct variants: the first two numeric parameters over FACTORS x FACTORS."""
    cls = type(load_strategy(strategy))
    params = strategy_params(cls)
    numeric = [
        p for p in params.values() if p.type in (int, float) and isinstance(p.default, int | float)
    ][:2]
    if not numeric:
        raise SystemExit(f"{strategy}: declares no numeric parameter to vary")
    out: dict[str, Variant] = {}
    base = entry_name(strategy)
    for combo in itertools.product(FACTORS, repeat=len(numeric)):
        values = {p.name: _scaled(p.default, f) for p, f in zip(numeric, combo, strict=True)}
        full = {name: values.get(name, p.default) for name, p in params.items()}
        name = variant_name(base, values, params)
        out.setdefault(name, Variant(name, full))
        if len(out) == k:
            return list(out.values())
    raise SystemExit(f"only {len(out)} distinct variants of {strategy}'s parameters, asked {k}")


def same(one: DayResult, separate: list[DayResult]) -> None:
    """The separate runs' entries equal the one pass's, variant by variant."""
    alone = [r.entries[0] for r in separate]
    if one.entries != alone:
        for a, b in zip(one.entries, alone, strict=True):
            if a != b:
                raise SystemExit(f"variant {a.name}: one pass {a} != alone {b}")
    return None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/sweep.py",
        description="Time K strategy variants in one pass against K separate runs.",
    )
    p.add_argument("--k", type=int, default=64, help="variants (default 64)")
    p.add_argument("--strategy", type=Path, default=STRATEGY, help="default: momentum")
    p.add_argument("--coins", default="BTC,ETH,SOL", help="coins for arena synth")
    p.add_argument("--hours", type=float, default=24.0, help="hours for arena synth")
    p.add_argument("--seed", type=int, default=7, help="arena synth's seed")
    p.add_argument("--log", type=Path, help="take this recording instead of synthesising one")
    p.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (the day)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = p.parse_args(argv)
    if args.k < 1 or args.k > len(FACTORS) ** 2:
        p.error(f"--k must be 1 to {len(FACTORS) ** 2}")
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    return args


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    if args.log:
        path, gen_s = args.log, None
    else:
        path = tmp / "synth.jsonl"
        say(f"arena synth --coins {args.coins} --hours {args.hours:g} --seed {args.seed} ...")
        gen_s = synth(path, args.coins, args.hours, args.seed)
    day = day_file(path)
    strategy = str(args.strategy)
    vs = variants(args.strategy, args.k)
    one_job = Job(strategy, day, vs[:1], control=False)
    k_job = Job(strategy, day, vs, control=False)
    single_jobs = [Job(strategy, day, [v], control=False) for v in vs]
    series = {
        "one": Series("(1)   one run"),
        "k": Series(f"(K)   {len(vs)} variants, one pass"),
        "sep": Series(f"(sep) {len(vs)} separate runs"),
    }
    runs: list[tuple[str, Callable[[], object]]] = [
        ("one", lambda: run_job(one_job)),
        ("k", lambda: run_job(k_job)),
        ("sep", lambda: [run_job(j) for j in single_jobs]),
    ]
    got: dict[str, Any] = {}
    for i in range(args.rounds):
        for key, fn in runs:
            seconds, got[key] = timed(fn)
            series[key].seconds.append(seconds)
            say(f"round {i + 1}/{args.rounds}  {key:4} {seconds:8.3f} s")
    same(got["k"], got["sep"])
    k_result: DayResult = got["k"]
    one, k, sep = series["one"], series["k"], series["sep"]
    return {
        "machine": machine(),
        "log": {"path": str(path), "bytes": day.size, "inputs": k_result.inputs,
                "synth_s": gen_s, "coins": args.coins, "hours": args.hours, "seed": args.seed},
        "strategy": strategy,
        "k": len(vs),
        "variants": [v.name for v in vs],
        "fills": {e.name: e.fills for e in k_result.entries},
        "rounds": args.rounds,
        "measurements": {
            key: {"label": s.label, "seconds": s.seconds, "best_s": s.best, "median_s": s.median}
            for key, s in series.items()
        },
        "ratios": {
            "separate_over_one_pass_best": sep.best / k.best,
            "separate_over_one_pass_median": sep.median / k.median,
            "one_pass_over_one_run_best": k.best / one.best,
            "one_pass_over_one_run_median": k.median / one.median,
        },
        "targets": {
            "separate_over_one_pass_min": SEPARATE_MIN,
            "one_pass_over_one_run_max": SINGLE_MAX,
            "faster_than_separate": sep.median / k.median >= SEPARATE_MIN,
            "close_to_one_run": k.median / one.median < SINGLE_MAX,
        },
    }  # fmt: skip


def text_report(doc: dict[str, Any]) -> str:
    m, log, runs, r, t = (
        doc["machine"],
        doc["log"],
        doc["measurements"],
        doc["ratios"],
        doc["targets"],
    )
    fills = sorted(doc["fills"].values())
    lines = [
        f"bench/sweep.py: {doc['k']} variants of {Path(doc['strategy']).name} over "
        f"{log['hours']:g} h of {log['coins']} (arena synth seed {log['seed']}; "
        f"{log['inputs']:,} inputs, {log['bytes'] / 1e6:.1f} MB), {doc['rounds']} rounds",
        f"machine: {m['cpu']} ({m['cpus_usable']} usable cores), {m['python']}",
        f"fills per variant: {fills[0]} to {fills[-1]}",
        "",
    ]
    for key in ("one", "k", "sep"):
        s = runs[key]
        lines.append(f"  {s['label']:32} best {s['best_s']:8.3f} s  median {s['median_s']:8.3f} s")
    lines += [
        "",
        f"separate runs / one pass: {r['separate_over_one_pass_median']:.1f}x (median; "
        f"best {r['separate_over_one_pass_best']:.1f}x); "
        f"goal >= {t['separate_over_one_pass_min']:g}x: {yes(t['faster_than_separate'])}",
        f"one pass / one run:       {r['one_pass_over_one_run_median']:.2f}x (median; "
        f"best {r['one_pass_over_one_run_best']:.2f}x); "
        f"goal < {t['one_pass_over_one_run_max']:g}x: {yes(t['close_to_one_run'])}",
        "every variant's score, fills (without order ids) and equity curve: the same in one "
        "pass as alone",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    doc = in_scratch("arena-bench-sweep-", args.keep, lambda tmp: run(args, tmp))
    out = json.dumps(doc, indent=1) if args.json else text_report(doc)
    sys.stdout.write(out + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
