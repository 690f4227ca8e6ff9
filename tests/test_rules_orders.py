"""Orders at receipt: the ten checks in order, the price grid, reservations and the cap.

Every expected number is computed in the comments from the contract's formulas
(/work/shared/design/season0-engine.md). Units: px/sz e8, money e6.
ETH (asset 1) has szDecimals 4: lot = 10^4 e8 = 0.0001 ETH, at most 2 price decimals.
BTC (asset 0) has szDecimals 5: lot = 10^3 e8, at most 1 price decimal.
Unless said otherwise the ETH mark is ctx markPx 2000 and BTC has no mark at all.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Market, Reason
from engine.events import Accepted, Closed, Rejected
from tests.build import (
    BTC,
    E8,
    ETH,
    SOL,
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
)

S = season()
UNIT = Market(coin="UNIT", asset=9, szDecimals=0)
MICRO = Market(coin="MICRO", asset=10, szDecimals=6)
P = 2000 * E8  # the ETH mark
ETH_SZ_01 = 1_000_000  # 0.01 ETH: notional(2000e8, 1e6) = 2e17 / 1e10 = 20_000_000 (20 USDC)


def base(*rows: dict[str, Any]) -> list[dict[str, Any]]:
    return [register(T0 - 1000, "alice"), ctx(T0, "ETH", mark="2000"), *rows]


# ---- the ten checks, in order ---------------------------------------------------------

# Each case fails its own check and every later one it can, so only the order of the
# checks decides the reason.
CHECK_CASES = [
    # 1. before start (and a bad market, tif, price and size): SeasonNotActive
    (T0 - 1, {"asset": 3, "limit_px": 0, "sz": 0, "tif": 9}, Reason.SeasonNotActive),
    # 3. asset 3 is not a season market
    (T0 + 1, {"asset": 3, "limit_px": 0, "sz": 0, "tif": 9}, Reason.MarketNotAllowed),
    # 4. encodedTif 0 and 4 are not in {1, 2, 3}
    (T0 + 1, {"asset": 1, "limit_px": 0, "sz": 0, "tif": 0}, Reason.InvalidTif),
    (T0 + 1, {"asset": 1, "limit_px": 0, "sz": 0, "tif": 4}, Reason.InvalidTif),
    # 5. limitPx <= 0
    (T0 + 1, {"asset": 1, "limit_px": 0, "sz": 0}, Reason.InvalidPrice),
    (T0 + 1, {"asset": 1, "limit_px": -P, "sz": 0}, Reason.InvalidPrice),
    # 6. sz 0, negative, or not whole lots (10_001 % 10_000 != 0); 1 e8 would also be tiny
    (T0 + 1, {"asset": 1, "limit_px": P, "sz": 0}, Reason.InvalidSize),
    (T0 + 1, {"asset": 1, "limit_px": P, "sz": -10_000}, Reason.InvalidSize),
    (T0 + 1, {"asset": 1, "limit_px": P, "sz": 10_001}, Reason.InvalidSize),
    # 7. 0.0049 ETH at 2000: notional = 2000e8 * 490_000 / 1e10 = 9_800_000 < 10_000_000
    (T0 + 1, {"asset": 1, "limit_px": P, "sz": 490_000}, Reason.OrderTooSmall),
    # 10. BTC has no mark: a non-reduce-only order cannot be checked against the cap
    (T0 + 1, {"asset": 0, "limit_px": 50_000 * E8, "sz": 100_000}, Reason.PositionCapExceeded),
]


@pytest.mark.parametrize(("t", "fields", "reason"), CHECK_CASES)
def test_first_failing_check_is_the_reason(t: int, fields: dict[str, Any], reason: Reason) -> None:
    fields = {"tif": 2, **fields}
    row = order(
        t, "alice", fields["asset"], True, fields["limit_px"], fields["sz"], tif=fields["tif"]
    )
    _, events = run(S, base(row) if t >= T0 else [register(T0 - 1000, "alice"), row])
    assert reasons(events) == [reason]
    assert accepted(events) == []


def test_rejection_names_the_request_and_cloid() -> None:
    _, events = run(S, base(order(T0 + 1, "alice", 3, True, P, ETH_SZ_01, cloid="0x2a")))
    [rej] = of(events, Rejected)
    assert (rej.entry, rej.request, rej.cloid, rej.reason) == (
        "alice",
        "order",
        42,
        Reason.MarketNotAllowed,
    )


def test_order_too_small_boundary_and_reduce_only_exemption() -> None:
    _, events = run(
        S,
        base(
            # 0.005 ETH at 2000: 2000e8 * 500_000 / 1e10 = 10_000_000, not < min: accepted
            order(T0 + 1, "alice", 1, True, P, 500_000),
            # 0.0049 ETH: 9_800_000 < 10_000_000
            order(T0 + 2, "alice", 1, True, P, 490_000),
            # one lot (0.0001 ETH = 0.20 USDC) reduce-only: exempt from the minimum
            order(T0 + 3, "alice", 1, False, P, 10_000, reduce_only=True),
        ),
    )
    assert [a.oid for a in accepted(events)] == [1, 2]
    assert reasons(events) == [Reason.OrderTooSmall]


# ---- the price grid and lots ----------------------------------------------------------

GRID = [
    # ETH: szDecimals 4 -> at most 6 - 4 = 2 decimals, at most 5 significant figures
    (ETH, 200_050_000_000, True),  # 2000.5: 1 decimal, 5 sig figs
    (ETH, 200_055_000_000, False),  # 2000.55: 6 sig figs
    (ETH, 20_055_000_000, True),  # 200.55: 2 decimals, 5 sig figs
    (ETH, 2_055_500_000, False),  # 20.555: 3 decimals
    (ETH, 1_000_000, True),  # 0.01
    (ETH, 100_000, False),  # 0.001: 3 decimals
    (ETH, 12_345_600_000_000, True),  # 123456: integer, always valid despite 6 sig figs
    # BTC: szDecimals 5 -> at most 1 decimal
    (BTC, 100_050_000_000, True),  # 1000.5
    (BTC, 1_000_050_000_000, False),  # 10000.5: 6 sig figs ("10000.5 has 6")
    (BTC, 10_055_000_000, False),  # 100.55: 2 decimals
    (BTC, 10_505_600_000_000, True),  # 105056: integer
    # SOL: szDecimals 2 -> at most 4 decimals
    (SOL, 123_450_000, True),  # 1.2345: 4 decimals, 5 sig figs
    (SOL, 12_345_000, False),  # 0.12345: 5 decimals
    (SOL, 1_234_500_000, True),  # 12.345
    (SOL, 1_234_560_000, False),  # 12.3456: 6 sig figs
    (SOL, 10_050_000_000, True),  # 100.5: "100.5 has 4"
    # szDecimals 0 -> at most 6 decimals; significant figures from the first non-zero digit
    (UNIT, 1_234_500, True),  # 0.012345: 6 decimals, 5 sig figs
    (UNIT, 123_450, False),  # 0.0012345: 7 decimals
    (UNIT, 12_345_600, False),  # 0.123456: 6 decimals but 6 sig figs
    # szDecimals 6 -> 0 decimals: only integer prices
    (MICRO, 150_000_000, False),  # 1.5
    (MICRO, 200_000_000, True),  # 2
]


@pytest.mark.parametrize(("market", "px", "ok"), GRID)
def test_price_grid(market: Any, px: int, ok: bool) -> None:
    # reduce-only and one lot: no minimum, no cap, no mark needed, so only the grid decides
    lot = 10 ** (8 - market.szDecimals)
    s = season(markets=(BTC, ETH, SOL, UNIT, MICRO))
    row = order(T0 + 1, "alice", market.asset, False, px, lot, reduce_only=True)
    _, events = run(s, [register(T0 - 1, "alice"), row])
    assert reasons(events) == ([] if ok else [Reason.InvalidPrice])


@pytest.mark.parametrize(
    ("market", "sz", "ok"),
    [
        (ETH, 10_000, True),
        (ETH, 30_000, True),
        (ETH, 5_000, False),
        (ETH, 10_001, False),
        (BTC, 1_000, True),
        (BTC, 1_500, False),
        (SOL, 1_000_000, True),
        (SOL, 2_000_000, True),
        (SOL, 1_010_000, False),
        (SOL, 999_999, False),
    ],
)
def test_size_must_be_whole_lots(market: Any, sz: int, ok: bool) -> None:
    # lots: ETH 10^4, BTC 10^3, SOL 10^6 (e8)
    s = season(markets=(BTC, ETH, SOL))
    row = order(T0 + 1, "alice", market.asset, True, 100 * E8, sz, reduce_only=True)
    _, events = run(s, [register(T0 - 1, "alice"), row])
    assert reasons(events) == ([] if ok else [Reason.InvalidSize])


# ---- reservations and the position cap ------------------------------------------------

# Equity 10_000_000_000, cap 12%: accepted iff (exposure + reserve) * 100 <= 1.2e11,
# i.e. exposure + reserve <= 1_200_000_000. reserve = notional(max(limitPx, mark), sz).
CAP_CASES = [
    # buy at the mark: 2000e8 * 0.6e8 / 1e10 = 1_200_000_000 -> exactly the cap: accepted
    (True, 2000, 60_000_000, 1_200_000_000),
    # 0.6001: 2000e8 * 60_010_000 / 1e10 = 1_200_200_000 > cap
    (True, 2000, 60_010_000, None),
    # sell with a limit far below: reserved at the mark 2000, not at 1000
    (False, 1000, 60_000_000, 1_200_000_000),
    # 0.7 at limit 1000 would be 700 USDC, but at the mark it is 1_400_000_000 > cap
    (False, 1000, 70_000_000, None),
    # buy above the mark: reserved at the limit, 4000 * 0.3 = 1_200_000_000
    (True, 4000, 30_000_000, 1_200_000_000),
    # 4000 * 0.31 = 1_240_000_000 > cap (at the mark it would be only 620)
    (True, 4000, 31_000_000, None),
]


@pytest.mark.parametrize(("is_buy", "limit", "sz", "reserve"), CAP_CASES)
def test_reserve_is_at_max_of_limit_and_mark(
    is_buy: bool, limit: int, sz: int, reserve: int | None
) -> None:
    _, events = run(S, base(order(T0 + 1, "alice", 1, is_buy, limit * E8, sz)))
    if reserve is None:
        assert reasons(events) == [Reason.PositionCapExceeded]
    else:
        assert [a.reserve for a in accepted(events)] == [reserve]


def test_reserves_add_up_and_reduce_only_reserves_nothing() -> None:
    _, events = run(
        S,
        base(
            order(T0 + 1, "alice", 1, True, P, 30_000_000),  # 2000 * 0.3 = 600_000_000
            order(T0 + 2, "alice", 1, False, 1000 * E8, 30_000_000),  # at the mark: 600_000_000
            # exposure 1_200_000_000 now; 0.005 more = 10_000_000 -> 1_210_000_000 > cap
            order(T0 + 3, "alice", 1, True, P, 500_000),
            # reduce-only: reserves nothing and skips the cap (even with no position)
            order(T0 + 4, "alice", 1, True, P, 50_000_000, reduce_only=True),
        ),
    )
    assert [(a.oid, a.reserve) for a in accepted(events)] == [
        (1, 600_000_000),
        (2, 600_000_000),
        (3, 0),
    ]
    assert reasons(events) == [Reason.PositionCapExceeded]


@pytest.mark.parametrize(
    ("is_buy", "ok_sz", "bad_sz"), [(True, 38_230_000, 38_240_000), (False, 37_750_000, 37_760_000)]
)
def test_exposure_counts_position_at_mark_and_equity_after_fees(
    is_buy: bool, ok_sz: int, bad_sz: int
) -> None:
    # IOC 0.1 ETH at 2000 fills in full (25% of 1 = 0.25 >= 0.1) and releases its reserve.
    # n = 2000e8 * 1e7 / 1e10 = 200_000_000; venue = n*45/1e5 = 90_000; exec = n*20/1e5 = 40_000
    # long:  cash = 1e10 - 200_000_000 - 130_000 = 9_799_870_000
    # short: cash = 1e10 + 200_000_000 - 130_000 = 10_199_870_000
    # Then the mark goes to 2500: |pos * mark| = 1e7 * 2500e8 / 1e10 = 250_000_000.
    # long:  equity = 9_799_870_000 + 250_000_000 = 10_049_870_000; * 12 = 120_598_440_000
    #   ok  0.3823 at 2500 = 955_750_000: (250_000_000 + 955_750_000) * 100 = 120_575_000_000 <=
    #   bad 0.3824 at 2500 = 956_000_000: (250_000_000 + 956_000_000) * 100 = 120_600_000_000 >
    # short: equity = 10_199_870_000 - 250_000_000 = 9_949_870_000; * 12 = 119_398_440_000
    #   ok  0.3775 = 943_750_000: 1_193_750_000 * 100 = 119_375_000_000 <=
    #   bad 0.3776 = 944_000_000: 1_194_000_000 * 100 = 119_400_000_000 >
    rows = base(
        order(T0 + 1000, "alice", 1, is_buy, P, 10_000_000, tif=3),
        book(T0 + 3000, "ETH", bids=[("2000", "1")], asks=[("2000", "1")]),
        ctx(T0 + 4000, "ETH", mark="2500"),
        order(T0 + 5000, "alice", 1, True, 2500 * E8, bad_sz),
        order(T0 + 5001, "alice", 1, True, 2500 * E8, ok_sz),
    )
    eng, events = run(S, rows)
    assert eng.accounts["alice"].cash == (9_799_870_000 if is_buy else 10_199_870_000)
    assert reasons(events) == [Reason.PositionCapExceeded]
    # oid 1 reserved 2000 * 0.1 = 200_000_000 (released when the IOC closed)
    assert [(a.oid, a.reserve) for a in accepted(events)] == [
        (1, 200_000_000),
        (2, 955_750_000 if is_buy else 943_750_000),
    ]


def test_no_mark_rejects_only_non_reduce_only() -> None:
    # BTC: no ctx, no book, no trade yet -> no mark
    _, events = run(
        S,
        base(
            order(T0 + 1, "alice", 0, True, 50_000 * E8, 100_000),
            order(T0 + 2, "alice", 0, False, 50_000 * E8, 100_000, reduce_only=True),
        ),
    )
    assert reasons(events) == [Reason.PositionCapExceeded]
    assert [(a.oid, a.asset, a.reserve) for a in accepted(events)] == [(1, 0, 0)]


# ---- cloids ---------------------------------------------------------------------------


def test_cloid_unique_among_the_entrys_open_orders() -> None:
    rows = [
        register(T0 - 2, "alice"),
        register(T0 - 1, "bob"),
        ctx(T0, "ETH", mark="2000"),
        order(T0 + 1, "alice", 1, True, P, ETH_SZ_01, cloid="0x2a"),  # oid 1
        # the same number written another way: compared as a number
        order(T0 + 2, "alice", 1, True, P, ETH_SZ_01, cloid="0x0000000000000000000000000000002A"),
        order(T0 + 3, "bob", 1, True, P, ETH_SZ_01, cloid="0x2a"),  # other entry: fine, oid 2
        order(T0 + 4, "alice", 1, True, P, ETH_SZ_01, cloid="0x0"),  # zero = none, oid 3
        order(T0 + 5, "alice", 1, True, P, ETH_SZ_01, cloid="0x0"),  # oid 4
        order(T0 + 6, "alice", 1, True, P, ETH_SZ_01),  # oid 5
        cancel(T0 + 7, "alice", oid=1),  # takes effect at T0 + 2007
        order(T0 + 2006, "alice", 1, True, P, ETH_SZ_01, cloid="0x2a"),  # still open: rejected
        order(T0 + 2007, "alice", 1, True, P, ETH_SZ_01, cloid="0x2a"),  # released: oid 6
    ]
    _, events = run(S, rows)
    assert reasons(events) == [Reason.OrderAlreadyExists, Reason.OrderAlreadyExists]
    assert [(a.entry, a.oid, a.cloid) for a in accepted(events)] == [
        ("alice", 1, 42),
        ("bob", 2, 42),
        ("alice", 3, 0),
        ("alice", 4, 0),
        ("alice", 5, 0),
        ("alice", 6, 42),
    ]


def test_ioc_closed_at_activation_releases_its_cloid() -> None:
    rows = base(
        order(T0 + 1000, "alice", 1, True, P, ETH_SZ_01, tif=3, cloid="0x7"),
        book(T0 + 3000, "ETH", asks=[("2001", "1")]),  # nothing within 2000: IocRemainder
        order(T0 + 3001, "alice", 1, True, P, ETH_SZ_01, cloid="0x7"),
    )
    _, events = run(S, rows)
    assert [(c.oid, c.reason, c.filled) for c in of(events, Closed)] == [
        (1, Reason.IocRemainder, 0)
    ]
    assert [a.oid for a in accepted(events)] == [1, 2]


# ---- eight open orders ----------------------------------------------------------------


def test_eight_open_orders_count_pending_filled_reduce_only_and_cancelling() -> None:
    rows = base(
        # oid 1: GTC buy 0.01 fills in full at activation (25% of 1 >= 0.01) but stays open
        order(T0 + 1000, "alice", 1, True, P, ETH_SZ_01, cloid="0x1"),
        book(T0 + 3000, "ETH", asks=[("2000", "1")]),
        order(T0 + 4000, "alice", 1, False, P, ETH_SZ_01, reduce_only=True),  # oid 2
        order(T0 + 4001, "alice", 1, True, P, ETH_SZ_01),  # oid 3
        cancel(T0 + 4002, "alice", oid=3),  # cancelling: effect at T0 + 6002
        *(order(T0 + 4003 + i, "alice", 1, True, P, ETH_SZ_01) for i in range(5)),  # oids 4-8
        # a ninth: every one of these is refused while the eight are open
        order(T0 + 5000, "alice", 1, True, P, ETH_SZ_01, reduce_only=True),
        # the cap would also fail (0.7 ETH = 1_400 USDC), but the slot check comes first
        order(T0 + 5001, "alice", 1, True, P, 70_000_000),
        # earlier checks still win: a duplicate cloid, then a too-small order
        order(T0 + 5002, "alice", 1, True, P, ETH_SZ_01, cloid="0x1"),
        order(T0 + 5003, "alice", 1, True, P, 10_000),
        order(T0 + 6001, "alice", 1, True, P, ETH_SZ_01),  # cancel not yet effective
        order(T0 + 6002, "alice", 1, True, P, ETH_SZ_01),  # after it: oid 9
    )
    eng, events = run(S, rows)
    assert eng.accounts["alice"].positions == {1: ETH_SZ_01}
    assert reasons(events) == [
        Reason.TooManyOpenOrders,
        Reason.TooManyOpenOrders,
        Reason.OrderAlreadyExists,
        Reason.OrderTooSmall,
        Reason.TooManyOpenOrders,
    ]
    assert [(c.oid, c.reason, c.t) for c in of(events, Closed)] == [
        (3, Reason.Cancelled, T0 + 6002)
    ]
    acc = of(events, Accepted)
    assert [a.oid for a in acc] == list(range(1, 10))
    assert acc[-1].t == T0 + 6002


def test_max_open_orders_is_a_rule() -> None:
    s = season(max_open_orders=2)
    rows = base(*(order(T0 + 1 + i, "alice", 1, True, P, ETH_SZ_01) for i in range(3)))
    _, events = run(s, rows)
    assert reasons(events) == [Reason.TooManyOpenOrders]
    assert len(accepted(events)) == 2


def test_oids_count_across_entries_and_skip_rejections() -> None:
    rows = [
        register(T0 - 2, "alice"),
        register(T0 - 1, "bob"),
        ctx(T0, "ETH", mark="2000"),
        order(T0 + 1, "alice", 1, True, P, ETH_SZ_01),
        order(T0 + 2, "bob", 1, True, P, 10_000),  # too small: no oid
        order(T0 + 3, "bob", 1, True, P, ETH_SZ_01),
        order(T0 + 4, "alice", 1, True, P, ETH_SZ_01),
        tick(T0 + 5),
    ]
    _, events = run(S, rows)
    assert [(a.entry, a.oid, a.activates_at) for a in accepted(events)] == [
        ("alice", 1, T0 + 2001),
        ("bob", 2, T0 + 2003),
        ("alice", 3, T0 + 2004),
    ]
