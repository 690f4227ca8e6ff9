"""bench/season.py's watch on the host (RSS, CPU, the log, /metrics every second) and its
report: figures by simulated day and week, the table for people.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from arena_tui.host.metrics import LATENCY_BUCKETS
from bench.host import Entry, http_request, wall_ms
from bench.season_agents import Record
from bench.season_stats import (
    DAY_MS,
    WEEK_MS,
    bucket_quantile,
    buckets,
    by_period,
    cpu_seconds,
    growth_per_period,
    latency_rows,
    metric_values,
    percentile,
    rss_kib,
    table,
)

ORDER_SERIES = "arena_request_duration_seconds"
ORDER_LABELS = ('route="/v1/orders"', 'method="POST"')


@dataclass(frozen=True)
class SimClock:
    """The host's map between the days' (simulated) times and its wall clock."""

    origin_t: int
    origin_wall: int
    speed: Fraction

    def sim(self, wall: int) -> int:
        return self.origin_t + (wall - self.origin_wall) * self.speed.numerator // (
            self.speed.denominator
        )

    def wall(self, sim: int) -> int:
        return self.origin_wall + (sim - self.origin_t) * self.speed.denominator // (
            self.speed.numerator
        )

    @property
    def day0(self) -> int:
        """Midnight (UTC) of the first simulated day."""
        return self.origin_t // DAY_MS * DAY_MS


def sim_clock(origin_t: int, origin_wall: int, speed: Fraction) -> SimClock:
    return SimClock(int(origin_t), int(origin_wall), speed)


@dataclass
class Sample:
    wall: int
    rss_kib: int
    cpu_s: float
    log_bytes: int
    lines: float
    feed_lag_s: float  # the largest over the coins of the latest book's receive - exchange time
    book_age_s: float  # the largest over the coins of the time since the latest book
    load1: float  # the machine's 1-minute load average (2 cores, shared)
    gc_full: float = 0.0  # the host's full garbage-collector passes so far (/metrics)
    gc_full_s: float = 0.0  # and the time they held it
    # the host's own histograms (cumulative bucket counts, /metrics): its time to answer an
    # order (from the request's arrival to its answer: no client, no network) and how late
    # its loop woke (a tree before the dial: empty)
    order_buckets: tuple[float, ...] = ()
    loop_buckets: tuple[float, ...] = ()
    fsync_buckets: tuple[float, ...] = ()  # the log's fsync per batch (orders wait for it)


@dataclass
class Watch:
    pid: int
    log: Path
    port: int
    clock: SimClock
    period_s: float = 1.0
    samples: list[Sample] = field(default_factory=list)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> None:
        conn = Entry(self.port, "", b"")
        await conn.connect()
        scrape = http_request("GET", "/metrics")
        while not self._stop.is_set():
            proc = Path(f"/proc/{self.pid}")
            try:
                status, stat = (proc / "status").read_text(), (proc / "stat").read_text()
                _, body, _ = await conn.exchange(scrape)
            except (OSError, asyncio.IncompleteReadError):
                break  # the host is gone
            text = body.decode()
            lag = metric_values(text, "arena_feed_lag_seconds")
            age = metric_values(text, "arena_book_age_seconds")
            self.samples.append(
                Sample(
                    wall=wall_ms(),
                    rss_kib=rss_kib(status) or 0,
                    cpu_s=cpu_seconds(stat),
                    log_bytes=self.log.stat().st_size,
                    lines=sum(metric_values(text, "arena_log_lines_written_total")),
                    feed_lag_s=max(lag, default=math.nan),
                    book_age_s=max(age, default=math.nan),
                    load1=os.getloadavg()[0],
                    gc_full=_last(metric_values(text, "arena_gc_pause_seconds_count")),
                    gc_full_s=_last(metric_values(text, "arena_gc_pause_seconds_sum")),
                    order_buckets=buckets(text, ORDER_SERIES, ORDER_LABELS),
                    loop_buckets=buckets(text, "arena_loop_lag_seconds"),
                    fsync_buckets=buckets(text, "arena_log_fsync_duration_seconds"),
                )
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.period_s)
        if conn.writer is not None:
            conn.writer.close()


def _per(
    watch: Watch, get: Callable[[Sample], float], period: int, pick: Callable[[list[float]], float]
) -> list[float]:
    c = watch.clock
    groups = by_period(((c.sim(s.wall), get(s)) for s in watch.samples), c.day0, period)
    return [round(pick(v), 3) for v in groups.values()]


def report_figures(
    record: Record, watch: Watch, args: Any, days: list[dict[str, Any]], log_bytes: int
) -> dict[str, Any]:
    c = watch.clock
    bounds = [c.wall(c.day0 + k * DAY_MS) for k in range(args.days + 1)]
    sizes = growth_per_period([(s.wall, s.log_bytes) for s in watch.samples], bounds)
    lines = growth_per_period([(s.wall, int(s.lines)) for s in watch.samples], bounds)
    cpu_ms = growth_per_period([(s.wall, round(s.cpu_s * 1000)) for s in watch.samples], bounds)
    last_ms = c.day0 + args.days * DAY_MS - 1  # (a request sent just after the end: the last day)
    orders = [(min(c.sim(w), last_ms), ms) for w, ms in record.orders]
    cancels = [(min(c.sim(w), last_ms), ms) for w, ms in record.cancels]
    reads = [(min(c.sim(w), last_ms), ms) for w, ms in record.reads]
    rss = _per(watch, lambda s: s.rss_kib / 1024, DAY_MS, max)
    lag = _per(watch, lambda s: s.feed_lag_s, DAY_MS, _nanmax)
    age = _per(watch, lambda s: s.book_age_s, DAY_MS, _nanmax)
    load = _per(watch, lambda s: s.load1, DAY_MS, lambda v: sum(v) / len(v))
    daily = {row["period"]: row for row in latency_rows(orders, c.day0, DAY_MS)}
    per_day = []
    for d in range(args.days):
        lat = daily.get(d + 1, {})
        per_day.append(
            {
                "day": d + 1,
                "log_mb": round(sizes[d] / 1e6, 1),
                "lines": lines[d],
                "host_cpu_s": round(cpu_ms[d] / 1000, 1),
                "market_mb": round(days[d]["bytes"] / 1e6, 1),
                "orders": lat.get("n", 0),
                "p50_ms": lat.get("p50_ms"),
                "p99_ms": lat.get("p99_ms"),
                "rss_max_mib": _at(rss, d),
                "feed_lag_max_s": _at(lag, d),
                "book_age_max_s": _at(age, d),
                "load1": _at(load, d),
            }
        )
    first, last = watch.samples[0], watch.samples[-1]
    wall_s = (last.wall - first.wall) / 1000
    rss_all = [s.rss_kib / 1024 for s in watch.samples]
    weeks = latency_rows(orders, c.day0, WEEK_MS)
    rss_weeks = _per(watch, lambda s: s.rss_kib / 1024, WEEK_MS, max)
    for row, top in zip(weeks, rss_weeks, strict=False):
        row["rss_max_mib"] = top
    for row, top in zip(weeks, _per(watch, lambda s: s.feed_lag_s, WEEK_MS, _nanmax), strict=False):
        row["feed_lag_max_s"] = top
    _gc_by_week(watch, weeks)
    _host_side_by_week(watch, weeks)
    sim_minutes = args.days * 1440
    return {
        "days": args.days,
        "agents": args.agents,
        "speed": args.speed,
        "pace": args.pace,
        "checkpoint_every": args.checkpoint_every,
        "log_bytes": log_bytes,
        "per_day": per_day,
        "orders_by_week": weeks,
        "cancels_by_week": latency_rows(cancels, c.day0, WEEK_MS),
        "reads_by_week": latency_rows(reads, c.day0, WEEK_MS),
        "outcomes": dict(sorted(record.outcomes.items())),
        "connection_errors": record.errors,
        "orders": len(record.orders),
        "orders_per_wall_s": round(len(record.orders) / max(wall_s, 1e-9), 1),
        "orders_per_agent_per_sim_min": round(len(record.orders) / args.agents / sim_minutes, 4),
        "rss_mib": {
            "first": round(rss_all[0], 1),
            "max": round(max(rss_all), 1),
            "last": round(rss_all[-1], 1),
            "ceiling": args.rss_ceiling_mib,
        },
        "host_cpu_share": round((last.cpu_s - first.cpu_s) / max(wall_s, 1e-9), 2),
        "feed_lag_s": _spread([s.feed_lag_s for s in watch.samples]),
        "book_age_s": _spread([s.book_age_s for s in watch.samples]),
        "samples": len(watch.samples),
        "rss_series": _series(watch),
    }


def _series(watch: Watch, points: int = 200) -> list[tuple[float, float]]:
    """(simulated day, RSS MiB) at about ``points`` evenly spaced samples."""
    c, samples = watch.clock, watch.samples
    step = max(1, len(samples) // points)
    return [
        (round((c.sim(s.wall) - c.day0) / DAY_MS, 3), round(s.rss_kib / 1024, 1))
        for s in samples[::step]
    ]


def flatness(r: dict[str, Any]) -> dict[str, Any]:
    """The last week against the first (the last day against the first in a shorter run):
    RSS max and order p50/p99 ratios, and whether the goals hold (RSS under the ceiling and
    within 1.25x; p99 within 2x; a restart answering in under 3 s)."""
    rows = r["orders_by_week"] if len(r["orders_by_week"]) > 1 else r["per_day"]
    first, last = rows[0], rows[-1]
    key = "rss_max_mib"
    out: dict[str, Any] = {"compared": "weeks" if rows is r["orders_by_week"] else "days"}
    out["rss_ratio"] = _ratio(last.get(key), first.get(key))
    out["p50_ratio"] = _ratio(last.get("p50_ms"), first.get("p50_ms"))
    out["p99_ratio"] = _ratio(last.get("p99_ms"), first.get("p99_ms"))
    days = r["per_day"]
    if len(days) > 1:  # the host's CPU seconds a simulated day: its work, whatever the load
        out["cpu_ratio"] = _ratio(days[-1].get("host_cpu_s"), days[0].get("host_cpu_s"))
    rss_ok = r["rss_mib"]["max"] <= r["rss_mib"]["ceiling"]
    out["rss_flat"] = rss_ok and out["rss_ratio"] is not None and out["rss_ratio"] <= 1.25
    out["latency_flat"] = out["p99_ratio"] is not None and out["p99_ratio"] <= 2.0
    fast = [x["answered_s"] for x in r["restarts"] if x["checkpoint"] not in ("off", "(none)")]
    out["restart_under_3s"] = bool(fast) and max(fast) < 3.0 if fast else None
    return out


def _ratio(a: Any, b: Any) -> float | None:
    if not isinstance(a, int | float) or not isinstance(b, int | float) or not b:
        return None
    return round(a / b, 2)


def _at(values: list[float], i: int) -> float | None:
    return values[i] if i < len(values) else None


def _gc_by_week(watch: Watch, weeks: list[dict[str, Any]]) -> None:
    """Each week's full garbage-collector passes in the host, and their mean pause."""
    c = watch.clock
    bounds = [c.wall(c.day0 + k * WEEK_MS) for k in range(len(weeks) + 1)]
    passes = growth_per_period([(s.wall, round(s.gc_full)) for s in watch.samples], bounds)
    held = growth_per_period([(s.wall, round(s.gc_full_s * 1e6)) for s in watch.samples], bounds)
    for row, n, us in zip(weeks, passes, held, strict=False):
        row["gc_full"] = n
        row["gc_full_mean_ms"] = round(us / n / 1000, 1) if n > 0 else None


def _host_side_by_week(watch: Watch, weeks: list[dict[str, Any]]) -> None:
    """Each week's p99 of the host's own answer time to an order and of its loop's lateness,
    and its slowest fsync of the log (the upper bound of the bucket each falls in, ms): what
    the host did, apart from the agents' own process and the machine's scheduling of it."""
    c = watch.clock
    for k, row in enumerate(weeks):
        lo, hi = c.wall(c.day0 + k * WEEK_MS), c.wall(c.day0 + (k + 1) * WEEK_MS)
        inside = [s for s in watch.samples if lo <= s.wall <= hi]
        if len(inside) < 2:
            continue
        first, last = inside[0], inside[-1]
        for key, attr, q in (
            ("host_p99_ms", "order_buckets", 0.99),
            ("loop_p99_ms", "loop_buckets", 0.99),
            ("fsync_max_ms", "fsync_buckets", 1.0),
        ):
            b = bucket_quantile(getattr(first, attr), getattr(last, attr), LATENCY_BUCKETS, q)
            row[key] = None if b is None else b * 1000


def _last(values: list[float]) -> float:
    """The last sample of a series by generation (0, 1, 2): the full passes'; 0 if none
    (a host before the dial)."""
    return values[-1] if values else 0.0


def _nanmax(values: list[float]) -> float:
    real = [v for v in values if not math.isnan(v)]
    return max(real) if real else math.nan


def _spread(values: list[float]) -> dict[str, float]:
    real = sorted(v for v in values if not math.isnan(v))
    return {
        "p50": round(percentile(real, 0.5), 3),
        "p99": round(percentile(real, 0.99), 3),
        "max": round(real[-1], 3) if real else math.nan,
    }


DAY_COLUMNS = [
    ("day", "day"),
    ("log_mb", "log MB"),
    ("lines", "lines"),
    ("market_mb", "market MB"),
    ("host_cpu_s", "host CPU s"),
    ("orders", "orders"),
    ("p50_ms", "p50 ms"),
    ("p99_ms", "p99 ms"),
    ("rss_max_mib", "RSS max MiB"),
    ("feed_lag_max_s", "lag max s"),
    ("book_age_max_s", "book age max s"),
    ("load1", "load"),
]
WEEK_COLUMNS = [
    ("period", "week"),
    ("n", "orders"),
    ("p50_ms", "p50 ms"),
    ("p95_ms", "p95 ms"),
    ("p99_ms", "p99 ms"),
    ("max_ms", "max ms"),
    ("rss_max_mib", "RSS max MiB"),
    ("feed_lag_max_s", "lag max s"),
    ("gc_full", "full GCs"),
    ("gc_full_mean_ms", "full GC mean ms"),
    ("host_p99_ms", "host p99 <= ms"),
    ("loop_p99_ms", "loop lag p99 <= ms"),
    ("fsync_max_ms", "fsync max <= ms"),
]
RESTART_COLUMNS = [
    ("checkpoint", "checkpoints"),
    ("after", "after"),
    ("listening_s", "listening s"),
    ("answered_s", "order answered s"),
    ("status", "status"),
    ("replayed", "inputs replayed"),
    ("peak_rss_mib", "peak RSS MiB"),
]


def _columns(columns: list[tuple[str, str]], rows: list[dict[str, Any]]) -> str:
    return table([title for _, title in columns], [[r.get(k) for k, _ in columns] for r in rows])


def print_report(r: dict[str, Any]) -> None:
    rss = r["rss_mib"]
    print(
        f"arena host soak: {r['days']} simulated days at {r['speed']}x, {r['agents']} agents "
        f"(pace {r['pace']}), fsync on; log {r['log_bytes'] / 1e9:.2f} GB; wall {r['wall_s']} s"
    )
    print(
        f"  orders: {r['orders']:,} ({r['orders_per_wall_s']}/s wall, "
        f"{r['orders_per_agent_per_sim_min']} per agent per simulated minute); host CPU "
        f"{r['host_cpu_share']:.0%} of a core; outcomes {r['outcomes']}"
    )
    lag, fin = r["feed_lag_s"], r["finish"]
    print(
        f"  feed lag (s wall; the engine's backlog): p50 {lag['p50']}, p99 {lag['p99']}, max "
        f"{lag['max']}; the replay's reader {'reached' if fin['reached_end'] else 'did NOT reach'}"
        f" its end {fin['late_s']} s after its scheduled end"
    )
    ok = rss["max"] <= rss["ceiling"]
    print(
        f"  RSS: {rss['first']} MiB at the start, {rss['max']} max, {rss['last']} at the end; "
        f"ceiling {rss['ceiling']:g} MiB: {'met' if ok else 'NOT met'}"
    )
    flat = r.get("flatness") or flatness(r)
    yes = {True: "met", False: "NOT met", None: "not measured"}
    print(
        f"  flat ({flat['compared']}, last/first): RSS max x{flat['rss_ratio']}, order p50 "
        f"x{flat['p50_ratio']}, p99 x{flat['p99_ratio']}, host CPU a day (last/first day) "
        f"x{flat.get('cpu_ratio')}; RSS flat and under the ceiling: "
        f"{yes[flat['rss_flat']]}; p99 within 2x: {yes[flat['latency_flat']]}; restart with "
        f"checkpoints under 3 s: {yes[flat['restart_under_3s']]}"
    )
    print()
    print(_columns(DAY_COLUMNS, r["per_day"]))
    print()
    print(_columns(WEEK_COLUMNS, r["orders_by_week"]))
    print()
    print(_columns(RESTART_COLUMNS, r["restarts"]))
    if not r["checkpoints_available"]:
        print(
            "  restart with checkpoints: not available "
            "(this tree's arena host has no --checkpoint-every)"
        )
    for name in ("verify", "replay"):
        v = r[name]
        if v.get("skipped"):
            print(f"  arena {name}: skipped")
            continue
        rate = v.get("inputs_per_s")
        print(
            f"  arena {name}: {v['seconds']} s, {f'{rate:,}' if rate else '?'} inputs/s, "
            f"{v['mb_per_s']} MB/s (exit {v['exit']}, ok {v.get('ok')})"
        )
