"""The vocabulary of a run, shared by the runner, what builds it and what watches it.

An :class:`Entrant` (a strategy in the run and what it gathered), the line sources a pass
reads (recorded logs or a live feed), the status line it updates, its
:class:`BacktestResult`, and the errors that end a run as one line. Kept apart from the
pass itself (``backtest``) so a viewer or a builder can speak of a run without the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from arena_tui.run.loader import ENTRY_NAME
from arena_tui.run.params import ParamValue
from arena_tui.run.quotes import OrderNotes
from arena_tui.run.replayresult import ReplayResult
from arena_tui.run.stats import EntryStats
from arena_tui.run.strategy import Context, Strategy
from arena_tui.util.errors import ArenaError
from arena_tui.util.human import utc_minute
from engine import Engine, Line, Season
from engine import events as ev

if TYPE_CHECKING:
    from arena_tui.run.market import MarketView

# an entry's equity were its positions closed now (``run.stats.exit_value``), at a mark
ExitValue = Callable[[Engine, str, "dict[str, MarketView]"], int]

HOOKS = ("on_book", "on_trades", "on_asset_ctx", "on_event", "on_mark")


class BacktestError(ArenaError):
    """A backtest that cannot run as asked (one line)."""


class NotStarted(BacktestError):
    """The input ended (or the run was stopped) before the season started: nothing traded."""

    @classmethod
    def logs_end(cls, season: Season) -> NotStarted:
        return cls(
            "the logs end before the season starts: nothing to trade "
            f"(season {season.id} starts at {season.start})"
        )

    @classmethod
    def feed_stopped(cls, season: Season) -> NotStarted:
        starts = utc_minute(season.start)
        return cls(f"stopped before any input of season {season.id} ({starts} on): nothing traded")


class Reads(Protocol):
    """A source's reader: ``raw``, the bytes of the line it yielded last (read when asked:
    a pass reads them only for the run log or a subscriber)."""

    @property
    def raw(self) -> bytes: ...


class _NothingRead:
    raw = b""


NOTHING_READ: Reads = _NothingRead()  # a runner's before its pass


class LineSource(Protocol):
    """What the pass reads: inputs in ``t`` order, each with the bytes to log for it."""

    raw: bytes  # the line last yielded, verbatim, for the run log

    def __iter__(self) -> Iterator[Line]: ...

    def error(self, message: str) -> Exception:
        """The error to raise for the line last yielded (the engine refused it)."""
        ...


class LiveSource(LineSource, Protocol):
    def close(self) -> None:
        """Stop receiving (idempotent); the pass calls it however it ends."""
        ...


class Status(Protocol):
    """A progress line: ``update`` after inputs (as often as the pass says), ``done`` once."""

    def update(self, inputs: int, t: int) -> None: ...

    def done(self) -> None: ...


@dataclass
class Entrant:
    """A strategy in the run: its entry name, its source file, and its context.

    ``params``: every declared parameter and its value in this run (``params.params_doc``;
    empty for an entrant built without them)."""

    name: str
    strategy: Strategy
    path: Path
    ctx: Context | None = None
    hooks: frozenset[str] = frozenset()
    stats: EntryStats = field(default_factory=EntryStats)
    params: dict[str, ParamValue] = field(default_factory=dict)
    # a lockstep agent's counts (steps, passes, reconnects, waits); None for a strategy
    remote: dict[str, int] | None = None


@dataclass
class BacktestResult:
    replay: ReplayResult  # what `arena replay` of the run log prints
    entrants: list[Entrant]
    run_log: Path | None
    inputs: int  # log inputs read
    own_inputs: int  # registrations, orders and cancels the strategies sent
    dropped: int  # strategy inputs stamped after the last log input (never applied)
    fill_events: Sequence[ev.Fill] = field(default_factory=list)  # every fill, in run order
    notes: OrderNotes = field(default_factory=OrderNotes)  # the notes of the orders filled


def overridden(strategy: Strategy) -> frozenset[str]:
    """The hooks a strategy's class overrides (the others are not called at all)."""
    cls = type(strategy)
    return frozenset(h for h in HOOKS if getattr(cls, h) is not getattr(Strategy, h))


def check_names(entrants: Sequence[Entrant]) -> list[str]:
    """The entries' names, in order; BacktestError unless each is unique and well formed."""
    names = [e.name for e in entrants]
    if len(set(names)) != len(names):
        raise BacktestError(f"entry names must be unique: {', '.join(names)}")
    for name in names:
        if ENTRY_NAME.fullmatch(name) is None:
            raise BacktestError(f"entry name {name!r}: 1-32 characters of a-z, 0-9, _ and -")
    return names
