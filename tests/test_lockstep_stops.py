"""Lockstep runs that must end, and say how: no livelock, no silent stall, no silent kill.

Issue 23's livelock first: an agent that sends its wake set again with every ``done`` got
the same timer step again and again at one simulated time (the timer was re-armed from
the runner's clock, which had not reached the boundary just fired), and the run never
moved. The agents here are small threads speaking the real HTTP and WebSocket API to an
in-process ``LockstepRun`` on 127.0.0.1 (as ``arena host --lockstep`` serves agents
started by hand), so a run takes under a second; what needs the command itself (a signal
to the process, the agent's captured output) runs ``arena`` as a user does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from arena_tui.host.lockstep import NEVER, NoProgress, Remote, StepGate
from arena_tui.host.lockstep_run import CappedOutput, LockstepRun
from arena_tui.report.table import remote_texts
from arena_tui.run.config import LockstepConfig, RunConfig
from arena_tui.run.parts import BacktestResult
from arena_tui.run.replay import replay
from arena_tui.season.file import load_season
from tests.clirun import ROOT, SYNTH, sample_season, until
from tests.lockstepkit import AGENT, agent_cmd, agent_file, season_file

TEN_MINUTES = {"coins": [], "every_ms": 600_000}
Agent = Callable[[str, str], None]  # (url, key): runs in a thread until the run is over
WALL_S = 8.0  # an agent gives up after this (a run that never ends fails, not hangs)


def in_process(
    tmp: Path, agents: dict[str, Agent], *, step_timeout_s: float = 5.0, minutes: int = 30
) -> BacktestResult:
    """A lockstep run of ``agents`` (threads) over the sample's first ``minutes``."""
    season = sample_season(tmp / "season.json", minutes, name=f"stops-{minutes}m")
    threads: list[threading.Thread] = []

    def ready(info: dict[str, Any]) -> None:
        for name, agent in agents.items():
            t = threading.Thread(target=agent, args=(info["url"], info["keys"][name]))
            t.start()
            threads.append(t)

    opts = RunConfig(
        kind="lockstep",
        logs=(str(SYNTH),),
        season=str(season),
        out=str(tmp / "run"),
        lockstep=LockstepConfig(
            names=tuple(agents), step_timeout_s=step_timeout_s, connect_timeout_s=30
        ),
    )
    run = LockstepRun(opts, on_ready=ready)
    run.prepare()
    try:
        return run.run()
    finally:
        for t in threads:
            t.join(WALL_S + 5)


def client(url: str, key: str, **kwargs: Any) -> httpx.Client:
    auth = {"Authorization": f"Bearer {key}"}
    return httpx.Client(base_url=url, headers=auth, **kwargs)


def resending_poller(seen: list[dict[str, Any]]) -> Agent:
    """An agent over POST /v1/step that sends its wake set again with every ``done``."""

    def agent(url: str, key: str) -> None:
        with client(url, key, timeout=None) as c:
            body: dict[str, Any] = {"done": None, "wake": TEN_MINUTES}
            deadline = time.monotonic() + WALL_S
            while time.monotonic() < deadline:
                step = c.post("/v1/step", json=body).json()
                seen.append(step)
                if step.get("over"):
                    return
                body = {"done": step["step"], "wake": TEN_MINUTES}

    return agent


def resending_streamer(seen: list[dict[str, Any]]) -> Agent:
    """The same agent over the stream: a ``wake`` message before every ``done``."""

    def agent(url: str, key: str) -> None:
        ws_url = url.replace("http://", "ws://") + "/v1/stream?market=0"
        with connect(ws_url, additional_headers={"Authorization": f"Bearer {key}"}) as ws:
            ws.send(json.dumps({"method": "wake", **TEN_MINUTES}))
            deadline = time.monotonic() + WALL_S
            while time.monotonic() < deadline:
                doc = json.loads(ws.recv(timeout=WALL_S))
                if doc.get("channel") != "step":
                    continue
                step = doc["data"]
                seen.append(step)
                if step.get("over"):
                    return
                ws.send(json.dumps({"method": "wake", **TEN_MINUTES}))
                ws.send(json.dumps({"method": "done", "step": step["step"]}))

    return agent


@pytest.mark.parametrize("how", ["poll", "stream"])
def test_an_agent_resending_its_wake_set_gets_each_timer_step_once(
    tmp_path: Path, how: str
) -> None:
    seen: list[dict[str, Any]] = []
    make = resending_poller if how == "poll" else resending_streamer
    result = in_process(tmp_path, {"agent": make(seen)}, step_timeout_s=2)
    steps = [s for s in seen if not s.get("over")]
    # the start, then 00:10, 00:20 and 00:30 (the season's first minute is 00:01)
    assert [s["why"] for s in steps] == [["start"], ["timer"], ["timer"], ["timer"]], steps[:8]
    times = [s["t"] for s in steps]
    assert times == sorted(set(times))  # simulated time always moved on
    assert all(t % 600_000 == 0 for t in times[1:])
    assert seen[-1]["over"] and "stopped" not in seen[-1]
    assert result.replay.final


def test_a_run_that_makes_no_progress_ends_with_one_line_its_log_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the livelock's own cause put back (the timer re-armed from the runner's clock): the
    # guard, not the fix, must end the run
    def rearm_at_runner_clock(self: StepGate, a: Remote, after: int) -> None:
        every = a.wake.every_ms
        a.next_timer = NEVER if every is None else (after // every + 1) * every
        self.next_timer = min(r.next_timer for r in self.agents)

    monkeypatch.setattr(StepGate, "_timer", rearm_at_runner_clock)
    seen: list[dict[str, Any]] = []
    started = time.monotonic()
    with pytest.raises(NoProgress) as raised:
        in_process(tmp_path, {"agent": resending_poller(seen)}, step_timeout_s=1)
    took = time.monotonic() - started
    message = str(raised.value)
    assert message.startswith(
        "the run made no progress for 1 s (--step-timeout): simulated time stayed at "
        "2026-12-01T00:10:00.000Z and no input was applied ("
    ), message
    assert message.endswith(f"steps given meanwhile); the run log is kept in {tmp_path / 'run'}")
    assert "\n" not in message and took < WALL_S  # the guard, not the agent giving up
    over = seen[-1]
    assert over["over"] and over["stopped"] == message and not over["final"]  # told why
    # the run log is whole and replays, up to where the run stopped
    season = load_season(tmp_path / "season.json")
    replayed = replay([str(tmp_path / "run/run.jsonl")], season)
    assert not replayed.final and [r["entry"] for r in replayed.ranking] == ["agent"]


def test_a_dropped_long_poll_is_counted_and_named(tmp_path: Path) -> None:
    """bob's long polls time out (0.2 s) while alice thinks (1.5 s) at her second step:
    each is dropped by its client, and called again with the same ``done``."""

    def alice(url: str, key: str) -> None:
        with client(url, key, timeout=None) as c:
            body: dict[str, Any] = {"done": None, "wake": TEN_MINUTES}
            while not (step := c.post("/v1/step", json=body).json()).get("over"):
                if step["step"] == 2:
                    time.sleep(1.5)
                body = {"done": step["step"]}

    def bob(url: str, key: str) -> None:
        with client(url, key, timeout=httpx.Timeout(10, read=0.2)) as c:
            body: dict[str, Any] = {"done": None, "wake": TEN_MINUTES}
            deadline = time.monotonic() + WALL_S
            while time.monotonic() < deadline:
                try:
                    step = c.post("/v1/step", json=body).json()
                except httpx.ReadTimeout:
                    continue  # the same body again: "done" with the step it had
                if step.get("over"):
                    return
                body = {"done": step["step"]}

    result = in_process(tmp_path, {"alice": alice, "bob": bob})
    counts = {e.name: e.remote for e in result.entrants}
    assert counts["alice"] is not None and counts["bob"] is not None
    assert counts["alice"]["dropped_polls"] == 0
    assert counts["bob"]["dropped_polls"] >= 3 and counts["bob"]["reconnects"] == 0
    said = remote_texts(counts["bob"])[0]
    assert f"0 reconnects, {counts['bob']['dropped_polls']} dropped long polls" in said
    assert said.endswith(
        f"the clock waited for it {counts['bob']['waits']} times (at each step, and after "
        "each answer it got mid-step)"
    )


def test_capped_output_keeps_the_start_and_says_where_it_was_cut(tmp_path: Path) -> None:
    read, write = os.pipe()
    out = CappedOutput(os.fdopen(read, "rb"), tmp_path / "agent.out.log", cap=1000).start()
    with os.fdopen(write, "wb") as pipe:
        for i in range(500):
            pipe.write(b"line %03d\n" % i)  # 9 bytes a line: 4,500 bytes in all
    out.join(5)
    text = (tmp_path / "agent.out.log").read_bytes()
    assert text.startswith(b"line 000\nline 001\n")
    kept, note = text[:1000], text[1000:]
    assert kept.endswith(b"line 110\nl")  # the first 1,000 bytes exactly, then the note
    assert note == (
        b"\n[arena: agent.out.log keeps the first 1,000 bytes of the agent's output; the rest "
        b"was not kept (the report says how much)]\n"
    )
    assert out.cut == 4500 - 1000


def test_a_flooding_agents_output_is_capped_and_the_report_says_so(tmp_path: Path) -> None:
    flood = tmp_path / "flood.py"  # 6,000,000 bytes of output first, then the test agent
    flood.write_text("print(('y' * 99 + '\\n') * 60_000, end='')\n" + AGENT, encoding="utf-8")
    out = tmp_path / "run"
    wake = json.dumps({"every_ms": 300_000})
    args = ["backtest", "--agent", f"{sys.executable} {flood} --wake '{wake}'", str(SYNTH)]
    args += ["--season", str(season_file(tmp_path)), "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "arena_tui.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    log = (out / "agent.out.log").read_bytes()
    kept, note = log[: 4 << 20], log[4 << 20 :]
    assert kept == (b"y" * 99 + b"\n") * ((4 << 20) // 100) + b"y" * ((4 << 20) % 100)
    assert note.startswith(b"\n[arena: agent.out.log keeps the first 4 MiB of the agent's")
    report = json.loads((out / "report.json").read_text())
    remote = next(e["remote"] for e in report["entries"] if e["entry"] == "agent")
    cut = remote["output_cut_bytes"]
    assert cut > 6_000_000 - (4 << 20)  # the rest of the flood, and the agent's step lines
    said = " ".join(done.stdout.split())  # (the report is wrapped to the terminal's width)
    capped = f"agent: its output passed the cap: agent.out.log keeps its start, {cut:,} bytes"
    assert f"{capped} more were not kept" in said
    assert f"the clock waited for it {remote['waits']} times (at each step" in said
    assert report["replay"]["final"]


# ---- signals: the command ----------------------------------------------------------------


def running(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena_tui.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stopped_line(proc: subprocess.Popen[str], sig: int) -> tuple[str, str]:
    """Send ``sig``; the process ends with one error line and no traceback: (line, stdout)."""
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig, stderr
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("arena: error:")]
    assert len(errors) == 1 and stderr.rstrip().endswith(errors[0]), stderr
    return errors[0], stdout


def test_sigterm_ends_a_backtest_of_an_agent_with_one_line_and_keeps_its_run_log(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    agent = agent_cmd(tmp_path, "--wake", json.dumps({"every_ms": 300_000}), "--hang-at", "2")
    args = ["backtest", "--agent", agent, str(SYNTH), "--season", str(season_file(tmp_path))]
    proc = running([*args, "--out", str(out), "--step-timeout", "0"])
    try:
        until(lambda: "step 2 " in read(out / "agent.out.log"), "the agent's step 2", 60)
        line, stdout = stopped_line(proc, signal.SIGTERM)
    finally:
        proc.kill()
    assert line == (
        f"arena: error: stopped by SIGTERM at 2026-12-01T00:05:00.000Z; the run log is kept "
        f"in {out}"
    )
    assert stdout == ""
    lines = [json.loads(x) for x in (out / "run.jsonl").read_text().splitlines()]
    assert "arena_run" in lines[0] and "end" in lines[-1]  # whole: its header to its end
    assert any(x.get("arena", {}).get("type") == "register" for x in lines)


def test_sigint_ends_a_host_lockstep_run_telling_the_agents(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["host", "--replay", str(SYNTH), "--lockstep", "--season", str(season_file(tmp_path))]
    args += ["--port", "0", "--entry", "alice", "--entry", "bob", "--out", str(out), "--json"]
    proc = running([*args, "--step-timeout", "0"])
    agents: list[subprocess.Popen[str]] = []
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        for name, flags in (("alice", ["--hang-at", "2"]), ("bob", [])):
            env = dict(os.environ, ARENA_URL=info["url"], ARENA_KEY=info["keys"][name])
            wake = json.dumps({"every_ms": 300_000})
            cmd = [sys.executable, str(agent_file(tmp_path)), "--wake", wake, *flags]
            agents.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True))
        bob_said: list[str] = []
        bob = agents[1]
        assert bob.stdout is not None
        while not any(line.startswith("step 2 ") for line in bob_said):
            bob_said.append(bob.stdout.readline())
        line, _ = stopped_line(proc, signal.SIGINT)
        bob_said += bob.communicate(timeout=10)[0].splitlines()
    finally:
        proc.kill()
        for agent in agents:
            agent.kill()
            agent.wait()
    assert line == (
        f"arena: error: stopped by SIGINT at 2026-12-01T00:05:00.000Z; the run log is kept in {out}"
    )
    assert bob_said[-1].startswith("over ")  # bob's long poll was answered: the run is over
    assert bob.returncode == 0
    assert "end" in json.loads((out / "run.jsonl").read_text().splitlines()[-1])


def test_a_signal_before_the_run_starts_is_one_line_too(tmp_path: Path) -> None:
    args = ["host", "--replay", str(SYNTH), "--lockstep", "--season", str(season_file(tmp_path))]
    proc = running([*args, "--port", "0", "--out", str(tmp_path / "run"), "--json"])
    try:
        assert proc.stdout is not None
        json.loads(proc.stdout.readline())  # serving, waiting for the agent
        line, _ = stopped_line(proc, signal.SIGTERM)
    finally:
        proc.kill()
    assert line == "arena: error: stopped by SIGTERM before the run started: nothing was logged"


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
