"""A day's market data as columns: checked once, when its cache is written.

Why this module exists: a day read again should not decode or check a single market line
again. While a day cache is written (``logs.daywrite``), every book, print and asset
context is checked here as the engine would check it (each level's price and size a
decimal, its ``n`` an integer; each print's price and size; each context's mark, oracle
and funding) and kept as integer columns (e8 prices and sizes, a book's levels at a fixed
width), with the exact texts the engine's inputs carry in a string table, so a warm pass
builds the very same ``engine.inputs.Line`` from them (``logs.dayread``) without a JSON
decode. A coin any of whose market data fails a check, or does not fit the columns, is
not *checked*: its lines are decoded as they are (and a season trading it reads the log).
docs/log-format.md ("The day cache") is the format.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import msgspec
import numpy as np

from arena_tui.logs.dayformat import (
    KIND_BOOK,
    KIND_CTX,
    KIND_CTX_PART,
    KIND_OTHER,
    KIND_TRADES,
    NONE,
    SECTIONS,
    SIDE_A,
    SIDE_B,
    SIDE_NONE,
    SIDE_OTHER,
    UNREAD,
)
from arena_tui.logs.levelscan import levels_e8
from arena_tui.util.twins import compiled_twin
from engine.inputs import AssetCtx, Book, BookData, Ctx, Level, Line, Trade
from engine.units import parse_e8, parse_fraction

_LEVELS = msgspec.json.Decoder(tuple[list[Level], list[Level]])
_LEVELS_OUT = msgspec.json.Encoder()
_WHITESPACE = re.compile(rb"[ \t\r\n]")  # JSON's insignificant whitespace
_SIDES = {"": SIDE_NONE, "B": SIDE_B, "A": SIDE_A}
_NO_ROW = -1
_NOT_COLS = ("off", "t", "alt", "strings")  # the sections that are not a ``Col``


class Unfit(Exception):
    """A market line that fails a check or does not fit the columns."""


_RANGE = {"q": (-(1 << 63), (1 << 63) - 1), "i": (-(1 << 31), (1 << 31) - 1)}
_RANGE.update(h=(-(1 << 15), (1 << 15) - 1), B=(0, 255))
_DTYPE = {"q": np.int64, "i": np.int32, "h": np.int16, "B": np.uint8}
_ROOM = 1024  # a column's first piece, in values; each next one twice that, up to _PIECE
_PIECE = 1 << 17  # values a piece (1 MiB)


class Col:
    """One column as it is built: int64 values in pieces that never move (compiled, stored
    through a typed view of the last: not appended through ``array``'s argument parser,
    most of a line's cost before, nor grown by ``realloc``, whose copies left a day's
    import ~60 MB larger), each held to its section's C type (``OverflowError`` past it, as
    ``array`` raised); ``pieces`` are the section's bytes."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.lo, self.hi = _RANGE[code]
        self.n = 0  # values in all
        self.k = 0  # values in the last piece
        self.cap = _ROOM  # the last piece's room
        self.full: list[array[int]] = []  # the pieces before it, full
        self.a = array("q", bytes(8 * _ROOM))
        self.v: array[int] | None = self.a  # (compiled: the typed view of ``a``)

    def __len__(self) -> int:
        return self.n

    def push(self, value: int) -> int:
        if value < self.lo or value > self.hi:
            raise OverflowError(f"{value} does not fit the column")
        if self.k == self.cap:
            self._next()
        self.v[self.k] = value  # type: ignore[index]  # (None only inside ``_next``)
        self.k += 1
        self.n += 1
        return 0

    def push_many(self, values: Sequence[int]) -> int:
        """int64 values (an ``array("q")`` copied whole, or a list) at the end."""
        m = len(values)
        src = values if type(values) is array else array("q", values)
        at = 0
        while at < m:
            if self.k == self.cap:
                self._next()
            take = min(m - at, self.cap - self.k)
            self.a[self.k : self.k + take] = src if take == m else src[at : at + take]
            self.k += take
            self.n += take
            at += take
        return 0

    def _next(self) -> int:
        self.v = None  # (compiled: the typed view lets go of the full piece)
        self.full.append(self.a)
        self.cap = min(2 * self.cap, _PIECE)
        self.a = array("q", bytes(8 * self.cap))
        self.v = self.a
        self.k = 0
        return 0

    def truncate(self, n: int) -> int:
        """Keep the first ``n`` values."""
        while self.n - self.k > n:  # (n falls in a piece before the last: it goes)
            self.v = None
            self.n -= self.k
            self.a = self.full.pop()
            self.v = self.a
            self.cap = self.k = len(self.a)
        self.k -= self.n - n
        self.n = n
        return 0

    def pieces(self) -> list[Any]:
        """The values as the section holds them, in pieces: views of them when int64,
        else a copy in the section's type."""
        if self.code != "q":
            return [self.int64s().astype(_DTYPE[self.code])]
        last = memoryview(self.a).cast("B")[: 8 * self.k]
        return [*(memoryview(p).cast("B") for p in self.full), last]

    def int64s(self) -> Any:
        """The values as one int64 numpy array (a copy when in more than one piece)."""
        last = np.frombuffer(self.a, np.int64, self.k)
        if not self.full:
            return last
        return np.concatenate([*(np.frombuffer(p, np.int64) for p in self.full), last])


class DayColumns:
    """The columns of one day, built a chunk of lines at a time (``add``), then
    ``sections``. Each column is an attribute of its own (compiled, a C field: no lookup by
    name a line); ``t`` is the line times' array, which the cache's writer fills."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}  # coin -> index
        self.failed: set[str] = set()  # coins some market line of which is unfit
        self._strings: dict[str, int] = {}
        self.t = array("q")
        cols = {name: Col(code) for name, code in SECTIONS if name not in _NOT_COLS}
        cols["tr_start"].push(0)
        self.cols = cols
        self._kind, self._coin, self._row = cols["kind"], cols["coin"], cols["row"]
        self._b_time, self._b_nlev, self._b_lv = cols["b_time"], cols["b_nlev"], cols["b_lv"]
        self._tr_start = cols["tr_start"]
        self._p_t, self._p_coin, self._p_time = cols["p_t"], cols["p_coin"], cols["p_time"]
        self._p_tid, self._p_px, self._p_sz = cols["p_tid"], cols["p_px"], cols["p_sz"]
        self._p_side, self._p_str = cols["p_side"], cols["p_str"]
        self._c_str, self._c_mark = cols["c_str"], cols["c_mark"]
        self._c_oracle, self._c_fund = cols["c_oracle"], cols["c_fund"]
        # a book's levels, unpadded (padded to the width in ``sections``)
        self._b_px, self._b_sz, self._b_n = cols["b_px"], cols["b_sz"], cols["b_n"]
        self._alt = bytearray()
        self.width = 0
        self._books = self._trades = self._ctxs = 0  # rows kept

    def coin_id(self, name: str) -> int:
        index = self.ids.get(name)
        if index is None:
            index = self.ids[name] = len(self.ids)
        return index

    def text(self, value: str) -> int:
        index = self._strings.get(value)
        if index is None:
            index = self._strings[value] = len(self._strings)
        return index

    def add(
        self, raws: list[bytes], lines: list[Line], base: int, read: list[Any] | None = None
    ) -> None:
        """A chunk of inputs, their bytes and decoded lines; ``base``: the blob offset of
        the first; ``read``: for each line, what a check already read of a book's levels
        (``levels_e8``'s answer: None when not in the fast form; anything for another
        line), or None: they are read here. Appends each line's kind, coin and row."""
        n = len(lines)
        reads = [UNREAD] * n if read is None else read
        if len(raws) != n or len(reads) != n:
            raise ValueError("add: raws, lines and read differ in length")
        for i in range(n):
            raw: bytes = raws[i]
            line = lines[i]
            hl = line.hl
            alone = line.arena is None
            if hl is None:
                self._kind.push(KIND_OTHER)
                self._coin.push(-1)
                self._row.push(_NO_ROW)
            elif type(hl) is Book:
                data = hl.data
                self._kind.push(KIND_BOOK)
                self._coin.push(self.coin_id(data.coin))
                self._row.push(self._book(data, raw, base, alone, reads[i]))
            elif type(hl) is AssetCtx:
                ctx = hl.data.ctx
                full = ctx.funding is not None and ctx.markPx is not None
                self._kind.push(KIND_CTX if full and ctx.oraclePx is not None else KIND_CTX_PART)
                self._coin.push(self.coin_id(hl.data.coin))
                self._row.push(self._ctx(hl.data.coin, ctx, alone))
            else:
                prints: list[Trade] = hl.data  # type: ignore[assignment]
                self._kind.push(KIND_TRADES)
                self._coin.push(self._trades_coin(prints))
                self._row.push(self._trades_of(prints, line.t, alone))
            base += len(raw) + 1

    def _trades_coin(self, prints: list[Trade]) -> int:
        """The coin of a trades message's prints; -1 if none or of more than one coin
        (every print's coin goes into the coin table all the same)."""
        coin = -2
        for tr in prints:
            c = self.coin_id(tr.coin)
            if coin == -2:
                coin = c
            elif c != coin:
                coin = -1
        return -1 if coin == -2 else coin

    def _book(self, data: BookData, raw: bytes, base: int, alone: bool, got: Any) -> int:
        levels = bytes(data.levels)
        fast = (levels_e8(levels) if got is UNREAD else got) if alone else None
        if fast is None:  # any other form (or a line with arena too): the reference
            return self._book_slow(data, raw, base, alone, levels)
        pxs, szs, ns, bids = fast  # the form Hyperliquid sends: numbers cut from the bytes
        if not self._levels(data, pxs, szs, ns):
            return _NO_ROW
        self._sides(bids, len(ns) - bids)
        return self._kept(base + _found(raw, levels), len(levels))  # (a part of the line)

    def _book_slow(self, data: BookData, raw: bytes, base: int, alone: bool, levels: bytes) -> int:
        """A book not in the fast form: the full decode judges it; kept whitespace-free."""
        try:
            if not alone:
                raise Unfit("a line with arena too")
            sides = _LEVELS.decode(levels)
            every = [lv for side in sides for lv in side]
            pxs = [parse_e8(lv.px) for lv in every]
            szs = [parse_e8(lv.sz) for lv in every]
            ns = [lv.n for lv in every]
        except (msgspec.DecodeError, ValueError, OverflowError, Unfit):
            self.failed.add(data.coin)
            return _NO_ROW
        if not self._levels(data, pxs, szs, ns):
            return _NO_ROW
        self._sides(len(sides[0]), len(sides[1]))
        if _WHITESPACE.search(levels) is None:  # the levels are a part of the line: found
            return self._kept(base + _found(raw, levels), len(levels))
        # kept whitespace-free: the engine trusts a cached book's form
        canonical = _LEVELS_OUT.encode(sides)
        row = self._kept(-1 - len(self._alt), len(canonical))
        self._alt += canonical
        return row

    def _kept(self, at: int, length: int) -> int:
        """A kept book's levels' place (``at`` in the blob; ``-1 - offset`` in ``alt``) and
        length; its row."""
        self._b_lv.push(at)
        self._b_lv.push(length)
        self._books += 1
        return self._books - 1

    def _levels(
        self, data: BookData, pxs: Sequence[int], szs: Sequence[int], ns: Sequence[int]
    ) -> bool:
        """A book's numbers and time at the end of their columns; False (none kept, its
        coin unchecked) when one is past int64."""
        px, sz, n = self._b_px, self._b_sz, self._b_n
        mark = px.n
        try:
            px.push_many(pxs)
            sz.push_many(szs)
            n.push_many(ns)
            self._b_time.push(data.time)
        except OverflowError:
            px.truncate(mark)  # (the three hold one value a level)
            sz.truncate(mark)
            n.truncate(mark)
            self.failed.add(data.coin)
            return False
        return True

    def _sides(self, bids: int, asks: int) -> int:
        self.width = max(self.width, bids, asks)
        self._b_nlev.push(bids)
        self._b_nlev.push(asks)
        return 0

    def _trades_of(self, prints: list[Trade], t: int, alone: bool) -> int:
        if not alone:
            self.failed.update(tr.coin for tr in prints)
            return _NO_ROW
        e8s: list[int] = []
        for tr in prints:  # (an e8 past int64 too: its coin unchecked, the cache kept)
            try:
                px, sz = parse_e8(tr.px), parse_e8(tr.sz)
                fit = _fits(tr.time) and _fits(tr.tid) and _fits(px) and _fits(sz)
            except ValueError:
                fit = False
            if not fit:
                self.failed.update(tr.coin for tr in prints)
                return _NO_ROW
            e8s.append(px)
            e8s.append(sz)
        k = 0
        for tr in prints:
            self._p_t.push(t)
            self._p_coin.push(self.coin_id(tr.coin))
            self._p_time.push(tr.time)
            self._p_tid.push(tr.tid)
            self._p_px.push(e8s[k])
            self._p_sz.push(e8s[k + 1])
            k += 2
            self._p_side.push(_SIDES.get(tr.side, SIDE_OTHER))
            self._p_str.push(self.text(tr.px))
            self._p_str.push(self.text(tr.sz))
            self._p_str.push(self.text(tr.side))
        self._tr_start.push(self._p_t.n)
        self._trades += 1
        return self._trades - 1

    def _ctx(self, coin: str, ctx: Ctx, alone: bool) -> int:
        try:
            if not alone:
                raise Unfit("a line with arena too")
            mark = NONE if ctx.markPx is None else parse_e8(ctx.markPx)
            oracle = NONE if ctx.oraclePx is None else parse_e8(ctx.oraclePx)
            num, den = (0, 0) if ctx.funding is None else parse_fraction(ctx.funding)
        except (ValueError, Unfit):
            self.failed.add(coin)
            return _NO_ROW
        if not (_fits(mark) and _fits(oracle) and _fits(num) and _fits(den)):
            self.failed.add(coin)
            return _NO_ROW
        for s in (ctx.funding, ctx.markPx, ctx.oraclePx):
            self._c_str.push(-1 if s is None else self.text(s))
        self._c_mark.push(mark)
        self._c_oracle.push(oracle)
        self._c_fund.push(num)
        self._c_fund.push(den)
        self._ctxs += 1
        return self._ctxs - 1

    def sections(self) -> dict[str, list[memoryview]]:
        """Every section but the line offsets and the blob, as bytes in pieces (a column's
        pieces as it holds them, written one after another): views of the columns where
        they can be (hundreds of MB a day); add nothing while they are held. The levels are
        padded to the width: book k's side s is row ``2 k + s`` of ``width`` values."""
        out = {name: [_bytes(p) for p in col.pieces()] for name, col in self.cols.items()}
        out["t"] = [_bytes(self.t)]
        counts = self._b_nlev.int64s()
        width = self.width
        levels = (("b_px", self._b_px), ("b_sz", self._b_sz), ("b_n", self._b_n))
        if self._b_n.n != len(counts) * width:  # a side not full: padded
            filled = np.arange(width) < counts[:, None]
            for name, col in levels:
                table = np.zeros((len(counts), width), dtype=np.int64)
                table[filled] = col.int64s()
                out[name] = [_bytes(table)]
        out["alt"] = [_bytes(self._alt)]
        out["strings"] = [_bytes(msgspec.msgpack.encode(list(self._strings)))]
        return out


def _bytes(buffer: Any) -> memoryview:
    """``buffer``'s bytes, as a view (no copy)."""
    return memoryview(buffer).cast("B")


_INT64 = 1 << 63
_PREFIX = 16


def _found(raw: bytes, part: bytes) -> int:
    """``raw.find(part)``, for a long ``part`` met early in ``raw``: a search for a long
    needle first reads all of it (about a microsecond for a book), so its first bytes are
    searched for, and the whole compared where they are."""
    head = part[:_PREFIX]
    at = raw.find(head)
    while at >= 0 and not raw.startswith(part, at):
        at = raw.find(head, at + 1)
    return at


def _fits(value: int) -> bool:
    """``value`` fits a column's int64."""
    return -_INT64 <= value < _INT64


def _compiled() -> bool:
    """True when this module runs compiled: its functions are then not Python functions."""
    return type(_compiled).__name__ != "function"


def _compiled_twin() -> ModuleType | None:
    """This module compiled by setup.py (``arena_tui.logs._daycols``), when built from this
    source (``util.twins``)."""
    return compiled_twin(__file__, "arena_tui.logs", "_daycols")


# What the day cache's writer builds with: the compiled columns when this module's build is
# current, else this source. ``BUILDER`` says which.
Columns: type[DayColumns] = DayColumns
BUILDER = "compiled" if _compiled() else "python"
if not _compiled() and (_twin := _compiled_twin()) is not None:
    Columns, BUILDER = _twin.DayColumns, "compiled"
