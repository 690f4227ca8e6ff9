"""``run.dayscan``: the warm pass's scan over a cached day, as source and as its build.

setup.py compiles arena_tui/run/dayscan.py with Cython as ``arena_tui.run._dayscan``; the
warm pass uses the build when it is of this very source. Here the two are driven through
the same random calls on the caches of random logs (those of tests/test_warm_replay.py)
and must answer alike: every stop, every gathered trades range, every held line. That the
scan's answers make the same replay as reading the log is tests/test_warm_replay.py's.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.logs.dayread import CachedDay
from arena_tui.run import dayscan
from arena_tui.run.replay import replay
from arena_tui.run.sources import open_days
from tests import build
from tests.test_warm_replay import SEASON, logs, write_log

TWIN = dayscan._compiled_twin()


class State:
    """What the scan reads of a coin's state."""

    def __init__(self, awaits_book: bool, marks_by_book: bool) -> None:
        self.awaits_book = awaits_book
        self.marks_by_book = marks_by_book


def cached(rows: list[dict[str, Any]], tmp: str) -> CachedDay:
    log = str(write_log(Path(tmp) / "day.jsonl", rows))
    replay([log], SEASON, cache="write")
    days = open_days([log], [m.coin for m in SEASON.markets])
    assert days is not None
    return days[0]


def drive(scanner: type[Any], day: CachedDay, setup: Any, calls: list[Any]) -> list[Any]:
    """Every answer of ``scanner`` to the calls: (what, args) in order."""
    states, defer_books, defer_ctx, quiet = setup
    scan = scanner(day.cols, day.blob, states, defer_books, defer_ctx, quiet)
    said: list[Any] = []
    at = 0
    for what, a, b, c in calls:
        if what == "scan":
            stop = min(day.n, at + a)
            limit = day.t[min(day.n - 1, at + b)] if day.n else 0
            j = scan.scan(at, stop, limit, c)
            said.append((j, scan.r_lo, scan.r_hi, scan.nheld))
            at = j + (j < stop)  # (the caller applies the line it stopped at)
        elif what == "rewind":
            scan.rewind()
            said.append(scan.nheld)
        elif what == "take":
            said.append(scan.take_held())
        else:  # the caller applied the line the scan stopped at, and maybe more after it
            at = min(day.n, at + 1 + a % 4)
        if at >= day.n:
            break
    said.append(scan.take_held())
    return said


def _kept(row: dict[str, Any]) -> bool:
    """Market data, or a tick in the host's form (``t`` first)."""
    return "hl" in row or (list(row) == ["t", "arena"] and row["arena"]["type"] == "tick")


# the random logs' market lines and ticks, now and then an order (the scan's stops)
MARKET = logs().map(lambda rows: [r for k, r in enumerate(rows) if _kept(r) or k % 7 == 0])
CALLS = st.lists(
    st.tuples(
        st.sampled_from(["scan", "scan", "scan", "rewind", "take", "step", "step", "step"]),
        st.integers(0, 60),  # how many lines the scan may pass (a step: 1 + a % 4 lines)
        st.integers(0, 80),  # where its limit is, in lines ahead
        st.sampled_from([0, 1, 3, 10, 1 << 62]),  # the trades row it stops at
    ),
    min_size=5,
    max_size=60,
)
MOSTLY = st.sampled_from([True, True, True, False])
SETUP = st.tuples(
    st.lists(  # (each coin's state; None: not traded)
        st.one_of(st.none(), st.builds(State, MOSTLY.map(lambda b: not b), st.booleans())),
        min_size=6,
        max_size=6,
    ),
    MOSTLY,  # books may be held
    MOSTLY,  # contexts may be held
    MOSTLY,  # prints may be gathered
)


@pytest.mark.skipif(TWIN is None, reason="no build of run/dayscan.py of this source")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MARKET, SETUP, CALLS)
def test_the_build_answers_as_the_source(rows: Any, setup: Any, calls: Any) -> None:
    assert TWIN is not None
    with tempfile.TemporaryDirectory() as tmp:
        day = cached(rows, tmp)
        try:
            states = setup[0][: len(day.coins)]
            setup = (states + [None] * (len(day.coins) - len(states)), *setup[1:])
            source = drive(dayscan.DayScan, day, setup, calls)
            built = drive(TWIN.DayScan, day, setup, calls)
        finally:
            day.close()
    assert built == source


def test_a_scan_holds_books_and_contexts_gathers_prints_and_passes_ticks(
    tmp_path: Path,
) -> None:
    t = build.T0
    rows = [
        build.book(t, "BTC", bids=[("99.00", "1.0")], asks=[("101.00", "1.0")]),  # 0: held
        build.ctx(t, "BTC", mark="100.00", oracle="100.01", funding="0.0000125"),  # 1: held
        build.trades(t + 1, ("BTC", "100.00", "0.5", t, 1)),  # 2: gathered (row 0)
        build.tick(t + 2),  # 3: passed over
        {"arena": {"type": "tick"}, "t": t + 3},  # 4: a tick in another form: the caller's
        build.trades(t + 4, ("BTC", "100.00", "0.5", t, 2)),  # 5: row 1
        build.book(t + 5, "BTC", bids=[("99.00", "1.0")], asks=[]),  # 6
        build.trades(t + 6, ("BTC", "100.00", "0.5", t, 3)),  # 7: row 2
        build.register(t + 7, "a"),  # 8: the caller's
    ]
    day = cached(rows, str(tmp_path))
    try:
        scanners: list[type[dayscan.DayScan]] = [dayscan.DayScan, dayscan.Scanner]
        for scanner in scanners:
            states = [State(False, False) if c == "BTC" else None for c in day.coins]
            scan = scanner(day.cols, day.blob, states, True, True, True)
            assert scan.scan(0, day.n, t + 100, 1 << 62) == 4
            assert (scan.r_lo, scan.r_hi, scan.nheld) == (0, 1, 2)
            scan.rewind()
            assert scan.scan(0, day.n, t + 100, 0) == 2  # stops at row 0 (not gathered)
            assert (scan.r_lo, scan.r_hi) == (0, 0)
            assert scan.take_held() == [0, 1]
            assert scan.scan(5, day.n, t + 100, 1 << 62) == 8
            assert (scan.r_lo, scan.r_hi, scan.take_held()) == (1, 3, [6])
            assert scan.scan(5, day.n, t + 6, 1 << 62) == 7  # the limit: a line at t + 6
            # no quiet prints (a backtest's engine keeps them): stops at each message
            scan = scanner(day.cols, day.blob, states, True, True, False)
            assert scan.scan(0, day.n, t + 100, 1 << 62) == 2
            # a coin whose order waits for a book: the book is the caller's
            states[day.coins.index("BTC")] = State(True, False)
            scan = scanner(day.cols, day.blob, states, True, True, True)
            assert scan.scan(0, day.n, t + 100, 1 << 62) == 0
            # no context mark: the last two-sided book is kept beside a one-sided one
            states[day.coins.index("BTC")] = State(False, True)
            scan = scanner(day.cols, day.blob, states, True, False, True)
            assert scan.scan(5, day.n, t + 100, 1 << 62) == 8
            assert scan.take_held() == [6]
            assert scan.scan(0, 1, t + 100, 1 << 62) == 1
            assert scan.scan(6, day.n, t + 100, 1 << 62) == 8
            assert scan.take_held() == [0, 6]  # the mid's book, then the one-sided one
    finally:
        day.close()
