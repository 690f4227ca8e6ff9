"""The engine's inputs of a cached day, built from its columns: no JSON decoded.

Why this module exists: a warm pass (``run.daysource``) applies a cached day's books,
prints and asset contexts without decoding their lines. :class:`Inputs` builds the exact
``engine.inputs.Line`` the reader would have decoded from the columns ``logs.daycols``
wrote: a book's coin, times and levels (the levels' bytes as they are in the log, or
re-encoded without whitespace when the log had some), a print's or a context's texts from
the string table. A line the columns do not hold (arena inputs, ignored lines, market
data of a coin that failed a check) is decoded as before.
"""

from __future__ import annotations

import msgspec
from msgspec import Raw

from arena_tui.logs.dayformat import KIND_BOOK, KIND_TRADES, LINE
from engine.inputs import AssetCtx, Book, BookData, Ctx, CtxData, Line, Trade, Trades

PRINTS_BLOCK = 64  # prints made Python objects at once (few: fewer survive a GC)


class Inputs:
    """Lines of one mapped day, from its columns (``line``), or by kind and row."""

    def __init__(
        self,
        cols: dict[str, memoryview[int]],
        blob: memoryview[int],
        coins: tuple[str, ...],
        strings: list[str],
    ) -> None:
        """A mapped day's columns (``logs.dayformat.SECTIONS``), lines, coins, texts."""
        self.strings = strings
        self.coins = coins
        self.blob = blob
        self.t, self.kind, self.coin, self.row = cols["t"], cols["kind"], cols["coin"], cols["row"]
        self.offsets = cols["off"]
        self.alt = cols["alt"]
        self.b_time = cols["b_time"]
        self.b_lv = cols["b_lv"]
        self.tr_start = cols["tr_start"]
        self.p_coin = cols["p_coin"]
        self.p_time = cols["p_time"]
        self.p_tid = cols["p_tid"]
        self.p_str = cols["p_str"]
        self.c_str = cols["c_str"]
        self._first = 0  # the first print of the block made Python objects
        self._prints: list[Trade] = []

    def line(self, i: int) -> Line:
        """Line i."""
        return self.make(i, self.kind[i], self.t[i], self.coin[i])

    def make(self, i: int, kind: int, t: int, coin: int) -> Line:
        """Line i, whose kind, ``t`` and coin the caller read already."""
        r = self.row[i]
        if r >= 0:
            if kind == KIND_BOOK:
                return self.book(r, t, coin)
            if kind == KIND_TRADES:
                return self.trades(r, t)
            return self.ctx(r, t, coin)
        off = self.offsets
        try:
            return LINE.decode(self.blob[off[i] : off[i + 1] - 1])
        except msgspec.DecodeError:
            return Line(t=t)

    def levels(self, r: int) -> memoryview[int]:
        """Book ``r``'s levels' bytes, whitespace-free (a view of the mapping)."""
        off, length = self.b_lv[2 * r], self.b_lv[2 * r + 1]
        if off >= 0:
            return self.blob[off : off + length]
        off = -1 - off
        return self.alt[off : off + length]

    def book(self, r: int, t: int, coin: int) -> Line:
        """Book ``r`` (its levels not copied: the engine copies what it keeps)."""
        return Line(t, Book(BookData(self.coins[coin], self.b_time[r], Raw(self.levels(r)))))

    def trades(self, r: int, t: int) -> Line:
        """Trades message ``r``."""
        return Line(t, Trades(self.prints(r)))

    def prints(self, r: int) -> list[Trade]:
        """Trades message ``r``'s prints, from a block of prints made Python objects at
        once (the pass reads them in order; one block is kept at a time)."""
        start, end = self.tr_start[r], self.tr_start[r + 1]
        first = self._first
        if not first <= start or end > first + len(self._prints):
            first = self._block(start, end)
        return self._prints[start - first : end - first]

    def _block(self, start: int, end: int) -> int:
        """Prints ``start`` to at least ``end`` (and to ``PRINTS_BLOCK`` after ``start``)
        made ``Trade`` objects (immutable: a message's list is a slice of them); the
        block's first print."""
        stop = max(end, min(start + PRINTS_BLOCK, len(self.p_coin)))
        strings, coins = self.strings, self.coins
        texts = self.p_str[3 * start : 3 * stop].tolist()
        self._prints = list(
            map(
                Trade,
                map(coins.__getitem__, self.p_coin[start:stop].tolist()),
                map(strings.__getitem__, texts[0::3]),
                map(strings.__getitem__, texts[1::3]),
                self.p_time[start:stop].tolist(),
                self.p_tid[start:stop].tolist(),
                map(strings.__getitem__, texts[2::3]),
            )
        )
        self._first = start
        return start

    def ctx(self, r: int, t: int, coin: int) -> Line:
        strings, c_str = self.strings, self.c_str
        k = 3 * r
        f, m, o = c_str[k], c_str[k + 1], c_str[k + 2]
        ctx = Ctx(
            funding=None if f < 0 else strings[f],
            markPx=None if m < 0 else strings[m],
            oraclePx=None if o < 0 else strings[o],
        )
        return Line(t=t, hl=AssetCtx(data=CtxData(coin=self.coins[coin], ctx=ctx)))
