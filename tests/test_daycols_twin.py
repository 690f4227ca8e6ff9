"""``logs.daycols``: a day's columns built by the source and by its build, alike.

setup.py compiles arena_tui/logs/daycols.py with Cython as ``arena_tui.logs._daycols``; a
day cache's writer builds with the build when it is of this very source. Here both are fed
the same lines (random days of tests/test_daycache_columns.py, with lines no check passes:
values past int64, levels with whitespace or in no fast form, a line with arena too) in the
same random chunks, with and without the check's read of a book's levels, and must give the
same sections byte for byte, the same coins, the same unchecked coins and width. That the
columns give back the reader's lines is tests/test_daycache_columns.py's.
"""

from __future__ import annotations

import json
from array import array
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.logs import daycols
from arena_tui.logs.logcheck import check_and_read
from arena_tui.logs.logfile import BadLine, decode_line
from engine.inputs import Line
from tests.test_daycache_columns import T, days

TWIN = daycols._compiled_twin()
BUILDS = [pytest.param(daycols.DayColumns, id="source")]
if TWIN is not None:
    BUILDS.append(pytest.param(TWIN.DayColumns, id="build"))
BIG = str(1 << 63)  # past int64 as an integer; as a decimal, its e8 is too


def hostile(t: int) -> list[bytes]:
    """Lines a day may hold that the columns must refuse or keep the slow way."""
    book = {"coin": "BTC", "time": t, "levels": [[{"px": "1", "sz": "2", "n": 1}], []]}
    late = {**book, "time": 1 << 63}  # its time past int64 (the levels first kept, then not)
    spaced = json.dumps({"t": t, "hl": {"channel": "l2Book", "data": book}}).encode()
    odd = {**book, "levels": [[{"sz": "2", "px": "1", "n": 1}], []]}  # a third key order
    wide = {**book, "levels": [[{"px": BIG, "sz": "1", "n": 1}], []]}
    count = {**book, "levels": [[{"px": "1", "sz": "1", "n": 1 << 63}], []]}
    prints = [{"coin": "ETH", "px": BIG, "sz": "1", "side": "B", "time": t, "tid": 1}]
    ctx = {"coin": "DOGE", "ctx": {"markPx": BIG, "oraclePx": "1", "funding": "0"}}
    both = {"t": t, "hl": {"channel": "l2Book", "data": book}, "arena": {"type": "tick"}}
    rows: list[Any] = [
        {"t": t, "hl": {"channel": "l2Book", "data": late}},
        {"t": t, "hl": {"channel": "l2Book", "data": odd}},
        {"t": t, "hl": {"channel": "l2Book", "data": wide}},
        {"t": t, "hl": {"channel": "l2Book", "data": count}},
        {"t": t, "hl": {"channel": "trades", "data": prints}},
        {"t": t, "hl": {"channel": "activeAssetCtx", "data": ctx}},
        both,
    ]
    return [spaced, *(msgspec.json.encode(r) for r in rows)]


def lines_of(raws: list[bytes]) -> tuple[list[Line], list[Any]]:
    """Each line decoded, and what a check reads of a book's levels (None when it does
    not check: a line the check refuses is still given to the columns, as a reader may)."""
    lines, reads = [], []
    for raw in raws:
        try:
            line, read = check_and_read(raw)
        except BadLine:  # refused by the check: decoded as it is
            line, read = decode_line(raw), None
        lines.append(line)
        reads.append(read)
    return lines, reads


def built(cls: type[Any], raws: list[bytes], cuts: list[int], with_reads: bool) -> Any:
    lines, reads = lines_of(raws)
    cols = cls()
    base, at = 0, 0
    for cut in [*sorted(c % (len(raws) + 1) for c in cuts), len(raws)]:
        chunk = slice(at, max(at, cut))
        cols.add(raws[chunk], lines[chunk], base, reads[chunk] if with_reads else None)
        base += sum(len(r) + 1 for r in raws[chunk])
        at = max(at, cut)
    return cols


def answer(cols: Any) -> tuple[Any, ...]:
    sections = {name: b"".join(parts) for name, parts in cols.sections().items()}
    return sections, dict(cols.ids), set(cols.failed), cols.width


@pytest.mark.skipif(TWIN is None, reason="no build of logs.daycols in this install")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=days(),
    bad=st.lists(st.integers(0, 7), max_size=8),
    cuts=st.lists(st.integers(0, 200), max_size=4),
    with_reads=st.booleans(),
)
def test_the_build_makes_the_columns_the_source_makes(
    rows: list[tuple[dict[str, Any], bool]], bad: list[int], cuts: list[int], with_reads: bool
) -> None:
    raws = [json.dumps(r).encode() if spaced else msgspec.json.encode(r) for r, spaced in rows]
    odd = hostile(T)
    for k, which in enumerate(bad):
        raws.insert((k * 7) % (len(raws) + 1), odd[which])
    assert TWIN is not None
    source = answer(built(daycols.DayColumns, raws, cuts, with_reads))
    assert answer(built(TWIN.DayColumns, raws, cuts, with_reads)) == source


@pytest.mark.parametrize("cls", BUILDS)
def test_a_value_past_a_columns_type_refuses_that_coin_and_keeps_nothing_of_it(
    cls: type[Any],
) -> None:
    raws = hostile(T)
    cols = built(cls, raws, [], True)
    assert cols.failed == {"BTC", "ETH", "DOGE"}  # all but the spaced book, the odd order
    sections = {name: b"".join(parts) for name, parts in cols.sections().items()}
    # rows: the spaced book 0, the late -1, the odd order 1, the rest -1
    assert memoryview(sections["row"]).cast("i").tolist() == [0, -1, 1, -1, -1, -1, -1, -1]
    assert len(bytes(sections["b_time"])) == 2 * 8  # the two books kept: spaced, odd order
    assert len(bytes(sections["b_nlev"])) == 2 * 2 * 2


@pytest.mark.parametrize("cls", BUILDS)
def test_a_column_grows_past_its_first_room_and_keeps_every_value(cls: type[Any]) -> None:
    raws = [
        msgspec.json.encode(
            {
                "t": T + i,
                "hl": {
                    "channel": "l2Book",
                    "data": {
                        "coin": "BTC",
                        "time": T + i,
                        "levels": [[{"px": f"{100 + i}.5", "sz": "1", "n": i}] * 15] * 2,
                    },
                },
            }
        )
        for i in range(200)  # 6,000 levels: in three pieces (1,024, 2,048, 4,096 values)
    ]
    cols = built(cls, raws, [37, 120], True)
    sections = {name: b"".join(parts) for name, parts in cols.sections().items()}
    px = memoryview(sections["b_px"]).cast("q").tolist()
    assert px == [(100 + i) * 10**8 + 5 * 10**7 for i in range(200) for _ in range(30)]
    assert cols.width == 15  # (both sides full: no padding)
    n = memoryview(sections["b_n"]).cast("q").tolist()
    assert n == [i for i in range(200) for _ in range(30)]


@pytest.mark.parametrize("code", ["q", "i", "h", "B"])
def test_a_column_holds_its_sections_type_and_refuses_past_it(code: str) -> None:
    classes = [daycols.Col] + ([TWIN.Col] if TWIN is not None else [])
    lo, hi = {"q": (-(1 << 63), (1 << 63) - 1), "i": (-(1 << 31), (1 << 31) - 1)}.get(
        code, (-(1 << 15), (1 << 15) - 1) if code == "h" else (0, 255)
    )
    for cls in classes:
        col = cls(code)
        col.push(lo)
        col.push(hi)
        for past in (lo - 1, hi + 1):
            with pytest.raises(OverflowError):
                col.push(past)
        assert len(col) == 2
        dtype = {"q": np.int64, "i": np.int32, "h": np.int16, "B": np.uint8}[code]
        assert np.frombuffer(b"".join(col.pieces()), dtype).tolist() == [lo, hi]


@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["push", "many", "cut"]), st.integers(0, 2_500)), max_size=12
    )
)
@settings(max_examples=60, deadline=None)
def test_a_columns_pieces_hold_what_was_pushed_and_kept(ops: list[tuple[str, int]]) -> None:
    """Pushed one by one or many at once, cut back (an unfit book's levels taken out)
    across its pieces: a column holds what a list would."""
    classes = [daycols.Col] + ([TWIN.Col] if TWIN is not None else [])
    for cls in classes:
        col, model = cls("q"), []
        for what, x in ops:
            if what == "push":
                col.push(x)
                model.append(x)
            elif what == "many":
                values = list(range(len(model), len(model) + x))
                col.push_many(array("q", values) if x % 2 else values)
                model += values
            else:
                keep = x % (len(model) + 1)
                col.truncate(keep)
                del model[keep:]
            assert len(col) == len(model)
        assert col.int64s().tolist() == model
        assert np.frombuffer(b"".join(col.pieces()), np.int64).tolist() == model
