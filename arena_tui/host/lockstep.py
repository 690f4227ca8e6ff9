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
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import msgspec

from arena_tui.host.auth import key_sha256
from arena_tui.host.lockstep_agents import (
    CHANNELS,
    MIN_EVERY_MS,
    NEVER,
    OUTBOX_MAX,
    AgentExited,
    AgentSide,
    Answer,
    BadWake,
    Interrupted,
    NoProgress,
    Remote,
    Request,
    Wake,
    WakeBody,
    parse_wake,
    signal_name,
)
from arena_tui.host.views import Views, event_doc
from arena_tui.run.backtest import Backtest
from arena_tui.run.market import AssetContext, Book, Trade
from arena_tui.run.replay import ranking_rows
from arena_tui.run.strategy import Context, Strategy
from arena_tui.util.human import iso_ms, plural
from engine import Line
from engine import events as ev
from engine.inputs import Tick

_ENCODE = msgspec.json.Encoder().encode
CLOSE = b'{"channel":"close"}'  # to the loop: close the agent's streams (never sent as such)


__all__ = [  # the agents' vocabulary is kept in host.lockstep_agents, named here too
    "CHANNELS",
    "MIN_EVERY_MS",
    "NEVER",
    "AgentExited",
    "Answer",
    "BadWake",
    "Interrupted",
    "NoProgress",
    "Remote",
    "RemoteAgent",
    "Request",
    "StepGate",
    "Wake",
    "WakeBody",
    "parse_wake",
    "post_to",
    "signal_name",
]


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


class StepGate(AgentSide):
    """The runner's side of lockstep (see the module docstring); the agents' side, and
    the state both share, is :class:`~arena_tui.host.lockstep_agents.AgentSide`."""

    market_bytes = False  # (its views read an order's bytes only: ``observe``, not live)

    def bind(self, bt: Backtest) -> None:
        """The run this gate is given to (as a subscriber, ``run.stream``): its engine's
        views (the agents' keys known), which ``observe`` feeds with every input."""
        self.bt = bt
        views = self.views = Views(bt.engine)
        for r in self.agents:
            views.keys.add(r.name, key_sha256(r.key))
        self.coins = [m.coin for m in bt.season.markets]

    # ---- the runner's side -------------------------------------------------------------

    def before(self, t_next: int) -> bool:
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
