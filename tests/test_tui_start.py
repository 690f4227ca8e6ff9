"""arena-tui's start screen as a new user meets it (Textual's pilot).

Its defaults must run: the recording highlighted at first is one that runs as it is (not
the 25-second capture, which spans no whole minute), and ``r`` starts it. A recording that
cannot run by itself is explained before anything starts, naming it, in the screen's
words (no command-line options), with the season file that covers it highlighted so that
``r`` runs it next; any other run that cannot start comes back here with its reason. Both
are hidden with ``esc``. Picked recordings read ``[x]`` and the others ``[ ]``, colour or
not, and the strategy list finds strategies that subclass another strategy.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import OptionList

from arena_tui.run.config import RunConfig
from arena_tui.tui.app import make_app
from arena_tui.tui.catalog import Catalog, Item, defines_strategy, discover
from arena_tui.tui.screens.run import RunScreen
from arena_tui.tui.screens.start import PickList, StartScreen, Tick
from arena_tui.tui.source import BacktestSource
from arena_tui.tui.widgets.verdict import VerdictPanel
from tests import tuikit
from tests.clirun import arena
from tests.tuikit import MAKER, ROOT, SAMPLE, aio, settled

CAPTURE = ROOT / "recordings" / "btc-20250126-capture.jsonl.gz"
SAMPLE_SEASON = ROOT / "seasons" / "sample-btc-20250126.toml"
SEASON0 = ROOT / "seasons" / "season0.toml"
SYNTH_NAME = "synth-3coins-20261201.jsonl.gz"


def sources_in(tmp_path: Path, made: list[BacktestSource]) -> Callable[[RunConfig], BacktestSource]:
    def sources(spec: RunConfig) -> BacktestSource:
        made.append(BacktestSource.of_spec(spec.replace(out=str(tmp_path / f"run{len(made)}"))))
        return made[-1]

    return sources


def start_of(app: object) -> StartScreen:
    screen = getattr(app, "screen", None)
    assert isinstance(screen, StartScreen), screen
    return screen


@aio
async def test_the_shipped_files_start_a_run_with_r_alone(tmp_path: Path) -> None:
    """arena-tui in a fresh clone: r, nothing else, starts a run that goes. The clone's
    own recordings are the shipped samples, listed as such (the docs' sample first); and
    one that cannot run as it is (the capture), were it listed first, is not picked."""
    catalog = discover(cwd=ROOT, data_recordings=tmp_path / "no-data")
    assert [(i.path.name, i.where) for i in catalog.recordings] == [
        (SYNTH_NAME, "sample"),
        (CAPTURE.name, "sample"),
        (SAMPLE.name, "sample"),
    ]
    assert [i.where for i in catalog.seasons] == ["shipped", "shipped"]
    catalog = replace(catalog, recordings=catalog.recordings[1:])  # the capture first...
    made: list[BacktestSource] = []
    app = make_app(catalog=catalog, sources=sources_in(tmp_path, made), speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        start = start_of(app)
        recordings = start.query_one("#recordings", PickList)
        chosen = recordings.selected
        assert len(chosen) == 1 and catalog.recordings[chosen[0]].path != CAPTURE  # ...not run
        assert recordings.highlighted == chosen[0]
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, RunScreen), start.error
        await settled(screen)
        assert screen.outcome is None, screen.outcome  # it runs: nothing failed
        assert screen.snapshot is not None and screen.snapshot.entries
        await pilot.press("q")


@aio
async def test_a_recording_with_no_whole_minute_is_explained_and_its_season_offered(
    tmp_path: Path,
) -> None:
    catalog = Catalog(
        (Item(CAPTURE, "./recordings"), Item(SAMPLE, "./recordings")),
        (Item(MAKER, "./strategies"),),
        (Item(SEASON0, "./seasons"), Item(SAMPLE_SEASON, "./seasons")),
    )
    made: list[BacktestSource] = []
    app = make_app(
        catalog=catalog,
        sources=sources_in(tmp_path, made),
        speed=None,
        paused=True,
        picked=(0,),
        vs=False,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        start = start_of(app)
        await pilot.press("r")
        assert app.screen is start and not made  # nothing started
        error = start.error
        assert CAPTURE.name in error and "no whole minute" in error, error
        assert "sample-btc-20250126.toml" in error and "Season list" in error, error
        assert "--season" not in error and "pass " not in error, error  # no command line here
        assert start.query_one("#seasons", OptionList).highlighted == 2  # the one that covers
        await pilot.press("escape")
        assert start.error == "" and not start.query_one("#error").display
        await pilot.press("r")  # under the highlighted season: it runs
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await settled(screen)
        assert screen.outcome is None
        assert screen.snapshot is not None and screen.snapshot.season == "sample-btc-20250126"
        assert made[0].title.startswith("maker.py on btc-20250126-capture")
        await pilot.press("q")


@aio
async def test_a_run_that_cannot_start_comes_back_with_its_reason_in_the_screens_words(
    tmp_path: Path,
) -> None:
    log = tmp_path / "orphan.jsonl"
    rows = tuikit.write_market(tmp_path / "market.jsonl").read_text().splitlines()
    header = (
        '{"arena_log":1,"season":"nowhere","markets":[{"coin":"BTC","asset":0,"szDecimals":5}]}'
    )
    log.write_text("\n".join([header, *rows[1:]]) + "\n")
    strategy = tuikit.write_strategy(tmp_path / "trader.py")
    catalog = Catalog((Item(log, "given"),), (Item(strategy, "given"),), ())
    made: list[BacktestSource] = []
    app = make_app(catalog=catalog, sources=sources_in(tmp_path, made), speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        start = start_of(app)
        await pilot.press("r")
        await tuikit.until(pilot, lambda: bool(made) and made[0].done.is_set(), "the run")
        await tuikit.until(pilot, lambda: app.screen is start and bool(start.error), "back")
        error = start.error
        assert error.startswith("could not start: ") and "'nowhere'" in error, error
        assert "choose a season file in the Season list" in error and "--season" not in error
        await pilot.press("escape")
        assert start.error == ""


@aio
async def test_picked_and_unpicked_read_without_colour() -> None:
    catalog = Catalog(
        (Item(SAMPLE, "./recordings"), Item(CAPTURE, "./recordings")),
        (Item(MAKER, "./strategies"),),
        (),
    )
    app = make_app(catalog=catalog, picked=(0,))
    async with app.run_test(size=(80, 24)) as pilot:
        start = start_of(app)
        recordings = start.query_one("#recordings", PickList)

        def marks() -> list[str]:
            return [recordings.render_line(y).text[:4] for y in range(2)]

        assert marks() == ["[x] ", "[ ] "]
        await pilot.press("down", "space")  # pick the second too
        assert marks() == ["[x] ", "[x] "]
        await pilot.press("up", "space")  # unpick the first
        assert marks() == ["[ ] ", "[x] "]
        baselines = start.query_one("#vs", Tick)
        assert baselines.render().plain.startswith("[x] against the baselines")
        await pilot.press("b")
        assert baselines.render().plain.startswith("[ ] against the baselines")


def test_the_strategy_list_finds_subclasses_of_subclasses(tmp_path: Path) -> None:
    shipped = [
        (i.path.name, i.where) for i in discover(cwd=ROOT, data_recordings=tmp_path).strategies
    ]
    assert shipped == [  # in arena's own tree too: the baselines, as --vs baselines runs them
        ("momentum.py", "baseline"),
        ("reversion.py", "baseline"),
        ("control_random.py", "baseline"),
        ("maker.py", "baseline"),
        # http_agent.py's logic as a strategy; http_agent.py itself is a script
        ("http_twin.py", "shipped"),
    ]
    here = tmp_path / "work"
    (here / "strategies" / "pkg").mkdir(parents=True)
    files = {
        "base.py": "from arena_tui.strategy import Strategy as S\n\nclass Base(S):\n    pass\n",
        "child.py": "from strategies.base import Base\n\nclass Child(Base):\n    pass\n",
        "grand.py": "import strategies.child as c\n\nclass Grand(c.Child):\n    pass\n",
        "local.py": (
            "from arena_tui import strategy\n\nclass A(strategy.Strategy):\n    pass\n\n"
            "class B(A):\n    pass\n"
        ),
        "helper.py": "from strategies.base import Base\n\nALIAS = Base\n\nclass Plain:\n    pass\n",
        "other.py": "from strategies.nowhere import Thing\n\nclass Mine(Thing):\n    pass\n",
        "broken.py": "class Broken(Strategy):\n    def on_book(self, ctx, book)\n",
    }
    for name, body in files.items():
        (here / "strategies" / name).write_text(body)
    (here / "strategies" / "pkg" / "deep.py").write_text(
        "from ..child import Child\n\nclass Deep(Child):\n    pass\n"
    )
    found = discover(cwd=here, data_recordings=tmp_path)
    names = [i.path.name for i in found.strategies if i.where == "./strategies"]
    assert names == ["base.py", "broken.py", "child.py", "grand.py", "local.py"]
    assert defines_strategy(here / "strategies" / "pkg" / "deep.py")
    assert not defines_strategy(here / "strategies" / "helper.py")


def first_strategy() -> str:
    """docs/strategies.md's first strategy, the file it tells a new user to save."""
    text = (ROOT / "docs" / "strategies.md").read_text(encoding="utf-8")
    found = re.search(r'<!-- docs-test: file "my_strategy.py" -->\n```python\n(.*?)```', text, re.S)
    assert found is not None
    return found.group(1)


@aio
async def test_a_new_user_runs_their_strategy_on_the_shipped_sample_from_their_own_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """arena-tui started in a directory holding only my_strategy.py (docs/strategies.md):
    the strategy is listed first and highlighted, the baselines after it, the shipped
    samples are there to run on; the run writes its directory as arena backtest --out does
    (report.html too) under the data directory's runs/, and arena runs list shows it."""
    home, data = tmp_path / "mine", tmp_path / "data"
    home.mkdir()
    (home / "my_strategy.py").write_text(first_strategy(), encoding="utf-8")
    monkeypatch.chdir(home)
    monkeypatch.setenv("ARENA_DATA_DIR", str(data))
    app = make_app(catalog=discover())  # as arena-tui makes it, with nothing given
    async with app.run_test(size=(80, 24)) as pilot:
        start = start_of(app)
        c = start.catalog
        assert [(i.path.name, i.where) for i in c.strategies[:2]] == [
            ("my_strategy.py", "here"),
            ("momentum.py", "baseline"),
        ]
        assert start.query_one("#strategies", OptionList).highlighted == 0  # the user's own
        names = [i.path.name for i in c.recordings]
        assert names == [SYNTH_NAME, CAPTURE.name, SAMPLE.name]  # the docs' sample first
        assert {i.where for i in c.recordings} == {"sample"}
        recordings = start.query_one("#recordings", PickList)
        assert recordings.selected == [0] and start.error == ""  # the sample, ready to run
        # the two-minute real BTC sample instead (faster here), at max speed, r
        await pilot.press("space", "down", "down", "space", "plus", "plus", "r")
        screen = app.screen
        assert isinstance(screen, RunScreen), start.error
        await tuikit.finished(screen)
        await asyncio.wait_for(screen.judged.wait(), tuikit.WAIT_S)
        assert screen.outcome is not None and screen.outcome.error is None
        reporter = screen.source.reporter
        assert reporter is not None and reporter.done.is_set() and reporter.outcome is not None
        run = reporter.outcome.out
        assert run is not None and run.parent == data / "runs"
        assert run.name.startswith("my_strategy-")
        panel = screen.query_one(VerdictPanel).text
        assert panel.endswith(f"report {run / 'report.html'} (arena runs list shows the run)")
        await pilot.press("q")
    for name in ("run.jsonl", "report.json", "report.html", "fills.csv", "equity.csv"):
        assert (run / name).is_file(), name
    env = {**os.environ, "ARENA_DATA_DIR": str(data)}
    listed = arena("runs", "list", "--json", cwd=home, env=env)
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert [Path(r["path"]) for r in runs] == [run]
    assert runs[0]["strategy"] == "my_strategy.py"


@aio
async def test_with_no_recording_the_start_screen_says_where_they_come_from(
    tmp_path: Path,
) -> None:
    catalog = discover(
        cwd=tmp_path, data_recordings=tmp_path / "data" / "recordings", shipped=tmp_path / "none"
    )
    assert catalog.recordings == ()
    app = make_app(catalog=catalog)
    async with app.run_test(size=(80, 24)) as pilot:
        start = start_of(app)
        said = start.error
        for where in ("arena synth", "arena record", "arena fetch", SYNTH_NAME):
            assert where in said, where
        await pilot.press("escape", "r")  # r says it again, rather than "pick one first"
        assert start.error == said and isinstance(app.screen, StartScreen)
