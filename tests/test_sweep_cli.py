"""``arena sweep`` end to end through the CLI, on four synthetic one-hour days.

A grid sweep prints the ranked table, the chosen variant's three held-out answers (the
same words in the table and the held-out lines), the luck of trying them all (SPA, StepM,
the model confidence set, PBO) and the plot, writes sweep.json and plot.svg, and its rerun
line reproduces the chosen trial with ``arena backtest --param``; a variant that never
trades is never chosen; ``show`` prints it again; a sweep killed (-9) after two jobs
resumes without running a finished job again and ends with the same table; walk-forward
folds judge each test stretch with a search over earlier days only; bad input is one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from arena_tui.report.table import pct
from arena_tui.report.verdict_text import SHORT
from arena_tui.sweep.directory import SweepLock
from arena_tui.sweep.plot import bar, groups
from arena_tui.sweep.progress import Line, Progress
from tests.clirun import ROOT, arena, arena_here, one_error_line

MOMENTUM = str(ROOT / "strategies" / "momentum.py")
GRID = ["--param", "window_ms=60000,300000", "--param", "min_rise_e8=50000,150000"]
SETTINGS = ["--holdout", "25%", "--epoch", "10m", "--workers", "1"]
KILL_ENV = "ARENA_SWEEP_KILL_AFTER_JOBS"


def wide(more: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment (read now: the session's day cache is set after import),
    with the report's prose unwrapped, and ``more``."""
    return os.environ | {"COLUMNS": "400"} | (more or {})


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four one-hour, two-coin days, written out of calendar order (names say nothing)."""
    d = tmp_path_factory.mktemp("days")
    for name, day in (("b", "04"), ("a", "02"), ("d", "01"), ("c", "03")):
        done = here(
            "synth",
            "--coins",
            "BTC,ETH",
            "--hours",
            "1",
            "--start",
            f"2026-12-{day}",
            "--seed",
            day,
            "--out",
            str(d / f"{name}.jsonl.gz"),
        )
        assert done.returncode == 0, done.stderr
    return d


@pytest.fixture(scope="module")
def swept(days: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One finished grid sweep: its directory and what it printed (run in this process;
    ``test_show_prints_the_same_result`` shows it again in a real one, the same text)."""
    out = tmp_path_factory.mktemp("sweep") / "s"
    done = here("sweep", MOMENTUM, str(days), *GRID, *SETTINGS, "--out", str(out), env=wide())
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return out, done.stdout


def here(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``arena(*args, env=env)`` in this process (in arena's directory, as ``arena`` runs):
    no new interpreter importing the CLI and the verdict's statistics (about 2 s each)."""
    return arena_here(*args, cwd=ROOT, env=env)


def body(text: str) -> list[str]:
    """The printed result without the line naming the sweep's directory."""
    return [line for line in text.splitlines() if not line.startswith("plot: ")]


def test_grid_sweep_prints_the_table_verdicts_and_plot(swept: tuple[Path, str], days: Path) -> None:
    out, text = swept
    lines = text.splitlines()
    assert lines[0].startswith("sweep of momentum: 4 variants (grid search, seed 0) over 4 days")
    assert "3 training (2026-12-01 .. 2026-12-03), 1 held out (2026-12-04)" in lines[0]
    head = next(line for line in lines if line.startswith("rank"))
    for col in (
        "variant",
        "window_ms",
        "min_rise_e8",
        "train S",
        "fills",
        "ranked?",
        "beats 0",
        "held-out S",
        "held-out skill",
        "rejections",
    ):
        assert col in head
    table = lines[lines.index(head) + 1 : lines.index("", lines.index(head))]
    rows = [line for line in table if line[:4].strip().isdigit()]
    assert [r.split()[0] for r in rows] == ["1", "2", "3", "4"]
    assert table[-1].split()[0] == "control_random"
    assert any(line.startswith("held out: ") for line in lines)
    assert any(line.startswith("objective: mean training S among the variants") for line in lines)
    (luck,) = [line for line in lines if line.startswith("luck over the ")]
    assert "Hansen's SPA p " in luck and "model confidence set" in luck
    assert "score against each parameter" in text and "\nwindow_ms\n" in text

    doc = json.loads((out / "sweep.json").read_text())
    fold = doc["folds"][0]
    assert fold["holdout_days"] == [str(days / "b.jsonl.gz")]  # the last by time, not name
    assert fold["train_days"] == [str(days / f"{n}.jsonl.gz") for n in "dac"]  # Dec 1, 2, 3
    chosen_first = [v for v in fold["variants"] if v["excluded"] is None]
    scores = [v["score"] for v in chosen_first]
    assert scores == sorted(scores, reverse=True)
    for v in fold["variants"]:
        assert v["score"] == int(sum(v["day_scores"]) / 3)  # the mean over the training days
    assert doc["chosen"]["name"] == fold["variants"][0]["name"]
    v = doc["verdict"]
    assert v["skill"]["answer"] in {"skill", "luck", "worse_than_twins", "unmatched"}
    assert v["skill"]["twins"] == 100
    assert v["money"]["blocks"] == 6  # one held-out hour in 10-minute blocks
    assert v["floor"]["paired_blocks"] == 6
    luck_doc = doc["luck"]
    assert 0 < luck_doc["spa"]["p_value"] <= 1 and luck_doc["variants"] == len(chosen_first)
    # one answer per question: the table's row says what the held-out lines say
    (row,) = [r for r in rows if r.split()[1] == doc["chosen"]["name"]]
    assert SHORT["skill"][v["skill"]["answer"]] in row
    (said,) = [line for line in lines if line.lstrip().startswith("skill? ")]
    assert " ".join(said.split()[1:]) == " ".join(v["skill"]["text"].split())

    svg = ET.parse(out / "plot.svg").getroot()
    circles = svg.findall(".//{http://www.w3.org/2000/svg}circle")
    assert len(circles) == 4 * 2  # each variant in each parameter's panel

    # the rerun line reproduces the chosen trial on its held-out day, score for score
    at = next(i for i, x in enumerate(lines) if x.startswith("rerun the chosen variant"))
    words = lines[at + 1].split()
    assert words[:2] == ["arena", "backtest"]
    again = here(*words[1:], "--out", str(out / "rerun"))
    assert again.returncode == 0, again.stderr
    ranking = json.loads((out / "rerun" / "ranking.json").read_text())["ranking"]
    rows_by_name = {r["entry"]: r["score"] for r in ranking}
    assert rows_by_name[doc["chosen"]["name"]] == doc["chosen"]["holdout_score"]


def test_show_prints_the_same_result(swept: tuple[Path, str]) -> None:
    out, text = swept
    shown = arena("sweep", "show", str(out), env=wide())  # a real process: the same text
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == text
    as_json = here("sweep", "show", str(out), "--json")
    assert json.loads(as_json.stdout) == json.loads((out / "sweep.json").read_text())


def test_resume_after_kill_runs_nothing_finished_again(
    swept: tuple[Path, str], days: Path, tmp_path: Path
) -> None:
    out = tmp_path / "s"
    env = wide({KILL_ENV: "2"})
    killed = arena("sweep", MOMENTUM, str(days), *GRID, *SETTINGS, "--out", str(out), env=env)
    assert killed.returncode == -signal.SIGKILL  # kill -9 after two jobs were stored
    assert "not finished" in one_error_line(here("sweep", "show", str(out)))
    # resumed in this process, the jobs in it as the uninterrupted sweep's were (a resume on
    # the default pool of local workers: test_tpe_resumed_after_kill_asks_and_ends_the_same)
    resumed = here("sweep", "--resume", str(out), "--workers", "1", env=wide())
    assert resumed.returncode == 0, resumed.stderr
    assert "arena: 3 jobs run now, 2 found in the store" in resumed.stderr
    with sqlite3.connect(out / "sweep.sqlite") as db:  # each (split, day) job once
        jobs = db.execute("SELECT split, day FROM jobs").fetchall()
    assert len(jobs) == len(set(jobs)) == 5  # 3 training days, the held-out day, its twins
    assert body(resumed.stdout) == body(swept[1])
    # finished: runs nothing, the same table
    again = here("sweep", "--resume", str(out), "--workers", "1", env=wide())
    assert "arena: 0 jobs run now, 5 found in the store" in again.stderr
    assert body(again.stdout) == body(swept[1])


def test_a_sweep_killed_before_it_read_its_days_resumes(
    swept: tuple[Path, str], days: Path, tmp_path: Path
) -> None:
    """Killed (-9) once its identity is saved, before its days were read (hashing a week of
    days takes a while): --resume reads them then and ends as the uninterrupted sweep."""
    out = tmp_path / "s"
    env = wide({KILL_ENV: "0"})
    killed = arena("sweep", MOMENTUM, str(days), *GRID, *SETTINGS, "--out", str(out), env=env)
    assert killed.returncode == -signal.SIGKILL
    assert "not finished" in one_error_line(arena_here("sweep", "show", str(out)))
    said = one_error_line(arena_here("sweep", MOMENTUM, str(days), *GRID, "--out", str(out)))
    assert "already holds a sweep: continue it with arena sweep --resume" in said
    # the killed one's lock died with it (resumed in this process, as in the test above)
    resumed = here("sweep", "--resume", str(out), "--workers", "1", env=wide())
    assert resumed.returncode == 0, resumed.stderr
    assert "arena: 5 jobs run now, 0 found in the store" in resumed.stderr
    assert body(resumed.stdout) == body(swept[1])


def test_a_running_sweeps_directory_is_locked_until_it_ends(days: Path, tmp_path: Path) -> None:
    out = tmp_path / "s"
    out.mkdir()
    with SweepLock(out):  # as a sweep running in it holds it
        line = one_error_line(arena_here("sweep", MOMENTUM, str(days), *GRID, "--out", str(out)))
        assert f"{out}: another arena sweep is running in it (pid {os.getpid()})" in line
        assert not (out / "sweep.sqlite").exists()
    # a sweep that could not start leaves nothing: the same --out is free again
    bad = one_error_line(
        arena_here(
            "sweep",
            MOMENTUM,
            str(days / "a.jsonl.gz"),
            str(days / "a.jsonl.gz"),
            *GRID,
            "--out",
            str(out),
        )
    )
    assert "the same day as" in bad
    assert sorted(p.name for p in out.iterdir()) == []
    (tmp_path / "bad.jsonl").write_text("not a log\n")
    args = [str(days / "a.jsonl.gz"), str(tmp_path / "bad.jsonl"), *GRID, "--out", str(out)]
    assert "bad.jsonl:1: bad header" in one_error_line(arena_here("sweep", MOMENTUM, *args))
    assert sorted(p.name for p in out.iterdir()) == []
    # a resume while the sweep runs: refused; once its process is gone (even by kill -9),
    # the lock is gone with it
    killed = arena(
        "sweep",
        MOMENTUM,
        str(days),
        *GRID,
        *SETTINGS,
        "--out",
        str(out),
        env=os.environ | {KILL_ENV: "0"},
    )
    assert killed.returncode == -signal.SIGKILL
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        line = one_error_line(arena_here("sweep", "--resume", str(out)))
        assert f"another arena sweep is running in it (pid {holder.pid})" in line
    finally:
        holder.kill()
        holder.wait(10)
    with SweepLock(out):  # free at once: no wait, no stale lock to remove
        pass


HOLD = """
import sys, time
from pathlib import Path
from arena_tui.sweep.directory import SweepLock
SweepLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
time.sleep(60)
"""


def test_tpe_resumed_after_kill_asks_and_ends_the_same(days: Path, tmp_path: Path) -> None:
    """A resumed TPE search replays its stored results into the sampler in trial order, so
    it asks the same trials as an uninterrupted one (three batches of four here)."""
    args = [
        MOMENTUM,
        str(days),
        "--param",
        "window_ms=60000..300000:60000",
        "--param",
        "min_rise_e8=50000..250000:50000",
        "--search",
        "tpe",
        "--trials",
        "10",
        "--batch",
        "4",
        "--seed",
        "3",
        *SETTINGS,
        "--json",
    ]
    whole = here("sweep", *args, "--out", str(tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr
    env = os.environ | {KILL_ENV: "5"}  # in the second batch
    killed = arena("sweep", *args, "--out", str(tmp_path / "cut"), env=env)
    assert killed.returncode == -signal.SIGKILL
    resumed = arena("sweep", "--resume", str(tmp_path / "cut"), "--json")  # on a pool of workers
    assert "arena: 6 jobs run now, 5 found in the store" in resumed.stderr  # + the twins
    a, b = json.loads(whole.stdout), json.loads(resumed.stdout)
    assert len(a["folds"][0]["variants"]) == 10
    assert a["folds"] == b["folds"] and a["verdict"] == b["verdict"]


def test_resume_refuses_a_changed_strategy(days: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.py"
    mine.write_text(Path(MOMENTUM).read_text())
    out = tmp_path / "s"
    env = os.environ | {KILL_ENV: "1"}
    killed = arena("sweep", str(mine), str(days), *GRID, *SETTINGS, "--out", str(out), env=env)
    assert killed.returncode == -signal.SIGKILL
    mine.write_text(mine.read_text() + "\n# tuned by hand since\n")
    said = one_error_line(arena("sweep", "--resume", str(out)))
    assert f"{mine} changed since the sweep started" in said


def test_folds_and_random_search(days: Path, tmp_path: Path) -> None:
    args = [
        MOMENTUM,
        str(days),
        "--param",
        "window_ms=60000..300000:60000",
        "--search",
        "random",
        "--trials",
        "3",
        "--seed",
        "5",
        "--folds",
        "2",
        "--epoch",
        "10m",
        "--json",
    ]
    first = arena("sweep", *args, "--workers", "2", "--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    folds = doc["folds"]
    assert [len(f["train_days"]) for f in folds] == [2, 3]  # expanding, by calendar order
    assert [len(f["holdout_days"]) for f in folds] == [1, 1]
    assert folds[0]["holdout_days"] == [folds[1]["train_days"][-1]]
    assert all(len(f["variants"]) == 3 for f in folds)
    assert doc["verdict"]["money"]["blocks"] == 12  # both folds' held-out blocks, pooled
    skill = doc["verdict"]["skill"]
    assert skill["twins"] == 100  # each twin's mean over both held-out days
    if "score" in skill:  # S is a mean of days, and the sentence says so
        assert skill["days"] == 2 and "(mean daily S over 2 held-out days)" in skill["text"]
    second = here("sweep", *args, "--workers", "1", "--out", str(tmp_path / "b"))
    other = json.loads(second.stdout)
    assert [v["name"] for v in other["folds"][0]["variants"]] == [
        v["name"] for v in folds[0]["variants"]
    ]
    assert other["folds"] == folds and other["verdict"] == doc["verdict"]  # whatever ran it


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([MOMENTUM, "DAYS", "--param", "window=1,2"], "no parameter 'window'"),
        ([MOMENTUM, "DAYS", "--param", "window_ms=abc"], "window_ms"),
        ([MOMENTUM, "DAYS", "--param", "window_ms=5..1"], "above its high end"),
        ([MOMENTUM, "DAYS"], "nothing to sweep"),
        ([MOMENTUM, "EMPTY", "--param", "window_ms=1,2"], "no logs"),
        ([MOMENTUM, "--param", "window_ms=1,2"], "no days"),
        ([MOMENTUM, "ONE", "--param", "window_ms=1,2"], "at least one training day"),
        ([MOMENTUM, "DAYS", "--param", "window_ms=1,2", "--search", "best"], "--search"),
        ([MOMENTUM, "DAYS", "--param", "window_ms=1,2", "--holdout", "150%"], "--holdout"),
        (["show", "EMPTY"], "not a sweep directory"),
        (["--resume", "EMPTY", "--param", "window_ms=1,2"], "no --param"),
        (["nothing.py", "DAYS", "--param", "window_ms=1,2"], "no such strategy file"),
    ],
)
def test_bad_input_is_one_line(days: Path, tmp_path: Path, args: list[str], said: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    where = {"DAYS": str(days), "EMPTY": str(empty), "ONE": str(days / "a.jsonl.gz")}
    out = [] if args[0] in ("show", "--resume") else ["--out", str(tmp_path / "o")]
    done = here("sweep", *[where.get(a, a) for a in args], *out)
    assert said in one_error_line(done)
    assert not (tmp_path / "o" / "sweep.sqlite").exists()


def test_plot_groups_and_bars() -> None:
    many = [(v, v * 10) for v in range(40)]
    rows = groups(many)  # an integer parameter's 40 values: bins of 5 whole numbers
    assert [label for label, _, _ in rows] == [f"{a}..{a + 4}" for a in range(0, 40, 5)]
    assert sum(len(s) for _, s, _ in rows) == 40
    assert rows[0][2] and not any(r[2] for r in rows[1:])  # the first point's bin is marked
    assert [label for label, _, _ in groups([(True, 1), (False, 2)])] == ["false", "true"]
    assert bar(-5, 10).index("|") == bar(5, 10).index("|")  # zero stays in one column
    assert bar(-10, 10).lstrip().startswith("█") and bar(10, 10).rstrip().endswith("█")


def test_progress_line_says_trials_best_and_time_left() -> None:
    line = Line(total_jobs=10)
    p = Progress(trials=4, jobs_done=2, jobs_reused=3, best=("momentum-x", 1_234_567))
    p.started -= 4.0
    text = line.text(p)
    assert text.startswith("sweep: 4 trials asked, 2 jobs done, best momentum-x 1.23%")
    assert "~10.0 s left" in text  # 2 s a job, 5 of 10 left


def test_local_workers_exit_when_the_driver_is_killed(days: Path, tmp_path: Path) -> None:
    """kill -9 of the driver must not leave its worker processes waiting forever."""
    psutil = pytest.importorskip("psutil")
    import subprocess
    import sys
    import time

    env = wide({KILL_ENV: "1"})
    cmd = [sys.executable, "-m", "arena_tui.cli", "sweep", MOMENTUM, str(days), *GRID]
    cmd += ["--holdout", "25%", "--epoch", "10m", "--workers", "2", "--out", str(tmp_path / "s")]
    driver = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    me = psutil.Process()
    # what this test process had running already (another test's fork server and its
    # resource tracker live as long as the process that started them) is not the driver's
    theirs = {driver.pid} | {p.pid for p in me.children(recursive=True)}
    seen: set[int] = set()
    while driver.poll() is None:  # the workers are the forkserver's children, not the driver's
        for p in me.children(recursive=True):
            if p.pid not in theirs:
                seen.add(p.pid)
        time.sleep(0.05)
    assert driver.returncode == -signal.SIGKILL
    assert seen, "no worker process was seen"
    deadline = time.monotonic() + 30
    alive = {pid for pid in seen if running(psutil, pid)}
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = {pid for pid in alive if running(psutil, pid)}
    for pid in alive:
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()
    assert not alive, f"workers still running after the driver died: {sorted(alive)}"


def running(psutil: Any, pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


TINY = '''from arena_tui.strategy import IOC, Context
from engine.units import E8, lots_down, tdiv
from strategies.momentum import Momentum


class Tiny(Momentum):
    """Momentum sized in dollars: notional_usd under $10 is refused OrderTooSmall."""

    notional_usd: int = 200

    def enter(self, ctx: Context, coin: str) -> None:
        book = ctx.market(coin).book
        if book is None or book.best_ask_e8 is None:
            return
        ask = book.best_ask_e8
        px = ctx.grid_e8(coin, ask + tdiv(ask * self.slippage_e8, E8), True)
        sz = lots_down(self.notional_usd * 10**16 // px, ctx.market(coin).lot_e8)
        if sz:
            ctx.order(ctx.asset_of(coin), True, px, sz, False, IOC)
'''


def test_a_variant_that_never_trades_is_never_chosen(days: Path, tmp_path: Path) -> None:
    """Every order of notional_usd=5 is refused (OrderTooSmall): 0 fills, S exactly 0, which
    beats every variant that trades and pays fees. It is listed, marked and not chosen; with
    only such variants nothing is chosen and the held-out answer is "no trades to judge"."""
    tiny = tmp_path / "tiny.py"
    tiny.write_text(TINY)
    args = [str(tiny), str(days), "--param", "notional_usd=5,200", "--holdout", "50%"]
    done = here("sweep", *args, "--epoch", "10m", "--workers", "1", "--out",
                 str(tmp_path / "s"), "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    first, second = doc["folds"][0]["variants"]
    assert (first["params"]["notional_usd"], first["rank"], first["excluded"]) == (200, 1, None)
    assert (second["fills"], second["score"], second["rank"]) == (0, 0, None)
    assert second["excluded"] == "no fills" and second["score"] > first["score"]
    assert doc["chosen"]["params"]["notional_usd"] == 200
    assert doc["verdict"]["skill"]["answer"] != "no_trades"
    table = here("sweep", "show", str(tmp_path / "s"), env=wide()).stdout
    (row,) = [line for line in table.splitlines() if "tiny-noti5" in line]
    assert row.split()[0] == "-" and row.endswith("no fills")
    # The per-parameter bars speak of the variants that may be chosen: 0 fills is no score
    plot = table[table.index("score against each parameter") :].splitlines()
    (five,) = [line for line in plot if line.split()[:1] == ["5"]]
    assert five.split()[1:] == ["none", "of", "its", "variants", "may", "be", "chosen"]
    (full,) = [line for line in plot if line.split()[:1] == ["200"]]
    assert "█" in full and pct(first["score"]) in full
    alone = here("sweep", str(tiny), str(days), "--param", "notional_usd=1,5", "--holdout",
                  "50%", "--epoch", "10m", "--workers", "1", "--out", str(tmp_path / "t"),
                  env=wide())  # fmt: skip
    assert alone.returncode == 0, alone.stderr
    assert "held out: no trades to judge: no variant had the training fills" in alone.stdout
    assert "rerun the chosen variant" not in alone.stdout
    assert "skill? " not in alone.stdout
