"""``Engine.snapshot`` and ``Engine.restore`` are exact: a restored engine is the engine.

For any log and any cut point, an engine restored from the snapshot taken after the cut
(sent through msgpack and JSON, as a checkpoint file would carry it) gives, line by line,
the same events for the rest of the log as the engine that never stopped, and ends in the
same state. Hypothesis draws short random seasons (books, one-sided books, resent prints,
contexts, orders of every kind, cancels, time steps past funding, fee and mark boundaries
and the season's end) and cut points in them; the committed 12-day golden log is cut at
random points and at the first point where each kind of state exists (an order pending,
one resting, a position).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.logs.logfile import LogReader
from arena_tui.season.file import load_season
from engine import Engine, Line, Season
from tests import build

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_LOG = ROOT / "tests" / "golden" / "multiday.jsonl.gz"
GOLDEN_SEASON = ROOT / "tests" / "golden" / "multiday.toml"
SEASON = build.season(
    start=build.T0,
    end=build.T0 + 3 * build.HOUR,
    markets=(build.BTC, build.SOL),
    performance_fee_period_ms=build.HOUR,
    drawdown_limit_pct=1,
    position_cap_pct=60,
    max_open_orders=4,
    activation_delay_ms=3_000,
)


def through_storage(snap: dict[str, Any]) -> dict[str, Any]:
    """What a checkpoint gives back: msgpack (the host's encoding), then JSON."""
    packed = msgspec.msgpack.decode(msgspec.msgpack.encode(snap))
    return json.loads(json.dumps(packed))  # type: ignore[no-any-return]


def cut_and_compare(season: Season, lines: list[Line], cut: int) -> None:
    whole = Engine(season)
    for line in lines[:cut]:
        whole.apply(line)
    snap = whole.snapshot()
    restored = Engine.restore(season, through_storage(snap))
    assert restored.snapshot() == snap
    for i, line in enumerate(lines[cut:], start=cut):
        assert restored.apply(line) == whole.apply(line), f"line {i} after a cut at {cut}"
    assert restored.snapshot() == whole.snapshot()
    assert restored.standings() == whole.standings()
    assert restored.next_due == whole.next_due


# ---- random seasons ------------------------------------------------------------------

PX = [99_990, 99_995, 100_000, 100_005, 100_010]


@st.composite
def season_rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    t = build.T0 - build.MIN
    rows = [build.register(t, "alice"), build.register(t, "bob")]
    tid = 0
    for _ in range(draw(st.integers(5, 60))):
        t += draw(st.sampled_from([1, 300, 700, 700, 2_500, 61_000, 20 * build.MIN, build.HOUR]))
        kind = draw(st.sampled_from(["book", "book", "trade", "ctx", "order", "order", "cancel"]))
        mid = draw(st.sampled_from(PX))
        if kind == "book":
            bids = [(f"{mid - 1 - i}", "0.5") for i in range(3)]
            asks = [(f"{mid + 1 + i}", "0.5") for i in range(3)]
            side = draw(st.sampled_from(["both", "both", "bids", "asks"]))
            stale = draw(st.sampled_from([0, 0, 20_000]))
            rows.append(
                build.book(
                    t,
                    "BTC",
                    t - stale,
                    bids if side != "asks" else [],
                    asks if side != "bids" else [],
                )
            )
        elif kind == "trade":
            tid += draw(st.sampled_from([0, 1, 1]))  # sometimes a resent print
            rows.append(build.trades(t, ("BTC", f"{mid}", "0.4", t, tid)))
        elif kind == "ctx":
            mark = draw(st.none() | st.just(f"{mid}"))
            rows.append(build.ctx(t, "BTC", mark=mark, oracle=f"{mid}", funding="0.0001"))
        elif kind == "order":
            rows.append(
                build.order(
                    t,
                    draw(st.sampled_from(["alice", "bob", "carol"])),
                    0,
                    draw(st.booleans()),
                    draw(st.sampled_from(PX)) * build.E8,
                    draw(st.sampled_from([1_000, 50_000, 100_000, 2_000_000])),
                    tif=draw(st.sampled_from([1, 2, 2, 3])),
                    reduce_only=draw(st.booleans()),
                    cloid=draw(st.none() | st.sampled_from(["0x1", "0x2"])),
                )
            )
        else:
            oid = draw(st.none() | st.integers(1, 4))
            rows.append(build.cancel(t, draw(st.sampled_from(["alice", "bob"])), oid=oid or None))
    return rows


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=season_rows(), data=st.data())
def test_a_restored_engine_gives_the_same_events_as_one_never_stopped(
    rows: list[dict[str, Any]], data: st.DataObject
) -> None:
    lines = build.lines(rows)
    cut = data.draw(st.integers(0, len(lines)), label="cut")
    cut_and_compare(SEASON, lines, cut)


# ---- a real 12-day log ---------------------------------------------------------------


@cache
def golden() -> tuple[Season, list[Line]]:
    season = load_season(GOLDEN_SEASON)
    return season, list(LogReader([GOLDEN_LOG]))


def first_cuts() -> dict[str, int]:
    """The first cut after which each kind of state exists in the golden log."""
    season, lines = golden()
    eng = Engine(season)
    found: dict[str, int] = {}
    for i, line in enumerate(lines, start=1):
        eng.apply(line)
        orders = [o for e in eng.entries() for o in eng.open_orders_of(e)]
        seen = {
            "pending": any(o.state == 0 for o in orders),
            "resting": any(o.state == 1 for o in orders),
            "position": any(a.positions for e in eng.entries() if (a := eng.account(e))),
        }
        for name, here in seen.items():
            if here and name not in found:
                found[name] = i
        if len(found) == len(seen):
            break
    return found


@pytest.mark.parametrize("state", ["pending", "resting", "position"])
def test_the_golden_log_cut_where_state_is_in_flight(state: str) -> None:
    cuts = first_cuts()
    assert state in cuts, f"the golden log never has a {state} state"
    season, lines = golden()
    cut_and_compare(season, lines, cuts[state])


@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_the_golden_log_cut_anywhere(data: st.DataObject) -> None:
    season, lines = golden()
    cut_and_compare(season, lines, data.draw(st.integers(0, len(lines)), label="cut"))


def test_a_snapshot_of_another_season_is_refused() -> None:
    snap = Engine(SEASON).snapshot()
    other = build.season(markets=(build.BTC, build.ETH))
    with pytest.raises(ValueError, match="markets"):
        Engine.restore(msgspec.structs.replace(other, id=SEASON.id), snap)
    with pytest.raises(ValueError, match="season"):
        Engine.restore(msgspec.structs.replace(SEASON, id="other"), snap)
    with pytest.raises(ValueError, match="version"):
        Engine.restore(SEASON, {**snap, "version": 99})
