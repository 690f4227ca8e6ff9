"""arena-tui's run screen, every key as its help describes it (Textual's pilot).

``esc`` goes back to the start screen from a run started on the command line too (and is
not offered where there is none); ``n`` stops at the watched entry's next fill or
rejection, not another entry's; ``+``/``-`` while paused show the speed the run will play
at; a failed run says why in a box ``esc`` hides; the header fits 80 columns by whole
phrases; a 160x48 terminal gets a taller chart and a deeper book.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.pilot import Pilot

from arena_tui.run.config import RunConfig
from arena_tui.tui.app import ArenaApp, make_app, watch_backtest
from arena_tui.tui.catalog import Catalog, Item
from arena_tui.tui.screens.help import key_table
from arena_tui.tui.screens.run import RunScreen
from arena_tui.tui.screens.start import StartScreen
from arena_tui.tui.source import BacktestSource, prepare, watched_run
from arena_tui.tui.widgets.activity import ActivityLog
from arena_tui.tui.widgets.chart import EquityChart
from arena_tui.tui.widgets.market import MarketPanel
from arena_tui.tui.widgets.score import ScorePanel
from arena_tui.tui.widgets.status import GAP, Part, StatusBar, fit
from tests import build, market, tuikit
from tests.tuikit import MAKER, SAMPLE, aio, finished, run_screen, settled, trader_spec

LATE = """
from arena_tui.strategy import GTC, Context, Strategy


class Late(Strategy):
    \"\"\"Sends one $1 order (rejected: too small) on its fifth BTC book, nothing else.\"\"\"

    def __init__(self) -> None:
        self.books = 0

    def on_book(self, ctx: Context, book) -> None:
        if book.coin == "BTC":
            self.books += 1
            if self.books == 5:
                ctx.order(ctx.asset_of("BTC"), True, book.best_bid_e8, 1_000, False, GTC)
"""


def drawn(status: StatusBar) -> str:
    """The header's line as drawn on the terminal, padding aside (not as it would like)."""
    return status.render_line(0).text


def test_esc_in_a_run_started_on_the_command_line_goes_to_the_start_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arena-tui LOG --strategy X`` as typed: esc stops the run and shows the start screen
    with LOG picked and X highlighted (the help says esc goes there)."""
    from typer.testing import CliRunner

    from arena_tui.tui import cli as tui_cli

    spec = trader_spec(tmp_path)
    seen: dict[str, Any] = {}

    async def drive(app: ArenaApp) -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = run_screen(app)
            await settled(screen)
            listed = [str(c) for c in key_table(screen).columns[0].cells]
            seen["esc offered"] = "esc" in listed
            await pilot.press("escape")
            start = app.screen
            seen["start"] = isinstance(start, StartScreen)
            if isinstance(start, StartScreen):
                recordings = start.catalog.recordings
                seen["picked"] = [recordings[i].path for i in start.picked]
                strategies = start.catalog.strategies
                seen["strategy"] = strategies[0].path
            await app.workers.wait_for_complete()
            seen["stopped"] = screen.outcome is not None and screen.outcome.stopped
            await pilot.press("q")

    monkeypatch.setattr(ArenaApp, "run", lambda app, *a, **k: asyncio.run(drive(app)))
    args = [str(spec.logs[0]), "--strategy", str(spec.strategy), "--out", str(tmp_path / "o")]
    done = CliRunner().invoke(tui_cli.cli, [*args, "--paused", "--speed", "max"])
    assert seen["esc offered"] and seen["start"], seen
    assert seen["picked"] == [Path(spec.logs[0])] and seen["strategy"] == spec.strategy_path()
    assert seen["stopped"]
    assert done.exit_code == 0, done.output  # stopped before the season: not an error


def test_arena_backtest_tui_offers_no_esc_it_cannot_honour(tmp_path: Path) -> None:
    spec = trader_spec(tmp_path)
    bt, paths = prepare(spec)
    seen: dict[str, Any] = {}

    async def drive(app: ArenaApp) -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = run_screen(app)
            await settled(screen)
            seen["listed"] = [str(c) for c in key_table(screen).columns[0].cells]
            await pilot.press("escape")
            seen["still"] = app.screen is screen
            await pilot.press("q")

    watch_backtest(bt, paths, title="t", paused=True, drive=lambda app: asyncio.run(drive(app)))
    assert "escape" not in seen["listed"] and "esc" not in seen["listed"]
    assert seen["still"]


@aio
async def test_n_stops_at_the_watched_entrys_event_not_another_entrys(tmp_path: Path) -> None:
    late = tuikit.write_strategy(tmp_path / "late.py", LATE)
    app = make_app(spec=trader_spec(tmp_path, vs=str(late)), speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await settled(screen)
        await pilot.press("e")  # watch late (the trader fills and is rejected long before)
        score = screen.query_one(ScorePanel).score
        assert score is not None and score.entry == "late"
        await pilot.press("n")
        await settled(screen)
        assert screen.outcome is None  # paused on the way, not run to the end
        rows = screen.query_one(ActivityLog).history
        assert any(r[1] == "trader" for r in rows)  # the other entry's events went by
        mine = [r for r in rows if r[1] == "late"]
        assert [r[2:] for r in mine] == [("rejected", "BTC", "order: OrderTooSmall")]
        assert rows[-1][1] == "late" or rows[-1][0] == mine[-1][0]  # stopped right there
        assert screen.query_one(StatusBar).text.startswith("‖ paused")


@aio
async def test_speed_keys_while_paused_show_the_speed_it_will_play_at(tmp_path: Path) -> None:
    app = make_app(spec=trader_spec(tmp_path), speed=60, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await settled(screen)
        status = screen.query_one(StatusBar)
        assert drawn(status).startswith("‖ paused (plays at 60x)")
        await pilot.press("plus")
        assert drawn(status).startswith("‖ paused (plays at 600x)")
        await pilot.press("minus", "minus")
        assert drawn(status).startswith("‖ paused (plays at 10x)")
        assert screen.playback.state().paused


@aio
async def test_the_header_fits_80_columns_by_whole_phrases(tmp_path: Path) -> None:
    spec = trader_spec(tmp_path)
    start = -(-(build.T0 - 30_000) // 60_000) * 60_000
    season = tmp_path / "long.json"
    doc = {"id": "long", "start": start, "end": start + 20 * 60_000, "markets": market.MARKETS}
    season.write_text(json.dumps(doc))
    app = make_app(spec=spec.replace(vs=None, season=str(season)), speed=None)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await finished(screen)
        await pilot.pause()
        line = drawn(screen.query_one(StatusBar))
    assert len(line) <= 78 and line.startswith("■ ended  ")  # 80 less the padding
    assert line.rstrip().endswith("the logs end before the season does"), line
    assert "season 3" in line  # where it ended: still said


def words() -> st.SearchStrategy[str]:
    word = st.text(alphabet="abcxyz:%0", min_size=1, max_size=8)
    return st.lists(word, min_size=1, max_size=5).map(" ".join)


@given(
    st.lists(st.tuples(words(), words() | st.just("")), min_size=1, max_size=7),
    st.integers(min_value=1, max_value=120),
)
def test_fit_never_cuts_a_phrase_and_never_overflows(
    phrases: list[tuple[str, str]], width: int
) -> None:
    keys = ["mode", "clock", "season", "inputs", "ended", "reason", "retry"]
    parts = [Part(keys[i % len(keys)], long, short) for i, (long, short) in enumerate(phrases)]
    forms = {p.long for p in parts} | {p.short for p in parts if p.short}
    text = fit(parts, width).plain
    assert len(text) <= width
    if not text.endswith("…"):  # only the essentials too wide for the terminal end like this
        assert all(shown in forms for shown in text.split(GAP) if shown)


@aio
async def test_a_failed_run_says_why_in_a_box_esc_hides_then_esc_goes_back(
    tmp_path: Path,
) -> None:
    spec = trader_spec(tmp_path, tuikit.FAILING)
    catalog = Catalog(
        (Item(Path(spec.logs[0]), "given"),), (Item(spec.strategy_path(), "given"),), ()
    )

    def sources(chosen: RunConfig) -> BacktestSource:
        return BacktestSource.of_spec(chosen.replace(vs=None, season=None, out=spec.out))

    app = make_app(catalog=catalog, sources=sources, speed=None, vs=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("r")
        screen = run_screen(app)
        await finished(screen)
        await pilot.pause()
        error = screen.error
        assert "trader.py:" in error and "RuntimeError: no idea what to do" in error
        assert screen.query_one("#run-error").display
        assert "error: see below" in drawn(screen.query_one(StatusBar))
        await pilot.press("escape")
        assert screen.error == "" and app.screen is screen
        await pilot.press("escape")
        assert isinstance(app.screen, StartScreen)


async def to_the_first_fill(pilot: Pilot[None]) -> RunScreen:
    screen = pilot.app.screen
    assert isinstance(screen, RunScreen)
    await settled(screen)
    await pilot.press("n")
    await settled(screen)
    return screen


@aio
async def test_a_160x48_terminal_gets_a_taller_chart_and_a_deeper_book(tmp_path: Path) -> None:
    spec = watched_run((SAMPLE,), MAKER, "baselines", out=tmp_path / "run")
    app = make_app(spec=spec, speed=None, paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await to_the_first_fill(pilot)
        await pilot.press("4")
        await pilot.pause()
        chart = screen.query_one(EquityChart)
        assert chart.size.height >= 14 and screen.query_one(ScorePanel).size.height >= 14
        lines = screen.query_one(MarketPanel).render().plain.splitlines()
        levels = [line for line in lines[3:] if line[:22].strip()]
        assert len(levels) == 20  # every level the sample's books have
        assert len(lines) <= screen.query_one(MarketPanel).size.height
    app = make_app(spec=replace_out(spec, tmp_path / "small"), speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await to_the_first_fill(pilot)
        await pilot.press("4")
        await pilot.pause()
        panel = screen.query_one(MarketPanel)
        assert len(panel.render().plain.splitlines()) == panel.size.height  # what fits, no more


def replace_out(spec: RunConfig, out: Path) -> RunConfig:
    return spec.replace(out=str(out))
