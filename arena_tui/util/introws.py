"""Rows of integers kept flat: what a run gathers every minute, without an object a row.

Why this module exists: a backtest keeps every minute mark of every entry for its report
(the CSVs, the charts, the verdict's blocks, report.html), and kept as one object a row
(a dataclass or a struct, and an int object for each large field) that was most of what
grew with the days: five entries over thirty days are 216,000 marks. :class:`IntRows`
keeps the same rows as one flat ``array('q')`` (8 bytes a field) and makes the row object
only when it is read, so a reader sees the same sequence of the same rows; a field that
does not fit 64 bits moves the whole store to a list of Python ints (exact, as before).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

NONE = -(2**63)  # a field that is None (no figure this project keeps is -2**63)


def opt(value: int | None) -> int:
    """``value`` as a field: None as ``NONE``."""
    return NONE if value is None else value


def unopt(field: int) -> int | None:
    return None if field == NONE else field


class IntRows(Sequence[T], Generic[T]):
    """Append-only rows of ``width`` integers, each read back as ``make(fields)``."""

    __slots__ = ("_data", "_make", "_n", "_width")

    def __init__(self, width: int, make: Callable[[Sequence[int]], T]) -> None:
        self._width = width
        self._make = make
        self._data: array[int] | list[int] = array("q")
        self._n = 0

    def add(self, fields: Sequence[int]) -> None:
        """One row (``width`` integers, ``NONE`` for a None)."""
        try:
            self._data.extend(fields)
        except OverflowError:  # a field past 64 bits: exact Python ints from now on
            data = self._data
            del data[self._n * self._width :]  # the row's fields that went in before it
            self._data = list(data)
            self._data.extend(fields)
        self._n += 1

    def field(self, row: int, col: int) -> int:
        """Field ``col`` of row ``row`` (0 <= row < len)."""
        return self._data[row * self._width + col]

    def set(self, row: int, col: int, value: int) -> None:
        """Field ``col`` of row ``row`` becomes ``value`` (rows that change as they live)."""
        try:
            self._data[row * self._width + col] = value
        except OverflowError:
            self._data = list(self._data)
            self._data[row * self._width + col] = value

    def __len__(self) -> int:
        return self._n

    def _row(self, i: int) -> T:
        w = self._width
        return self._make(self._data[i * w : i * w + w])

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self._row(j) for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("row index out of range")
        return self._row(i)

    def __iter__(self) -> Iterator[T]:
        make, w, data = self._make, self._width, self._data
        for i in range(0, self._n * w, w):
            yield make(data[i : i + w])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"

    def nbytes(self) -> int:
        """The bytes the fields take (a list's: its pointers and the ints they point to)."""
        data: Any = self._data
        if isinstance(data, array):
            return data.itemsize * len(data)
        return sum(v.__sizeof__() + 8 for v in data)


S = TypeVar("S")


class Mapped(Sequence[T], Generic[S, T]):
    """``source`` with ``fn`` applied to each item as it is read (nothing kept): a run's
    rows made from its flat store only when a reader comes to them."""

    __slots__ = ("_fn", "_source")

    def __init__(self, source: Sequence[S], fn: Callable[[S], T]) -> None:
        self._source = source
        self._fn = fn

    def __len__(self) -> int:
        return len(self._source)

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self._fn(self._source[j]) for j in range(*i.indices(len(self)))]
        return self._fn(self._source[i])

    def __iter__(self) -> Iterator[T]:
        fn = self._fn
        for item in self._source:
            yield fn(item)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


class Picked(Mapped[int, T]):
    """The items of ``source`` at ``rows`` (in that order), read through it."""

    __slots__ = ("_rows",)

    def __init__(self, source: Sequence[T]) -> None:
        self._rows: array[int] = array("q")
        super().__init__(self._rows, source.__getitem__)

    def add(self, row: int) -> None:
        self._rows.append(row)
