"""Integer units and the one division the engine uses.

Why this module exists: every number in a season is an integer (prices and sizes at 1e8,
money at 1e6, ratios at 1e8, fee rates in tenths of a basis point), and every division
truncates toward zero. Python's ``//`` floors, which is wrong for negative values, so all
division in the engine goes through :func:`tdiv`. Decimal strings from Hyperliquid are
parsed here exactly, never through a float.

May not touch: floats, clocks, I/O.
"""

from __future__ import annotations

import re
from typing import TypeVar

T = TypeVar("T")

# The units, defined here once; the shell imports them from here.
E6 = 10**6  # money: USDC at 1e6
E8 = 10**8  # prices, sizes and ratios at 1e8
E10 = 10**10  # e8 * e8 / e10 = e6: a price times a size is money
TEN = 10
FEE_DENOM = 100_000  # dbps: tenths of a basis point
SECOND_MS = 1_000
MINUTE_MS = 60_000
HOUR_MS = 3_600_000
DAY_MS = 86_400_000
NS_PER_MS = 1_000_000  # a clock's or a file's nanoseconds to the log's milliseconds

# The only decimal form the feed may carry: [-]digits[.digits], ASCII digits only.
_DECIMAL = re.compile(r"(-?)([0-9]+)(?:\.([0-9]+))?")


def tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero (C semantics), unlike Python's ``//``."""
    q: int = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


def notional(px_e8: int, sz_e8: int) -> int:
    """Money (e6) of ``sz_e8`` at ``px_e8``."""
    return tdiv(px_e8 * sz_e8, E10)


def lots_down(sz_e8: int, lot_e8: int) -> int:
    """Truncate a size toward zero to whole lots."""
    return tdiv(sz_e8, lot_e8) * lot_e8


def lot_e8(sz_decimals: int) -> int:
    """The lot (smallest size step) of a market, in e8."""
    lot: int = 10 ** (8 - sz_decimals)
    return lot


def _parse_e8(text: str) -> int:
    m = _DECIMAL.fullmatch(text)
    if m is None:
        raise ValueError(f"not a decimal string: {text!r}")
    sign, whole, frac = m.groups()
    value = int(whole) * E8
    if frac:
        value += int(frac[:8].ljust(8, "0"))
    return -value if sign else value


# Memos of parsed decimals: the feed repeats the same few thousand prices, sizes and rates.
# They hold a pure function's results, so they cannot change an outcome; each is bounded so
# memory stays flat however long the log. Two generations: when the young one (what hot
# loops read directly) is full it becomes the old one, and a string found only in the old
# one moves back; so prices still in use survive a turn, and a full memo is not a cliff
# (clearing one generation at 8,192 entries missed 2.4 times as often on bench/replay.py's
# log as this does).
E8_MEMO: dict[str, int] = {}
FRACTION_MEMO: dict[str, tuple[int, int]] = {}
_E8_OLD: dict[str, int] = {}
_FRACTION_OLD: dict[str, tuple[int, int]] = {}
_MEMO_MAX = 1 << 13  # per generation: small enough that memory stays flat, large enough to hit


def _remember(memo: dict[str, T], old: dict[str, T], text: str, value: T) -> T:
    if len(memo) >= _MEMO_MAX:
        old.clear()
        old.update(memo)
        memo.clear()
    memo[text] = value
    return value


def parse_e8(text: str) -> int:
    """Parse a decimal string into e8, truncating toward zero past 8 decimals.

    Raises ValueError for anything but ``[-]digits[.digits]``.
    """
    value = E8_MEMO.get(text)
    if value is None:
        value = _E8_OLD.get(text)
        return _remember(E8_MEMO, _E8_OLD, text, _parse_e8(text) if value is None else value)
    return value


def _parse_fraction(text: str) -> tuple[int, int]:
    m = _DECIMAL.fullmatch(text)
    if m is None:
        raise ValueError(f"not a decimal string: {text!r}")
    sign, whole, frac = m.groups()
    frac = frac or ""
    num = int(whole + frac)
    # TEN, a Python int: compiled, ``10 ** len(frac)`` is a power of two C integers, which
    # Cython makes a C double (tests/test_engines_agree.py caught 100.0 for 100)
    return (-num if sign else num), TEN ** len(frac)


def parse_fraction(text: str) -> tuple[int, int]:
    """Parse a decimal string exactly as ``(num, den)`` with ``den = 10**k``."""
    value = FRACTION_MEMO.get(text)
    if value is None:
        value = _FRACTION_OLD.get(text)
        fraction = _parse_fraction(text) if value is None else value
        return _remember(FRACTION_MEMO, _FRACTION_OLD, text, fraction)
    return value


def price_on_grid(px_e8: int, sz_decimals: int) -> bool:
    """Hyperliquid's perp price grid, as the contract states it.

    An integer price is always valid; otherwise at most ``6 - szDecimals`` decimals and at
    most 5 significant figures counted from the first to the last non-zero digit.
    """
    if px_e8 <= 0:
        return False
    if px_e8 % E8 == 0:
        return True
    max_decimals = 6 - sz_decimals
    if max_decimals <= 0 or px_e8 % 10 ** (8 - max_decimals) != 0:
        return False
    digits = px_e8
    while digits % 10 == 0:
        digits = tdiv(digits, 10)
    return len(str(digits)) <= 5


def format_e8(value: int) -> str:
    """Render an e8 integer as a decimal string (for people; the engine never needs it)."""
    sign = "-" if value < 0 else ""
    whole, frac = divmod(abs(value), E8)
    text = f"{whole}.{frac:08d}".rstrip("0")
    return sign + (text + "0" if text.endswith(".") else text)


def format_e6(value: int) -> str:
    """Render e6 money as a decimal string with 6 places."""
    sign = "-" if value < 0 else ""
    whole, frac = divmod(abs(value), 10**6)
    return f"{sign}{whole}.{frac:06d}"
