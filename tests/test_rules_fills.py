"""Fills: activation, the taker walk, ALO, resting fills on prints, duplicates, fees.

Hand-computed from the contract (/work/shared/design/season0-engine.md); px/sz e8, money e6.
ETH (asset 1): lot 10^4 e8. notional(px, sz) = px * sz / 1e10 truncated.
Fees: venue = n * 45 / 1e5 (taker) or n * 15 / 1e5 (maker); exec = n * 20 / 1e5, truncated.
The ETH mark is ctx markPx 2000 throughout (a book never changes it then).
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Reason
from engine.events import Activated, Closed, Fill
from tests.build import (
    E8,
    T0,
    accepted,
    book,
    ctx,
    fill_rows,
    of,
    order,
    reasons,
    register,
    run,
    season,
    trades,
)

S = season()
P = 2000 * E8
SZ_01 = 10_000_000  # 0.1 ETH; at 2000: n = 2000e8 * 1e7 / 1e10 = 200_000_000
# taker 0.1 @ 2000: venue = 200_000_000 * 45 / 1e5 = 90_000, exec = * 20 / 1e5 = 40_000
TAKE_2000 = (P, SZ_01, True, 90_000, 40_000)


def base(*rows: dict[str, Any], entries: tuple[str, ...] = ("alice",)) -> list[dict[str, Any]]:
    regs = [register(T0 - 100 + i, e) for i, e in enumerate(entries)]
    return [*regs, ctx(T0, "ETH", mark="2000"), *rows]


def fills_of(events: list[Any]) -> list[tuple[int, int, int, bool, int, int]]:
    """(oid, px, sz, taker, venue_fee, exec_fee) of every fill."""
    return [r[1:] for r in fill_rows(events)]


# ---- activation -----------------------------------------------------------------------


def test_activation_at_first_book_at_or_after_receipt_plus_delay() -> None:
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, SZ_01),  # activates at T0 + 3000 or later
        book(T0 + 2999, "ETH", asks=[("2000", "1")]),  # too early
        book(T0 + 3000, "BTC", asks=[("50000", "1")]),  # another coin
        book(T0 + 3000, "ETH", time=T0 + 2990, asks=[("2000", "1")]),
    )
    _, events = run(S, rows)
    assert [(a.oid, a.t, a.book_time) for a in of(events, Activated)] == [(1, T0 + 3000, T0 + 2990)]
    # 25% of 1 ETH = 0.25 >= 0.1: the whole order at 2000 as taker
    assert fills_of(events) == [(1, *TAKE_2000)]


@pytest.mark.parametrize(
    ("lag", "fill_px", "fill_t"),
    [
        (10_000, 2000, T0 + 3000),  # receive - exchange time = 10_000: not stale
        (10_001, 2001, T0 + 5000),  # exceeds 10_000: stale, skipped; the next book is used
    ],
)
def test_stale_book_is_skipped(lag: int, fill_px: int, fill_t: int) -> None:
    rows = base(
        order(T0 + 1000, "alice", 1, True, 2005 * E8, SZ_01),
        book(T0 + 3000, "ETH", time=T0 + 3000 - lag, asks=[("2000", "1")]),
        book(T0 + 5000, "ETH", asks=[("2001", "1")]),
    )
    _, events = run(S, rows)
    [f] = fill_rows(events)
    assert (f[2], f[3]) == (fill_px * E8, SZ_01)
    assert [a.t for a in of(events, Activated)] == [fill_t]


def test_pending_orders_activate_in_oid_order_and_the_book_is_not_depleted() -> None:
    # The ask level holds 0.4 ETH: 25% = 0.1 for every order of every entry (no depletion).
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, SZ_01),
        order(T0 + 1001, "bob", 1, True, P, SZ_01),
        order(T0 + 1002, "alice", 1, True, P, SZ_01),
        book(T0 + 4000, "ETH", asks=[("2000", "0.4")]),
        entries=("alice", "bob"),
    )
    eng, events = run(S, rows)
    assert [(r[0], r[1], r[3]) for r in fill_rows(events)] == [
        ("alice", 1, SZ_01),
        ("bob", 2, SZ_01),
        ("alice", 3, SZ_01),
    ]
    assert eng.accounts["alice"].positions == {1: 2 * SZ_01}
    assert eng.accounts["bob"].positions == {1: SZ_01}


# ---- the taker walk -------------------------------------------------------------------


def test_taker_walk_levels_lots_limit_and_resting_remainder() -> None:
    # GTC buy 0.5 at 2005 (reserve 2005 * 0.5 = 1002.5 USDC, under the 1200 cap).
    # 2000   x 0.4    -> 25% = 0.1                                 fill 10_000_000
    # 2001   x 0.0007 -> 25% = 17_500 e8 -> whole lots: 10_000     fill 10_000
    # 2001.5 x 0.0003 -> 25% = 7_500 e8 -> 0 lots: passed, the walk goes on
    # 2002   x 1      -> 25% = 0.25 = 25_000_000; remaining 39_990_000  fill 25_000_000
    # 2010   > 2005: the walk stops, so 2003 (delivered after it) is never reached
    rows = base(
        order(T0 + 1000, "alice", 1, True, 2005 * E8, 50_000_000),
        book(
            T0 + 3000,
            "ETH",
            asks=[
                ("2000", "0.4"),
                ("2001", "0.0007"),
                ("2001.5", "0.0003"),
                ("2002", "1"),
                ("2010", "10"),
                ("2003", "1"),
            ],
        ),
    )
    eng, events = run(S, rows)
    assert fills_of(events) == [
        (1, *TAKE_2000),
        # n = 2001e8 * 1e4 / 1e10 = 200_100; venue 200_100*45/1e5 = 90.045 -> 90; exec 40.02 -> 40
        (1, 2001 * E8, 10_000, True, 90, 40),
        # n = 2002e8 * 25e6 / 1e10 = 500_500_000; venue 225_225; exec 100_100
        (1, 2002 * E8, 25_000_000, True, 225_225, 100_100),
    ]
    # cash = 1e10 - 200_130_000 - 200_230 - 500_825_325 = 9_298_844_445
    alice = eng.accounts["alice"]
    assert alice.cash == 9_298_844_445
    assert alice.positions == {1: 35_010_000}
    assert of(events, Closed) == []  # GTC: the remainder 14_990_000 rests at 2005

    # The rest is through the market; it fills only on prints below 2005, at 2005, as maker:
    # print 0.1 -> 25% = 2_500_000; n = 2005e8 * 2.5e6 / 1e10 = 50_125_000;
    # venue = 50_125_000 * 15 / 1e5 = 7_518.75 -> 7_518; exec = 10_025
    rows.append(trades(T0 + 4000, ("ETH", "2004", "0.1", T0 + 3500, 1)))
    eng, events = run(S, rows)
    assert fills_of(events)[3:] == [(1, 2005 * E8, 2_500_000, False, 7_518, 10_025)]
    assert eng.accounts["alice"].cash == 9_298_844_445 - 50_125_000 - 7_518 - 10_025


def test_sell_ioc_walks_bids_and_closes_with_remainder() -> None:
    # IOC sell 0.3 at 1990 (reserve at the mark: 2000 * 0.3 = 600 USDC)
    # 2000 x 0.4 -> 0.1; 1995 x 0.4 -> 0.1; 1989 < 1990 -> stop
    rows = base(
        order(T0 + 1000, "alice", 1, False, 1990 * E8, 30_000_000, tif=3),
        book(T0 + 3000, "ETH", bids=[("2000", "0.4"), ("1995", "0.4"), ("1989", "4")]),
    )
    eng, events = run(S, rows)
    assert fills_of(events) == [
        (1, *TAKE_2000),
        # n = 1995e8 * 1e7 / 1e10 = 199_500_000; venue 89_775; exec 39_900
        (1, 1995 * E8, SZ_01, True, 89_775, 39_900),
    ]
    assert [(c.oid, c.reason, c.filled, c.t) for c in of(events, Closed)] == [
        (1, Reason.IocRemainder, 20_000_000, T0 + 3000)
    ]
    # cash = 1e10 + 200_000_000 - 130_000 + 199_500_000 - 129_675 = 10_399_240_325
    assert eng.accounts["alice"].cash == 10_399_240_325
    assert eng.accounts["alice"].positions == {1: -20_000_000}
    assert eng.accounts["alice"].orders == {}


def test_ioc_filled_in_full_is_closed_without_remainder() -> None:
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, SZ_01, tif=3),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),
    )
    eng, events = run(S, rows)
    assert fills_of(events) == [(1, *TAKE_2000)]
    [c] = of(events, Closed)
    assert (c.oid, c.filled) == (1, SZ_01)
    assert c.reason != Reason.IocRemainder
    assert eng.accounts["alice"].orders == {}


def test_ioc_releases_slot_and_reserve_at_activation() -> None:
    # IOC buy 0.6 at 2000 reserves 1_200_000_000 (the whole cap); nothing within the limit.
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, 60_000_000, tif=3),
        order(T0 + 2999, "alice", 1, True, P, 500_000),  # 10 USDC more: over the cap
        book(T0 + 3000, "ETH", asks=[("2001", "1")]),
        order(T0 + 3001, "alice", 1, True, P, 60_000_000),  # the cap is free again
    )
    _, events = run(S, rows)
    assert [(c.oid, c.reason, c.filled) for c in of(events, Closed)] == [
        (1, Reason.IocRemainder, 0)
    ]
    assert reasons(events) == [Reason.PositionCapExceeded]
    assert [(a.oid, a.reserve) for a in accepted(events)] == [
        (1, 1_200_000_000),
        (2, 1_200_000_000),
    ]


# ---- ALO ------------------------------------------------------------------------------

ALO_CASES = [
    # (isBuy, limit, bids, asks, crosses, print px that then fills it at the limit)
    (True, "2000", [("1990", "1")], [("2000", "1")], True, None),  # buy >= best ask
    (True, "1999", [("1990", "1")], [("2000", "1")], False, "1998"),
    (False, "2000", [("2000", "1")], [("2010", "1")], True, None),  # sell <= best bid
    (False, "2001", [("2000", "1")], [("2010", "1")], False, "2002"),
    (True, "2000", [("1990", "1")], [], False, "1999"),  # empty asks: does not cross
    (False, "1999", [], [("2010", "1")], False, "2000"),  # empty bids: does not cross
]


@pytest.mark.parametrize(("is_buy", "limit", "bids", "asks", "crosses", "through"), ALO_CASES)
def test_alo_cross_check_at_activation_only(
    is_buy: bool,
    limit: str,
    bids: list[tuple[str, str]],
    asks: list[tuple[str, str]],
    crosses: bool,
    through: str | None,
) -> None:
    lpx = int(limit) * E8
    rows = base(
        order(T0 + 1000, "alice", 1, is_buy, lpx, SZ_01, tif=1),
        book(T0 + 3000, "ETH", bids=bids, asks=asks),
        # a later book through the limit on both sides: the cross check is not repeated
        book(T0 + 4000, "ETH", bids=[("2500", "1")], asks=[("1500", "1")]),
    )
    if through is not None:
        rows.append(trades(T0 + 5000, ("ETH", through, "0.4", T0 + 4500, 1)))
    _, events = run(S, rows)
    closed = [(c.oid, c.reason) for c in of(events, Closed)]
    if crosses:
        assert closed == [(1, Reason.PostOnlyWouldCross)]
        assert fills_of(events) == []
    else:
        assert closed == []
        # maker at its own price: 25% of 0.4 = 0.1; n = limit * 0.1; venue 15 dbps, exec 20
        n = int(limit) * 100_000  # limit(e8) * 1e7 / 1e10 = limit * 1e5 e6
        assert fills_of(events) == [(1, lpx, SZ_01, False, n * 15 // 100_000, n * 20 // 100_000)]


# ---- resting orders and prints --------------------------------------------------------


def test_resting_buy_fills_only_strictly_through_at_its_price() -> None:
    # GTC buy 0.2 at 1990 rests (best ask 2000). Prints in one message, in order:
    # 1990 touch -> nothing; 1991 above -> nothing;
    # 1989.5 x 0.4 -> 25% = 0.1 -> fill 10_000_000 at 1990:
    #   n = 1990e8 * 1e7 / 1e10 = 199_000_000; venue *15/1e5 = 29_850; exec *20/1e5 = 39_800
    # 1980 x 0.0007 -> 25% = 17_500 e8 -> 1 lot = 10_000 at 1990:
    #   n = 1990e8 * 1e4 / 1e10 = 199_000; venue 29.85 -> 29; exec 39.8 -> 39
    # 1980 x 0.0003 -> 25% = 7_500 e8 -> 0 lots: nothing
    # 1980 x 10 -> 25% = 2.5; remaining 20_000_000 - 10_010_000 = 9_990_000:
    #   n = 1990e8 * 9_990_000 / 1e10 = 198_801_000; venue 29_820.15 -> 29_820; exec 39_760
    # 1970 x 10 -> the order is filled: nothing
    prints = [("1990", "1"), ("1991", "1"), ("1989.5", "0.4"), ("1980", "0.0007")]
    prints += [("1980", "0.0003"), ("1980", "10"), ("1970", "10")]
    rows = base(
        order(T0 + 1000, "alice", 1, True, 1990 * E8, 20_000_000),
        book(T0 + 3000, "ETH", bids=[("1980", "1")], asks=[("2000", "1")]),
        trades(
            T0 + 4000, *[("ETH", px, sz, T0 + 3100 + i, i) for i, (px, sz) in enumerate(prints)]
        ),
    )
    eng, events = run(S, rows)
    px = 1990 * E8
    assert fills_of(events) == [
        (1, px, 10_000_000, False, 29_850, 39_800),
        (1, px, 10_000, False, 29, 39),
        (1, px, 9_990_000, False, 29_820, 39_760),
    ]
    # 1e10 - 199_069_650 - 199_068 - 198_870_580 = 9_601_860_702
    alice = eng.accounts["alice"]
    assert alice.cash == 9_601_860_702
    assert alice.positions == {1: 20_000_000}
    assert list(alice.orders) == [1]  # a filled GTC stays open


def test_resting_sell_fills_only_above_its_price() -> None:
    # GTC sell 0.1 at 2010 rests (best bid 2000). 2010 touch: nothing. 2011 x 0.4 -> 0.1 at 2010:
    # n = 2010e8 * 1e7 / 1e10 = 201_000_000; venue 30_150; exec 40_200
    rows = base(
        order(T0 + 1000, "alice", 1, False, 2010 * E8, SZ_01),
        book(T0 + 3000, "ETH", bids=[("2000", "1")], asks=[("2020", "1")]),
        trades(T0 + 4000, ("ETH", "2010", "5", T0 + 3500, 1)),
        trades(T0 + 4001, ("ETH", "2011", "0.4", T0 + 3501, 2)),
    )
    _, events = run(S, rows)
    assert fills_of(events) == [(1, 2010 * E8, SZ_01, False, 30_150, 40_200)]


def test_every_resting_order_sees_each_print_in_full() -> None:
    rows = base(
        order(T0 + 1000, "alice", 1, True, 1990 * E8, SZ_01),
        order(T0 + 1000, "bob", 1, True, 1990 * E8, SZ_01),
        order(T0 + 1000, "alice", 1, True, 1995 * E8, SZ_01),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),
        # 25% of 0.4 = 0.1 for each order, in oid order
        trades(T0 + 4000, ("ETH", "1980", "0.4", T0 + 3500, 1)),
        entries=("alice", "bob"),
    )
    _, events = run(S, rows)
    assert [(r[0], r[1], r[2], r[3]) for r in fill_rows(events)] == [
        ("alice", 1, 1990 * E8, SZ_01),
        ("bob", 2, 1990 * E8, SZ_01),
        ("alice", 3, 1995 * E8, SZ_01),
    ]


def test_print_must_be_applied_after_activation_and_not_older_than_its_book() -> None:
    # The activating book arrives at T0+3000 with exchange time T0+2500.
    rows = base(
        order(T0 + 1000, "alice", 1, True, 1990 * E8, SZ_01),
        trades(T0 + 2000, ("ETH", "1980", "1", T0 + 1999, 1)),  # still pending: nothing
        book(T0 + 3000, "ETH", time=T0 + 2500, asks=[("2000", "1")]),
        trades(T0 + 4000, ("ETH", "1980", "1", T0 + 2499, 2)),  # older than the book: nothing
        trades(T0 + 4001, ("ETH", "1980", "1", T0 + 2500, 3)),  # equal: fills 0.1 at 1990
    )
    _, events = run(S, rows)
    [f] = fill_rows(events)
    assert (f[1], f[2], f[3]) == (1, 1990 * E8, SZ_01)
    assert [e.t for e in of(events, Fill)] == [T0 + 4001]


def test_duplicate_prints_by_time_and_tid_including_resend_after_reconnect() -> None:
    # GTC buy 0.5 at 1990 (reserve 2000 * 0.5 = 1000). Each applied print of 0.04 fills
    # 25% = 0.01 at 1990: n = 19_900_000; venue 2_985; exec 3_980.
    x = T0 + 3500

    def pr(time: int, tid: int) -> tuple[str, str, str, int, int]:
        return ("ETH", "1980", "0.04", time, tid)

    rows = base(
        order(T0 + 1000, "alice", 1, True, 1990 * E8, 50_000_000),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),
        trades(T0 + 4000, pr(x, 1), pr(x, 2)),  # both applied
        # same time and an applied tid: ignored; same time, new tid: applied; older: ignored
        trades(T0 + 4100, pr(x, 1), pr(x, 3), pr(x - 1, 9)),
        trades(T0 + 4200, pr(x + 5, 4)),  # later: applied
        # reconnect: the recent trades again, all already applied or older
        trades(T0 + 9000, pr(x, 1), pr(x, 2), pr(x, 3), pr(x + 5, 4)),
        # new prints at the latest time: tid 5, and tid 1 (applied only at time x, not x+5)
        trades(T0 + 9100, pr(x + 5, 5), pr(x + 5, 1)),
    )
    _, events = run(S, rows)
    fills = of(events, Fill)
    assert [f.t - T0 for f in fills] == [4000, 4000, 4100, 4200, 9100, 9100]
    assert {(f.px, f.sz, f.venue_fee, f.exec_fee) for f in fills} == {
        (1990 * E8, 1_000_000, 2_985, 3_980)
    }


# ---- reduce-only ----------------------------------------------------------------------


def test_reduce_only_clamped_level_by_level() -> None:
    # Long 0.15 first: IOC buy at 2000, n = 300_000_000, fees 135_000 + 60_000.
    # Reduce-only IOC sell 0.3 at 1990 against 2000 x 0.4, 1995 x 0.4, 1990 x 4:
    #   2000: min(0.3, 0.1, room 0.15) = 0.1 -> position 0.05
    #   1995: min(0.2, 0.1, room 0.05) = 0.05 -> position 0
    #         n = 1995e8 * 5e6 / 1e10 = 99_750_000; venue 44_887.5 -> 44_887; exec 19_950
    #   1990: room 0 -> no fill; IocRemainder with 0.15 filled
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, 15_000_000, tif=3),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),
        order(T0 + 4000, "alice", 1, False, 1990 * E8, 30_000_000, tif=3, reduce_only=True),
        book(T0 + 6000, "ETH", bids=[("2000", "0.4"), ("1995", "0.4"), ("1990", "4")]),
    )
    eng, events = run(S, rows)
    assert fills_of(events) == [
        (1, P, 15_000_000, True, 135_000, 60_000),
        (2, *TAKE_2000),
        (2, 1995 * E8, 5_000_000, True, 44_887, 19_950),
    ]
    assert [(c.oid, c.filled) for c in of(events, Closed)] == [(1, 15_000_000), (2, 15_000_000)]
    assert of(events, Closed)[1].reason == Reason.IocRemainder
    # 1e10 - 300_195_000 + 200_000_000 - 130_000 + 99_750_000 - 64_837 = 9_999_360_163
    assert eng.accounts["alice"].cash == 9_999_360_163
    assert eng.accounts["alice"].positions == {}


def test_reduce_only_zero_clamp_leaves_the_order_as_it_is() -> None:
    # Reduce-only GTC sell 0.1 at 2100 with no position: at activation the walk stops at
    # 2000 < 2100; a print through (2200) would fill it, but the clamp is 0: nothing.
    # After alice buys 0.1 (IOC at 2200), the next print through fills min(0.1, 0.25, 0.1).
    rows = base(
        order(T0 + 1000, "alice", 1, False, 2100 * E8, SZ_01, reduce_only=True),
        book(T0 + 3000, "ETH", bids=[("2000", "1")], asks=[("2200", "1")]),
        trades(T0 + 4000, ("ETH", "2200", "1", T0 + 3500, 1)),
        order(T0 + 5000, "alice", 1, True, 2200 * E8, SZ_01, tif=3),
        book(T0 + 7000, "ETH", bids=[("2000", "1")], asks=[("2200", "1")]),
        trades(T0 + 8000, ("ETH", "2201", "1", T0 + 7500, 2)),
    )
    eng, events = run(S, rows)
    # taker 0.1 at 2200: n = 220_000_000; venue 99_000; exec 44_000
    # maker 0.1 at 2100: n = 210_000_000; venue 31_500; exec 42_000
    assert fills_of(events) == [
        (2, 2200 * E8, SZ_01, True, 99_000, 44_000),
        (1, 2100 * E8, SZ_01, False, 31_500, 42_000),
    ]
    assert [c.oid for c in of(events, Closed)] == [2]  # the reduce-only order never closed
    assert eng.accounts["alice"].positions == {}
    # 1e10 - 220_143_000 + 210_000_000 - 73_500 = 9_989_783_500
    assert eng.accounts["alice"].cash == 9_989_783_500


def test_two_reduce_only_orders_share_one_position_on_a_print() -> None:
    # Long 0.15 (IOC at 2000: n = 300_000_000, fees 135_000 + 60_000), then two reduce-only
    # GTC sells rest: oid 2 at 2100, oid 3 at 2050. One print 2200 x 1 (25% = 0.25), oid order:
    #   oid 2: min(0.1, 0.25, room 0.15) = 0.1 at 2100: n = 210_000_000; 31_500 + 42_000
    #   oid 3: min(0.1, 0.25, room 0.05) = 0.05 at 2050: n = 102_500_000; 15_375 + 20_500
    # A second print finds room 0: nothing; oid 3 stays open with 0.05 unfilled.
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, 15_000_000, tif=3),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),
        order(T0 + 4000, "alice", 1, False, 2100 * E8, SZ_01, reduce_only=True),
        order(T0 + 4001, "alice", 1, False, 2050 * E8, SZ_01, reduce_only=True),
        book(T0 + 6001, "ETH", bids=[("2000", "1")]),
        trades(T0 + 7000, ("ETH", "2200", "1", T0 + 6500, 1)),
        trades(T0 + 8000, ("ETH", "2200", "1", T0 + 7500, 2)),
    )
    eng, events = run(S, rows)
    assert fills_of(events)[1:] == [
        (2, 2100 * E8, SZ_01, False, 31_500, 42_000),
        (3, 2050 * E8, 5_000_000, False, 15_375, 20_500),
    ]
    alice = eng.accounts["alice"]
    assert (alice.positions, list(alice.orders)) == ({}, [2, 3])
    # 1e10 - 300_195_000 + 210_000_000 - 73_500 + 102_500_000 - 35_875 = 10_012_195_625
    assert alice.cash == 10_012_195_625
