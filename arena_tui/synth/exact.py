"""Arithmetic for the synthetic feed that gives the same bits on every machine.

``arena synth`` promises the same bytes for the same arguments. Python's ``random.Random`` and
IEEE-754 ``+ - * /`` and ``sqrt`` are the same on every platform, but ``math.exp``, ``log``,
``cos`` (and so ``random.gauss`` or ``expovariate``) come from the C library and may differ in
the last bit, enough to move a price by one tick somewhere in a day. So the generator draws
normals, exponentials and Poisson counts here from those safe operations only.

Also here: Hyperliquid's perp price grid on integers, and the decimal strings the feed
carries ("105056.0", "0.00219", "-0.0000015186").
"""

from __future__ import annotations

import math
from random import Random

LN2 = 0.6931471805599453
INV_LN2 = 1.4426950408889634
# Four 16-bit uniforms summed (Irwin-Hall): mean 2 * 65535, variance 4/12 in units of 65535.
_NORMAL_MEAN = 2 * 65535
_NORMAL_SCALE = math.sqrt(3.0) / 65535  # sqrt is exactly rounded by IEEE-754
_TEXT_MEMO_MAX = 1 << 16


def exp_(x: float) -> float:
    """``e**x`` from + - * / only (range reduction, then a Taylor series), platform-exact."""
    k = int(x * INV_LN2 + (0.5 if x >= 0 else -0.5))
    r = x - k * LN2  # |r| <= ~0.35: 14 terms are past double precision
    term = s = 1.0
    for i in range(1, 15):
        term = term * r / i
        s += term
    return math.ldexp(s, k)


def normal(rng: Random) -> float:
    """A standard normal deviate, near enough (Irwin-Hall of four uniforms; |z| < 3.47)."""
    bits = rng.getrandbits(64)
    total = (bits & 0xFFFF) + (bits >> 16 & 0xFFFF) + (bits >> 32 & 0xFFFF) + (bits >> 48)
    return (total - _NORMAL_MEAN) * _NORMAL_SCALE


def poisson(rng: Random, lam: float, p0: float | None = None) -> int:
    """A Poisson count with mean ``lam`` (inversion; for the small means of one second).

    ``p0``: ``exp_(-lam)`` if the caller keeps it."""
    p = exp_(-lam) if p0 is None else p0
    cdf = p
    u = rng.random()
    k = 0
    while u > cdf and k < 100:
        k += 1
        p = p * lam / k
        cdf += p
    return k


def signed(value: int, decimals: int) -> str:
    """A fixed-point integer as a trimmed decimal string: ``signed(-15186, 10)`` ->
    ``"-0.0000015186"``; a whole number keeps one zero (``"3.0"``)."""
    sign = "-" if value < 0 else ""
    whole, frac = divmod(abs(value), 10**decimals)
    text = f"{frac:0{decimals}d}".rstrip("0") if decimals else ""
    return f"{sign}{whole}.{text or '0'}"


class Grid:
    """Hyperliquid's perp prices for one szDecimals, as integers of ``10**-decimals``.

    A price has at most 5 significant figures and at most ``6 - szDecimals`` decimals; an
    integer price is always valid. So the tick is ``10**(digits - 5)`` units for a price of
    ``digits`` digits (at least 1 unit, at most one whole unit): it grows tenfold when the
    price crosses a power of ten, which ``below``/``above`` handle.
    """

    def __init__(self, sz_decimals: int) -> None:
        self.decimals = max(0, 6 - sz_decimals)
        self.unit = 10**self.decimals  # units in 1.0
        self.unit_e8 = 10 ** (8 - self.decimals)  # e8 in one unit
        self._text: dict[int, str] = {}
        self._lo = self._hi = self._tick = 0  # the decade [lo, hi) seen last, and its tick

    def tick(self, px: int) -> int:
        if self._lo <= px < self._hi:
            return self._tick
        digits = len(str(px))
        self._lo, self._hi = 10 ** (digits - 1), 10**digits
        self._tick = min(10 ** (digits - 5), self.unit) if digits > 5 else 1
        return self._tick

    def down(self, px: int) -> int:
        """The highest valid price at or below ``px`` (``px`` >= 1)."""
        return px - px % self.tick(px)

    def up(self, px: int) -> int:
        """The lowest valid price at or above ``px``."""
        rest = px % self.tick(px)
        return px + self.tick(px) - rest if rest else px

    def below(self, px: int, steps: int = 1) -> int:
        """``steps`` grid steps under the valid price ``px`` (never under 1 unit)."""
        for _ in range(steps):
            if px <= 1:
                return 1
            px = self.down(px - 1)
        return px

    def above(self, px: int, steps: int = 1) -> int:
        for _ in range(steps):
            px = self.up(px + 1)
        return px

    def of(self, value: float) -> int:
        """The valid price nearest below a positive float price."""
        return self.down(max(1, int(value * self.unit)))

    def text(self, px: int) -> str:
        """``"105056.0"``, ``"187.42"``: as Hyperliquid writes prices."""
        got = self._text.get(px)
        if got is None:
            if len(self._text) >= _TEXT_MEMO_MAX:
                self._text.clear()
            got = self._text[px] = signed(px, self.decimals)
        return got

    def half_text(self, twice: int) -> str:
        """Half of ``twice`` units (a mid price), with one more decimal when it is odd."""
        if twice % 2 == 0:
            return self.text(twice // 2)
        return signed(twice * 5, self.decimals + 1)


class Sizes:
    """Sizes in whole lots of ``10**-szDecimals``, written as the feed writes them."""

    def __init__(self, sz_decimals: int) -> None:
        self.decimals = sz_decimals
        self.per_coin = 10**sz_decimals  # lots in one coin
        self.lot_e8 = 10 ** (8 - sz_decimals)
        self._text: dict[int, str] = {}

    def text(self, lots: int) -> str:
        got = self._text.get(lots)
        if got is None:
            if len(self._text) >= _TEXT_MEMO_MAX:
                self._text.clear()
            got = self._text[lots] = signed(lots, self.decimals)
        return got
