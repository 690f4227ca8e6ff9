"""bench/season.py's pure helpers: percentiles by week, the log's growth by day, /proc and
/metrics parsing, prices and sizes, the agents' mix and the report's table. (The bench
itself starts a host for minutes: it is never run here.)"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.season_agents import kinds
from bench.season_stats import (
    DAY_MS,
    WEEK_MS,
    bucket_quantile,
    buckets,
    cpu_seconds,
    growth_per_period,
    interpolate,
    latency_rows,
    lots_for,
    metric_values,
    percentile,
    px_e8,
    rss_kib,
    table,
)
from bench.season_watch import flatness, sim_clock


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.50) == 50
    assert percentile(values, 0.95) == 95
    assert percentile(values, 0.99) == 99
    assert percentile(values, 1.0) == 100
    assert percentile([7.0], 0.99) == 7
    assert percentile([1.0, 2.0], 0.5) == 1
    assert math.isnan(percentile([], 0.5))


@given(st.lists(st.integers(0, 1000), min_size=1), st.floats(0.01, 1.0))
def test_percentile_has_p_of_the_values_at_or_below_it(values: list[int], p: float) -> None:
    ordered = sorted(float(v) for v in values)
    got = percentile(ordered, p)
    need = math.ceil(p * len(ordered))
    assert got in ordered
    assert sum(v <= got for v in ordered) >= need
    assert sum(v < got for v in ordered) < need


def test_latency_rows_group_by_simulated_week_from_the_origin() -> None:
    origin = 1_796_601_600_000
    samples = [
        (origin + 5, 3.0),
        (origin + WEEK_MS - 1, 1.0),  # still week 1
        (origin + WEEK_MS, 9.0),  # week 2 starts
        (origin + 3 * WEEK_MS - 1, 4.0),  # week 3; week 2 has one sample
        (origin - 10, 2.0),  # before the origin: week 1
    ]
    rows = latency_rows(samples, origin)
    assert [(r["period"], r["n"]) for r in rows] == [(1, 3), (2, 1), (3, 1)]
    assert rows[0]["p50_ms"] == 2.0 and rows[0]["max_ms"] == 3.0
    assert rows[1]["p99_ms"] == 9.0
    by_day = latency_rows([(origin + DAY_MS + 1, 5.0)], origin, DAY_MS)
    assert by_day[0]["period"] == 2


def test_rss_and_peak_from_proc_status() -> None:
    text = "Name:\tpython\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t4\n"
    assert rss_kib(text) == 102400
    assert rss_kib(text, "VmHWM") == 204800
    assert rss_kib("Name:\tzombie\nState:\tZ (zombie)\n") is None
    mine = rss_kib(Path("/proc/self/status").read_text())
    assert mine is not None and mine > 1000


def test_cpu_seconds_reads_past_a_name_with_spaces_and_parens() -> None:
    rest = " ".join(["S", "1", "1", "1", "0", "-1", "0", "0", "0", "0", "0", "250", "50", "0"])
    assert cpu_seconds(f"123 (a b) c) {rest}") == 3.0
    assert cpu_seconds(Path("/proc/self/stat").read_text()) >= 0


def test_metric_values_take_one_metric_and_no_lookalikes() -> None:
    text = "\n".join(
        [
            "# HELP arena_feed_lag_seconds The latest book's receive time minus ...",
            "# TYPE arena_feed_lag_seconds gauge",
            'arena_feed_lag_seconds{coin="BTC"} 0.25',
            'arena_feed_lag_seconds{coin="ETH"} 1.5e-3',
            "arena_feed_lag_seconds_total 99",
            "arena_log_bytes 1.2345e+06",
        ]
    )
    assert metric_values(text, "arena_feed_lag_seconds") == [0.25, 0.0015]
    assert metric_values(text, "arena_log_bytes") == [1234500.0]
    assert metric_values(text, "arena_entries") == []


def test_growth_per_day_reads_the_sampled_size_off_a_polyline() -> None:
    points = [(0, 0), (10, 100), (20, 300)]
    assert interpolate(points, 5) == 50
    assert interpolate(points, -5) == 0 and interpolate(points, 99) == 300
    assert growth_per_period(points, [0, 10, 20]) == [100, 200]
    assert growth_per_period(points, [5, 15, 40]) == [150, 100]
    assert sum(growth_per_period(points, [0, 3, 7, 12, 20])) == 300
    with pytest.raises(ValueError, match="no points"):
        interpolate([], 1)


def test_prices_and_sizes_are_exact_and_on_the_lot_grid() -> None:
    assert px_e8("104250.5") == 10_425_050_000_000
    assert px_e8("0.001234") == 123_400
    assert px_e8("41") == 41 * 10**8
    for bad in ("", "1e5", "-3", "1.123456789", "1.2.3"):
        with pytest.raises(ValueError, match="not a price"):
            px_e8(bad)
    btc = lots_for(100, 100_000 * 10**8, 5)  # $100 of BTC at $100,000: 0.001 BTC
    assert btc == 100_000
    sol = lots_for(100, 187_42 * 10**6, 2)  # at $187.42: 53 lots of 0.01
    assert sol == 53 * 10**6
    assert lots_for(1, 100_000 * 10**8, 2) == 10**6  # never under one lot


def test_the_mix_of_agents() -> None:
    fifty = kinds(50)
    assert [fifty.count(k) for k in ("maker", "taker", "reader", "idle")] == [20, 15, 5, 10]
    ten = kinds(10)
    assert [ten.count(k) for k in ("maker", "taker", "reader", "idle")] == [4, 3, 1, 2]
    assert len(kinds(2)) == 2 and len(kinds(3)) == 3


def test_the_simulated_clock_maps_both_ways() -> None:
    c = sim_clock(1_796_601_600_715, 1_796_500_000_000, Fraction(1440))
    assert c.day0 == 1_796_601_600_000
    assert c.sim(c.wall(c.origin_t + DAY_MS)) == c.origin_t + DAY_MS
    assert c.wall(c.origin_t + DAY_MS) - c.origin_wall == 60_000  # a day a minute


def test_table_aligns_numbers_right_and_names_left() -> None:
    text = table(["day", "MB", "p99 ms"], [[1, 248.4, 1024.0], ["all", 12_345, None]])
    lines = text.splitlines()
    assert lines[0] == "day      MB  p99 ms"
    assert lines[1] == "---  ------  ------"
    assert lines[2] == "1    248.40   1,024"
    assert lines[3] == "all  12,345       -"
    assert "nan" not in table(["x"], [[math.nan]])


def test_flatness_compares_the_last_week_with_the_first() -> None:
    weeks = [
        {"period": 1, "p50_ms": 2.0, "p99_ms": 10.0, "rss_max_mib": 100.0},
        {"period": 2, "p50_ms": 2.0, "p99_ms": 14.0, "rss_max_mib": 104.0},
        {"period": 3, "p50_ms": 3.0, "p99_ms": 30.0, "rss_max_mib": 110.0},
    ]
    result = {
        "orders_by_week": weeks,
        "per_day": [],
        "rss_mib": {"max": 110.0, "ceiling": 400.0},
        "restarts": [
            {"checkpoint": "off", "answered_s": 60.0},
            {"checkpoint": "10s", "answered_s": 1.2},
        ],
    }
    flat = flatness(result)
    assert flat["compared"] == "weeks"
    assert (flat["rss_ratio"], flat["p50_ratio"], flat["p99_ratio"]) == (1.1, 1.5, 3.0)
    assert flat["rss_flat"] is True and flat["latency_flat"] is False
    assert flat["restart_under_3s"] is True
    result["restarts"] = [{"checkpoint": "(none)", "answered_s": 2.0}]
    result["rss_mib"] = {"max": 500.0, "ceiling": 400.0}
    flat = flatness(result)
    assert flat["restart_under_3s"] is None and flat["rss_flat"] is False
    one_week = result | {"orders_by_week": weeks[:1], "per_day": weeks}
    assert flatness(one_week)["compared"] == "days"


SCRAPE = """# HELP arena_request_duration_seconds Time to answer
arena_request_duration_seconds_bucket{le="0.01",method="GET",route="/v1/orders"} 50.0
arena_request_duration_seconds_bucket{le="0.1",method="GET",route="/v1/orders"} 60.0
arena_request_duration_seconds_bucket{le="+Inf",method="GET",route="/v1/orders"} 61.0
arena_request_duration_seconds_bucket{le="0.01",method="POST",route="/v1/orders"} 90.0
arena_request_duration_seconds_bucket{le="0.1",method="POST",route="/v1/orders"} 99.0
arena_request_duration_seconds_bucket{le="+Inf",method="POST",route="/v1/orders"} 100.0
arena_request_duration_seconds_bucket{le="0.01",method="POST",route="/v1/orders/x"} 7.0
arena_request_duration_seconds_count{method="POST",route="/v1/orders"} 100.0
"""


def test_buckets_take_one_series_of_a_histogram_in_order() -> None:
    post = ('route="/v1/orders"', 'method="POST"')
    assert buckets(SCRAPE, "arena_request_duration_seconds", post) == (90.0, 99.0, 100.0)
    get = ('route="/v1/orders"', 'method="GET"')
    assert buckets(SCRAPE, "arena_request_duration_seconds", get) == (50.0, 60.0, 61.0)
    assert buckets(SCRAPE, "arena_loop_lag_seconds") == ()


def test_bucket_quantile_is_the_bound_of_the_bucket_of_the_observations_between() -> None:
    bounds = (0.01, 0.1)
    before, after = (90.0, 99.0, 100.0), (190.0, 199.0, 210.0)  # 100 more: 100, 0, 10
    assert bucket_quantile(before, after, bounds, 0.5) == 0.01
    assert bucket_quantile(before, after, bounds, 0.99) == math.inf  # 10 of 110 past 0.1
    assert bucket_quantile((), (90.0, 99.0, 100.0), bounds, 0.95) == 0.1  # from nothing
    assert bucket_quantile(after, after, bounds, 0.5) is None  # none in between
    assert bucket_quantile(before, (1.0,), bounds, 0.5) is None  # not this histogram


@given(st.lists(st.integers(0, 2), min_size=1, max_size=200), st.floats(0.01, 1.0))
def test_bucket_quantile_has_q_of_the_observations_at_or_below_it(
    picks: list[int], q: float
) -> None:
    bounds = (0.01, 0.1)
    counts = [picks.count(i) for i in range(3)]
    cumulative = tuple(float(sum(counts[: i + 1])) for i in range(3))
    bound = bucket_quantile((), cumulative, bounds, q)
    at = (*bounds, math.inf).index(bound)
    assert cumulative[at] >= q * len(picks)
    assert at == 0 or cumulative[at - 1] < q * len(picks)


def test_a_stall_s_cause_is_the_innermost_frame_of_ours_most_of_its_stacks_show() -> None:
    from arena_tui.host.stalls import Stall
    from bench.season_stalls import WAITING, cause

    ours = ("msgspec/json.py:1 (encode)", "host/session.py:323 (_commit)", "asyncio/x.py:1 (_run)")
    waiting = ("python3.11/selectors.py:468 (select)", "asyncio/base_events.py:1884 (_run_once)")
    assert cause(Stall(300, 0.0, (ours,), 290, 300)) == "host/session.py:323 (_commit)"
    assert cause(Stall(300, 0.0, (waiting,), 2, 5)) == WAITING
    assert (
        cause(Stall(300, 0.0, (waiting, ours, ours), 100, 390)) == "host/session.py:323 (_commit)"
    )
    assert cause(Stall(300, 0.0, (("asyncio/x.py:1 (_run)",),), 5, 6)) == "asyncio/x.py:1 (_run)"
    assert "before its stack" in cause(Stall(120, 0.0, (), 100, 100))
