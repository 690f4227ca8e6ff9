"""arena-tui watching a live paper run on the fake Hyperliquid (Textual's pilot).

The start screen's Live paper mode is chosen with the keys, coins typed in; the run screen
must show the live clock and the score moving, hide the speed keys, pause only the view
while the run goes on, and quit leaving a run log that replays to the run's ranking. Its
header must show the feed's real link: a feed that is down (nothing listening yet, or an
outage) is never "● live", it says so and when the next try comes, and "● live" returns
once the feed is up. The tests wait for what the screen shows (polled, bounded), never for
a fixed time.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import time
from pathlib import Path

from textual.widgets import Input, Static

from arena_tui.record.feed import Backoff
from arena_tui.run.config import RunConfig
from arena_tui.run.paper import paper_config, prepare_paper
from arena_tui.run.replay import replay
from arena_tui.season.file import resolve_season
from arena_tui.tui.app import ArenaApp, make_app, watch_paper
from arena_tui.tui.capture import Capture
from arena_tui.tui.catalog import Catalog, Item
from arena_tui.tui.fmt import stamp
from arena_tui.tui.playback import State
from arena_tui.tui.screens.help import key_table
from arena_tui.tui.screens.start import StartScreen
from arena_tui.tui.source import BacktestSource
from arena_tui.tui.widgets.activity import ActivityLog
from arena_tui.tui.widgets.score import ScorePanel
from arena_tui.tui.widgets.status import StatusBar
from arena_tui.util.jsonout import dumps
from tests.fakehl import FakeHL
from tests.paperkit import arena_type, lines, running_season, write_taker
from tests.tuikit import aio, run_screen, settled, until

WAIT_S = 20.0  # a bound, never reached when things work


def ticks_in(run_log: Path) -> int:
    return sum(arena_type(r) == "tick" for r in lines(run_log))


@aio
async def test_live_paper_from_the_start_screen_shows_the_clock_and_score_moving(
    tmp_path: Path,
) -> None:
    season = running_season(tmp_path / "live-test.json")
    strategy = write_taker(tmp_path / "taker.py")
    catalog = Catalog((), (Item(strategy, "given"),), (Item(season, "given"),))
    run_log = tmp_path / "run" / "run.jsonl"
    made: list[BacktestSource] = []
    with FakeHL(pace_s=0.02) as srv:

        def live_sources(spec: RunConfig) -> BacktestSource:
            made.append(
                BacktestSource.of_paper(
                    spec.replace(
                        out=str(run_log.parent),
                        live=spec.live_part().replace(ws_url=srv.ws_url, info_url=srv.info_url),
                    )
                )
            )
            return made[-1]

        app = make_app(catalog=catalog, live_sources=live_sources, vs=False)
        async with app.run_test(size=(80, 24)) as pilot:
            start = app.screen
            assert isinstance(start, StartScreen)
            await pilot.press("tab", "tab", "down")  # strategy (the only one), the season
            await pilot.press("tab", "down")  # the modes: Live paper
            assert start.live
            assert start.query_one("#coins", Input).display
            assert not start.query_one("#speed", Static).display
            await pilot.press("tab", "tab", *"BTC", "enter")  # past the baselines box
            assert made and made[0].live
            screen = run_screen(app)
            status = screen.query_one(StatusBar)

            def shown_t() -> int:
                snap = screen.snapshot
                return -1 if snap is None or snap.t is None else snap.t

            await until(pilot, lambda: shown_t() > 0, "a first snapshot")
            first_t = shown_t()
            activity = screen.query_one(ActivityLog)
            await until(
                pilot,
                lambda: activity.counts["fill"] >= 1 and shown_t() >= first_t + 1000,
                "a fill and a second of live clock",
            )
            assert status.text.startswith("● live") and f"{stamp(shown_t())} UTC" in status.text
            score = screen.query_one(ScorePanel).score
            assert score is not None and score.entry == "taker" and score.marks >= 1
            assert score.equity_now != 10_000_000_000  # the fill's fees moved it

            await pilot.press("plus", "n")  # no speed and no seeking on a live run
            assert screen.playback.state() == State(1, paused=False, seeking=False)
            await pilot.press("question_mark")  # and the help does not offer them
            keys = key_table(screen)
            listed = [str(cell) for cell in keys.columns[0].cells]
            assert "space" in listed and "q" in listed
            assert not {"+", "-", "n"} & set(listed), listed
            await pilot.press("escape")

            await pilot.press("space")  # pause the view: the run goes on
            await settled(screen)
            assert status.text.startswith("‖ view paused")
            applied, paused_at = screen.applied, ticks_in(run_log)
            await until(pilot, lambda: ticks_in(run_log) >= paused_at + 2, "the run to go on")
            assert screen.applied == applied  # the view stayed where it was
            await pilot.press("space")
            await until(pilot, lambda: screen.applied > applied, "the view to follow again")

            await pilot.press("q")
        source = made[0]
        assert source.done.wait(WAIT_S)
    assert source.outcome is not None and source.outcome.stopped
    assert source.result is not None
    again = replay([str(run_log)], resolve_season([str(run_log)], None))
    assert dumps(again.to_json()) == dumps(source.result.replay.to_json())


def test_arena_paper_tui_quits_on_sigterm_and_returns_the_run(tmp_path: Path) -> None:
    season = running_season(tmp_path / "live-test.json")
    spec = paper_config(
        write_taker(tmp_path / "taker.py"), season=season, out=tmp_path / "run", ws_url=""
    )
    with FakeHL(pace_s=0.02) as srv:
        bt, feed = prepare_paper(
            spec.replace(live=spec.live_part().replace(ws_url=srv.ws_url)),
            backoff=Backoff(1, 20),
            subscribers=(Capture(),),
            echo=False,
        )

        async def drive(app: ArenaApp) -> None:
            async with app.run_test(size=(80, 24)) as pilot:
                screen = run_screen(app)
                await until(pilot, lambda: screen.applied >= 3, "the run screen to follow")
                os.kill(os.getpid(), signal.SIGTERM)  # what a supervisor sends
                deadline = time.monotonic() + WAIT_S
                while app.is_running:
                    assert time.monotonic() < deadline, "the app did not quit on SIGTERM"
                    await asyncio.sleep(0.01)

        result = watch_paper(bt, feed, title="taker", drive=lambda app: asyncio.run(drive(app)))
    assert result is not None and not result.replay.final
    assert feed.stop_requested  # the feed was closed with the run
    run_log = tmp_path / "run" / "run.jsonl"
    again = replay([str(run_log)], resolve_season([str(run_log)], None))
    assert dumps(again.to_json()) == dumps(result.replay.to_json())


RETRYING = re.compile(r"retrying (in \d+\.\ds|now) \(try \d+\)")


def free_port() -> int:
    """A loopback port nothing listens on (yet)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def live_app(tmp_path: Path, ws_url: str) -> tuple[ArenaApp, BacktestSource]:
    """``arena paper --tui`` on ``ws_url``, retrying within 0.1-0.4 s (80x24 would cut it)."""
    spec = paper_config(
        write_taker(tmp_path / "taker.py"),
        season=running_season(tmp_path / "live-test.json"),
        out=tmp_path / "run",
        ws_url=ws_url,
    )
    bt, feed = prepare_paper(spec, backoff=Backoff(200, 400), subscribers=(Capture(),), echo=False)
    source = BacktestSource.of_feed(bt, feed, title="taker")
    return make_app(source=source), source


@aio
async def test_a_feed_that_is_down_is_shown_down_with_its_retry_until_it_comes_up(
    tmp_path: Path,
) -> None:
    srv = FakeHL(pace_s=0.02)
    srv.port = free_port()  # where it will listen, once started
    app, source = live_app(tmp_path, srv.ws_url)
    async with app.run_test(size=(160, 24)) as pilot:
        screen = run_screen(app)
        status = screen.query_one(StatusBar)
        await until(pilot, lambda: "cannot connect" in status.text, "the failed connects")
        await until(pilot, lambda: screen.applied >= 2, "ticks while the feed is down")
        text = status.text
        assert text.startswith("✕ cannot connect") and "● live" not in text
        assert RETRYING.search(text), text  # when the next try comes, and which it is
        assert f"{srv.port}" in text, text  # and why: the connect call failed
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: len(status.text) <= 78, "the line to fit 80 columns")
        assert status.text.startswith("✕ cannot connect") and RETRYING.search(status.text)
        with srv:
            await until(pilot, lambda: status.text.startswith("● live"), "the feed to come up")
            feed = source.feed
            assert feed is not None
            await until(pilot, lambda: feed.recorder.messages > 0, "market data")
            assert "cannot connect" not in status.text and "retrying" not in status.text
            await pilot.press("q")
        assert source.done.wait(WAIT_S)


@aio
async def test_a_feed_lost_under_a_live_run_is_shown_lost_until_it_is_back(tmp_path: Path) -> None:
    with FakeHL(pace_s=0.02) as srv:
        app, source = live_app(tmp_path, srv.ws_url)
        async with app.run_test(size=(120, 24)) as pilot:
            screen = run_screen(app)
            status = screen.query_one(StatusBar)
            await until(pilot, lambda: status.text.startswith("● live"), "the feed up")
            await pilot.press("space")  # the view paused: the link is still told
            await until(pilot, lambda: status.text.startswith("‖ view paused"), "the pause")
            srv.inject("outage", ms=2000)  # closed, and nothing listens for 2 s
            await until(pilot, lambda: RETRYING.search(status.text) is not None, "the loss")
            assert status.text.startswith("‖ view paused  ○ feed lost"), status.text
            await until(pilot, lambda: "feed lost" not in status.text, "the feed back")
            assert status.text.startswith("‖ view paused") and "retrying" not in status.text
            await pilot.press("space")
            await until(pilot, lambda: status.text.startswith("● live"), "the view to follow")
            await until(pilot, lambda: "1 gap" in status.text, "the gap counted")
            await pilot.press("q")
        assert source.done.wait(WAIT_S)
