"""Lockstep: an HTTP agent (a subprocess, plain httpx) backtested as exactly as a strategy.

Each test runs ``arena backtest --agent`` (or ``arena host --lockstep``) over the first 20
minutes of the shipped sample, with the agent of ``tests/lockstepkit.py`` told to wake
only on BTC books or on a timer, so a run is a few hundred steps at most.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena_tui.host.lockstep import BadWake, Wake, parse_wake
from tests.clirun import arena, arena_running, until
from tests.lockstepkit import (
    SYNTH,
    agent_file,
    output,
    own_lines,
    remote,
    run_agent,
    run_agents,
    season_file,
)

BTC_BOOKS = json.dumps({"coins": ["BTC"], "channels": ["l2Book"]})
EVERY_MINUTE = json.dumps({"every_ms": 60_000})
EVERY_5_MIN = json.dumps({"every_ms": 300_000})


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The command failed with one ``arena: error:`` line (after the line saying where
    the run goes), and no traceback."""
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("arena: error:")]
    assert len(errors) == 1 and done.stderr.rstrip().endswith(errors[0]), done.stderr
    return errors[0]


def steps_of(lines: list[str]) -> list[tuple[int, int, str]]:
    """(step, t, why) of each step the agent handled."""
    out = []
    for line in lines:
        parts = line.split()
        if parts[0] == "step":
            out.append((int(parts[1]), int(parts[2]), parts[3]))
    return out


def orders_of(lines: list[str]) -> list[tuple[int, int, int, int]]:
    """(step, step t, HTTP status, the t it was applied at) of each order the agent sent."""
    out = []
    for line in lines:
        parts = line.split()
        if parts[0] == "order":
            out.append((int(parts[1]), int(parts[2]), int(parts[3]), int(parts[4])))
    return out


def test_agent_twice_gives_identical_runs_and_replay_gives_its_ranking(tmp_path: Path) -> None:
    flags = ("--wake", BTC_BOOKS, "--trade", "20")
    a, b = run_agents(
        tmp_path,
        ("a", flags, ("--vs", "baselines")),
        ("b", flags, ("--vs", "baselines")),
        thin=True,
    )
    assert a.returncode == 0, a.stderr
    assert b.returncode == 0, b.stderr
    run_log = tmp_path / "a/run.jsonl"
    assert run_log.read_bytes() == (tmp_path / "b/run.jsonl").read_bytes()
    assert a.stdout == b.stdout
    report = json.loads(a.stdout)
    entries = {e["entry"] for e in report["entries"]}
    assert entries == {"agent", "momentum", "reversion", "control_random", "maker"}
    lines = output(tmp_path, "a")
    steps = steps_of(lines)
    counts = remote(report)
    assert counts["steps"] == len(steps) > 100  # the start and every BTC book
    assert counts["passes"] == 0 and counts["reconnects"] == 0
    assert steps[0][2] == "start" and all(why == "book:BTC" for _, _, why in steps[1:])
    orders = orders_of(lines)
    assert len(orders) == len(steps) // 20
    # stamped with its step's time (latency 0), answered once applied, as in the run log
    assert all(status == 200 and applied == t for _, t, status, applied in orders)
    logged = [line for line in own_lines(run_log) if line["arena"]["entry"] == "agent"]
    assert [line["t"] for line in logged] == [t for _, t, _, _ in orders]
    assert any(e["fills"]["taker"] for e in report["entries"] if e["entry"] == "agent")
    replayed = arena("replay", str(run_log), "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout) == report["replay"]


def test_stream_and_poll_agree_and_a_reconnecting_agent_resumes(tmp_path: Path) -> None:
    flags = ("--wake", BTC_BOOKS, "--trade", "20")
    poll, ws, again = run_agents(
        tmp_path,
        ("poll", flags, ()),
        ("ws", (*flags, "--ws"), ()),
        ("again", (*flags, "--ws", "--reconnect-at", "3"), ()),
    )
    for done in (poll, ws, again):
        assert done.returncode == 0, done.stderr
    logs = [(tmp_path / d / "run.jsonl").read_bytes() for d in ("poll", "ws", "again")]
    assert logs[0] == logs[1] == logs[2]  # the same agent, whichever way it steps
    assert remote(json.loads(ws.stdout))["reconnects"] == 0
    counts = remote(json.loads(again.stdout))
    assert counts["reconnects"] == 1 and counts["passes"] == 0
    lines = output(tmp_path, "again")
    closed = lines.index("closing at 3")
    assert lines[closed + 1].startswith("step 3 ")  # step 3 again, on the new stream
    assert steps_of(lines) == steps_of(output(tmp_path, "ws"))


def test_slow_agent_loses_nothing_and_is_stamped_later_when_measured(tmp_path: Path) -> None:
    flags = ("--wake", EVERY_5_MIN, "--trade", "1")
    fast, slow, measured = run_agents(
        tmp_path,
        ("fast", flags, ()),
        ("slow", (*flags, "--sleep", "0.2"), ()),
        ("measured", (*flags, "--sleep", "0.2"), ("--think-time", "measured")),
    )
    for done in (fast, slow, measured):
        assert done.returncode == 0, done.stderr
    fast_log = (tmp_path / "fast/run.jsonl").read_bytes()
    assert (tmp_path / "slow/run.jsonl").read_bytes() == fast_log
    orders = orders_of(output(tmp_path, "slow"))
    assert len(orders) == 3  # the start (00:01), then 00:05 and 00:10
    assert all(applied == t for _, t, _, applied in orders)
    later = orders_of(output(tmp_path, "measured"))
    assert [(n, t) for n, t, _, _ in later] == [(n, t) for n, t, _, _ in orders]
    assert all(applied >= t + 200 for _, t, _, applied in later)
    logged = [line["t"] for line in own_lines(tmp_path / "measured/run.jsonl")]
    assert logged == [applied for _, _, _, applied in later]  # every stamp is in the log


def test_hung_agent_passes_its_step_and_the_run_goes_on(tmp_path: Path) -> None:
    done = run_agent(
        tmp_path, "hung", "--wake", EVERY_5_MIN, "--hang-at", "2", extra=("--step-timeout", "2")
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    counts = remote(report)
    assert counts["passes"] == 1 and counts["steps"] == 2  # no new step until it is back
    assert report["replay"]["final"]


def test_crashed_agent_ends_the_run_with_one_line(tmp_path: Path) -> None:
    done = run_agent(tmp_path, "crash", "--wake", EVERY_5_MIN, "--exit-at", "2")
    line = error_line(done)
    assert re.fullmatch(
        r"arena: error: the agent exited with code 3 at step 2 "
        r"\(2026-12-01T00:05:00\.000Z\); the run log is kept in .*crash",
        line,
    ), line
    kept = (tmp_path / "crash/run.jsonl").read_text(encoding="utf-8")
    assert '"register","entry":"agent"' in kept and kept.endswith("\n")


def test_timer_agent_waits_once_a_minute_and_is_rate_limited_in_simulated_time(
    tmp_path: Path,
) -> None:
    done = run_agent(tmp_path, "timer", "--wake", EVERY_MINUTE, "--reads", "21")
    assert done.returncode == 0, done.stderr
    lines = output(tmp_path, "timer")
    steps = steps_of(lines)
    assert [why for _, _, why in steps] == ["start"] + ["timer"] * 9  # 00:02 ... 00:10
    assert all(t % 60_000 == 0 for _, t, _ in steps)
    counts = remote(json.loads(done.stdout))
    assert counts["waits"] == counts["steps"] == 10  # thousands of inputs woke nobody
    reads = next(line for line in lines if line.startswith("reads")).split()[1:]
    assert reads == ["200"] * 20 + ["429"]  # the 21st within 10 simulated seconds
    assert "read2 200" in lines  # a simulated minute later, though a moment of wall time


def host_run(tmp: Path, name: str, *flags: str) -> tuple[dict[str, Any], list[list[str]]]:
    """``arena host --lockstep`` with two entries, alice and bob, each an agent process
    given ``flags``: the report, and each agent's printed lines."""
    here = tmp / name
    here.mkdir()
    args = ["host", "--replay", str(SYNTH), "--lockstep", "--season", str(season_file(tmp))]
    args += ["--port", "0", "--entry", "alice", "--entry", "bob", "--out", str(here / "run")]
    args += ["--connect-timeout", "120"]  # (two agents starting on a loaded 2-core machine)

    def text() -> str:
        return (here / "out.txt").read_text(encoding="utf-8")

    with arena_running(here, *args, "--json") as proc:
        until(lambda: "\n" in text(), "the URL and keys", timeout=30)
        info = json.loads(text().splitlines()[0])
        url, keys = info["url"], info["keys"]
        auth = {"Authorization": f"Bearer {keys['alice']}"}
        assert httpx.post(f"{url}/v1/step", json={}).status_code == 401
        bad = httpx.post(f"{url}/v1/step", json={"wake": {"channels": ["bogus"]}}, headers=auth)
        assert bad.status_code == 400 and "bogus" in bad.json()["detail"]
        assert httpx.get(f"{url}/v1/log").status_code == 404
        assert "/v1/step" in httpx.get(f"{url}/openapi.json").json()["paths"]
        assert httpx.get(f"{url}/v1/season").json()["state"] == "before"  # (read before step 1)
        agents = []
        program = agent_file(here)  # (this run's: the other run's thread writes its own)
        for entry in ("alice", "bob"):
            env = dict(os.environ, ARENA_URL=url, ARENA_KEY=keys[entry])
            cmd = [sys.executable, str(program), *flags]
            agents.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True))
        said = [agent.communicate(timeout=60)[0].splitlines() for agent in agents]
        codes = [agent.returncode for agent in agents]
        assert codes == [0, 0], f"{codes}: {[lines[-3:] for lines in said]}"
        assert proc.wait(30) == 0, (here / "err.txt").read_text(encoding="utf-8")
    return json.loads(text().splitlines()[1]), said


def test_host_lockstep_orders_two_agents_the_same_way_every_time(tmp_path: Path) -> None:
    flags = ("--wake", BTC_BOOKS, "--trade", "10")
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda name: host_run(tmp_path, name, *flags), ("one", "two")))
    (report, said), (again, _) = runs
    assert report == again  # (the run logs' SHA-256 too)
    one = (tmp_path / "one/run/run.jsonl").read_bytes()
    assert one == (tmp_path / "two/run/run.jsonl").read_bytes()
    assert remote(report, "alice")["steps"] == remote(report, "bob")["steps"] > 100
    assert said[0][-1] == said[1][-1] == f"over {report['replay']['end']}"
    # both order at the same steps, at the same stamps: alice's first, as --entry gave them
    orders = [
        (line["t"], line["arena"]["entry"]) for line in own_lines(tmp_path / "one/run/run.jsonl")
    ]
    assert len(orders) == 2 * len(orders_of(said[0])) > 0
    assert orders == sorted(orders)  # t, then alice before bob


def test_agent_that_cannot_start_or_never_calls_is_one_line(tmp_path: Path) -> None:
    season = ["--season", str(season_file(tmp_path))]
    args = ["backtest", "--agent", "/nonexistent/agent --flag", str(SYNTH), *season]
    done = arena(*args, "--out", str(tmp_path / "x"))
    assert "cannot run /nonexistent/agent" in error_line(done)
    args = ["backtest", "--agent", "sleep 30", str(SYNTH), *season, "--connect-timeout", "0.5"]
    done = arena(*args, "--out", str(tmp_path / "y"))
    assert error_line(done).startswith("arena: error: no call from agent within 0.5 s")


def test_a_wake_set_is_checked_and_what_it_leaves_out_is_off() -> None:
    coins = ["BTC", "ETH"]
    wake = parse_wake({"every_ms": 60_000}, coins)
    assert wake == Wake(coins=None, book=False, trades=False, ctx=False, events=False,
                        marks=False, every_ms=60_000)  # fmt: skip
    assert parse_wake({"coins": [], "channels": ["l2Book"]}, coins).coins == frozenset()
    assert Wake().wants("SOL") and not parse_wake({"coins": ["BTC"]}, coins).wants("ETH")
    bad = [
        ({"channels": ["bogus"]}, "channel 'bogus' is not one of"),
        ({"coins": ["DOGE"]}, "coin 'DOGE' is not one of this season's"),
        ({"every_ms": 10}, "every_ms is at least 100"),
        ({"evry_ms": 60_000}, "unknown field `evry_ms`"),
        ({"events": "yes"}, "Expected `bool`"),
    ]
    for doc, said in bad:
        with pytest.raises(BadWake, match=re.escape(said)):
            parse_wake(doc, coins)
