"""One pass of the engine over recorded logs with strategies trading: the backtest runner.

Why this module exists: a backtest must be the season, not an imitation of it. Strategies
act only by sending orders and cancels, which become inputs of a run log exactly like a
hosted agent's requests: each is stamped with the time of the input its strategy was
handling plus the run's latency, and is applied after every log input stamped at or before
that time. The run log (``run.runlogs``: the market data verbatim, plus registrations,
orders and cancels; or, thin, only the latter and the sources' hashes) is written as it
goes, so ``arena replay`` of it gives the same ranking byte for byte, and a run cut short
by a failing strategy keeps everything up to the failure.

The runner takes its config whole (``run.config.RunConfig``: latency, seed, hook timeout,
run-log form, cache, sources) and its subscribers (``run.stream``) at construction. It has
one loop over one stream: each line a source yields (``run.sources``: recorded logs as
read, day caches that hold back what nobody reads, or a live feed) goes into the run log,
then the engine, then the hooks (``run.dispatch``), then every subscriber in order (the
run's own ``run.ledger`` first). A live run's log is durable as it goes: each line reaches
the OS before the engine applies it.
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
    BacktestError,
    BacktestResult,
    Entrant,
    ExitValue,
    LiveSource,
    NotStarted,
    Status,
    check_names,
)
from arena_tui.run.replay import ReplayResult, ranking_rows
from arena_tui.run.runlogs import open_run_log
from arena_tui.run.sources import Counted, DaySource, Recorded, open_days
from arena_tui.run.stream import Gate, Subscriber, bind_all, gate_of
from arena_tui.util.human import utc_minute
from engine import Engine, Line, MalformedInput, Season
from engine import events as ev
from engine.inputs import AssetCtx
from engine.inputs import Book as BookMsg
from engine.inputs import Trades as TradesMsg

_LINE = msgspec.json.Decoder(Line)
_ENC = msgspec.json.Encoder()
EVERY = 0x3FFF  # a recorded pass updates its progress line every 16384 inputs


class Backtest:
    """Run ``entrants`` under ``season`` as ``config`` says; see the module docstring.

    ``run_dir``: where the run log (and the entries' output) goes; None: no file (twins,
    sweep jobs). ``subscribers``: called after every applied input, in order, after the
    run's own ledger (``run.stream``); one may be the gate. ``feed``: the live feed's URL,
    for a run on it (``run_live``). ``exit_value``: an entry's exit-value equity at each
    mark, for its stats. ``on_event``: every event, as it comes, before its hooks.
    ``echo``: a strategy's output also goes to stderr (``run.hooks.Guard``)."""

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
    ) -> None:
        names = check_names(entrants)
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
        self.hooks = Dispatch(engine, self.entrants, self.markets, self.guard, on_event, exit_value)
        self.hooks.contexts(self._send, config.seed, config.latency_ms)
        self.log = open_run_log(
            season, run_dir, generator, config.logs, names, feed=feed, full=config.full_log
        )
        self.own_inputs = 0
        # the strategy request the engine is applying, while it does (an ``on_event``
        # viewer reads a Rejected order's asset from it: the event does not carry one)
        self.applying: dict[str, Any] | None = None
        self.raw = b""  # the bytes of the input being applied (for the subscribers)
        self.ledger = Ledger()
        self.notes = self.ledger.notes  # the orders' notes so far (a viewer shows a fill's)
        self.subscribers: tuple[Subscriber, ...] = (self.ledger, *subscribers)
        self.gate = gate_of(subscribers)
        bind_all(self.subscribers, self)
        self._observers = tuple(s.observe for s in self.subscribers)

    # ---- what others read ------------------------------------------------------------

    @property
    def now(self) -> int:
        """The time of the input being handled."""
        return self.hooks.now

    @property
    def live(self) -> bool:
        """The strategies are registered: their hooks run from now on."""
        return self.hooks.live

    @property
    def on_event(self) -> Callable[[ev.AnyEvent], None] | None:
        return self.hooks.on_event

    @on_event.setter
    def on_event(self, fn: Callable[[ev.AnyEvent], None] | None) -> None:
        self.hooks.on_event = fn  # a viewer chains itself in before the pass

    @property
    def fills(self) -> int:
        """Fills so far."""
        return self.ledger.count

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
        coins = [m.coin for m in self.season.markets]
        early = (
            "the logs end before the season starts: nothing to trade "
            f"(season {self.season.id} starts at {self.season.start})"
        )
        warm = self.config.cache and pace is None and self.gate is None
        days = open_days(logs, coins) if warm else None
        if days is not None:
            try:
                self.log.reading(logs)
                source = DaySource(
                    days, self.engine, self.queue, self.log, self.hooks, progress, EVERY
                )
                return self._pass(source, progress, None, early)
            finally:
                for day in days:
                    day.close()
        cold = Recorded(logs, self.engine, self.log, self.config.cache, progress, EVERY)
        result = self._pass(cold, progress, pace, early, finish=cold.finish)
        cold.commit()
        return result

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
        starts = utc_minute(self.season.start)
        early = f"stopped before any input of season {self.season.id} ({starts} on): nothing traded"
        try:
            counted = Counted(source, self.engine, progress, 0)
            return self._pass(counted, progress, pace, early, late=True)
        finally:
            source.close()

    def _pass(
        self,
        source: Counted | DaySource,
        progress: Status | None,
        pace: Callable[[int], bool] | None,
        early: str,
        *,
        late: bool = False,
        finish: Callable[[int], None] | None = None,
    ) -> BacktestResult:
        """The frame of a pass: the loop over ``source``; then the queued inputs left
        before the end, ``on_end``, and the result. ``late``: register at the first input's
        time rather than at the season's start. ``finish(end)``: called when the season
        ended before the source did, while the source is still open."""
        try:
            with self.guard.running(self.entrants):
                registered = self._loop(source, pace, late)
                if not registered:
                    raise NotStarted(early)
                if source.last_t is not None:
                    self._flush(source.last_t + 1)
                self.hooks.end()
                if finish is not None and self.engine.over:
                    finish(self.season.end)
        except HookTimeout:  # it landed just after the hook returned
            raise StrategyError(self.guard.stuck or "a hook timed out") from None
        finally:
            self.log.close()
            if progress is not None:
                progress.done()
        return _result(self, source.n)

    def _loop(
        self, source: Counted | DaySource, pace: Callable[[int], bool] | None, late: bool
    ) -> bool:
        """The one loop: each input into the run log, then the engine, then the hooks and
        the subscribers; whether the strategies registered. The source counts the inputs
        and stops after the one that ends the season."""
        start = self.season.start
        write = self.log.write
        registered = False
        for line in source:
            t = line.t
            if pace is not None and not pace(t):
                break
            if not registered and t >= start:
                self._register(t if late else start)
                registered = True
            self._flush(t)
            self.raw = raw = source.raw
            write(raw)
            try:
                self._apply(line)
            except MalformedInput as exc:
                raise source.error(str(exc)) from None
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
        raw = self.raw
        for observe in self._observers:
            observe(line, raw, out)
        return out


def _result(run: Backtest, inputs: int) -> BacktestResult:
    """What a pass that read ``inputs`` log inputs gives: what ``arena replay`` of its run
    log prints, and what the strategies did."""
    ledger, engine = run.ledger, run.engine
    replay = ReplayResult(
        season=run.season,
        log_sha256=run.log.sha.hexdigest(),
        fills_sha256=ledger.sha.hexdigest(),
        end=engine.last_mark,
        final=engine.final,
        ranking=ranking_rows(engine),
        inputs=inputs + run.own_inputs,
        fills=ledger.count,
    )
    return BacktestResult(
        replay,
        run.entrants,
        run.log.path,
        inputs,
        run.own_inputs,
        len(run.queue),  # dropped: stamped after the last log input, never applied
        fill_events=ledger.fills,
        notes=ledger.notes,
    )
