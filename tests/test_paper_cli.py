"""``arena paper`` as a user runs it: a real subprocess against the fake Hyperliquid.

Stopped by SIGINT (Ctrl-C) or SIGTERM (a supervisor) once the run log shows what the test
waits for; it must exit 0 and leave a run log that ``arena replay`` turns into the very
ranking the run reported, byte for byte.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from arena_tui.record.feed import wall_ms
from engine import Market, Season
from engine.season import MINUTE_MS
from tests.clirun import ROOT, arena, arena_running, one_error_line, until
from tests.fakehl import FakeHL
from tests.paperkit import arena_type, check_ticks, lines, running_season, write_taker


@contextmanager
def paper(srv: FakeHL, tmp: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    cmd = ["paper", "--ws-url", srv.ws_url, "--info-url", srv.info_url, "--retry-base-ms", "2"]
    with arena_running(tmp, *cmd, *args) as proc:
        yield proc


def rows_when(run_log: Path, pred: Callable[[list[dict[str, Any]]], bool]) -> Callable[[], bool]:
    def check() -> bool:
        try:
            return pred(lines(run_log))
        except (OSError, ValueError):
            return False

    return check


def sold_and_ticked(rows: list[dict[str, Any]]) -> bool:
    """The strategy's sell is in, and two ticks after it (time for it to activate)."""
    sells = [i for i, r in enumerate(rows) if arena_type(r) == "order" and r["arena"]["reduceOnly"]]
    return bool(sells) and sum(arena_type(r) == "tick" for r in rows[sells[0] :]) >= 2


def test_arena_paper_stopped_by_sigint_exits_0_and_its_run_log_replays(tmp_path: Path) -> None:
    out = tmp_path / "run"
    season = running_season(tmp_path / "season.json")
    strategy = write_taker(tmp_path / "taker.py")
    with (
        FakeHL() as srv,
        paper(
            srv, tmp_path, str(strategy), "--season", str(season), "--out", str(out), "--json"
        ) as proc,
    ):
        until(rows_when(out / "run.jsonl", sold_and_ticked), "the strategy to buy and sell")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0, (tmp_path / "err.txt").read_text()
    report = json.loads((tmp_path / "out.txt").read_text())
    ranking = (out / "ranking.json").read_text()
    assert json.loads(ranking) == report["replay"]
    assert report["entries"][0]["fills"] == {"taker": 2, "maker": 0}
    assert not report["replay"]["final"]
    replayed = arena("replay", str(out / "run.jsonl"), "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == ranking  # byte for byte
    rows = lines(out / "run.jsonl")
    check_ticks(rows)
    err = (tmp_path / "err.txt").read_text()
    assert "arena: paper trading taker on BTC from ws://127.0.0.1:" in err
    assert "stopped before the season's end" in err and "Traceback" not in err
    for name in ("report.json", "fills.csv", "equity.csv", "chart.svg", "live-test.json"):
        assert (out / name).is_file()
    # the run log is the recording: another strategy can be backtested on the same feed
    maker = str(ROOT / "strategies" / "maker.py")
    again = arena(
        "backtest", maker, str(out / "run.jsonl"), "--out", str(tmp_path / "bt"), "--json"
    )
    assert again.returncode == 0, again.stderr
    assert [e["entry"] for e in json.loads(again.stdout)["entries"]] == ["maker"]


def test_arena_paper_default_season_from_meta_stopped_by_sigterm(tmp_path: Path) -> None:
    out = tmp_path / "run"
    strategy = write_taker(tmp_path / "taker.py")
    before = wall_ms()  # the command reads its clock after this, and before its first input
    with (
        FakeHL() as srv,
        paper(
            srv, tmp_path, str(strategy), "--coins", "BTC", "--hours", "0.5", "--out", str(out)
        ) as proc,
    ):
        ticked = rows_when(
            out / "run.jsonl", lambda rows: any(arena_type(r) == "tick" for r in rows)
        )
        until(ticked, "a tick")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, (tmp_path / "err.txt").read_text()
    header = json.loads((out / "run.jsonl").read_bytes().split(b"\n")[0])
    first_t = lines(out / "run.jsonl")[0]["t"]
    start, end = header["start"], header["end"]
    # the minute after the command's clock reading, which fell between before and first_t (a
    # minute boundary may fall in between: then the first input is at or after the start)
    next_minute = [(x // MINUTE_MS + 1) * MINUTE_MS for x in (before, first_t)]
    assert start % MINUTE_MS == 0 and next_minute[0] <= start <= next_minute[1]
    assert end - start == 30 * MINUTE_MS
    assert header["markets"] == [{"coin": "BTC", "asset": 0, "szDecimals": 5}]  # from meta
    season = Season(header["season"], start, end, (Market("BTC", 0, 5),))
    assert header["rules_sha256"] == season.rules_sha256  # Season 0 rules
    assert (out / f"{header['season']}.json").is_file()
    err = (tmp_path / "err.txt").read_text()
    if "stopped before the season started: no report" in err:  # the usual case
        assert not (out / "report.json").exists()
    else:  # the test happened to straddle a minute boundary
        assert (out / "report.json").is_file()
    replayed = arena("replay", str(out / "run.jsonl"), "--json")
    assert replayed.returncode == 0, replayed.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "--coins: name the coins to trade"),
        (["--season", "ENDED"], "season live-test ended at"),
        (["--season", "RUNNING", "--coins", "ETH"], "--coins ETH: not in season live-test"),
        (["--season", "RUNNING", "--out", "USED"], "already holds a run"),
        (["--coins", "BTC", "--ws-url", "http://x"], "--ws-url: not a ws:// or wss:// URL"),
        (["--coins", "BTC", "--epoch", "7"], "--epoch '7'"),
    ],
)
def test_arena_paper_refuses_what_it_cannot_run_in_one_line(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    strategy = write_taker(tmp_path / "taker.py")
    ended = running_season(tmp_path / "ended.json", now_ms=0)
    running = running_season(tmp_path / "running.json")
    used = tmp_path / "used"
    used.mkdir()
    (used / "run.jsonl").write_text("")
    paths = {"ENDED": ended, "RUNNING": running, "USED": used}
    done = arena("paper", str(strategy), *[str(paths.get(a, a)) for a in args])
    assert needle in one_error_line(done)
    assert (used / "run.jsonl").read_text() == ""  # a run log is never overwritten
