"""Stalls of the host's event loop: measured on a dial, and their stacks caught while they
happen (``host.stalls``, ``arena host --stall-trace``).

The watch's trace is a watchdog thread given a deadline before each sleep, with Python's
faulthandler behind it for a stall inside one long C call (which keeps the interpreter's
lock, so nothing written in Python could look at the stack until it returned): the tests
hold a loop in Python code and in one long C call and require the stack of each stall,
with its length, in the file; and a stall traced while another thread runs Python must not
crash the process (faulthandler's lock-free read of the stacks did).
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from arena_tui.cli import app
from arena_tui.commands.host import parse_stall_trace
from arena_tui.host.metrics import Dials
from arena_tui.host.stalls import C_FALLBACK_S, LoopWatch, Stall, read_trace, trace_path
from tests.hostkit import hosted, season_file, wait_until
from tests.test_host_cli import start_host, stop


def _spin_in_python(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _spin_in_c() -> None:
    sum(range(60_000_000))  # one C call that never lets go of the interpreter's lock


def watched(
    trace: Path | None, hold: Callable[[], None], after_ms: int, fallback_s: float = C_FALLBACK_S
) -> LoopWatch:
    async def run() -> LoopWatch:
        watch = LoopWatch(trace=trace, trace_after_ms=after_ms, tick_s=0.02, fallback_s=fallback_s)
        task = asyncio.create_task(watch.run())
        await asyncio.sleep(0.1)
        hold()
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return watch

    return asyncio.run(run())


def test_a_stall_in_python_leaves_its_stack_and_its_length(tmp_path: Path) -> None:
    trace = tmp_path / "season.jsonl.stalls"
    watch = watched(trace, lambda: _spin_in_python(0.5), after_ms=150)
    assert watch.stalls == 1 and watch.worst >= 0.45
    [stall] = read_trace(trace)
    assert stall.ms >= 450 and abs(stall.ended - time.time()) < 60
    assert len(stall.stacks) >= 2  # caught at 170 ms, then again every 170 ms it lasts
    assert stall.stack[0].startswith("tests/test_host_stalls.py:")
    assert all(s[0].endswith("(_spin_in_python)") for s in stall.stacks)
    assert 0 < stall.ran_ms <= stall.ms + 120  # the loop's own work (what it ran is CPU)
    assert stall.process_ran_ms >= stall.ran_ms
    # read while it is written: cut anywhere, the trace gives the stalls whole before the
    # cut, never an error (a cut "Thread 0x" line was an IndexError)
    data = trace.read_bytes()
    cut = tmp_path / "cut.stalls"
    ends = set(range(0, len(data) + 1, 61))  # and every byte of the lines read for more
    for m in re.finditer(rb"^(?:#|Thread 0x|Current thread 0x).*$", data, re.M):
        ends.update(range(m.start(), m.end() + 1))
    for end in sorted(ends):
        cut.write_bytes(data[:end])
        assert read_trace(cut) in ([], [stall])
    assert read_trace(cut) == [stall]


def test_what_held_the_loop_is_told_by_the_cpu_times() -> None:
    took = 400 + 100  # ms late + the tick
    assert Stall(400, 0.0, (), 0.9 * took, 0.95 * took).waiting_for == "work"
    assert Stall(400, 0.0, (), 5, 0.9 * took).waiting_for == "lock"  # another thread ran
    assert Stall(400, 0.0, (), 5, 10).waiting_for == "cpu"  # nothing of the process ran


def test_a_stall_while_another_thread_holds_the_lock_says_so(tmp_path: Path) -> None:
    """The loop's thread waits for the interpreter's lock that a busy thread of the same
    process keeps (as the host's feed reader can): the loop hardly ran, the process did."""
    trace = tmp_path / "season.jsonl.stalls"

    def hog() -> None:
        busy = threading.Thread(target=_spin_in_c)  # keeps the lock through one C call
        busy.start()
        busy.join()

    started = time.perf_counter()
    _spin_in_c()
    if time.perf_counter() - started < 0.3:
        pytest.skip("this machine sums the range too fast to stall")
    watched(trace, hog, after_ms=100)
    [stall] = read_trace(trace)
    assert stall.waiting_for == "lock", stall


def test_a_stall_the_loop_spent_waiting_shows_it_did_not_run(tmp_path: Path) -> None:
    """Blocked without running (here a sleep; on a host, no CPU or another thread holding
    the interpreter's lock): the stall is as long, but its thread ran next to nothing."""
    trace = tmp_path / "season.jsonl.stalls"
    watched(trace, lambda: time.sleep(0.5), after_ms=150)
    [stall] = read_trace(trace)
    assert stall.ms >= 450 and stall.ran_ms < 50
    assert stall.stack[0].startswith("tests/test_host_stalls.py:")
    assert stall.stack[0].endswith("(<lambda>)")


def _skip_unless_the_c_call_stalls() -> None:
    started = time.perf_counter()
    _spin_in_c()
    took = time.perf_counter() - started
    if took < 0.3:
        pytest.skip(f"this machine sums the range in {took:.2f} s: too short to stall")


def test_a_stall_inside_one_c_call_is_caught_while_it_lasts(tmp_path: Path) -> None:
    _skip_unless_the_c_call_stalls()
    trace = tmp_path / "season.jsonl.stalls"
    watched(trace, _spin_in_c, after_ms=100, fallback_s=0.1)  # faulthandler, during the call
    [stall] = read_trace(trace)
    assert stall.ms >= 100 and "Timeout" in trace.read_text()
    assert stall.stack[0].endswith("(_spin_in_c)")  # the Python line that made the C call


def test_a_stall_inside_one_c_call_is_written_by_the_watchdog_when_it_returns(
    tmp_path: Path,
) -> None:
    """Without faulthandler (its fallback a minute away), the watchdog, holding the lock
    the moment the call lets go of it, still finds the frame that made the call innermost."""
    _skip_unless_the_c_call_stalls()
    trace = tmp_path / "season.jsonl.stalls"
    watched(trace, _spin_in_c, after_ms=100, fallback_s=60)
    [stall] = read_trace(trace)
    assert stall.ms >= 100 and "Timeout" not in trace.read_text()
    assert stall.stack[0].endswith("(_spin_in_c)")


def test_no_stall_no_stack_and_short_holds_are_only_measured(tmp_path: Path) -> None:
    trace = tmp_path / "season.jsonl.stalls"
    dials = Dials()
    lags: list[float] = []

    async def run() -> LoopWatch:
        watch = LoopWatch(trace=trace, trace_after_ms=400, tick_s=0.02)
        watch.observe(lags.append)
        watch.observe(dials.loop_lag.observe)
        task = asyncio.create_task(watch.run())
        await asyncio.sleep(0.1)
        _spin_in_python(0.15)  # held, but under the trace's threshold
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return watch

    watch = asyncio.run(run())
    assert watch.stalls == 0 and read_trace(trace) == []
    text = trace.read_text()
    assert "Timeout" not in text and "Thread 0x" not in text  # neither watchdog wrote
    assert max(lags) >= 0.1  # the hold was measured
    samples = {
        (s.name, s.labels.get("le")): s.value
        for f in text_string_to_metric_families(dials.scrape().decode())
        if f.name == "arena_loop_lag_seconds"
        for s in f.samples
    }
    assert samples["arena_loop_lag_seconds_count", None] == len(lags)
    late = sum(1 for x in lags if x > 0.1)
    assert (
        samples["arena_loop_lag_seconds_bucket", "+Inf"]
        - samples["arena_loop_lag_seconds_bucket", "0.1"]
        == late
    )


def test_the_trace_file_sits_beside_the_log() -> None:
    assert trace_path(Path("/x/runs/season.jsonl")) == Path("/x/runs/season.jsonl.stalls")


@pytest.mark.parametrize(
    ("text", "ms"), [("off", None), ("OFF", None), ("250", 250), ("20", 20), (" 1000 ", 1000)]
)
def test_stall_trace_takes_milliseconds_or_off(text: str, ms: int | None) -> None:
    assert parse_stall_trace(text) == ms


@pytest.mark.parametrize("text", ["19", "0", "-5", "abc", "1.5", "", "99999999"])
def test_a_bad_stall_trace_is_one_line_naming_the_option(tmp_path: Path, text: str) -> None:
    r = CliRunner().invoke(app, ["host", "--log", str(tmp_path / "s.jsonl"), "--stall-trace", text])
    assert r.exit_code == 2
    assert "--stall-trace" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "s.jsonl").exists()


def test_a_host_with_a_stall_trace_catches_what_held_its_loop(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False, stall_trace_ms=150) as h, h.client() as anon:
        loop = h.host._loop
        assert loop is not None
        loop.call_soon_threadsafe(_spin_in_python, 0.5)  # something holds the host's loop
        trace = trace_path(h.log)
        wait_until(lambda: bool(read_trace(trace)))
        r = anon.get("/metrics")
        assert r.status_code == 200
        lags = {
            s.labels.get("le"): s.value
            for f in text_string_to_metric_families(r.text)
            if f.name == "arena_loop_lag_seconds"
            for s in f.samples
            if s.name.endswith("_bucket")
        }
        assert lags["+Inf"] - lags["0.25"] >= 1  # the stall, on the dial
    [stall] = read_trace(trace)
    assert stall.ms >= 300 and stall.stack[0].endswith("(_spin_in_python)")


def test_arena_host_writes_the_trace_beside_its_log_only_when_asked(tmp_path: Path) -> None:
    log = tmp_path / "season.jsonl"
    season = season_file(tmp_path / "season.json")
    proc, _ = start_host("--log", str(log), "--season", str(season), "--stall-trace", "200")
    stop(proc)
    assert trace_path(log).read_text().startswith("# the loop's thread: 0x")
    log2 = tmp_path / "other.jsonl"
    proc, _ = start_host("--log", str(log2), "--season", str(season))
    stop(proc)
    assert not trace_path(log2).exists()


_BUSY_BESIDE = textwrap.dedent(
    """
    import asyncio, sys, threading, time
    from pathlib import Path
    from arena_tui.host.stalls import LoopWatch

    stop = False

    def calls() -> None:  # another thread running Python: its frames come and go, deep
        def deeper(n: int) -> int:  # enough to take and free stack memory (not at 50)
            return 0 if n == 0 else deeper(n - 1) + 1
        while not stop:
            deeper(300)

    def spin(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    async def main() -> None:
        watch = LoopWatch(trace=Path(sys.argv[1]), trace_after_ms=1, tick_s=0.001)
        task = asyncio.create_task(watch.run())
        await asyncio.sleep(0.05)
        spin(float(sys.argv[2]))  # a stall: its stacks are written every 2 ms
        await asyncio.sleep(0.05)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    busy = threading.Thread(target=calls)
    busy.start()
    asyncio.run(main())
    stop = True
    busy.join()
    print("alive")
    """
)


def test_a_stall_traced_while_another_thread_runs_python_is_survived(tmp_path: Path) -> None:
    """The stacks of a stall are written while the host's other threads run Python (its
    feed reader does): reading their frames without the interpreter's lock, as
    faulthandler's C thread does, crashed the process (SIGSEGV within a second here, each
    time); the watchdog reads them holding it."""
    script, trace = tmp_path / "busy.py", tmp_path / "season.jsonl.stalls"
    script.write_text(_BUSY_BESIDE)
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, str(script), str(trace), "4"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )
    assert (done.returncode, done.stdout) == (0, "alive\n"), done.stderr[-2000:]
    # (at 1 ms, the busy thread's turns with the lock are stalls too: the spin is the longest)
    stall = max(read_trace(trace), key=lambda s: s.ms)
    assert stall.ms >= 3900 and len(stall.stacks) >= 100  # (one every 2 ms: many)
    # the stacks are the spin's, but for a few at its ends (the loop's select or the
    # coroutine around it, waiting for the lock the busy thread had as 1 ms was up)
    spun = [s for s in stall.stacks if s and s[0].endswith("(spin)")]
    assert len(spun) >= 0.95 * len(stall.stacks)
    assert all(s[1].endswith("(main)") for s in spun)
