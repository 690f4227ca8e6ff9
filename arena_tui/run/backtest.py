"""One pass of the engine over recorded logs with strategies trading: the backtest runner.

Why this module exists: a backtest must be the season, not an imitation of it. Strategies
act only by sending orders and cancels, which become inputs of a run log exactly like a
hosted agent's requests: each is stamped with the time of the input its strategy was
handling plus the run's latency, and is applied after every log input stamped at or before
that time. The run log (``run.runlogs``) is written as it goes, so ``arena replay`` of it
gives the same ranking byte for byte, and a run cut short by a failing strategy keeps
everything up to the failure.

The runner takes its config whole (``run.config.RunConfig``) and its subscribers
(``run.stream``) at construction. One loop over one stream: each line a source yields
(``run.sources``: logs as read, day caches that hold back what nobody reads, a live feed)
goes into the run log, the engine, the hooks (``run.dispatch``), then every subscriber
in order (the run's own ``run.ledger`` first).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.run.config import RunConfig
from arena_tui.run.dispatch import Dispatch
from arena_tui.run.fields import StrategyError
from arena_tui.run.hooks import Guard, HookTimeout
from arena_tui.run.ledger import Ledger
from arena_tui.run.market import MarketView
from arena_tui.run.parts import (
    NOTHING_READ,
    BacktestError,
    BacktestResult,
    Entrant,
    ExitValue,
    LiveSource,
    Reads,
    Status,
    check_names,
)
from arena_tui.run.runlogs import open_run_log
from arena_tui.run.sources import Live, Source, recorded
from arena_tui.run.stream import (
    Gate,
    Subscriber,
    bind_all,
    event_ears,
    gate_of,
    prints_ears,
    said_ears,
)
from engine import Engine, Line, MalformedInput, Season
from engine import events as ev
from engine.inputs import AssetCtx
from engine.inputs import Book as BookMsg
from engine.inputs import Trades as TradesMsg

_LINE = msgspec.json.Decoder(Line)
_ENC = msgspec.json.Encoder()


class Backtest:
    """Run ``entrants`` under ``season`` as ``config`` says; see the module docstring.

    ``run_dir``: where the run log (and the entries' output) goes; None: no file (twins,
    sweep jobs). ``subscribers``: called after every applied input, in order, after the
    run's own ledger (``run.stream``); one may be the gate. ``feed``: the live feed's URL,
    for a run on it (``run_live``). ``exit_value``: an entry's exit-value equity at each
    mark, for its stats. ``on_event``: every event, as it comes, before its hooks.
    ``echo``: a strategy's output also goes to stderr (``run.hooks.Guard``). ``hold``:
    a warm pass may hold back the lines no hook reads; False when a subscriber reads the
    engine's state after every line (the twins' desk): the warm pass then applies all."""

    def __init__(
        self,
        config: RunConfig,
        season: Season,
        entrants: Sequence[Entrant],
        *,
        run_dir: Path | None = None,
        subscribers: Sequence[Subscriber] = (),
        generator: str = "arena backtest",
        feed: str | None = None,
        exit_value: ExitValue | None = None,
        on_event: Callable[[ev.AnyEvent], None] | None = None,
        echo: bool = True,
        hold: bool = True,
    ) -> None:
        names = check_names(entrants)
        self.hold = hold
        self.config = config
        self.season = season
        self.engine = engine = Engine(season, record_prints=True)
        self.entrants = list(entrants)
        self.by_name = {e.name: e for e in entrants}
        self.latency_ms = config.latency_ms
        self.markets = {
            m.coin: MarketView(engine, m.coin, m.asset, m.szDecimals) for m in season.markets
        }
        self.queue: list[tuple[int, int, dict[str, Any]]] = []
        self._seq = itertools.count()
        self.guard = Guard(run_dir, config.hook_timeout_s)
        self.guard.echo = echo
        self.guard.on_said = said_ears(subscribers)
        ears = event_ears(on_event, subscribers)
        self.hooks = Dispatch(
            engine,
            self.entrants,
            self.markets,
            self.guard,
            ears,
            exit_value,
            heard_prints=prints_ears(subscribers),
        )
        self.hooks.contexts(self._send, config.seed, config.latency_ms)
        self.log = open_run_log(
            season, run_dir, generator, config.logs, names, feed=feed, full=config.full_log
        )
        self.own_inputs = 0
        # the strategy input being applied (a viewer reads a Rejected order's asset in it)
        self.applying: dict[str, Any] | None = None
        # the bytes of the input being applied (for the subscribers); None: a log line's,
        # not read yet (``_reads.raw`` when someone needs them)
        self.raw: bytes | None = b""
        self._reads: Reads = NOTHING_READ
        self.ledger = Ledger()
        for e in self.entrants:  # an entry's fills are read from the ledger's flat store
            if not e.stats.fills:
                e.stats.fills = self.ledger.fills.of(e.name)
        self.notes = self.ledger.notes  # the orders' notes so far (a viewer shows a fill's)
        self.subscribers: tuple[Subscriber, ...] = (self.ledger, *subscribers)
        self.gate = gate_of(subscribers)
        bind_all(self.subscribers, self)
        self._observers = tuple(s.observe for s in subscribers)
        # whether a subscriber reads a market line's bytes (``run.stream.Subscriber``)
        self._market_bytes = any(getattr(s, "market_bytes", True) for s in subscribers)

    @property
    def now(self) -> int:
        """The time of the input being handled."""
        return self.hooks.now

    @property
    def live(self) -> bool:
        """The strategies are registered: their hooks run from now on."""
        return self.hooks.live

    # ---- strategy inputs -------------------------------------------------------------

    def _send(self, stamp: int, msg: dict[str, Any]) -> None:
        heapq.heappush(self.queue, (stamp, next(self._seq), msg))

    queue_input = _send  # an entry's input (a lockstep agent's request), as its Context's

    def _own(self, t: int, msg: dict[str, Any]) -> None:
        """Apply one strategy input: into the run log first, then the engine."""
        e = self.by_name[msg["entry"]]
        if e.ctx is not None and e.ctx.in_flight and e.ctx.in_flight[0] is msg:
            e.ctx.in_flight.popleft()  # each entry's requests arrive in the order sent
        raw = _ENC.encode({"t": t, "arena": msg})
        try:
            line = _LINE.decode(raw)  # checked before it is logged: never a bad line
        except msgspec.ValidationError as exc:
            raise StrategyError(f"entry {e.name} sent an invalid {msg['type']}: {exc}") from None
        self.log.own(raw)
        self.own_inputs += 1
        self.raw = raw
        self.applying = msg
        try:
            self._apply(line)
        finally:
            self.applying = None

    def _flush(self, before: int) -> None:
        """Apply every queued strategy input stamped before ``before``, in stamp order."""
        queue = self.queue
        if self.gate is not None:
            self._gated_flush(self.gate, before)
            return
        while queue and queue[0][0] < before and not self.engine.over:
            stamp, _, msg = heapq.heappop(queue)
            self._own(stamp, msg)

    def _gated_flush(self, gate: Gate, before: int) -> None:
        """``_flush`` with the gate asked before each input (the next log one included)."""
        queue = self.queue
        while not self.engine.over:
            due = bool(queue) and queue[0][0] < before
            if gate.before(queue[0][0] if due else before):
                continue
            if not due:
                return
            stamp, _, msg = heapq.heappop(queue)
            self._own(stamp, msg)

    # ---- the pass --------------------------------------------------------------------

    def run(
        self,
        logs: Sequence[str],
        progress: Status | None = None,
        pace: Callable[[int], bool] | None = None,
    ) -> BacktestResult:
        """One pass over ``logs``; the strategies register at the season's start.

        ``pace(t)``, when given, is called before each log input with its time: a viewer
        may wait in it (to play at a speed, or paused); returning False ends the run there.
        Without ``pace`` or a gate, a log with a valid day cache is read from it (the warm
        pass) when the config says ``cache``; a log without one is cached as it is read.
        """
        warm = self.config.cache and pace is None and self.gate is None
        q, log, hooks = self.queue, self.log, self.hooks
        cache, hold = self.config.cache, self.hold
        with recorded(logs, self.engine, q, log, hooks, cache, warm, progress, hold) as src:
            return self._pass(src, progress, pace)

    def run_live(
        self,
        source: LiveSource,
        progress: Status | None = None,
        pace: Callable[[int], bool] | None = None,
    ) -> BacktestResult:
        """One pass over a live source, until the season ends or the source stops.

        The strategies register at the first input at or after the season's start (at
        once, stamped with that input's time, when the season is already running);
        ``progress`` is updated after every input; ``pace`` as for ``run`` (a live viewer
        must not wait in it: the feed does not wait). The source is closed however the
        pass ends; NotStarted if it stopped before the season started.
        """
        with Live(source, self.engine, progress) as counted:
            return self._pass(counted, progress, pace)

    def _pass(
        self, source: Source, progress: Status | None, pace: Callable[[int], bool] | None
    ) -> BacktestResult:
        """The loop over ``source``, then the queued inputs left before the end, ``on_end``,
        the source's ``finish`` (the season ended first), the result."""
        try:
            with self.guard.running(self.entrants):
                if not self._loop(source, pace):
                    raise source.not_started()
                if source.last_t is not None:
                    self._flush(source.last_t + 1)
                self.hooks.end()
                if self.engine.over:
                    source.finish(self.season.end)
        except HookTimeout:  # it landed just after the hook returned
            raise StrategyError(self.guard.stuck or "a hook timed out") from None
        finally:
            source.stop()  # (before the run log hashes what the source left unread)
            self.log.close()
            if progress is not None:
                progress.done()
        return self.ledger.result(
            self.engine, self.log, self.entrants, source.n, self.own_inputs, len(self.queue)
        )

    def _loop(self, source: Source, pace: Callable[[int], bool] | None) -> bool:
        """The one loop: each input into the run log, then the engine, then the hooks and
        the subscribers; whether the strategies registered. The source counts the inputs
        and stops after the one that ends the season; a late one (a live feed) registers the
        strategies at its first input's time rather than at the season's start."""
        start, late = self.season.start, source.late
        write = source.writer(self.log)  # (no run log: nothing to gather)
        self._reads = source.reads
        registered = False
        queue, gated = self.queue, self.gate is not None
        lines = source.lines()
        try:
            for line in lines:
                t = line.t
                if pace is not None and not pace(t):
                    break
                if not registered and t >= start:
                    self._register(t if late else start)
                    registered = True
                if gated or (queue and queue[0][0] < t):  # (the gate is asked every line)
                    self._flush(t)
                self.raw = None  # (read from the source only if someone needs them)
                if write is not None:
                    write()
                try:
                    self._apply(line)
                except MalformedInput as exc:
                    raise source.error(str(exc)) from None
        finally:
            lines.close()  # so the source counts the lines applied, exactly
        return registered

    def _register(self, at: int) -> None:
        """Every strategy registers at ``at``, in the order given, before any input at it."""
        for e in self.entrants:
            if self.engine.account(e.name) is not None:
                raise BacktestError(f"entry name {e.name!r} is already taken in the logs")
            self._own(at, {"type": "register", "entry": e.name})
        self.hooks.start(at)

    def _apply(self, line: Line) -> list[ev.AnyEvent]:
        """Apply one input, then its events and hooks, then the subscribers; the events."""
        out = self.engine.apply(line)
        hooks = self.hooks
        t = hooks.now = line.t
        if out:
            hooks.events(out)
        hl = line.hl
        if hl is not None and not self.engine.over:
            if type(hl) is TradesMsg:
                hooks.trades(t)
            elif type(hl) is BookMsg:
                hooks.book(hl, t)
            elif type(hl) is AssetCtx:
                hooks.ctx(hl, t)
        if not out and not self._observers:
            return out
        raw = self.raw
        if raw is None:
            if line.hl is None or self._market_bytes:
                raw = self.raw = self._reads.raw
            else:  # a market line's: no subscriber reads them (nor the ledger)
                raw = b""
        if out:  # the run's own ledger reads only inputs that made events
            self.ledger.observe(line, raw, out)
        for observe in self._observers:
            observe(line, raw, out)
        return out
