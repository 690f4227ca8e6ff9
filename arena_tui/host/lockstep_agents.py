"""The agents of a lockstep run: their vocabulary, their state, and what they ask.

Why this module exists: :class:`~arena_tui.host.lockstep.StepGate` is both the runner's
gate (settle points, the guards, a subscriber of the run's stream) and the desk the HTTP
handlers talk to (steps asked for, wake sets, orders and cancels, streams). This is the
second half, and the words both use (a wake set, a request, an agent's state, the errors
that end a run); ``host.lockstep`` re-exports them. Everything here runs on the runner's
thread except ``ask`` and ``agent_exited``, which only hand it work (see
``host.lockstep``'s docstring).
"""

from __future__ import annotations

import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from threading import Condition
from typing import Any

import msgspec

from arena_tui.host.schemas import decode_failure
from arena_tui.host.views import Views
from arena_tui.run.backtest import Backtest
from arena_tui.util.errors import ArenaError
from engine import events as ev

CHANNELS = ("l2Book", "trades", "activeAssetCtx")
MIN_EVERY_MS = 100
NEVER = 1 << 62
OUTBOX_MAX = 512  # stream messages held before they are handed to the loop
_ENCODE = msgspec.json.Encoder().encode


class AgentExited(ArenaError):
    """An agent's process ended before the run did (one line, the run log kept)."""


class NoProgress(ArenaError):
    """The run made no progress for ``--step-timeout`` (one line, the run log kept)."""


class Interrupted(ArenaError):
    """SIGINT or SIGTERM stopped the run (one line; exit 128 + the signal's number)."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.exit_code = 128 + signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class BadWake(ValueError):
    """A wake set the API refuses (400), with why."""


class WakeBody(msgspec.Struct, forbid_unknown_fields=True):
    """A wake set as sent: it replaces the whole set; what is left out is off (coins: all)."""

    coins: list[str] | None = None
    channels: list[str] = []
    events: bool = False
    marks: bool = False
    every_ms: int | None = None


@dataclass(frozen=True)
class Wake:
    """What wakes an agent. The default (never sent one): every input, events and marks."""

    coins: frozenset[str] | None = None  # None: every coin
    book: bool = True
    trades: bool = True
    ctx: bool = True
    events: bool = True
    marks: bool = True
    every_ms: int | None = None

    def wants(self, coin: str) -> bool:
        return self.coins is None or coin in self.coins


def parse_wake(doc: Any, coins: list[str]) -> Wake:
    """A wake set from a decoded JSON body; BadWake (one line) if the API refuses it."""
    try:
        body = msgspec.convert(doc, WakeBody, strict=True)
    except msgspec.ValidationError as exc:
        raise BadWake(f"wake: {exc}") from None
    except Exception as exc:  # (a RecursionError: nested too deeply)
        raise BadWake(f"wake: {decode_failure(exc)}") from None
    for coin in body.coins or ():
        if coin not in coins:
            raise BadWake(f"wake: coin {coin!r} is not one of this season's {coins}")
    for channel in body.channels:
        if channel not in CHANNELS:
            raise BadWake(f"wake: channel {channel!r} is not one of {list(CHANNELS)}")
    if body.every_ms is not None and body.every_ms < MIN_EVERY_MS:
        raise BadWake(f"wake: every_ms is at least {MIN_EVERY_MS} (or null: no timer)")
    return Wake(
        coins=None if body.coins is None else frozenset(body.coins),
        book="l2Book" in body.channels,
        trades="trades" in body.channels,
        ctx="activeAssetCtx" in body.channels,
        events=body.events,
        marks=body.marks,
        every_ms=body.every_ms,
    )


Answer = Callable[[Any], None]  # resolves a loop future from the runner's thread


@dataclass
class Request:
    """An order or cancel received from an agent, not yet answered."""

    agent: Remote
    msg: dict[str, Any]
    stamp: int
    count: int
    answer: Answer  # called with the events of its input, or None (never applied)


@dataclass
class Remote:
    """One agent's state in the run (the runner's thread only)."""

    name: str
    index: int
    key: str
    wake: Wake = field(default_factory=Wake)
    delivered: int = 0  # the last step given
    done: int = 0  # the last step it said it finished
    now: int = 0  # its simulated time: its step's, or its last answered request's
    active_at: float = 0.0  # monotonic s when it was last given work (a step, an answer)
    reasons: list[str] = field(default_factory=list)  # why it is woken, not yet delivered
    events: list[ev.AnyEvent] = field(default_factory=list)  # its events since its step
    outstanding: int = 0  # requests received and not yet answered
    arrived: list[Request] = field(default_factory=list)  # not yet handed to the runner
    count: int = 0  # requests received
    lagging: bool = False  # timed out: no new step until it calls again
    polled: bool = False  # has called POST /v1/step
    streamed: bool = False  # has opened the stream
    next_timer: int = NEVER
    timer_at: int = -1  # the last timer boundary that woke it (never again)
    step_doc: dict[str, Any] | None = None  # the last step given (re-delivered on reconnect)
    waiters: list[Answer] = field(default_factory=list)  # long polls waiting for a step
    told_over: bool = False
    steps: int = 0
    passes: int = 0  # steps timed out
    reconnects: int = 0  # streams opened again, and first calls (done: null) made again
    dropped_polls: int = 0  # long polls whose connection closed before their step came
    # times the runner had to wait for it: each step, and each answer it got mid-step
    # (counted so, not by whether the runner's thread blocked, which depends on scheduling)
    waits: int = 0

    @property
    def connected(self) -> bool:
        return self.polled or self.streamed

    def quiescent(self) -> bool:
        return self.lagging or self.outstanding > 0 or self.done >= self.delivered

    def counts(self) -> dict[str, int]:
        return {
            "steps": self.steps,
            "passes": self.passes,
            "reconnects": self.reconnects,
            "dropped_polls": self.dropped_polls,
            "waits": self.waits,
        }


class AgentSide:
    """The agents' side of the :class:`~arena_tui.host.lockstep.StepGate`: their state,
    what the HTTP handlers ask (as jobs, run on the runner's thread) and what reaches their
    streams. The gate adds the runner's side: settle points, the guards, the stream it
    subscribes to. ``post(fn)`` runs ``fn`` on the HTTP loop's thread
    (``call_soon_threadsafe``); set once the server runs."""

    def __init__(
        self,
        remotes: list[Remote],
        *,
        step_timeout_s: float,
        think_measured: bool,
        kept_in: Path,
    ) -> None:
        self.agents = remotes
        self.by_name = {r.name: r for r in remotes}
        self.step_timeout_s = step_timeout_s
        self.think_measured = think_measured
        self.kept_in = kept_in  # the run directory, named when an agent's exit ends the run
        self.cond = Condition()
        self.jobs: deque[Callable[[], None]] = deque()
        self.dirty = False  # something may need the runner's attention at the next settle
        self.next_timer = NEVER
        self.exited: tuple[str, int] | None = None  # (agent, exit code), from a watcher
        self.in_flight: dict[int, Request] = {}  # id(msg) -> request queued in the runner
        self.outbox: list[tuple[str | None, bytes]] = []
        self.streams = 0  # open streams (counted on the loop's thread)
        self.post: Callable[[Callable[[], None]], None] = lambda fn: None
        self.offer: Callable[[list[tuple[str | None, bytes]]], None] = lambda batch: None
        self.over: dict[str, Any] | None = None
        self.live = False
        self.bt: Backtest | None = None
        self.views: Views | None = None
        self.coins: list[str] = []
        # progress (the no-progress guard): inputs applied, the latest step time given
        self.applied = 0
        self.step_t = 0
        self._progress: tuple[int, int] = (0, 0)
        self.progress_at = time.monotonic()
        self.steps = 0  # steps given, all agents (how many the guard saw go nowhere)
        self._steps_then = 0
        self.stopping: int | None = None  # the signal that stops the run, once one came
        self.parked = False  # the runner is waiting on ``cond`` (a stop may be raised there)

    # ---- from the HTTP loop's thread -------------------------------------------------

    def ask(self, job: Callable[[], None]) -> None:
        """Have the runner run ``job`` at its next chance (thread-safe)."""
        with self.cond:
            self.jobs.append(job)
            self.dirty = True
            self.cond.notify()

    def agent_exited(self, name: str, code: int) -> None:
        """A watcher saw an agent's process end (thread-safe)."""
        with self.cond:
            if self.exited is None:
                self.exited = (name, code)
            self.dirty = True
            self.cond.notify()

    # ---- jobs (on the runner's thread) -----------------------------------------------

    def step_call(self, name: str, done: int | None, wake: Wake | None, reply: Answer) -> None:
        """POST /v1/step: done with a step, maybe a new wake set; ``reply`` gets the next
        step (at once when the agent's current step is unfinished: a re-delivery)."""
        a = self.by_name[name]
        if done is not None and done > a.delivered:
            reply(BadWake(f"done: step {done} was not given yet (the last was {a.delivered})"))
            return
        if done is None and a.polled:
            a.reconnects += 1
        a.polled = True
        if wake is not None:
            self.set_wake(a, wake)
        self._done(a, done)
        if self.over is not None:
            a.told_over = True
            reply(self.over)
        elif a.done < a.delivered and a.step_doc is not None:
            reply(a.step_doc)
        else:
            a.waiters.append(reply)

    def poll_dropped(self, name: str, reply: Answer) -> None:
        """A long poll's connection closed before its step came: counted, forgotten."""
        a = self.by_name[name]
        if reply in a.waiters:
            a.waiters.remove(reply)
            a.dropped_polls += 1

    def stream_opened(self, name: str) -> None:
        a = self.by_name[name]
        if a.streamed:
            a.reconnects += 1
        a.streamed = True
        a.lagging = False
        self.dirty = True
        if self.over is not None:
            a.told_over = True
            self._send(a, {"channel": "step", "data": self.over})
        elif a.done < a.delivered and a.step_doc is not None:
            self._send(a, {"channel": "step", "data": a.step_doc})

    def stream_done(self, name: str, done: int) -> None:
        self._done(self.by_name[name], done)

    def _done(self, a: Remote, done: int | None) -> None:
        a.lagging = False  # it is back
        if done is not None and done == a.delivered:
            a.done = done
        self.dirty = True

    def set_wake(self, a: Remote, wake: Wake) -> None:
        a.wake = wake
        if self.live:
            self._timer(a, self.runner_now())
        self.dirty = True

    def submit(self, name: str, msg: dict[str, Any], arrived: float, reply: Answer) -> None:
        """An order or cancel: stamped now, handed to the runner at the next settle."""
        a = self.by_name[name]
        if self.over is not None or not self.live:
            reply(None)
            return
        think = int((arrived - a.active_at) * 1000) if self.think_measured else 0
        bt = self.bt
        assert bt is not None
        stamp = max(a.now + bt.latency_ms + max(0, think), bt.now)
        a.count += 1
        a.arrived.append(Request(a, msg, stamp, a.count, reply))
        a.outstanding += 1
        self.dirty = True

    def clock_of(self, name: str) -> int:
        """The agent's simulated now for the rate limit (thinking included when measured)."""
        a = self.by_name[name]
        if not self.think_measured or a.active_at == 0.0:
            return a.now
        return a.now + int((time.monotonic() - a.active_at) * 1000)

    # ---- what the runner's side shares -------------------------------------------------

    def runner_now(self) -> int:
        return self.bt.now if self.bt is not None else 0

    def started(self, a: Remote) -> None:
        """The proxy's on_start: registered at the season's start; step 1 wakes it."""
        self.live = True
        a.now = self.runner_now()
        self._timer(a, a.now)
        self.woken(a, "start")

    def _timer(self, a: Remote, after: int) -> None:
        """Arm ``a``'s timer at its next boundary after ``after`` and after the last one
        that woke it (a wake set sent again mid-step must not fire that one again)."""
        every = a.wake.every_ms
        after = max(after, a.timer_at)
        a.next_timer = NEVER if every is None else (after // every + 1) * every
        self.next_timer = min(r.next_timer for r in self.agents)

    def woken(self, a: Remote, reason: str) -> None:
        if reason not in a.reasons:
            a.reasons.append(reason)
        self.dirty = True

    def _send(self, a: Remote, message: dict[str, Any]) -> None:
        """A message to the agent's streams, after what the stream holds before it."""
        if self.streams:
            self.outbox.append((a.name, _ENCODE(message)))
            self._flush()

    def _flush(self) -> None:
        if self.outbox:
            batch, self.outbox = self.outbox, []
            self.post(lambda: self.offer(batch))
