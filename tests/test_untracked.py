"""The engine's inputs and events are not tracked by the garbage collector.

A hosted season keeps every fill it served for weeks; while each was a tracked object, the
collector's full passes scanned them all, a stall on the order path that grew with the
season (a four-week, 50-entry state: about 50 ms a pass, 12 ms untracked). ``gc=False`` is
safe only for objects that can never be part of a reference cycle: frozen, holding only
numbers, strings, enums, other such structs, and (for an input's prints) a list of them.
"""

from __future__ import annotations

import gc
import typing
from types import UnionType

import msgspec
import pytest

from engine import events as ev
from engine import inputs

STRUCTS = sorted(
    {
        obj
        for module in (ev, inputs)
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, msgspec.Struct)
        and obj.__module__ == module.__name__
    }
    - {inputs.Header},  # one a log: nothing gained
    key=lambda c: c.__qualname__,
)
ATOMS = (int, str, bool, type(None), msgspec.Raw)


def _leaves(tp: object) -> list[object]:
    """The types a field's annotation allows, unions and lists opened."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, UnionType):
        return [leaf for arg in typing.get_args(tp) for leaf in _leaves(arg)]
    if origin is list:
        return [list, *_leaves(typing.get_args(tp)[0])]
    return [tp]


@pytest.mark.parametrize("cls", STRUCTS, ids=lambda c: c.__qualname__)
def test_untracked_and_unable_to_form_a_cycle(cls: type[msgspec.Struct]) -> None:
    config = cls.__struct_config__
    assert config.gc is False, f"{cls.__qualname__} is tracked by the garbage collector"
    assert config.frozen, f"{cls.__qualname__} is not frozen"
    for name, tp in typing.get_type_hints(cls).items():
        for leaf in _leaves(tp):
            ok = (
                leaf in ATOMS
                or leaf is list
                or (isinstance(leaf, type) and issubclass(leaf, (msgspec.Struct, ev.Reason)))
            )
            assert ok, f"{cls.__qualname__}.{name} may hold a {leaf!r}: it could form a cycle"


def test_a_decoded_line_and_a_fill_are_not_tracked() -> None:
    trade = b'{"coin":"BTC","px":"1","sz":"2","time":4,"tid":9}'
    raw = b'{"t":5,"hl":{"channel":"trades","data":[' + trade + b"]}}"
    line = msgspec.json.decode(raw, type=inputs.Line)
    assert isinstance(line.hl, inputs.Trades)
    assert not gc.is_tracked(line) and not gc.is_tracked(line.hl)
    assert gc.is_tracked(line.hl.data)  # the list of prints is (as every list)
    quote = ev.PrintQuote(9, 4, 1, 2)
    fill = ev.Fill(5, "e", 1, 0, 0, True, 1, 2, False, 0, 0, quote)
    assert not gc.is_tracked(fill) and not gc.is_tracked(quote)
