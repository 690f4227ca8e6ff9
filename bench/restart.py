"""Benchmark: ``arena host``'s restart, with a checkpoint and without, at two log lengths.

Run from the repo root::

    python bench/restart.py                          # 1,000,000 and 3,000,000 inputs
    python bench/restart.py --inputs 500000,2000000  # other lengths
    python bench/restart.py --json                   # one JSON object on stdout

For each length it writes a season log with ``bench/genlog.py`` (Hyperliquid-shaped market
data for four coins, a tick a second, six entries trading; one million inputs are about 36
hours and 540 MB), then measures, side by side in one run on the same (page-cached) bytes:

- the restart as it was: a host session opening the log with no checkpoint (the whole log
  replayed: engine, views, score rows);
- the restart with a checkpoint: the session that wrote the checkpoint stopped one hour of
  log time before the log's end (the most a crash costs at ``--checkpoint-every 1h``); a
  new session finds it, checks it against the log, loads it and replays the last hour.
  Both checks: ``full`` (the SHA-256 of the whole prefix before the start) and ``quick``
  (the default: the prefix's size and its first and last MiB, the rest hashed behind the
  start in a thread; the time until that check is done is printed too);

and, of the checkpoint: its size, the time the loop spends copying the state (the only
part on the order path before the loop yields), the longest single frame's encoding (the
longest the loop is held at a time while it is written), the write and fsync in a thread,
and the SHA-256 rate over the log (the part of a restart that grows with the season).

Restart here is ``Session.open``: the part of ``arena host``'s start that depends on the
log (the HTTP listener and the feed start in milliseconds after it). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena_tui.host import checkpoint  # noqa: E402
from arena_tui.host.checkpoint import Checkpoints  # noqa: E402
from arena_tui.host.prefix import Behind  # noqa: E402
from arena_tui.host.session import Session  # noqa: E402
from arena_tui.host.store import ScoreStore  # noqa: E402
from arena_tui.host.views import Marks, Views  # noqa: E402
from arena_tui.logs.logfile import line_t  # noqa: E402
from arena_tui.season.file import load_season  # noqa: E402
from bench import genlog  # noqa: E402
from engine import Engine, Line, Season  # noqa: E402
from engine import events as ev  # noqa: E402
from engine.inputs import Register  # noqa: E402

HOUR_MS = 3_600_000


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def session(log: Path, season: Season, ck: bool, notes: list[str], check: str = "quick") -> Session:
    every = Checkpoints(log, HOUR_MS, notes.append, check=check) if ck else None
    db = log.with_name(f"{log.name}.{time.monotonic_ns()}.sqlite")
    return Session(season, log, {}, ScoreStore(db), clock=lambda: 0, checkpoints=every)


def cut_one_hour_before_end(log: Path) -> int:
    """The byte offset of the first line at least an hour (log time) before the last."""
    with log.open("rb") as f:
        f.seek(max(0, log.stat().st_size - (1 << 20)))
        last = line_t(f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1])
    assert last is not None
    lo, hi = 0, log.stat().st_size
    with log.open("rb") as f:
        while hi - lo > 1 << 16:  # bisect on bytes, then walk lines
            mid = (lo + hi) // 2
            f.seek(mid)
            f.readline()
            t = line_t(f.readline())
            if t is not None and t < last - HOUR_MS:
                lo = mid
            else:
                hi = mid
        f.seek(lo)
        f.readline()
        at = f.tell()
        for raw in f:
            t = line_t(raw)
            if t is not None and t >= last - HOUR_MS:
                return at
            at += len(raw)
    return at


def copy_range(src: Path, dst: Path, start: int, end: int, mode: str) -> None:
    with src.open("rb") as f, dst.open(mode) as out:
        f.seek(start)
        left = end - start
        while left > 0:
            chunk = f.read(min(left, 1 << 22))
            out.write(chunk)
            left -= len(chunk)


def sha256_rate(log: Path) -> float:
    """GB/s of hashlib's SHA-256 over the (page-cached) log."""
    h = hashlib.sha256()
    buf = bytearray(1 << 22)
    view = memoryview(buf)
    started = time.perf_counter()
    n = 0
    with log.open("rb", buffering=0) as f:
        while k := f.readinto(view):
            h.update(view[:k])
            n += k
    return n / (time.perf_counter() - started) / 1e9


def writing(cap: checkpoint.Capture, where: Checkpoints) -> dict[str, Any]:
    """Write ``cap`` the way the host does, timing each part: the loop's share in CPU
    time of this thread (on a shared machine, wall time there is mostly other processes')."""
    where.fill_ends(cap.meta)  # (in the host's writer thread)
    parts, longest = [], 0.0
    frames = checkpoint.frames(cap)
    started = time.thread_time()
    while True:
        t0 = time.thread_time()
        part = next(frames, None)
        longest = max(longest, time.thread_time() - t0)
        if part is None:
            break
        parts.append(part)
    encoded = time.thread_time()
    wall = time.perf_counter()
    path = where.store(cap.meta, parts)
    return {
        "encode_ms": (encoded - started) * 1000,
        "longest_frame_ms": longest * 1000,
        "write_fsync_ms": (time.perf_counter() - wall) * 1000,
        "bytes": path.stat().st_size,
        "path": str(path),
    }


def capturing(s: Session) -> tuple[checkpoint.Capture, float]:
    started = time.thread_time()
    cap = s._capture()
    return cap, (time.thread_time() - started) * 1000


def one_length(tmp: Path, inputs: int, seed: int) -> dict[str, Any]:
    say(f"bench: writing a log of {inputs:,} inputs")
    full, season_path, stats = genlog.write_log(tmp, inputs, seed)
    season = load_season(season_path)
    size = full.stat().st_size
    here = tmp / "ckpt"
    here.mkdir()
    log = here / "season.jsonl"
    cut = cut_one_hour_before_end(full)
    copy_range(full, log, 0, cut, "wb")
    say(f"bench: {size / 1e6:,.0f} MB; a session on the first {cut / 1e6:,.0f} MB")
    notes: list[str] = []
    first = session(log, season, True, notes)
    first.open()
    assert first.checkpoints is not None
    cap, on_loop = capturing(first)
    wrote = writing(cap, first.checkpoints) | {"capture_ms": on_loop}
    first.close()
    first.store.close()
    copy_range(full, log, cut, size, "ab")
    say("bench: restart with the checkpoint, the whole prefix checked first")
    checked = session(log, season, True, notes, check="full")
    started = time.perf_counter()
    checked.open()
    with_full = time.perf_counter() - started
    assert checked.resumed_at == cut, notes
    checked.close()
    checked.store.close()
    say("bench: restart with the checkpoint, a quick check (the prefix hashed behind)")
    resumed = session(log, season, True, notes)
    started = time.perf_counter()
    resumed.open()
    with_ck = time.perf_counter() - started
    assert resumed.resumed_at == cut, notes
    assert isinstance(resumed.hasher, Behind)
    resumed.hasher.join()
    behind = time.perf_counter() - started
    assert resumed.mismatched is None
    say("bench: restart without (the whole log)")
    whole = session(full, season, False, notes)
    started = time.perf_counter()
    whole.open()
    without = time.perf_counter() - started
    assert whole.engine.snapshot() == resumed.engine.snapshot()
    assert whole.hasher.hexdigest() == resumed.hasher.hexdigest()
    rest = resumed.replayed - (first.replayed + first.applied)
    for s in (resumed, whole):
        s.close()
        s.store.close()
    return {
        "inputs": inputs,
        "log_bytes": size,
        "log_hours": (stats.last_t - stats.first_t) / HOUR_MS,
        "restart_full_s": without,
        "restart_checkpoint_s": with_ck,
        "restart_checkpoint_full_check_s": with_full,
        "quick_check_behind_done_s": behind,
        "replayed_after_checkpoint": rest,
        "checkpoint": wrote,
        "sha256_gb_s": sha256_rate(full),
    }


def season_scale(tmp: Path, entries: int = 50, fills: int = 4000) -> dict[str, Any]:
    """A four-week season's views at full size, made up (the logs above have six entries
    and few fills): ``entries`` entries with a minute mark for every minute of 28 days,
    ``fills`` fills and as many notes each, a score row a day. Its checkpoint's cost."""
    days = 28
    season = Season(
        id="bench-scale",
        start=genlog.START_MS,
        end=genlog.START_MS + days * 86_400_000,
        markets=genlog.MARKETS,
    )
    engine = Engine(season)
    views = Views(engine)
    for i in range(entries):
        name = f"entry{i}"
        register = Line(t=season.start - 1, arena=Register(entry=name, key_sha256="ab" * 32))
        engine.apply(register)
        marks = views.marks[name] = Marks()
        minutes = range(days * 1440)
        marks.t.extend(season.start + 60_000 * (k + 1) for k in minutes)
        for col in (marks.equity, marks.peak, marks.drawdown, marks.mdd):
            col.extend(10_000_000_000 + k for k in minutes)
        marks.active.extend(b"\x01" * len(minutes))
        quote = ev.PrintQuote(1, season.start, 10_000_000_000_000, 100_000_000)
        views.fills[name] = [
            ev.Fill(season.start + k, name, k, 0, 0, True, 10**13, 10**5, False, 1, 1, quote)
            for k in range(fills)
        ]
        for k in range(fills):
            views.notes.by_order[(name, k)] = f"note {k}: a reason given by {name}"
        for day in range(days):
            row = ev.ScoreRow(season.start, name, day, 1, 1, 1, 1, 1, True, 1, 1, 1, 1)
            views.rows[(name, day)] = views.latest[name] = row
    meta = checkpoint.Meta(
        checkpoint.FORMAT, season.id, season.rules_sha256, 0, "0" * 64, 0, None, "", ""
    )
    log = tmp / "scale.jsonl"
    log.write_bytes(b"")
    started = time.thread_time()
    cap = checkpoint.capture(meta, engine, views, {})
    on_loop = (time.thread_time() - started) * 1000
    wrote = writing(cap, Checkpoints(log, HOUR_MS, say)) | {"capture_ms": on_loop}
    cpu, wall = time.thread_time(), time.perf_counter()
    restored = checkpoint.read(Path(wrote["path"]), season)
    assert restored.views.fills == views.fills
    return wrote | {
        "entries": entries,
        "marks": entries * days * 1440,
        "fills": entries * fills,
        "read_cpu_s": time.thread_time() - cpu,
        "read_wall_s": time.perf_counter() - wall,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--inputs", default="1000000,3000000", help="log lengths, comma-separated")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    results = []
    for n in (int(x) for x in args.inputs.split(",")):
        with tempfile.TemporaryDirectory(prefix="arena-restart-") as tmp:
            results.append(one_length(Path(tmp), n, args.seed))
    with tempfile.TemporaryDirectory(prefix="arena-restart-") as tmp:
        say("bench: a four-week, 50-entry state's checkpoint")
        scale = season_scale(Path(tmp))
    if args.json:
        print(json.dumps({"lengths": results, "season_scale": scale}))
        return
    print(
        f"{'inputs':>10} {'log':>9} {'log time':>9} {'full replay':>12} {'ckpt full':>10} "
        f"{'ckpt quick':>11} {'ratio':>6} {'checked':>8} {'ckpt size':>10} {'on loop':>8} "
        f"{'max frame':>10} {'write':>8} {'sha256':>9}"
    )
    for r in results:
        c = r["checkpoint"]
        print(
            f"{r['inputs']:>10,} {r['log_bytes'] / 1e6:>6,.0f} MB {r['log_hours']:>7.1f} h "
            f"{r['restart_full_s']:>10.2f} s {r['restart_checkpoint_full_check_s']:>8.2f} s "
            f"{r['restart_checkpoint_s']:>9.2f} s "
            f"{r['restart_full_s'] / r['restart_checkpoint_s']:>5.1f}x "
            f"{r['quick_check_behind_done_s']:>6.2f} s "
            f"{c['bytes'] / 1e6:>7.2f} MB {c['capture_ms']:>5.1f} ms "
            f"{c['longest_frame_ms']:>7.2f} ms {c['write_fsync_ms']:>5.0f} ms "
            f"{r['sha256_gb_s']:>5.2f} GB/s"
        )
    rate = max(r["sha256_gb_s"] for r in results)
    print(
        f"a four-week state ({scale['entries']} entries, {scale['marks']:,} minute marks, "
        f"{scale['fills']:,} fills and notes): checkpoint {scale['bytes'] / 1e6:,.0f} MB; on "
        f"the loop {scale['capture_ms']:.1f} ms to copy, at most {scale['longest_frame_ms']:.1f}"
        f" ms at a time to encode ({scale['encode_ms']:,.0f} ms in all, CPU); write + fsync "
        f"{scale['write_fsync_ms']:,.0f} ms in a thread; read back {scale['read_cpu_s']:.2f} s "
        f"CPU ({scale['read_wall_s']:.2f} s wall); hashing a 10 GB log at {rate:.2f} GB/s: "
        f"{10 / rate:.1f} s"
    )
    print(
        "(ckpt full / quick: restart from a checkpoint written an hour of log time before the "
        "end, that hour replayed, the log's prefix checked whole first / quick, the rest "
        "behind; ratio: full replay over quick; checked: when the check behind was done; "
        "on loop: the state copied on the event loop; max frame: the "
        "longest the loop is held at a time while the checkpoint is encoded)"
    )


if __name__ == "__main__":
    main()
