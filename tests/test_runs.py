"""The runs catalog: ``arena runs list|show|compare|rm`` over real run directories.

Two short backtests (momentum and the maker, each with the random control, over the
sample's first hour) are made once into a folder; each test copies what it changes.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena_tui.cli import app
from arena_tui.report.runs import INDEX_FILE
from tests.clirun import SYNTH as SAMPLE
from tests.clirun import sample_season


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("runs")
    sample_season(tmp / "hour.json", 60, name="hour")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ARENA_CACHE", "0")
        mp.setenv("ARENA_DATA_DIR", str(tmp / "data"))
        for strategy, params in (("momentum", ["--param", "share_pct=20"]), ("maker", [])):
            done = cli(
                "backtest", f"strategies/{strategy}.py", str(SAMPLE), "--season",
                str(tmp / "hour.json"), "--vs", "strategies/control_random.py", *params,
                "--out", str(tmp / "all" / strategy), "--json",
            )  # fmt: skip
            assert done.exit_code == 0, done.output
    return tmp / "all"


@pytest.fixture
def runs(made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the two runs, and a data directory of this test's own."""
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path / "data"))
    shutil.copytree(made, tmp_path / "runs")
    return tmp_path / "runs"


def test_list_indexes_the_runs_and_rebuilds_after_one_is_deleted(runs: Path) -> None:
    done = cli("runs", "list", str(runs), "--json")
    assert done.exit_code == 0, done.output
    listed = json.loads(done.stdout)
    assert {r["entry"] for r in listed} == {"momentum-shar20", "maker"}
    one = next(r for r in listed if r["entry"] == "maker")
    assert one["strategy"] == "maker.py" and one["params"]["share_pct"] == 10
    assert one["sources"] == [SAMPLE.name] and one["data_id"] is not None
    assert one["verdict"] == "not_enough_blocks" and one["control"] == "control_random"
    report = json.loads((runs / "maker" / "report.json").read_text())
    row = next(e for e in report["entries"] if e["entry"] == "maker")
    assert one["score"] == row["score"] and one["equity"] == row["equity"]
    index = runs.parent / "data" / INDEX_FILE
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
    text = cli("runs", "list").stdout  # no folder named: the index remembers them
    assert "maker" in text and "momentum" in text and "2 runs" in text
    shutil.rmtree(runs / "momentum")
    after = json.loads(cli("runs", "list", "--json").stdout)
    assert [r["entry"] for r in after] == ["maker"]
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    index.unlink()  # only a cache: rebuilt from the directories
    rebuilt = json.loads(cli("runs", "list", str(runs), "--json").stdout)
    assert [r["entry"] for r in rebuilt] == ["maker"]


def test_compare_prints_the_table_and_whether_data_and_rules_agree(runs: Path) -> None:
    done = cli("runs", "compare", str(runs / "momentum"), str(runs / "maker"))
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    head = lines[0].split()
    assert head[:2] == ["run", "entry"] and "S" in head and "verdict" in head
    assert lines[1].startswith("momentum ") and "momentum-shar20" in lines[1]
    assert lines[2].startswith("maker ")
    assert "%" in lines[1] and "not_enough_blocks" in lines[2]
    assert f"same data ({SAMPLE.name}); same rules (" in lines[-1]
    doc = json.loads(
        cli("runs", "compare", str(runs / "momentum"), str(runs / "maker"), "--json").stdout
    )
    assert doc["same_data"] is True and doc["same_rules"] is True
    assert "window_ms" in doc["differing_params"]  # the maker has none: momentum's differ
    # another day's data and other rules are called out
    report = json.loads((runs / "maker" / "report.json").read_text())
    report["replay"]["rules_sha256"] = "ab" * 32
    (runs / "maker" / "report.json").write_text(json.dumps(report))
    log = runs / "maker" / "run.jsonl"
    log.write_bytes(log.read_bytes().replace(b'"sha256":"', b'"sha256":"0'))
    other = cli("runs", "compare", str(runs / "momentum"), str(runs / "maker")).stdout
    assert "DIFFERENT data" in other and "DIFFERENT rules" in other


def test_show_prints_every_entry(runs: Path) -> None:
    done = cli("runs", "show", str(runs / "maker"))
    assert done.exit_code == 0, done.output
    assert "season hour" in done.stdout and "paper" in done.stdout
    assert "control_random" in done.stdout and "maker.py" in done.stdout
    assert "verdict not enough blocks" in done.stdout


def test_rm_dry_run_deletes_nothing_and_rm_refuses_what_is_not_a_run(
    runs: Path, tmp_path: Path
) -> None:
    before = sorted(p.name for p in (runs / "maker").iterdir())
    done = cli("runs", "rm", str(runs / "maker"), str(runs / "momentum"), "--dry-run")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [
        f"would remove {(runs / 'maker').resolve()}",
        f"would remove {(runs / 'momentum').resolve()}",
    ]
    assert sorted(p.name for p in (runs / "maker").iterdir()) == before
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    (runs / "momentum" / "analysis.ipynb").write_text("{}")
    for victim, why in (
        (tmp_path / "notes", "not a run directory"),
        (runs / "momentum", "analysis.ipynb"),
    ):
        refused = cli("runs", "rm", str(runs / "maker"), str(victim))
        assert (
            refused.exit_code == 1 and why in refused.output and "nothing removed" in refused.output
        )
        assert "Traceback" not in refused.output
        assert (runs / "maker").is_dir() and victim.is_dir()
    gone = cli("runs", "rm", str(runs / "maker"))
    assert gone.exit_code == 0 and not (runs / "maker").exists()
    assert [r["entry"] for r in json.loads(cli("runs", "list", str(runs), "--json").stdout)] == [
        "momentum-shar20"
    ]


def test_errors_are_one_line(runs: Path, tmp_path: Path) -> None:
    for args in (
        ["runs", "show", str(tmp_path)],
        ["runs", "compare", str(runs / "maker")],
        ["runs", "list", str(tmp_path / "nowhere")],
    ):
        done = cli(*args)
        assert done.exit_code == 1, args
        assert done.output.count("\n") == 1 and done.output.startswith("arena: error:"), done.output
    assert cli("runs", "show", str(tmp_path)).output.endswith(
        "not a run directory (no report.json)\n"
    )
    assert cli("runs", "show", str(tmp_path / "nowhere")).output.endswith(": no such directory\n")


def test_a_run_is_indexed_as_it_is_written_wherever_out_put_it(
    made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_DATA_DIR", str(made.parent / "data"))  # the backtests' own
    listed = json.loads(cli("runs", "list", "--json").stdout)  # no folder named
    assert sorted(r["path"] for r in listed) == [str(made / "maker"), str(made / "momentum")]
    # an index that cannot be written (here: a directory in its place) fails no run
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data" / INDEX_FILE).mkdir(parents=True)
    season = sample_season(tmp_path / "ten.json", 10)
    done = cli(
        "backtest", "strategies/momentum.py", str(SAMPLE), "--season", str(season),
        "--out", str(tmp_path / "run"), "--json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert (tmp_path / "run" / "report.html").is_file()
