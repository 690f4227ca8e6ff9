"""Lockstep: HTTP agents as entries of a backtest, the simulated clock waiting for them.

Why this module exists: an agent in another process (any language, the season's own HTTP
API) must be backtested as exactly as a Python strategy. So a lockstep run IS a
``Backtest``: each agent is an entrant whose strategy is a :class:`RemoteAgent` proxy. Its
hooks never wait: they only note that the agent is woken at this input, and why (its wake
set: coins, channels, its own events, marks, a timer). The runner calls the
:class:`StepGate` at *settle points* (before each log input and each queued input is
applied, and before the end): the gate delivers the pending step to every woken agent,
then parks the runner until every agent is *quiescent* (it said "done with step N", or it
has a request outstanding, whose answer can only come once the clock moves, or it ran out
of ``--step-timeout``). Steps that wake nobody cost one attribute check. A timer
boundary wakes an agent once: a wake set sent again (with every ``done``, say) re-arms the
timer after the last boundary fired, never at it, so simulated time always moves on.

An agent's orders and cancels are queued like a strategy's, stamped with its simulated
``now`` (its step's time, or the time its last answered request was applied at) plus the
latency, never with wall time (unless ``--think-time measured`` adds the wall time it
thought); they are handed to the runner only at a settle point, all agents quiescent,
sorted by (stamp, entry, the agent's count), so HTTP arrival order never decides. The HTTP
answer is sent when the runner applies the request. The run log holds every stamp, so
``arena replay`` of it gives the ranking byte for byte.

Two guards end a run that cannot go on, with one line (the run log closed and kept, every
agent told ``over`` with why): no progress (no input applied and no step at a later time)
for ``--step-timeout`` while every agent is quiescent, which only a bug can cause; and
SIGINT or SIGTERM (:meth:`StepGate.interrupt`: taken at the next settle point, or at
once when the runner is parked waiting for an agent).

Threads: the runner (``Backtest.run``) owns the engine and every piece of state here. The
HTTP handlers (another thread's event loop) never touch either: they hand the runner
*jobs* (:meth:`StepGate.ask`), which it runs while parked in a settle point, or at the next
settle point when it is not parked (so a read answers from the state between two inputs),
or before and after the run (:meth:`StepGate.serve`). What goes back to the loop (answers,
steps, stream messages) goes through ``call_soon_threadsafe``, in order.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from threading import Condition
from typing import Any

import msgspec

from arena_tui.host.schemas import decode_failure
from arena_tui.host.views import Views, event_doc
from arena_tui.run.backtest import Backtest
from arena_tui.run.market import AssetContext, Book, Trade
from arena_tui.run.replay import ranking_rows
from arena_tui.run.strategy import Context, Strategy
from arena_tui.util.errors import ArenaError
from arena_tui.util.human import iso_ms, plural
from engine import Line
from engine import events as ev
from engine.inputs import Tick

CHANNELS = ("l2Book", "trades", "activeAssetCtx")
MIN_EVERY_MS = 100
NEVER = 1 << 62
OUTBOX_MAX = 512  # stream messages held before they are handed to the loop
_ENCODE = msgspec.json.Encoder().encode
CLOSE = b'{"channel":"close"}'  # to the loop: close the agent's streams (never sent as such)


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


class RemoteAgent(Strategy):
    """The proxy strategy of one HTTP agent: its hooks only record why it is woken."""

    def __init__(self, gate: StepGate, remote: Remote) -> None:
        self.gate = gate
        self.remote = remote

    def on_start(self, ctx: Context) -> None:
        self.gate.started(self.remote)

    def on_book(self, ctx: Context, book: Book) -> None:
        w = self.remote.wake
        if w.book and w.wants(book.coin):
            self.gate.woken(self.remote, "book:" + book.coin)

    def on_trades(self, ctx: Context, trades: list[Trade]) -> None:
        w = self.remote.wake
        if w.trades and trades and w.wants(trades[0].coin):
            self.gate.woken(self.remote, "trades:" + trades[0].coin)

    def on_asset_ctx(self, ctx: Context, asset_ctx: AssetContext) -> None:
        w = self.remote.wake
        if w.ctx and w.wants(asset_ctx.coin):
            self.gate.woken(self.remote, "ctx:" + asset_ctx.coin)

    def on_event(self, ctx: Context, event: ev.AnyEvent) -> None:
        self.remote.events.append(event)
        if self.remote.wake.events:
            self.gate.woken(self.remote, "event")

    def on_mark(self, ctx: Context, mark: ev.MinuteMark) -> None:
        if self.remote.wake.marks:
            self.gate.woken(self.remote, "mark")


class StepGate:
    """The runner's side of lockstep (see the module docstring). ``post(fn)`` runs ``fn``
    on the HTTP loop's thread (``call_soon_threadsafe``); set once the server runs."""

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

    def attach(self, bt: Backtest, views: Views) -> None:
        """Hook into ``bt``: its gate, and an observer feeding ``views`` and the answers."""
        self.bt = bt
        self.views = views
        self.coins = [m.coin for m in bt.season.markets]
        bt.gate = self
        bt.observers.append(self.observe)

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

    # ---- the runner's side -------------------------------------------------------------

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

    def settle(self, t_next: int) -> bool:
        """Called before the runner applies an input at ``t_next``: steps delivered, the
        runner parked until all agents are quiescent, their requests queued. True when the
        queue may have changed (or a timer fired): the runner looks at it again."""
        if not self.dirty and t_next < self.next_timer:
            return False
        self.dirty = False
        self._check_stop()
        self._wait()
        self._check_progress()
        if self._hand_over():
            return True
        if t_next >= self.next_timer:
            self._fire(self.next_timer)
            self._wait()
            self._hand_over()
            return True
        return False

    def _fire(self, boundary: int) -> None:
        bt = self.bt
        assert bt is not None
        for a in self.agents:
            if a.next_timer == boundary:
                a.timer_at = boundary
                self.woken(a, "timer")
                if not a.lagging and a.done >= a.delivered:
                    self._deliver(a, boundary)
                every = a.wake.every_ms or NEVER
                a.next_timer = boundary + every
                if a.next_timer >= bt.season.end:
                    a.next_timer = NEVER
        self.next_timer = min(r.next_timer for r in self.agents)

    def _wait(self) -> None:
        """Run jobs and deliver steps until every agent is quiescent (or passed)."""
        while True:
            self._run_jobs()
            self._check_exit()
            self._check_stop()
            for a in self.agents:
                if a.reasons and not a.lagging and a.done >= a.delivered:
                    self._deliver(a, self.runner_now())
            busy = [a for a in self.agents if not a.quiescent()]
            self._flush()
            if not busy:
                return
            timeout: float | None = None
            if self.step_timeout_s > 0:
                now = time.monotonic()
                late = [a for a in busy if a.active_at + self.step_timeout_s <= now]
                for a in late:
                    a.lagging = True
                    a.passes += 1
                    a.done = a.delivered
                if late:  # (the run goes on without them: not stuck)
                    self.progress_at = now
                    self._steps_then = self.steps
                    continue
                timeout = min(a.active_at for a in busy) + self.step_timeout_s - now
            self._park(timeout)

    def _park(self, timeout: float | None) -> None:
        """Wait for a job, an agent's exit or ``timeout``; a signal's stop is raised here."""
        with self.cond:
            if not self.jobs and self.exited is None:
                self.parked = True
                try:
                    self._check_stop()
                    self.cond.wait(timeout)
                finally:
                    self.parked = False

    # ---- the guards: no progress, a signal ---------------------------------------------

    def sim_now(self) -> int:
        """The run's simulated time: the runner's, or a later step's (a timer's)."""
        return max(self.runner_now(), self.step_t)

    def _check_progress(self) -> None:
        """NoProgress when, all agents quiescent, nothing moved for ``--step-timeout``."""
        if self.step_timeout_s <= 0:
            return
        now = time.monotonic()
        mark = (self.applied, self.step_t)
        if mark != self._progress:
            self._progress = mark
            self.progress_at = now
            self._steps_then = self.steps
        elif now - self.progress_at >= self.step_timeout_s:
            given = plural(self.steps - self._steps_then, "step")
            raise NoProgress(
                f"the run made no progress for {self.step_timeout_s:g} s (--step-timeout): "
                f"simulated time stayed at {iso_ms(self.sim_now())} and no input was applied "
                f"({given} given meanwhile); the run log is kept in {self.kept_in}"
            )

    def interrupt(self, signum: int) -> None:
        """From a signal handler (the runner's thread, between two bytecodes): the run
        stops at the next settle point, or at once if the runner is parked in a wait
        (where no state is half changed)."""
        if self.stopping is None:
            self.stopping = signum
        self.dirty = True
        if self.parked:
            self._check_stop()

    def _check_stop(self) -> None:
        signum = self.stopping
        if signum is None or self.over is not None:
            return
        when = f"at {iso_ms(self.sim_now())}" if self.live else "before the run started"
        raise Interrupted(
            f"stopped by {signal_name(signum)} {when}; the run log is kept in {self.kept_in}",
            signum,
        )

    def _run_jobs(self) -> None:
        while True:
            with self.cond:
                if not self.jobs:
                    return
                job = self.jobs.popleft()
            job()

    def _check_exit(self) -> None:
        if self.exited is None or self.over is not None:
            return
        name, code = self.exited
        a = self.by_name[name]
        when = f"at step {a.delivered} ({iso_ms(a.now)})" if a.delivered else "before step 1"
        raise AgentExited(
            f"the agent exited with code {code} {when}; the run log is kept in {self.kept_in}"
        )

    def serve(self, until: Callable[[], bool], timeout_s: float) -> bool:
        """Run jobs (outside the pass: before and after it) until ``until()`` or the time
        is up; whether ``until()`` came true. An agent exiting raises AgentExited."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._run_jobs()
            self._check_exit()
            self._check_stop()
            self._flush()
            if until():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._park(min(left, 0.25))

    def _deliver(self, a: Remote, t: int) -> None:
        views = self.views
        assert views is not None
        a.delivered += 1
        self.steps += 1
        a.now = t
        self.step_t = max(self.step_t, t)
        a.active_at = time.monotonic()
        a.steps += 1
        a.waits += 1
        events = [event_doc(e, views.note_of(e) if type(e) is ev.Fill else None) for e in a.events]
        doc = {"step": a.delivered, "t": t, "why": a.reasons, "events": events}
        a.reasons = []
        a.events = []
        a.step_doc = doc
        waiters, a.waiters = a.waiters, []
        for reply in waiters:
            reply(doc)
        self._send(a, {"channel": "step", "data": doc})

    def _send(self, a: Remote, message: dict[str, Any]) -> None:
        """A message to the agent's streams, after what the stream holds before it."""
        if self.streams:
            self.outbox.append((a.name, _ENCODE(message)))
            self._flush()

    def _flush(self) -> None:
        if self.outbox:
            batch, self.outbox = self.outbox, []
            self.post(lambda: self.offer(batch))

    def _hand_over(self) -> bool:
        """Queue the requests received, in an order HTTP arrival does not decide."""
        new = [r for a in self.agents for r in a.arrived]
        if not new:
            return False
        bt = self.bt
        assert bt is not None
        for a in self.agents:
            a.arrived = []
        new.sort(key=lambda r: (r.stamp, r.agent.index, r.count))
        for r in new:
            self.in_flight[id(r.msg)] = r
            bt.queue_input(r.stamp, r.msg)
        return True

    def observe(self, line: Line, raw: bytes, events: list[ev.AnyEvent]) -> None:
        """After every input the runner applied: the views, a request's answer, streams."""
        views, bt = self.views, self.bt
        assert views is not None and bt is not None
        self.applied += 1
        views.apply(line, raw, events, live=False)
        applying = bt.applying
        if applying is not None:
            r = self.in_flight.pop(id(applying), None)
            if r is not None:
                a = r.agent
                a.outstanding -= 1
                a.now = line.t
                a.active_at = time.monotonic()
                if a.done < a.delivered:  # mid-step: the runner waits for it again
                    a.waits += 1
                self.dirty = True
                r.answer(events)
        if self.streams:
            if line.hl is not None or type(line.arena) is Tick:
                self.outbox.append((None, raw))
            for e in events:
                entry = getattr(e, "entry", None)
                if entry in self.by_name:
                    note = views.note_of(e) if type(e) is ev.Fill else None
                    self.outbox.append((entry, _ENCODE({"event": event_doc(e, note)})))
            if len(self.outbox) >= OUTBOX_MAX:
                self._flush()

    def finish(self, summary: dict[str, Any]) -> None:
        """The run is over: every agent is told, every request not applied is answered."""
        self.over = {"over": True, **summary}
        for r in list(self.in_flight.values()):
            r.answer(None)
        self.in_flight.clear()
        for a in self.agents:
            for r in a.arrived:
                r.answer(None)
            a.arrived = []
            waiters, a.waiters = a.waiters, []
            for reply in waiters:
                reply(self.over)
                a.told_over = True
            if a.streamed:
                a.told_over = True
            self._send(a, {"channel": "step", "data": self.over})
            if self.streams:
                self.outbox.append((a.name, CLOSE))  # (the loop closes the agent's streams)
        self._flush()

    def abort(self, why: str) -> None:
        """The run stopped before its end (``why``, one line): every agent is told
        ``over`` with ``stopped``, every request waiting is answered (runner's thread)."""
        if self.over is not None:
            return
        bt = self.bt
        summary: dict[str, Any] = {"season": None, "end": None, "final": False, "ranking": []}
        if bt is not None:
            summary |= {"season": bt.season.id, "end": bt.engine.last_mark}
            with suppress(Exception):  # (whatever stopped it, the agents are still told)
                summary["ranking"] = ranking_rows(bt.engine)
        self.finish(summary | {"stopped": why})
        self._run_jobs()  # reads and steps asked for already: answered now
        self._flush()


def post_to(loop: asyncio.AbstractEventLoop) -> Callable[[Callable[[], None]], None]:
    """``fn`` run on ``loop``'s thread; nothing once the loop has closed."""

    def post(fn: Callable[[], None]) -> None:
        with suppress(RuntimeError):  # the loop has closed: nobody is listening any more
            loop.call_soon_threadsafe(fn)

    return post
