"""A book's levels: checked in full on arrival, turned into integers only as deep as read.

Why this module exists: every ``l2Book`` of a season coin must be refused at its own line
when a known field is malformed (a level's price or size that is not a decimal string, an
``n`` that is not an integer), whoever reads it later; but nearly every book is read by
nobody, or only at its top. So a book is checked once, by one C-speed regular expression
over its raw bytes in the form Hyperliquid sends (``{"px":..,"sz":..,"n":..}``, either key
order seen in recordings), with the full msgspec decode as the judge for any other form;
and its levels become ``Level`` objects and integers only when someone asks. The engine
(for a mid, an activation) and a backtest's strategies (``arena_tui.run.market.Book``) read
the same :class:`BookLevels`, so no book is decoded twice.

May not touch: files, clocks, floats.
"""

from __future__ import annotations

import re

import msgspec

from engine.inputs import BookData, Level, MalformedInput
from engine.units import parse_e8, tdiv

_LEVELS = msgspec.json.Decoder(tuple[list[Level], list[Level]])

# What the fast check accepts is a subset of what the full decode accepts: JSON with no
# spaces or escapes, three keys in one of two orders, decimal strings, an integer n within
# int64. Anything else (valid or not) is judged by the full decode, which names the fault.
_DEC = rb'"-?[0-9]++(?:\.[0-9]++)?+"'
_INT = rb"-?+(?:0|[1-9][0-9]{0,17}+)"
_PX_SZ_N = rb'\{"px":' + _DEC + rb',"sz":' + _DEC + rb',"n":' + _INT + rb"\}"
_N_PX_SZ = rb'\{"n":' + _INT + rb',"px":' + _DEC + rb',"sz":' + _DEC + rb"\}"


def _book_form(level: bytes) -> re.Pattern[bytes]:
    side = rb"\[(?:" + level + rb"(?:," + level + rb")*+)?+\]"
    return re.compile(rb"\[" + side + rb"," + side + rb"\]")


_FAST = (_book_form(_PX_SZ_N).fullmatch, _book_form(_N_PX_SZ).fullmatch)
_WHITESPACE = re.compile(rb"[ \t\r\n]")  # JSON's insignificant whitespace
# ``checked`` for a book checked in full before whose levels are known to hold no
# whitespace (a day cache's columns, ``Engine.trust_books(whitespace_free=True)``)
WHITESPACE_FREE = 2


def decode_levels(raw: bytes) -> tuple[list[Level], list[Level]]:
    """A book's two sides (bids best first, asks best first) as ``Level`` objects."""
    try:
        return _LEVELS.decode(raw)
    except msgspec.ValidationError as exc:
        raise MalformedInput(f"bad l2Book levels: {exc}") from None


def level_px(level: Level) -> int:
    try:
        return parse_e8(level.px)
    except ValueError as exc:
        raise MalformedInput(f"l2Book level px: {exc}") from None


def level_sz(level: Level) -> int:
    try:
        return parse_e8(level.sz)
    except ValueError as exc:
        raise MalformedInput(f"l2Book level sz: {exc}") from None


class BookLevels:
    """One applied ``l2Book``: checked; its levels decoded and converted on first use.

    ``t``: receive time; ``time``: exchange time; ``two_sided``: neither side is empty (a
    book with an empty side sets no mid).
    """

    __slots__ = ("_ints", "_raw", "_sides", "coin", "t", "time", "two_sided")

    def __init__(self, data: BookData, t: int, checked: bool | int = False) -> None:
        """Check every level of ``data``; MalformedInput names the first bad field.

        ``checked``: the line was checked in full before (a day cache is built only from
        lines that passed): only a whitespace-free form skips the check and decode;
        ``WHITESPACE_FREE``: the caller knows the form is whitespace-free."""
        raw = bytes(data.levels)
        self._raw = raw
        self._sides: tuple[list[Level], list[Level]] | None = None
        self._ints: tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]] | None = None
        self.coin = data.coin
        self.t = t
        self.time = data.time
        if checked == WHITESPACE_FREE or (checked and not _WHITESPACE.search(raw)):
            self.two_sided = not raw.startswith(b"[[]") and not raw.endswith(b"[]]")
            return
        if _FAST[0](raw) is not None or _FAST[1](raw) is not None:
            # the fast form has no spaces: an empty side is exactly "[]" at either end
            self.two_sided = not raw.startswith(b"[[]") and not raw.endswith(b"[]]")
            return
        sides = decode_levels(raw)
        for i, side in enumerate(sides):
            for j, level in enumerate(side):
                for name, text in (("px", level.px), ("sz", level.sz)):
                    try:
                        parse_e8(text)
                    except ValueError as exc:
                        raise MalformedInput(f"l2Book levels[{i}][{j}].{name}: {exc}") from None
        self._sides = sides
        self.two_sided = bool(sides[0]) and bool(sides[1])

    def sides(self) -> tuple[list[Level], list[Level]]:
        """Both sides as ``Level`` objects (decoded once, then kept)."""
        sides = self._sides
        if sides is None:
            sides = self._sides = decode_levels(self._raw)
        return sides

    def ints(self) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """Both sides as ``(px_e8, sz_e8, n)``, best first (converted once, then kept)."""
        ints = self._ints
        if ints is None:
            bids, asks = self.sides()
            ints = self._ints = (
                [(parse_e8(lv.px), parse_e8(lv.sz), lv.n) for lv in bids],
                [(parse_e8(lv.px), parse_e8(lv.sz), lv.n) for lv in asks],
            )
        return ints

    def best_px(self, side: int) -> int | None:
        """The best price of ``side`` (0 bids, 1 asks) in e8; None when that side is empty."""
        if self._ints is not None:
            levels = self._ints[side]
            return levels[0][0] if levels else None
        top = self.sides()[side]
        return parse_e8(top[0].px) if top else None

    def mid(self) -> int | None:
        """``tdiv(best_bid + best_ask, 2)``; None when a side is empty."""
        bid, ask = self.best_px(0), self.best_px(1)
        return None if bid is None or ask is None else tdiv(bid + ask, 2)

    def raw(self) -> bytes:
        """The levels' bytes as logged (a snapshot keeps them)."""
        return self._raw
