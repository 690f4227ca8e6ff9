"""arena-tui's spectator mode against a real ``arena host`` on 127.0.0.1 (Textual's pilot).

The host is the real server (``tests.hostkit``'s pieces) replaying the shipped synthetic
day at 600x, under a season with a score row every second, with three entries: alice
(a fill and a resting bid), bob and carol (registered, idle). The tests compare what the
screen shows with what the host serves over HTTP at the same moment (the rows move every
second, so "the same moment" is waited for: polled, bounded, never a fixed sleep), and
the book shown with the very ``l2Book`` line the host logged at that receive time.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from textual.widgets import Input, Static, TabbedContent

from arena_tui.host.clients import ReaderOptions
from arena_tui.host.plan import HostOptions
from arena_tui.host.register import register
from arena_tui.host.server import Host
from arena_tui.record.feed import Backoff, wall_ms
from arena_tui.report.render import pct, usd
from arena_tui.tui.app import ArenaApp, make_app
from arena_tui.tui.catalog import Catalog
from arena_tui.tui.fmt import clock, ratio_pct, stamp
from arena_tui.tui.hostapi import BookDoc, ScoresDoc, SeasonDoc, host_url, paper_label
from arena_tui.tui.screens.help import key_table
from arena_tui.tui.screens.spectate import SpectatorScreen
from arena_tui.tui.screens.start import StartScreen
from arena_tui.tui.spectator import BOOK_NEEDS_KEY, SpectateSpec, SpectatorSource
from arena_tui.tui.widgets.hosted import (
    BookPanel,
    EntryPanel,
    LinkBar,
    ScoreRowsTable,
    SeasonStrip,
    level_px,
)
from arena_tui.tui.widgets.orders import OrdersTable
from tests.clirun import ROOT
from tests.hostkit import SYNTH, UNLIMITED, ManualFeed, order, season_file, wait_until
from tests.tuikit import aio, until

WAIT_S = 20.0  # a bound, never reached when things work
MARKETS = [
    {"coin": "BTC", "asset": 0, "szDecimals": 5},
    {"coin": "ETH", "asset": 1, "szDecimals": 4},
    {"coin": "SOL", "asset": 5, "szDecimals": 2},
]


@dataclass
class Replayed:
    url: str
    log: Path
    keys: dict[str, str]
    resting: int  # alice's resting bid

    def get(self, path: str, entry: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {self.keys[entry]}"} if entry else {}
        r = httpx.get(self.url + path, headers=headers, timeout=10)
        assert r.status_code == 200, r.text
        return r.json()

    def latest_rows(self) -> list[dict[str, Any]]:
        rows = self.get("/v1/scores")["rows"]
        last = max((r["day"] for r in rows), default=None)
        return [r for r in rows if r["day"] == last]


def _on_grid(usd_px: float) -> int:
    """A BTC price (above $10,000) on the perp grid: five significant figures, e8."""
    return int(usd_px) // 10 * 10 * 10**8


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replayed]:
    tmp = tmp_path_factory.mktemp("spectated")
    season = season_file(
        tmp / "season.json", markets=MARKETS, mark_interval_ms=1000, rate_limit_requests=100
    )
    log = tmp / "host" / "season.jsonl"
    opts = HostOptions(log=log, season=season, port=0, replay=(SYNTH,), speed=Fraction(600))
    # no public limit: this fixture polls, and every test here reads /v1/scores beside the
    # spectator's own polls from the same address (the limit has a test of its own below)
    host = Host(opts, note=lambda _: None, readers=UNLIMITED).start()
    try:
        url = host.info["url"]
        keys = {name: register(log, name, None, wall_ms).key for name in ("alice", "bob", "carol")}
        h = Replayed(url, log, keys, resting=0)
        wait_until(lambda: h.get("/v1/book/BTC", "alice")["t"] is not None)
        book = h.get("/v1/book/BTC", "alice")
        ask, bid = (float(side[0]["px"]) for side in (book["levels"][1], book["levels"][0]))
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {keys['alice']}"}) as c:
            taker = {**order(), "limitPx": _on_grid(ask * 1.01), "encodedTif": 3}
            assert c.post("/v1/orders", json=taker).status_code == 200
            resting = {**order(), "limitPx": _on_grid(bid * 0.9)}
            h.resting = c.post("/v1/orders", json=resting).json()["oid"]
        wait_until(lambda: h.get("/v1/account", "alice")["fill_days"] == 1)
        wait_until(lambda: {r["entry"] for r in h.latest_rows()} == set(keys))
        yield h
    finally:
        host.stop()


def spectator(app: ArenaApp) -> SpectatorScreen:
    screen = app.screen
    assert isinstance(screen, SpectatorScreen), screen
    return screen


def shown_rows(screen: SpectatorScreen) -> list[list[str]]:
    table = screen.query_one(ScoreRowsTable)
    return [table.cells(str(i)) for i in range(table.row_count)]


def as_cells(rows: list[dict[str, Any]]) -> list[list[str]]:
    """Score rows as the leaderboard must write them, in the order given."""
    return [
        [
            str(r["rank"]),
            r["entry"],
            usd(r["equity"]),
            ratio_pct(r["return"]),
            ratio_pct(r["mdd"]),
            ratio_pct(r["score"]),
            "yes" if r["eligible"] else "no",
            str(r["fill_days"]),
            pct(r["active_share"]),
        ]
        for r in rows
    ]


def logged_book(log: Path, book: BookDoc) -> dict[str, Any]:
    """The ``l2Book`` message the host logged for ``book``'s coin at its receive time."""
    for raw in log.read_bytes().split(b"\n")[1:]:
        if raw.startswith(b'{"t":%d,' % (book.t or -1)):
            hl = json.loads(raw).get("hl", {})
            if hl.get("channel") == "l2Book" and hl["data"]["coin"] == book.coin:
                return dict(hl["data"])
    raise AssertionError(f"no {book.coin} book logged at {book.t}")


def as_levels(book: BookDoc) -> list[list[dict[str, Any]]]:
    return [[{"px": lv.px, "sz": lv.sz, "n": lv.n} for lv in side] for side in book.levels]


@aio
async def test_the_leaderboard_is_the_hosts_latest_day_rows_as_served(replayed: Replayed) -> None:
    app = make_app(spectate=SpectateSpec(replayed.url))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = spectator(app)

        # the host's rows move about every second and the board reads them every 2 s, so
        # "equal at the same look" waits on the two clocks' phase, for ever when a loaded
        # machine makes the board's period twice the host's (it timed out at 30 s): every
        # set the host serves is kept, and the board must show one of the latest four (its
        # period and a read's latency), exactly, as cells too
        seen: list[list[dict[str, Any]]] = []

        def agree() -> bool:
            served = replayed.latest_rows()
            if not seen or seen[-1] != served:
                seen.append(served)
            s = screen.spectated
            shown = [] if s is None else [json.loads(json.dumps(_row(r))) for r in s.rows]
            return bool(shown) and shown in seen[-4:] and shown_rows(screen) == as_cells(shown)

        await until(pilot, agree, "the leaderboard to show what GET /v1/scores serves")
        s = screen.spectated
        assert s is not None and s.link.state == "connected" and len(s.rows) == 3
        season = replayed.get("/v1/season")
        strip = screen.query_one(SeasonStrip).text
        assert strip.startswith(f"{season['id']}  running")
        assert season["rules_sha256"][:12] in strip
        link = screen.query_one(LinkBar).text
        assert link.startswith("● connected 127.0.0.1:")
        assert s.season is not None and f"server {stamp(s.season.t)} UTC" in link
        assert f"scores {clock(max(r.t for r in s.rows))}" in link  # the latest row's time
        tabs = screen.query_one(TabbedContent)
        assert str(tabs.get_tab("board").label) == "Leaderboard 3"

        await pilot.press("2")  # no key: the host keeps its books for entries
        await until(pilot, lambda: screen.query_one(BookPanel).text == BOOK_NEEDS_KEY, "the note")
        assert (
            "books for entries only (--key)"
            in strip.split("\n")[0] + screen.query_one(SeasonStrip).text.split("\n")[1]
        )
        await pilot.press("3")  # and there is no Entry tab
        assert tabs.active == "book"

        reads = s.scores_read
        await pilot.press("r")
        await until(
            pilot,
            lambda: screen.spectated is not None and screen.spectated.scores_read > reads,
            "r",
        )

        await pilot.press("question_mark")
        listed = [str(c) for c in key_table(screen).columns[0].cells]
        assert {"c", "r", "esc", "q", "?"} <= set(listed) and "3" not in listed
        await pilot.press("escape", "q")


@aio
async def test_the_season_and_the_board_say_paper_as_the_host_does(replayed: Replayed) -> None:
    assert replayed.get("/v1/season")["paper"] is True
    assert replayed.get("/v1/scores")["paper"] is True
    app = make_app(spectate=SpectateSpec(replayed.url))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = spectator(app)

        def read() -> bool:
            s = screen.spectated
            return s is not None and s.season is not None and bool(s.rows)

        await until(pilot, read, "the season and the rows")
        season = replayed.get("/v1/season")
        head = screen.query_one(SeasonStrip).text.split("\n")[0]
        assert head.endswith(f"rules {season['rules_sha256'][:12]}… · paper")  # beside the hash
        note = str(screen.query_one("#board-note", Static).render())
        assert note.endswith("(provisional: eligibility ignored) · paper")  # beside the score
        await pilot.press("escape", "q")


def test_an_older_host_without_paper_still_reads_and_shows_no_label() -> None:
    season = {
        "id": "s",
        "start": 0,
        "end": 60_000,
        "markets": [],
        "rules_sha256": "ab" * 32,
        "t": 1,
        "state": "running",
        "limits": {"rate_limit_requests": 20, "rate_limit_window_ms": 10_000},
    }
    old = msgspec.json.decode(json.dumps(season), type=SeasonDoc)
    assert old.paper is None and paper_label(old.paper) == ""
    new = msgspec.json.decode(json.dumps({**season, "paper": True}), type=SeasonDoc)
    assert paper_label(new.paper) == "paper"
    scores = msgspec.json.decode(b'{"season":"s","final":false,"rows":[]}', type=ScoresDoc)
    assert scores.paper is None
    assert paper_label(False) == "not paper"  # what the host says, whatever it says


def _row(r: Any) -> dict[str, Any]:
    import msgspec

    return dict(msgspec.to_builtins(r))


@aio
async def test_with_a_key_the_market_follows_c_and_the_entry_shows(replayed: Replayed) -> None:
    app = make_app(spectate=SpectateSpec(replayed.url, replayed.keys["alice"]))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = spectator(app)

        def book_of(coin: str) -> BookDoc | None:
            s = screen.spectated
            book = None if s is None else s.book
            return book if book is not None and book.coin == coin and book.t else None

        def has_book(coin: str) -> bool:
            return book_of(coin) is not None

        await pilot.press("2")
        for coin, place in (("BTC", 1), ("ETH", 2), ("SOL", 3), ("BTC", 1)):
            await until(pilot, partial(has_book, coin), f"{coin}'s book")
            book = book_of(coin)
            assert book is not None
            assert as_levels(book) == logged_book(replayed.log, book)["levels"]
            panel = screen.query_one(BookPanel).text
            best_bid, best_ask = book.levels[0][0], book.levels[1][0]
            assert panel.startswith(f"{coin}  mark ")
            assert f"c: next coin ({place} of 3)" in panel
            assert level_px(best_bid.px) in panel and level_px(best_ask.px) in panel
            top = screen.query_one(SeasonStrip).text.split("\n")[1]
            assert top.startswith(f"{coin} bid {level_px(best_bid.px)} × {level_px(best_bid.sz)}")
            await pilot.press("c")

        await pilot.press("3")
        await until(
            pilot,
            lambda: screen.spectated is not None and screen.spectated.account is not None,
            "the account",
        )
        served = replayed.get("/v1/orders", "alice")["orders"]
        assert replayed.resting in {o["oid"] for o in served}
        orders = screen.query_one(OrdersTable)
        assert {str(k.value) for k in orders.rows} == {str(o["oid"]) for o in served}
        assert orders.cells(str(replayed.resting))[-1] == "resting"
        entry = screen.query_one(EntryPanel).text
        assert entry.startswith("alice  equity $") and "fill days 1" in entry
        assert "positions: BTC 0.001 @ " in entry
        board = shown_rows(screen)
        assert "alice" in [row[1] for row in board]
        await pilot.press("q")


@aio
async def test_the_start_screens_spectator_choice_opens_it_and_esc_comes_back(
    replayed: Replayed,
) -> None:
    made: list[SpectatorSource] = []

    def spectators(spec: SpectateSpec) -> SpectatorSource:
        made.append(SpectatorSource(spec))
        return made[-1]

    app = make_app(catalog=Catalog((), (), ()), spectators=spectators, key=replayed.keys["bob"])
    async with app.run_test(size=(80, 24)) as pilot:
        start = app.screen
        assert isinstance(start, StartScreen)
        await pilot.press("tab", "tab", "tab", "down", "down")  # the modes: Spectator
        assert start.mode == "spectator"
        url = start.query_one("#url", Input)
        assert url.display and url.value == "http://127.0.0.1:8000"
        await pilot.press("tab", "ctrl+u", *replayed.url.removeprefix("http://"), "enter")
        screen = spectator(app)
        assert made and made[0].spec == SpectateSpec(replayed.url, replayed.keys["bob"])
        await until(
            pilot,
            lambda: screen.spectated is not None and screen.spectated.account is not None,
            "bob's account through the start screen's choice",
        )
        assert screen.spectated is not None and screen.spectated.account is not None
        assert screen.spectated.account.entry == "bob"
        await pilot.press("escape")
        assert app.screen is start
        assert made[0].done.wait(WAIT_S)  # the worker ended with the screen
        assert app.focused is url  # where it was: typed keys are text, not bindings
        await pilot.press("ctrl+u", *"ftp://nowhere", "enter")
        assert app.screen is start and "not an http(s) URL" in str(
            start.query_one("#error").render()
        )
        await pilot.press("q")


def tries(text: str) -> int:
    found = re.search(r"\(try (\d+)\)", text)
    return int(found.group(1)) if found else 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@aio
async def test_a_host_that_is_down_is_unreachable_then_connects_when_it_comes_up(
    tmp_path: Path,
) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    source = SpectatorSource(SpectateSpec(url), backoff=Backoff(20, 200))
    app = make_app(spectate=source.spec, spectators=lambda _: source)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = spectator(app)
        link = screen.query_one(LinkBar)
        await until(pilot, lambda: "host unreachable" in link.text, "unreachable")
        assert "(connection refused)  retrying in " in link.text
        # at least a third try (a busy machine may show try 4 before the test looks)
        await until(pilot, lambda: tries(link.text) >= 3, "more tries, spaced")

        season = season_file(tmp_path / "season.json", mark_interval_ms=1000)
        opts = HostOptions(log=tmp_path / "season.jsonl", season=season, port=port)
        host = Host(opts, feed=ManualFeed(), note=lambda _: None).start()
        try:
            register(opts.log, "dave", None, wall_ms)
            await until(pilot, lambda: link.text.startswith("● connected"), "the host to be up")
            await until(pilot, lambda: shown_rows(screen) != [], "dave's row")
            assert [row[1] for row in shown_rows(screen)] == ["dave"]
        finally:
            host.stop()
        await until(pilot, lambda: link.text.startswith("○ lost"), "the host to be gone")
        assert "retrying in" in link.text
        assert shown_rows(screen)[0][1] == "dave"  # what was last served stays on screen
        await pilot.press("q")
    assert source.done.wait(WAIT_S)


def budget_host(tmp_path: Path, total: tuple[int, int]) -> Host:
    """A host whose public reads share a budget of ``total`` (requests, window ms) among
    every client, with erin registered."""
    season = season_file(tmp_path / "season.json", mark_interval_ms=1000)
    opts = HostOptions(log=tmp_path / "season.jsonl", season=season, port=0)
    readers = ReaderOptions(total=total)
    host = Host(opts, feed=ManualFeed(), note=lambda _: None, readers=readers).start()
    try:
        register(opts.log, "erin", None, wall_ms)
    except BaseException:
        host.stop()
        raise
    return host


@aio
async def test_a_host_whose_public_reads_are_over_budget_is_waited_out_not_a_crash(
    tmp_path: Path,
) -> None:
    """The host's budget for public reads (``--public-total``) refuses some of the
    spectator's polls with 429 and Retry-After: the spectator stays connected, says it is
    waiting, keeps what it showed, and reads again after the wait."""
    host = budget_host(tmp_path, (2, 2_000))  # 2 public requests in any 2 s, every client
    try:
        source = SpectatorSource(SpectateSpec(host.info["url"]), backoff=Backoff(20, 200))
        app = make_app(spectate=source.spec, spectators=lambda _: source)
        async with app.run_test(size=(100, 24)) as pilot:
            screen = spectator(app)
            link = screen.query_one(LinkBar)
            await until(pilot, lambda: shown_rows(screen) != [], "erin's row")
            with httpx.Client(base_url=host.info["url"]) as other:  # another reader's share
                while other.get("/v1/season").status_code != 429:
                    pass
            source.refresh()
            await until(pilot, lambda: "rate limited (429)" in link.text, "the wait said")
            assert link.text.startswith("● connected")
            assert [row[1] for row in shown_rows(screen)] == ["erin"]  # kept on screen
            await until(pilot, lambda: "rate limited" not in link.text, "read again")
            assert link.text.startswith("● connected")
            await pilot.press("q")
        assert source.done.wait(WAIT_S)
    finally:
        host.stop()


@aio
async def test_a_public_budget_smaller_than_a_round_still_shows_the_rows(tmp_path: Path) -> None:
    """One public request a second, every client: a round's reads (the season, then the
    latest day's rows) never fit in one window. A round refused part way resumes after the
    wait with the read it lacks, so the rows come; starting over, it would spend each
    window's one request on the season again and never read a row."""
    host = budget_host(tmp_path, (1, 1_000))  # 1 public request in any 1 s, every client
    try:
        source = SpectatorSource(SpectateSpec(host.info["url"]), backoff=Backoff(20, 200))
        app = make_app(spectate=source.spec, spectators=lambda _: source)
        async with app.run_test(size=(100, 24)) as pilot:
            screen = spectator(app)
            link = screen.query_one(LinkBar)
            await until(pilot, lambda: shown_rows(screen) != [], "erin's row")
            assert [row[1] for row in shown_rows(screen)] == ["erin"]
            assert link.text.startswith("● connected")
            s = screen.spectated
            assert s is not None and s.season is not None and s.season.id == "host-test"
            await pilot.press("q")
        assert source.done.wait(WAIT_S)
    finally:
        host.stop()


def test_host_urls_as_typed() -> None:
    assert host_url(" 127.0.0.1:8000/ ") == "http://127.0.0.1:8000"
    assert host_url("https://arena.example") == "https://arena.example"
    for bad, why in (
        ("", "give the host's URL"),
        ("ftp://x", "not an http(s) URL"),
        ("http://h:99999", "port"),
        ("http://h:8000/v1", "without a path"),
    ):
        with pytest.raises(ValueError, match=re.escape(why)):
            host_url(bad)


def arena_tui(*args: str) -> subprocess.CompletedProcess[str]:
    """The ``arena-tui`` console script as a user runs it (its entry point, a subprocess)."""
    cmd = [sys.executable, "-c", "from arena_tui.tui.cli import main; main()", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False, timeout=60)


def test_arena_tui_spectate_bad_arguments_are_usage_errors_not_tracebacks() -> None:
    done = arena_tui("--spectate", "ftp://nowhere")
    assert done.returncode == 2 and "not an http(s) URL" in done.stderr
    assert "Traceback" not in done.stderr
    log = str(ROOT / "recordings" / "sample-btc-20250126.jsonl")
    done = arena_tui("--spectate", "127.0.0.1:8000", log)
    assert done.returncode == 2 and "give no LOG and no --strategy" in done.stderr
