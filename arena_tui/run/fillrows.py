"""A run's fills kept flat: every fill as 18 integers, made an event again when read.

Why this module exists: the run's own ledger keeps every fill in run order (fills.jsonl,
the twins' trips, fills.csv by entry), and kept as engine events (a struct, its quote, an
int object for each large field) they were what grew most with the days after the minute
marks. :class:`FillRows` keeps them as ``util.introws`` rows and reads each back as the
same ``engine.events.Fill`` (equal field for field, quote included); :class:`EntryFills`
is one entry's fills in a store, read through it, so an entry's stats keep no copy.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from arena_tui.util.introws import IntRows
from engine import events as ev

_WIDTH = 18
_LOW = (1 << 64) - 1


def _signed(u: int) -> int:
    return u - (1 << 64) if u >= 1 << 63 else u


class FillRows(IntRows[ev.Fill]):
    """Fills in the order added (``append``), kept flat; read back as ``ev.Fill``."""

    __slots__ = ("_idx", "_names")

    def __init__(self) -> None:
        self._names: list[str] = []
        self._idx: dict[str, int] = {}
        super().__init__(_WIDTH, self._fill)

    def entry_index(self, entry: str) -> int:
        k = self._idx.get(entry)
        if k is None:
            k = self._idx[entry] = len(self._names)
            self._names.append(entry)
        return k

    def append(self, f: ev.Fill) -> None:
        q = f.quote
        if q is None:
            quote: tuple[int, ...] = (0, 0, 0, 0, 0, 0)
        elif type(q) is ev.BookQuote:
            quote = (1, q.time, q.level, q.px, q.sz, q.n)
        else:
            assert isinstance(q, ev.PrintQuote)
            quote = (2, q.tid, q.time, q.px, q.sz, 0)
        cloid = f.cloid  # up to 128 bits: two signed 64-bit halves (exact for any int)
        hi, lo = cloid >> 64, _signed(cloid & _LOW)
        self.add(
            (f.t, self.entry_index(f.entry), f.oid, hi, lo, f.asset, int(f.is_buy), f.px, f.sz,
             int(f.taker), f.venue_fee, f.exec_fee, *quote)
        )  # fmt: skip

    def _fill(self, r: Sequence[int]) -> ev.Fill:
        kind = r[12]
        quote: ev.Quote | None
        if kind == 1:
            quote = ev.BookQuote(time=r[13], level=r[14], px=r[15], sz=r[16], n=r[17])
        elif kind == 2:
            quote = ev.PrintQuote(tid=r[13], time=r[14], px=r[15], sz=r[16])
        else:
            quote = None
        return ev.Fill(
            t=r[0],
            entry=self._names[r[1]],
            oid=r[2],
            cloid=(r[3] << 64) | (r[4] & _LOW),
            asset=r[5],
            is_buy=bool(r[6]),
            px=r[7],
            sz=r[8],
            taker=bool(r[9]),
            venue_fee=r[10],
            exec_fee=r[11],
            quote=quote,
        )

    def rows_of(self, entry: str) -> Iterator[int]:
        """The row numbers of ``entry``'s fills, in order."""
        k = self._idx.get(entry)
        if k is None:
            return
        data, w = self._data, self._width
        for i in range(len(self)):
            if data[i * w + 1] == k:
                yield i

    def of(self, entry: str) -> EntryFills:
        return EntryFills(self, entry)


class EntryFills(Sequence[ev.Fill]):
    """``entry``'s fills in ``store``, in order, read through it (nothing kept here)."""

    __slots__ = ("entry", "store")

    def __init__(self, store: FillRows, entry: str) -> None:
        self.store = store
        self.entry = entry

    def __len__(self) -> int:
        return sum(1 for _ in self.store.rows_of(self.entry))

    def __iter__(self) -> Iterator[ev.Fill]:
        store = self.store
        for i in store.rows_of(self.entry):
            yield store[i]

    def __getitem__(self, i: Any) -> Any:
        return list(self)[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]
