"""Times, durations and a progress line for people, shared by the summaries of several commands.

Machines read ``--json`` (integer ms); this module only renders, so nothing here may feed a
result back into a log or a score.
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from collections.abc import Callable
from typing import IO

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def utc_ms(ms: int | None) -> str:
    """``2024-01-01 12:00:01.138`` (UTC, to the ms)."""
    if ms is None:
        return "-"
    try:
        d = _EPOCH + dt.timedelta(milliseconds=ms)
    except OverflowError:
        return f"{ms} ms"
    return d.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}"


def iso_ms(ms: int) -> str:
    """``2026-12-01T00:12:18.199Z``: ISO 8601 in UTC, to the millisecond (no float)."""
    d = _EPOCH + dt.timedelta(milliseconds=ms)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def utc_minute(ms: int) -> str:
    """``2026-12-07 00:00 UTC`` (a season's window, a run's start)."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms // 1000))


def duration(ms: int | None) -> str:
    """``850 ms``, ``12.3 s``, ``4 min 05 s``, ``3 h 02 min``, ``2 d 04 h``."""
    if ms is None:
        return "-"
    sign, ms = ("-", -ms) if ms < 0 else ("", ms)
    s = ms // 1000
    if ms < 1000:
        text = f"{ms} ms"
    elif s < 60:
        text = f"{s}.{ms % 1000 // 100} s"
    elif s < 3600:
        text = f"{s // 60} min {s % 60:02d} s"
    elif s < 86_400:
        text = f"{s // 3600} h {s % 3600 // 60:02d} min"
    else:
        text = f"{s // 86_400} d {s % 86_400 // 3600:02d} h"
    return sign + text


def time_range(first: int | None, last: int | None) -> str:
    if first is None or last is None:
        return "no inputs"
    return f"{utc_ms(first)} -> {utc_ms(last)} UTC ({duration(last - first)})"


class Ticker:
    """A status line on stderr for long work, only when stderr is a terminal."""

    def __init__(self, label: str, enabled: bool | None = None, every_s: float = 0.5) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.every_s = every_s
        self.shown = time.monotonic()
        self.dirty = False

    def __call__(self, lines: int, t: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.shown < self.every_s:
            return
        self.shown = now
        self.dirty = True
        sys.stderr.write(f"\r{self.label}: {lines:,} lines, at {utc_ms(t)} UTC ")
        sys.stderr.flush()

    def done(self) -> None:
        if self.dirty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.dirty = False


class Progress:
    """A status line on stderr for long runs, only when stderr is a terminal.

    It shows the inputs so far, the simulated time reached (with the share of ``span``, the
    season's window, when given), the inputs a second and how many times faster than real
    time the simulation runs. ``clock`` and ``stream`` are for tests.
    """

    def __init__(
        self,
        enabled: bool | None = None,
        every_s: float = 0.5,
        *,
        label: str = "replay",
        span: tuple[int, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
        stream: IO[str] | None = None,
    ) -> None:
        self.stream = stream
        out = self.stream or sys.stderr
        self.enabled = out.isatty() if enabled is None else enabled
        self.every_s = every_s
        self.label = label
        self.span = span
        self.clock = clock
        self.started = clock()
        self.shown = self.started
        self.first: tuple[float, int] | None = None  # (wall, simulated ms) at the first update

    def line(self, inputs: int, t: int, now: float) -> str:
        rate = inputs / max(now - self.started, 1e-9)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t // 1000))
        text = f"{self.label}: {inputs:,} inputs  at {stamp} UTC"
        if self.span is not None and self.span[1] > self.span[0] and t >= self.span[0]:
            done = min(t - self.span[0], self.span[1] - self.span[0])
            text += f" ({done * 100 // (self.span[1] - self.span[0])}% of the season)"
        text += f"  {rate:,.0f} inputs/s"
        if self.first is not None and now > self.first[0] and t > self.first[1]:
            speed = (t - self.first[1]) / 1000 / (now - self.first[0])
            text += f"  {speed:,.0f}x real time"
        return text

    def update(self, inputs: int, t: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if self.first is None:
            self.first = (now, t)
        if now - self.shown < self.every_s:
            return
        self.shown = now
        out = self.stream or sys.stderr
        out.write(f"\r{self.line(inputs, t, now)}\033[K")
        out.flush()

    def done(self) -> None:
        if self.enabled and self.shown != self.started:
            out = self.stream or sys.stderr
            out.write("\r\033[K")
            out.flush()


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 entry``, ``2 entries``, ``1,024 inputs``: the count and the word that agrees."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def ratio_pct(e8: int) -> str:
    """An e8 ratio as an exact percentage: six decimals, every digit the engine has, so
    ``S = R - MDD`` adds up on screen digit for digit (``-0.119912%``)."""
    sign = "-" if e8 < 0 else ""
    whole, frac = divmod(abs(e8), 10**6)
    return f"{sign}{whole}.{frac:06d}%"


def signed_pct(e8: int) -> str:
    """``ratio_pct`` with its sign always shown (``+0.000120%``): a lead or a bound."""
    return ratio_pct(e8) if e8 < 0 else "+" + ratio_pct(e8)


def stat_pct(e8: float) -> str:
    """A float statistic in e8 units (a bootstrap bound, a mean) as a signed percentage
    with three significant figures, never ``0.000`` for a bound that is not zero
    (``+0.000123%``, ``-1.25%``, ``0%`` only for zero itself)."""
    if e8 == 0:
        return "0%"
    pct = e8 / 10**6
    mag = abs(pct)
    places = max(2, 2 - int(f"{mag:e}".split("e")[1]))
    return f"{pct:+.{places}f}%"


def pct(ratio_e8: int) -> str:
    """An e8 ratio as a percentage with 2 decimals, truncated toward zero (a share)."""
    sign = "-" if ratio_e8 < 0 else ""
    whole, frac = divmod(abs(ratio_e8), 10**6)
    return f"{sign}{whole}.{frac // 10**4:02d}%"


def usd(e6: int) -> str:
    """Money e6 as dollars with cents, truncated toward zero."""
    sign = "-" if e6 < 0 else ""
    whole, frac = divmod(abs(e6), 10**6)
    return f"{sign}{whole:,}.{frac // 10**4:02d}"
