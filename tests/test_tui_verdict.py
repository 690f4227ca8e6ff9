"""arena-tui's Score tab and report: the verdict of a run watched to its end (Textual's
pilot), and the report files it leaves.

A run started in arena-tui is judged and reported when it ends, as ``arena backtest --out``
reports one: the tab's answers must be the report's own (``report_doc`` of the same run,
judged the same way), word for word, and report.json in the run's directory says the same;
the tab says it is judging while the twins trade, "no trades to judge" alone for a strategy
with no fills, one line when judging fails, where the report is once written, and that the
report has it for a run handed in by ``arena backtest --tui`` (which judges it after the
screen). A viewer who quits while the twins trade does not lose the report: arena-tui
waits for it once the screen is gone, saying so.
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import TabbedContent

from arena_tui.report.render import report_doc
from arena_tui.report.verdict import Judging, measure_twins
from arena_tui.run.config import RunConfig
from arena_tui.run.parts import BacktestResult, Status
from arena_tui.run.twins import TWINS
from arena_tui.tui.app import ArenaApp, make_app, watch_backtest
from arena_tui.tui.cli import said
from arena_tui.tui.screens.run import RunScreen
from arena_tui.tui.source import judging_of, prepare
from arena_tui.tui.widgets.verdict import ELSEWHERE, WAITING, VerdictPanel
from tests.tuikit import WAIT_S, aio, finished, run_screen, trader_spec

IDLE = """
from arena_tui.strategy import Strategy


class Idle(Strategy):
    pass
"""
LABELS = (("ranked?", "ranked"), ("money?", "money"), ("skill?", "skill"), ("floor:", "floor"))
TWINS_AT = "arena_tui.report.render.measure_twins"  # the twins' pass of the report's writer


def reported(spec: RunConfig, out: Path) -> dict[str, Any]:
    """The verdict ``arena backtest`` gives the same run (its report's document), judged
    as arena-tui judges it: the blocks chosen for the run, the seed, the twins."""
    bt, paths = prepare(spec.replace(out=str(out)))
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
    assert lines[1:-1] == [f"{label} {want[key]['text']}" for label, key in LABELS]
    page = Path(spec.out) / "report.html" if spec.out else None
    assert lines[-1] == f"report {page} (arena runs list shows the run)"
    for label, key in LABELS:  # and on the terminal, wrapped as it fits
        assert f"{label} {' '.join(want[key]['text'].split())}" in drawn, key
    assert spec.out is not None  # the run's directory holds the report arena backtest writes
    doc = json.loads((Path(spec.out) / "report.json").read_text(encoding="utf-8"))
    assert doc["verdict"] == want and doc["kind"] == "backtest"
    for name in ("report.html", "fills.csv", "equity.csv", "chart.svg", "rundata.msgpack"):
        assert (Path(spec.out) / name).is_file(), name


@aio
async def test_while_the_twins_trade_the_tab_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def slow(result: BacktestResult, how: Judging, progress: Status | None = None) -> Any:
        assert release.wait(WAIT_S)
        return measure_twins(result, how, progress)

    monkeypatch.setattr(TWINS_AT, slow)
    app = make_app(spec=trader_spec(tmp_path, vs="baselines"), speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        panel = screen.query_one(VerdictPanel)
        assert panel.text == WAITING  # before the end
        await pilot.press("space")
        await finished(screen)
        await pilot.pause()
        # the trader is in the market nearly all the run: no twin trades for it (its
        # answer is known from its trips), so none is promised (tests/test_twins.py has
        # the line for one that has twins)
        assert panel.text == "judging, then writing the report..."
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
        written = f"report {tmp_path / 'run' / 'report.html'} (arena runs list shows the run)"
        assert panel.text == f"no trades to judge\n{written}"
        drawn = shown(panel)  # (a path wider than the tab is folded where it must be)
        assert drawn.replace(" ", "") == f"no trades to judge {written}".replace(" ", "")
    assert screen.verdict is not None and screen.verdict["verdict"] == "no_trades"


@aio
async def test_judging_that_fails_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the twins fell over\nTraceback (most recent call last): ...")

    monkeypatch.setattr(TWINS_AT, broken)
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
async def test_quitting_while_the_twins_trade_keeps_the_report_and_arena_tui_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report is not stopped by the viewer quitting: once the screen is gone, arena-tui
    says it is writing it, waits, then says where it is."""
    release = threading.Event()

    def slow(result: BacktestResult, how: Judging, progress: Status | None = None) -> Any:
        assert release.wait(WAIT_S)
        return measure_twins(result, how, progress)

    class Err(io.StringIO):
        """stderr: the line saying arena-tui waits lets the twins go on."""

        def write(self, text: str) -> int:
            n = super().write(text)
            release.set()
            return n

    monkeypatch.setattr(TWINS_AT, slow)
    spec = trader_spec(tmp_path, vs="baselines")
    app = make_app(spec=spec, speed=None)
    async with app.run_test(size=(80, 24)):
        screen = run_screen(app)
        await finished(screen)
        await app.action_quit()  # what q does (a key press races the exit it starts)
    source = screen.source
    assert source.reporter is not None and not source.reporter.done.is_set()
    err = Err()
    said(source, err)
    assert source.reporter.done.is_set() and spec.out is not None
    assert err.getvalue().splitlines() == [
        f"arena-tui: judging, then writing the report... ({source.title})",
        f"arena-tui: report {Path(spec.out) / 'report.html'} (arena runs list shows the run)",
    ]
    assert (Path(spec.out) / "report.json").is_file()


@aio
async def test_a_run_stopped_before_its_end_keeps_its_run_log_and_writes_no_report(
    tmp_path: Path,
) -> None:
    spec = trader_spec(tmp_path, vs="baselines")
    app = make_app(spec=spec, speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await pilot.press("q")
    assert screen.source.done.wait(WAIT_S)
    err = io.StringIO()
    said(screen.source, err)
    assert screen.source.reporter is None and spec.out is not None
    run_log = Path(spec.out) / "run.jsonl"
    assert err.getvalue() == f"arena-tui: run log {run_log} (arena replay gives its ranking)\n"
    assert run_log.is_file() and not (Path(spec.out) / "report.json").exists()
