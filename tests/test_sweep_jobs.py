"""A sweep's jobs: K variants in one pass are K separate runs; wherever a job runs, its
result is the same; a worker seeing another file refuses it; the store keeps what finished.

The heart is the first test: ``run_job`` with three momentum variants and the control,
against ``arena backtest --param`` run once per variant (the real command: the first in a
new process, the others in this one), compared on the ranking row, the block scores, the
fills without their order ids and the minute equity curve.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
from concurrent.futures import Executor
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena_tui.report.skill import MIN_FREEDOM_E8, Twins, Untimed
from arena_tui.report.verdict import CONTROL
from arena_tui.run.loader import baseline_path, load_strategy
from arena_tui.run.params import ParamValue, params_doc, strategy_params, variant_name
from arena_tui.run.stats import MarkRow
from arena_tui.sweep import SweepError, execute, twinjob
from arena_tui.sweep.execute import InProcess, executor
from arena_tui.sweep.jobs import (
    DayFile,
    DayResult,
    EntryResult,
    Job,
    Variant,
    day_file,
    fills_digest,
    marks_digest,
    run_job,
)
from arena_tui.sweep.judge import twins_of
from arena_tui.sweep.store import SweepStore
from arena_tui.sweep.twinjob import TwinJob, run_twin_job, untimed_row
from tests.clirun import ROOT, arena, arena_here

MOMENTUM = ROOT / "strategies" / "momentum.py"
# three variants that trade differently within the hour
VALUES: list[dict[str, ParamValue]] = [
    {"min_rise_e8": 100_000},
    {"window_ms": 120_000, "min_rise_e8": 200_000},
    {"take_profit_e8": 300_000, "share_pct": 10},
]
EPOCH = "10m"


def synth(out: Path, *args: str) -> Path:
    done = arena_here("synth", "--hours", "1", "--out", str(out), *args, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synth(tmp_path_factory.mktemp("days") / "day.jsonl.gz")


@pytest.fixture(scope="module")
def other_day(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synth(tmp_path_factory.mktemp("days") / "other.jsonl", "--seed", "11")


def variants(values: list[dict[str, ParamValue]]) -> list[Variant]:
    cls = type(load_strategy(MOMENTUM))
    params = strategy_params(cls)
    return [Variant(variant_name("momentum", v, params), params_doc(cls, v)) for v in values]


# ---- one pass equals separate runs -------------------------------------------------------


def cli_run(
    tmp: Path, day: Path, strategy: Path, values: dict[str, ParamValue], *, fresh: bool = False
) -> Path:
    """``arena backtest STRATEGY DAY --param ...``: in a new process when ``fresh``, else in
    this one (no new interpreter importing the CLI and the verdict's statistics)."""
    out = tmp / f"run{len(list(tmp.iterdir()))}"
    flags = [f"--param={k}={v}" for k, v in values.items()]
    args = ["backtest", str(strategy), str(day), *flags, "--epoch", EPOCH, "--out", str(out)]
    done = arena(*args, "--json") if fresh else arena_here(*args, "--json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return out


def e6(text: str) -> int:
    return int(Decimal(text) * 10**6)


def from_cli(out: Path) -> tuple[str, dict[str, Any]]:
    """The one entry of an ``arena backtest`` run directory, in EntryResult's terms."""
    report = json.loads((out / "report.json").read_text())
    (entry,) = report["entries"]
    name = entry["entry"]
    with (out / "equity.csv").open(newline="") as f:
        marks = [
            MarkRow(
                int(r["t"]),
                e6(r["equity"]),
                e6(r["peak"]),
                int(r["drawdown"]),
                int(r["mdd"]),
                r["active"] == "1",
                e6(r["exit_equity"]) if r["exit_equity"] else None,
            )
            for r in csv.DictReader(f)
            if r["entry"] == name
        ]
    fills = []
    for line in (out / "fills.jsonl").read_text().splitlines():
        doc = json.loads(line)
        for key in ("oid", "quote", "note"):  # the engine's order ids; what fills.jsonl adds
            del doc[key]
        fills.append(doc)
    blocks = [
        (b["start"], b["scores"][name]["score"])
        for b in report["verdict"]["blocks"]
        if name in b["scores"]
    ]
    return name, {
        "score": entry["score"],
        "ret": entry["return"],
        "mdd": entry["mdd"],
        "equity": entry["equity"],
        "fills": entry["fills"]["taker"] + entry["fills"]["maker"],
        "rejections": entry["rejections"],
        "blocks": blocks,
        "fills_sha256": fills_digest(fills),
        "marks_sha256": marks_digest(marks),
        "marks": len(marks),
    }


def test_variants_in_one_pass_are_the_runs_of_arena_backtest_param(
    day: Path, tmp_path: Path
) -> None:
    vs = variants(VALUES)
    result = run_job(Job(str(MOMENTUM), day_file(day), vs, epoch=EPOCH))
    assert [e.name for e in result.entries] == [v.name for v in vs] + [CONTROL]
    runs = [cli_run(tmp_path, day, MOMENTUM, v, fresh=i == 0) for i, v in enumerate(VALUES)]
    runs.append(cli_run(tmp_path, day, baseline_path(CONTROL), {}))
    for got, out in zip(result.entries, runs, strict=True):
        name, alone = from_cli(out)
        assert name == got.name
        assert alone["marks"] >= 55  # a minute equity curve over the hour
        assert alone["fills"] > 0
        mine = {k: getattr(got, k) for k in alone if k != "marks"}
        assert mine == {k: v for k, v in alone.items() if k != "marks"}, name
    # the variants really differ: the comparison above could tell them apart
    assert len({e.fills_sha256 for e in result.entries}) == len(result.entries)
    assert len({e.marks_sha256 for e in result.entries}) == len(result.entries)
    assert result.inputs > 10_000 and result.seconds > 0


COUNTER = """
from arena_tui.strategy import IOC, Strategy
from engine.units import E8, tdiv
from strategies.common import order_size

PRINTS = [0]  # module-level state: each variant must have its own


class Counter(Strategy):
    at: int = 200  # buy once, at this many trades messages seen by the module

    def on_trades(self, ctx, trades):
        PRINTS[0] += 1
        if PRINTS[0] != self.at:
            return
        coin = trades[0].coin
        book = ctx.market(coin).book
        if book is None or book.best_ask_e8 is None:
            return
        px = ctx.grid_e8(coin, book.best_ask_e8 + tdiv(book.best_ask_e8, 1000), True)
        sz = order_size(ctx, coin, px, 10)
        if sz:
            ctx.order(ctx.asset_of(coin), True, px, sz, False, IOC)
"""


def test_variants_share_no_module_state(day: Path, tmp_path: Path) -> None:
    path = tmp_path / "counter.py"
    path.write_text(COUNTER)
    vs = [Variant("counter-a", {"at": 200}), Variant("counter-b", {"at": 300})]
    d = day_file(day)
    both = run_job(Job(str(path), d, vs, control=False))
    alone = [run_job(Job(str(path), d, [v], control=False)).entries[0] for v in vs]
    assert both.entries == alone
    assert [e.fills for e in alone] == [1, 1]


def test_a_held_out_day_with_no_room_to_move_trades_no_twin(
    day: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variant in the market from the day's first trades to its end: its twins could not
    be timed otherwise, so the day's twin job trades none and stores the one row saying how
    little room there was; the held-out answer is "can't tell" (``Untimed``), as it is from
    a store written before, whose rows are the day's twins, each with that freedom."""
    path = tmp_path / "counter.py"
    path.write_text(COUNTER)

    def no_pass(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("twins traded on a day with no room to move")

    monkeypatch.setattr(twinjob, "run_twins", no_pass)
    d = day_file(day)
    result = run_twin_job(TwinJob(str(path), d, Variant("counter-a", {"at": 1}), twins=8))
    (row,) = result.entries
    assert row.freedom < MIN_FREEDOM_E8 and row == untimed_row(row.freedom)
    untimed = twins_of([result.entries], 5)
    assert isinstance(untimed, Untimed) and untimed.freedom_e8 == row.freedom
    before = [msgspec.structs.replace(row, name=f"twin-00{i}", score=-i) for i in range(1, 4)]
    assert twins_of([before], 5) == untimed
    monkeypatch.undo()
    timed = run_twin_job(TwinJob(str(MOMENTUM), d, variants(VALUES[:1])[0], twins=4))
    assert [r.name for r in timed.entries] == [f"twin-00{i}" for i in range(1, 5)]
    twins = twins_of([timed.entries], 5)
    assert isinstance(twins, Twins) and len(twins.scores) == 4
    assert twins.freedom_e8 >= MIN_FREEDOM_E8


def test_a_job_is_plain_data_and_says_what_it_ran(day: Path) -> None:
    vs = variants(VALUES[:1])
    job = Job(str(MOMENTUM), day_file(day), vs, control=False, epoch="30m")
    assert pickle.loads(pickle.dumps(job)) == job
    result = run_job(job)
    assert pickle.loads(pickle.dumps(result)) == result
    (entry,) = result.entries  # control=False: the variant alone
    assert entry.name == vs[0].name
    first = result.day.first_t
    assert first is not None
    half_hour = 1_800_000
    assert [start for start, _ in entry.blocks] == [
        first // half_hour * half_hour + i * half_hour for i in range(2)
    ]


# ---- the day's bytes are the driver's ------------------------------------------------------


def test_day_file_hashes_the_bytes_and_reads_the_span(day: Path) -> None:
    d = day_file(day)
    data = day.read_bytes()
    assert (d.size, d.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert Path(d.path).is_absolute() and d.path == str(day.absolute())
    assert d.first_t is not None and d.last_t is not None
    assert 0 < d.last_t - d.first_t <= 3_600_000


def test_a_worker_seeing_another_file_refuses_it(day: Path, tmp_path: Path) -> None:
    copy = tmp_path / "day.jsonl.gz"
    copy.write_bytes(day.read_bytes())
    d = day_file(copy)
    job = Job(str(MOMENTUM), d, variants(VALUES[:1]))
    data = bytearray(copy.read_bytes())
    data[-5] ^= 1  # one bit: the same size, other bytes
    copy.write_bytes(bytes(data))
    with pytest.raises(SweepError) as caught:
        run_job(job)
    text = str(caught.value)
    assert str(copy) in text and d.sha256 in text
    assert "refusing" in text and "\n" not in text
    assert hashlib.sha256(bytes(data)).hexdigest() in text
    copy.unlink()
    with pytest.raises(SweepError, match="cannot be read"):
        run_job(job)


def test_a_failure_in_the_pass_is_one_picklable_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"arena_log":1}\n{"t": 1, "hl": 5}\n')
    d = DayFile(str(bad), bad.stat().st_size, hashlib.sha256(bad.read_bytes()).hexdigest())
    with pytest.raises(SweepError) as caught:
        run_job(Job(str(MOMENTUM), d, variants(VALUES[:1])))
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is SweepError and str(again) == str(caught.value)


# ---- wherever it runs, the same result --------------------------------------------------------


def run_all(ex: Executor, jobs: list[Job]) -> list[list[EntryResult]]:
    futures = [ex.submit(run_job, job) for job in jobs]
    return [f.result().entries for f in futures]


def test_in_process_a_local_pool_and_a_dask_cluster_give_the_same_results(
    day: Path, other_day: Path, tmp_path: Path
) -> None:
    distributed = pytest.importorskip("distributed")
    vs = variants(VALUES[:2])
    jobs = [Job(str(MOMENTUM), day_file(p), vs, epoch=EPOCH) for p in (day, other_day)]
    with executor(1, None) as ex:
        assert isinstance(ex, InProcess)
        here = run_all(ex, jobs)
    assert here[0] != here[1]  # two days, two results
    with executor(2, None) as ex:
        assert not isinstance(ex, InProcess)
        assert run_all(ex, jobs) == here
    # threads in one process (processes=False): reliable on a busy 2-core machine; the
    # scheduler and workers still talk over TCP on loopback, as a cluster does
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        host="127.0.0.1",
        protocol="tcp",
        dashboard_address=None,
    ) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        with executor(None, address) as ex:
            assert run_all(ex, jobs) == here
            # the refusal travels back as the same one line
            copy = tmp_path / "copy.jsonl"
            copy.write_bytes(other_day.read_bytes())
            moved = Job(str(MOMENTUM), day_file(copy), vs)
            copy.write_bytes(copy.read_bytes() + b"\n")
            with pytest.raises(SweepError, match="is not the driver's file"):
                ex.submit(run_job, moved).result()


def test_executor_choices_and_a_cluster_that_does_not_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(SweepError, match="--workers -1"):
        executor(-1, None)
    with executor(0, None) as ex:
        assert isinstance(ex, InProcess)
        with pytest.raises(ZeroDivisionError):
            ex.submit(lambda: 1 // 0).result()
    monkeypatch.setattr(execute, "CONNECT_TIMEOUT_S", 1)
    # a port nothing listens on, on loopback
    with pytest.raises(SweepError) as caught, executor(None, "tcp://127.0.0.1:9"):
        pass
    text = str(caught.value)
    assert text.startswith("--cluster tcp://127.0.0.1:9: no Dask scheduler answered")
    assert "dask scheduler" in text and "\n" not in text


# ---- the store ------------------------------------------------------------------------------


def result_for(day: DayFile, names: list[str], score: int) -> DayResult:
    entries = [
        EntryResult(n, score + i, 0, 0, 10**10, i, {"MinSize": i}, [(0, score)], "f", "m")
        for i, n in enumerate(names)
    ]
    return DayResult(day, entries, 0.5, 100)


def test_the_store_keeps_trials_in_order_and_results_by_split(tmp_path: Path) -> None:
    store = SweepStore(tmp_path)  # a directory: its sweep.sqlite
    assert store.config() is None
    store.save_config({"strategy": "s.py", "seed": 3})
    assert store.config() == {"strategy": "s.py", "seed": 3}
    a = store.add_trial({"x": 1, "y": 2.0}, "s-x1")
    b = store.add_trial({"x": 2, "y": 2.0}, "s-x2")
    assert (a, b) == (1, 2)
    assert store.add_trial({"y": 2.0, "x": 1}, "other") == a  # same values, same trial
    assert store.add_trial({"x": True, "y": 2.0}, "s-xt") == 3  # true is not 1
    assert [(i, n) for i, n, _ in store.trials()] == [(1, "s-x1"), (2, "s-x2"), (3, "s-xt")]
    assert store.trials()[0][2] == {"x": 1, "y": 2.0}
    late = DayFile("/d2", 1, "b" * 64, 2_000, 3_000)
    early = DayFile("/d1", 1, "a" * 64, 1_000, 1_500)
    store.save_day(["s-x1"], result_for(late, ["s-x1", CONTROL], 7), "train")
    store.save_day(["s-x1"], result_for(early, ["s-x1", CONTROL], 5), "train")
    store.save_day(["s-x2"], result_for(early, ["s-x2", CONTROL], 9), "holdout")
    assert store.done("train") == {
        ("s-x1", "a" * 64),
        (CONTROL, "a" * 64),
        ("s-x1", "b" * 64),
        (CONTROL, "b" * 64),
    }
    train = store.results("train")
    assert [(d[0], r.name) for _, d, r in train] == [
        ("a", CONTROL),
        ("a", "s-x1"),
        ("b", CONTROL),
        ("b", "s-x1"),
    ]  # calendar order, then name
    assert train[1][2] == result_for(early, ["s-x1", CONTROL], 5).entries[0]
    assert {s for s, _, _ in store.results()} == {"train", "holdout"}
    assert set(store.days()) == {"a" * 64, "b" * 64}
    assert store.seconds() == pytest.approx(1.5)
    store.close()
    with SweepStore(tmp_path / "sweep.sqlite") as again:  # reopened: all of it is there
        assert len(again.results()) == 6 and len(again.trials()) == 3


def test_a_job_saved_before_a_kill_9_is_there_and_one_cut_short_is_not(tmp_path: Path) -> None:
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(ROOT)!r})
from arena_tui.sweep.jobs import DayFile
from arena_tui.sweep import twinjob
from arena_tui.sweep.judge import twins_of
from arena_tui.sweep.store import SweepStore
from arena_tui.sweep.twinjob import TwinJob, run_twin_job, untimed_row
from tests.test_sweep_jobs import result_for
store = SweepStore({str(tmp_path)!r})
store.add_trial({{"x": 1}}, "s-x1")
day = DayFile("/d", 1, "a" * 64, 1)
store.save_day(["s-x1"], result_for(day, ["s-x1", "control_random"], 1), "train")


class KilledMidway:  # the kill lands after a job's results are written, before its end
    def __init__(self, db):
        self.db = db

    def execute(self, sql, *args):
        if sql.startswith("INSERT INTO jobs"):
            os.kill(os.getpid(), signal.SIGKILL)
        return self.db.execute(sql, *args)


store._db = KilledMidway(store._db)
late = DayFile("/e", 1, "c" * 64, 2)
store.save_day(["s-x1"], result_for(late, ["s-x1", "control_random"], 2), "train")
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=False)
    assert done.returncode == -signal.SIGKILL
    with SweepStore(tmp_path) as store:
        assert store.done("train") == {("s-x1", "a" * 64), (CONTROL, "a" * 64)}
        assert [n for _, n, _ in store.trials()] == ["s-x1"]


def test_a_file_that_is_not_a_store_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "sweep.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(SweepError, match="not a sweep database"):
        SweepStore(bad)
    newer = tmp_path / "newer.sqlite"
    db = sqlite3.connect(newer)
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(SweepError, match="newer arena"):
        SweepStore(newer)
    assert os.path.exists(newer)


def test_bench_sweep_runs_and_checks_one_pass_against_separate_runs() -> None:
    from bench import sweep as bench_sweep

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert bench_sweep.main(["--k", "3", "--hours", "0.2", "--rounds", "1", "--json"]) == 0
    doc = json.loads(out.getvalue())
    assert doc["k"] == 3 and len(set(doc["variants"])) == 3
    assert set(doc["ratios"]) >= {"separate_over_one_pass_median", "one_pass_over_one_run_median"}
    assert len(doc["measurements"]["sep"]["seconds"]) == 1
