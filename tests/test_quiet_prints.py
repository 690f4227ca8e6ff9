"""``Engine.apply_quiet_prints``: trades messages given as integers are applied, up to the
first that is not quiet, only when applying them makes no event, and then leave exactly the
state ``apply`` leaves.

The day cache's passes (a backtest's warm pass, a cached replay) hand the engine prints
nobody hooks this way, from the cache's columns; these properties hold it to ``apply`` on
random logs (those of tests/test_engines_agree.py: every kind of input, prices past 64
bits, malformed fields), in whichever engine runs (that suite runs this file under the
sources too).
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Engine
from tests import build, enginediff
from tests.test_engines_agree import SEASON, SEASON_JSON, rows


@pytest.mark.parametrize("recorded", [False, True], ids=["plain", "recording prints"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows())
def test_quiet_prints_leave_what_apply_leaves(recorded: bool, log: list[dict[str, Any]]) -> None:
    # recording prints: each message applied quietly says, in the flags, which of its
    # prints were applied: the same as ``applied_prints`` after ``apply``
    lines = [msgspec.json.encode(row) for row in log]
    assert enginediff.run_case(SEASON_JSON, lines, recorded, quiet=True) == enginediff.run_case(
        SEASON_JSON, lines, recorded
    )


def test_a_print_through_a_resting_order_is_not_quiet() -> None:
    eng = Engine(SEASON)
    t = build.T0 + 1_000
    for row in (
        build.register(build.T0, "a"),
        build.book(t, "BTC", bids=[("99.00", "1.0")], asks=[("101.00", "1.0")]),
        build.order(t, "a", 0, True, 100 * build.E8, build.E8 // 10),
        build.book(t + 2_000, "BTC", bids=[("99.00", "1.0")], asks=[("101.00", "1.0")]),
    ):
        eng.apply(build.lines([row])[0])
    assert eng.coin_state("BTC").resting  # type: ignore[union-attr]
    above = build.lines([build.trades(t + 3_000, ("BTC", "100.50", "1.0", t + 3_000, 1))])[0]
    through = build.lines([build.trades(t + 4_000, ("BTC", "99.50", "1.0", t + 4_000, 2))])[0]
    assert enginediff.quietly(eng, [above]) == 1  # above a bid: fills nothing
    assert eng.coin_state("BTC").trade_px == 10_050_000_000  # type: ignore[union-attr]
    after = build.lines([build.trades(t + 3_500, ("BTC", "100.25", "1.0", t + 3_500, 5))])[0]
    # a run of messages: applied up to the first one that is not quiet, which is left
    assert enginediff.quietly(eng, [after, through, above]) == 1
    assert eng.coin_state("BTC").trade_px == 10_025_000_000  # type: ignore[union-attr]
    assert eng.t == t + 3_500
    assert enginediff.quietly(eng, [through]) == 0  # through it: applied by apply, a fill
    assert [type(e).__name__ for e in eng.apply(through)] == ["Fill"]
    due = build.lines([build.trades(eng.next_due, ("BTC", "100.50", "1.0", eng.next_due, 3))])
    assert enginediff.quietly(eng, due) == 0  # a minute mark falls due first


def test_a_recording_engine_says_which_prints_it_applied_and_none_after_the_end() -> None:
    eng = Engine(build.season(end=build.T0 + build.HOUR), record_prints=True)
    t = build.T0 + 1_000
    eng.apply(build.lines([build.register(build.T0, "a")])[0])
    first = build.lines(
        [build.trades(t, ("BTC", "100.00", "1.0", t, 1), ("ETH", "9.0", "2", t, 1))]
    )
    again = build.lines(
        [build.trades(t + 1, ("BTC", "100.00", "1.0", t, 1), ("BTC", "99", "1", t, 2))]
    )
    assert enginediff.quietly(eng, first) == 0  # recording, no flags: nothing applied
    new = bytearray(4)
    assert enginediff.quietly(eng, [*first, *again], new) == 2
    assert list(new) == [1, 1, 0, 1]  # the resent BTC print (tid 1 at t) was not applied
    assert eng.coin_state("BTC").trade_px == 99 * build.E8  # type: ignore[union-attr]
    eng.apply(build.lines([build.trades(t + 2, ("BTC", "101", "1", t + 2, 3))])[0])
    assert [p.px for p in eng.applied_prints] == ["101"]
    end = build.T0 + build.HOUR
    late = build.lines([build.trades(end, ("BTC", "102", "1", end, 4))])[0]
    assert any(type(e).__name__ == "SeasonOver" for e in eng.apply(late))
    # the season ended first: that message applied no print (not the last one's, again)
    assert eng.applied_prints == []


PRINT = st.tuples(
    st.sampled_from(["BTC", "BTC", "SOL", "DOGE"]),
    st.sampled_from(["99.50", "100.00", "100.25", "101.00"]),
    st.integers(0, 3),  # the exchange time, ms before the message: many prints share one
    st.integers(1, 4),  # the tid: often one seen before at that time (a resent print)
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 2), st.lists(PRINT, max_size=4)), max_size=14),
    st.lists(st.integers(0, 3), max_size=14),
)
@pytest.mark.parametrize("recorded", [False, True], ids=["plain", "recording prints"])
def test_runs_of_prints_leave_what_they_leave_one_by_one(
    recorded: bool,
    messages: list[tuple[int, list[tuple[str, str, int, int]]]],
    applied: list[int],
) -> None:
    # The run rule (a coin's prints at their latest time decide its last print) against
    # the print-by-print rule, on prints crowded into few times and tids: many resent,
    # some older than the last print, some at it. ``applied``: messages applied by
    # ``apply`` between the runs (splitting them), as a refused one would be.
    t = build.T0 + 1_000
    rows: list[dict[str, Any]] = [build.register(build.T0, "a")]
    for step, prints in messages:
        t += step
        rows.append(build.trades(t, *[(c, px, "1.0", t - dt, tid) for c, px, dt, tid in prints]))
        if applied and len(rows) % 4 == applied[0]:
            applied.pop(0)
            rows.append(build.book(t, "BTC", bids=[("99.00", "1.0")], asks=[("101.00", "1.0")]))
    lines = [msgspec.json.encode(row) for row in rows]
    assert enginediff.run_case(SEASON_JSON, lines, recorded, quiet=True) == enginediff.run_case(
        SEASON_JSON, lines, recorded
    )
