"""A replay read from the day cache is the same replay, to the last unit.

``arena replay`` of a plain log with a valid day cache (``run.warmreplay``) holds books and
contexts until something could read them, applies trades messages that fill nothing as
integers (``Engine.apply_quiet_prints``) and passes over ticks before the next timed
event. These tests replay logs three ways (reading the log, reading it and writing its
cache, from the cache) and require the same events, in order, the same replay object,
fills file and daily score rows; random logs (Hypothesis) as well as the goldens.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import lz4.frame
import msgspec
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from arena_tui.logs.dayformat import META_DEC
from arena_tui.logs.daykeep import keep_day
from arena_tui.logs.dayread import CachedDay
from arena_tui.logs.logerror import LogError
from arena_tui.logs.logfile import LogReader, open_binary
from arena_tui.run.replay import CacheUse, ReplayResult, replay
from arena_tui.run.sources import open_days
from arena_tui.run.warmreplay import cached_days
from arena_tui.season.file import load_season, resolve_season
from engine import Season
from engine import events as ev
from tests import build
from tests.test_golden import CASES, GOLDEN

ROOT = Path(__file__).resolve().parents[1]
SEASON = build.season(start=build.T0, end=build.T0 + 4 * build.MIN, markets=(build.BTC, build.SOL))
HEADER = {"arena_log": 1, "recording": "synthetic", "markets": [build.BTC, build.SOL]}


def write_log(path: Path, rows: list[dict[str, Any]], tail: bytes = b"") -> Path:
    body = b"".join(msgspec.json.encode(r) + b"\n" for r in [HEADER, *rows])
    path.write_bytes(body + tail)
    return path


def run(paths: list[Path], season: Season, cache: CacheUse) -> tuple[ReplayResult, Any]:
    """The replay and everything it gave: every event, the fills file, the score rows."""
    events: list[ev.AnyEvent] = []
    fills = io.BytesIO()
    result = replay(
        [str(p) for p in paths],
        season,
        fills_out=fills,
        on_event=events.append,
        keep_score_rows=True,
        cache=cache,
    )
    rows = sorted((k, msgspec.to_builtins(v)) for k, v in result.score_rows.items())
    seen = (result.to_json(), result.inputs, result.fills, fills.getvalue(), rows)
    return result, (seen, msgspec.to_builtins(events))


def three_ways(paths: list[Path], season: Season) -> tuple[bool, Any]:
    """Whether the third replay read the caches; what all three gave (asserted equal)."""
    _, cold = run(paths, season, "off")
    _, writing = run(paths, season, "write")  # (from the caches when all are there)
    warm, cached = run(paths, season, "read")
    assert writing == cold
    assert cached[0] == cold[0]  # the replay object, fills, score rows
    assert cached[1] == cold[1]  # every event, in order
    return warm.cached, cold


# ---- random logs ------------------------------------------------------------------------

PRINT_COINS = st.sampled_from(["BTC", "BTC", "SOL", "DOGE"])


def px_text(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


@st.composite
def logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Two entries trading BTC and SOL around 100: resting orders that prints go through
    or not, books one- and two-sided and stale, contexts whole and partial, resent prints,
    prints of a coin the season does not trade, ticks; now and then past the season's end."""
    t = build.T0 - 20_000
    rows: list[dict[str, Any]] = [build.register(t, "a"), build.register(t, "b")]
    mid = {"BTC": 10_000, "SOL": 10_000, "DOGE": 10_000}  # cents
    tid = 0
    end = build.T0 + draw(st.sampled_from([3, 5, 7])) * build.MIN
    while t < end and len(rows) < 90:
        t += draw(st.sampled_from([0, 1, 200, 900, 2_000, 7_000, 20_000]))
        kind = draw(
            st.sampled_from(["book", "book", "trades", "trades", "trades", "ctx", "order", "order"])
            | st.sampled_from(["cancel", "tick", "tick"])
        )
        coin = draw(st.sampled_from(["BTC", "SOL"]))
        mid[coin] += draw(st.integers(-30, 30))
        m = mid[coin]
        if kind == "book":
            bids = [(px_text(m - 5 - 10 * k), "1.5") for k in range(draw(st.integers(0, 3)))]
            asks = [(px_text(m + 5 + 10 * k), "2.0") for k in range(draw(st.integers(0, 3)))]
            stale = draw(st.sampled_from([0, 0, 0, 20_000]))
            rows.append(build.book(t, coin, time=t - stale, bids=bids, asks=asks))
        elif kind == "trades":
            prints = []
            for _ in range(draw(st.integers(1, 3))):
                c = draw(PRINT_COINS)
                if draw(st.integers(0, 4)) != 0:  # mostly new prints; some resent
                    tid += 1
                p = mid[c] + draw(st.integers(-40, 40))
                prints.append((c, px_text(p), "0.7", t - draw(st.integers(0, 2)), tid))
            rows.append(build.trades(t, *prints))
        elif kind == "ctx":
            mark = draw(st.sampled_from([px_text(m), None]))
            rows.append(build.ctx(t, coin, mark=mark, oracle=px_text(m + 3), funding="0.0000125"))
        elif kind == "order":
            asset = 0 if coin == "BTC" else 5
            is_buy = draw(st.booleans())
            away = draw(st.integers(-20, 60))
            limit = (m - away if is_buy else m + away) * build.E8 // 100
            sz = build.E8 // 10 if coin == "BTC" else build.E8
            tif = draw(st.sampled_from([1, 2, 2, 3]))
            who = draw(st.sampled_from(["a", "b"]))
            rows.append(build.order(t, who, asset, is_buy, limit, sz, tif=tif))
        elif kind == "cancel":
            who = draw(st.sampled_from(["a", "b"]))
            rows.append(build.cancel(t, who, oid=draw(st.integers(1, 9))))
        elif draw(st.booleans()):
            rows.append(build.tick(t))
        else:  # a tick in another form than the host's: the source decodes it
            rows.append({"arena": {"type": "tick"}, "t": t})
    return rows


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs())
def test_random_logs_replay_the_same_from_the_day_cache(rows: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = write_log(Path(tmp) / "day.jsonl", rows)
        warm, _ = three_ways([log], SEASON)
        assert warm  # every line of these is valid: the cache is written and read


def test_the_random_logs_fill_orders_on_prints_and_mark_minutes() -> None:
    # the property above means something only if its logs fill resting orders on prints
    # (a print that goes through one is not quiet) and reach minute marks
    def trades_on_prints(rows: list[dict[str, Any]]) -> bool:
        with tempfile.TemporaryDirectory() as tmp:
            log = write_log(Path(tmp) / "day.jsonl", rows)
            _, (_, events) = run([log], SEASON, "off")
        makers = [e for e in events if e["kind"] == "fill" and not e["taker"]]
        return bool(makers) and any(e["kind"] == "mark" for e in events)

    found = settings(max_examples=300, database=None, phases=[Phase.generate])  # (no shrink)
    assert find(logs(), trades_on_prints, settings=found)


# ---- the goldens, each as a plain log ----------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_goldens_replay_to_their_bytes_from_the_day_cache(name: str, tmp_path: Path) -> None:
    logs_, season_file = CASES[name]
    plain = []
    for k, log in enumerate(logs_):
        with open_binary(ROOT / log) as f:
            data = f.read()
        plain.append(tmp_path / f"{k}-{name}.jsonl")
        plain[-1].write_bytes(data)
    season = (
        load_season(ROOT / season_file)
        if season_file
        else resolve_season([str(p) for p in plain], None)
    )
    warm, (seen, _) = three_ways(plain, season)
    assert warm
    want = msgspec.json.decode((GOLDEN / f"{name}.replay.json").read_bytes())
    assert seen[0] == want
    assert seen[3] == (GOLDEN / f"{name}.fills.jsonl").read_bytes()


# ---- what the log alone says: its hash, its errors --------------------------------------


def _small(t_end: int) -> list[dict[str, Any]]:
    t = build.T0
    rows = [build.register(t - 1, "a")]
    while t < t_end:
        rows.append(build.book(t, "BTC", bids=[("99.95", "1.0")], asks=[("100.05", "1.0")]))
        rows.append(build.trades(t, ("BTC", "100.00", "0.5", t, t)))
        rows.append(build.tick(t + 1))
        t += 10_000
    return rows


def test_several_logs_and_a_torn_tail_hash_as_read(tmp_path: Path) -> None:
    first = write_log(tmp_path / "a.jsonl", _small(build.T0 + 2 * build.MIN))
    rows = _small(build.T0 + 5 * build.MIN)[1:]
    second = write_log(
        tmp_path / "b.jsonl",
        [r for r in rows if r["t"] >= build.T0 + 2 * build.MIN],
        tail=b'{"t":1767225',  # a torn write: ignored, but in log_sha256
    )
    for paths in ([first], [second], [first, second]):
        warm, _ = three_ways(paths, SEASON)
        assert warm


def _packed(log: Path, suffix: str, tail: bytes = b"") -> tuple[Path, str]:
    """``log`` (and ``tail``) compressed beside it; the SHA-256 of its uncompressed bytes."""
    data = log.read_bytes() + tail
    packed = log.with_name(log.stem + f".jsonl{suffix}")
    packed.write_bytes(gzip.compress(data) if suffix == ".gz" else lz4.frame.compress(data))
    return packed, hashlib.sha256(data).hexdigest()


def _one_day(path: Path) -> CachedDay:
    days = open_days([str(path)], ["BTC"])
    assert days is not None
    return days[0]


@pytest.mark.parametrize("suffix", [".gz", ".lz4"])
def test_a_compressed_log_is_replayed_from_its_cache(tmp_path: Path, suffix: str) -> None:
    log = write_log(tmp_path / "a.jsonl", _small(build.T0 + 3 * build.MIN))
    packed, text_sha = _packed(log, suffix, tail=b'{"t":17672')  # a torn tail: hashed too
    warm, (seen, _) = three_ways([packed], SEASON)
    assert warm
    assert seen[0]["log_sha256"] == text_sha
    day = _one_day(packed)
    # the replay that wrote the cache kept its uncompressed bytes' hash: none is read again
    assert day.text_sha256 == text_sha != day.sha256
    day.close()


def test_a_compressed_log_cached_without_that_hash_is_hashed_from_disk(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a.jsonl", _small(build.T0 + 3 * build.MIN))
    packed, text_sha = _packed(log, ".lz4")
    # cached by a pass that hashed nothing (a backtest's; an import's is the same)
    reader = LogReader([str(packed)], ["BTC", "SOL"], hashed=False, cache=True)
    for _ in reader:
        pass
    for writer in reader.finished_writers:
        writer.commit(reopen=False)
    day = _one_day(packed)
    assert day.text_sha256 == ""
    day.close()
    cold, _ = run([packed], SEASON, "off")
    warm, _ = run([packed], SEASON, "read")
    assert warm.cached and warm.to_json() == cold.to_json()
    assert warm.log_sha256 == text_sha
    # its bytes changed under the same size and mtime: one clear error, not a traceback
    st = packed.stat()
    packed.write_bytes(bytes(st.st_size))
    os.utime(packed, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(LogError, match="cannot read"):
        run([packed], SEASON, "read")


def test_only_a_reader_s_first_log_keeps_the_hash_of_its_text(tmp_path: Path) -> None:
    first = write_log(tmp_path / "a.jsonl", _small(build.T0 + 2 * build.MIN))
    rows = _small(build.T0 + 5 * build.MIN)[1:]
    second = write_log(
        tmp_path / "b.jsonl", [r for r in rows if r["t"] >= build.T0 + 2 * build.MIN]
    )
    (a, a_sha), (b, b_sha) = _packed(first, ".gz"), _packed(second, ".gz")
    warm, _ = three_ways([a, b], SEASON)
    assert warm
    day_a, day_b = _one_day(a), _one_day(b)
    # the reader's hash runs on over both: after the first it is no longer one log's
    assert (day_a.text_sha256, day_b.text_sha256) == (a_sha, "")
    day_a.close()
    day_b.close()
    alone, _ = run([b], SEASON, "read")
    assert alone.cached and alone.log_sha256 == b_sha


def test_a_kept_compressed_day_keeps_the_hash_of_its_text(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a.jsonl", _small(build.T0 + 3 * build.MIN))
    packed, text_sha = _packed(log, ".lz4")
    day = keep_day(packed)  # (what a fetch, a synth and a recorded day's close call)
    assert day is not None and day.text_sha256 == text_sha
    day.close()
    plain = keep_day(log)
    assert plain is not None and plain.text_sha256 == plain.sha256
    plain.close()


def test_after_the_end_orders_are_still_answered_and_checked(tmp_path: Path) -> None:
    rows = _small(build.T0 + 6 * build.MIN)
    after = build.T0 + 6 * build.MIN + 3
    good = [*rows, build.order(after, "a", 0, True, 100 * build.E8, build.E8 // 10)]
    log = write_log(tmp_path / "good.jsonl", good)
    warm, (_, events) = three_ways([log], SEASON)
    assert warm
    assert events[-1]["kind"] == "rejected" and events[-1]["reason"] == "SeasonNotActive"
    bad = [*good, build.order(after + 1, "a", 0, True, 100 * build.E8, 1, cloid="0xZZ")]
    log = write_log(tmp_path / "bad.jsonl", bad)
    uses: tuple[CacheUse, ...] = ("off", "write", "read")
    for cache in uses:  # refused alike; and no cache is kept of it
        with pytest.raises(LogError, match="cloid") as refused:
            replay([str(log)], SEASON, cache=cache)
        assert refused.value.lineno == len(bad) + 1
    assert cached_days([str(log)], ["BTC", "SOL"]) is None


def test_arena_replay_reads_the_cache_unless_told_not_to(tmp_path: Path) -> None:
    log = write_log(tmp_path / "day.jsonl", _small(build.T0 + 3 * build.MIN))
    season = tmp_path / "season.json"
    season.write_bytes(msgspec.json.encode(SEASON))
    env = {**os.environ, "ARENA_CACHE_DIR": str(tmp_path / "cache")}

    def arena(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "arena_tui.cli", "replay", str(log), "--season", str(season)]
        return subprocess.run([*cmd, *args], env=env, capture_output=True, text=True, check=True)

    assert "(from the day cache)" not in arena().stdout  # no cache yet: the log is read
    as_read = arena("--json").stdout
    assert arena("--cache", "--json").stdout == as_read  # read, and cached
    assert "(from the day cache)" in arena().stdout
    assert arena("--json").stdout == as_read
    assert "(from the day cache)" not in arena("--no-cache").stdout


def test_a_cache_header_from_before_the_text_hash_still_reads() -> None:
    meta = {"version": 3, "byteorder": "little", "path": "/d.jsonl.gz", "size": 1}
    meta |= {"mtime_ns": 2, "sha256": "ab", "header_raw": b"{}", "coins": [], "checked": []}
    meta |= {"n": 0, "first_t": None, "last_t": None, "blob_off": 0, "blob_len": 0}
    meta |= {"width": 0, "sections": {}, "arrays_sum": 0, "blob_sum": 0, "built_ms": 0}
    old = META_DEC.decode(msgspec.msgpack.encode(meta))  # (no text_sha256 then)
    assert old.text_sha256 == ""
