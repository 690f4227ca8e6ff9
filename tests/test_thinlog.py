"""Thin run logs: a backtest's own inputs and its sources' hashes replay as its full log.

Each test runs one backtest twice, writing a thin run log (``arena backtest``'s default)
and a full one (``--full-log``), and holds the thin one to the full one: the same replay
object and fills byte for byte, the same full bytes rebuilt, the same ``logs check`` and
``replay --out``; and to clear one-line errors when a source is missing or changed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import threading
from pathlib import Path
from typing import Any

import lz4.frame
import pytest

from arena_tui.run.backtest import Backtest
from arena_tui.run.build import entrants_for
from arena_tui.run.config import RunConfig
from arena_tui.run.fields import StrategyError
from arena_tui.run.loader import entry_name, load_strategy
from arena_tui.run.parts import Entrant
from arena_tui.season.file import resolve_season
from engine import Season
from tests import build
from tests.clirun import ROOT, arena, arena_here
from tests.market import market_rows, write_log

TAKER = """
from arena_tui.strategy import IOC, Context, Strategy

class Taker(Strategy):
    # an IOC through the touch on every fifth print: its order is stamped with the print's
    # t, which the book, the SOL book and the asset context of that second share
    def __init__(self):
        self.n = 0

    def on_trades(self, ctx: Context, trades) -> None:
        self.n += 1
        book = ctx.market("BTC").book
        if self.n % 5 or book is None or book.best_ask_e8 is None:
            return
        buy = self.n % 10 == 0
        px = book.best_ask_e8 + 10**9 if buy else book.best_bid_e8 - 10**9
        ctx.order(ctx.asset_of("BTC"), buy, px, 100_000, False, IOC)
"""

FAILS = """
from arena_tui.strategy import Context, Strategy

class Fails(Strategy):
    def on_trades(self, ctx: Context, trades) -> None:
        if ctx.t >= ctx.season.start + 150_000:
            raise RuntimeError("boom")
"""


def entrants(tmp: Path, extra: dict[str, str]) -> list[Entrant]:
    """momentum and the baselines, then strategies written from ``extra``; new objects."""
    out = entrants_for(ROOT / "strategies" / "momentum.py", "baselines")
    for name, body in extra.items():
        path = tmp / f"{name}.py"
        path.write_text(body, encoding="utf-8")
        out.append(Entrant(entry_name(path), load_strategy(path), path))
    return out


def both(
    tmp: Path, logs: list[Path], extra: dict[str, str], season: Season | None = None
) -> tuple[Path, Path, dict[str, Any]]:
    """The same run written thin and full: the two run logs and each result's replay."""
    paths = [str(p) for p in logs]
    chosen = season or resolve_season(paths, None)
    results: dict[str, Any] = {}
    for form in ("thin", "full"):
        config = RunConfig(
            logs=tuple(paths), run_log="thin" if form == "thin" else "full", cache=False
        )
        bt = Backtest(config, chosen, entrants(tmp, extra), run_dir=tmp / form)
        try:
            results[form] = bt.run(paths).replay.to_json()
        except StrategyError:
            results[form] = None
    return tmp / "thin" / "run.jsonl", tmp / "full" / "run.jsonl", results


def replayed(log: Path, *extra: str) -> tuple[str, bytes]:
    fills = log.parent / "replay-fills.jsonl"
    proc = arena_here("replay", str(log), "--json", "--fills", str(fills), *extra, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, fills.read_bytes()


def rebuilt(thin: Path) -> bytes:
    from arena_tui.logs.thinlog import ThinRun  # here: a missing module fails each test

    return b"".join(raw + b"\n" for raw in ThinRun(thin).raw_lines())


def assert_same_run(thin: Path, full: Path) -> None:
    assert thin.stat().st_size < full.stat().st_size // 5
    assert b'"arena_log"' not in thin.read_bytes().split(b"\n")[0][:20]
    assert rebuilt(thin) == full.read_bytes()
    out_thin, fills_thin = replayed(thin)
    out_full, fills_full = replayed(full)
    assert out_thin == out_full
    assert fills_thin == fills_full and fills_thin
    doc = json.loads(out_thin)
    assert doc["log_sha256"] == hashlib.sha256(full.read_bytes()).hexdigest()


def test_thin_and_full_logs_of_one_run_replay_byte_identically(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(minutes=6, sol_ctx=True))
    thin, full, results = both(tmp_path, [log], {"taker": TAKER})
    assert results["thin"] == results["full"]
    assert_same_run(thin, full)
    rows = [json.loads(x) for x in thin.read_bytes().splitlines()[1:-1]]
    market_ts = {r["t"] for r in market_rows(minutes=6, sol_ctx=True)}
    orders = [r for r in rows if r["arena"]["type"] == "order"]
    assert any(r["t"] in market_ts for r in orders)  # own inputs at a market line's t
    assert {r["arena"]["entry"] for r in orders} >= {"taker", "maker"}


def test_a_run_over_several_compressed_files(tmp_path: Path) -> None:
    rows = market_rows(minutes=6)
    third = len(rows) // 3
    while rows[third]["t"] == rows[third - 1]["t"]:
        third += 1
    parts = [rows[:third], rows[third : 2 * third], rows[2 * third :]]
    src = tmp_path / "src"
    src.mkdir()
    logs = [write_log(src / f"part{i}.jsonl", part) for i, part in enumerate(parts)]
    for path, opener in ((logs[1], gzip.open), (logs[2], lz4.frame.open)):
        packed = path.with_name(path.name + (".gz" if opener is gzip.open else ".lz4"))
        with opener(packed, "wb") as f:
            f.write(path.read_bytes())
        path.unlink()
        logs[logs.index(path)] = packed
    thin, full, results = both(tmp_path, logs, {"taker": TAKER})
    assert results["thin"] == results["full"]
    assert_same_run(thin, full)
    end = json.loads(thin.read_bytes().splitlines()[-1])["end"]
    for source, path in zip(end["sources"], logs, strict=True):
        assert source["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert source["size"] == path.stat().st_size
    assert sum(s["inputs"] for s in end["sources"]) == end["inputs"]
    assert all(s["inputs"] for s in end["sources"])


def reader_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "arena-log-read" and t.is_alive()]


def assert_merge_stops_its_source_reader(thin: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge ends before its source does: the source's reader (read ahead) stops there,
    not when the merge is collected (at a process's exit, that was an abort)."""
    from arena_tui.logs import readahead
    from arena_tui.logs.thinlog import ThinReader

    monkeypatch.setattr(readahead, "MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "_cores", lambda: 2)
    reader = ThinReader(thin)
    seen = 0
    for _ in reader:
        seen = seen or len(reader_threads())
    assert seen == 1 and reader.inputs
    assert not reader_threads()


def test_a_run_stopped_early_merges_to_the_same_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # over 1 MB (the reader's chunk): a run that stops early leaves part of it unread,
    # and its recorded SHA-256 is still the whole file's
    log = write_log(tmp_path / "market.jsonl", market_rows(minutes=60))
    assert log.stat().st_size > 1 << 20
    season = resolve_season([str(log)], None)
    # a season that ends before the log does: the run stops reading at its end
    short = Season("short", season.start, season.start + 3 * build.MIN, season.markets)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    thin, full, results = both(a, [log], {"taker": TAKER}, short)
    assert results["thin"] == results["full"] and results["thin"]["final"]
    assert_same_run(thin, full)
    end = json.loads(thin.read_bytes().splitlines()[-1])["end"]
    assert end["inputs"] < len(market_rows(20))
    assert end["sources"][0]["sha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    assert_merge_stops_its_source_reader(thin, monkeypatch)
    # a strategy that fails midway: the run is cut short, both logs keep it up to there
    thin, full, results = both(b, [log], {"taker": TAKER, "fails": FAILS})
    assert results == {"thin": None, "full": None}
    assert_same_run(thin, full)


def test_missing_changed_and_found_by_sha256_under_data(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    log = write_log(src / "market.jsonl", market_rows(minutes=4))
    thin, full, _ = both(tmp_path, [log], {"taker": TAKER})
    want = replayed(full)
    data = tmp_path / "data"
    (data / "deep").mkdir(parents=True)
    moved = data / "deep" / "renamed.jsonl"
    shutil.move(log, moved)
    proc = arena("replay", str(thin), "--json")
    assert proc.returncode == 1 and proc.stdout == ""
    err = proc.stderr.strip()
    assert "\n" not in err and err.startswith("arena: error: ")
    assert "market.jsonl" in err and str(src / "market.jsonl") in err and "--data DIR" in err
    assert replayed(thin, "--data", str(data)) == want  # found by SHA-256, under another name
    assert arena("logs", "check", str(thin)).returncode == 1
    assert arena_here("logs", "check", str(thin), "--data", str(data), cwd=ROOT).returncode == 0
    shutil.copy(moved, thin.parent / "market.jsonl")  # beside the run log
    assert replayed(thin) == want
    # changed, same size: both SHA-256 named
    body = moved.read_bytes().replace(b'"sz":"2.0"', b'"sz":"3.0"', 1)
    (thin.parent / "market.jsonl").write_bytes(body)
    proc = arena_here("replay", str(thin), "--json", cwd=ROOT)
    assert proc.returncode == 1 and proc.stdout == ""
    real = hashlib.sha256(moved.read_bytes()).hexdigest()
    assert hashlib.sha256(body).hexdigest() in proc.stderr and real in proc.stderr
    # changed size: both sizes named
    (thin.parent / "market.jsonl").write_bytes(body + b"\n")
    proc = arena_here("replay", str(thin), "--json", cwd=ROOT)
    assert proc.returncode == 1
    assert f"{len(body) + 1} bytes" in proc.stderr and f"{len(body)} bytes" in proc.stderr
    # a thin log whose end line was never written is refused, not replayed without it
    thin.write_bytes(b"\n".join(thin.read_bytes().split(b"\n")[:-2]) + b"\n")
    proc = arena_here("replay", str(thin), "--data", str(data), cwd=ROOT)
    assert proc.returncode == 1 and "no end line" in proc.stderr


def test_logs_check_and_replay_out_on_a_thin_log(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(minutes=4))
    thin, full, _ = both(tmp_path, [log], {"taker": TAKER})
    checks = []
    for path in (thin, full):
        proc = arena_here("logs", "check", str(path), "--json", cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        checks.append(proc.stdout.replace(str(path), "RUN"))
    assert checks[0] == checks[1]
    for path in (thin, full):
        proc = arena_here("replay", str(path), "--out", str(path.parent / "report"), cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
    for name in ("fills.jsonl", "fills.csv", "equity.csv", "ranking.json"):
        got = (thin.parent / "report" / name).read_bytes()
        assert got == (full.parent / "report" / name).read_bytes(), name
    # a contract reader (no arena_log key) refuses it rather than replaying no market data
    assert "arena_log" not in json.loads(thin.read_bytes().splitlines()[0])


def test_arena_backtest_writes_thin_unless_full_log(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(minutes=4))
    taker = tmp_path / "taker.py"
    taker.write_text(TAKER, encoding="utf-8")
    outs = {}
    for form, flag in (("thin", ()), ("full", ("--full-log",))):
        out = tmp_path / form
        args = ("backtest", str(taker), str(log), "--vs", "baselines", "--out", str(out))
        proc = arena_here(*args, *flag, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        outs[form] = out
    first = (outs["thin"] / "run.jsonl").read_bytes()[:14]
    assert first == b'{"arena_run":1'
    assert (outs["full"] / "run.jsonl").read_bytes()[:13] == b'{"arena_log":'
    assert (outs["thin"] / "ranking.json").read_bytes() == (
        outs["full"] / "ranking.json"
    ).read_bytes()
    assert_same_run(outs["thin"] / "run.jsonl", outs["full"] / "run.jsonl")
    # a thin run log is no source of market data: one clear line, not a bad header
    thin_log = str(outs["thin"] / "run.jsonl")
    proc = arena_here("backtest", str(taker), thin_log, "--out", str(tmp_path / "x"), cwd=ROOT)
    assert proc.returncode == 1 and "a thin run log" in proc.stderr
    assert proc.stderr.startswith("arena: error: ") and proc.stderr.count("\n") == 1
    help_text = arena_here("backtest", "--help", cwd=ROOT).stdout
    assert "--full-log" in help_text
    assert "--data" in arena_here("replay", "--help", cwd=ROOT).stdout


@pytest.mark.parametrize("name", ["sample-btc-20250126.jsonl"])
def test_thin_log_of_the_shipped_sample_is_small(tmp_path: Path, name: str) -> None:
    out = tmp_path / "run"
    proc = arena(
        "backtest", "strategies/maker.py", f"recordings/{name}", "--out", str(out), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "run.jsonl").stat().st_size < (ROOT / "recordings" / name).stat().st_size // 10


def test_a_run_that_stops_while_its_source_is_read_ahead_hashes_it_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the season ends while the reader's thread is inside a read of the source (slowed
    # here between its read and its hash): the run log hashes the rest of the source only
    # once that read is done, so the source's SHA-256 is the file's
    from arena_tui.logs import readahead, thinlog

    monkeypatch.setattr(readahead, "MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "_cores", lambda: 2)
    monkeypatch.setattr(readahead, "OUT", 1 << 16)
    main = threading.main_thread()

    def slow_read(self: Any, n: int = -1) -> bytes:
        data: bytes = self.f.read(n)
        if threading.current_thread() is not main:
            threading.Event().wait(0.05)
        self.sha.update(data)
        self.size += len(data)
        return data

    monkeypatch.setattr(thinlog._Tap, "read", slow_read)
    log = write_log(tmp_path / "market.jsonl", market_rows(minutes=60))
    season = resolve_season([str(log)], None)
    short = Season("short", season.start, season.start + 3 * build.MIN, season.markets)
    config = RunConfig(logs=(str(log),), run_log="thin", cache=False)
    bt = Backtest(config, short, entrants(tmp_path, {}), run_dir=tmp_path / "run")
    assert bt.run([str(log)]).replay.final
    end = json.loads((tmp_path / "run" / "run.jsonl").read_bytes().splitlines()[-1])["end"]
    source = end["sources"][0]
    assert (source["sha256"], source["size"]) == (
        hashlib.sha256(log.read_bytes()).hexdigest(),
        log.stat().st_size,
    )
    assert not reader_threads()
