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
from arena_tui.report.runrecord import ANSWERS
from arena_tui.report.runs import INDEX_FILE, SCHEMA
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
    # two strategies: their files differ, not their values (maker has no window_ms)
    assert doc["differing_params"] == []
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


def test_what_a_run_says_is_printed_without_control_characters(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report.json edited by hand (or written by someone else) cannot drive the terminal:
    escape sequences and other control characters in its texts are not printed."""
    monkeypatch.setenv("COLUMNS", "1000")  # one line a run, whatever the terminal (xdist's)
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


# ---- issue 23, item 8: names, parameters, words, 80 columns, sweeps ---------------------------


def _edit_report(run: Path, change: Any) -> None:
    report = json.loads((run / "report.json").read_text())
    change(report)
    (run / "report.json").write_text(json.dumps(report))


def _first(report: dict[str, Any]) -> dict[str, Any]:
    name = report["verdict"]["strategy"]
    return next(e for e in report["entries"] if e["entry"] == name)


def _row(text: str, name: str) -> str:
    """The first line of ``name``'s row in a list (its columns before the verdict)."""
    return next(line for line in text.splitlines() if f"  {name}  " in line)


def test_show_compare_and_rm_take_the_name_list_prints(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = cli("runs", "list", str(runs))  # indexes them
    assert "  maker  " in listed.stdout and "  momentum  " in listed.stdout
    monkeypatch.chdir(tmp_path)  # nowhere near them: the names are looked up in the index
    shown = cli("runs", "show", "maker")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith(f"{(runs / 'maker').resolve()}\n")
    assert json.loads(cli("runs", "show", "maker", "--json").stdout)["entry"] == "maker"
    compared = cli("runs", "compare", "momentum", "maker")
    assert compared.exit_code == 0 and compared.stdout.startswith("run ")
    dry = cli("runs", "rm", "maker", "--dry-run")
    assert dry.stdout == f"would remove {(runs / 'maker').resolve()}\n"
    # a name two runs have, and a name no run has: one line each
    shutil.copytree(runs / "maker", tmp_path / "elsewhere" / "maker")
    cli("runs", "list", str(tmp_path / "elsewhere"))
    for name, said in (("maker", "2 runs have this name"), ("nosuch", "no run of that name")):
        done = cli("runs", "show", name)
        assert done.exit_code == 1 and done.output.count("\n") == 1, done.output
        assert done.output.startswith(f"arena: error: {name}: ") and said in done.output


def test_list_shows_only_the_parameters_a_run_changed_each_in_full(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs differing in one parameter look different; none of a run's parameters is
    cut, however many it changed, at 80 columns or with no limit."""
    shutil.copytree(runs / "momentum", runs / "long")
    many = {"window_ms": 123_456_789, "min_rise_e8": 987_654_321, "max_hold_ms": 86_400_000}

    def change(report: dict[str, Any]) -> None:
        _first(report)["params"] |= many

    _edit_report(runs / "long", change)
    for columns in ("80", "1000"):
        monkeypatch.setenv("COLUMNS", columns)
        text = cli("runs", "list", str(runs)).stdout
        assert "share_pct=20" in _row(text, "momentum")
        assert "window_ms" not in _row(text, "momentum")  # a default: not shown
        assert "share_pct" not in _row(text, "maker")  # all defaults
        assert _row(text, "maker").endswith("  -") or "  -  " in _row(text, "maker")
        for k, v in (*many.items(), ("share_pct", 20)):
            assert f"{k}={v}" in text.split("  long  ", 1)[1], (columns, text)
        assert "…" not in text
    report = json.loads((runs / "momentum" / "report.json").read_text())
    assert _first(report)["defaults"]["share_pct"] == 25 != _first(report)["params"]["share_pct"]
    shown = cli("runs", "show", str(runs / "momentum")).stdout
    assert "params  momentum-shar20: share_pct=20\n" in shown
    assert "        defaults: window_ms=300000 " in shown  # the others, all of them


def test_an_older_run_that_recorded_no_defaults_lists_all_its_parameters(runs: Path) -> None:
    def change(report: dict[str, Any]) -> None:
        for e in report["entries"]:
            e.pop("defaults")

    _edit_report(runs / "momentum", change)
    text = cli("runs", "list", str(runs)).stdout
    assert "share_pct=20" in text and "window_ms=300000" in text
    listed = json.loads(cli("runs", "list", str(runs), "--json").stdout)
    assert next(r for r in listed if r["entry"] == "momentum-shar20")["defaults"] is None


def test_compare_lists_only_the_parameters_that_differ(runs: Path) -> None:
    shutil.copytree(runs / "momentum", runs / "other")

    def change(report: dict[str, Any]) -> None:
        _first(report)["params"]["share_pct"] = 30

    _edit_report(runs / "other", change)
    doc = json.loads(
        cli(
            "runs", "compare", *(str(runs / n) for n in ("momentum", "other", "maker")), "--json"
        ).stdout
    )
    assert doc["differing_params"] == ["share_pct"]
    text = cli("runs", "compare", str(runs / "momentum"), str(runs / "other")).stdout
    lines = text.splitlines()
    assert "params (differing)" in lines[0]
    assert "share_pct=20" in lines[1] and "share_pct=30" in lines[2]
    assert "window_ms" not in text and "min_rise_e8" not in text  # the same in both


def test_verdicts_are_words_never_codes(runs: Path) -> None:
    old_report(runs / "maker")

    def change(report: dict[str, Any]) -> None:
        report["verdict"].pop("text")  # an older report with its code and no words

    _edit_report(runs / "maker", change)
    for args in (["list", str(runs)], ["show", str(runs / "maker")]):
        text = cli("runs", *args).stdout
        assert "not enough blocks to tell" in text and "not_enough_blocks" not in text
    compared = cli("runs", "compare", str(runs / "momentum"), str(runs / "maker")).stdout
    assert "not enough blocks to tell" in compared and "not_enough_blocks" not in compared
    listed = json.loads(cli("runs", "list", str(runs), "--json").stdout)  # programs: codes
    assert next(r for r in listed if r["entry"] == "maker")["verdict"] == "not_enough_blocks"


def test_the_list_fits_80_columns(runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_sweep(runs / "sweep1", _verdict(runs / "maker"))
    monkeypatch.setenv("COLUMNS", "80")
    text = cli("runs", "list", str(runs)).stdout
    assert max(len(line) for line in text.splitlines()[:-1]) <= 80, text  # (last: the index)
    for name in ("momentum", "maker", "sweep1"):
        assert f"  {name}  " in text
    monkeypatch.setenv("COLUMNS", "1000")  # room for one line a run: one line a run
    wide = cli("runs", "list", str(runs)).stdout.splitlines()
    assert len(wide) == 1 + 3 + 1 and wide[0].split()[-2:] == ["data", "verdict"]


DAY = 86_400_000
SWEEP_DAYS = [
    {"path": f"/days/0{i}.jsonl.gz", "sha256": f"{i}" * 64, "first_t": 1796083200000 + i * DAY}
    for i in (1, 2, 3)
]


def make_sweep(where: Path, verdict: dict[str, Any] | None = None) -> Path:
    """A sweep directory: its store as arena sweep writes it (with its settings) and, given
    the held-out ``verdict``, the sweep.json of a finished sweep, shaped as
    ``sweep.result.sweep_doc``'s."""
    from arena_tui.sweep.store import SweepStore

    where.mkdir(parents=True)
    with SweepStore(where) as store:
        store.save_config(
            {"version": 1, "strategy": "/s/momentum.py", "days": SWEEP_DAYS, "search": "grid"}
        )
    if verdict is None:
        return where
    chosen: dict[str, Any] = {"name": "momentum-wind60000", "params": {"window_ms": 60000}}
    chosen |= {"train_score": -9851, "holdout_score": -22944, "holdout_fills": 4}
    fold = {
        "variants": [{"name": "momentum"}, {"name": "momentum-wind60000"}],
        "train_days": [SWEEP_DAYS[0]["path"]],
        "holdout_days": [d["path"] for d in SWEEP_DAYS[1:]],
    }
    doc = {
        "strategy": "/s/momentum.py",
        "base": "momentum",
        "search": "grid",
        "params": {"window_ms": {"type": "int", "default": 300000, "values": [60000, 300000]}},
        "days": SWEEP_DAYS,
        "folds": [fold],
        "chosen": chosen,
        "verdict": verdict,
    }
    (where / "sweep.json").write_text(json.dumps(doc))
    return where


def _verdict(run: Path) -> dict[str, Any]:
    return dict(json.loads((run / "report.json").read_text())["verdict"])


def test_sweeps_are_listed_beside_runs_marked_as_sweeps(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sweeps = tmp_path / "data" / "sweeps"  # where arena sweep puts one without --out
    make_sweep(sweeps / "momentum-20261206", _verdict(runs / "maker"))
    make_sweep(sweeps / "stopped")
    monkeypatch.setenv("COLUMNS", "1000")
    text = cli("runs", "list").stdout  # no folder named: the data directory's sweeps/
    row = _row(text, "momentum-20261206")
    assert "  sweep  " in row and "momentum.py" in row and "window_ms=60000" in row
    assert "-0.022944%" in row and "3 days, 2 held out" in row
    maker = _verdict(runs / "maker")
    assert f"2 variants (grid), chose momentum-wind60000; held out: {summary(maker)}" in row
    stopped = _row(text, "stopped")
    assert "  sweep  " in stopped and "unfinished (0 jobs stored)" in stopped
    assert "arena sweep --resume" in stopped
    assert text.splitlines()[-1].startswith("0 runs, 2 sweeps; index ")
    listed = json.loads(cli("runs", "list", "--json").stdout)
    one = next(r for r in listed if r["path"].endswith("momentum-20261206"))
    assert one["kind"] == "sweep" and one["sweep"]["variants"] == 2
    assert one["sweep"]["chosen"] == "momentum-wind60000" and one["sweep"]["finished"] is True
    assert one["skill"] == maker["skill"]["answer"]
    shown = cli("runs", "show", "momentum-20261206")
    assert shown.exit_code == 0, shown.output
    assert "chosen  momentum-wind60000: window_ms=60000" in shown.stdout
    assert shown.stdout.endswith(
        f"arena sweep show {sweeps / 'momentum-20261206'} prints it whole\n"
    )
    for args in (
        ["compare", str(runs / "maker"), "stopped"],
        ["rm", str(sweeps / "stopped")],
    ):
        done = cli("runs", *args)
        assert done.exit_code == 1 and done.output.count("\n") == 1, done.output
        assert "a sweep, not a run" in done.output
    assert (sweeps / "stopped" / "sweep.sqlite").is_file()


def test_a_sweep_written_anywhere_is_listed_as_a_run_written_anywhere_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """arena sweep --out puts a sweep outside the data directory: it is indexed as it is
    written, so arena runs list shows it with no folder named (as it shows runs)."""
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path / "data"))
    days = tmp_path / "days"
    for d in ("01", "02"):
        made = cli("synth", "--coins", "BTC", "--hours", "1", "--start", f"2026-12-{d}",
                   "--seed", d, "--out", str(days / f"{d}.jsonl.gz"))  # fmt: skip
        assert made.exit_code == 0, made.output
    out = tmp_path / "elsewhere" / "sweep"
    swept = cli("sweep", "strategies/momentum.py", str(days), "--param", "window_ms=60000,120000",
                "--holdout", "50%", "--epoch", "10m", "--twins", "0", "--workers", "1",
                "--out", str(out), "--json")  # fmt: skip
    assert swept.exit_code == 0, swept.output
    listed = json.loads(cli("runs", "list", "--json").stdout)
    assert [(r["path"], r["kind"]) for r in listed] == [(str(out), "sweep")]
