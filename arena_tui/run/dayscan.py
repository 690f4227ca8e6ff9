"""The warm pass's inner loop: the lines of a cached day that nobody needs to see, passed over.

Why this module exists: on a busy day most lines of a day cache are books, contexts and
prints that no strategy hooks and nothing reads before the next input that is applied
(``run.daysource`` says when: the decision is made per line). Deciding that in Python cost
~1.6 us a line, most of a cached replay's time; here it is one loop over the cache's
columns that stops only at a line the source must apply itself. setup.py compiles this
very file with Cython (its C types in ``_dayscan.pxd``) as ``arena_tui.run._dayscan``; the
source runs as it is without a compiler (and under ``ARENA_ENGINE=pure``), and the two
give the same answers (tests/test_dayscan.py).

A scan of lines ``i`` to ``stop`` passes over, in order:

- a book or a full asset context of a season coin that may be *held* (``DaySource``'s
  terms: the caller lets it hold them, and for a book no order of its coin waits for one:
  ``_holds_book``): the last of each coin and kind is remembered, to be applied before the
  next line applied (``take_held``);
- market data of a coin the season does not trade;
- a tick (time alone) written as the recorder and the host write it;
- when allowed (``quiet``), a trades message with prints: it is gathered (messages
  ``r_lo`` to ``r_hi`` of the day's trades table) for the engine to apply as integers
  (``Engine.apply_quiet_prints``). If the engine stops at a message, the scan is done again
  from the same start (``rewind``) up to that message, which the source then applies.

It stops at any line at or after ``limit`` (the next timed event, or a strategy's queued
input), and at any other line: the source applies it.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from arena_tui.logs.logfile import TICK_LINE
from arena_tui.util.twins import compiled_twin

# the day cache's kinds (logs.dayformat), said again: a compiled module reads them as C
_BOOK, _TRADES, _CTX, _OTHER = 0, 1, 2, 4
# a tick as the host and the live feed write it: head, the digits of t, tail
_TICK_HEAD, _TICK_TAIL = TICK_LINE.split(b"%d")


class DayScan:
    """One day's columns, scanned for the lines the warm pass must apply.

    ``cols``: the day cache's columns (``CachedDay.cols``); ``blob``: its lines' bytes;
    ``states``: the engine's state of each of the day's coins (None: not traded);
    ``defer_books`` / ``defer_ctx``: books / contexts may be held (no strategy hooks them);
    ``quiet``: trades messages may be gathered for ``Engine.apply_quiet_prints``."""

    def __init__(
        self,
        cols: dict[str, Any],
        blob: Any,
        states: Sequence[Any],
        defer_books: bool,
        defer_ctx: bool,
        quiet: bool,
    ) -> None:
        self.t: Sequence[int] = cols["t"]
        self.off: Sequence[int] = cols["off"]
        self.kind: Sequence[int] = cols["kind"]
        self.coin: Sequence[int] = cols["coin"]
        self.row: Sequence[int] = cols["row"]
        self.nlev: Sequence[int] = cols["b_nlev"]
        self.tr: Sequence[int] = cols["tr_start"]
        self.blob = blob
        self.states = list(states)
        self.ncoins = len(self.states)
        self.defer_books = defer_books
        self.defer_ctx = defer_ctx
        self.quiet = quiet
        # the line held per coin and kind: 2c a book, 2c + 1 a context, 2n + c the last
        # two-sided book kept beside later one-sided ones; -1: none
        self.held = array("q", [-1]) * (3 * self.ncoins)
        self.saved = array("q", [-1]) * (3 * self.ncoins)
        self.nheld = self.saved_n = 0
        self.r_lo = self.r_hi = 0  # the trades messages gathered by the last scan

    def scan(self, i: int, stop: int, limit: int, row_stop: int) -> int:
        """Pass over lines from ``i``; return the first the source must apply (``stop``:
        none before it). Trades messages from ``row_stop`` on are not gathered."""
        self.saved[:] = self.held
        self.saved_n = self.nheld
        self.r_lo = self.r_hi = 0
        states, n2 = self.states, 2 * self.ncoins
        while i < stop:
            if self.t[i] >= limit:
                return i
            k = self.kind[i]
            if k == _TRADES:
                r = self.row[i]
                if not self.quiet or r < 0 or r >= row_stop or self.tr[r] >= self.tr[r + 1]:
                    return i
                if self.r_hi == self.r_lo:
                    self.r_lo = r
                elif r != self.r_hi:
                    return i
                self.r_hi = r + 1
            elif k > _CTX:
                if k != _OTHER or not self._is_tick(i):
                    return i
            else:
                c = self.coin[i]
                if c < 0 or self.row[i] < 0:
                    return i
                a = states[c]
                if a is None:
                    pass  # another coin's market data: the engine ignores it
                elif k == _CTX:
                    if not self.defer_ctx:
                        return i
                    self._hold(2 * c + 1, i)
                elif self.defer_books and self._holds_book(a, c, i, n2):
                    self._hold(2 * c, i)
                else:
                    return i
            i += 1
        return i

    def rewind(self) -> None:
        """The held lines as they were when the last scan began."""
        self.held[:] = self.saved
        self.nheld = self.saved_n

    def take_held(self) -> list[int]:
        """The lines held, in log order (to apply now); none held after."""
        got = []
        for k in range(3 * self.ncoins):
            if self.held[k] >= 0:
                got.append(self.held[k])
                self.held[k] = -1
        self.nheld = 0
        got.sort()
        return got

    def _hold(self, slot: int, i: int) -> None:
        if self.held[slot] < 0:
            self.nheld += 1
        self.held[slot] = i

    def _holds_book(self, a: Any, c: int, i: int, n2: int) -> bool:
        """Whether book line ``i`` of coin ``c`` (state ``a``) may be held. Not when an
        order waits for a book to activate. A coin with a context mark takes no mid from
        books: the last held book is all the engine needs. A coin without one takes its
        mark from the last two-sided book, so the last of those is held too (slot
        ``2n + c``) while later one-sided ones come; a context held for the coin may set
        the mark first, so then the book is applied (after it)."""
        if a.awaits_book:
            return False
        if not a.marks_by_book:
            return True
        if self.held[2 * c + 1] >= 0:
            return False
        if self._two_sided(i):
            if self.held[n2 + c] >= 0:  # this one sets the mid: no earlier book is needed
                self.held[n2 + c] = -1
                self.nheld -= 1
            return True
        last = self.held[2 * c]
        if last >= 0 and self._two_sided(last):
            self._hold(n2 + c, last)  # the mid's book, kept beside the one-sided ones after it
        return True

    def _two_sided(self, i: int) -> bool:
        """Book line ``i`` has bids and asks (its row's level counts)."""
        r = self.row[i]
        return self.nlev[2 * r] != 0 and self.nlev[2 * r + 1] != 0

    def _is_tick(self, i: int) -> bool:
        """Line ``i`` is a tick in the form the host and the live feed write (any other
        form of one is decoded and applied by the source)."""
        at, end = self.off[i], self.off[i + 1] - 1
        head, tail = len(_TICK_HEAD), end - len(_TICK_TAIL)
        if tail - at <= head or self.blob[end] != 10:  # (at least one digit)
            return False
        for k in range(head):
            if self.blob[at + k] != _TICK_HEAD[k]:
                return False
        for k in range(len(_TICK_TAIL)):
            if self.blob[tail + k] != _TICK_TAIL[k]:
                return False
        for k in range(at + head, tail):  # noqa: SIM110 - a loop, not all(): compiled, it is C
            if not 48 <= self.blob[k] <= 57:
                return False
        return True


def _compiled() -> bool:
    """True when this module runs compiled: its functions are then not Python functions."""
    return type(_compiled).__name__ != "function"


def _compiled_twin() -> ModuleType | None:
    """This module compiled by setup.py (``arena_tui.run._dayscan``), when built from
    this source (``util.twins``)."""
    return compiled_twin(__file__, "arena_tui.run", "_dayscan")


# What the warm pass uses: the compiled scanner when this module's build is current, else
# this source. ``SCANNER`` says which.
Scanner: type[DayScan] = DayScan
SCANNER = "compiled" if _compiled() else "python"
if not _compiled() and (_twin := _compiled_twin()) is not None:
    Scanner, SCANNER = _twin.DayScan, "compiled"
