"""Live paper runs against the fake Hyperliquid on loopback, and the tick stamper alone.

A run is ``prepare_paper`` + ``Backtest.run_live`` as ``arena paper`` does it, on the fake
server's accelerated feed of the real capture; it is stopped from the runner's own ``pace``
hook (the way a viewer stops it) or by ``request_stop`` (what the signal handler calls)
once what a test needs has happened, never after a fixed time.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_tui.logs.logfile import LogReader, decode_line
from arena_tui.record.feed import Backoff
from arena_tui.report.render import write_report
from arena_tui.report.verdict import Judging
from arena_tui.run.backtest import Backtest
from arena_tui.run.live import LiveFeed, Stamper
from arena_tui.run.paper import paper_config, prepare_paper
from arena_tui.run.paperstatus import PaperStatus
from arena_tui.run.parts import NotStarted
from arena_tui.run.replay import replay
from arena_tui.run.stream import OnEvent
from arena_tui.season.file import resolve_season
from arena_tui.util.jsonout import dumps
from engine import events as ev
from engine.season import MINUTE_MS
from tests.fakehl import FakeHL
from tests.paperkit import arena_type, check_ticks, lines, running_season, write_taker

DEADLINE_S = 20.0  # a bound, never reached when things work (the runs take ~3 s)


def paper_run(srv: FakeHL, tmp_path: Path, **kw: Any) -> tuple[Backtest, LiveFeed, Path]:
    season = kw.pop("season", None) or running_season(tmp_path / "season.json")
    spec = paper_config(
        write_taker(tmp_path / "taker.py"), season=season, out=tmp_path / "run", ws_url=srv.ws_url
    )
    bt, feed = prepare_paper(spec, backoff=Backoff(1, 20), **kw)
    assert bt.log.path is not None
    return bt, feed, bt.log.path


def until(done: Callable[[], bool], what: str) -> Callable[[int], bool]:
    """A ``pace`` hook that ends the run once ``done()`` holds (failing at DEADLINE_S)."""
    deadline = time.monotonic() + DEADLINE_S

    def pace(t: int) -> bool:
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        return not done()

    return pace


def test_a_live_run_logs_each_input_before_the_engine_applies_it_and_replays(
    tmp_path: Path,
) -> None:
    with FakeHL() as srv:
        seen: list[str] = []

        def on_event(event: ev.AnyEvent) -> None:
            # the file on disk already holds every line given to the log, and the last of
            # them is the input the engine is applying now
            data = run_log.read_bytes()
            assert hashlib.sha256(data).hexdigest() == bt.log.sha.hexdigest()
            last = json.loads(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
            if isinstance(event, ev.Accepted | ev.CancelPending):
                assert last["t"] == event.t and arena_type(last) in ("order", "cancel")
                assert last["arena"]["entry"] == event.entry
                seen.append(type(event).__name__)
            elif isinstance(event, ev.Fill):
                assert last["t"] == event.t and "hl" in last  # activated on a book
                seen.append("Fill")

        bt, feed, run_log = paper_run(srv, tmp_path, subscribers=(OnEvent(on_event),))
        sold = lambda: seen.count("Fill") >= 2 and feed.stamper.ticks_written >= 3  # noqa: E731
        result = bt.run_live(feed, pace=until(sold, "a buy and a sell"))
    rows = lines(run_log)
    check_ticks(rows)
    own = [r["arena"] for r in rows if arena_type(r) in ("register", "order", "cancel")]
    assert [a["type"] for a in own] == ["register", "order", "order", "cancel", "order"]
    assert {a["entry"] for a in own} == {"taker"}
    assert seen.count("Accepted") == 3 and "CancelPending" in seen
    assert result.replay.fills == 2 and result.own_inputs == 5
    assert feed.status()["messages"] > 100  # the feed really flowed
    again = replay([str(run_log)], resolve_season([str(run_log)], None))
    assert dumps(again.to_json()) == dumps(result.replay.to_json())
    assert again.inputs == len(rows)


def test_a_reconnect_is_one_gap_the_run_goes_on_and_a_stop_leaves_log_and_report(
    tmp_path: Path, capsys: Any
) -> None:
    with FakeHL() as srv:
        bt, feed, run_log = paper_run(srv, tmp_path)
        injected: list[int] = []
        bound = until(lambda: False, "data after the gap")

        def pace(t: int) -> bool:
            status = feed.recorder
            if not injected and feed.stamper.ticks_written >= 1 and status.messages > 50:
                srv.inject("close")  # TCP closed under the feed, no close frame
                injected.append(status.messages)
            if status.gaps and status.messages > injected[0] + 200:
                feed.request_stop()  # what Ctrl-C does
            return bound(t)

        result = bt.run_live(feed, pace=pace)
        assert srv.connections == 2
    rows = lines(run_log)
    check_ticks(rows)
    gaps = [(i, r) for i, r in enumerate(rows) if arena_type(r) == "gap"]
    assert len(gaps) == 1
    i, gap = gaps[0]
    assert gap["arena"]["reason"] == "disconnected" and gap["arena"]["to"] == gap["t"]
    market_before = [r["t"] for r in rows[:i] if "hl" in r]
    assert gap["arena"]["from"] == market_before[-1]  # the last market data before the loss
    assert sum("hl" in r for r in rows[i + 1 :]) > 100  # the run went on after it
    assert sum(1 for _ in LogReader([run_log])) == len(rows)  # readable to the end
    write_report(result, run_log.parent, judging=Judging(epoch="1h", twins=0), as_json=True)
    report = json.loads(capsys.readouterr().out)
    assert report["replay"] == result.replay.to_json() and not report["replay"]["final"]
    for name in ("report.json", "fills.csv", "equity.csv", "chart.svg"):
        assert (run_log.parent / name).is_file()


def test_a_live_run_ends_with_its_season(tmp_path: Path) -> None:
    """The clock is moved to 1.5 s before a minute boundary: the tick at the season's end
    ends the run by itself, final."""
    with FakeHL() as srv:
        now = time.time_ns() // 1_000_000
        end = (now // MINUTE_MS + 2) * MINUTE_MS
        offset = end - 1500 - now

        def clock() -> int:
            return time.time_ns() // 1_000_000 + offset

        season = running_season(
            tmp_path / "season.json", now_ms=end - MINUTE_MS, minutes=2, stale_book_ms=600_000
        )
        bt, feed, run_log = paper_run(srv, tmp_path, season=season, clock=clock)
        assert bt.season.end == end
        result = bt.run_live(feed, pace=until(lambda: False, "the season's end"))
    assert result.replay.final and result.replay.end == end
    rows = lines(run_log)
    assert rows[-1] == {"t": end, "arena": {"type": "tick"}}
    check_ticks(rows)


def test_run_live_closes_the_feed_however_the_pass_ends(tmp_path: Path) -> None:
    with FakeHL() as srv:
        bt, feed, run_log = paper_run(srv, tmp_path)
        with pytest.raises(NotStarted, match="stopped before any input of season live-test"):
            bt.run_live(feed, pace=until(lambda: True, "one input"))  # stopped at once
        assert feed._thread is not None and not feed._thread.is_alive()
        srv.wait(lambda: srv.closed_connections == srv.connections, "the socket to close")
    assert lines(run_log) == []  # the header alone, closed


# ---- the stamper alone: items and clock readings in, lines out --------------------------

Step = tuple[str, int]  # ("msg" | "gap", receive t) or ("clock", now)


@given(
    st.lists(
        st.tuples(st.sampled_from(["msg", "gap", "clock"]), st.integers(0, 400)),
        max_size=60,
    )
)
def test_the_stamper_keeps_t_ordered_ticks_one_second_apart_and_lines_true(
    steps: list[Step],
) -> None:
    start = 1_000_000_500
    stamper = Stamper(start)
    clock, recv = start, start
    book = b'{"channel":"trades","data":[]}'
    out: list[tuple[bytes, Any]] = []
    for kind, dt in steps:
        if kind == "clock":
            clock += dt * 10
            out += stamper.ticks(clock)
            continue
        recv = max(start, recv + dt * 7 - 700)  # wandering, at times behind a tick out
        if kind == "msg":
            line = decode_line(b'{"t":%d,"hl":%s}' % (recv, book))
            out += stamper.take((recv, book, None, line))
        else:
            out += stamper.take((recv, None, {"type": "gap", "from": 5, "to": recv}, None))
    rows = [json.loads(raw) for raw, _ in out]
    for (raw, line), row in zip(out, rows, strict=True):
        assert decode_line(raw) == line  # what is logged is what the engine gets
        if arena_type(row) == "gap":
            assert row["arena"]["to"] == row["t"]
    if any(arena_type(r) == "tick" for r in rows):
        check_ticks(rows)
    assert [r["t"] for r in rows] == sorted(r["t"] for r in rows)


def test_the_stamper_ticks_before_a_later_message_and_clamps_a_late_one() -> None:
    stamper = Stamper(10_500)
    msg = b'{"channel":"trades","data":[]}'

    def take(t: int) -> list[tuple[int, str]]:
        got = stamper.take((t, msg, None, decode_line(b'{"t":%d,"hl":%s}' % (t, msg))))
        return [(line.t, "tick" if line.hl is None else "hl") for _, line in got]

    assert stamper.ticks(10_999) == []
    assert take(10_700) == [(10_700, "hl")]
    assert take(13_000) == [(11_000, "tick"), (12_000, "tick"), (13_000, "tick"), (13_000, "hl")]
    assert take(12_999) == [(13_000, "hl")]  # received before a tick already written
    assert stamper.clamped == 1
    assert [line.t for _, line in stamper.ticks(15_500)] == [14_000, 15_000]


def test_a_gap_after_a_clamped_message_starts_where_that_message_was_logged() -> None:
    """A message received at 12,999 after the 13,000 tick is logged at 13,000; the loss
    that follows must say its data ended at 13,000, not at the receive time (a replay
    checks ``from`` against the last market data)."""
    stamper = Stamper(10_500)
    msg = b'{"channel":"trades","data":[]}'
    stamper.ticks(13_000)
    got = stamper.take((12_999, msg, None, decode_line(b'{"t":12999,"hl":%s}' % msg)))
    assert [line.t for _, line in got] == [13_000]
    gap = {"type": "gap", "from": 12_999, "to": 0, "reason": "disconnected"}
    ((raw, _line),) = stamper.take((13_400, None, gap, None))
    assert json.loads(raw)["arena"] == {**gap, "from": 13_000, "to": 13_400}


def test_the_status_line_and_the_feeds_news(tmp_path: Path) -> None:
    season = running_season(tmp_path / "season.json")
    spec = paper_config(write_taker(tmp_path / "taker.py"), season=season, out=tmp_path / "run")
    bt, feed = prepare_paper(spec)
    stream = io.StringIO()
    clock = [0.0]
    status = PaperStatus(
        bt,
        feed,
        stream=stream,
        tty=False,
        every_s=60,
        monotonic=lambda: clock[0],
        wall=lambda: bt.season.start + 5 * MINUTE_MS + 3000,
    )
    feed.events.append({"event": "lost", "reason": "disconnected", "detail": "x", "retry_ms": 500})
    t = bt.season.start + 5 * MINUTE_MS
    status.update(10, t)  # the news at once, the status line not yet
    clock[0] = 61.0
    status.update(12_345, t)
    status.done()
    news, line = stream.getvalue().splitlines()
    assert news == "arena: paper: connection lost (disconnected: x); retrying in 500 ms"
    assert line.startswith("arena: paper: 12,345 inputs  at ")
    assert "(season 50%)  0 fills  reconnecting  gaps 0  3.0 s behind the wall clock" in line
    bt.log.close()
