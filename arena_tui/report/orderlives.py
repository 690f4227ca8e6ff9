"""Every accepted order's life kept flat: 19 integers an order, updated in place.

Why this module exists: the collector follows each accepted order from its ``Accepted`` to
its ``Closed`` (report.html's order lives, ``arena export``'s orders table), and kept as an
object holding the engine's event (a struct, an int object for each large field) a day's
orders were the largest thing a backtest kept after the fills. :class:`OrderLives` keeps
them as ``util.introws`` rows (a field updated in place as the order lives), the reasons
and notes each kept once, and reads an order back as the same ``runrows.OrderLife``.
"""

from __future__ import annotations

from arena_tui.report.runmodel import OrderRow
from arena_tui.report.runrows import OrderLife
from arena_tui.util.introws import NONE, IntRows, unopt
from engine import events as ev
from engine import format_cloid

_LOW = (1 << 64) - 1
# the fields of a row
_T, _ENTRY, _OID, _CLOID_HI, _CLOID_LO, _ASSET, _BUY, _PX, _SZ, _REDUCE, _TIF = range(11)
_RESERVE, _ACT_AT, _ACTIVATED, _CANCEL, _CLOSED, _REASON, _FILLED, _NOTE = range(11, 19)
_WIDTH = 19


class Words:
    """Strings kept once each, by number (entries, close reasons, notes)."""

    __slots__ = ("_of", "words")

    def __init__(self) -> None:
        self.words: list[str] = []
        self._of: dict[str, int] = {}

    def number(self, word: str | None) -> int:
        if word is None:
            return NONE
        k = self._of.get(word)
        if k is None:
            k = self._of[word] = len(self.words)
            self.words.append(word)
        return k

    def word(self, k: int) -> str | None:
        return None if k == NONE else self.words[k]


class OrderLives:
    """Accepted orders in the order accepted; ``life(row)`` reads one back."""

    __slots__ = ("_rows", "_words")

    def __init__(self) -> None:
        self._rows: IntRows[tuple[int, ...]] = IntRows(_WIDTH, tuple)
        self._words = Words()

    def __len__(self) -> int:
        return len(self._rows)

    def accepted(self, a: ev.Accepted, note: str | None) -> int:
        """A new life from its ``Accepted`` (and its order's note); its row number."""
        w = self._words.number
        cloid = a.cloid  # up to 128 bits: two signed 64-bit halves (exact for any int)
        lo = cloid & _LOW
        self._rows.add(
            (a.t, w(a.entry), a.oid, cloid >> 64, lo - (1 << 64) if lo >= 1 << 63 else lo,
             a.asset, int(a.is_buy), a.limit_px, a.sz, int(a.reduce_only), a.tif, a.reserve,
             a.activates_at, NONE, NONE, NONE, NONE, 0, w(note))
        )  # fmt: skip
        return len(self._rows) - 1

    def filled(self, row: int, sz: int) -> None:
        self._rows.set(row, _FILLED, self._rows.field(row, _FILLED) + sz)

    def activated(self, row: int, t: int) -> None:
        self._rows.set(row, _ACTIVATED, t)

    def cancel_pending(self, row: int, t: int) -> None:
        self._rows.set(row, _CANCEL, t)

    def closed(self, row: int, t: int, reason: str, filled: int) -> None:
        self._rows.set(row, _CLOSED, t)
        self._rows.set(row, _REASON, self._words.number(reason))
        self._rows.set(row, _FILLED, filled)

    def note(self, row: int) -> str | None:
        return self._words.word(self._rows.field(row, _NOTE))

    def order_row(self, row: int, coin_of: dict[int, str]) -> OrderRow:
        """The order at ``row`` as the run data keeps it (straight from its integers: the
        report reads every order two or three times, and ``life``'s event is not needed)."""
        r = self._rows[row]
        word = self._words.word
        entry = word(r[_ENTRY])
        assert entry is not None
        cloid = (r[_CLOID_HI] << 64) | (r[_CLOID_LO] & _LOW)
        asset = r[_ASSET]
        return OrderRow(
            entry,
            r[_OID],
            format_cloid(cloid),
            coin_of.get(asset, str(asset)),
            bool(r[_BUY]),
            r[_PX],
            r[_SZ],
            r[_TIF],
            bool(r[_REDUCE]),
            r[_T],
            "accepted",
            None,
            r[_RESERVE],
            r[_ACT_AT],
            unopt(r[_ACTIVATED]),
            unopt(r[_CANCEL]),
            unopt(r[_CLOSED]),
            word(r[_REASON]),
            r[_FILLED],
            word(r[_NOTE]),
        )

    def life(self, row: int) -> OrderLife:
        r = self._rows[row]
        word = self._words.word
        entry = word(r[_ENTRY])
        assert entry is not None
        first = ev.Accepted(
            t=r[_T],
            entry=entry,
            oid=r[_OID],
            cloid=(r[_CLOID_HI] << 64) | (r[_CLOID_LO] & _LOW),
            asset=r[_ASSET],
            is_buy=bool(r[_BUY]),
            limit_px=r[_PX],
            sz=r[_SZ],
            reduce_only=bool(r[_REDUCE]),
            tif=r[_TIF],
            reserve=r[_RESERVE],
            activates_at=r[_ACT_AT],
        )
        o = OrderLife(first, word(r[_NOTE]))
        o.activated_t = unopt(r[_ACTIVATED])
        o.cancel_t = unopt(r[_CANCEL])
        o.closed_t = unopt(r[_CLOSED])
        o.close_reason = word(r[_REASON])
        o.filled = r[_FILLED]
        return o
