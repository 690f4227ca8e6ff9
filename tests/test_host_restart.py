"""A restarted ``arena host`` keeps each entry's rate limit: the window is rebuilt from the log.

The limit (``rate_limit_requests`` per ``rate_limit_window_ms``, moving) used to start empty
at every start, so an entry could send its 20 requests, wait for a restart, and send 20
more within the second. At start the host now counts again the orders and cancels the
log holds from the last window (reads are not in the log, so they are not). Over real
HTTP on 127.0.0.1: a host in a thread with a limiter clock the test steps (the exact
``Retry-After``), and a real process killed with ``kill -9`` and started again (the real
clocks: the log's wall-clock ``t`` against the limiter's monotonic clock).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from arena_tui.host.ratelimit import retry_after_s
from arena_tui.host.register import register
from arena_tui.record.feed import wall_ms
from tests import build
from tests.clirun import arena_running, until
from tests.hostkit import FakeClock, arena_rows, hosted, log_rows, order, season_file, wait_until
from tests.market import write_log

WINDOW = 30_000  # (Season 0's 20 requests, in 30 s rather than 10: room for a slow restart)


def _logged_requests(log: Path) -> list[int]:
    """The t of every order and cancel in the log, in order."""
    kinds = ("order", "cancel")
    return [r["t"] for r in log_rows(log) if r.get("arena", {}).get("type") in kinds]


def test_a_restart_keeps_the_window_of_logged_orders_and_cancels(tmp_path: Path) -> None:
    season = season_file(tmp_path / "season.json", rate_limit_window_ms=WINDOW)
    with hosted(tmp_path, season=season, limiter_clock=FakeClock(0)) as h:
        with h.client("alice") as alice, h.client("bob") as bob:
            answers = [alice.post("/v1/orders", json=order()).status_code for _ in range(19)]
            answers.append(alice.post("/v1/cancel", json={"oid": 1}).status_code)
            assert answers == [200] * 8 + [422] * 11 + [200]  # (TooManyOpenOrders: logged)
            assert alice.get("/v1/orders").status_code == 429  # the window is full
            assert [bob.get("/v1/account").status_code for _ in range(20)] == [200] * 20
        keys = dict(h.keys)
    first = _logged_requests(h.log)[0]
    assert len(_logged_requests(h.log)) == 20
    # Restarted on the same log, its limiter clock starting anywhere (a monotonic clock's
    # zero means nothing): alice's 20 are still in the window; bob's reads were not logged.
    clock = FakeClock(7_777_777)
    before = wall_ms()
    with hosted(tmp_path, season=season, limiter_clock=clock, entries=(), market=False) as again:
        after = wall_ms()
        again.keys.update(keys)
        wait_until(lambda: b'"reason":"restart"' in again.log.read_bytes())
        with again.client("alice") as alice, again.client("bob") as bob:
            logged = again.inputs()
            r = alice.post("/v1/orders", json=order())
            assert (r.status_code, r.json()["error"]) == (429, "RateLimited")
            # the first request leaves the window WINDOW ms after its logged t; the restart
            # happened between `before` and `after` on the wall clock
            earliest, latest = first + WINDOW - after, first + WINDOW - before
            seconds = int(r.headers["retry-after"])
            assert retry_after_s(earliest) <= seconds <= retry_after_s(latest)
            assert f"retry in {seconds} s" in r.json()["detail"]
            assert alice.get("/v1/account").status_code == 429  # reads wait as well
            clock.now += earliest - 1  # not yet, even for the earliest it could be
            assert alice.post("/v1/cancel", json={"oid": 2}).status_code == 429
            assert again.inputs() == logged  # refused: nothing logged
            clock.now += latest - earliest + 1  # now it has left, whenever the start was
            assert alice.post("/v1/cancel", json={"oid": 2}).status_code == 200
            assert [bob.get("/v1/orders").status_code for _ in range(20)] == [200] * 20
            assert bob.get("/v1/orders").status_code == 429
    assert len(arena_rows(again.log, "cancel")) == 2


def test_after_kill_9_the_restarted_process_refuses_until_the_window_passes(
    tmp_path: Path,
) -> None:
    window = 60_000  # the season's own settings: 5 requests a minute
    season = season_file(
        tmp_path / "season.json", rate_limit_requests=5, rate_limit_window_ms=window
    )
    t0 = 1_790_000_000_000  # a second of market data to replay (the host needs a source)
    book = build.book(t0, "BTC", t0, [("99999.0", "2.0")], [("100001.0", "2.0")])
    recording = write_log(tmp_path / "tiny.jsonl", [book])
    log = tmp_path / "season.jsonl"
    args = ["host", "--port", "0", "--json", "--season", str(season), "--log", str(log)]
    args += ["--replay", str(recording)]
    out = tmp_path / "out.txt"

    def started(n: int) -> str:
        until(lambda: out.exists() and len(out.read_text().splitlines()) >= n, "the host")
        return str(json.loads(out.read_text().splitlines()[n - 1])["url"])

    with arena_running(tmp_path, *args) as proc:
        url = started(1)
        key = register(log, "alice", None, wall_ms).key  # (through the running host)
        auth = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=url, headers=auth, timeout=10) as alice:
            assert all(alice.post("/v1/orders", json=order()).status_code < 429 for _ in range(5))
            assert alice.post("/v1/orders", json=order()).status_code == 429
        proc.kill()  # kill -9: no shutdown at all
        proc.wait(10)
    first = _logged_requests(log)[0]
    assert len(_logged_requests(log)) == 5
    with arena_running(tmp_path, *args):
        url = started(2)
        with httpx.Client(base_url=url, headers=auth, timeout=10) as alice:
            before = wall_ms()
            r = alice.post("/v1/orders", json=order())
            after = wall_ms()
    assert r.status_code == 429, r.text
    # Retry-After is when the first logged request leaves the window, by the wall clock
    # (give or take the ms both clocks round to)
    seconds = int(r.headers["retry-after"])
    assert retry_after_s(first + window - after - 2) <= seconds
    assert seconds <= retry_after_s(first + window - before + 2)
    assert len(_logged_requests(log)) == 5
