"""The recorder's logic, with no socket and no clock of its own: frames in, log lines out.

Why this module exists: what to write, with which ``t``, and where the recording has holes
are the parts of ``arena record`` a bug would silently ruin weeks of data with, so they
live here, driven by the socket loop (``arena_tui.record.feed``) in production and by tests with
an injected clock.

- Every market frame is written verbatim as ``{"t":<receive ms>,"hl":<frame>}``; a frame
  holding a newline is re-encoded compactly (same tokens, no whitespace). ``t`` never
  decreases: a clock that steps back is clamped to the last ``t`` written.
- Not written, only counted: ``pong`` and ``subscriptionResponse`` (no market data; the
  reconnects they mark are in the gap records), and frames the log could not hold: not
  valid UTF-8 JSON, not one JSON object, or a known channel the log reader would refuse.
- A gap: every interruption of the feed (a lost connection, silence, a restart of the
  recorder over an existing recording) becomes one ``{"type":"gap","from","to","reason"}``
  input, written when the feed is back, just before its first message: ``from`` is the
  ``t`` of the last input before the loss, ``to`` (and the gap's own ``t``) the first after.
  Failed reconnects within one interruption extend it; they add no gap.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec

from arena_tui.logs.daylog import DayLog
from engine.inputs import KNOWN_CHANNELS, AssetCtx, Book, Line, Trades

CONTROL_CHANNELS = frozenset({"pong", "subscriptionResponse"})

Event = dict[str, Any]


class _Envelope(msgspec.Struct):
    channel: Any = None
    data: msgspec.Raw = msgspec.Raw(b"null")


_ENVELOPE = msgspec.json.Decoder(_Envelope)
_LINE = msgspec.json.Decoder(Line)


class Recorder:
    """Turn received frames into log lines, gaps and counts (see the module docstring).

    ``clock``: wall time in ms. ``on_event``: told of gaps, bad frames, connections and
    files as ``{"event": ..., ...}`` dicts (the status line and ``--json`` show them).
    """

    def __init__(
        self,
        log: DayLog,
        clock: Callable[[], int],
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.log = log
        self.clock = clock
        self.on_event = on_event or (lambda event: None)
        self.last_t: int | None = None
        self.pending: tuple[int, str] | None = None  # (from, reason) of an open interruption
        self.counts: Counter[tuple[str, str]] = Counter()  # (coin, channel) -> messages
        self.messages = 0
        self.control = 0
        self.bad_frames = 0
        self.gaps = 0
        self.clamped = 0
        self.connects = 0
        self.failed_connects = 0
        self.connected = False
        self.delivered = False  # the current (or last) connection delivered market data
        self.started_at = 0

    def start(self) -> None:
        """Open the recording; a previous input in it means a restart gap is owed."""
        self.started_at = self.clock()
        log = self.log
        log.on_file = lambda kind, what: self.on_event({"event": kind, "path": str(what)})
        self.last_t = log.open(self.started_at)
        if self.last_t is not None:
            self.pending = (self.last_t, "restart")

    def now(self) -> int:
        t = self.clock()
        if self.last_t is not None and t < self.last_t:
            self.clamped += 1
            return self.last_t
        return t

    def frame(self, frame: bytes) -> bool:
        """One received frame; True if it was market data (and is now in the log)."""
        t = self.now()
        try:
            frame.decode("utf-8")
            if b"\n" in frame:
                frame = msgspec.json.format(frame, indent=-1)
            env = _ENVELOPE.decode(frame)
        except (UnicodeDecodeError, msgspec.DecodeError) as exc:
            return self._bad(frame, f"not one JSON object: {exc}")
        channel = env.channel if isinstance(env.channel, str) else ""
        if channel in CONTROL_CHANNELS:
            self.control += 1
            return False
        line = b'{"t":%d,"hl":%s}' % (t, frame)
        coin = ""
        if channel in KNOWN_CHANNELS:
            try:
                hl = _LINE.decode(line).hl
            except msgspec.DecodeError as exc:
                return self._bad(frame, f"a {channel} message the log reader would refuse: {exc}")
            coin = _coin(hl)
        if self.pending is not None:
            self._gap(t)
        self.log.write_hl(t, frame)
        self.last_t = t
        self.messages += 1
        self.counts[coin, channel or "?"] += 1
        self.delivered = True
        return True

    def _bad(self, frame: bytes, why: str) -> bool:
        self.bad_frames += 1
        self.on_event(
            {"event": "bad_frame", "why": why, "head": frame[:120].decode("utf-8", "replace")}
        )
        return False

    def _gap(self, t: int) -> None:
        assert self.pending is not None
        start, reason = self.pending
        doc = {"type": "gap", "from": start, "to": t, "reason": reason}
        self.log.write_arena(t, doc)
        self.pending = None
        self.gaps += 1
        self.on_event({"event": "gap", "from": start, "to": t, "reason": reason})

    def on_connected(self, url: str) -> None:
        self.connects += 1
        self.connected = True
        self.delivered = False
        self.on_event({"event": "connected", "url": url})

    def on_lost(self, reason: str, detail: str, retry_ms: int) -> None:
        """The feed stopped (``reason``: disconnected, silence, error)."""
        self.connected = False
        if self.pending is None and self.last_t is not None:
            self.pending = (self.last_t, reason)
        self.on_event({"event": "lost", "reason": reason, "detail": detail, "retry_ms": retry_ms})

    def on_connect_failed(self, detail: str, retry_ms: int) -> None:
        self.failed_connects += 1
        self.on_event({"event": "connect_failed", "detail": detail, "retry_ms": retry_ms})

    def close(self, finish_compression: bool = True) -> None:
        self.log.close(finish_compression)

    def status(self) -> dict[str, Any]:
        """Counters for the status line and ``--json`` (cumulative; rates are the caller's)."""
        path = self.log.path
        return {
            "messages": self.messages,
            "by_coin": _by_coin(self.counts),
            "gaps": self.gaps,
            "gap_open": self.pending is not None,
            "bad_frames": self.bad_frames,
            "control": self.control,
            "connects": self.connects,
            "failed_connects": self.failed_connects,
            "connected": self.connected,
            "bytes": self.log.bytes_written,
            "file": None if path is None else str(path),
            "last_t": self.last_t,
        }


def _coin(hl: Any) -> str:
    if type(hl) is Book or type(hl) is AssetCtx:
        return str(hl.data.coin)
    if type(hl) is Trades and hl.data:
        return hl.data[0].coin
    return ""


def _by_coin(counts: Counter[tuple[str, str]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (coin, channel), n in counts.items():
        out.setdefault(coin, {})[channel] = n
    return out
