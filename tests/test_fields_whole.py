"""``Call.whole``: a strategy's integer fields, checked at the call (and cheaply).

A quoter sends tens of thousands of orders and cancels a day, ~400k integer fields; an
``isinstance`` against the ``SupportsIndex`` protocol costs ~3.7 us each (1.5 s of a 5 s
backtest in bench/peers.py), so a plain int must not go through it. What it accepts and
refuses stays the same.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest

from arena_tui.run import fields
from arena_tui.run.fields import Call, RefusedCall


class _Counting(type):
    checks = 0

    def __instancecheck__(cls, value: Any) -> bool:
        _Counting.checks += 1
        return hasattr(type(value), "__index__")


class _Index(metaclass=_Counting):
    pass


class Lots:
    def __index__(self) -> int:
        return 7


class Side(enum.IntEnum):
    SELL = 0
    BUY = 1


def test_a_plain_int_skips_the_protocol_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fields, "SupportsIndex", _Index)
    _Counting.checks = 0
    call = Call("ctx.order", None)
    assert [call.whole("sz", v, 10**12) for v in (0, 1, 10**12)] == [0, 1, 10**12]
    assert _Counting.checks == 0
    assert call.whole("sz", Lots(), 10) == 7  # anything with __index__ still goes through it
    assert _Counting.checks == 1


@pytest.mark.parametrize(
    ("value", "want"),
    [(5, 5), (Side.BUY, 1), (Lots(), 7), (True, None), (1.0, None), ("5", None), (-1, None),
     (11, None)],
)  # fmt: skip
def test_what_whole_accepts_and_refuses_is_unchanged(value: object, want: int | None) -> None:
    call = Call("ctx.order", None)
    if want is None:
        with pytest.raises(RefusedCall, match=r"^.*ctx\.order: sz "):
            call.whole("sz", value, 10)
    else:
        got = call.whole("sz", value, 10)
        assert got == want and type(got) is int
