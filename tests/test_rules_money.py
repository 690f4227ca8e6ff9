"""Money over time: marks, funding, the performance fee, minute marks, drawdown, the score.

Hand-computed from the contract (/work/shared/design/season0-engine.md); px/sz e8, money e6,
ratios e8. Equity starts at E0 = 10_000_000_000. ETH (asset 1) has lot 10^4 e8.
A taker buy of 0.1 ETH at 2000: n = 200_000_000, venue 90_000, exec 40_000, so
cash = 9_799_870_000 (a sell: 10_199_870_000). 0.5 ETH: n = 1e9, fees 450_000 + 200_000.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Reason
from engine.events import (
    Closed,
    FundingPaid,
    MinuteMark,
    Paused,
    PerformanceFee,
    ScoreRow,
    SeasonOver,
)
from engine.scoring import ranking
from tests.build import (
    DAY,
    E8,
    HOUR,
    MIN,
    T0,
    accepted,
    book,
    cancel,
    ctx,
    lines,
    of,
    order,
    reasons,
    register,
    run,
    season,
    tick,
    trades,
)

P = 2000 * E8
SZ = 10_000_000  # 0.1 ETH


def ioc(t: int, entry: str, is_buy: bool, sz: int) -> list[dict[str, Any]]:
    """An IOC at 2000 filled in full (25% of 2 >= 0.5) by a book 2 s later."""
    lv = [("2000", "2")]
    return [order(t, entry, 1, is_buy, P, sz, tif=3), book(t + 2000, "ETH", bids=lv, asks=lv)]


def start(*names: str) -> list[dict[str, Any]]:
    """Register ``names`` before the start, in this order; the ETH mark is 2000 from T0."""
    return [*(register(T0 - 10 + i, n) for i, n in enumerate(names)), ctx(T0, "ETH", mark="2000")]


def long01(**fields: str) -> list[dict[str, Any]]:
    """alice buys 0.1 ETH at 2000 (cash 9_799_870_000), then a ctx with ``fields`` at T0+4000."""
    return [*start("alice"), *ioc(T0 + 1000, "alice", True, SZ), ctx(T0 + 4000, "ETH", **fields)]


def marks_of(events: list[Any], entry: str) -> list[Any]:
    return [m for m in of(events, MinuteMark) if m.entry == entry]


# ---- the mark -------------------------------------------------------------------------


def test_mark_precedence_ctx_then_book_mid_then_trade() -> None:
    # Probe: ALO sell 0.01 ETH at 1000 from a fresh entry; reserve = notional(max(1000, mark),
    # 0.01) = mark_e8 * 1e6 / 1e10 = mark_e8 / 1e4. No probe ever activates (all within 2 s).
    steps: list[dict[str, Any]] = [
        tick(T0),  # no mark yet -> PositionCapExceeded
        trades(T0 + 100, ("ETH", "1500", "1", T0 + 50, 1)),  # trade: 15_000_000
        book(T0 + 200, "ETH", bids=[("1900", "1")]),  # empty ask side: no mid, still 1500
        # mid = tdiv(199_999_999_999 + 200_000_000_000, 2) = 199_999_999_999 -> 19_999_999
        book(T0 + 300, "ETH", bids=[("1999.99999999", "1")], asks=[("2000", "1")]),
        trades(T0 + 400, ("ETH", "1800", "1", T0 + 350, 2)),  # a book beats a trade
        book(T0 + 500, "ETH", asks=[("2300", "1")]),  # empty bids: previous mid kept
        # stale (30 s old) still sets the mid: tdiv(2100 + 2102, 2) = 2101 -> 21_010_000
        book(T0 + 600, "ETH", time=T0 - 29_400, bids=[("2100", "1")], asks=[("2102", "1")]),
        ctx(T0 + 700, "ETH", mark="2500"),  # ctx markPx beats all: 25_000_000
        book(T0 + 800, "ETH", bids=[("1000", "1")], asks=[("1002", "1")]),
        ctx(T0 + 900, "ETH", funding="0.0001"),  # markPx missing: kept
        {
            "t": T0 + 1000,
            "hl": {"channel": "activeAssetCtx", "data": {"coin": "ETH", "ctx": {"markPx": None}}},
        },  # null: kept
    ]
    rows: list[dict[str, Any]] = [register(T0 - 20 + i, f"p{i}") for i in range(len(steps))]
    for i, step in enumerate(steps):
        rows += [step, order(step["t"], f"p{i}", 1, False, 1000 * E8, 1_000_000, tif=1)]
    _, events = run(season(), rows)
    assert reasons(events) == [Reason.PositionCapExceeded]
    expected = [15_000_000] * 2 + [19_999_999] * 3 + [21_010_000] + [25_000_000] * 4
    assert [a.reserve for a in accepted(events)] == expected


def test_ignored_duplicate_trade_sets_no_mark() -> None:
    # BTC probe: ALO sell 0.001 at 10000 (notional exactly 10 USDC); reserve = mark_e8 / 1e5.
    x = T0 + 50
    steps = [
        trades(T0 + 100, ("BTC", "50000", "1", x, 1)),  # 50_000_000
        trades(T0 + 200, ("BTC", "60000", "1", x, 1)),  # same time and tid: ignored
        trades(T0 + 300, ("BTC", "60000", "1", x - 1, 7)),  # older: ignored
        trades(T0 + 400, ("BTC", "55000", "1", x, 2)),  # same time, new tid: 55_000_000
    ]
    rows: list[dict[str, Any]] = [register(T0 - 9 + i, f"p{i}") for i in range(len(steps))]
    for i, step in enumerate(steps):
        rows += [step, order(step["t"], f"p{i}", 0, False, 10_000 * E8, 100_000, tif=1)]
    _, events = run(season(), rows)
    assert [a.reserve for a in accepted(events)] == [50_000_000] * 3 + [55_000_000]


# ---- funding --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("is_buy", "rate", "payment"),
    [
        # payment = tdiv(pos * oraclePx * num, 1e10 * den), pos = +-1e7, oracle 2000e8 = 2e11
        (True, "-0.0000015186", -303),  # 1e7 * 2e11 * -15186 / 1e20 = -303.72 -> -303
        (False, "-0.0000015186", 303),  # a short pays the negative rate: +303.72 -> 303
        (False, "0.0000015186", -303),  # a short receives the positive rate
        (True, "0.0000125", 2_500),  # 2e18 * 125 / (1e10 * 1e7) = 2_500
    ],
)
def test_funding_exact_rate_truncated_toward_zero(is_buy: bool, rate: str, payment: int) -> None:
    rows = [
        *start("alice", "bob"),
        *ioc(T0 + 1000, "alice", is_buy, 10_000_000),
        ctx(T0 + 4000, "ETH", mark="2000", oracle="2000", funding=rate),
        tick(T0 + HOUR),
    ]
    eng, events = run(season(), rows)
    assert [(f.t, f.entry, f.asset, f.payment) for f in of(events, FundingPaid)] == [
        (T0 + HOUR, "alice", 1, payment)
    ]
    cash = 9_799_870_000 if is_buy else 10_199_870_000
    assert eng.accounts["alice"].cash == cash - payment


@pytest.mark.parametrize("fields", [{"funding": "0.0001"}, {"oracle": "2000"}])
def test_no_funding_without_rate_or_oracle(fields: dict[str, str]) -> None:
    rows = [*long01(**fields), tick(T0 + 2 * HOUR)]
    _, events = run(season(), rows)
    assert of(events, FundingPaid) == []


# ---- performance fee ------------------------------------------------------------------


def test_weekly_and_final_performance_fee() -> None:
    # long 0.1 at 2000: cash 9_799_870_000. Mark 3000 at the week: E = cash + 300_000_000
    #   = 10_099_870_000 > hwm 1e10: fee = tdiv(99_870_000 * 10, 100) = 9_987_000,
    #   cash 9_789_883_000, hwm = 10_099_870_000 - 9_987_000 = 10_089_883_000
    # Mark 3100 at end: E = 9_789_883_000 + 310_000_000 = 10_099_883_000:
    #   fee = tdiv(10_000_000 * 10, 100) = 1_000_000, hwm = 10_098_883_000 = E_T
    end = T0 + 8 * DAY
    rows = [*long01(mark="3000"), tick(T0 + 7 * DAY), ctx(T0 + 7 * DAY + 1, "ETH", mark="3100")]
    eng, events = run(season(end=end), [*rows, tick(end)])
    assert [(f.t, f.equity, f.fee, f.fee_hwm) for f in of(events, PerformanceFee)] == [
        (T0 + 7 * DAY, 10_099_870_000, 9_987_000, 10_089_883_000),
        (end, 10_099_883_000, 1_000_000, 10_098_883_000),
    ]
    assert eng.accounts["alice"].cash == 9_788_883_000
    # the mark at end sees the fee: R = tdiv(98_883_000 * 1e8, 1e10) = 988_830
    last = of(events, ScoreRow)[-1]
    assert (last.t, last.equity, last.ret) == (end, 10_098_883_000, 988_830)
    assert eng.final


@pytest.mark.parametrize(("mark", "fee"), [("3000", 9_987_000), ("1900", None)])
def test_fee_once_when_the_period_ends_at_end(mark: str, fee: int | None) -> None:
    # end = start + 1 period: one fee at end, not two. Mark 1900: E = 9_799_870_000 +
    # 190_000_000 = 9_989_870_000 <= hwm: no fee.
    end = T0 + 7 * DAY
    rows = [*long01(mark=mark), tick(end)]
    _, events = run(season(end=end), rows)
    assert [(f.t, f.fee) for f in of(events, PerformanceFee)] == (
        [] if fee is None else [(end, fee)]
    )


def test_fee_boundaries_count_from_start_funding_from_the_epoch() -> None:
    # start = T0 + 30 min, fee period 1 h: fees at T0+90m, T0+150m and end T0+180m; funding
    # at T0+1h, 2h, 3h (= end, included). Long 0.1: funding = tdiv(1e7 * 2000e8 * 1, 1e14)
    # = 20_000 (oracle 2000). T0+90m: cash 9_799_850_000, E = + 0.1 * 3000 = 10_099_850_000:
    # fee = tdiv(99_850_000 * 10, 100) = 9_985_000, hwm 10_089_865_000. Later E is
    # 10_089_845_000 then 10_089_825_000 (funding only): below hwm, no fee.
    s0 = T0 + 30 * MIN
    rows = [
        register(s0 - 1, "alice"),
        ctx(s0, "ETH", mark="2000"),
        *ioc(s0 + 1000, "alice", True, SZ),
        ctx(s0 + 4000, "ETH", mark="3000", oracle="2000", funding="0.0001"),
        tick(T0 + 3 * HOUR),
    ]
    s = season(start=s0, end=T0 + 3 * HOUR, performance_fee_period_ms=HOUR)
    eng, events = run(s, rows)
    assert [(f.t, f.payment) for f in of(events, FundingPaid)] == [
        (T0 + h * HOUR, 20_000) for h in (1, 2, 3)
    ]
    assert [(f.t, f.fee, f.fee_hwm) for f in of(events, PerformanceFee)] == [
        (s0 + HOUR, 9_985_000, 10_089_865_000)
    ]
    assert eng.accounts["alice"].cash == 9_799_870_000 - 60_000 - 9_985_000


# ---- minute marks, peak, MDD, R, S ----------------------------------------------------


def test_marks_in_start_to_end_and_registration_on_a_mark_counts_from_the_next() -> None:
    rows = [register(T0 - 1, "alice"), tick(T0), register(T0 + MIN, "bob"), tick(T0 + 3 * MIN)]
    _, events = run(season(end=T0 + 3 * MIN), rows)
    assert [m.t for m in marks_of(events, "alice")] == [T0 + MIN, T0 + 2 * MIN, T0 + 3 * MIN]
    assert [m.t for m in marks_of(events, "bob")] == [T0 + 2 * MIN, T0 + 3 * MIN]


def test_a_28_day_season_has_40320_marks() -> None:
    _, events = run(season(end=T0 + 28 * DAY), [register(T0 - 1, "a"), tick(T0 + 28 * DAY)])
    assert len(of(events, MinuteMark)) == 28 * 24 * 60 == 40_320


PEAK_ROWS = [
    *start("alice"),
    *ioc(T0 + 1000, "alice", True, 50_000_000),  # cash 1e10 - 1e9 - 650_000 = 8_999_350_000
    ctx(T0 + 4000, "ETH", mark="2200"),  # E1 = 8_999_350_000 + 1_100_000_000 = 10_099_350_000
    ctx(T0 + MIN + 1, "ETH", mark="1800"),  # E2 = 8_999_350_000 + 900_000_000 = 9_899_350_000
    ctx(T0 + 2 * MIN + 1, "ETH", mark="2100"),  # E3 = 10_049_350_000
    tick(T0 + 3 * MIN),
]


@pytest.mark.parametrize(
    ("lam_num", "lam_den", "score"),
    [
        (1, 1, 493_500 - 1_980_325),  # S = R - MDD = -1_486_825
        (1, 2, 493_500 - 990_162),  # tdiv(1_980_325 * 1, 2) = 990_162
    ],
)
def test_peak_mdd_and_score(lam_num: int, lam_den: int, score: int) -> None:
    # dd2 = tdiv((10_099_350_000 - 9_899_350_000) * 1e8, 10_099_350_000) = 1_980_325
    # dd3 = tdiv(50_000_000 * 1e8, 10_099_350_000) = 495_081; mdd stays 1_980_325
    # R = tdiv((10_049_350_000 - 1e10) * 1e8, 1e10) = 493_500
    eng, events = run(season(lambda_num=lam_num, lambda_den=lam_den), PEAK_ROWS)
    assert [(m.equity, m.peak, m.drawdown, m.mdd) for m in marks_of(events, "alice")] == [
        (10_099_350_000, 10_099_350_000, 0, 0),
        (9_899_350_000, 10_099_350_000, 1_980_325, 1_980_325),
        (10_049_350_000, 10_099_350_000, 495_081, 1_980_325),
    ]
    row = of(events, ScoreRow)[-1]
    assert (row.equity, row.ret, row.mdd, row.score) == (10_049_350_000, 493_500, 1_980_325, score)
    [st] = eng.standings()
    assert (st.ret, st.mdd, st.score, st.marks) == (493_500, 1_980_325, score, 3)
    assert not eng.final


@pytest.mark.parametrize(("mark", "pause"), [("4998.7", True), ("4998.6", False)])
def test_drawdown_limit_pauses_and_then_only_reduce_only(mark: str, pause: bool) -> None:
    # short 0.5 at 2000: cash 1e10 + 1e9 - 650_000 = 10_999_350_000; peak stays 1e10.
    # 4998.7: E = 10_999_350_000 - 0.5 * 4998.7 (2_499_350_000) = 8_500_000_000:
    #   (1e10 - 8.5e9) * 100 = 1.5e11 >= 1e10 * 15: paused. dd = 15_000_000.
    # 4998.6: E = 8_500_050_000: 1.49995e11 < 1.5e11: not paused.
    rows = [
        *start("alice"),
        *ioc(T0 + 1000, "alice", False, 50_000_000),
        # exposure 1e9 + 0.05 * 2000 = 1.1e9 <= 12% of 9_999_350_000: accepted, pending
        order(T0 + 4000, "alice", 1, True, 1900 * E8, 5_000_000),  # oid 2
        order(T0 + 4001, "alice", 1, True, 1900 * E8, 10_000_000, reduce_only=True),  # oid 3
        ctx(T0 + 5000, "ETH", mark=mark),
        order(T0 + MIN + 1, "alice", 1, True, P, 1_000_000),  # not reduce-only
        order(T0 + MIN + 2, "alice", 3, True, P, 1_000_000),  # + bad market: check 2 first
        order(T0 + MIN + 3, "alice", 3, True, P, 1_000_000, reduce_only=True),
        order(T0 + MIN + 4, "alice", 1, True, 5000 * E8, 10_000_000, reduce_only=True),
        ctx(T0 + MIN + 5, "ETH", mark="2000"),  # recovers: E = 9_999_350_000
        order(T0 + 2 * MIN + 1, "alice", 1, True, P, 1_000_000),  # paused for the season
    ]
    _, events = run(season(), rows)
    first = marks_of(events, "alice")[0]
    if pause:
        assert (first.equity, first.drawdown) == (8_500_000_000, 15_000_000)
        assert [(p.t, p.equity, p.peak) for p in of(events, Paused)] == [
            (T0 + MIN, 8_500_000_000, 10_000_000_000)
        ]
        paused = [(c.oid, c.reason, c.t) for c in of(events, Closed)][1:]
        assert paused == [(2, Reason.VaultPaused, T0 + MIN), (3, Reason.VaultPaused, T0 + MIN)]
        vna, mna = Reason.VaultNotActive, Reason.MarketNotAllowed
        assert reasons(events) == [vna, vna, mna, vna]
        assert [(a.oid, a.reserve) for a in accepted(events)][3:] == [(4, 0)]
    else:
        assert (first.equity, first.drawdown) == (8_500_050_000, 14_999_500)
        assert of(events, Paused) == []
        assert len(of(events, Closed)) == 1  # only the IOC
        assert Reason.VaultNotActive not in reasons(events)


def test_activity_needs_a_position_or_unfilled_open_order() -> None:
    rows = [
        *start("alice", "idle"),
        order(T0 + 1000, "alice", 1, True, 1000 * E8, 1_000_000),  # pending at mark 1: active
        cancel(T0 + MIN + 1000, "alice", oid=1),  # gone at mark 2: inactive
        order(T0 + 2 * MIN + 1000, "alice", 1, True, P, 1_000_000),  # GTC, filled in full
        book(T0 + 2 * MIN + 3000, "ETH", asks=[("2000", "1")]),
        *ioc(T0 + 2 * MIN + 4000, "alice", False, 1_000_000),  # flat: mark 3 inactive
        *ioc(T0 + 3 * MIN + 1000, "alice", True, 1_000_000),  # a position at mark 4
        tick(T0 + 4 * MIN),
    ]
    _, events = run(season(), rows)
    assert [m.active for m in marks_of(events, "alice")] == [True, False, False, True]
    assert [m.active for m in marks_of(events, "idle")] == [False] * 4
    row = [r for r in of(events, ScoreRow) if r.entry == "alice"][-1]
    # active share = tdiv(2 * 1e8, 4) = 50_000_000
    assert (row.active_marks, row.marks, row.active_share) == (2, 4, 50_000_000)


# ---- eligibility and ranking ----------------------------------------------------------


def test_eligible_after_fills_on_ten_utc_days_of_the_filling_input() -> None:
    # Day 1's order is received on day 0 (T0 + DAY - 1000); its book, on day 1, fills it.
    rows = [
        *start("alice"),
        *ioc(T0 + 1000, "alice", True, 1_000_000),
        *ioc(T0 + DAY - 1000, "alice", True, 1_000_000),
    ]
    for d in range(2, 10):
        rows += ioc(T0 + d * DAY + 1000, "alice", True, 1_000_000)
    rows.append(tick(T0 + 9 * DAY + MIN))
    _, events = run(season(end=T0 + 10 * DAY), rows)
    by_t = {r.t: r for r in of(events, ScoreRow)}
    before, after = by_t[T0 + 9 * DAY], by_t[T0 + 9 * DAY + MIN]
    assert (before.fill_days, before.eligible) == (9, False)
    assert (after.fill_days, after.eligible, after.active_share) == (10, True, 100_000_000)


@pytest.mark.parametrize(
    ("n", "share", "eligible"),
    [
        (5, 20_000_000, True),  # 1 * 100 >= 5 * 20
        (6, 16_666_666, False),  # 100 < 6 * 20; tdiv(1e8, 6) = 16_666_666
    ],
)
def test_active_share_and_at_least_one_mark(n: int, share: int, eligible: bool) -> None:
    rows = [
        *start("alice"),
        order(T0 + 30_000, "alice", 1, True, 1000 * E8, 1_000_000),  # active at mark 1
        cancel(T0 + MIN + 1000, "alice", oid=1),
        tick(T0 + n * MIN),
        register(T0 + n * MIN, "late"),
    ]
    eng, events = run(season(min_fill_days=0), rows)
    row = of(events, ScoreRow)[-1]
    assert (row.active_marks, row.marks, row.active_share, row.eligible) == (1, n, share, eligible)
    alice, late = eng.standings()
    assert (alice.eligible, late.marks, late.eligible) == (eligible, 0, False)


def test_ranking_ties_to_lower_mdd_then_registration() -> None:
    # bee: long 0.5 at 2000 (cash 8_999_350_000); E = cash + mark_e8 / 200:
    # 2401.3 -> 10_200_000_000 (peak); 2197.3 -> 10_098_000_000, dd = tdiv(102e6 * 1e8, 10.2e9)
    # = 1_000_000; 2201.3 -> 10_100_000_000: R = tdiv(1e8 * 1e8, 1e10) = 1_000_000, S = 0.
    # ant and cat do nothing: S = 0, MDD = 0. eel registers on the last mark: no mark.
    # dog buys 0.001 BTC at 50000 (n = 50_000_000, fees 22_500 + 10_000); BTC mark 60000 from
    # before mark 1 on: E = 1e10 - 50_032_500 + 60_000_000 = 10_009_967_500 at every mark,
    # MDD 0, S = R = tdiv(9_967_500 * 1e8, 1e10) = 99_675: first though registered last.
    rows = [
        *start("bee", "ant", "cat", "dog"),
        ctx(T0, "BTC", mark="50000"),
        order(T0 + 1000, "dog", 0, True, 50_000 * E8, 100_000, tif=3),
        *ioc(T0 + 1000, "bee", True, 50_000_000),
        book(T0 + 3000, "BTC", asks=[("50000", "1")]),
        ctx(T0 + 4000, "BTC", mark="60000"),
        ctx(T0 + 4000, "ETH", mark="2401.3"),
        ctx(T0 + MIN + 1, "ETH", mark="2197.3"),
        ctx(T0 + 2 * MIN + 1, "ETH", mark="2201.3"),
        register(T0 + 3 * MIN, "eel"),
    ]
    eng, events = run(season(min_fill_days=0, min_active_pct=0), rows)
    last = [r for r in of(events, ScoreRow) if r.t == T0 + 3 * MIN]
    got = [(r.entry, r.rank, r.score, r.mdd) for r in last]
    assert got == [
        ("dog", 1, 99_675, 0),
        ("ant", 2, 0, 0),
        ("cat", 3, 0, 0),
        ("bee", 4, 0, 1_000_000),
    ]
    assert last[3].ret == 1_000_000
    ranked = [(rank, s.entry) for rank, s in ranking(eng.standings())]
    assert ranked == [(1, "dog"), (2, "ant"), (3, "cat"), (4, "bee"), (None, "eel")]


def test_one_score_row_per_entry_per_day_midnight_mark_closes_the_day() -> None:
    start, end = T0 + DAY - 2 * MIN, T0 + DAY + 2 * MIN
    rows = [register(start - 2, "alice"), register(start - 1, "bob"), tick(end)]
    _, events = run(season(start=start, end=end), rows)
    day0 = T0 // DAY  # 20454; the mark at T0 + DAY belongs to tdiv(T0 + DAY - 1, DAY) = day0
    days = [(r.t - T0, r.day - day0) for r in of(events, ScoreRow) if r.entry == "alice"]
    assert days == [(DAY - MIN, 0), (DAY, 0), (DAY + MIN, 1), (DAY + 2 * MIN, 1)]
    rows_by_day = {(r.entry, r.day): (r.t, r.marks) for r in of(events, ScoreRow)}
    assert rows_by_day == {
        ("alice", day0): (T0 + DAY, 2),
        ("bob", day0): (T0 + DAY, 2),
        ("alice", day0 + 1): (end, 4),
        ("bob", day0 + 1): (end, 4),
    }


# ---- timed events ---------------------------------------------------------------------


def test_timed_events_at_equal_time_then_the_input() -> None:
    # At T0 + HOUR: cancels of oids 3, 4 (received in the order 4, 3) take effect, oid 1
    # expires, funding, the performance fee (period = 1 h here), the mark, then the order.
    # funding: tdiv(1e7 * 2100e8 * 1, 1e10 * 1e4) = 21_000
    # fee: E = 9_799_870_000 - 21_000 + 210_000_000 = 10_009_849_000;
    #      tdiv(9_849_000 * 10, 100) = 984_900; hwm = mark equity = 10_008_864_100
    h = T0 + HOUR
    rows = [
        *start("alice"),
        order(T0, "alice", 1, True, 1000 * E8, 1_000_000),  # oid 1: rests, expires at h
        *ioc(T0, "alice", True, 10_000_000),  # oid 2
        ctx(T0 + 5000, "ETH", mark="2100", oracle="2100", funding="0.0001"),
        order(h - 3000, "alice", 1, True, 1000 * E8, 1_000_000),  # oid 3
        order(h - 3000, "alice", 1, True, 1000 * E8, 1_000_000),  # oid 4
        cancel(h - 2000, "alice", oid=4),
        cancel(h - 2000, "alice", oid=3),
    ]
    eng, _ = run(season(performance_fee_period_ms=HOUR), rows)
    events = eng.apply(lines([order(h, "alice", 1, True, 1000 * E8, 1_000_000)])[0])
    kinds = "Closed Closed Closed FundingPaid PerformanceFee MinuteMark ScoreRow Accepted"
    assert [type(e).__name__ for e in events] == kinds.split()
    closed = [(c.oid, c.reason) for c in of(events, Closed)]
    assert closed == [(3, Reason.Cancelled), (4, Reason.Cancelled), (1, Reason.OrderExpired)]
    assert of(events, FundingPaid)[0].payment == 21_000
    assert of(events, PerformanceFee)[0].fee == 984_900
    assert of(events, MinuteMark)[0].equity == 10_008_864_100
    assert {e.t for e in events} == {h}


def test_log_ending_before_end_is_not_final() -> None:
    # long 0.1, mark 3000: E = 10_099_870_000 > hwm, but no fee is invented at end
    rows = [*long01(mark="3000"), tick(T0 + 5 * MIN + 30_000)]
    eng, events = run(season(), rows)
    assert (eng.final, eng.last_mark) == (False, T0 + 5 * MIN)
    assert of(events, SeasonOver) == [] and of(events, PerformanceFee) == []
    [st] = eng.standings()
    # R = tdiv(99_870_000 * 1e8, 1e10) = 998_700
    assert (st.marks, st.equity, st.ret) == (5, 10_099_870_000, 998_700)
