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
)
from arena_tui.logs.levelscan import levels_e8
from engine.inputs import AssetCtx, Book, Ctx, Level, Line, Trade
from engine.units import parse_e8, parse_fraction

_LEVELS = msgspec.json.Decoder(tuple[list[Level], list[Level]])
_LEVELS_OUT = msgspec.json.Encoder()
_WHITESPACE = re.compile(rb"[ \t\r\n]")  # JSON's insignificant whitespace
_SIDES = {"": SIDE_NONE, "B": SIDE_B, "A": SIDE_A}


UNREAD: Any = object()  # ``Columns.add``'s ``read`` for a book whose levels were not read


class Unfit(Exception):
    """A market line that fails a check or does not fit the columns."""


class Columns:
    """The columns of one day, built a line at a time (``add``), then ``sections``."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}  # coin -> index
        self.failed: set[str] = set()  # coins some market line of which is unfit
        self._strings: dict[str, int] = {}
        self.cols = {name: array(code) for name, code in SECTIONS if name != "off"}
        self.cols["tr_start"].append(0)
        names = ("p_t", "p_coin", "p_time", "p_tid", "p_px", "p_sz", "p_side")
        self._print_appends = tuple(self.cols[name].append for name in names)
        self._flat = {name: array("q") for name in ("b_px", "b_sz", "b_n")}
        self._alt = bytearray()
        self.width = 0
        self._rows = (0, 0, 0)  # books, trades messages, contexts kept

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
        cols = self.cols
        kind, coin, row = cols["kind"].append, cols["coin"].append, cols["row"].append
        reads = [UNREAD] * len(lines) if read is None else read
        for raw, line, got in zip(raws, lines, reads, strict=True):
            hl = line.hl
            if hl is None:
                kind(KIND_OTHER)
                coin(-1)
                row(-1)
            elif type(hl) is Book:
                kind(KIND_BOOK)
                coin(self.coin_id(hl.data.coin))
                row(self._book(hl, raw, base, line.arena is None, got))
            elif type(hl) is AssetCtx:
                ctx = hl.data.ctx
                full = ctx.funding is not None and ctx.markPx is not None
                kind(KIND_CTX if full and ctx.oraclePx is not None else KIND_CTX_PART)
                coin(self.coin_id(hl.data.coin))
                row(self._ctx(hl.data.coin, ctx, line.arena is None))
            else:
                kind(KIND_TRADES)
                prints: list[Trade] = hl.data  # type: ignore[assignment]
                coin(self._trades_coin(prints))
                row(self._trades(prints, line.t, line.arena is None))
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

    def _book(self, hl: Book, raw: bytes, base: int, alone: bool, got: Any) -> int:
        data = hl.data
        levels = bytes(data.levels)
        fast = (levels_e8(levels) if got is UNREAD else got) if alone else None
        if fast is not None:  # the form Hyperliquid sends: numbers cut out of the bytes
            pxs, szs, ns, bids = fast
            asks = len(ns) - bids
        try:
            if not alone:
                raise Unfit("a line with arena too")
            if fast is None:  # any other form: the full decode judges it
                sides = _LEVELS.decode(levels)
                every = [lv for side in sides for lv in side]
                pxs = [parse_e8(lv.px) for lv in every]
                szs = [parse_e8(lv.sz) for lv in every]
                ns = [lv.n for lv in every]
                bids, asks = len(sides[0]), len(sides[1])
            px, sz, n = self._flat["b_px"], self._flat["b_sz"], self._flat["b_n"]
            mark = (len(px), len(sz), len(n))
            try:
                _append(px, pxs)
                _append(sz, szs)
                _append(n, ns)
                self.cols["b_time"].append(data.time)
            except OverflowError:
                del px[mark[0] :], sz[mark[1] :], n[mark[2] :]
                raise
        except (msgspec.DecodeError, ValueError, OverflowError, Unfit):
            self.failed.add(data.coin)
            return -1
        self.width = max(self.width, bids, asks)
        self.cols["b_nlev"].extend((bids, asks))
        if fast is not None or _WHITESPACE.search(levels) is None:  # the fast form has none
            at = _found(raw, levels)  # the levels are a part of the line: found
            self.cols["b_lv"].extend((base + at, len(levels)))
        else:  # kept whitespace-free: the engine trusts a cached book's form
            canonical = _LEVELS_OUT.encode(sides)
            self.cols["b_lv"].extend((-1 - len(self._alt), len(canonical)))
            self._alt += canonical
        books, trades, ctxs = self._rows
        self._rows = (books + 1, trades, ctxs)
        return books

    def _trades(self, prints: list[Trade], t: int, alone: bool) -> int:
        cols = self.cols
        checked: list[tuple[Trade, int, int]] = []
        try:
            if not alone:
                raise Unfit("a line with arena too")
            for tr in prints:  # (an e8 past int64 too: its coin unchecked, the cache kept)
                px, sz = parse_e8(tr.px), parse_e8(tr.sz)
                _check_int64(tr.time, tr.tid, px, sz)
                checked.append((tr, px, sz))
        except (ValueError, OverflowError, Unfit):
            self.failed.update(tr.coin for tr in prints)
            return -1
        text, coin_id = self.text, self.coin_id
        p_t, p_coin, p_time, p_tid, p_px, p_sz, p_side = self._print_appends
        p_str = cols["p_str"].extend
        for tr, px, sz in checked:
            p_t(t)
            p_coin(coin_id(tr.coin))
            p_time(tr.time)
            p_tid(tr.tid)
            p_px(px)
            p_sz(sz)
            p_side(_SIDES.get(tr.side, SIDE_OTHER))
            p_str((text(tr.px), text(tr.sz), text(tr.side)))
        cols["tr_start"].append(len(cols["p_t"]))
        books, trades, ctxs = self._rows
        self._rows = (books, trades + 1, ctxs)
        return trades

    def _ctx(self, coin: str, ctx: Ctx, alone: bool) -> int:
        try:
            if not alone:
                raise Unfit("a line with arena too")
            mark = NONE if ctx.markPx is None else parse_e8(ctx.markPx)
            oracle = NONE if ctx.oraclePx is None else parse_e8(ctx.oraclePx)
            fund = (0, 0) if ctx.funding is None else parse_fraction(ctx.funding)
            _check_int64(mark, oracle, *fund)
        except (ValueError, OverflowError, Unfit):
            self.failed.add(coin)
            return -1
        cols = self.cols
        texts = (ctx.funding, ctx.markPx, ctx.oraclePx)
        cols["c_str"].extend(-1 if s is None else self.text(s) for s in texts)
        cols["c_mark"].append(mark)
        cols["c_oracle"].append(oracle)
        cols["c_fund"].extend(fund)
        books, trades, ctxs = self._rows
        self._rows = (books, trades, ctxs + 1)
        return ctxs

    def sections(self) -> dict[str, memoryview]:
        """Every section but the line offsets and the blob, as bytes: views of the columns,
        not copies (hundreds of MB a day); add nothing while they are held. The levels are
        padded to the width: book k's side s is row ``2 k + s`` of ``width`` values."""
        out = {name: _bytes(col) for name, col in self.cols.items()}
        counts = np.frombuffer(self.cols["b_nlev"], dtype=np.int16).astype(np.int64)
        width = self.width
        if len(self._flat["b_n"]) == len(counts) * width:  # every side full: no padding
            out.update((name, _bytes(flat)) for name, flat in self._flat.items())
        else:
            filled = np.arange(width) < counts[:, None]
            for name, flat in self._flat.items():
                table = np.zeros((len(counts), width), dtype=np.int64)
                table[filled] = np.frombuffer(flat, dtype=np.int64) if flat else []
                out[name] = _bytes(table)
        out["alt"] = _bytes(self._alt)
        out["strings"] = _bytes(msgspec.msgpack.encode(list(self._strings)))
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


def _append(col: array[int], values: Sequence[int]) -> None:
    """``values`` at the end of ``col``: the scanner's int64 arrays copied whole (no item
    converted), the expressions' and the full decode's lists by ``fromlist`` (3x
    ``extend``'s speed from a list); OverflowError past int64."""
    if type(values) is list:
        col.fromlist(values)
    else:
        col.extend(values)


def _check_int64(*values: int) -> None:
    for v in values:
        if not -_INT64 <= v < _INT64:
            raise OverflowError("out of int64")
