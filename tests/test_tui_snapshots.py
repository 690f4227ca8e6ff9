"""SVG snapshots of arena-tui at fixed points of the committed sample (80x24, and 160x48
where a large terminal shows more: a taller chart, every level of the book).

The run is the maker baseline (with the other baselines) on
``recordings/sample-btc-20250126.jsonl``, opened paused and moved with the keys a user
presses; every number on screen comes from the engine, the clock is the simulated one, so
the picture is the same on every machine (the verdict too: its bootstraps and twins are
seeded). Update with ``pytest --snapshot-update`` and look
at the new SVGs before committing them (``tests/__snapshots__/``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from arena_tui.tui.app import ArenaApp, make_app
from arena_tui.tui.catalog import Catalog, Item
from arena_tui.tui.screens.run import RunScreen
from arena_tui.tui.source import watched_run
from arena_tui.tui.widgets.activity import ActivityLog
from tests.tuikit import MAKER, ROOT, SAMPLE, WAIT_S, finished, settled

SnapCompare = Callable[..., bool]
Before = Callable[[Pilot[None]], Awaitable[None]]


def sample_app(tmp_path: Path) -> ArenaApp:
    spec = watched_run((SAMPLE,), MAKER, "baselines", out=tmp_path / "run")
    return make_app(spec=spec, speed=None, paused=True)


def screen_of(pilot: Pilot[None]) -> RunScreen:
    screen = pilot.app.screen
    assert isinstance(screen, RunScreen)
    return screen


async def to_first_fill(pilot: Pilot[None]) -> None:
    screen = screen_of(pilot)
    await settled(screen)
    table = screen.query_one(ActivityLog)
    for _ in range(10):
        if table.counts["fill"]:
            break
        await pilot.press("n")
        await settled(screen)
    assert table.counts["fill"] == 1


def test_run_screen_at_the_first_fill(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(sample_app(tmp_path), run_before=to_first_fill)


async def to_the_end_on_the_leaderboard(pilot: Pilot[None]) -> None:
    screen = screen_of(pilot)
    await settled(screen)
    await pilot.press("space")
    await finished(screen)
    await pilot.press("5")


def test_run_screen_at_the_end_on_the_leaderboard(
    snap_compare: SnapCompare, tmp_path: Path
) -> None:
    assert snap_compare(sample_app(tmp_path), run_before=to_the_end_on_the_leaderboard)


async def to_the_end_on_the_score_tab(pilot: Pilot[None]) -> None:
    """The run's end, judged: the Score tab shows the verdict above the limits' use."""
    screen = screen_of(pilot)
    await settled(screen)
    await pilot.press("space")
    await finished(screen)
    await asyncio.wait_for(screen.judged.wait(), WAIT_S)
    await pilot.press("6")


def test_run_screen_at_the_end_on_the_score_tab(
    snap_compare: SnapCompare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The run written to ``run`` under the test's directory: the report's path, shown
    under the verdict, is the same in every run of the test.)"""
    monkeypatch.chdir(tmp_path)
    spec = watched_run((SAMPLE,), MAKER, "baselines", out=Path("run"))
    app = make_app(spec=spec, speed=None, paused=True)
    assert snap_compare(app, run_before=to_the_end_on_the_score_tab)


async def open_help(pilot: Pilot[None]) -> None:
    await settled(screen_of(pilot))
    await pilot.press("question_mark")


def test_help_screen(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(sample_app(tmp_path), run_before=open_help)


def test_start_screen(snap_compare: SnapCompare) -> None:
    catalog = Catalog(
        recordings=(
            Item(Path("recordings/sample-btc-20250126.jsonl"), "./recordings"),
            Item(Path("recordings/synth-3coins-20261201.jsonl.gz"), "./recordings"),
        ),
        strategies=tuple(
            Item(Path(f"strategies/{n}.py"), "./strategies")
            for n in ("control_random", "maker", "momentum", "reversion")
        ),
        seasons=(Item(Path("seasons/sample-btc-20250126.toml"), "./seasons"),),
    )
    assert snap_compare(make_app(catalog=catalog))


async def to_the_end_on_the_activity(pilot: Pilot[None]) -> None:
    screen = screen_of(pilot)
    await settled(screen)
    await pilot.press("space")
    await finished(screen)
    await pilot.press("3")


def test_run_screen_at_the_end_on_the_activity(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(sample_app(tmp_path), run_before=to_the_end_on_the_activity)


BIG = (160, 48)


async def to_first_fill_on_the_market(pilot: Pilot[None]) -> None:
    await to_first_fill(pilot)
    await pilot.press("4")


def test_run_screen_on_the_market_80x24(snap_compare: SnapCompare, tmp_path: Path) -> None:
    assert snap_compare(sample_app(tmp_path), run_before=to_first_fill_on_the_market)


def test_run_screen_at_the_end_on_the_activity_160x48(
    snap_compare: SnapCompare, tmp_path: Path
) -> None:
    app = sample_app(tmp_path)
    assert snap_compare(app, run_before=to_the_end_on_the_activity, terminal_size=BIG)


def test_run_screen_on_the_market_160x48(snap_compare: SnapCompare, tmp_path: Path) -> None:
    app = sample_app(tmp_path)
    assert snap_compare(app, run_before=to_first_fill_on_the_market, terminal_size=BIG)


async def run_the_capture(pilot: Pilot[None]) -> None:
    await pilot.press("r")  # it spans no whole minute: said, and its season highlighted


def test_start_screen_explains_a_recording_with_no_whole_minute(
    snap_compare: SnapCompare,
) -> None:
    catalog = Catalog(
        recordings=(
            Item(ROOT / "recordings/btc-20250126-capture.jsonl.gz", "./recordings"),
            Item(ROOT / "recordings/sample-btc-20250126.jsonl", "./recordings"),
        ),
        strategies=(Item(MAKER, "./strategies"),),
        seasons=(
            Item(ROOT / "seasons/season0.toml", "./seasons"),
            Item(ROOT / "seasons/sample-btc-20250126.toml", "./seasons"),
        ),
    )
    app = make_app(catalog=catalog, picked=(0,))
    assert snap_compare(app, run_before=run_the_capture)
