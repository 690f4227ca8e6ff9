"""The example agents in lockstep (issue 15): deterministic, replayable, and the same as
the strategy they would be in-process.

Each run is a real ``arena backtest --agent CMD`` (a subprocess launching the agent as
another), over the first hour of the shipped sample (a season file cut to it, to keep the
file at ~30 s): strategies/http_agent.py twice gives the same run log bytes, and
``arena replay`` of it the reported ranking; strategies/http_twin.py, its logic as a
Python strategy, gives the same fills; docs/agents/agent.js (Node) and the worked example
of docs/api.md, taken from the document itself so that it cannot rot, run and trade.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from arena_tui.host.lockstep_run import OUTPUT_FILE as OUTPUT  # the agent's stdout, stderr
from tests.clirun import ROOT, arena, sample_season

SAMPLE = "recordings/synth-3coins-20261201.jsonl.gz"
PYTHON = shlex.quote(sys.executable)  # the venv's: the agents need httpx
AGENT = f"{PYTHON} strategies/http_agent.py"


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_season(tmp_path_factory.mktemp("season") / "hour.json", 60, name="lockstep-hour")


def backtest(season: Path, out: Path, *args: str) -> dict[str, Any]:
    """``arena backtest ARGS SAMPLE --season ... --out OUT --json``: its JSON."""
    done = arena("backtest", *args, SAMPLE, "--season", str(season), "--out", str(out), "--json")
    agent_log = out / OUTPUT
    said = agent_log.read_text()[-2000:] if agent_log.exists() else ""
    assert done.returncode == 0, f"{done.stderr[-3000:]}\n{OUTPUT}:\n{said}"
    assert "Traceback" not in done.stderr + said, done.stderr + said
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def fills(out: Path, leave_out: str = "entry") -> list[dict[str, Any]]:
    """The run's fills (fills.jsonl), without one field (the entry's name)."""
    rows = [json.loads(line) for line in (out / "fills.jsonl").read_text().splitlines()]
    for row in rows:
        del row[leave_out]
    return rows


@pytest.fixture(scope="module")
def agent_runs(season: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """strategies/http_agent.py in lockstep, twice."""
    outs = []
    for n in (1, 2):
        out = tmp_path_factory.mktemp(f"agent{n}") / "run"
        backtest(season, out, "--agent", AGENT)
        outs.append(out)
    return outs


def test_the_example_agent_twice_gives_the_same_run_log(agent_runs: list[Path]) -> None:
    first, second = (out / "run.jsonl" for out in agent_runs)
    assert first.read_bytes() == second.read_bytes()
    orders = [line for line in first.read_text().splitlines() if '"type":"order"' in line]
    assert len(orders) > 20, "the agent should trade every minute of the hour"
    said = (agent_runs[0] / OUTPUT).read_text()
    assert re.search(r"over: \d+ steps, (\d+) rounds", said), said


def test_replay_of_the_agents_run_log_gives_the_reported_ranking(
    agent_runs: list[Path],
) -> None:
    out = agent_runs[0]
    reported = json.loads((out / "report.json").read_text())
    done = arena("replay", str(out / "run.jsonl"), "--json")
    assert done.returncode == 0, done.stderr
    replayed = json.loads(done.stdout)
    for key in ("ranking", "fills_sha256", "log_sha256", "rules_sha256"):
        assert replayed[key] == reported["replay"][key], key
    assert any(row["entry"] == "agent" for row in replayed["ranking"])


def test_the_twin_strategy_gives_the_agents_fills(
    agent_runs: list[Path], season: Path, tmp_path: Path
) -> None:
    """http_twin.py in-process == http_agent.py over HTTP: every fill's time, price, size,
    side, oid, cloid, liquidity and fees (the entries' names aside)."""
    backtest(season, tmp_path / "twin", "strategies/http_twin.py")
    agent, twin = fills(agent_runs[0]), fills(tmp_path / "twin")
    assert len(agent) > 20
    assert {f["isBuy"] for f in agent} == {True, False}
    assert agent == twin


def test_beside_the_baselines_every_entry_fills_as_with_the_twin(
    season: Path, tmp_path: Path
) -> None:
    """The agent in a pass with the baselines changes nothing for anyone: every entry's
    fills are those of the same pass with the twin in-process under the agent's name. Only
    oids may differ: at one stamp the agent's requests, handed over at the settle point
    after the input, come after the Python entries' requests made in that input's hooks."""
    backtest(season, tmp_path / "agent", "--agent", AGENT, "--vs", "baselines")
    backtest(season, tmp_path / "twin", "strategies/http_twin.py:agent", "--vs", "baselines")
    agent, twin = fills(tmp_path / "agent", "oid"), fills(tmp_path / "twin", "oid")
    assert {row["entry"] for row in agent} >= {"agent", "momentum", "maker"}
    assert agent == twin


def test_the_javascript_agent_runs_and_trades(season: Path, tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: docs/agents/agent.js needs Node 20")
    out = tmp_path / "js"
    backtest(season, out, "--agent", f"{shlex.quote(node)} docs/agents/agent.js")
    sides = {f["isBuy"] for f in fills(out)}
    assert sides == {True, False}, "it buys every 5 minutes and sells back 5 minutes later"
    assert "over after" in (out / OUTPUT).read_text()


def worked_example() -> str:
    """The python block of docs/api.md's worked example (the section of that name)."""
    text = (ROOT / "docs/api.md").read_text()
    section = text.split("### A worked example", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, "docs/api.md: the worked example has no python block"
    return match.group(1)


def test_the_worked_example_of_the_api_doc_runs_and_trades(season: Path, tmp_path: Path) -> None:
    program = tmp_path / "wake_minute.py"
    program.write_text(worked_example())
    out = tmp_path / "minute"
    result = backtest(season, out, "--agent", f"{PYTHON} {shlex.quote(str(program))}")
    rows = fills(out)
    assert {f["isBuy"] for f in rows} == {True, False}
    # woken by its timer only: at most one order a minute, each on a whole minute
    orders = [json.loads(line) for line in (out / "run.jsonl").read_text().splitlines()[1:]]
    stamps = [o["t"] for o in orders if o.get("arena", {}).get("type") == "order"]
    assert stamps and all(t % 60_000 == 0 for t in stamps), stamps[:5]
    assert len(set(stamps)) == len(stamps)
    assert "over:" in (out / OUTPUT).read_text()
    assert result["replay"]["final"]
