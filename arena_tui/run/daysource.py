"""The warm pass's source: day caches, holding back the lines nobody could read.

Why this module exists: a day read again comes from its cache (``logs.daycache``: the
lines with their time, kind and coin, its market data as columns: nothing decoded), and
most of its market data can wait: a book or a context nobody reads before the next input
that is applied is *held*, and only the last of each coin and kind is applied, just
before it is needed. This is that decision, the hottest code of a warm pass;
``run.sources`` opens it, and the runner's one loop (``run.backtest``) applies what it
yields. It reads the runner's queue and registration only between the lines it yields:
nothing else changes them, so what may be held is worked out once per yielded line.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any, Protocol

from arena_tui.logs.dayformat import KIND_CTX, KIND_OTHER, KIND_TRADES
from arena_tui.logs.dayread import CachedDay
from arena_tui.logs.logfile import LogError
from arena_tui.run.parts import NotStarted, Status
from engine import AssetState, Engine, Line
from engine.inputs import Tick

if TYPE_CHECKING:
    from arena_tui.logs.runlog import RunLog
    from arena_tui.logs.thinlog import ThinRunLog

SPAN = 1 << 14  # lines read from the mapped arrays at once
_NONE = -(1 << 62)  # before registration nothing is held: no line is this early


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


class _Unhooked:
    """No strategy (a replay): nobody hooks anything, and lines may be held from the
    first one applied."""

    book_hooks: Sequence[object] = ()
    ctx_hooks: Sequence[object] = ()
    trade_hooks: Sequence[object] = ()
    live = True


UNHOOKED: Hooked = _Unhooked()


class DaySource:
    """The lines of day caches the runner must apply; the others held or skipped.

    A book or a full asset context of a season coin is *held* instead of applied when
    nothing can read the engine's state before the next input that is applied: no timed
    event is due at its time, no strategy input is queued before it, no strategy hooks it,
    and (a book) its coin has no order waiting to activate (a coin with no context mark
    takes its mark from its last two-sided book: that one is held too, beside the one-sided
    ones after it: ``_holds_book``). On the same terms, a trades message nobody hooks is,
    for an engine that keeps no prints for market views (a replay's), handed over as
    integers from the columns (``Engine.apply_quiet_prints``): when none of its prints goes
    through a resting order it is applied there and then, making no event and reading
    nothing held, and never reaches the runner's loop; otherwise prints of a coin with no
    order resting on it, nobody hooking prints, are yielded without first applying what is
    held (they read none of it). A tick (time alone) is passed over. Held inputs of one
    coin and kind replace each other; all are applied, in log order, before the next
    applied input (or a day's end). Market data of other coins is skipped on the same
    terms (the engine ignores it). So the engine makes exactly the calls of the cold pass
    that change what anyone reads, and every line still goes into the run log in order:
    handed over by the source as runs of the cache's bytes, applied lines too, just before
    a strategy's input is written after them (``_hand_over``). The cache's lines were
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
        self.raw = b""
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
    def index(self) -> int:
        """The index of the line last yielded in its day."""
        return self._i

    def writer(self, log: RunLog | ThinRunLog) -> Callable[[bytes], None] | None:
        """What the runner's loop calls with each line it applies, for the run log: here
        only a mark that the line is in it (``_hand_over`` gives the log its bytes, whole
        runs of lines at once, before a strategy's input is written after them)."""
        return self._passed if log.gathers else None

    def _passed(self, raw: bytes) -> None:
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
        defer_books = not hooks.book_hooks
        defer_ctx = not hooks.ctx_hooks
        trade_hooks = bool(hooks.trade_hooks)
        # an engine keeping each message's prints for the strategies' market views (a
        # backtest's) is handed every message: they are built from the applied prints
        quiet = None if engine.record_prints else engine.apply_quiet_prints
        inert = False  # the line about to be yielded needs nothing held applied first
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
                held: dict[int, int] = {}  # 2 * coin (+1 for a context) -> the line held
                rows, nlev = day.row, day.cols["b_nlev"]  # (a book's row, its sides' levels)
                blob, make = day.blob, day.inputs.make  # from the columns: nothing decoded
                tr = day.cols["tr_start"]  # a trades message's prints: tr[r] to tr[r + 1]
                ints = _prints_as_integers(day, states)
                spans = range(0, day.n, SPAN)
                for i, t, kind, c, at, end in chain.from_iterable(map(_span, repeat(day), spans)):
                    if kind <= KIND_CTX and t < limit:
                        a = states[c] if c >= 0 else None
                        skip: bool | None = False  # True: held; None: done here or ignored
                        if kind == KIND_TRADES:
                            r = rows[i]
                            if trade_hooks:
                                pass
                            elif quiet is not None and r >= 0 and quiet(t, *ints, tr[r], tr[r + 1]):
                                skip = None  # nobody hooks them, they fill nothing: applied
                            elif a is not None and a.prints_are_inert:
                                inert = True  # one coin's, resting on nothing: read nothing held
                        elif c < 0:
                            pass
                        elif a is None:
                            skip = None  # another coin's market data: the engine ignores it
                        elif kind == KIND_CTX:
                            skip = defer_ctx
                        else:
                            skip = defer_books and _holds_book(a, held, c, i, rows, nlev)
                        if skip:
                            held[2 * c + (kind == KIND_CTX)] = i
                    else:
                        skip = False
                    if skip is False:
                        line = make(i, kind, t, c)
                        if kind == KIND_OTHER and t < limit and type(line.arena) is Tick:
                            skip = None  # time alone, before anything falls due: nothing to do
                    if skip is not False:  # (in the run log once the next line is: _upto)
                        last_t = t
                        n += 1
                        if progress is not None and not n & every:
                            progress.update(n, t)
                        continue
                    if held and not inert:
                        _catch_up(engine, day, held)
                    inert = False
                    self.raw = bytes(blob[at:end])
                    self._i = self._upto = i  # (the loop's writer marks this line in too)
                    yield line  # the loop applied it, and what was queued first
                    last_t = t
                    n += 1
                    if progress is not None and not n & every:
                        progress.update(n, t)
                    if engine.over:
                        return
                    if hold and hooks.live:
                        limit = engine.next_due
                        if queue and queue[0][0] < limit:
                            limit = queue[0][0] + 1
                if held:
                    _catch_up(engine, day, held)
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


def _span(day: CachedDay, base: int) -> Iterator[tuple[int, int, int, int, int, int]]:
    """Lines ``base`` to ``base + SPAN``: each one's index, ``t``, kind, coin and bytes' start
    and end in the blob (Python lists: quicker to read than the mapped arrays)."""
    stop = min(base + SPAN, day.n)
    offs = day.offsets[base : stop + 1].tolist()
    return zip(
        range(base, stop),
        day.t[base:stop].tolist(),
        day.kind[base:stop].tolist(),
        day.coin[base:stop].tolist(),
        offs,
        [o - 1 for o in offs[1:]],
        strict=False,  # offs is one longer
    )


_Ints = Sequence[int]


def _prints_as_integers(
    day: CachedDay, states: list[AssetState | None]
) -> tuple[list[AssetState | None], _Ints, _Ints, _Ints, _Ints, _Ints]:
    """What ``Engine.apply_quiet_prints`` reads of a day's prints, after the time: each
    coin's state, and each print's coin, exchange time, tid, price and size columns."""
    cols = day.cols
    return (states, cols["p_coin"], cols["p_time"], cols["p_tid"], cols["p_px"], cols["p_sz"])


def _holds_book(a: AssetState, held: dict[int, int], c: int, i: int, rows: Any, nlev: Any) -> bool:
    """Whether book line ``i`` of coin ``c`` (state ``a``) may be held. Not when an order
    waits for a book to activate. A coin with a context mark takes no mid from books: the
    last held book is all the engine needs. A coin without one takes its mark from the
    last two-sided book, so the last of those is held too (under ``-1 - c``) while later
    one-sided ones come; a context held for the coin may set the mark first, so then the
    book is applied (after it)."""
    if a.awaits_book:
        return False
    if not a.marks_by_book:
        return True
    if 2 * c + 1 in held:
        return False
    if _two_sided(i, rows, nlev):
        held.pop(-1 - c, None)  # this one sets the mid: no earlier book is needed
        return True
    last = held.get(2 * c)
    if last is not None and _two_sided(last, rows, nlev):
        held[-1 - c] = last  # the mid's book, kept beside the one-sided ones after it
    return True


def _two_sided(i: int, rows: Any, nlev: Any) -> bool:
    """Book line ``i`` has bids and asks (its row's level counts, ``b_nlev``)."""
    r = rows[i]
    return bool(nlev[2 * r] and nlev[2 * r + 1])


def _catch_up(engine: Engine, day: CachedDay, held: dict[int, int]) -> None:
    """Apply the held inputs, in log order (no hook reads them; they cause no event)."""
    apply, make = engine.apply_held, day.inputs.line
    for i in sorted(held.values()):
        apply(make(i))
    held.clear()
