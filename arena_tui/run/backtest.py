"""One pass of the engine over recorded logs with strategies trading: the backtest runner.

Why this module exists: a backtest must be the season, not an imitation of it. Strategies
act only by sending orders and cancels, which become inputs of a run log exactly like a
hosted agent's requests: each is stamped with the time of the input its strategy was
handling plus the run's latency, and is applied after every log input stamped at or before
that time. The run log (the market data verbatim, plus registrations, orders and cancels;
or, thin, only the latter and the sources' hashes: ``arena_tui.logs.thinlog``) is written
as it goes, so ``arena replay`` of it gives the same ranking byte for byte, and a run cut
short by a failing strategy keeps everything up to the failure.

The pass reads a *line source*: recorded logs (``run``, through ``LogReader``) or a live
feed (``run_live``, through ``arena_tui.run.live.LiveFeed``: market data as received, a tick
every second, gaps), one loop for both. A live run's log is durable as it goes
(``DurableRunLog``): each line reaches the OS before the engine applies it.

Why one module: the order of the pass (queued strategy inputs due, the line into the run
log, the engine, then the hooks) is the run's contract with ``arena replay``; the loop and
the steps it takes read together. Its vocabulary (entrants, sources, result, errors) is in
``parts``.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import msgspec

from arena_tui.logs.daycache import KIND_BOOK, KIND_CTX, CachedDay, open_day
from arena_tui.logs.logfile import LogError, LogReader
from arena_tui.logs.runlog import DurableRunLog, RunLog
from arena_tui.logs.thinlog import ThinRunLog
from arena_tui.run.fields import StrategyError
from arena_tui.run.hooks import DEFAULT_TIMEOUT_S, Guard, HookTimeout
from arena_tui.run.loader import ENTRY_NAME
from arena_tui.run.market import AssetContext, MarketView, Trade
from arena_tui.run.parts import (
    BacktestError,
    BacktestResult,
    Entrant,
    LineSource,
    LiveSource,
    NotStarted,
    Status,
    overridden,
)
from arena_tui.run.quotes import OrderNotes
from arena_tui.run.replay import ReplayResult, fill_line, ranking_rows
from arena_tui.run.strategy import Context
from arena_tui.season.file import log_header, write_season
from arena_tui.util.human import utc_minute
from engine import Engine, Line, MalformedInput, Season
from engine import events as ev
from engine.inputs import AssetCtx
from engine.inputs import Book as BookMsg
from engine.inputs import Trade as RawTrade
from engine.inputs import Trades as TradesMsg

_LINE = msgspec.json.Decoder(Line)
_ENC = msgspec.json.Encoder()


def open_days(paths: Sequence[str], coins: Sequence[str]) -> list[CachedDay] | None:
    """The valid day cache of every one of ``paths`` for these coins, or None (any missing:
    the pass reads the logs themselves, and caches them)."""
    days: list[CachedDay] = []
    for path in paths:
        day = open_day(path, coins)
        if day is None:
            for done in days:
                done.close()
            return None
        days.append(day)
    return days


class Gate(Protocol):
    """What a lockstep run's gate is to the runner (``arena_tui.host.lockstep.StepGate``)."""

    def settle(self, t_next: int) -> bool: ...


class Backtest:
    """Run ``entrants`` over ``logs`` under ``season``; see the module docstring."""

    def __init__(
        self,
        season: Season,
        entrants: Sequence[Entrant],
        *,
        run_log: Path | None,
        sources: Sequence[str] = (),
        latency_ms: int = 0,
        seed: int = 0,
        on_event: Callable[[ev.AnyEvent], None] | None = None,
        exit_value: Callable[[Engine, str, dict[str, MarketView]], int] | None = None,
        generator: str = "arena backtest",
        feed: str | None = None,
        hook_timeout_s: float = DEFAULT_TIMEOUT_S,
        thin: bool = False,
        cache: bool = False,
    ) -> None:
        """``feed``: the live feed's URL, for a run on it (``run_live``): the header names
        it and the run log is a :class:`DurableRunLog`. ``thin``: write a thin run log
        (``arena_tui.logs.thinlog``: the own inputs and the sources' hashes, no market
        lines) instead of the full one. ``cache``: read a recorded log from its day cache
        when it has a valid one (``run`` without ``pace``: the warm pass), and write one
        while reading a log without. ``hook_timeout_s``: how long one
        hook call may run (0 or less: no limit); ``guard`` (``arena_tui.run.hooks``) keeps
        it, and where the strategies' output goes."""
        names = [e.name for e in entrants]
        if len(set(names)) != len(names):
            raise BacktestError(f"entry names must be unique: {', '.join(names)}")
        for name in names:
            if ENTRY_NAME.fullmatch(name) is None:
                raise BacktestError(f"entry name {name!r}: 1-32 characters of a-z, 0-9, _ and -")
        self.season = season
        self.cache = cache  # read logs from the day cache (logs.daycache), build it if missing
        self.engine = Engine(season)
        self.engine.record_prints = True
        self.entrants = list(entrants)
        self.by_name = {e.name: e for e in entrants}
        self.latency_ms = latency_ms
        self.on_event = on_event
        self.exit_value = exit_value
        self.markets = {
            m.coin: MarketView(self.engine, m.coin, m.asset, m.szDecimals) for m in season.markets
        }
        for e in self.entrants:
            e.hooks = overridden(e.strategy)
        self.trade_hooks = [e for e in self.entrants if "on_trades" in e.hooks]
        self.book_hooks = [e for e in self.entrants if "on_book" in e.hooks]
        self.ctx_hooks = [e for e in self.entrants if "on_asset_ctx" in e.hooks]
        for e in self.entrants:
            e.ctx = Context(
                e.name, self.engine, self._sender(e.name), seed, latency_ms, path=e.path
            )
            e.ctx.markets = self.markets
            e.ctx.account._markets = self.markets
        header = log_header(season, generator)
        header.update(sources=[Path(s).name for s in sources], entries=names)
        if feed is not None:
            header["feed"] = feed
        self.log: RunLog | ThinRunLog
        if feed is not None:
            self.log = DurableRunLog(run_log, header)
        elif thin and run_log is not None:
            self.log = ThinRunLog(run_log, header)
        else:
            self.log = RunLog(run_log, header)
        if run_log is not None:
            write_season(season, run_log.parent)
        self.queue: list[tuple[int, int, dict[str, Any]]] = []
        self._seq = itertools.count()
        self.fills_sha = hashlib.sha256()
        self.fills = 0
        self.fill_events: list[ev.Fill] = []  # every fill of the run, in order
        self.notes = OrderNotes()  # the notes of the orders in the run log
        self.own_inputs = 0
        self.guard = Guard(run_log.parent if run_log is not None else None, hook_timeout_s)
        self.live = False  # strategies are registered: their hooks run from now on
        self.now = 0  # the time of the input being handled
        # the strategy request the engine is applying, while it does (an ``on_event``
        # viewer reads a Rejected order's asset from it: the event does not carry one)
        self.applying: dict[str, Any] | None = None
        # called after every input the engine applies (a log line or a strategy's own), its
        # hooks run, with the line, its bytes as logged and its events: what a viewer of the
        # whole run (the lockstep API's views, a report's collector) needs and an event alone
        # does not say. Held inputs of the warm pass are not applied, so not observed.
        self.observers: list[Callable[[Line, bytes, list[ev.AnyEvent]], None]] = []
        self.raw = b""  # the bytes of the input being applied (for the observers)
        # lockstep (arena_tui.host.lockstep): called before each input is applied (a log
        # line or a queued one, at t_next), and before the end; it may queue inputs
        # (``queue_input``) and says True when the queue may have changed. Read by
        # ``_flush`` only: with a gate, ``run`` reads the logs themselves (no warm pass).
        self.gate: Gate | None = None

    # ---- strategy inputs -------------------------------------------------------------

    def _sender(self, name: str) -> Callable[[int, dict[str, Any]], None]:
        def send(stamp: int, msg: dict[str, Any]) -> None:
            heapq.heappush(self.queue, (stamp, next(self._seq), msg))

        return send

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
            out = self._apply(line)
        finally:
            self.applying = None
        if "note" in msg:  # as logged: the note belongs to the order the engine accepted
            self.notes.accepted(e.name, msg["note"], out)

    def queue_input(self, stamp: int, msg: dict[str, Any]) -> None:
        """Queue an entry's input (a lockstep agent's request) as its Context would."""
        heapq.heappush(self.queue, (stamp, next(self._seq), msg))

    def _flush(self, before: int) -> None:
        """Apply every queued strategy input stamped before ``before``, in stamp order."""
        queue = self.queue
        gate = self.gate
        if gate is not None:
            self._gated_flush(gate, before)
            return
        while queue and queue[0][0] < before and not self.engine.over:
            stamp, _, msg = heapq.heappop(queue)
            self._own(stamp, msg)

    def _gated_flush(self, gate: Gate, before: int) -> None:
        """``_flush`` with the gate settled before each input (the next log one included)."""
        queue = self.queue
        while not self.engine.over:
            due = bool(queue) and queue[0][0] < before
            if gate.settle(queue[0][0] if due else before):
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
        """
        coins = [m.coin for m in self.season.markets]
        early = (
            "the logs end before the season starts: nothing to trade "
            f"(season {self.season.id} starts at {self.season.start})"
        )
        warm = self.cache and pace is None and self.gate is None  # (a gate: the cold pass)
        days = open_days(logs, coins) if warm else None
        if days is not None:
            try:
                self.log.reading(logs)
                return self._pass(
                    lambda: self._warm_loop(days, progress, 0x3FFF), progress, early=early
                )
            finally:
                for day in days:
                    day.close()
        opener = self.log.reading(logs)
        reader = LogReader(logs, coins=coins, hashed=False, opener=opener, cache=self.cache)

        def finish(end: int) -> None:
            """Stopped at the season's end: a header's last_t claim is still checked (before
            the run log closes, which hashes the rest of a thin run's sources and closes
            them); a log being cached is read and checked to its end."""
            if not self.cache:
                reader.finish(end)
                return
            for line in reader.rest():
                try:
                    self.engine.apply(line)  # over: market data is checked, nothing changes
                except MalformedInput as exc:
                    raise reader.error(str(exc)) from None

        result = self._pass(
            lambda: self._loop(reader, progress, pace, 0x3FFF, False),
            progress,
            early=early,
            finish=finish,
        )
        for writer in reader.finished_writers:
            writer.commit()
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
            return self._pass(
                lambda: self._loop(source, progress, pace, 0, True), progress, early=early
            )
        finally:
            source.close()

    def _pass(
        self,
        loop: Callable[[], tuple[int, int | None, bool]],
        progress: Status | None,
        *,
        early: str,
        finish: Callable[[int], None] | None = None,
    ) -> BacktestResult:
        """The frame of a pass: ``loop`` feeds the inputs (``_loop`` or ``_warm_loop``) and
        returns (inputs read, the last one's time, registered); then the queued inputs left
        before the end, ``on_end``, and the result. ``finish(end)``: called when the season
        ended before the source did, while the source is still open."""
        try:
            with self.guard.running(self.entrants):
                n, last_t, registered = loop()
                if not registered:
                    raise NotStarted(early)
                if last_t is not None:
                    self._flush(last_t + 1)
                self._end()
                if finish is not None and self.engine.over:
                    finish(self.season.end)
        except HookTimeout:  # it landed just after the hook returned
            raise StrategyError(self.guard.stuck or "a hook timed out") from None
        finally:
            self.log.close()
            if progress is not None:
                progress.done()
        dropped = len(self.queue)
        replay = ReplayResult(
            season=self.season,
            log_sha256=self.log.sha.hexdigest(),
            fills_sha256=self.fills_sha.hexdigest(),
            end=self.engine.last_mark,
            final=self.engine.final,
            ranking=ranking_rows(self.engine),
            inputs=n + self.own_inputs,
            fills=self.fills,
        )
        return BacktestResult(
            replay,
            self.entrants,
            self.log.path,
            n,
            self.own_inputs,
            dropped,
            fill_events=self.fill_events,
            notes=self.notes,
        )

    def _loop(
        self,
        source: LineSource,
        progress: Status | None,
        pace: Callable[[int], bool] | None,
        every: int,
        late: bool,
    ) -> tuple[int, int | None, bool]:
        """The one loop: each input into the run log, then the engine, then the hooks.

        ``every``: update ``progress`` when ``inputs & every`` is 0. ``late``: register at
        the first input's time rather than at the season's start.
        """
        start = self.season.start
        registered = False
        last_t: int | None = None
        n = 0
        for line in source:
            t = line.t
            if pace is not None and not pace(t):
                break
            if not registered and t >= start:
                self._register(t if late else start)
                registered = True
            self._flush(t)
            self.raw = raw = source.raw
            self.log.write(raw)
            try:
                out = self._apply(line)
            except MalformedInput as exc:
                raise source.error(str(exc)) from None
            if out and line.hl is None:  # an order in the logs may carry a note
                self.notes.logged(raw, out)
            last_t = t
            n += 1
            if progress is not None and not n & every:
                progress.update(n, t)
            if self.engine.over:
                break
        return n, last_t, registered

    def _warm_loop(
        self, days: Sequence[CachedDay], progress: Status | None, every: int
    ) -> tuple[int, int | None, bool]:
        """``_loop`` over day caches, applying only what someone could see.

        A book or a full asset context of a season coin is *held* instead of applied when
        nothing can read the engine's state before the next input that is applied: no timed
        event is due at its time, no strategy input is queued before it, no strategy hooks
        it, and (a book) its coin has a context mark (so the book sets no mid) and no order
        waiting to activate; prints of a coin with no order resting on it, when no strategy
        hooks prints, are applied without first applying what is held (they read none of
        it). Held inputs of one coin and kind replace each other; all are
        applied, in log order, before the next applied input (or a day's end). Market data
        of other coins is skipped on the same terms (the engine ignores it). So the engine
        makes exactly the calls of the cold pass that change what anyone reads, and every
        line still goes into the run log in order. The cache's lines were checked in full
        when it was built (``logs.daycache``).
        """
        engine = self.engine
        engine.books_checked = True  # every line of a day cache passed the checks
        queue = self.queue
        write = self.log.write
        start = self.season.start
        defer_books = not self.book_hooks
        defer_ctx = not self.ctx_hooks
        trade_hooks = bool(self.trade_hooks)
        quiet = False  # the input about to be applied needs nothing held applied first
        registered = False
        last_t: int | None = None
        n = 0
        for day in days:
            self.log.known(day.path, day.size, day.sha256)
            if last_t is not None and day.n and day.t[0] < last_t:
                raise LogError(
                    day.path, 2, f"t {day.t[0]} is lower than the line before ({last_t})"
                )
            states = [engine.by_coin.get(coin) for coin in day.coins]
            held: dict[int, int] = {}  # 2 * coin (+1 for a context) -> the line held
            times, kinds, coins, blob, offs = day.t, day.kind, day.coin, day.blob, day.offsets
            decode = _LINE.decode  # the cache's lines were checked when it was built
            for i in range(day.n):
                t = times[i]
                kind = kinds[i]
                if (
                    kind <= KIND_CTX
                    and registered
                    and t < engine._next_due
                    and (not queue or queue[0][0] >= t)
                ):
                    c = coins[i]
                    a = states[c] if c >= 0 else None
                    if c < 0:
                        skip = False  # prints of several coins in one message: applied
                    elif a is None:
                        skip = True  # another coin's market data: the engine ignores it
                    elif kind == KIND_CTX:
                        skip = defer_ctx
                    elif kind == KIND_BOOK:
                        skip = defer_books and a.ctx_mark is not None and not a.pending
                    else:  # prints of one coin nobody hooks, with no order resting on it
                        # touch only that coin's last print: nothing held is read first
                        skip = False
                        quiet = not trade_hooks and not a.resting
                    if skip:
                        if a is not None:
                            held[2 * c + (kind == KIND_CTX)] = i
                        write(bytes(blob[offs[i] : offs[i + 1] - 1]))
                        last_t = t
                        n += 1
                        if progress is not None and not n & every:
                            progress.update(n, t)
                        continue
                if held and not quiet:
                    self._catch_up(day, held)
                quiet = False
                if not registered and t >= start:
                    self._register(start)
                    registered = True
                self._flush(t)
                raw = bytes(blob[offs[i] : offs[i + 1] - 1])
                write(raw)
                self.raw = raw
                try:
                    line = decode(raw)
                except msgspec.DecodeError:
                    line = Line(t=t)  # a line the reader took as an ignored input
                try:
                    out = self._apply(line)
                except MalformedInput as exc:
                    raise LogError(day.path, i + 2, str(exc)) from None
                if out and line.hl is None:
                    self.notes.logged(raw, out)
                last_t = t
                n += 1
                if progress is not None and not n & every:
                    progress.update(n, t)
                if engine.over:
                    return n, last_t, registered
            if held:
                self._catch_up(day, held)
        return n, last_t, registered

    def _catch_up(self, day: CachedDay, held: dict[int, int]) -> None:
        """Apply the held inputs, in log order (no hook reads them; they cause no event)."""
        apply = self.engine.apply_held
        for i in sorted(held.values()):
            apply(day.line(i))
        held.clear()

    def _register(self, at: int) -> None:
        """Every strategy registers at ``at``, in the order given, before any input at it."""
        for e in self.entrants:
            if e.name in self.engine.accounts:
                raise BacktestError(f"entry name {e.name!r} is already taken in the logs")
            self._own(at, {"type": "register", "entry": e.name})
        self.live = True
        self.now = at
        for e in self.entrants:
            self._call(e, "on_start")

    def _end(self) -> None:
        for e in self.entrants:
            self._call(e, "on_end")

    def _call(self, e: Entrant, hook: str, *args: Any) -> None:
        ctx = e.ctx
        assert ctx is not None
        ctx.t = self.now  # what the strategy sends now is stamped with this input's time
        guard = self.guard  # the mark the watchdog and the output routing read
        guard.calls += 1
        guard.hook = hook
        guard.entrant = e
        try:
            getattr(e.strategy, hook)(ctx, *args)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, a timeout too
            raise guard.failed(e, hook, exc) from exc
        finally:
            guard.entrant = None
        if guard.stuck is not None:  # timed out, caught it and returned: stopped all the same
            raise StrategyError(guard.stuck)

    def _apply(self, line: Line) -> list[ev.AnyEvent]:
        """Apply one input, then its events and hooks; the events."""
        out = self.engine.apply(line)
        t = self.now = line.t
        if out:
            self._events(out)
        hl = line.hl
        if hl is None or self.engine.over:
            if self.observers:
                self._observe(line, out)
            return out
        if type(hl) is TradesMsg:
            self._trades(t)
        elif type(hl) is BookMsg:
            self._book(hl, t)
        elif type(hl) is AssetCtx:
            self._ctx(hl, t)
        if self.observers:
            self._observe(line, out)
        return out

    def _observe(self, line: Line, out: list[ev.AnyEvent]) -> None:
        raw = self.raw
        for observe in self.observers:
            observe(line, raw, out)

    def _events(self, out: list[ev.AnyEvent]) -> None:
        for event in out:
            kind = type(event)
            if kind is ev.Fill:
                self.fills_sha.update(fill_line(event))  # type: ignore[arg-type]
                self.fills += 1
                self.fill_events.append(event)  # type: ignore[arg-type]
            if self.on_event is not None:
                self.on_event(event)
            entry = getattr(event, "entry", None)
            e = self.by_name.get(entry) if entry is not None else None
            if e is None:
                continue
            if kind is ev.MinuteMark:
                exit_eq = None
                if self.exit_value is not None:
                    exit_eq = self.exit_value(self.engine, e.name, self.markets)
                e.stats.mark(event, exit_eq)  # type: ignore[arg-type]
                if "on_mark" in e.hooks:
                    self._call(e, "on_mark", event)
                continue
            e.stats.event(event)
            if kind is not ev.ScoreRow and kind is not ev.Registered and "on_event" in e.hooks:
                self._call(e, "on_event", event)

    def _trades(self, t: int) -> None:
        applied = self.engine.applied_prints
        if not applied:
            return
        markets = self.markets
        coin = applied[0].coin
        if len(applied) == 1 or all(raw.coin == coin for raw in applied):
            # one coin a message, as Hyperliquid sends them
            groups = [(markets.get(coin), applied)]
        else:
            by_coin: dict[str, list[RawTrade]] = {}
            for raw in applied:
                by_coin.setdefault(raw.coin, []).append(raw)
            groups = [(markets.get(c), raws) for c, raws in by_coin.items()]
        for market, raws in groups:
            if market is None:
                continue
            prints = [Trade(raw, t) for raw in raws]
            market.prints.extend(prints)
            if self.live:
                for e in self.trade_hooks:
                    self._call(e, "on_trades", prints)

    def _book(self, hl: BookMsg, t: int) -> None:
        if not self.live or not self.book_hooks:
            return  # the market's view reads the engine's latest book when asked
        market = self.markets.get(hl.data.coin)
        book = None if market is None else market.book
        if book is None:
            return
        for e in self.book_hooks:
            self._call(e, "on_book", book)

    def _ctx(self, hl: AssetCtx, t: int) -> None:
        if not self.ctx_hooks or hl.data.coin not in self.markets or not self.live:
            return
        view = AssetContext(hl.data, t)
        for e in self.ctx_hooks:
            self._call(e, "on_asset_ctx", view)
