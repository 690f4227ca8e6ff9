"""arena-tui's Score tab: the verdict of a run watched to its end (Textual's pilot).

A run started in arena-tui is judged on the screen when it ends: the tab's answers must be
the report's own (``report_doc`` of the same run, judged the same way), word for word; it
says it is judging while the twins trade, "no trades to judge" alone for a strategy with
no fills, one line when judging fails, and that the report has it for a run handed in by
``arena backtest --tui`` (which judges it after the screen). A viewer who leaves while the
twins trade stops their pass.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TabbedContent

from arena_tui.report.render import report_doc
from arena_tui.report.verdict import Judging, measure_twins
from arena_tui.run.parts import BacktestResult, Status
from arena_tui.run.twins import TWINS
from arena_tui.tui import judge as judge_module
from arena_tui.tui.app import ArenaApp, make_app, watch_backtest
from arena_tui.tui.screens.run import RunScreen
from arena_tui.tui.source import RunSpec, judging_of, prepare
from arena_tui.tui.widgets.verdict import ELSEWHERE, WAITING, VerdictPanel
from tests.clirun import SYNTH, sample_season
from tests.tuikit import ROOT, WAIT_S, aio, finished, run_screen, trader_spec

IDLE = """
from arena_tui.strategy import Strategy


class Idle(Strategy):
    pass
"""
LABELS = (("ranked?", "ranked"), ("money?", "money"), ("skill?", "skill"), ("floor:", "floor"))


def reported(spec: RunSpec, out: Path) -> dict[str, Any]:
    """The verdict ``arena backtest`` gives the same run (its report's document), judged
    as arena-tui judges it: the blocks chosen for the run, the seed, the twins."""
    bt, paths = prepare(RunSpec(spec.logs, spec.strategy, spec.vs, out=out))
    result = bt.run(paths)
    how = Judging(epoch=None, seed=spec.seed, twins=TWINS, sources=tuple(paths))
    assert judging_of(spec) == how  # what the screen judges with
    verdict: dict[str, Any] = report_doc(result, judging=how, twins=measure_twins(result, how))[
        "verdict"
    ]
    return verdict


def shown(panel: VerdictPanel) -> str:
    """The panel as drawn on the terminal, its lines joined and its spaces collapsed."""
    lines = [panel.render_line(y).text for y in range(panel.size.height)]
    return " ".join(" ".join(lines).split())


async def judged(screen: RunScreen) -> None:
    await finished(screen)
    await asyncio.wait_for(screen.judged.wait(), WAIT_S)


@aio
async def test_a_run_watched_to_its_end_shows_the_answers_the_report_gives(
    tmp_path: Path,
) -> None:
    spec = trader_spec(tmp_path, vs="baselines")
    want = reported(spec, tmp_path / "direct")
    app = make_app(spec=spec, speed=None)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = run_screen(app)
        await judged(screen)
        await pilot.press("6")  # the Score tab
        await pilot.pause()
        panel = screen.query_one(VerdictPanel)
        text, drawn = panel.text, shown(panel)
    assert screen.verdict == want  # the whole verdict, every figure
    assert want["verdict"] != "no_trades" and "ranked" in want
    lines = text.splitlines()
    assert lines[0] == f"the verdict on trader: {want['text']}"
    assert lines[1:] == [f"{label} {want[key]['text']}" for label, key in LABELS]
    for label, key in LABELS:  # and on the terminal, wrapped as it fits
        assert f"{label} {' '.join(want[key]['text'].split())}" in drawn, key


@aio
async def test_while_the_twins_trade_the_tab_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def slow(result: BacktestResult, how: Judging, progress: Status | None = None) -> Any:
        assert release.wait(WAIT_S)
        return measure_twins(result, how, progress)

    monkeypatch.setattr("arena_tui.tui.judge.measure_twins", slow)
    app = make_app(spec=trader_spec(tmp_path, vs="baselines"), speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        panel = screen.query_one(VerdictPanel)
        assert panel.text == WAITING  # before the end
        await pilot.press("space")
        await finished(screen)
        await pilot.pause()
        assert panel.text == "judging: trading 100 random twins..."
        assert screen.verdict is None and not screen.judged.is_set()
        await pilot.press("6")  # the screen stays live meanwhile
        assert screen.query_one("#tabs", TabbedContent).active == "score-tab"
        release.set()
        await judged(screen)
        assert panel.text.startswith("the verdict on trader: ")


@aio
async def test_a_strategy_with_no_fills_reads_no_trades_to_judge(tmp_path: Path) -> None:
    app = make_app(spec=trader_spec(tmp_path, IDLE, vs="baselines"), speed=None)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await judged(screen)
        await pilot.press("6")
        await pilot.pause()
        panel = screen.query_one(VerdictPanel)
        assert panel.text == "no trades to judge"
        assert shown(panel) == "no trades to judge"
    assert screen.verdict is not None and screen.verdict["verdict"] == "no_trades"


@aio
async def test_judging_that_fails_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the twins fell over\nTraceback (most recent call last): ...")

    monkeypatch.setattr("arena_tui.tui.judge.measure_twins", broken)
    app = make_app(spec=trader_spec(tmp_path, vs="baselines"), speed=None)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await judged(screen)
        await pilot.press("6")
        await pilot.pause()
        panel = screen.query_one(VerdictPanel)
        assert panel.text == "no verdict: RuntimeError: the twins fell over"
        assert shown(panel) == panel.text  # one line, no traceback
        assert screen.verdict is None and screen.error == ""  # the run itself was fine


def test_arena_backtest_tui_leaves_the_verdict_to_its_report(tmp_path: Path) -> None:
    """``arena backtest --tui`` judges the run after the screen: the tab says so and the
    screen judges nothing (the twins would trade twice)."""
    spec = trader_spec(tmp_path, vs="baselines")
    bt, paths = prepare(spec)
    seen: dict[str, Any] = {}

    async def drive(app: ArenaApp) -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = run_screen(app)
            seen["before"] = screen.query_one(VerdictPanel).text
            await finished(screen)
            await pilot.pause()
            seen["after"] = screen.query_one(VerdictPanel).text
            seen["workers"] = [w.name for w in app.workers]
            await pilot.press("q")

    result = watch_backtest(
        bt, paths, title="t", speed=None, drive=lambda app: asyncio.run(drive(app))
    )
    assert result is not None
    assert seen["before"] == seen["after"] == ELSEWHERE
    assert "judge" not in seen["workers"]


@aio
async def test_leaving_while_the_twins_trade_stops_their_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge is told to stop when the viewer quits (its ``stopped`` turns true), and a
    pass told so stops at its next progress update."""
    seen: dict[str, Any] = {}
    began, ended = threading.Event(), threading.Event()

    def watching(result: BacktestResult, how: Judging, stopped: Any) -> dict[str, Any]:
        try:
            seen["stopped before"] = stopped()
            began.set()
            deadline = time.monotonic() + WAIT_S
            while not stopped():
                if time.monotonic() > deadline:
                    raise AssertionError("never told to stop")
                time.sleep(0.01)
            seen["stopped after"] = True
            raise judge_module.Stopped
        finally:
            ended.set()

    monkeypatch.setattr("arena_tui.tui.screens.run.judge", watching)
    app = make_app(spec=trader_spec(tmp_path, vs="baselines"), speed=None)
    async with app.run_test(size=(80, 24)):
        screen = run_screen(app)
        await finished(screen)
        assert began.wait(WAIT_S)
        await app.action_quit()  # what q does (a key press races the exit it starts)
    assert ended.wait(WAIT_S)
    assert seen == {"stopped before": False, "stopped after": True}
    assert screen.verdict is None


def test_a_stopped_judge_ends_its_twins_pass(tmp_path: Path) -> None:
    """``judge`` with ``stopped`` true raises Stopped from inside the twins' pass (the
    random control on the 3-coin sample's first 90 minutes: more inputs than one progress
    step, 16,384), at its first progress update."""
    season = sample_season(tmp_path / "long.json", 90)
    spec = RunSpec((SYNTH,), ROOT / "strategies" / "control_random.py", None, season, tmp_path)
    bt, paths = prepare(spec)
    result = bt.run(paths)
    how = judging_of(spec)
    asked: list[bool] = []

    def stopped() -> bool:
        asked.append(True)
        return True

    assert result.entrants[0].stats.fills  # there are trips to re-time
    with pytest.raises(judge_module.Stopped):
        judge_module.judge(result, how, stopped)
    assert asked == [True]  # at the first update: the pass went no further
