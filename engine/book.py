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
# each side's levels skimmed as raw bytes (not made objects), for the top of the book alone
_SKIMMED = msgspec.json.Decoder(tuple[list[msgspec.Raw], list[msgspec.Raw]])
_LEVEL = msgspec.json.Decoder(Level)

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
# ``checked`` for a book checked in full before whose levels are known to hold no
# whitespace (a day cache's columns, ``Engine.trust_books(whitespace_free=True)``)
WHITESPACE_FREE = 2


def has_whitespace(raw: bytes) -> bool:
    """JSON's insignificant whitespace anywhere in ``raw`` (four C-speed byte searches)."""
    return b" " in raw or b"\n" in raw or b"\t" in raw or b"\r" in raw


# ---- the same check as a byte scanner, for the compiled engine -------------------------------
# Compiled (setup.py), this loop over the bytes is C and three times the regular expression's
# speed; run as Python it is far slower than the expression, so there the expression checks.
# It accepts exactly what _FAST accepts (tests/test_book_levels.py holds them to it).

_QUOTE, _MINUS, _DOT, _ZERO, _NINE, _ONE = 34, 45, 46, 48, 57, 49
_OPEN_PX, _SZ, _N = b'{"px":', b',"sz":', b',"n":'
_OPEN_N, _PX = b'{"n":', b',"px":'


def _literal(raw: bytes, i: int, n: int, lit: bytes) -> int:
    """The index after ``lit`` at ``raw[i:]``, or -1."""
    k = len(lit)
    if i + k > n:
        return -1
    for j in range(k):
        if raw[i + j] != lit[j]:
            return -1
    return i + k


def _decimal(raw: bytes, i: int, n: int) -> int:
    """The index after ``"-?[0-9]+(\\.[0-9]+)?"`` at ``raw[i:]``, or -1."""
    if i >= n or raw[i] != _QUOTE:
        return -1
    i += 1
    if i < n and raw[i] == _MINUS:
        i += 1
    start = i
    while i < n and _ZERO <= raw[i] <= _NINE:
        i += 1
    if i == start:
        return -1
    if i < n and raw[i] == _DOT:
        i += 1
        start = i
        while i < n and _ZERO <= raw[i] <= _NINE:
            i += 1
        if i == start:
            return -1
    if i >= n or raw[i] != _QUOTE:
        return -1
    return i + 1


def _integer(raw: bytes, i: int, n: int) -> int:
    """The index after ``-?(0|[1-9][0-9]{0,17})`` at ``raw[i:]`` (int64 whatever its digits),
    or -1."""
    if i < n and raw[i] == _MINUS:
        i += 1
    if i >= n:
        return -1
    if raw[i] == _ZERO:
        return i + 1
    if not _ONE <= raw[i] <= _NINE:
        return -1
    end = min(n, i + 18)
    i += 1
    while i < end and _ZERO <= raw[i] <= _NINE:
        i += 1
    return i


def _level(raw: bytes, i: int, n: int, form: int) -> int:
    """The index after one level in ``form`` (0: px, sz, n; 1: n, px, sz), or -1."""
    if form == 0:
        i = _literal(raw, i, n, _OPEN_PX)
        if i >= 0:
            i = _decimal(raw, i, n)
        if i >= 0:
            i = _literal(raw, i, n, _SZ)
        if i >= 0:
            i = _decimal(raw, i, n)
        if i >= 0:
            i = _literal(raw, i, n, _N)
        if i >= 0:
            i = _integer(raw, i, n)
    else:
        i = _literal(raw, i, n, _OPEN_N)
        if i >= 0:
            i = _integer(raw, i, n)
        if i >= 0:
            i = _literal(raw, i, n, _PX)
        if i >= 0:
            i = _decimal(raw, i, n)
        if i >= 0:
            i = _literal(raw, i, n, _SZ)
        if i >= 0:
            i = _decimal(raw, i, n)
    if i < 0 or i >= n or raw[i] != 125:  # "}"
        return -1
    return i + 1


def _side(raw: bytes, i: int, n: int, form: int) -> int:
    """The index after ``[level(,level)*]`` or ``[]`` at ``raw[i:]``, or -1."""
    if i >= n or raw[i] != 91:  # "["
        return -1
    i += 1
    if i < n and raw[i] == 93:  # "]"
        return i + 1
    while True:
        i = _level(raw, i, n, form)
        if i < 0 or i >= n:
            return -1
        if raw[i] == 93:
            return i + 1
        if raw[i] != 44:  # ","
            return -1
        i += 1


def scan_fast_form(raw: bytes) -> bool:
    """True when ``raw`` is in the fast form (``_FAST``): both sides, every level in one of
    the two key orders, decimal strings, an int64 ``n``, no whitespace."""
    n = len(raw)
    for form in (0, 1):
        if n < 2 or raw[0] != 91:
            return False
        i = _side(raw, 1, n, form)
        if i >= 0 and i < n and raw[i] == 44:
            i = _side(raw, i + 1, n, form)
            if i >= 0 and i + 1 == n and raw[i] == 93:
                return True
    return False


def scan_tops(raw: bytes) -> tuple[Level | None, Level | None] | None:
    """Each side's best level (None for an empty side) found by the byte scanner, the
    bids' side scanned to its end and only the asks' first level: None when ``raw`` is not
    in that shape in one of the two key orders. Each level found is in the fast form (its
    three keys exactly), so it decodes to the same ``Level`` as in the full decode."""
    n = len(raw)
    if n < 4 or raw[0] != 91 or raw[1] != 91:  # "[["
        return None
    for form in (0, 1):
        i = _side(raw, 1, n, form)  # just after the bids' "]"
        if i < 0 or i + 2 >= n or raw[i] != 44 or raw[i + 1] != 91:  # ",["
            continue
        bid: Level | None = None
        if raw[2] != 93:  # "]": no bids
            e = _level(raw, 2, n, form)
            if e < 0:
                continue
            bid = _LEVEL.decode(raw[2:e])
        i += 2
        if raw[i] == 93:
            return bid, None
        e = _level(raw, i, n, form)
        if e < 0:
            continue
        return bid, _LEVEL.decode(raw[i:e])
    return None


def _compiled() -> bool:
    """True when this module runs compiled: its functions are then not Python functions."""
    return type(_compiled).__name__ != "function"


def match_fast_form(raw: bytes) -> bool:
    """The same answer as :func:`scan_fast_form`, by the regular expressions."""
    return _FAST[0](raw) is not None or _FAST[1](raw) is not None


# ``raw`` is a book in the fast form: the scanner compiled, the expressions in Python
fast_form = scan_fast_form if _compiled() else match_fast_form


def decode_levels(raw: bytes) -> tuple[list[Level], list[Level]]:
    """A book's two sides (bids best first, asks best first) as ``Level`` objects."""
    try:
        return _LEVELS.decode(raw)
    except msgspec.ValidationError as exc:
        raise MalformedInput(f"bad l2Book levels: {exc}") from None


def decode_tops(raw: bytes) -> tuple[Level | None, Level | None]:
    """Each side's best level (None for an empty side); the levels below it are skimmed,
    not made objects. The same ``Level`` as :func:`decode_levels`' first of each side."""
    try:
        bids, asks = _SKIMMED.decode(raw)
        return (
            _LEVEL.decode(bids[0]) if bids else None,
            _LEVEL.decode(asks[0]) if asks else None,
        )
    except msgspec.ValidationError as exc:
        raise MalformedInput(f"bad l2Book levels: {exc}") from None


def find_tops(raw: bytes) -> tuple[Level | None, Level | None]:
    """Each side's best level: by the byte scanner (compiled), else by msgspec."""
    found = scan_tops(raw)
    return decode_tops(raw) if found is None else found


# a book's top levels: the scanner compiled, msgspec alone in Python (the same levels)
tops_of = find_tops if _compiled() else decode_tops


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

    __slots__ = ("_ints", "_raw", "_sides", "_tops", "coin", "t", "time", "two_sided")

    def __init__(self, data: BookData, t: int, checked: bool | int = False) -> None:
        """Check every level of ``data``; MalformedInput names the first bad field.

        ``checked``: the line was checked in full before (a day cache is built only from
        lines that passed): only a whitespace-free form skips the check and decode;
        ``WHITESPACE_FREE``: the caller knows the form is whitespace-free."""
        raw = bytes(data.levels)
        self._raw = raw
        self._sides: tuple[list[Level], list[Level]] | None = None
        self._tops: tuple[Level | None, Level | None] | None = None
        self._ints: tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]] | None = None
        self.coin = data.coin
        self.t = t
        self.time = data.time
        if checked == WHITESPACE_FREE or (checked and not has_whitespace(raw)) or fast_form(raw):
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

    def top(self, side: int) -> Level | None:
        """The best level of ``side`` (0 bids, 1 asks), None when that side is empty: from
        the decoded sides when they are, else decoded alone (once, then kept)."""
        sides = self._sides
        if sides is not None:
            levels = sides[side]
            return levels[0] if levels else None
        tops = self._tops
        if tops is None:
            tops = self._tops = tops_of(self._raw)
        return tops[side]

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
        top = self.top(side)
        return None if top is None else parse_e8(top.px)

    def mid(self) -> int | None:
        """``tdiv(best_bid + best_ask, 2)``; None when a side is empty."""
        bid, ask = self.best_px(0), self.best_px(1)
        return None if bid is None or ask is None else tdiv(bid + ask, 2)

    def raw(self) -> bytes:
        """The levels' bytes as logged (a snapshot keeps them)."""
        return self._raw
