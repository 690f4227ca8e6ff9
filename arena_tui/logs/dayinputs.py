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

    def line(self, i: int) -> Line:
        """Line i."""
        r = self.row[i]
        if r >= 0:
            kind = self.kind[i]
            if kind == KIND_BOOK:
                return self.book(r, self.t[i], self.coin[i])
            if kind == KIND_TRADES:
                return self.trades(r, self.t[i])
            return self.ctx(r, self.t[i], self.coin[i])
        off = self.offsets
        try:
            return LINE.decode(self.blob[off[i] : off[i + 1] - 1])
        except msgspec.DecodeError:
            return Line(t=self.t[i])

    def levels(self, r: int) -> bytes:
        """Book ``r``'s levels' bytes, whitespace-free."""
        off, length = self.b_lv[2 * r], self.b_lv[2 * r + 1]
        if off >= 0:
            return bytes(self.blob[off : off + length])
        off = -1 - off
        return bytes(self.alt[off : off + length])

    def book(self, r: int, t: int, coin: int) -> Line:
        data = BookData(coin=self.coins[coin], time=self.b_time[r], levels=Raw(self.levels(r)))
        return Line(t=t, hl=Book(data=data))

    def trades(self, r: int, t: int) -> Line:
        strings, coins, p_str = self.strings, self.coins, self.p_str
        p_coin, p_time, p_tid = self.p_coin, self.p_time, self.p_tid
        prints = []
        for j in range(self.tr_start[r], self.tr_start[r + 1]):
            k = 3 * j
            prints.append(
                Trade(
                    coin=coins[p_coin[j]],
                    px=strings[p_str[k]],
                    sz=strings[p_str[k + 1]],
                    time=p_time[j],
                    tid=p_tid[j],
                    side=strings[p_str[k + 2]],
                )
            )
        return Line(t=t, hl=Trades(data=prints))

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
