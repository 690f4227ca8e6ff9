"""The one stream a run yields, and what may subscribe to it.

Why this module exists: a run is read by many (its own fill hash and notes, the report's
collector, the host's views, the lockstep gate, the twins' desk); each used to reach into
the runner after it was built (appending to its observers, setting its gate). Now each is
a :class:`Subscriber` given to ``Backtest`` at construction: the runner calls ``bind``
once (there it may read the engine, the entrants, the markets), then ``observe(line, raw,
events)`` after every input the engine applies, its hooks run, in the order given. A
subscriber that also has ``before`` is the run's :class:`Gate` (at most one): called
before each input is applied, it may queue inputs and says whether it did. The
protocols live here, apart from the loop, so a subscriber's module need not import it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, cast

from arena_tui.run.hooks import Said
from arena_tui.run.parts import BacktestError, Entrant
from engine import Engine, Line, Season
from engine import events as ev
from engine.inputs import Trade as RawTrade

_P = ParamSpec("_P")

if TYPE_CHECKING:
    from arena_tui.run.market import MarketView
    from arena_tui.run.quotes import OrderNotes

EventFn = Callable[[ev.AnyEvent], None]


class Run(Protocol):
    """What a subscriber may read of the run it is bound to (``run.backtest.Backtest``)."""

    @property
    def season(self) -> Season: ...
    @property
    def engine(self) -> Engine: ...
    @property
    def entrants(self) -> list[Entrant]: ...
    @property
    def by_name(self) -> dict[str, Entrant]: ...
    @property
    def markets(self) -> dict[str, MarketView]: ...
    @property
    def applying(self) -> dict[str, Any] | None:
        """The strategy input being applied (None: a line of the logs)."""
        ...

    @property
    def notes(self) -> OrderNotes:
        """The notes of the run's orders so far."""
        ...

    @property
    def now(self) -> int:
        """The time of the input being handled."""
        ...

    @property
    def live(self) -> bool:
        """The strategies are registered: their hooks run."""
        ...


class Subscriber(Protocol):
    """Called after every applied input (a log line or a strategy's own), its hooks run:
    the line, its bytes as logged, its events. Held inputs of the warm pass are not applied,
    so not observed. It may send an entrant's orders (through the entrant's context): they
    are queued, never applied inside ``observe``.

    A subscriber with ``market_bytes = False`` never reads a market line's bytes (``line.hl``
    set): while no subscriber does, they are b"" (a warm pass then cuts no market line out
    of the day's cache); an arena input's are always given."""

    def observe(self, line: Line, raw: bytes, events: list[ev.AnyEvent]) -> None: ...


class TakesPrints(Protocol):
    """A subscriber the warm pass may pass trades messages by: for a run of them applied
    at once (no event, no hook: ``run.daysource``), ``prints_applied(applied, t)`` for each
    message with the prints the engine applied (not called when none was), in place of
    ``observe``. Only when every subscriber has it are trades messages passed by; one with
    no use for prints has it do nothing."""

    def prints_applied(self, applied: list[RawTrade], t: int) -> None: ...


def prints_ears(subscribers: Sequence[Subscriber]) -> Callable[[list[RawTrade], int], None] | None:
    """One callable giving each subscriber its ``prints_applied(applied, t)``, in order,
    when every subscriber takes prints so (``TakesPrints``); else None (each message is
    observed). One subscriber's own method, as ``event_ears`` gives one ear."""
    takers = [s for s in subscribers if hasattr(s, "prints_applied")]
    if len(takers) < len(subscribers):
        return None
    return _together([cast("TakesPrints", s).prints_applied for s in takers]) or _nobody


def _nobody(applied: list[RawTrade], t: int) -> None:
    """No subscriber: nobody is told a run's prints."""


class Binds(Protocol):
    """A subscriber that reads the run it rides: ``bind(run)`` is called once, from the
    runner's constructor, after its engine, entrants and markets exist."""

    def bind(self, run: Run) -> None: ...


class Hears(Protocol):
    """A subscriber that hears each event as it comes, before the hooks it causes run."""

    def event(self, e: ev.AnyEvent) -> None: ...


class Listens(Protocol):
    """A subscriber that hears each line a strategy prints (``run.hooks.Said``)."""

    def said(self, said: Said) -> None: ...


class Gate(Protocol):
    """A lockstep run's gate (``arena_tui.host.lockstep.StepGate``): ``before(t_next)`` is
    called before each input is applied (a log line or a queued one, at ``t_next``) and
    before the end; it may queue inputs (``Backtest.queue_input``) and says True when the
    queue may have changed. A run with a gate reads its logs themselves (the cold pass)."""

    def before(self, t_next: int) -> bool: ...


def gate_of(subscribers: Sequence[Subscriber]) -> Gate | None:
    """The subscriber that is the run's gate (has ``before``), if any; at most one."""
    gates = [s for s in subscribers if hasattr(s, "before")]
    if len(gates) > 1:
        raise BacktestError("a run has at most one gate")
    return cast("Gate", gates[0]) if gates else None


def bind_all(subscribers: Sequence[Subscriber], run: Run) -> None:
    """Call each subscriber's ``bind(run)``, those that have one, in order."""
    for s in subscribers:
        bind = getattr(s, "bind", None)
        if bind is not None:
            bind(run)


def event_ears(on_event: EventFn | None, subscribers: Sequence[Subscriber]) -> EventFn | None:
    """One callable hearing every event: ``on_event`` then each subscriber's ``event``, in
    order (None: nobody listens, and the runner calls nothing per event)."""
    ears = [on_event] if on_event is not None else []
    ears += [cast("Hears", s).event for s in subscribers if hasattr(s, "event")]
    return _together(ears)


def said_ears(subscribers: Sequence[Subscriber]) -> Callable[[Said], None] | None:
    """One callable hearing every printed line: each subscriber's ``said``, in order."""
    return _together([cast("Listens", s).said for s in subscribers if hasattr(s, "said")])


def _together(ears: list[Callable[_P, None]]) -> Callable[_P, None] | None:
    """One callable calling each of ``ears`` in order: the ear itself when there is one
    (no frame added per call), None when there is none."""
    if len(ears) <= 1:
        return ears[0] if ears else None

    def hear(*args: _P.args, **kwargs: _P.kwargs) -> None:
        for ear in ears:
            ear(*args, **kwargs)

    return hear


class OnEvent:
    """A subscriber that only hears events, with ``fn`` (a test's or a tool's viewer)."""

    market_bytes = False

    def __init__(self, fn: EventFn) -> None:
        self.fn = fn

    def event(self, e: ev.AnyEvent) -> None:
        self.fn(e)

    def observe(self, line: Line, raw: bytes, events: list[ev.AnyEvent]) -> None:
        """Nothing per input: it hears events as they come."""

    def prints_applied(self, applied: list[RawTrade], t: int) -> None:
        """Nothing: prints make no event."""
