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
from arena_tui.report.runs import ANSWERS, INDEX_FILE, SCHEMA
from arena_tui.report.verdict_text import summary
from arena_tui.util.human import ratio_pct
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
    report = json.loads((runs / "maker" / "report.json").read_text())
    v = report["verdict"]
    assert one["verdict"] == v["verdict"] and one["control"] == "control_random"
    assert one["verdict_text"] == summary(v) == v["text"]
    assert {k: one[k] for k in ANSWERS} == {k: v[k]["answer"] for k in ANSWERS}
    assert one["answers"] == {k: v[k]["text"] for k in ANSWERS}
    row = next(e for e in report["entries"] if e["entry"] == "maker")
    assert one["score"] == row["score"] and one["equity"] == row["equity"]
    index = runs.parent / "data" / INDEX_FILE
    with sqlite3.connect(index) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
    text = cli("runs", "list").stdout  # no folder named: the index remembers them
    assert "maker" in text and "momentum" in text and "2 runs" in text
    assert summary(v) in text  # the verdict in a few words
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
    maker = json.loads((runs / "maker" / "report.json").read_text())["verdict"]
    assert "%" in lines[1] and lines[2].endswith(summary(maker))
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
    report = json.loads((runs / "maker" / "report.json").read_text())
    row = next(e for e in report["entries"] if e["entry"] == "maker")
    exact = "  ".join(ratio_pct(row[k]) for k in ("score", "return", "mdd"))
    assert exact in done.stdout  # every digit: S = R - MDD adds up
    v = report["verdict"]
    tail = done.stdout.split("\n\nverdict ", 1)[1]
    assert tail.startswith(v["text"] + "\n")
    shown = " ".join(tail.split())  # as one line (the terminal's width wraps them)
    for label, key in (("ranked?", "ranked"), ("money?", "money"), ("skill?", "skill")):
        assert f"{label} {' '.join(v[key]['text'].split())}" in shown, key
    assert f"floor: {' '.join(v['floor']['text'].split())}" in shown


def old_report(run: Path) -> None:
    """``run``'s report.json as arena wrote it before the three questions: one word."""
    report = json.loads((run / "report.json").read_text())
    v = report["verdict"]
    for key in (*ANSWERS, "trades", "epoch_chosen"):
        v.pop(key)
    v |= {
        "verdict": "not_enough_blocks",
        "text": "not enough blocks: 1 of 10m, at least 8 needed",
        "mean_diff": None,
        "interval": None,
    }
    (run / "report.json").write_text(json.dumps(report))


def test_a_run_written_before_the_three_questions_shows_its_old_verdict(runs: Path) -> None:
    old_report(runs / "maker")
    listed = json.loads(cli("runs", "list", str(runs), "--json").stdout)
    one = next(r for r in listed if r["entry"] == "maker")
    assert one["verdict"] == "not_enough_blocks"
    assert one["verdict_text"] == "not enough blocks: 1 of 10m, at least 8 needed"
    assert [one[k] for k in (*ANSWERS, "answers")] == [None] * 5
    text = cli("runs", "list", str(runs)).stdout
    assert "not enough blocks: 1 of 10m, at least 8 needed" in text
    shown = cli("runs", "show", str(runs / "maker"))
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.endswith("\nverdict not enough blocks: 1 of 10m, at least 8 needed\n")
    compared = cli("runs", "compare", str(runs / "momentum"), str(runs / "maker"))
    assert compared.exit_code == 0 and "not enough blocks: 1 of 10m" in compared.stdout


def test_a_run_with_no_trades_reads_no_trades_to_judge(runs: Path) -> None:
    report = json.loads((runs / "maker" / "report.json").read_text())
    v = report["verdict"]
    for key in ANSWERS:
        v[key] = {"answer": "no_trades", "text": "no trades to judge"}
    v["verdict"] = "no_trades"
    v["text"] = summary(v)
    (runs / "maker" / "report.json").write_text(json.dumps(report))
    one = next(
        r
        for r in json.loads(cli("runs", "list", str(runs), "--json").stdout)
        if r["entry"] == "maker"
    )
    assert one["verdict_text"] == "no trades to judge"
    assert {one[k] for k in ANSWERS} == {"no_trades"}
    shown = cli("runs", "show", str(runs / "maker")).stdout
    assert shown.endswith("\n\nverdict no trades to judge\n")


def test_what_a_run_says_is_printed_without_control_characters(runs: Path) -> None:
    """A report.json edited by hand (or written by someone else) cannot drive the terminal:
    escape sequences and other control characters in its texts are not printed."""
    report = json.loads((runs / "maker" / "report.json").read_text())
    bad = "\x1b[2J\x1b]0;pwned\x07\u202e\r"
    report["entries"][0]["strategy"] = f"maker{bad}.py"
    report["entries"][0]["entry"] = report["verdict"]["strategy"] = f"maker{bad}"
    report["verdict"]["skill"] |= {"answer": f"lucky{bad}", "text": f"luck{bad}"}
    (runs / "maker" / "report.json").write_text(json.dumps(report))
    outputs = [
        cli("runs", "list", str(runs)).stdout,
        cli("runs", "show", str(runs / "maker")).stdout,
        cli("runs", "compare", str(runs / "momentum"), str(runs / "maker")).stdout,
    ]
    for out in outputs:
        assert not any(c in out for c in "\x1b\x07\r\u202e"), repr(out)
        assert "maker[2J]0;pwned" in out
    assert " · lucky[2J]0;pwned\n" in outputs[0]  # a code no arena wrote, in the summary
    assert "skill?  luck[2J]0;pwned" in outputs[1]
    assert "maker[2J]0;pwned.py" in outputs[1]
    # --json keeps the text as it is (JSON escapes it): a program reads what was written
    listed = json.loads(cli("runs", "list", str(runs), "--json").stdout)
    assert f"maker{bad}" in [r["entry"] for r in listed]


def test_an_index_of_another_layout_is_rebuilt_with_the_runs_it_knew(
    made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index written by an older arena (another SCHEMA) is rebuilt from the run
    directories, the runs it knew outside the data directory's runs/ included."""
    runs = tmp_path / "elsewhere"
    shutil.copytree(made, runs)
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path / "data"))
    index = tmp_path / "data" / INDEX_FILE
    index.parent.mkdir()
    with sqlite3.connect(index) as db:  # version 1's table: no answers in its records
        db.execute(
            "CREATE TABLE runs (path TEXT PRIMARY KEY, stamp TEXT NOT NULL, when_ms INTEGER "
            "NOT NULL, strategy TEXT, season TEXT, rules_sha256 TEXT, data_id TEXT, "
            "score INTEGER, verdict TEXT, doc TEXT NOT NULL)"
        )
        for run in ("maker", "momentum", "gone"):
            path = str((runs / run).resolve())
            db.execute(
                "INSERT INTO runs VALUES (?, 'old', 0, NULL, NULL, NULL, NULL, NULL, NULL, ?)",
                (path, json.dumps({"path": path, "verdict": "better"})),
            )
        db.execute("PRAGMA user_version = 1")
    listed = json.loads(cli("runs", "list", "--json").stdout)  # no folder named
    assert sorted(r["path"] for r in listed) == [
        str((runs / "maker").resolve()),
        str((runs / "momentum").resolve()),
    ]
    v = json.loads((runs / "maker" / "report.json").read_text())["verdict"]
    maker = next(r for r in listed if r["entry"] == "maker")
    assert maker["skill"] == v["skill"]["answer"] and maker["verdict_text"] == v["text"]
    with sqlite3.connect(index) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA


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
