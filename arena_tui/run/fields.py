"""The fields of a strategy's orders and cancels, checked at the call.

Why this module exists: a run log holds only inputs a hosted agent could have sent, so
``ctx.order``, ``ctx.buy``, ``ctx.sell`` and ``ctx.cancel`` refuse, before anything is
queued, a field the HTTP API would refuse (a 400, which never reaches a log): a float or
a string where an integer belongs, a bool where an integer belongs or an integer where a
bool does, a value out of its type's range (asset uint32, prices and sizes uint64,
encodedTif uint8, cloid uint128), a coin the season does not trade, a note that is not a
string of at most 280 characters (``arena_tui.logs.notes``). What the API accepts
and the engine then rejects (a price off the grid, an unknown asset, a tif of 7) is sent,
and comes back as a ``Rejected`` event, exactly as over HTTP. A refused call raises
:class:`RefusedCall` (a :class:`StrategyError`, and a ``ValueError`` as the helpers
raised before), one line naming the strategy's file and line, the call, the field and the
value.
"""

from __future__ import annotations

import operator
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path
from types import FrameType
from typing import SupportsIndex

from arena_tui.logs.notes import NoteError, check_note
from arena_tui.util.errors import ArenaError
from engine.units import E8

U8, U32, U64, U128 = 2**8 - 1, 2**32 - 1, 2**64 - 1, 2**128 - 1
_API_FILES = frozenset(
    str(Path(__file__).with_name(name)) for name in ("fields.py", "strategy.py", "market.py")
)


class StrategyError(ArenaError):
    """A strategy that cannot be loaded, that raised, or that made a call the API refuses:
    one line, with file and line."""


class RefusedCall(StrategyError, ValueError):
    """A call with a field the API refuses (a ValueError too, as the helpers raised)."""


def line_in(frame: FrameType | None, path: Path) -> int | None:
    """The line of the innermost frame from ``frame`` outwards that runs ``path``, or None."""
    target = path.resolve()
    while frame is not None:
        if Path(frame.f_code.co_filename).resolve() == target:
            return frame.f_lineno
        frame = frame.f_back
    return None


def caller(path: Path | None) -> str:
    """``file:line`` of the strategy code that called the API: the innermost frame in
    ``path`` (the strategy file) when there is one, else the first frame outside the API."""
    frame: FrameType | None = sys._getframe(1)
    line = None if path is None else line_in(frame, path)
    if path is not None and line is not None:
        return f"{path}:{line}"
    while frame is not None and frame.f_code.co_filename in _API_FILES:
        frame = frame.f_back
    if frame is None:
        return str(path) if path is not None else "<strategy>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


Human = Decimal | int | float | str  # a price or size in dollars or coins, as people write it


def to_decimal(value: Human) -> Decimal:
    """A human number as an exact Decimal (a float goes through its shortest repr)."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool):
        raise TypeError("a price or size cannot be a bool")
    if isinstance(value, float):
        return Decimal(repr(float(value)))  # its shortest repr (a numpy float's too)
    return Decimal(value)


def _shown(value: object) -> str:
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    kind = type(value).__name__
    return text if kind in ("int", "bool") else f"{text} ({kind})"


class Call:
    """The checks of one call (``ctx.order``, ...) made from ``path``."""

    __slots__ = ("name", "path")

    def __init__(self, name: str, path: Path | None) -> None:
        self.name = name
        self.path = path

    def bad(self, field: str, value: object, why: str) -> RefusedCall:
        return self.refused(f"{field} {_shown(value)} {why}")

    def refused(self, why: str) -> RefusedCall:
        return RefusedCall(f"{caller(self.path)}: {self.name}: {why}")

    def whole(self, field: str, value: object, top: int, hint: str = "") -> int:
        """An integer from 0 to ``top`` (an int, or anything with ``__index__`` but a bool).

        A plain int skips the ``SupportsIndex`` check: ``isinstance`` against a runtime
        protocol costs ~3.7 us, and a quoter's orders and cancels call this ~400k times a day.
        """
        if type(value) is int:
            n = value
        elif isinstance(value, bool) or not isinstance(value, SupportsIndex):
            raise self.bad(field, value, f"is not an integer{hint}")
        else:
            n = operator.index(value)
        if not 0 <= n <= top:
            raise self.bad(field, value, f"is out of range: 0 to {top:,}")
        return n

    def flag(self, field: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise self.bad(field, value, "is not a bool: pass True or False")
        return value

    def cloid(self, value: object) -> int:
        """0 (or None) = no cloid, else 1 to 2^128 - 1."""
        return 0 if value is None else self.whole("cloid", value, U128)

    def note(self, value: object) -> str | None:
        """An order's note (``logs.notes``): a string of at most 280 characters; empty or
        None is no note."""
        try:
            return check_note(value)
        except NoteError as exc:
            text = str(exc)
            raise self.bad("note", value, text[5:] if text.startswith("note ") else text) from None

    def amount(self, field: str, value: object) -> Decimal:
        """A positive, finite number (of dollars, of coins): int, str, Decimal or float."""
        try:
            if not isinstance(value, int | str | Decimal | float):
                if not isinstance(value, SupportsIndex):
                    raise TypeError
                value = operator.index(value)  # a numpy integer, say
            number = to_decimal(value)  # (a bool is refused there)
        except TypeError:
            raise self.bad(field, value, "is not a number (int, str, Decimal or float)") from None
        except (InvalidOperation, ValueError):
            raise self.bad(field, value, "is not a number") from None
        if not number.is_finite():
            raise self.bad(field, value, "is not a finite number")
        if number <= 0:
            raise self.bad(field, value, "must be above 0")
        if number * E8 > U64:
            raise self.bad(field, value, "is too large (at 1e8 it must fit in 64 bits)")
        return number

    def coin(self, value: object, coins: dict[str, int]) -> str:
        if not isinstance(value, str) or value not in coins:
            raise self.bad("coin", value, f"is not one of this season's coins {list(coins)}")
        return value
