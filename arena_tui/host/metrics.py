"""The operator's dials: ``GET /metrics`` in Prometheus' text format, and ``GET /healthz``.

Why this module exists: an operator must see how a season is doing (orders and their
outcomes, latency, fsync time, the feed's lag and gaps, stale books, the log's size,
entries paused by drawdown) without reading the log, and a load balancer must know whether
the host can take orders. Each session owns its own ``CollectorRegistry`` (never the
process's default one), so tests and several hosts in one process never share a series.

What the order path pays is kept to a few counter increments and one histogram
observation per request; everything else is read from the state the session, its views
and the engine already keep, at scrape time, by :class:`_StateCollector` (on the event
loop thread that owns that state, like every other read of it).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

from arena_tui.host.views import Views
from engine import Engine, Season

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
# seconds: from half a millisecond (an answer on loopback) to 5 s (a stalled disk)
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)


class Session(Protocol):
    """What a scrape reads of ``arena_tui.host.session.Session`` (not imported: it owns
    the dials)."""

    season: Season
    engine: Engine
    views: Views
    durable_size: int
    written: int
    batches: int
    replayed: int


class Dials:
    """One session's registry and the series counted as things happen."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry(auto_describe=True)
        _GC.install()
        self.inputs = Counter(
            "arena_inputs",
            "Orders and cancels that reached the engine, by kind and outcome "
            "(accepted, or rejected with the engine's reason)",
            ["kind", "outcome", "reason"],
            registry=r,
        )
        self.requests = Histogram(
            "arena_request_duration_seconds",
            "Time to answer an HTTP request, by route (its path template) and method",
            ["route", "method"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.public_limited = Counter(
            "arena_public_limited",
            "Public requests refused (429) by their endpoint's per-client limit, by route",
            ["route"],
            registry=r,
        )
        self.fsync = Histogram(
            "arena_log_fsync_duration_seconds",
            "Time the log writer spent in fsync, one observation per batch (group commit)",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.gaps = Counter(
            "arena_feed_gaps",
            "Gaps logged since the host started (the feed lost; one covers every coin), by reason",
            ["reason"],
            registry=r,
        )
        self.gap_seconds = Counter(
            "arena_feed_gap_seconds",
            "The time the gaps logged since the host started cover",
            registry=r,
        )
        self.loop_lag = Histogram(
            "arena_loop_lag_seconds",
            "How late the event loop the orders share woke from a 0.1 s sleep: anything "
            "that holds it (computation, the collector, the machine) delays every order",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self._watched = False
        r.register(_GC)

    def outcome(self, kind: str, reason: str | None) -> None:
        """Count an order or cancel the engine answered: accepted (None) or its reason."""
        if reason is None:
            self.inputs.labels(kind, "accepted", "").inc()
        else:
            self.inputs.labels(kind, "rejected", reason).inc()

    def timed(self, route: str, method: str) -> Callable[[float], None]:
        """The observer of one route and method (bound once: no label look-up per request)."""
        return self.requests.labels(route, method).observe

    def watch(self, session: Session, clock: Callable[[], int]) -> None:
        """Read ``session``'s state at every scrape (a second call changes nothing)."""
        if not self._watched:
            self.registry.register(_StateCollector(session, clock))
            self._watched = True

    def watch_readers(self, lag: Callable[[], int | None]) -> None:
        """Read the reader process's lag (bytes; None: not known yet) at every scrape."""
        self.registry.register(_ReadersCollector(lag))

    def scrape(self) -> bytes:
        return generate_latest(self.registry)


def now_s() -> float:
    return time.perf_counter()


class _StateCollector(Collector):
    """What the session, its views and the engine already hold, read when scraped."""

    def __init__(self, session: Session, clock: Callable[[], int]) -> None:
        self.session = session
        self.clock = clock

    def describe(self) -> list[Metric]:
        return []  # (nothing to check for clashes up front; the names are this module's)

    def collect(self) -> Iterator[Metric]:
        session = self.session
        engine = session.engine
        yield _gauge(
            "arena_log_bytes",
            "The log's durable size: whole lines written and fsynced",
            session.durable_size,
        )
        yield _counter(
            "arena_log_lines_written", "Lines the host wrote since it started", session.written
        )
        yield _counter(
            "arena_log_batches",
            "Batches written and fsynced since the host started",
            session.batches,
        )
        yield _gauge(
            "arena_log_replayed_lines", "Lines replayed from the log at the start", session.replayed
        )
        entries = engine.entries()
        paused = 0
        for e in entries:
            account = engine.account(e)
            if account is not None and account.paused:
                paused += 1
        yield _gauge("arena_entries", "Registered entries", len(entries))
        yield _gauge(
            "arena_entries_paused", "Entries whose new orders are paused by drawdown", paused
        )
        yield _gauge("arena_season_over", "1 once the season's window has ended", int(engine.over))
        yield from self._feed(session)

    def _feed(self, session: Session) -> Iterator[Metric]:
        engine = session.engine
        now = self.clock()
        stale_ms = engine.rules.stale_book_ms
        lag = GaugeMetricFamily(
            "arena_feed_lag_seconds",
            "The latest book's receive time minus its exchange time",
            labels=["coin"],
        )
        age = GaugeMetricFamily(
            "arena_book_age_seconds",
            "Seconds since the latest book was received (absent before the first)",
            labels=["coin"],
        )
        stale = GaugeMetricFamily(
            "arena_book_stale",
            "1 when the latest book is older than the rules' stale_book_ms (or none came yet)",
            labels=["coin"],
        )
        waiting = GaugeMetricFamily(
            "arena_orders_waiting_stale_book",
            "Pending orders of the coin while its latest book is stale (they activate only on a "
            "fresh book)",
            labels=["coin"],
        )
        for m in session.season.markets:
            seen = session.views.books.get(m.coin)
            a = engine.coin_state(m.coin)
            is_stale = seen is None or now - seen[0] > stale_ms
            if seen is not None:
                t, data = seen
                lag.add_metric([m.coin], (t - data.time) / 1000)
                age.add_metric([m.coin], max(0, now - t) / 1000)
            stale.add_metric([m.coin], int(is_stale))
            pending = len(a.pending) if a is not None else 0
            waiting.add_metric([m.coin], pending if is_stale else 0)
        yield from (lag, age, stale, waiting)


class GcPauses(Collector):
    """How long the garbage collector held the process, by generation: the whole process
    stops while it runs, order path included (``arena_gc_pause_seconds``). One for the
    process (the collector is the process's), its callback installed with the first dials."""

    def __init__(self) -> None:
        self.counts = [[0] * (len(LATENCY_BUCKETS) + 1) for _ in range(3)]
        self.sums = [0.0, 0.0, 0.0]
        self._started = 0.0
        self._installed = False

    def install(self) -> None:
        if not self._installed:
            gc.callbacks.append(self._callback)
            self._installed = True

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        took = time.perf_counter() - self._started
        gen = info["generation"]
        counts = self.counts[gen]
        i = 0
        while i < len(LATENCY_BUCKETS) and took > LATENCY_BUCKETS[i]:
            i += 1
        counts[i] += 1
        self.sums[gen] += took

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(
            "arena_gc_pause_seconds",
            "Time the garbage collector held the whole process (orders too), by generation "
            "(2: a full pass)",
            labels=["generation"],
        )
        for gen in range(3):
            total, buckets = 0, []
            bounds = (*LATENCY_BUCKETS, float("inf"))
            for bound, count in zip(bounds, self.counts[gen], strict=True):
                total += count
                buckets.append((_bound(bound), total))
            family.add_metric([str(gen)], buckets, self.sums[gen])
        yield family


def _bound(value: float) -> str:
    return "+Inf" if value == float("inf") else repr(value)


_GC = GcPauses()


class _ReadersCollector(Collector):
    """``--readers-port``: how far the reader process is behind the log (host.readers)."""

    def __init__(self, lag: Callable[[], int | None]) -> None:
        self.lag = lag

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        lag = self.lag()
        if lag is not None:
            yield _gauge(
                "arena_readers_lag_bytes",
                "Bytes of the durable log the reader port has not applied yet",
                lag,
            )


def _gauge(name: str, text: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, text, value=value)


def _counter(name: str, text: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, text, value=value)
