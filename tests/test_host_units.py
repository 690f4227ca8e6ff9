"""The host's pure parts: the moving-window limit, keys, the replay's time map, the plan.

The limiter is checked against its definition with hypothesis: over any sequence of
request times, no window of ``window_ms`` holds more than ``limit`` allowed requests, a
request is refused only when ``limit`` were allowed in the window ending at it, and the
wait it is told is exactly when the next would pass.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_tui.host.auth import Keys, key_sha256, new_key
from arena_tui.host.errors import HostError
from arena_tui.host.plan import HostOptions, plan
from arena_tui.host.ratelimit import MovingWindow, retry_after_s
from arena_tui.host.restamp import Restamp, SpeedError, parse_speed
from tests.hostkit import SYNTH, FakeClock, season_file

LIMIT, WINDOW = 20, 10_000


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3_000), min_size=1, max_size=120))
def test_moving_window_allows_at_most_limit_in_any_window(gaps: list[int]) -> None:
    clock = FakeClock(0)
    limiter = MovingWindow(LIMIT, WINDOW, clock)
    allowed: list[int] = []
    for gap in gaps:
        clock.now += gap
        wait = limiter.take("alice")
        recent = [a for a in allowed if a > clock.now - WINDOW]
        if wait == 0:
            assert len(recent) < LIMIT  # allowed only under the limit
            allowed.append(clock.now)
        else:
            assert len(recent) == LIMIT  # refused only at the limit (never fixed buckets)
            assert wait == recent[0] + WINDOW - clock.now  # exactly when the oldest leaves
    for i, t in enumerate(allowed):  # every window of WINDOW ms, anchored at each request
        assert sum(1 for u in allowed[i:] if u < t + WINDOW) <= LIMIT


def test_moving_window_is_not_fixed_buckets_and_counts_per_entry() -> None:
    clock = FakeClock(0)
    limiter = MovingWindow(LIMIT, WINDOW, clock)
    assert all(limiter.take("a") == 0 for _ in range(10))
    clock.now = 5_000
    assert all(limiter.take("a") == 0 for _ in range(10))
    assert limiter.take("a") == 5_000
    assert limiter.take("b") == 0  # another entry's budget is its own
    clock.now = 10_000  # a fixed 10 s bucket would start over here: the window does not
    assert sum(limiter.take("a") == 0 for _ in range(20)) == 10
    assert [retry_after_s(ms) for ms in (1, 999, 1000, 1001, 10_000)] == [1, 1, 1, 2, 10]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 3_000), min_size=1, max_size=80),
    st.integers(0, 2 * WINDOW),
    st.integers(-(10**12), 10**12),
    st.lists(st.integers(0, 3_000), min_size=1, max_size=40),
)
def test_a_window_restored_from_logged_wall_times_answers_as_if_never_restarted(
    before: list[int], down: int, origin: int, after: list[int]
) -> None:
    # The log carries wall-clock ms; the limiter counts on a monotonic clock whose zero is
    # anything (another process, another boot). Restored from the logged times, the new
    # limiter refuses exactly what the old one would have, with the same waits.
    wall_at_zero = 1_796_000_000_000  # the wall clock when the old limiter's clock read 0
    old_clock, new_clock = FakeClock(0), FakeClock(origin)
    old = MovingWindow(LIMIT, WINDOW, old_clock)
    logged: list[int] = []  # the t of each allowed request (what the log holds)
    for gap in before:
        old_clock.now += gap
        if old.take("alice") == 0:
            logged.append(wall_at_zero + old_clock.now)
    old_clock.now += down  # the server is down this long
    new = MovingWindow(LIMIT, WINDOW, new_clock)
    new.restore({"alice": logged, "bob": []}, wall_at_zero + old_clock.now)
    for gap in after:
        old_clock.now += gap
        new_clock.now += gap
        assert new.take("alice") == old.take("alice")
    assert new.take("bob") == 0


def test_a_logged_time_ahead_of_the_wall_clock_counts_as_now() -> None:
    clock = FakeClock(0)
    limiter = MovingWindow(LIMIT, WINDOW, clock)
    wall = 1_796_000_000_000
    ahead = wall + 60_000  # logged before the wall clock stepped back a minute
    limiter.restore({"alice": [wall - 9_000] * (LIMIT - 1) + [ahead], "bob": [ahead] * LIMIT}, wall)
    assert limiter.take("alice") == 1_000  # the oldest leaves the window in 1 s
    assert limiter.take("bob") == WINDOW  # (not 70 s: a request counts a window at most)


def test_keys_match_only_their_own_entry_in_constant_time() -> None:
    keys = Keys()
    alice, bob = new_key("alice"), new_key("bob")
    keys.add("alice", key_sha256(alice))
    keys.add("bob", key_sha256(bob).upper())  # hex in either case
    keys.add("nokey", None)
    assert keys.entry_for(f"Bearer {alice}") == "alice"
    assert keys.entry_for(f"bearer {bob}") == "bob"
    secret = alice.split(".", 1)[1]
    for header in (
        None,
        "",
        alice,
        f"Token {alice}",
        f"Bearer bob.{secret}",
        f"Bearer alice.{secret[:-1]}",
        "Bearer alice.",
        "Bearer nokey.x",
        "Bearer " + "é" * 10,
        f"Bearer {alice}" + "x" * 300,
    ):
        assert keys.entry_for(header) is None, header
    assert len(secret) >= 43 and alice.startswith("alice.")


def test_the_replay_map_moves_receive_and_exchange_times_alike() -> None:
    stamp = Restamp(origin_t=1_000_000, origin_wall=5_000_000, speed=Fraction(60))
    assert [stamp.at(x) for x in (1_000_000, 1_000_059, 1_000_060, 1_060_000)] == [
        5_000_000,
        5_000_000,
        5_000_001,
        5_001_000,
    ]
    assert stamp.recorded(5_001_000) == 1_060_000
    raw = json.dumps(
        {
            "t": 1_060_000,
            "hl": {
                "channel": "trades",
                "data": [{"coin": "BTC", "px": "101.50", "sz": "0.1", "time": 1_059_940, "tid": 7}],
            },
        }
    ).encode()
    t, body = stamp.line(raw) or (0, b"")
    assert t == 5_001_000
    moved = json.loads(b"{" + body)["hl"]["data"][0]
    assert moved == {"coin": "BTC", "px": "101.50", "sz": "0.1", "time": 5_000_999, "tid": 7}
    book = {"channel": "l2Book", "data": {"coin": "BTC", "time": 1_000_120, "levels": [[], []]}}
    assert stamp.message(book)["data"]["time"] == 5_000_002
    assert stamp.line(b'{"t":1,"arena":{"type":"tick"}}') is None
    assert parse_speed("60") == 60 and parse_speed("0.5") == Fraction(1, 2)
    for bad in ("0", "-1", "x", "1e9", "2000000"):
        with pytest.raises(SpeedError):
            parse_speed(bad)


def test_a_replay_with_no_season_gets_one_covering_the_restamped_run(tmp_path: Path) -> None:
    now = 1_800_000_030_000
    opts = HostOptions(log=tmp_path / "s.jsonl", replay=(SYNTH,), speed=Fraction(60))
    p = plan(opts, now)
    assert p.season.start == now // 60_000 * 60_000 <= now
    assert p.restamp is not None
    six_hours_at_60 = 6 * 3_600_000 // 60
    assert p.season.end >= now + six_hours_at_60 - 1000
    assert p.season.end - p.season.start <= six_hours_at_60 + 2 * 60_000
    assert [m.coin for m in p.season.markets] == ["BTC", "ETH", "SOL"]
    assert p.header["replay"]["speed"] == "60"
    assert (tmp_path / f"{p.season.id}.json").is_file()  # beside the log, for arena replay


def test_a_new_log_needs_a_season_that_is_not_over(tmp_path: Path) -> None:
    with pytest.raises(HostError, match="pass --season"):
        plan(HostOptions(log=tmp_path / "s.jsonl"), 0)
    season = season_file(tmp_path / "season.json", minutes=1)
    with pytest.raises(HostError, match="ended at"):
        plan(HostOptions(log=tmp_path / "s.jsonl", season=season), 10**14)
    with pytest.raises(HostError, match=r"plain \.jsonl"):
        plan(HostOptions(log=tmp_path / "s.jsonl.gz", season=season), 0)


def test_an_existing_log_goes_on_only_with_the_source_it_was_started_with(
    tmp_path: Path,
) -> None:
    season = season_file(tmp_path / "season.json")
    log = tmp_path / "s.jsonl"
    p = plan(HostOptions(log=log, season=season), 0)
    log.write_bytes(json.dumps({"arena_log": 1, **p.header}).encode() + b"\n")
    with pytest.raises(HostError, match="drop --replay"):
        plan(HostOptions(log=log, season=season, replay=(SYNTH,)), 0)
    other = tmp_path / "o.jsonl"
    other.write_bytes(b'{"arena_log":1,"recording":"hyperliquid","markets":[]}\n')
    with pytest.raises(HostError, match="not written by arena host"):
        plan(HostOptions(log=other, season=season), 0)
    replayed = tmp_path / "r.jsonl"
    q = plan(HostOptions(log=replayed, replay=(SYNTH,), speed=Fraction(60)), 10**12)
    replayed.write_bytes(json.dumps({"arena_log": 1, **q.header}).encode() + b"\n")
    with pytest.raises(HostError, match="pass the same --replay and --speed"):
        plan(HostOptions(log=replayed, replay=(SYNTH,), speed=Fraction(61)), 10**12)
    again = plan(HostOptions(log=replayed, replay=(SYNTH,), speed=Fraction(60)), 10**12 + 5)
    assert again.resumed and again.restamp is not None
    assert again.restamp.origin_wall == 10**12  # the same clock as the first start
