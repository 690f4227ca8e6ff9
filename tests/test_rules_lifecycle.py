"""Order lifecycle: cancels, expiry, held slots and reserves, registration, the season window.

Hand-computed from the contract (/work/shared/design/season0-engine.md); px/sz e8, money e6.
ETH (asset 1) mark is ctx markPx 2000; equity 1e10, so the cap is exposure + reserve <= 1.2e9.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Reason
from engine.events import (
    Accepted,
    CancelPending,
    Closed,
    Fill,
    MinuteMark,
    Registered,
    Rejected,
    SeasonOver,
)
from tests.build import (
    E8,
    HOUR,
    MIN,
    T0,
    accepted,
    book,
    cancel,
    ctx,
    of,
    order,
    reasons,
    register,
    run,
    season,
    tick,
    trades,
)

S = season()
P = 2000 * E8
SZ_01 = 10_000_000  # 0.1 ETH
SZ_001 = 1_000_000  # 0.01 ETH = 20 USDC at 2000


def base(*rows: dict[str, Any]) -> list[dict[str, Any]]:
    return [register(T0 - 2, "alice"), register(T0 - 1, "bob"), ctx(T0, "ETH", mark="2000"), *rows]


def closed(events: list[Any]) -> list[tuple[int, Reason, int, int]]:
    return [(c.oid, c.reason, c.filled, c.t) for c in of(events, Closed)]


# ---- cancels --------------------------------------------------------------------------


def test_cancel_takes_effect_two_seconds_later_and_the_order_can_fill_until_then() -> None:
    # GTC buy 0.2 at 1990 rests; cancel received at T0+5000 -> effect at T0+7000.
    rows = base(
        order(T0 + 1000, "alice", 1, True, 1990 * E8, 20_000_000),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),
        cancel(T0 + 5000, "alice", oid=1),
        # still on the venue: 25% of 0.4 = 0.1 fills at 1990
        trades(T0 + 6999, ("ETH", "1980", "0.4", T0 + 6000, 1)),
        # stamped exactly on the effect: the cancel runs first, nothing fills
        trades(T0 + 7000, ("ETH", "1980", "0.4", T0 + 6001, 2)),
    )
    _, events = run(S, rows)
    [cp] = of(events, CancelPending)
    assert (cp.t, cp.oid, cp.effective_at) == (T0 + 5000, 1, T0 + 7000)
    assert [(f.t, f.sz) for f in of(events, Fill)] == [(T0 + 6999, SZ_01)]
    assert closed(events) == [(1, Reason.Cancelled, SZ_01, T0 + 7000)]


def test_cancelling_order_holds_its_slot_and_reserve_until_effect() -> None:
    # 0.6 ETH at 2000 reserves 1_200_000_000, the whole cap; 0.005 more (10 USDC) is over.
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, 60_000_000),
        cancel(T0 + 2000, "alice", oid=1),  # effect at T0+4000
        order(T0 + 3999, "alice", 1, True, P, 500_000),
        order(T0 + 4000, "alice", 1, True, P, 500_000),
    )
    _, events = run(S, rows)
    assert reasons(events) == [Reason.PositionCapExceeded]
    assert [(a.oid, a.t) for a in accepted(events)] == [(1, T0 + 1000), (2, T0 + 4000)]
    assert closed(events) == [(1, Reason.Cancelled, 0, T0 + 4000)]


def test_cancel_by_oid_beats_cloid() -> None:
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, SZ_001, cloid="0xa"),  # oid 1
        order(T0 + 1001, "alice", 1, True, P, SZ_001, cloid="0xb"),  # oid 2
        cancel(T0 + 1002, "alice", oid=1, cloid="0xb"),  # oid decides: 1
        cancel(T0 + 1003, "alice", oid=99, cloid="0xb"),  # oid 99 unknown: not found
        cancel(T0 + 1004, "alice", cloid="0xB"),  # by cloid (a number, either case): 2
    )
    _, events = run(S, rows)
    assert [(c.oid, c.effective_at) for c in of(events, CancelPending)] == [
        (1, T0 + 3002),
        (2, T0 + 3004),
    ]
    [rej] = of(events, Rejected)
    assert (rej.reason, rej.request, rej.oid) == (Reason.OrderNotFound, "cancel", 99)


@pytest.mark.parametrize("which", ["unknown", "other", "again", "closed", "zero", "none"])
def test_order_not_found(which: str) -> None:
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, SZ_001, cloid="0x5"),  # oid 1, stays pending
        order(T0 + 1001, "bob", 1, True, P, SZ_001, cloid="0x6"),  # oid 2
        order(T0 + 1002, "alice", 1, True, P, SZ_001, tif=3, cloid="0x7"),  # oid 3: IOC
        book(T0 + 3002, "ETH", asks=[("2001", "1")]),  # closes the IOC (nothing within 2000)
    )
    # oid 1 was received at T0+1000 and activated on this book too: it rests unfilled.
    bad = {
        "unknown": [cancel(T0 + 4000, "alice", oid=42)],
        "other": [cancel(T0 + 4000, "alice", oid=2), cancel(T0 + 4001, "alice", cloid="0x6")],
        "again": [cancel(T0 + 4000, "alice", oid=1), cancel(T0 + 4001, "alice", cloid="0x5")],
        "closed": [cancel(T0 + 4000, "alice", oid=3), cancel(T0 + 4001, "alice", cloid="0x7")],
        "zero": [cancel(T0 + 4000, "alice", cloid="0x0")],
        "none": [cancel(T0 + 4000, "alice")],
    }[which]
    _, events = run(S, rows + bad)
    expected = len(bad) - (1 if which == "again" else 0)
    assert reasons(events) == [Reason.OrderNotFound] * expected
    assert {r.request for r in of(events, Rejected)} <= {"cancel"}
    assert [c.oid for c in of(events, CancelPending)] == ([1] if which == "again" else [])


def test_cancels_and_orders_of_unregistered_entries_are_ignored() -> None:
    rows = base(
        order(T0 + 1000, "mallory", 1, True, P, SZ_001),
        cancel(T0 + 1001, "mallory", oid=1),
        order(T0 + 1002, "alice", 1, True, P, SZ_001),
    )
    _, events = run(S, rows)
    # nothing for mallory at all, and no oid used: alice's order is oid 1
    assert all(getattr(e, "entry", "") != "mallory" for e in events)
    assert [(a.entry, a.oid) for a in accepted(events)] == [("alice", 1)]


# ---- expiry and held reserves ---------------------------------------------------------


def test_order_expires_one_hour_after_receipt() -> None:
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, SZ_001),  # never activated: no book
        tick(T0 + 1000 + HOUR - 1),
    )
    _, events = run(S, rows)
    assert closed(events) == []
    rows.append(tick(T0 + 1000 + HOUR))
    _, events = run(S, rows)
    assert closed(events) == [(1, Reason.OrderExpired, 0, T0 + 1000 + HOUR)]


def test_expiry_before_a_later_cancel_effect_closes_once() -> None:
    # cancel received 1 s before expiry: effect 1 s after it, by then the order is gone
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, SZ_001),
        cancel(T0 + HOUR, "alice", oid=1),
        tick(T0 + HOUR + 5000),
    )
    _, events = run(S, rows)
    assert closed(events) == [(1, Reason.OrderExpired, 0, T0 + 1000 + HOUR)]


@pytest.mark.parametrize("how", ["cancel", "expiry"])
def test_filled_gtc_holds_slot_and_reserve_until_it_leaves(how: str) -> None:
    # GTC buy 0.1 at 2000 fills in full: n = 200_000_000, fees 90_000 + 40_000.
    # cash = 9_799_870_000; equity = cash + 0.1 * 2000 = 9_999_870_000; * 12 = 119_998_440_000
    # exposure = position 200_000_000 + the filled order's reserve 200_000_000
    # a buy 0.4 at 2000 reserves 800_000_000:
    #   held:     (400_000_000 + 800_000_000) * 100 = 120_000_000_000 > 119_998_440_000
    #   released: (200_000_000 + 800_000_000) * 100 = 100_000_000_000 <=
    leave = T0 + 7000 if how == "cancel" else T0 + 1000 + HOUR
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, SZ_01),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),
        *([cancel(T0 + 5000, "alice", oid=1)] if how == "cancel" else []),
        order(leave - 1, "alice", 1, True, P, 40_000_000),
        order(leave, "alice", 1, True, P, 40_000_000),
    )
    eng, events = run(S, rows)
    assert [(f.oid, f.sz) for f in of(events, Fill)] == [(1, SZ_01)]
    reason = Reason.Cancelled if how == "cancel" else Reason.OrderExpired
    assert closed(events) == [(1, reason, SZ_01, leave)]
    assert reasons(events) == [Reason.PositionCapExceeded]
    assert [(a.oid, a.reserve) for a in accepted(events)] == [(1, 200_000_000), (2, 800_000_000)]
    assert eng.accounts["alice"].cash == 9_799_870_000


# ---- registration ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("alice", True),
        ("a", True),
        ("a" * 32, True),
        ("z-9_x", True),
        ("", False),
        ("a" * 33, False),
        ("Alice", False),
        ("a b", False),
        ("a.b", False),
        ("é", False),
        ("alice\n", False),
    ],
)
def test_registration_names(name: str, ok: bool) -> None:
    _, events = run(S, [register(T0 - 1, name)])
    assert [r.entry for r in of(events, Registered)] == ([name] if ok else [])


def test_duplicate_registration_is_ignored_and_keeps_the_first() -> None:
    rows = [
        register(T0 - 3, "alice"),
        register(T0 - 2, "bob"),
        ctx(T0, "ETH", mark="2000"),
        order(T0 + 1000, "alice", 1, True, P, SZ_01, tif=3),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),
        register(T0 + 4000, "alice"),  # ignored: alice keeps her position and cash
    ]
    eng, events = run(S, rows)
    assert [r.entry for r in of(events, Registered)] == ["alice", "bob"]
    assert list(eng.accounts) == ["alice", "bob"]
    assert eng.accounts["alice"].positions == {1: SZ_01}
    assert eng.accounts["alice"].cash == 9_799_870_000  # 1e10 - 200_000_000 - 130_000


# ---- the season window ----------------------------------------------------------------

SHORT = season(end=T0 + 2 * MIN)


@pytest.mark.parametrize(
    ("t", "ok"),
    [
        (T0 - 1, False),
        (T0, True),
        (T0 + 2 * MIN - 1, True),
        (T0 + 2 * MIN, False),
        (T0 + 2 * MIN + 1000, False),
    ],
)
def test_orders_outside_the_window_get_season_not_active(t: int, ok: bool) -> None:
    # "An order received before `start` or at/after `end` is rejected with SeasonNotActive."
    rows = [
        register(T0 - 10, "alice"),
        ctx(T0 - 5, "ETH", mark="2000"),
        order(t, "alice", 1, True, P, SZ_001),
    ]
    _, events = run(SHORT, rows)
    if ok:
        assert [a.oid for a in accepted(events)] == [1]
    else:
        assert accepted(events) == []
        assert reasons(events) == [Reason.SeasonNotActive]


def test_nothing_changes_after_the_season_is_over() -> None:
    end = T0 + 2 * MIN
    rows = [
        register(T0 - 10, "alice"),
        ctx(T0 - 5, "ETH", mark="2000"),
        order(T0 + 1000, "alice", 1, True, 1990 * E8, SZ_01),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),  # rests at 1990
        # stamped exactly on end: applied after end's timed events, so after the season
        trades(end, ("ETH", "1980", "1", end - 10, 1)),
        register(end, "bob"),
        trades(end + 1000, ("ETH", "1980", "1", end + 500, 2)),
        ctx(end + 1000, "ETH", mark="1000"),
        cancel(end + 1001, "alice", oid=1),
        register(end + 1002, "carol"),
        tick(end + 10 * MIN),
    ]
    eng, events = run(SHORT, rows)
    assert of(events, Fill) == []
    assert of(events, CancelPending) == []
    assert [r.entry for r in of(events, Registered)] == ["alice"]
    assert [m.t for m in of(events, MinuteMark)] == [T0 + MIN, end]
    assert [e.t for e in of(events, SeasonOver)] == [end]
    assert eng.final
    alice = eng.accounts["alice"]
    assert (alice.cash, alice.positions, list(alice.orders)) == (10_000_000_000, {}, [1])
    assert list(eng.accounts) == ["alice"]
    assert not any(isinstance(e, Accepted | Closed) and e.t >= end for e in events)
