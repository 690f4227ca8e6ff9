"""arena-tui driven as a user drives it (Textual's pilot), checked against the engine.

Each run is a real backtest in the worker thread on a canned log; the tests wait for the
worker to report (paused, or ended), never for time to pass, and compare what the widgets
show with what ``arena backtest`` (or a plain ``Backtest.run``) computes for the same input.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Static, TabbedContent

from arena_tui.report.render import usd
from arena_tui.run.build import build_backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.stream import OnEvent
from arena_tui.tui.app import ArenaApp, make_app, watch_backtest
from arena_tui.tui.catalog import Catalog, Item, discover
from arena_tui.tui.fmt import ratio_pct
from arena_tui.tui.messages import Happened, SnapshotPosted
from arena_tui.tui.screens.help import HelpScreen
from arena_tui.tui.screens.start import StartScreen
from arena_tui.tui.snapshot import Happening
from arena_tui.tui.source import BacktestSource, prepare
from arena_tui.tui.widgets.activity import ActivityLog
from arena_tui.tui.widgets.leaders import LeaderTable
from arena_tui.tui.widgets.market import MarketPanel
from arena_tui.tui.widgets.orders import HELD, OrdersTable, PositionsTable
from arena_tui.tui.widgets.score import ScorePanel
from arena_tui.tui.widgets.status import StatusBar
from engine import events as ev
from tests import tuikit
from tests.tuikit import MAKER, ROOT, SAMPLE, aio, finished, run_screen, settled, trader_spec


def direct_events(spec: RunConfig) -> tuple[list[ev.AnyEvent], dict[str, Any]]:
    """The same backtest without the TUI: the trader's events, and its ranking row."""
    events: list[ev.AnyEvent] = []
    ear = OnEvent(lambda e: events.append(e) if getattr(e, "entry", None) == "trader" else None)
    bt, _ = build_backtest(spec.replace(cache=False), subscribers=(ear,))
    paths = list(spec.logs)
    result = bt.run(paths)
    return events, result.replay.ranking[0]


def arena_backtest(tmp_path: Path, *args: str) -> dict[str, dict[str, Any]]:
    """``arena backtest ... --json`` as a user runs it; its entries by name."""
    cmd = [sys.executable, "-m", "arena_tui.cli", "backtest", *args, "--json"]
    cmd += ["--out", str(tmp_path / "cli")]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return {e["entry"]: e for e in json.loads(done.stdout)["entries"]}


@aio
async def test_pick_sample_and_baseline_run_to_the_end_numbers_equal_arena_backtest(
    tmp_path: Path,
) -> None:
    catalog = Catalog(
        recordings=(Item(SAMPLE, "./recordings"),),
        strategies=(
            Item(ROOT / "strategies" / "control_random.py", "./strategies"),
            Item(MAKER, "./strategies"),
        ),
        seasons=(),
    )
    sources = lambda spec: BacktestSource.of_spec(  # noqa: E731
        spec.replace(out=str(tmp_path / "tui"))
    )
    app = make_app(catalog=catalog, sources=sources, speed=None, picked=())
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(app.screen, StartScreen)
        await pilot.press("space")  # pick the sample (the recordings list has the focus)
        await pilot.press("tab", "down")  # the strategy list: control_random, then maker
        await pilot.press("r")
        screen = run_screen(app)
        await finished(screen)
        await pilot.pause()
        status = screen.query_one(StatusBar).text
        score = screen.query_one(ScorePanel).text
        leaders = screen.query_one(LeaderTable)
        rows = [leaders.cells(str(i)) for i in range(leaders.row_count)]
    want = arena_backtest(tmp_path, str(MAKER), str(SAMPLE), "--vs", "baselines")
    maker = want["maker"]
    assert "season over: final" in status and "done" in status
    assert f"equity  ${usd(maker['equity'])}  exit ${usd(maker['exit_equity'])}" in score
    ret, mdd, s = (ratio_pct(maker[k]) for k in ("return", "mdd", "score"))
    assert f"S {s}  R {ret}  MDD {mdd}" in score  # every digit: S = R - MDD adds up
    assert f"rank {maker['rank']}" in score
    assert [r[1] for r in rows] == list(want)  # the report's ranking order
    for rank, entry, s, r, mdd, equity, days, eligible in rows:
        e = want[entry]
        assert rank == str(e["rank"] or "-")
        assert (s, r, mdd) == (ratio_pct(e["score"]), ratio_pct(e["return"]), ratio_pct(e["mdd"]))
        assert equity == usd(e["equity"]) and days == str(e["fill_days"])
        assert eligible == ("yes" if e["eligible"] else "no")


@aio
async def test_pause_seek_speed_and_every_event_shown(tmp_path: Path) -> None:
    spec = trader_spec(tmp_path)
    events, ranking = direct_events(spec.replace(vs=None, out=str(tmp_path / "direct")))
    shown_kinds = (ev.Fill, ev.Rejected, ev.CancelPending, ev.Closed, ev.Paused, ev.PerformanceFee)
    expected = [e for e in events if isinstance(e, shown_kinds)]
    first_hit = next(e for e in events if isinstance(e, ev.Fill | ev.Rejected))
    first_fill = next(e for e in events if isinstance(e, ev.Fill))
    app = make_app(spec=spec, speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await settled(screen)
        assert "‖ paused" in screen.query_one(StatusBar).text
        assert screen.snapshot is not None and screen.snapshot.inputs == 0

        await pilot.press("n")  # to the first rejection (the $1 order)
        await settled(screen)
        activity = screen.query_one(ActivityLog)
        assert activity.history[0][2:] == ("rejected", "BTC", "order: OrderTooSmall")
        assert screen.query_one(StatusBar).text.startswith("‖ paused")
        assert activity.received == 1 and first_hit.t <= (screen.snapshot.t or 0)

        await pilot.press("n")  # to the first fill: the order through the ask
        await settled(screen)
        snap = screen.snapshot
        assert snap is not None and snap.t is not None and snap.t >= first_fill.t
        fill_rows = list(activity.history)
        assert fill_rows[-1][2] == "fill"
        assert fill_rows[-1][4].startswith("buy 0.01 @ 100,036 taker, fees $0.65")
        orders = screen.query_one(OrdersTable)
        held = orders.cells(str(first_fill.oid))
        assert held[-1] == HELD and held[3] == held[4] == "0.01"  # filled, still open
        positions = screen.query_one(PositionsTable)
        assert positions.cells("BTC")[:2] == ["BTC", "0.01"]

        await pilot.press("minus")  # max -> 600x, shown at once
        assert screen.query_one(StatusBar).playback.speed == 600
        await pilot.press("plus", "space")  # back to max, and play to the end
        state = screen.playback.state()
        assert state.speed is None and not state.paused
        await finished(screen)
        await pilot.pause()
        got = list(activity.history)
        score = screen.query_one(ScorePanel).text
    assert len(got) == len(expected)  # nothing dropped, in the engine's order
    kinds = {
        ev.Fill: "fill",
        ev.Rejected: "rejected",
        ev.CancelPending: "cancel",
        ev.Closed: "closed",
        ev.PerformanceFee: "perf fee",
        ev.Paused: "PAUSED",
    }
    assert [row[2] for row in got] == [kinds[type(e)] for e in expected]
    assert f"S {ratio_pct(ranking['score'])}" in score


@aio
async def test_market_tab_next_coin_and_next_entry(tmp_path: Path) -> None:
    spec = trader_spec(tmp_path)
    spec = spec.replace(vs="baselines")
    app = make_app(spec=spec, speed=None)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = run_screen(app)
        await finished(screen)
        await pilot.press("4")
        market = screen.query_one(MarketPanel)
        assert screen.query_one("#tabs", TabbedContent).active == "market"
        assert market.coin is not None and market.coin.coin == "BTC"
        bt, paths = prepare(spec.replace(vs=None, out=str(tmp_path / "direct")))
        bt.run(paths)
        btc = bt.markets["BTC"]
        assert btc.book is not None
        assert (market.coin.mark, market.coin.oracle) == (btc.mark_e8, btc.oracle_e8)
        assert market.coin.bids[0] == tuple(btc.book.bids[0][:2])
        text = market.render().plain
        assert "BTC  mark 100,380  oracle 100,380  funding 0.00125%/h" in text
        book_line = text.splitlines()[3].split()
        assert book_line[:4] == ["2", "100,384", "100,386", "2"]
        await pilot.press("c")
        assert market.coin.coin == "SOL"
        assert "SOL  mark 150.05  oracle 150  funding 0.001%/h" in market.render().plain
        names = []
        for _ in range(5):
            score = screen.query_one(ScorePanel).score
            assert score is not None
            names.append(score.entry)
            await pilot.press("e")
    assert names == ["trader", "momentum", "reversion", "control_random", "maker"]


@aio
async def test_help_lists_the_keys_and_closes(tmp_path: Path) -> None:
    app = make_app(spec=trader_spec(tmp_path), speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await settled(screen)
        await pilot.press("question_mark")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        console = Console(width=80, record=True)
        console.print(help_screen.query_one("#help-keys", Static).content)
        text = console.export_text()
        for key, what in [
            ("space", "Pause or play"),
            ("n", "next fill or rejection"),
            ("+", "1x, 10x, 60x, 600x, max"),
            ("4", "Tab: Market"),
            ("q", "Quit"),
        ]:
            assert any(
                line.lstrip().startswith(key) and what in line for line in text.splitlines()
            ), (key, text)
        await pilot.press("escape")
        assert app.screen is screen


@aio
async def test_quit_while_paused_ends_the_worker_and_keeps_the_run_log(tmp_path: Path) -> None:
    spec = trader_spec(tmp_path)
    app = make_app(spec=spec, speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await settled(screen)
        await pilot.press("q")
        await app.workers.wait_for_complete()
    assert app.source is not None and app.source.outcome is not None
    assert app.source.outcome.stopped
    header = json.loads((tmp_path / "run" / "run.jsonl").read_text().splitlines()[0])
    assert header["generator"] == "arena backtest"


@aio
async def test_a_failing_strategy_is_one_line_on_screen_not_a_traceback(tmp_path: Path) -> None:
    app = make_app(spec=trader_spec(tmp_path, tuikit.FAILING), speed=None)
    async with app.run_test(size=(80, 24)):
        screen = run_screen(app)
        await finished(screen)
        status = screen.query_one(StatusBar).text
    assert screen.outcome is not None and screen.outcome.error is not None
    assert "trader.py:" in screen.outcome.error and "RuntimeError" in screen.outcome.error
    assert "error:" in status and "Traceback" not in status


@aio
async def test_snapshots_coalesce_but_events_never_do(tmp_path: Path) -> None:
    app = make_app(spec=trader_spec(tmp_path), speed=None, paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = run_screen(app)
        await settled(screen)
        base = screen.snapshot
        assert base is not None
        applied, received = screen.applied, screen.query_one(ActivityLog).received
        fill = ev.Fill(
            t=base.start,
            entry="trader",
            oid=99,
            cloid=0,
            asset=0,
            is_buy=True,
            px=100 * tuikit.E8,
            sz=1,
            taker=False,
            venue_fee=0,
            exec_fee=0,
        )
        posted = 0
        for i in range(1, 31):  # what a fast worker posts while the UI is busy
            screen.post_message(SnapshotPosted(replace(base, seq=base.seq + i)))
            posted += 1
            if i % 10 == 0:
                screen.post_message(Happened((Happening(fill, "BTC"),) * 2))
        await pilot.pause()
        assert screen.snapshot is not None and screen.snapshot.seq == base.seq + 30
        assert screen.applied - applied < posted  # the superseded ones were skipped
        assert screen.query_one(ActivityLog).received - received == 6  # every event


def test_arena_backtest_has_tui_and_does_not_import_textual_without_it() -> None:
    code = (
        "import sys; import arena_tui.cli, arena_tui.commands.backtest; "
        "assert 'textual' not in sys.modules, 'textual imported'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
    done = subprocess.run(
        [sys.executable, "-m", "arena_tui.cli", "backtest", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--tui" in done.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["nope.jsonl", "--strategy", "strategies/maker.py"], "nope.jsonl"),
        ([str(SAMPLE), "--strategy", "nope.py"], "nope.py: no such strategy file"),
    ],
)
def test_arena_tui_bad_files_are_one_line_before_the_screen_opens(
    args: list[str], needle: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from arena_tui.tui.cli import main; main()", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: ") and needle in lines[0]


def test_arena_tui_refuses_an_unknown_speed() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from arena_tui.tui.cli import main; main()", "--speed", "7"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "one of 1, 10, 60, 600 or max" in done.stderr


def test_arena_backtest_tui_returns_the_same_result_as_without(tmp_path: Path) -> None:
    spec = trader_spec(tmp_path)
    plain_bt, paths = prepare(spec.replace(vs="baselines", out=str(tmp_path / "a")))
    plain = plain_bt.run(paths)

    async def watch_to_the_end(app: ArenaApp) -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            screen = run_screen(app)
            await settled(screen)  # paused before the first input
            for _ in range(2):  # a seek or two on the way does not change the run
                await pilot.press("n")
                await settled(screen)  # paused at the next fill, or the run has ended
            if screen.outcome is None:
                await pilot.press("space")
            await finished(screen)
            await pilot.press("q")

    bt, paths = prepare(spec.replace(vs="baselines", out=str(tmp_path / "b")))
    result = watch_backtest(
        bt,
        paths,
        title="trader",
        speed=None,
        paused=True,
        drive=lambda app: asyncio.run(watch_to_the_end(app)),
    )
    assert result is not None
    assert result.replay.to_json() == plain.replay.to_json()  # same run log, same ranking
    stopped_bt, paths = prepare(spec.replace(vs=None, out=str(tmp_path / "c")))

    async def quit_at_once(app: ArenaApp) -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settled(run_screen(app))
            await pilot.press("q")

    nothing = watch_backtest(
        stopped_bt,
        paths,
        title="trader",
        speed=None,
        paused=True,
        drive=lambda app: asyncio.run(quit_at_once(app)),
    )
    assert nothing is None  # stopped before the season started: no report to write


def test_arena_backtest_tui_reaches_the_screen_through_cli_and_writes_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arena backtest --tui`` as typed: cli.py hands the command arena-tui's watcher
    (commands/ never imports tui/), the run plays on the screen, the report follows."""
    from typer.testing import CliRunner

    from arena_tui import cli
    from arena_tui.tui import app as tui_app

    spec = trader_spec(tmp_path)
    real = tui_app.watch_backtest
    watched: list[str] = []

    async def watch_to_the_end(app: ArenaApp) -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await finished(run_screen(app))
            await pilot.press("q")

    def headless(bt: Any, logs: Any, *, title: str) -> Any:
        watched.append(title)
        return real(
            bt, logs, title=title, speed=None, drive=lambda a: asyncio.run(watch_to_the_end(a))
        )

    monkeypatch.setattr(tui_app, "watch_backtest", headless)
    out = tmp_path / "watched"
    args = ["backtest", str(spec.strategy), *map(str, spec.logs), "--out", str(out), "--tui"]
    done = CliRunner().invoke(cli.app, args)
    assert done.exit_code == 0, done.output
    assert watched == ["trader.py"]
    plain_bt, paths = prepare(spec.replace(vs=None, out=str(tmp_path / "plain")))
    plain = plain_bt.run(paths)
    ranking = json.loads((out / "ranking.json").read_text())
    assert ranking == plain.replay.to_json()
    assert (out / "report.json").exists()


def test_a_command_app_without_screens_says_so_in_one_line(tmp_path: Path) -> None:
    """A typer app that registers the command but hands it no screens (a plugin, a test)."""
    import typer
    from typer.testing import CliRunner

    from arena_tui.commands.backtest import backtest_command
    from arena_tui.util.errors import ArenaError

    bare = typer.Typer()
    bare.command("backtest")(backtest_command)
    bare.command("other")(lambda: None)
    spec = trader_spec(tmp_path)
    args = ["backtest", str(spec.strategy), *map(str, spec.logs), "--out", str(tmp_path / "o")]
    done = CliRunner().invoke(bare, [*args, "--tui"])
    assert isinstance(done.exception, ArenaError)
    assert "--tui needs arena-tui" in str(done.exception)
    assert not (tmp_path / "o").exists()  # refused before anything ran


@aio
async def test_start_screen_says_what_is_missing_and_esc_comes_back_to_it(tmp_path: Path) -> None:
    log = tuikit.write_market(tmp_path / "market.jsonl")
    strategy = tuikit.write_strategy(tmp_path / "trader.py")
    empty = make_app(catalog=Catalog((Item(log, "given"),), (), ()))
    async with empty.run_test(size=(80, 24)) as pilot:
        await pilot.press("r")
        assert isinstance(empty.screen, StartScreen)
        error = empty.screen.query_one("#error", Static).render()
        assert "no strategy to run" in str(error)

    made: list[BacktestSource] = []

    def sources(spec: RunConfig) -> BacktestSource:
        made.append(BacktestSource.of_spec(spec.replace(out=str(tmp_path / f"run{len(made)}"))))
        return made[-1]

    catalog = Catalog((Item(log, "given"),), (Item(strategy, "given"),), ())
    app = make_app(catalog=catalog, sources=sources, speed=None, paused=True, vs=False)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(2):
            await pilot.press("r")  # the highlighted recording counts as picked
            screen = run_screen(app)
            await settled(screen)
            assert screen.snapshot is not None
            assert [e.score.entry for e in screen.snapshot.entries] == ["trader"]
            await pilot.press("escape")  # stops the run, back to the choices
            assert isinstance(app.screen, StartScreen)
        await app.workers.wait_for_complete()
    assert len(made) == 2
    assert all(m.outcome is not None and m.outcome.stopped for m in made)


def test_discover_lists_what_is_given_then_the_builders_own_then_what_arena_ships(
    tmp_path: Path,
) -> None:
    here = tmp_path / "work"
    for d in ("recordings", "strategies", "seasons"):
        (here / d).mkdir(parents=True)
    data = tmp_path / "data" / "recordings"
    (tmp_path / "data" / "history").mkdir(parents=True)
    data.mkdir()
    (data / "day.jsonl.gz").write_bytes(b"")
    (tmp_path / "data" / "history" / "hl-2026-12-01.jsonl.lz4").write_bytes(b"")
    (here / "recordings" / "a.jsonl").write_text("")
    (here / "recordings" / "notes.txt").write_text("")
    tuikit.write_market(here / "mine.jsonl")  # a recording saved here
    (here / "fills.jsonl").write_text('{"t":1,"entry":"x"}\n')  # a run's file: not one
    (here / "my_strategy.py").write_text("class Mine(Strategy):\n    pass\n")
    (here / "setup.py").write_text("print('not a strategy')\n")
    (here / "strategies" / "mine.py").write_text("class Mine(Strategy):\n    pass\n")
    (here / "strategies" / "helpers.py").write_text("def f() -> None: ...\n")
    (here / "seasons" / "s.toml").write_text("")
    given = tuikit.write_strategy(tmp_path / "given.py")
    found = discover(
        logs=[here / "recordings" / "a.jsonl"],
        strategies=[given],
        cwd=here,
        data_recordings=data,
        shipped=ROOT,
    )
    assert [(i.path.name, i.where) for i in found.recordings] == [
        ("a.jsonl", "given"),
        ("day.jsonl.gz", "data dir"),
        ("hl-2026-12-01.jsonl.lz4", "fetched"),
        ("mine.jsonl", "here"),
        ("synth-3coins-20261201.jsonl.gz", "sample"),  # the docs' sample first
        ("btc-20250126-capture.jsonl.gz", "sample"),
        ("sample-btc-20250126.jsonl", "sample"),
    ]  # a.jsonl once, as given; notes.txt and fills.jsonl are not recordings
    assert [(i.path.name, i.where) for i in found.strategies] == [
        ("given.py", "given"),
        ("my_strategy.py", "here"),
        ("mine.py", "./strategies"),
        ("momentum.py", "baseline"),
        ("reversion.py", "baseline"),
        ("control_random.py", "baseline"),
        ("maker.py", "baseline"),
        ("http_twin.py", "shipped"),
    ]  # no helpers.py, setup.py, common.py or __init__.py
    assert [(i.path.name, i.where) for i in found.seasons] == [
        ("s.toml", "./seasons"),
        ("sample-btc-20250126.toml", "shipped"),
        ("season0.toml", "shipped"),
    ]
