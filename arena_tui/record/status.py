"""What ``arena record`` tells people and scripts while it runs, and when it stops.

Why this module exists: a recorder runs for weeks, mostly unwatched; this renders its
events and counters and nothing else (no decision about the log is made here). A tty gets
a status line redrawn about once a second with events printed above it; a log file
(systemd, tmux pipe) gets one plain line per event and a status line every minute;
``--json`` puts every event and a periodic status on stdout as JSON lines.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from arena_tui.record.recorder import Event
from arena_tui.util.human import plural, utc_ms

ORDER = ("l2Book", "trades", "activeAssetCtx")
QUIET_AFTER = 5  # bad frames described one by one; after that only counted


def utc(ms: int) -> str:
    return f"{utc_ms(ms)} UTC"


def size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    x, unit = n / 1000, "kB"
    for bigger in ("MB", "GB"):
        if x < 1000:
            break
        x, unit = x / 1000, bigger
    return f"{x:.1f} {unit}"


def seconds(ms: int) -> str:
    s = ms // 1000
    if ms < 1000:
        return f"{ms} ms"
    if s < 60:
        return f"{ms / 1000:.1f} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def feed_event(doc: Event, gap_where: str) -> str | None:
    """The words for a feed client's connection events and gaps (None for other events)."""
    kind = doc["event"]
    if kind == "connected":
        return f"connected to {doc['url']}"
    if kind == "lost":
        retry = seconds(doc["retry_ms"])
        return f"connection lost ({doc['reason']}: {doc['detail']}); retrying in {retry}"
    if kind == "connect_failed":
        return f"cannot connect ({doc['detail']}); retrying in {seconds(doc['retry_ms'])}"
    if kind == "gap":
        span = seconds(doc["to"] - doc["from"])
        return f"gap of {span} {gap_where} ({doc['reason']}, from {utc(doc['from'])})"
    return None


class Reporter:
    """Events and status, for a tty, a plain stream, or as JSON lines (see the module)."""

    def __init__(
        self,
        *,
        as_json: bool,
        tty: bool,
        every_s: float,
        out: TextIO = sys.stdout,
        err: TextIO = sys.stderr,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.as_json, self.tty, self.every_s = as_json, tty and not as_json, every_s
        self.out, self.err, self.monotonic = out, err, monotonic
        self._prev: dict[tuple[str, str], int] = {}
        self._prev_at = self._shown_at = monotonic()
        self._line_shown = False
        self._bad_told = 0

    def event(self, doc: Event) -> None:
        if self.as_json:
            self._json(doc)
            return
        text = self._describe(doc)
        if text is not None:
            self._say(text)

    def _describe(self, doc: Event) -> str | None:
        kind = doc["event"]
        said = feed_event(doc, "recorded")
        if said is not None:
            return said
        if kind == "bad_frame":
            self._bad_told += 1
            if self._bad_told > QUIET_AFTER:
                return None
            more = " (further ones are only counted)" if self._bad_told == QUIET_AFTER else ""
            return f"skipped a frame, {doc['why']}: {doc['head']!r}{more}"
        if kind == "meta_failed":
            return f"{doc['detail']}; retrying in {seconds(doc['retry_ms'])}"
        if kind == "meta_fetched":
            return f"meta fetched from {doc['url']} (try {doc['tries']})"
        if kind == "stopped":
            return f"stopped {doc['detail']}"
        if kind == "opened":
            return f"writing {doc['path']}"
        if kind == "compressed":
            return f"closed day compressed: {doc['path']}"
        return str(doc.get("path", doc))

    def _say(self, text: str) -> None:
        if self._line_shown:
            self.err.write("\r\x1b[K")
            self._line_shown = False
        self.err.write(f"arena: record: {text}\n")
        self.err.flush()

    def _json(self, doc: dict[str, Any]) -> None:
        self.out.write(json.dumps(doc, separators=(",", ":")) + "\n")
        self.out.flush()

    def tick(self, status: dict[str, Any]) -> None:
        """About once a second; draws, or every ``every_s`` prints, the status."""
        now = self.monotonic()
        rates = self._rates(status, now)
        if self.tty:
            width = shutil.get_terminal_size().columns - 1  # one screen line, redrawn in place
            self.err.write("\r\x1b[K" + self.line(status, rates)[:width])
            self.err.flush()
            self._line_shown = True
        elif now - self._shown_at >= self.every_s:
            self._shown_at = now
            if self.as_json:
                self._json({"event": "status", **status, "per_s": rates})
            else:
                self._say(self.line(status, rates))

    def _rates(self, status: dict[str, Any], now: float) -> dict[str, dict[str, float]]:
        dt_s = max(now - self._prev_at, 1e-9)
        rates: dict[str, dict[str, float]] = {}
        for coin, chans in status["by_coin"].items():
            for chan, n in chans.items():
                before = self._prev.get((coin, chan), 0)
                rates.setdefault(coin, {})[chan] = round((n - before) / dt_s, 2)
                self._prev[coin, chan] = n
        self._prev_at = now
        return rates

    def line(self, status: dict[str, Any], rates: dict[str, dict[str, float]]) -> str:
        """``live | msg/s book/trades/ctx BTC 2.0/5.1/0.3 ETH ... | gaps 1 | ...``."""
        state = "live" if status["connected"] else "reconnecting"
        coins = " ".join(
            f"{coin or '?'} " + "/".join(f"{chans.get(ch, 0):.1f}" for ch in ORDER)
            for coin, chans in rates.items()
        )
        file = (status["file"] or "-").rsplit("/", 1)[-1]
        return (
            f"{state} | msg/s book/trades/ctx {coins or '-'} | gaps {status['gaps']} | "
            f"bad frames {status['bad_frames']} | {size(status['bytes'])} | {file}"
        )

    def summary(self, status: dict[str, Any], elapsed_ms: int, files: list[str]) -> None:
        if self.as_json:
            self._json({"event": "summary", **status, "elapsed_ms": elapsed_ms, "files": files})
            return
        per = "; ".join(
            f"{coin or '?'}: " + ", ".join(f"{n:,} {ch}" for ch, n in chans.items())
            for coin, chans in status["by_coin"].items()
        )
        self._say(
            f"stopped after {seconds(elapsed_ms)}: {plural(status['messages'], 'message')}"
            f"{f' ({per})' if per else ''}; gaps: {status['gaps']}; "
            f"bad frames: {status['bad_frames']}; {size(status['bytes'])} written"
        )
        for f in files:
            self._say(f"file {f}")
