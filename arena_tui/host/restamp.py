"""A recorded log replayed at ``speed`` times real time, onto the server's clock.

Why this module exists: a builder rehearses against a recorded day as if it were live, so
every time in it moves onto the server's clock by one map, ``f(x) = origin_wall + (x -
origin_t) / speed`` (floored, exact with a rational speed): receive times ``t`` (so they
never decrease and follow the wall clock) and the exchange times inside the messages (a
book's ``time``, each print's ``time``), so a book is as fresh, and a print as late after
the book before it, as in the recording, only ``speed`` times sooner. Nothing else in a
message changes; strings stay strings.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import msgspec

MAX_SPEED = 1_000_000

_DECODE = msgspec.json.Decoder()
_ENCODE = msgspec.json.Encoder().encode


class SpeedError(ValueError):
    pass


def parse_speed(text: str) -> Fraction:
    """``60``, ``0.5`` or ``1/2`` as an exact positive fraction (at most 1,000,000)."""
    try:
        speed = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise SpeedError(f"--speed {text!r}: want a positive number such as 60 or 0.5") from None
    if not 0 < speed <= MAX_SPEED:
        raise SpeedError(f"--speed {text}: want more than 0 and at most {MAX_SPEED:,}")
    return speed


def speed_text(speed: Fraction) -> str:
    return str(speed.numerator) if speed.denominator == 1 else str(speed)


class Restamp:
    """The map from recorded times to the server's (see the module docstring)."""

    def __init__(self, origin_t: int, origin_wall: int, speed: Fraction) -> None:
        self.origin_t = origin_t
        self.origin_wall = origin_wall
        self.speed = speed

    def at(self, x: int) -> int:
        return self.origin_wall + (x - self.origin_t) * self.speed.denominator // (
            self.speed.numerator
        )

    def recorded(self, wall: int) -> int:
        """The recorded time that maps to ``wall`` (the inverse, floored)."""
        return self.origin_t + (wall - self.origin_wall) * self.speed.numerator // (
            self.speed.denominator
        )

    def message(self, hl: Any) -> Any:
        """A decoded Hyperliquid message with its exchange times moved (in place)."""
        if not isinstance(hl, dict):
            return hl
        data = hl.get("data")
        channel = hl.get("channel")
        if channel == "l2Book" and isinstance(data, dict):
            self._move(data)
        elif channel == "trades" and isinstance(data, list):
            for trade in data:
                if isinstance(trade, dict):
                    self._move(trade)
        return hl

    def _move(self, obj: dict[str, Any]) -> None:
        time = obj.get("time")
        if type(time) is int:
            obj["time"] = self.at(time)

    def line(self, raw: bytes) -> tuple[int, bytes] | None:
        """A recorded market line re-stamped: its new ``t`` and its bytes after ``{"t":N,``.

        None for a line with no ``hl`` market message (the recording's own ticks, gaps,
        orders: the server writes its own).
        """
        doc = _DECODE.decode(raw)
        if not isinstance(doc, dict) or "hl" not in doc or type(doc.get("t")) is not int:
            return None
        t = self.at(doc["t"])
        return t, b'"hl":' + _ENCODE(self.message(doc["hl"])) + b"}"
