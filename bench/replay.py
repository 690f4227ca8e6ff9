"""Benchmark: replaying a season log vs. merely decoding its lines with msgspec.

Run from the repo root::

    python bench/replay.py                 # a generated 1,000,000-input log in a temp dir
    python bench/replay.py --inputs 4000000 --keep
    python bench/replay.py --log LOG [--season FILE]    # an existing log
    python bench/replay.py --json          # one JSON object on stdout, for programs

It measures, three rounds interleaved (a, a', b, b', c, c', a, a', b, ...):

  (a)  every line read in binary and ``msgspec.json.decode``-d into Python objects;
  (a') the same with the reader's typed decoder ``msgspec.json.Decoder(engine.inputs.Line)``,
       which only skims a book (its levels stay ``msgspec.Raw``);
  (b)  the full replay, ``arena_tui.run.replay.replay([log], season)``, in this process;
  (b') the same of the log as ``.jsonl.lz4`` (written once before, untimed, as arena's
       writers compress: what ``arena import``, ``record`` and ``fetch`` write), cold: no
       day cache (a large file is read, decompressed and hashed ahead in a second thread:
       ``logs.readahead``);
  (c)  the same from the log's day cache (written once before, untimed: what
       ``arena replay`` does for a log an earlier backtest, import or ``--cache`` cached);
  (c') the same of the ``.lz4`` copy from its day cache (written by ``arena replay --cache``
       of it, untimed: the cache keeps the hash of the uncompressed bytes, so nothing of
       the compressed file is read);

then ``arena replay LOG --season FILE --json`` once as a subprocess, reading the log and from
its day cache (the CLI's overhead; the second is what a user gets by default), and
the peak RSS of a replay in a fresh subprocess for N and N/4 inputs. Nothing is asserted:
the project's targets ((b)/(a) <= 1.5, >= 1,000,000 inputs/s; (b') >= 500,000 inputs/s; (c)
>= 2,000,000 inputs/s) are only reported.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import io
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as ``python bench/replay.py``: make ``bench`` importable
    sys.path.insert(0, str(ROOT))

import msgspec  # noqa: E402

from arena_tui.logs.logfile import iter_raw_lines, open_binary  # noqa: E402
from arena_tui.logs.writer import compressed_writer  # noqa: E402
from arena_tui.run.replay import ReplayResult, replay  # noqa: E402
from arena_tui.season.file import load_season, resolve_season  # noqa: E402
from arena_tui.util.jsonout import dumps  # noqa: E402
from bench import genlog  # noqa: E402
from engine import ENGINE, Season  # noqa: E402
from engine import events as ev  # noqa: E402
from engine.inputs import Header, Line  # noqa: E402

TARGET_RATIO = 1.5
CLOCK_ENV = "ARENA_BENCH_CLOCK"  # "cpu": time the CPU this process used, not the wall
TARGET_RATE = 1_000_000
TARGET_CACHED_RATE = 2_000_000  # a replay from the day cache (issue 25)
TARGET_COLD_LZ4_RATE = 500_000  # a replay of a cold .lz4 day (issue 25)
DEFAULT_SEED = 20261207

# Peak RSS of one replay in a fresh interpreter. ru_maxrss is KiB on Linux, bytes on macOS.
# On Linux a process's ru_maxrss survives exec: a child starts at the peak of the process that
# spawned it (this benchmark, hundreds of MiB after a replay). A process made by fork starts
# afresh, so the replay runs in a fork of a freshly started interpreter, after its imports.
RSS_CHILD = """
import json, os, resource, sys, time
from arena_tui.run.replay import replay
from arena_tui.season.file import load_season

def maxrss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (
        1 if sys.platform == "darwin" else 1024)

def vmhwm():
    try:
        with open("/proc/self/status") as f:
            for row in f:
                if row.startswith("VmHWM:"):
                    return int(row.split()[1]) * 1024
    except OSError:
        pass
    return None

r, w = os.pipe()
pid = os.fork()
if pid == 0:
    code = 1
    try:
        os.close(r)
        before = maxrss()
        season = load_season(sys.argv[2])
        t0 = time.perf_counter()
        result = replay([sys.argv[1]], season)
        seconds = time.perf_counter() - t0
        doc = {"inputs": result.inputs, "seconds": seconds, "rss_before": before,
               "rss_peak": maxrss(), "vmhwm": vmhwm()}
        os.write(w, json.dumps(doc).encode())
        code = 0
    finally:
        os._exit(code)
os.close(w)
data = b""
while chunk := os.read(r, 65536):
    data += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(data.decode())
sys.exit(0 if status == 0 and data else 1)
"""


def say(text: str) -> None:
    """Progress, on stderr, so that stdout holds only the report (or the JSON)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


# ---- the three measurements ----------------------------------------------------------------


def decode_generic(path: str) -> int:
    """(a): every line, header included, decoded into plain Python objects."""
    decode = msgspec.json.decode
    n = 0
    with open_binary(path) as f:
        for raw in f:
            try:
                decode(raw)
            except msgspec.DecodeError:
                if raw.endswith(b"\n"):
                    raise
                break  # a torn final line, which the reader ignores too
            n += 1
    return n - 1  # inputs: the header is not one


def decode_typed(path: str) -> int:
    """(a'): the header with its schema, then every line with the reader's ``Line`` schema.

    A line the typed schema refuses (another channel, another coin's odd message) falls back
    to the generic decoder, as the reader does. In both, a torn final line is skipped.
    """
    decode = msgspec.json.Decoder(Line).decode
    generic = msgspec.json.decode
    n = 0
    with open_binary(path) as f:
        msgspec.json.Decoder(Header).decode(f.readline())
        for raw in f:
            try:
                decode(raw)
            except msgspec.DecodeError:
                if not raw.endswith(b"\n"):
                    break  # a torn final line, which the reader ignores too
                generic(raw)
            n += 1
    return n


def full_replay(path: str, season: Season) -> ReplayResult:
    """(b): what ``arena replay`` runs on a log read for the first time, in this process."""
    return replay([path], season)


def cached_replay(path: str, season: Season) -> ReplayResult:
    """(c): what ``arena replay`` runs on a log whose day cache was written before."""
    result = replay([path], season, cache="read")
    if not result.cached:
        raise SystemExit("(c) did not read the day cache")
    return result


@dataclass
class Series:
    label: str
    seconds: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def in_scratch(prefix: str, keep: bool, work: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """``work`` run in a new temporary directory, removed after it unless ``keep``."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        return work(tmp)
    finally:
        if keep:
            say(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    """Seconds ``fn`` took: wall time, or with ``ARENA_BENCH_CLOCK=cpu`` the CPU time of this
    process (steadier on a shared, busy machine; only for work done in this process)."""
    clock = time.process_time if os.environ.get(CLOCK_ENV) == "cpu" else time.perf_counter
    t0 = clock()
    out = fn()
    return clock() - t0, out


# ---- facts about the run -------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        for row in Path("/proc/cpuinfo").read_text().splitlines():
            if row.startswith("model name"):
                cpu = row.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "msgspec": msgspec.__version__,
        "engine": ENGINE,  # compiled, or the Python sources and why (a stale build says so)
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def content(path: str, season: Season) -> tuple[ReplayResult, dict[str, Any]]:
    """An untimed replay counting the engine's events: what the log makes the engine do.

    It also warms the page cache, so that every timed round reads the file from memory.
    """
    kinds: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    taker = 0

    def on_event(e: ev.AnyEvent) -> None:
        nonlocal taker
        kinds[type(e).__name__] += 1
        if isinstance(e, ev.Rejected | ev.Closed):
            reasons[f"{type(e).__name__}:{e.reason.value}"] += 1
        elif isinstance(e, ev.Fill) and e.taker:
            taker += 1

    result = replay([path], season, on_event=on_event)
    return result, {
        "events": dict(sorted(kinds.items())),
        "reasons": dict(sorted(reasons.items())),
        "fills": result.fills,
        "taker_fills": taker,
        "maker_fills": result.fills - taker,
        "final": result.final,
        "log_sha256": result.log_sha256,
        "fills_sha256": result.fills_sha256,
    }


def rss(path: str, season_file: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", RSS_CHILD, path, season_file],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def cli(path: str, season_file: str, cache: bool = False) -> tuple[float, dict[str, Any]]:
    """``arena replay PATH --json`` in a subprocess: reading the log (``--no-cache``), or
    as a user runs it, from the day cache written before (``cache``)."""
    exe = shutil.which("arena")
    cmd = [exe] if exe else [sys.executable, "-m", "arena_tui.cli"]
    t0 = time.perf_counter()
    out = subprocess.run(
        [*cmd, "replay", path, "--season", season_file, "--json"]
        + ([] if cache else ["--no-cache"]),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - t0
    doc: dict[str, Any] = json.loads(out.stdout)
    return seconds, doc


def cli_startup() -> float:
    """A fresh interpreter importing the CLI: the fixed part of the CLI's overhead."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import arena_tui.cli"], cwd=ROOT, check=True)
    return time.perf_counter() - t0


def write_lz4(src: str, dst: Path) -> None:
    """``src`` (any compression) as ``dst``, an .lz4 file as arena's log writers write one."""
    with dst.open("wb") as raw, compressed_writer(raw, dst.name) as f:
        for line in iter_raw_lines(src):
            f.write(line + b"\n")


def write_prefix(src: str, dst: Path, n_inputs: int) -> None:
    """The header and the first ``n_inputs`` inputs of ``src`` (any compression), plain."""
    with dst.open("wb") as f:
        for i, raw in enumerate(iter_raw_lines(src)):
            if i > n_inputs:
                break
            f.write(raw + b"\n")


def profile(path: str, season: Season, top: int) -> str:
    prof = cProfile.Profile()
    prof.enable()
    replay([path], season)
    prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue()


# ---- the report ----------------------------------------------------------------------------


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def utc(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms // 1000))


def yes(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report(doc: dict[str, Any]) -> str:
    m, log, runs = doc["machine"], doc["log"], doc["measurements"]
    n = log["inputs"]
    lines = [
        "arena replay benchmark",
        f"machine   {m['python']} on {m['platform']}",
        f"          {m['cpu'] or 'cpu model unknown'}; cpu_count {m['cpu_count']}, "
        f"usable {m['cpus_usable']}; msgspec {m['msgspec']}; load average at the end "
        + (" ".join(f"{x:.2f}" for x in m["loadavg"]) if m["loadavg"] else "n/a"),
        f"log       {log['path']}",
        f"          {n:,} inputs, {mb(log['bytes'])}"
        + (
            f", generated in {log['generate_s']:.1f} s (seed {log['seed']})"
            if log.get("generate_s") is not None
            else " (given)"
        ),
    ]
    if log.get("mix"):
        mix = log["mix"]
        lines.append(
            f"          {mix['books']:,} l2Book, {mix['trades']:,} trades "
            f"({mix['prints']:,} prints), {mix['ctxs']:,} activeAssetCtx, {mix['ticks']:,} tick, "
            f"{mix['registers']} register, {mix['orders']} order "
            f"({', '.join(f'{k} {v}' for k, v in sorted(mix['by_tif'].items()))}), "
            f"{mix['cancels']} cancel"
        )
    s = doc["season"]
    c = doc["content"]
    ev_counts = c["events"]
    lines += [
        f"season    {s['id']}  {utc(s['start'])} -> {utc(s['end'])}  rules_sha256 "
        f"{s['rules_sha256'][:16]}...",
        f"engine    {ev_counts.get('Accepted', 0)} accepted, {ev_counts.get('Rejected', 0)} "
        f"rejected, {c['fills']} fills ({c['taker_fills']} taker, {c['maker_fills']} maker), "
        f"{ev_counts.get('MinuteMark', 0):,} entry-marks, final {str(c['final']).lower()}",
        "          " + ", ".join(f"{k} {v}" for k, v in c["reasons"].items()),
        f"          log_sha256 {c['log_sha256']}",
        f"          fills_sha256 {c['fills_sha256']}",
        "",
        f"{doc['rounds']} rounds, interleaved a, a', b, b', c, c'; seconds and inputs/s "
        f"({n:,} inputs each):",
        f"  {'':52} {'best s':>8} {'median s':>9} {'best in/s':>11} {'median in/s':>12}",
    ]
    for key in ("a", "a_typed", "b", "b_lz4", "c", "c_lz4"):
        if key not in runs:  # (a document from before (c'))
            continue
        r = runs[key]
        lines.append(
            f"  {r['label']:52} {r['best_s']:8.3f} {r['median_s']:9.3f} "
            f"{n / r['best_s']:11,.0f} {n / r['median_s']:12,.0f}"
        )
    cl = doc["cli"]
    lines += [
        f"  {'arena replay --json --no-cache (subprocess, once)':52} {cl['seconds']:8.3f} "
        f"{'':9} {n / cl['seconds']:11,.0f}",
        f"  {'arena replay --json, from the day cache (the same)':52} "
        f"{cl['cached_seconds']:8.3f} {'':9} {n / cl['cached_seconds']:11,.0f}",
        f"  CLI minus in-process best (b): {cl['seconds'] - runs['b']['best_s']:+.3f} s "
        f"(interpreter start + imports alone: {cl['startup_s']:.3f} s); same replay object "
        f"as in-process (both): {'yes' if cl['same_output'] else 'NO'}",
        "",
        f"  (b)/(a)   best {doc['ratios']['b_a_best']:.2f}   median "
        f"{doc['ratios']['b_a_median']:.2f}",
        f"  (b)/(a')  best {doc['ratios']['b_at_best']:.2f}   median "
        f"{doc['ratios']['b_at_median']:.2f}",
        f"  (b)/(c)   best {doc['ratios']['b_c_best']:.2f}   median "
        f"{doc['ratios']['b_c_median']:.2f}  (the day cache's speed-up)",
        "",
        "targets (reported, not asserted):",
    ]
    t = doc["targets"]
    lines += [
        f"  (b)/(a) <= {TARGET_RATIO}:           best {yes(t['ratio_best'])}, "
        f"median {yes(t['ratio_median'])}",
        f"  >= {TARGET_RATE:,} inputs/s (b): best {yes(t['rate_best'])} "
        f"({n / runs['b']['best_s']:,.0f}/s), median {yes(t['rate_median'])}",
        f"  >= {TARGET_COLD_LZ4_RATE:,} inputs/s (b'): best {yes(t['lz4_rate_best'])} "
        f"({n / runs['b_lz4']['best_s']:,.0f}/s), median {yes(t['lz4_rate_median'])}",
        f"  >= {TARGET_CACHED_RATE:,} inputs/s (c): best {yes(t['cached_rate_best'])} "
        f"({n / runs['c']['best_s']:,.0f}/s), median {yes(t['cached_rate_median'])}",
        "",
        "peak RSS of a replay in a fresh subprocess (getrusage ru_maxrss, see RSS_CHILD):",
    ]
    for r in doc["rss"]:
        lines.append(
            f"  {r['inputs']:>11,} inputs: peak {mib(r['rss_peak'])} "
            f"(after imports {mib(r['rss_before'])}, replay grew it by "
            f"{mib(r['rss_peak'] - r['rss_before'])}; VmHWM "
            f"{mib(r['vmhwm']) if r['vmhwm'] else 'n/a'}); {r['seconds']:.2f} s"
        )
    if len(doc["rss"]) == 2:
        big, small = doc["rss"]
        lines.append(
            f"  peak(N) / peak(N/4) = {big['rss_peak'] / small['rss_peak']:.2f} "
            "(1.00 = flat in the log's length)"
        )
    return "\n".join(lines)


# ---- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/replay.py",
        description="Time arena's replay against plain msgspec decoding of the same log.",
    )
    p.add_argument("--inputs", type=int, default=1_000_000, help="inputs to generate")
    p.add_argument("--log", help="take this existing log instead of generating one")
    p.add_argument("--season", help="season file for --log (default: as `arena replay`)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generator seed")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (log, season)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.add_argument("--profile", type=int, metavar="TOP", default=0, help="cProfile one replay")
    args = p.parse_args(argv)
    if args.inputs < 10_000:
        p.error("--inputs must be at least 10,000 (the log must span whole minutes)")
    if args.season and not args.log:
        p.error("--season goes with --log")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    doc = in_scratch("arena-bench-", args.keep, lambda tmp: run(args, tmp))
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    else:
        sys.stdout.write(report(doc) + "\n")
        if doc.get("profile"):
            sys.stdout.write("\ncProfile of one replay (tottime):\n" + doc["profile"])
    return 0


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    log_doc: dict[str, Any]
    if args.log:
        path = str(args.log)
        season = resolve_season([path], args.season)
        if args.season:
            season_file = str(args.season)
        else:  # the season `arena replay` would choose, written out for the subprocesses
            season_file = str(tmp / "season.json")
            Path(season_file).write_bytes(msgspec.json.encode(season))
        size = sum(len(raw) + 1 for raw in iter_raw_lines(path))
        log_doc = {"path": path, "bytes": size, "generate_s": None, "mix": None}
    else:
        say(f"generating {args.inputs:,} inputs (seed {args.seed}) in {tmp} ...")
        t0 = time.perf_counter()
        log_path, season_path, stats = genlog.write_log(tmp, args.inputs, args.seed)
        gen_s = time.perf_counter() - t0
        path, season_file = str(log_path), str(season_path)
        season = load_season(season_path)
        mix = {
            k: getattr(stats, k)
            for k in ("books", "trades", "prints", "ctxs", "ticks", "registers", "orders")
        }
        mix |= {"cancels": stats.cancels, "by_tif": stats.by_tif}
        log_doc = {
            "path": path,
            "season_file": season_file,
            "bytes": stats.bytes,
            "generate_s": gen_s,
            "seed": args.seed,
            "mix": mix,
        }

    say("untimed replay (event counts; warms the page cache) ...")
    checked, facts = content(path, season)
    n = checked.inputs
    log_doc["inputs"] = n

    say("writing the log as .lz4 (untimed) ...")
    lz4_path = str(tmp / "copy.jsonl.lz4")
    write_lz4(path, Path(lz4_path))
    if replay([lz4_path], season).to_json() != checked.to_json():
        raise SystemExit("the .lz4 copy gave another replay object")

    say("writing the log's day cache and the .lz4 copy's (arena replay --cache; untimed) ...")
    os.environ["ARENA_CACHE_DIR"] = str(tmp / "cache")  # (this process and its children)
    for p in (path, lz4_path):
        if replay([p], season, cache="write").to_json() != checked.to_json():
            raise SystemExit("the replay that wrote a day cache gave another replay object")

    series = {
        "a": Series("(a)  msgspec.json.decode, every line (generic)"),
        "a_typed": Series("(a') Decoder(engine.inputs.Line), skim (Raw levels)"),
        "b": Series("(b)  arena_tui.run.replay.replay, in-process"),
        "b_lz4": Series("(b') the same of the log as .lz4, cold"),
        "c": Series("(c)  the same from the log's day cache"),
        "c_lz4": Series("(c') the .lz4 copy from its day cache"),
    }
    runs: list[tuple[str, Callable[[], object]]] = [
        ("a", lambda: decode_generic(path)),
        ("a_typed", lambda: decode_typed(path)),
        ("b", lambda: full_replay(path, season)),
        ("b_lz4", lambda: full_replay(lz4_path, season)),
        ("c", lambda: cached_replay(path, season)),
        ("c_lz4", lambda: cached_replay(lz4_path, season)),
    ]
    for i in range(args.rounds):
        for key, fn in runs:
            seconds, out = timed(fn)
            got = out.inputs if isinstance(out, ReplayResult) else out
            if got != n:
                raise SystemExit(f"{key} saw {got} inputs, expected {n}")
            if isinstance(out, ReplayResult) and out.to_json() != checked.to_json():
                raise SystemExit(f"{key} gave another replay object")
            series[key].seconds.append(seconds)
            say(f"round {i + 1}/{args.rounds}  {key:8} {seconds:7.3f} s")

    say("arena replay --json as a subprocess ...")
    cli_s, cli_doc = cli(path, season_file)
    cached_s, cached_doc = cli(path, season_file, cache=True)
    startup_s = cli_startup()
    same = cli_doc == json.loads(dumps(checked.to_json())) == cached_doc

    say("peak RSS: replay of N and of N/4 inputs in fresh subprocesses ...")
    quarter = tmp / "quarter.jsonl"
    write_prefix(path, quarter, n // 4)
    rss_runs = [rss(path, season_file), rss(str(quarter), season_file)]

    a, at, b, c = series["a"], series["a_typed"], series["b"], series["c"]
    doc: dict[str, Any] = {
        "machine": machine(),
        "log": log_doc,
        "season": {
            "id": season.id,
            "start": season.start,
            "end": season.end,
            "rules_sha256": season.rules_sha256,
        },
        "content": facts,
        "rounds": args.rounds,
        "measurements": {
            k: {"label": s.label, "seconds": s.seconds, "best_s": s.best, "median_s": s.median}
            for k, s in series.items()
        },
        "cli": {
            "seconds": cli_s,
            "cached_seconds": cached_s,
            "startup_s": startup_s,
            "same_output": same,
        },
        "ratios": {
            "b_a_best": b.best / a.best,
            "b_a_median": b.median / a.median,
            "b_at_best": b.best / at.best,
            "b_at_median": b.median / at.median,
            "b_c_best": b.best / c.best,
            "b_c_median": b.median / c.median,
        },
        "targets": {
            "ratio_max": TARGET_RATIO,
            "rate_min": TARGET_RATE,
            "ratio_best": b.best / a.best <= TARGET_RATIO,
            "ratio_median": b.median / a.median <= TARGET_RATIO,
            "rate_best": n / b.best >= TARGET_RATE,
            "rate_median": n / b.median >= TARGET_RATE,
            "lz4_rate_min": TARGET_COLD_LZ4_RATE,
            "lz4_rate_best": n / series["b_lz4"].best >= TARGET_COLD_LZ4_RATE,
            "lz4_rate_median": n / series["b_lz4"].median >= TARGET_COLD_LZ4_RATE,
            "cached_rate_min": TARGET_CACHED_RATE,
            "cached_rate_best": n / c.best >= TARGET_CACHED_RATE,
            "cached_rate_median": n / c.median >= TARGET_CACHED_RATE,
        },
        "rss": rss_runs,
    }
    if args.profile:
        say("cProfile of one replay ...")
        doc["profile"] = profile(path, season, args.profile)
    return doc


if __name__ == "__main__":
    raise SystemExit(main())
