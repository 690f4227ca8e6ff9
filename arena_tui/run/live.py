"""The live feed as a line source for the runner: ``Backtest.run_live(LiveFeed(...))``.

Why this module exists: a paper run must be the season on the live feed, through the same
loop and run log as a backtest. The recorder's pieces do the receiving (``arena_tui.record.feed``:
socket, heartbeat, silence, reconnects with backoff; ``arena_tui.record.recorder``: receive times
that never decrease, verbatim frames, one gap per interruption), in a background thread
with its own event loop; instead of a day file they write into a thread-safe queue. The
runner's thread takes inputs from the queue and adds ticks (:class:`Stamper`):

- A ``tick`` at every whole second of receive time (``t`` = k * 1000), before any input
  received at or after it, so minute marks, expiries and cancels happen on time with no
  market data, as the contract's host does, and consecutive ticks are exactly 1 s apart
  even when the runner lags behind the feed.
- ``t`` never decreases: a message received just before a tick that the runner has
  already written (the two threads race by a millisecond) is stamped with the tick's ``t``;
  a gap's ``to`` follows its ``t``. Both are counted (``clamped``).
- A market message the engine would refuse (a bad decimal, a malformed book: what
  ``arena logs check`` calls damage) is skipped and counted (``refused``), never written:
  the run log must replay, and one bad frame must not end a day's run.

The run log written from this source is also the recording of what was received (every
market message verbatim with its receive time, and every gap), so ``arena replay`` and
``arena backtest`` read it like any recording.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.logs.daylog import DayLog
from arena_tui.logs.logcheck import check_line
from arena_tui.logs.logfile import TICK_LINE, BadLine, decode_line
from arena_tui.record.feed import Backoff, FeedConfig, run_feed, wall_ms
from arena_tui.record.recorder import Event, Recorder
from arena_tui.run.parts import BacktestError
from engine import Line
from engine.inputs import tick

TICK_MS = 1000
POLL_S = 0.25  # the runner looks for a stop request at least this often

_ENC = msgspec.json.Encoder()
# (receive t, the verbatim message or None, an arena input or None, its decoded line or None)
Item = tuple[int, bytes | None, dict[str, Any] | None, Line | None]
Out = list[tuple[bytes, Line]]


class LiveFeedError(BacktestError):
    """The live feed stopped working under the run (one line)."""


class Stamper:
    """Inputs with their receive times in, run-log lines out, ticks between (no I/O).

    ``now_ms``: the clock when the run begins; the first tick is the next whole second.
    """

    def __init__(self, now_ms: int, tick_ms: int = TICK_MS) -> None:
        self.tick_ms = tick_ms
        self.next_tick = (now_ms // tick_ms + 1) * tick_ms
        self.last_t: int | None = None
        self.last_hl_t: int | None = None  # the t the last market message was logged at
        self.ticks_written = 0
        self.clamped = 0

    def wait_ms(self, now_ms: int) -> int:
        """How long until the next tick is due (<= 0: now)."""
        return self.next_tick - now_ms

    def ticks(self, now_ms: int) -> Out:
        """The ticks due by ``now_ms`` (none if the next is later)."""
        return self._ticks_to(now_ms, [])

    def take(self, item: Item) -> Out:
        """The ticks due before an input received at ``t``, then the input itself."""
        t, message, doc, line = item
        out = self._ticks_to(t, [])
        last = self.last_t
        if last is not None and t < last:
            t = last
            self.clamped += 1
        if message is not None:
            assert line is not None
            raw = b'{"t":%d,"hl":%s}' % (t, message)
            if line.t != t:
                line = msgspec.structs.replace(line, t=t)
            self.last_hl_t = t
        else:
            assert doc is not None
            if doc.get("type") == "gap":
                doc = {**doc, "to": t}  # the recorder's rule: a gap's ``to`` is its own t
                start, logged = doc.get("from"), self.last_hl_t
                if isinstance(start, int) and logged is not None and start < logged:
                    # the last data before the loss was clamped later (a tick was written
                    # before it arrived): ``from`` is that data's t as logged
                    doc["from"] = logged
            raw = b'{"t":%d,"arena":%s}' % (t, _ENC.encode(doc))
            line = decode_line(raw)
        self.last_t = t
        out.append((raw, line))
        return out

    def _ticks_to(self, t: int, out: Out) -> Out:
        while self.next_tick <= t:
            at = self.next_tick
            out.append((TICK_LINE % at, tick(at)))
            self.last_t = at
            self.next_tick = at + self.tick_ms
            self.ticks_written += 1
        return out


class _Tap(DayLog):
    """Where the recorder writes: the live queue instead of a day file."""

    def __init__(self, put_hl: Callable[[int, bytes], None], put: Callable[[Item], None]) -> None:
        super().__init__(Path(), {}, group_fsync_s=None, background=False)
        self._put_hl = put_hl
        self._put = put

    def open(self, now_ms: int) -> int | None:
        return None  # nothing received before this run: no restart gap

    def write_hl(self, t: int, message: bytes) -> None:
        self._put_hl(t, message)

    def write_arena(self, t: int, doc: dict[str, Any]) -> None:
        self._put((t, None, doc, None))

    def tick(self) -> None:
        pass

    def close(self, finish_compression: bool = True) -> None:
        pass


class LiveFeed:
    """Hyperliquid's feed for ``cfg.coins`` as a line source (see the module docstring).

    Iterating starts the feed thread; it ends when :meth:`request_stop` is called (safe in
    a signal handler: it only sets a flag, seen within ``POLL_S``) or the runner stops
    reading; :meth:`close` stops the thread. ``events``: the recorder's news (connected,
    lost, gap, bad frame) and refused messages, for a status line to drain.
    """

    def __init__(
        self,
        cfg: FeedConfig,
        *,
        backoff: Backoff | None = None,
        clock: Callable[[], int] = wall_ms,
        tick_ms: int = TICK_MS,
    ) -> None:
        self.cfg = cfg
        self.backoff = backoff or Backoff()
        self.clock = clock
        self.tick_ms = tick_ms
        self.raw = b""
        self.stop_requested = False
        self.refused = 0
        self.failure: BaseException | None = None
        self.events: deque[Event] = deque(maxlen=1000)
        self.stamper = Stamper(clock(), tick_ms)
        self._queue: queue.SimpleQueue[Item] = queue.SimpleQueue()
        self.recorder = Recorder(_Tap(self._offer, self._queue.put), clock, self.events.append)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = threading.Event()
        self._closed = False

    # ---- the feed thread ---------------------------------------------------------------

    def _offer(self, t: int, message: bytes) -> None:
        try:
            line = check_line(b'{"t":%d,"hl":%s}' % (t, message))
        except BadLine as exc:
            self.refused += 1
            head = message[:120].decode("utf-8", "replace")
            self.events.append({"event": "refused", "why": str(exc), "head": head})
            return
        self._queue.put((t, message, None, line))

    def _main(self) -> None:
        try:
            asyncio.run(self._feed())
        except BaseException as exc:  # told to the runner's thread, which raises it
            self.failure = exc

    async def _feed(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._ready.set()
        if self._closed:
            return
        with contextlib.suppress(asyncio.CancelledError):
            await run_feed(self.recorder, self.cfg, self.backoff)

    # ---- the runner's thread -----------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            return
        self.recorder.start()
        self.stamper = Stamper(self.clock(), self.tick_ms)
        self._thread = threading.Thread(target=self._main, name="arena-live-feed", daemon=True)
        self._thread.start()

    def request_stop(self) -> None:
        self.stop_requested = True

    def __iter__(self) -> Iterator[Line]:
        self.start()
        stamper, clock, get = self.stamper, self.clock, self._queue.get
        try:
            while not self.stop_requested:
                wait_s = min(stamper.wait_ms(clock()) / 1000, POLL_S)
                try:
                    out = stamper.take(get(True, max(wait_s, 0.0)))
                except queue.Empty:
                    self._check_alive()
                    out = stamper.ticks(clock())
                for raw, line in out:
                    self.raw = raw
                    yield line
                    if self.stop_requested:
                        return
        finally:
            self.close()

    def _check_alive(self) -> None:
        thread = self._thread
        if self.failure is not None or (thread is not None and not thread.is_alive()):
            why = self.failure
            text = f"{type(why).__name__}: {why}" if why is not None else "it ended"
            raise LiveFeedError(f"{self.cfg.url}: the feed stopped under the run ({text})")

    def error(self, message: str) -> Exception:
        return LiveFeedError(f"{self.cfg.url}: the engine refused an input: {message}")

    def close(self) -> None:
        """Stop the feed thread (idempotent)."""
        self.stop_requested = True
        if self._closed:
            return
        self._closed = True
        thread = self._thread
        if thread is None:
            return
        self._ready.wait(5)
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # its loop has already closed
                loop.call_soon_threadsafe(task.cancel)
        thread.join(5)

    def status(self) -> dict[str, Any]:
        """The feed's counters (the recorder's, plus ticks, clamped and refused inputs)."""
        return {
            **self.recorder.status(),
            "ticks": self.stamper.ticks_written,
            "clamped": self.stamper.clamped,
            "refused": self.refused,
        }
