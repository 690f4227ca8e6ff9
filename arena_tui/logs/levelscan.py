"""A book's levels read straight from their bytes: the check and the e8 integers at once.

Why this module exists: checking every line of a day (``arena import``, ``arena logs
check``) and keeping a day's books as columns (``logs.daycols``) used to decode each book's
levels into ``Level`` objects and parse their decimals one by one: most of an import's time
on a busy day (~156k books of 20 levels a side). Nearly every book comes in the form
Hyperliquid sends, ``{"px":"..","sz":"..","n":..}`` (either key order seen in recordings),
with no whitespace; such a book cannot fail the reader's checks, and its numbers sit at fixed
places between its quotes. So a book in that form is recognised by one regular expression
over its bytes (the engine's own fast form, ``engine.book``, written again here: the shell
reads the engine through its public face; tests/test_levelscan.py holds the two to the same
answers) and its levels' numbers are cut out of it with a few C-level passes. Any other form
(valid or not) is left to the full decode, which stays the reference and names the fault.

The e8 values come from the engine's own parser (``engine.units.parse_e8``), remembered per
distinct text (prices and sizes repeat), so they are the reference's to the bit.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Sequence
from types import ModuleType

from arena_tui.util.twins import compiled_twin
from engine.units import parse_e8

# The engine's fast form (engine/book.py): JSON with no spaces or escapes, three keys in one
# of two orders, decimal strings, an integer n within int64.
_DEC = rb'"-?[0-9]++(?:\.[0-9]++)?+"'
_INT = rb"-?+(?:0|[1-9][0-9]{0,17}+)"
_PX_SZ_N = rb'\{"px":' + _DEC + rb',"sz":' + _DEC + rb',"n":' + _INT + rb"\}"
_N_PX_SZ = rb'\{"n":' + _INT + rb',"px":' + _DEC + rb',"sz":' + _DEC + rb"\}"


def _book_form(level: bytes) -> re.Pattern[bytes]:
    side = rb"\[(?:" + level + rb"(?:," + level + rb")*+)?+\]"
    return re.compile(rb"\[" + side + rb"," + side + rb"\]")


_PX_FIRST = _book_form(_PX_SZ_N).fullmatch
_N_FIRST = _book_form(_N_PX_SZ).fullmatch

# Split at its quotes, a level in the fast form is ten pieces: px, sz and the piece holding
# n sit at fixed places (the first piece is "[[{", "[[],[{" or "[[]"; an empty side holds no
# quote, so it moves nothing). (px, sz, n) offsets for the two key orders:
_PX_FIRST_AT = (3, 7, 10)  # [[{ px : PX , sz : SZ , n :N},{ px ...
_N_FIRST_AT = (5, 9, 2)  # [[{ n :N, px : PX , sz : SZ },{ n ...
# what surrounds n in its piece (":9},{", ":9}],[{", ":9}]]", ":9,"), blanked for a split
_NOT_N = bytes.maketrans(b":,{}[]", b"      ")
_MEMO_MAX = 1 << 16  # distinct decimal texts remembered; then forgotten all at once


class _E8(dict[bytes, int]):
    """Decimal text (bytes) -> e8, by the engine's parser, on first sight."""

    def __missing__(self, text: bytes) -> int:
        if len(self) >= _MEMO_MAX:
            self.clear()
        value = self[text] = parse_e8(text.decode("ascii"))
        return value


_E8_OF = _E8()
# px_e8, sz_e8, n (lists from the expressions, int64 arrays from the scanner); how many are bids
Levels = tuple[Sequence[int], Sequence[int], Sequence[int], int]


def match_fast_form(raw: bytes) -> bool:
    """True when a book's levels are in the fast form: then the reader's checks (a decode
    into ``Level`` objects, every price and size a decimal) cannot refuse them."""
    return _PX_FIRST(raw) is not None or _N_FIRST(raw) is not None


def match_levels(raw: bytes) -> Levels | None:
    """A book's levels in the fast form as ``(px_e8, sz_e8, n, bids)``: three lists over
    every level, bids (best first) then asks, and how many are bids; None when ``raw`` is
    not in the fast form (the full decode judges it). A value past int64 is returned as it
    is, as the reference parse gives it: storing it is what refuses it."""
    if _PX_FIRST(raw) is not None:
        at_px, at_sz, at_n = _PX_FIRST_AT
    elif _N_FIRST(raw) is not None:
        at_px, at_sz, at_n = _N_FIRST_AT
    else:
        return None
    pieces = raw.split(b'"')
    e8 = _E8_OF.__getitem__
    px = list(map(e8, pieces[at_px::10]))
    sz = list(map(e8, pieces[at_sz::10]))
    n = list(map(int, b"".join(pieces[at_n::10]).translate(_NOT_N).split()))
    # in the fast form "],[" is found once, between the sides; "{" opens each level
    bids = raw.count(b"{", 0, raw.find(b"],["))
    return px, sz, n, bids


# ---- the same as a byte scanner, compiled (setup.py) ---------------------------------------
# Compiled, this loop over the bytes is C: the check and the numbers in one pass, several
# times the expressions' speed. As Python it is far slower than them, so there they read.
# It gives exactly what ``match_levels`` gives (tests/test_levelscan.py holds them to it).

_QUOTE, _MINUS, _DOT, _ZERO, _NINE, _ONE = 34, 45, 46, 48, 57, 49
_OPEN_PX, _SZ, _N = b'{"px":', b',"sz":', b',"n":'
_OPEN_N, _PX = b'{"n":', b',"px":'
_ZEROS = array("q", [0])
_NONE = array("q")  # the numbers of a scan that only checks
_E8_INT = 100_000_000
_WHOLE_MAX = 9_999_999_999  # a larger whole part: the expressions decide (no int64 sums here)
_BIG = -(1 << 62)  # ``_e8_at``: a value it does not sum (never an e8 it returns: |e8| < 1e18)


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


def _e8_at(raw: bytes, i: int, end: int) -> int:
    """``parse_e8`` of the decimal ``raw[i:end]`` (checked by ``_decimal``); ``_BIG`` when
    its whole part passes ``_WHOLE_MAX``."""
    neg = raw[i] == _MINUS
    if neg:
        i += 1
    whole = 0
    while i < end and raw[i] != _DOT:
        whole = whole * 10 + (raw[i] - _ZERO)
        if whole > _WHOLE_MAX:
            return _BIG
        i += 1
    frac = 0
    places = 8
    i += 1  # past the dot (or past the end: no fraction)
    while i < end and places > 0:
        frac = frac * 10 + (raw[i] - _ZERO)
        places -= 1
        i += 1
    while places > 0:
        frac *= 10
        places -= 1
    value = whole * _E8_INT + frac
    return -value if neg else value


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


def _int_at(raw: bytes, i: int, end: int) -> int:
    """The integer ``raw[i:end]`` (checked by ``_integer``: at most 18 digits)."""
    neg = raw[i] == _MINUS
    if neg:
        i += 1
    value = 0
    while i < end:
        value = value * 10 + (raw[i] - _ZERO)
        i += 1
    return -value if neg else value


def _level(
    raw: bytes,
    i: int,
    n: int,
    form: int,
    k: int,
    pxs: array[int] | None,
    szs: array[int] | None,
    ns: array[int] | None,
) -> int:
    """The index after one level in ``form`` (0: px, sz, n; 1: n, px, sz), its numbers
    written at index ``k`` of ``pxs``, ``szs``, ``ns`` (``k`` < 0: only checked); -1 when not
    in the form, -2 for a value ``_e8_at`` does not sum."""
    px_at = px_end = sz_at = sz_end = n_at = n_end = -1
    if form == 0:
        i = px_at = _literal(raw, i, n, _OPEN_PX)
        if i >= 0:
            i = px_end = _decimal(raw, i, n)
        if i >= 0:
            i = sz_at = _literal(raw, i, n, _SZ)
        if i >= 0:
            i = sz_end = _decimal(raw, i, n)
        if i >= 0:
            i = n_at = _literal(raw, i, n, _N)
        if i >= 0:
            i = n_end = _integer(raw, i, n)
    else:
        i = n_at = _literal(raw, i, n, _OPEN_N)
        if i >= 0:
            i = n_end = _integer(raw, i, n)
        if i >= 0:
            i = px_at = _literal(raw, i, n, _PX)
        if i >= 0:
            i = px_end = _decimal(raw, i, n)
        if i >= 0:
            i = sz_at = _literal(raw, i, n, _SZ)
        if i >= 0:
            i = sz_end = _decimal(raw, i, n)
    if i < 0 or i >= n or raw[i] != 125:  # "}"
        return -1
    if k < 0:
        return i + 1
    # a decimal's text: past its opening quote, before its closing one
    px = _e8_at(raw, px_at + 1, px_end - 1)
    sz = _e8_at(raw, sz_at + 1, sz_end - 1)
    if px == _BIG or sz == _BIG:
        return -2
    pxs[k] = px  # type: ignore[index]  # (k >= 0: the arrays are there)
    szs[k] = sz  # type: ignore[index]
    ns[k] = _int_at(raw, n_at, n_end)  # type: ignore[index]
    return i + 1


def _scan(raw: bytes, n: int, form: int, numbers: bool) -> Levels | None:
    """Both sides in ``form``: the levels' numbers (int64 arrays, written in place: no
    Python integer made for them when compiled) and the bids' count (``numbers``; else
    empty arrays); None when not in the form; ``match_levels``'s answer when a value is past
    what ``_e8_at`` sums."""
    # every level takes at least 25 bytes ({"px":"1","sz":"1","n":1}): room for all, never
    # more than the line's own size in arrays, and cut to the levels found at the end (a
    # count of the "{" first read every byte once more: 3% of an import)
    cap = n // 25 + 1 if numbers else 0
    pxs = szs = ns = _NONE
    if numbers:
        pxs, szs, ns = _ZEROS * cap, _ZEROS * cap, _ZEROS * cap
        vpx, vsz, vn = pxs, szs, ns  # (compiled: typed views of them, taken once)
    else:  # only checked: no array made, no view taken (the check of every book's line)
        vpx = vsz = vn = None  # type: ignore[assignment]
    k = 0 if numbers else -1
    i = 1
    bids = 0
    for side in range(2):
        if i >= n or raw[i] != 91:  # "["
            return None
        i += 1
        if i < n and raw[i] == 93:  # "]": an empty side
            i += 1
        else:
            while True:
                if k >= cap:  # (never: each level found takes 25 bytes or more)
                    return None
                i = _level(raw, i, n, form, k, vpx, vsz, vn)
                if i == -2:
                    return match_levels(raw)
                if i < 0 or i >= n:
                    return None
                if numbers:
                    k += 1
                if raw[i] == 93:
                    i += 1
                    break
                if raw[i] != 44:  # ","
                    return None
                i += 1
        if side == 0:
            bids = k if numbers else 0
            if i >= n or raw[i] != 44:
                return None
            i += 1
    if i + 1 != n or raw[i] != 93:
        return None
    if numbers and k != cap:
        return pxs[:k], szs[:k], ns[:k], bids
    return pxs, szs, ns, bids


def scan_levels(raw: bytes) -> Levels | None:
    """The same answer as :func:`match_levels`, by the byte scanner."""
    n = len(raw)
    if n < 2 or raw[0] != 91:
        return None
    got = _scan(raw, n, 0, True)
    return got if got is not None else _scan(raw, n, 1, True)


def scan_fast_form(raw: bytes) -> bool:
    """The same answer as :func:`match_fast_form`, by the byte scanner."""
    n = len(raw)
    if n < 2 or raw[0] != 91:
        return False
    return _scan(raw, n, 0, False) is not None or _scan(raw, n, 1, False) is not None


def _compiled() -> bool:
    """True when this module runs compiled: its functions are then not Python functions."""
    return type(_compiled).__name__ != "function"


def _compiled_twin() -> ModuleType | None:
    """This module compiled by setup.py (``arena_tui.logs._levelscan``), when built from
    this source (``util.twins``)."""
    return compiled_twin(__file__, "arena_tui.logs", "_levelscan")


# What readers call: the compiled scanner when this module's build is current, else the
# expressions. ``SCANNER`` says which.
levels_e8: Callable[[bytes], Levels | None] = match_levels
fast_form: Callable[[bytes], bool] = match_fast_form
SCANNER = "compiled" if _compiled() else "expressions"
if _compiled():
    levels_e8, fast_form = scan_levels, scan_fast_form
elif (_twin := _compiled_twin()) is not None:
    levels_e8, fast_form, SCANNER = _twin.scan_levels, _twin.scan_fast_form, "compiled"
