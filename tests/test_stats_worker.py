"""The verdict's statistics in a second process (``report.statsworker``): the same numbers
as in process, bit for bit; a worker that dies or refuses costs only the time; a backtest
starts one only when its verdict may need an interval, and none outlives its process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import astuple
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from arena_tui.report import stats, statsworker
from arena_tui.report.verdict import may_need_intervals
from tests.clirun import ROOT

HOUR_MS = 3_600_000


def fresh_worker() -> statsworker.Worker:
    """A new worker (the one before it stopped), started as a backtest starts it."""
    statsworker.stop()
    statsworker.start()
    w = statsworker.running()
    assert w is not None
    return w


@pytest.fixture(scope="module")
def worker() -> Iterator[statsworker.Worker]:
    os.environ.pop("ARENA_STATS_WORKER", None)
    yield fresh_worker()
    statsworker.stop()


@settings(max_examples=25, deadline=None)
@given(
    values=hs.lists(hs.integers(-(10**12), 10**12), min_size=1, max_size=60),
    seed=hs.integers(0, 2**32 - 1),
)
def test_the_worker_gives_the_in_process_numbers_exactly(
    worker: statsworker.Worker, values: list[int], seed: int
) -> None:
    """Any series (the verdict asks from 8 blocks on; arch refuses some shorter ones: then
    the worker refuses too, and the caller is told by the same call made here)."""
    refused: ValueError | None = None
    try:
        here = stats.WORKER_CALLS["mean_interval"](values, seed, 500)
    except ValueError as exc:
        refused = exc
    if refused is not None:
        with pytest.raises(statsworker.Failed, match=type(refused).__name__):
            worker.call("mean_interval", values, seed, 500)
        assert len(values) < stats.MIN_BLOCKS, refused
        return
    there = worker.call("mean_interval", values, seed, 500)
    assert astuple(there) == astuple(here)  # floats included, bit for bit
    assert type(there) is stats.MeanInterval


def test_mean_interval_goes_through_the_worker_and_a_refusal_is_made_here(
    worker: statsworker.Worker,
) -> None:
    calls: list[str] = []
    call = worker.call

    def counted(name: str, *args: object) -> object:
        calls.append(name)
        return call(name, *args)

    worker.call = counted  # type: ignore[method-assign]
    try:
        got = stats.mean_interval([5, -3, 8, 1, 0, 2, 7, -4], seed=3, resamples=300)
        assert calls == ["mean_interval"] and got.n == 8
        with pytest.raises(ValueError, match="no blocks"):  # the child's refusal, said here
            stats.mean_interval([], seed=3)
        assert calls == ["mean_interval"] * 2 and statsworker.running() is worker
    finally:
        worker.call = call  # type: ignore[method-assign]


def test_a_dead_worker_costs_only_the_time() -> None:
    w = fresh_worker()
    values = [10, -2, 4, 4, 9, -7, 3, 1, 0, 6]
    here = stats.WORKER_CALLS["mean_interval"](values, 11, 400)
    w.proc.kill()
    w.proc.wait()
    assert stats.mean_interval(values, seed=11, resamples=400) == here
    assert statsworker.running() is None  # known broken: not asked again
    statsworker.stop()


def test_a_wedged_worker_is_killed_and_the_call_made_here() -> None:
    """A worker that stops answering (stopped here with SIGSTOP) never hangs the command:
    past its patience it is killed, and the interval is computed in process."""
    w = fresh_worker()
    values = [3, 1, -4, 1, 5, -9, 2, 6, 5]
    assert stats.mean_interval(values, seed=2, resamples=200) is not None  # it answers
    w.patience_s = 0.5
    os.kill(w.proc.pid, signal.SIGSTOP)
    t0 = time.monotonic()
    got = stats.mean_interval(values, seed=2, resamples=200)
    assert got == stats.WORKER_CALLS["mean_interval"](values, 2, 200)
    assert time.monotonic() - t0 < 30 and statsworker.running() is None
    assert w.proc.wait(timeout=10) == -signal.SIGKILL
    statsworker.stop()


def test_stop_ends_the_child_at_once_even_while_it_imports() -> None:
    w = fresh_worker()
    t0 = time.monotonic()
    statsworker.stop()
    assert w.proc.poll() is not None and time.monotonic() - t0 < 5
    assert statsworker.running() is None


def test_switched_off_nothing_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    statsworker.stop()
    monkeypatch.setenv("ARENA_STATS_WORKER", "0")
    statsworker.start()
    assert statsworker.running() is None


@pytest.mark.parametrize(
    ("span_ms", "epoch", "needs"),
    [
        (24 * HOUR_MS, None, True),
        (24 * HOUR_MS, "auto", True),
        (24 * HOUR_MS, "1d", False),  # one block
        (8 * HOUR_MS, "1h", True),  # eight blocks: the least an interval is made of
        (7 * HOUR_MS + 1, "1h", True),  # a partial block counts
        (7 * HOUR_MS, "1h", False),
        (60_000, None, False),  # a minute: too short at any block length
        (0, None, False),
    ],
)
def test_a_worker_is_wanted_only_for_a_run_that_may_be_cut_into_enough_blocks(
    span_ms: int, epoch: str | None, needs: bool
) -> None:
    assert stats.MIN_BLOCKS == 8
    assert may_need_intervals(span_ms, epoch) is needs


def test_a_backtest_leaves_no_worker_behind(tmp_path: Path) -> None:
    """Through the command, in its own process (the shipped 24 h day is long enough to be
    judged): the report is the one made without a worker, and when the command is over no
    process it started is left (its worker is killed at exit)."""
    day = ROOT / "recordings" / "synth-3coins-20261201.jsonl.gz"
    outs = []
    for name, flag in (("with", "1"), ("without", "0")):
        out = tmp_path / name
        env = {**os.environ, "ARENA_STATS_WORKER": flag, "ARENA_CACHE_DIR": str(tmp_path / "c")}
        args = ["backtest", "strategies/momentum.py", str(day), "--out", str(out), "--twins", "3"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena_tui.cli", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: what it leaves is findable
        )
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
        time.sleep(0.2)
        with pytest.raises(ProcessLookupError):  # nobody of its group is left running
            os.killpg(proc.pid, signal.SIGCONT)
        outs.append(out)
    report = [(o / "report.json").read_bytes() for o in outs]
    assert report[0] == report[1] and b'"mean_float"' in report[0]
