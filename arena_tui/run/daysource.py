"""The warm pass's source: day caches, holding back the lines nobody could read.

Why this module exists: a day read again comes from its cache (``logs.daycache``: the
lines with their time, kind and coin, its market data as columns: nothing decoded), and
most of its market data can wait: a book or a context nobody reads before the next input
that is applied is *held*, and only the last of each coin and kind is applied, just
before it is needed. This is where that is decided: the per-line loop is ``run.dayscan``
(compiled), which stops only at a line this source must yield or apply; ``run.sources``
opens it, and the runner's one loop (``run.backtest``) applies what it yields. It reads the
runner's queue and registration only between the lines it yields: nothing else changes
them, so what may be held is worked out once per yielded line.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from arena_tui.logs.dayformat import KIND_OTHER, KIND_TRADES
from arena_tui.logs.dayread import CachedDay
from arena_tui.logs.logfile import LogError
from arena_tui.run.dayscan import Scanner
from arena_tui.run.parts import NotStarted, Status
from engine import AssetState, Engine, Line, PrintColumns
from engine.inputs import Tick
from engine.inputs import Trade as RawTrade

if TYPE_CHECKING:
    from arena_tui.logs.runlog import RunLog
    from arena_tui.logs.thinlog import ThinRunLog

SPAN = 1 << 14  # lines scanned at once (then the progress is told)
_NONE = -(1 << 62)  # before registration nothing is held: no line is this early
_ALL = 1 << 62  # a scan gathers every trades message it passes
Quietly = Callable[[int, int], int]


class Hooked(Protocol):
    """Which market hooks the pass's strategies have (``run.dispatch.Dispatch``), and
    whether they run yet (``live``: registered)."""

    @property
    def book_hooks(self) -> Sequence[object]: ...

    @property
    def ctx_hooks(self) -> Sequence[object]: ...

    @property
    def trade_hooks(self) -> Sequence[object]: ...

    @property
    def live(self) -> bool: ...

    @property
    def heard_prints(self) -> Callable[[list[RawTrade], int], None] | None:
        """The subscribers' ``prints_applied``: None when one must observe every trades
        message (``run.stream.prints_ears``)."""
        ...

    def passed_prints(self, applied: list[RawTrade], t: int) -> None:
        """A trades message applied in a run: the prints it applied, at ``t``."""
        ...


class _Unhooked:
    """No strategy (a replay): nobody hooks anything, and lines may be held from the
    first one applied."""

    book_hooks: Sequence[object] = ()
    ctx_hooks: Sequence[object] = ()
    trade_hooks: Sequence[object] = ()
    live = True
    heard_prints = None

    def passed_prints(self, applied: list[RawTrade], t: int) -> None:
        """Not called: a replay's engine keeps no prints."""


UNHOOKED: Hooked = _Unhooked()


class DaySource:
    """The lines of day caches the runner must apply; the others held or skipped.

    A book or a full asset context of a season coin is *held* instead of applied when
    nothing can read the engine's state before the next input that is applied: no timed
    event is due at its time, no strategy input is queued before it, no strategy hooks it,
    and (a book) its coin has no order waiting to activate (a coin with no context mark
    takes its mark from its last two-sided book: that one is held too, beside the one-sided
    ones after it: ``DayScan._holds_book``). On the same terms, trades messages nobody
    hooks are handed over as integers from the columns, a run of them at once
    (``Engine.apply_quiet_prints``): those before the first whose prints go through a
    resting order are applied there and then, making no event and reading nothing held,
    and never reach the runner's loop. An engine keeping prints (a backtest's) says which
    prints of each it applied, and they go to the market views and the subscribers
    (``Hooked.passed_prints``); if a subscriber must observe every line, none is handed
    over so. Otherwise prints of a coin with no order resting on it, nobody hooking
    prints, are yielded without first applying what is held (they read none of it). A tick
    (time alone) is passed over. Held inputs of one coin and kind replace each other; all
    are applied, in log order, before the next applied input (or a day's end). Market data
    of other coins is skipped on the same terms (the engine ignores it). So the engine makes
    exactly the calls of the cold pass that change what anyone reads, and every line still
    goes into the run log in order: handed over by the source as runs of the cache's
    bytes, applied lines too, just before a strategy's input is written after them
    (``_hand_over``). The cache's lines were
    checked in full when it was built (``logs.daycache``), and the lines it applies are
    built from its columns (``logs.dayinputs``), never decoded, except arena inputs."""

    def __init__(
        self,
        days: Sequence[CachedDay],
        engine: Engine,
        queue: list[tuple[int, int, dict[str, Any]]],
        log: RunLog | ThinRunLog,
        hooks: Hooked,
        progress: Status | None,
        every: int,
        hold: bool = True,
    ) -> None:
        """``queue``: the runner's queue of strategy inputs; ``log``: its run log (the
        held lines go into it here); ``hooks``: which hooks the strategies have;
        ``hold``: False, nothing is held or skipped (a subscriber reads the engine after
        every line: the twins' desk): every line applied, built from the columns."""
        self.days = days
        self.hold = hold
        self.engine = engine
        self.queue = queue
        self.log = log
        self.hooks = hooks
        self.progress = progress
        self.every = every
        self.reads = self  # whose ``raw`` is the bytes of the line last yielded
        self.n = 0
        self.last_t: int | None = None
        self._path, self._i = "", 0  # the day and index of the line last yielded
        # the run log gets the day's lines as runs of the cache's bytes, lazily: lines
        # before ``_upto`` are in it, those from ``_handed`` on not yet handed over
        self._day: CachedDay | None = None
        self._handed = self._upto = 0

    @property
    def day(self) -> CachedDay | None:
        """The day of the line last yielded (None before the first)."""
        return self._day

    @property
    def raw(self) -> bytes:
        """The bytes of the line last yielded, from the mapping (read only when asked: a
        line nobody logs or observes is never copied)."""
        day = self._day
        return b"" if day is None else day.raw(self._i)

    @property
    def index(self) -> int:
        """The index of the line last yielded in its day."""
        return self._i

    def writer(self, log: RunLog | ThinRunLog) -> Callable[[], None] | None:
        """What the runner's loop calls with each line it applies, for the run log: here
        only a mark that the line is in it (``_hand_over`` gives the log its bytes, whole
        runs of lines at once, before a strategy's input is written after them)."""
        return self._passed if log.gathers else None

    def _passed(self) -> None:
        self._upto = self._i + 1

    def _hand_over(self) -> None:
        """Give the run log the lines it is owed (``_handed`` to ``_upto``) in one piece."""
        a, b, day = self._handed, self._upto, self._day
        if b > a and day is not None:
            off = day.offsets
            self.log.lines(day.blob[off[a] : off[b]], b - a, day.t[a], day.t[b - 1])
            self._handed = b

    late = False

    def not_started(self) -> NotStarted:
        return NotStarted.logs_end(self.engine.season)

    def finish(self, end: int) -> None:
        """The season ended before the days did: nothing more to check (they were)."""

    def __enter__(self) -> DaySource:
        return self

    def __exit__(self, *exc: object) -> None:
        for day in self.days:
            day.close()

    def stop(self) -> None:
        """Read no more: nothing to stop (the days are mapped, not read ahead)."""

    def error(self, message: str) -> Exception:
        return LogError(self._path, self._i + 2, message)

    def lines(self) -> Generator[Line, None, None]:
        """The lines to apply; ``n`` and ``last_t`` (of every line, held ones too) are set
        when it ends or is closed."""
        engine = self.engine
        engine.trust_books(whitespace_free=True)  # a day cache's books passed the checks
        log = self.log
        gather = log.gathers  # (no run log: nothing is handed over at all)
        if gather:
            log.pending = self._hand_over
        hooks = self.hooks
        trade_hooks = bool(hooks.trade_hooks)
        # an engine keeping each message's prints (a backtest's, for the strategies' market
        # views and the subscribers) applies runs of them only when every subscriber takes
        # the prints without the line (``run.stream.TakesPrints``): each is then told them
        passed = None
        if engine.record_prints and hooks.heard_prints is not None:
            passed = hooks.passed_prints
        quiet = not trade_hooks and (passed is not None or not engine.record_prints)
        progress, every = self.progress, self.every
        queue, hold = self.queue, self.hold
        # lines before ``limit`` may be held: the next timed event, the first queued input
        # (at its time); none before the strategies registered. Only the loop changes
        # either (it applies, hooks send): worked out again after each line it applied.
        limit = _NONE
        last_t: int | None = None
        n = 0
        try:
            for day in self.days:
                log.known(day.path, day.size, day.sha256)
                self._path = day.path
                self._day, self._handed, self._upto = day, 0, 0
                check_follows(day, last_t)
                states = [engine.coin_state(coin) for coin in day.coins]
                scan = Scanner(
                    day.cols, day.blob, states, not hooks.book_hooks, not hooks.ctx_hooks, quiet
                )
                quietly = _quiet_prints(engine, day, states, passed)
                times, kinds, coins, make = day.t, day.kind, day.coin, day.inputs.make
                i, size = 0, day.n
                while i < size:
                    stop = min(size, i + SPAN)
                    j = scan.scan(i, stop, limit, _ALL)
                    if scan.r_hi > scan.r_lo and (r := quietly(scan.r_lo, scan.r_hi)) < scan.r_hi:
                        scan.rewind()  # the engine stopped at message r: it is applied here
                        j = scan.scan(i, stop, limit, r)
                    if j > i:  # passed over (in the run log once the next line is: _upto)
                        if progress is not None and (n + j - i) & ~every != n & ~every:
                            progress.update(n + j - i, times[j - 1])
                        n += j - i
                        last_t = times[j - 1]
                        i = j
                        if j == stop:
                            continue
                    t, kind = times[j], kinds[j]
                    line = make(j, kind, t, coins[j])
                    i = j + 1
                    if t >= limit or not (kind == KIND_OTHER and type(line.arena) is Tick):
                        # (a tick the scan did not know, before anything falls due: nothing)
                        if scan.nheld and (
                            t >= limit or not _inert(kind, coins[j], states, trade_hooks)
                        ):
                            _catch_up(engine, day, scan.take_held())
                        self._i = self._upto = j  # (the loop's writer marks this line in too)
                        yield line  # the loop applied it, and what was queued first
                    last_t = t
                    n += 1
                    if progress is not None and not n & every:
                        progress.update(n, t)
                    if engine.over:
                        return
                    if hold and hooks.live:
                        limit = min(engine.next_due, _ALL)  # (the scan's is 64 bits)
                        if queue and queue[0][0] < limit:
                            limit = queue[0][0] + 1
                if scan.nheld:
                    _catch_up(engine, day, scan.take_held())
                self._upto = day.n
                if gather:
                    self._hand_over()
        finally:  # however it ends: what is in the run log so far is handed over
            self.n, self.last_t = n, last_t
            if gather:
                self._hand_over()
                log.pending = None


def check_follows(day: CachedDay, last_t: int | None) -> None:
    """LogError unless ``day``'s first input comes no earlier than ``last_t`` (the last
    input of the days before it), as the reader says of logs read in order."""
    if last_t is not None and day.n and day.t[0] < last_t:
        raise LogError(day.path, 2, f"t {day.t[0]} is lower than the line before ({last_t})")


def _quiet_prints(
    engine: Engine,
    day: CachedDay,
    states: list[AssetState | None],
    passed: Callable[[list[RawTrade], int], None] | None,
) -> Quietly:
    """``Engine.apply_quiet_prints`` over ``day``'s trades messages: (lo, hi) -> the first
    one it did not apply. ``passed`` (an engine recording prints): called with each
    applied message's applied prints and time, in order (none applied: not called)."""
    c = day.cols
    times, starts = c["p_t"], c["tr_start"]
    # per print, when prints are kept: the engine says whether it applied it
    new = None if passed is None else bytearray(len(times))
    cols = PrintColumns(
        states, starts, times, c["p_coin"], c["p_time"], c["p_tid"], c["p_px"], c["p_sz"], new
    )
    apply = engine.apply_quiet_prints
    if passed is None or new is None:
        return lambda lo, hi: apply(cols, lo, hi)
    prints_of = day.inputs.prints

    def quietly(lo: int, hi: int) -> int:
        stop = apply(cols, lo, hi)
        for r in range(lo, stop):
            first, end = starts[r], starts[r + 1]
            applied = prints_of(r)
            if 0 in new[first:end]:  # (seldom: a resent print, or another market's)
                applied = [p for k, p in enumerate(applied, first) if new[k]]
                if not applied:
                    continue
            passed(applied, times[first])
        return stop

    return quietly


def _inert(kind: int, c: int, states: list[AssetState | None], trade_hooks: bool) -> bool:
    """A trades message of one coin with no order resting on it, nobody hooking prints:
    it fills nothing and reads nothing held (the held lines need not be applied first)."""
    if kind != KIND_TRADES or trade_hooks or c < 0:
        return False
    a = states[c]
    return a is not None and a.prints_are_inert


def _catch_up(engine: Engine, day: CachedDay, held: list[int]) -> None:
    """Apply the held inputs (their lines, in log order): no hook reads them; they cause
    no event."""
    apply, make = engine.apply_held, day.inputs.line
    for i in held:
        apply(make(i))
