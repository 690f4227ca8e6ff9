"""bench/season.py's pure helpers: percentiles by simulated week, the log's growth by
simulated day, the host's RSS from /proc, a Prometheus sample, prices, and the tables.

Nothing here reads a clock or starts a process, so tests/test_bench_season.py checks each.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Iterable, Sequence

DAY_MS = 86_400_000
WEEK_MS = 7 * DAY_MS


def percentile(ordered: Sequence[float], p: float) -> float:
    """The nearest-rank ``p`` percentile (0 < p <= 1) of values sorted ascending; NaN if none.

    The smallest value with at least ``p`` of the values at or below it: p99 of 100 values is
    the 99th, of 1,000 the 990th."""
    if not ordered:
        return math.nan
    rank = math.ceil(p * len(ordered))
    return float(ordered[min(len(ordered), max(rank, 1)) - 1])


def by_period(
    samples: Iterable[tuple[int, float]], origin_ms: int, period_ms: int
) -> dict[int, list[float]]:
    """Values grouped by the period their simulated time falls in (0 from ``origin_ms``),
    each group sorted. A time before the origin is in period 0."""
    groups: dict[int, list[float]] = {}
    for t, value in samples:
        groups.setdefault(max(0, (t - origin_ms) // period_ms), []).append(value)
    for values in groups.values():
        values.sort()
    return dict(sorted(groups.items()))


def latency_rows(
    samples: Iterable[tuple[int, float]], origin_ms: int, period_ms: int = WEEK_MS
) -> list[dict[str, float | int]]:
    """One row a period (week by default): n, p50, p95, p99 and max, in ms."""
    rows: list[dict[str, float | int]] = []
    for period, values in by_period(samples, origin_ms, period_ms).items():
        rows.append(
            {
                "period": period + 1,
                "n": len(values),
                "p50_ms": round(percentile(values, 0.50), 2),
                "p95_ms": round(percentile(values, 0.95), 2),
                "p99_ms": round(percentile(values, 0.99), 2),
                "max_ms": round(values[-1], 2),
            }
        )
    return rows


def rss_kib(status: str, field: str = "VmRSS") -> int | None:
    """``VmRSS`` (or ``VmHWM``, the peak) of a ``/proc/PID/status`` text, in KiB (None if
    absent: a zombie has none)."""
    for line in status.splitlines():
        if line.startswith(field + ":"):
            fields = line.split()
            if len(fields) >= 2 and fields[1].isdigit():
                return int(fields[1])
    return None


def metric_values(text: str, name: str) -> list[float]:
    """Every sample of metric ``name`` (any labels) in a Prometheus text exposition."""
    values: list[float] = []
    for line in text.splitlines():
        if not line.startswith(name) or line[len(name) : len(name) + 1] not in ("{", " "):
            continue
        try:
            values.append(float(line.rsplit(" ", 1)[1]))
        except (IndexError, ValueError):
            continue
    return values


def buckets(text: str, name: str, labels: Sequence[str] = ()) -> tuple[float, ...]:
    """The cumulative counts of histogram ``name``'s buckets, in order (the exposition's),
    of the series whose labels hold each of ``labels`` (e.g. ``route="/v1/orders"``)."""
    series = name + "_bucket{"
    out: list[float] = []
    for line in text.splitlines():
        if line.startswith(series) and all(x in line for x in labels):
            with contextlib.suppress(IndexError, ValueError):
                out.append(float(line.rsplit(" ", 1)[1]))
    return tuple(out)


def bucket_quantile(
    before: tuple[float, ...], after: tuple[float, ...], bounds: Sequence[float], q: float
) -> float | None:
    """The upper bound of the bucket the ``q`` quantile of the observations made between two
    scrapes falls in (``bounds`` without +Inf; inf past the last); None if there were none."""
    if len(after) != len(bounds) + 1:
        return None
    base = before if len(before) == len(after) else (0.0,) * len(after)
    counts = [a - b for a, b in zip(after, base, strict=True)]
    total = counts[-1]
    if total <= 0:
        return None
    for bound, n in zip((*bounds, math.inf), counts, strict=True):
        if n >= q * total:
            return bound
    return math.inf


def interpolate(points: Sequence[tuple[int, int]], x: int) -> float:
    """The value at ``x`` on the polyline through ``points`` (sorted by x), held flat past
    either end."""
    if not points:
        raise ValueError("no points")
    if x <= points[0][0]:
        return float(points[0][1])
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x0 <= x <= x1:
            return float(y0) if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return float(points[-1][1])


def growth_per_period(points: Sequence[tuple[int, int]], bounds: Sequence[int]) -> list[int]:
    """How much the sampled value (the log's size) grew between consecutive ``bounds``:
    ``len(bounds) - 1`` figures, read off the polyline through ``points``."""
    at = [interpolate(points, b) for b in bounds]
    return [round(b - a) for a, b in itertools.pairwise(at)]


def px_e8(text: str) -> int:
    """A Hyperliquid price string (``"104250.5"``) at 1e8, exactly (no float)."""
    whole, _, frac = text.strip().partition(".")
    if not whole.isdigit() or (frac and not frac.isdigit()) or len(frac) > 8:
        raise ValueError(f"not a price: {text!r}")
    return int(whole) * 10**8 + int(frac.ljust(8, "0") or "0")


def lots_for(usd: int, px: int, sz_decimals: int) -> int:
    """The size at 1e8, in whole lots, of about ``usd`` dollars at price ``px`` (1e8), at
    least one lot (``sz * px / 1e16`` dollars)."""
    lot = int(10 ** (8 - sz_decimals))
    return max(1, usd * 10**16 // (px * lot)) * lot


def table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in head], *[[_cell(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    lines = []
    for n, r in enumerate(cells):
        parts = [
            r[0].ljust(widths[0]),
            *(c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)),
        ]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: object) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:,.2f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None else str(value)


def cpu_seconds(stat: str, hz: int = 100) -> float:
    """User + system CPU seconds of a ``/proc/PID/stat`` text (its name may hold spaces)."""
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / hz


def mib(n_bytes: float) -> float:
    return n_bytes / 2**20
