"""A book's levels read straight from their bytes (``logs.levelscan``): the reference's answers.

The reference is what the reader did before: a full msgspec decode of the levels into
``Level`` objects and ``engine.units.parse_e8`` of every price and size. For generated books,
in Hyperliquid's form and malformed in the ways a feed or an importer can be (exponents,
leading zeros, too many decimals, negative and huge numbers, whitespace, other key orders,
extra keys, escapes, numbers where strings belong), every way of reading them (the regular
expressions, the byte scanner as Python, its compiled build when there is one) gives the
reference's integers or leaves the book to the full decode, and says "fast form" exactly
when the engine's own check does. The day cache's columns built with them are the
reference's byte for byte (the shipped recordings, generated days), and ``arena logs check``
refuses exactly the lines it refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.logs import daycols, levelscan, logcheck
from arena_tui.logs.daycols import Columns, DayColumns
from arena_tui.logs.dayformat import UNREAD
from arena_tui.logs.logfile import BadLine, decode_line, iter_raw_lines
from engine.book import match_fast_form as engine_fast_form
from engine.inputs import Level
from engine.units import parse_e8

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = sorted((ROOT / "recordings").glob("*.jsonl*"))
_LEVELS = msgspec.json.Decoder(tuple[list[Level], list[Level]])
Got = tuple[list[int], list[int], list[int], int] | None


def reference(raw: bytes) -> Got | str:
    """The levels as the reader decoded them before, or "refused"."""
    try:
        sides = _LEVELS.decode(raw)
        every = [lv for side in sides for lv in side]
        pxs = [parse_e8(lv.px) for lv in every]
        return pxs, [parse_e8(lv.sz) for lv in every], [lv.n for lv in every], len(sides[0])
    except (msgspec.DecodeError, ValueError):
        return "refused"


def twin() -> Any:
    """The compiled build, when this install has a current one (else None)."""
    return levelscan._compiled_twin()


def as_lists(read: Any) -> Any:
    """A reader whose numbers come as lists: the expressions give lists, the scanner int64
    arrays (the same numbers: compared item by item)."""

    def listed(raw: bytes) -> Any:
        got = read(raw)
        if got is None:
            return None
        px, sz, n, bids = got
        return list(px), list(sz), list(n), bids

    return listed


def readers() -> list[Any]:
    out = [levelscan.match_levels, levelscan.scan_levels, levelscan.levels_e8]
    built = twin()
    return [as_lists(read) for read in (out if built is None else [*out, built.scan_levels])]


def checkers() -> list[Any]:
    out = [levelscan.match_fast_form, levelscan.scan_fast_form, levelscan.fast_form]
    built = twin()
    return out if built is None else [*out, built.scan_fast_form]


# ---- generated books: mostly Hyperliquid's form, often not --------------------------------

DIGITS = st.text("0123456789", min_size=1, max_size=12)


@st.composite
def decimal(draw: st.DrawFn) -> str:
    """A decimal string's inside: valid most of the time, in every shape parse_e8 meets."""
    kind = draw(st.integers(0, 9))
    if kind <= 5:  # valid: maybe negative, leading zeros, many decimals
        text = draw(st.sampled_from(["", "-"])) + draw(DIGITS)
        if draw(st.booleans()):
            text += "." + draw(st.text("0123456789", min_size=1, max_size=20))
        return text
    if kind == 6:  # huge: past int64 as e8, or just under it
        sign = draw(st.sampled_from(["", "-"]))
        return sign + draw(st.text("0123456789", min_size=10, max_size=30))
    return draw(
        st.sampled_from(
            [
                "1e5",
                "1.5E-3",
                ".5",
                "5.",
                "",
                "+1",
                " 1",
                "1 ",
                "1_000",
                "NaN",
                "1.2.3",
                "--1",
                "-",
                "0x10",
                "\\u0031",
                "\u0661",
                "1,5",
            ]
        )
    )


@st.composite
def count(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 7))
    if kind <= 4:
        return str(draw(st.integers(-5, 10**6)))
    if kind == 5:  # near and past int64
        return str(draw(st.integers(10**17, 2**64)) * draw(st.sampled_from([1, -1])))
    return draw(st.sampled_from(["007", "-0", "1.0", '"3"', "1e2", "null", "00"]))


@st.composite
def level(draw: st.DrawFn) -> str:
    px, sz, n = f'"{draw(decimal())}"', f'"{draw(decimal())}"', draw(count())
    if draw(st.integers(0, 19)) == 0:
        px = draw(st.sampled_from(["1.5", "100", "null"]))  # a number, not a string
    order = draw(st.integers(0, 9))
    fields = [("px", px), ("sz", sz), ("n", n)]
    if order == 7:
        fields = [fields[1], fields[0], fields[2]]
    elif order == 8:
        fields.append(("x", '"extra"'))
    elif order == 9:
        fields = fields[:2]
    elif order >= 4:
        fields = [fields[2], fields[0], fields[1]]
    sep = draw(st.sampled_from([",", ",", ",", ", ", ",\n"]))
    colon = draw(st.sampled_from([":", ":", ":", ": "]))
    return "{" + sep.join(f'"{k}"{colon}{v}' for k, v in fields) + "}"


@st.composite
def book(draw: st.DrawFn) -> bytes:
    sides = []
    for _ in range(2):
        levels = draw(st.lists(level(), max_size=4))
        sides.append("[" + ",".join(levels) + "]")
    text = "[" + draw(st.sampled_from([",", ",", ", "])).join(sides) + "]"
    if draw(st.integers(0, 19)) == 0:
        text = draw(st.sampled_from([" ", "\t", ""])) + text + draw(st.sampled_from(["\n", " "]))
    return text.encode()


SETTINGS = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(book())
def test_every_reader_gives_the_reference_or_leaves_the_book_to_it(raw: bytes) -> None:
    ref = reference(raw)
    answers = [read(raw) for read in readers()]
    assert all(a == answers[0] for a in answers), (raw, answers)
    fast = engine_fast_form(raw)
    assert [check(raw) for check in checkers()] == [fast] * len(checkers())
    assert (answers[0] is not None) == fast
    if fast:  # the fast form never fails the reader's checks; the numbers are its own
        assert answers[0] == ref


@pytest.mark.parametrize(
    "raw",
    [
        b"[[],[]]",
        b'[[{"px":"101946.0","sz":"1.03009","n":9}],[]]',
        b'[[],[{"n":3,"px":"-0.000000019","sz":"007.5"}]]',
        b'[[{"px":"99999999999.99999999","sz":"1","n":999999999999999999}],[]]',  # past _WHOLE_MAX
        b'[[{"px":"9999999999.999999999","sz":"-9999999999","n":-0}],[]]',  # just under it
        b'[[{"px":"92233720368.54775808","sz":"1","n":1}],[]]',  # past int64 as e8
        b'[[{"px":"1","sz":"1","n":1000000000000000000}],[]]',  # n of 19 digits: the full decode
        b'[[{"px":"1","sz":"1","n":1}] ,[]]',
        b'[[{"px":"1","sz":"1","n":1},{"n":1,"px":"1","sz":"1"}],[]]',  # mixed orders
        # the shortest levels there are: the scanner's room (a level per 25 bytes) holds them
        b"[[" + b",".join([b'{"px":"1","sz":"1","n":1}'] * 60) + b'],[{"px":"2","sz":"1","n":1}]]',
    ],
)
def test_edges(raw: bytes) -> None:
    answers = [read(raw) for read in readers()]
    assert all(a == answers[0] for a in answers)
    assert (answers[0] is not None) == engine_fast_form(raw)
    if answers[0] is not None:
        assert answers[0] == reference(raw)


# ---- the day cache's columns: the reference's, byte for byte ------------------------------


def reference_columns(raws: list[bytes], lines: list[Any]) -> DayColumns:
    cols = Columns()
    with mock.patch.object(daycols, "levels_e8", return_value=None):  # the full decode alone
        cols.add(raws, lines, 0)
    return cols


def new_columns(raws: list[bytes], lines: list[Any]) -> DayColumns:
    cols = Columns()
    cols.add(raws, lines, 0)
    return cols


def checked_columns(raws: list[bytes], lines: list[Any]) -> DayColumns:
    """Built as ``arena import`` builds them: each book's levels as its check read them
    (``logcheck.check_and_read``); a line the check refuses, read by the columns."""
    read = []
    for raw in raws:
        try:
            read.append(logcheck.check_and_read(raw)[1])
        except BadLine:
            read.append(UNREAD)
    cols = Columns()
    cols.add(raws, lines, 0, read)
    return cols


def joined(cols: DayColumns) -> dict[str, bytes]:
    """Each section's bytes, its pieces joined."""
    return {name: b"".join(parts) for name, parts in cols.sections().items()}


def assert_same(raws: list[bytes]) -> None:
    lines = [decode_line(raw) for raw in raws]
    old = reference_columns(raws, lines)
    for new in (new_columns(raws, lines), checked_columns(raws, lines)):
        assert joined(new) == joined(old)
        assert (new.failed, new.width, new.ids) == (old.failed, old.width, old.ids)


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_the_shipped_recordings_columns_are_the_reference_s(path: Path) -> None:
    raws = list(iter_raw_lines(path))[1:]
    assert sum(b'"l2Book"' in raw for raw in raws) > 10
    assert_same(raws)


def book_line(t: int, coin: str, levels: bytes, arena: bool) -> bytes:
    data = b'{"coin":"%s","time":%d,"levels":%s}' % (coin.encode(), t, levels)
    extra = b',"arena":{"type":"tick"}' if arena else b""
    return b'{"t":%d,"hl":{"channel":"l2Book","data":%s}%s}' % (t, data, extra)


@SETTINGS
@given(st.lists(st.tuples(book(), st.sampled_from(["BTC", "ETH"]), st.integers(0, 30)), max_size=8))
def test_generated_books_columns_are_the_reference_s(rows: list[tuple[bytes, str, int]]) -> None:
    raws = []
    for i, (levels, coin, odd) in enumerate(rows):
        raw = book_line(1_000 + i, coin, levels, arena=odd == 0)
        try:
            decode_line(raw)
        except BadLine:
            continue  # the reader refuses it before any column is built
        raws.append(raw)
    assert_same(raws)


def padded(cols: DayColumns) -> dict[str, bytes]:
    """The level sections as the writer built them before: every side padded to the width."""
    counts = cols.cols["b_nlev"].int64s()
    filled = np.arange(cols.width) < counts[:, None]
    out = {}
    for name in ("b_px", "b_sz", "b_n"):
        table = np.zeros((len(counts), cols.width), dtype=np.int64)
        table[filled] = cols.cols[name].int64s()
        out[name] = table.tobytes()
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=6), st.booleans())
def test_level_sections_are_the_padded_table(sides: list[tuple[int, int]], full: bool) -> None:
    width = max((max(b, a) for b, a in sides), default=0)
    raws = []
    for i, (bids, asks) in enumerate(sides):
        bids, asks = (width, width) if full else (bids, asks)
        side = [
            ",".join(f'{{"px":"{i}.{k}","sz":"{k + 1}","n":{k}}}' for k in range(m))
            for m in (bids, asks)
        ]
        raws.append(book_line(1_000 + i, "BTC", f"[[{side[0]}],[{side[1]}]]".encode(), False))
    cols = new_columns(raws, [decode_line(raw) for raw in raws])
    got = joined(cols)
    assert {name: got[name] for name in ("b_px", "b_sz", "b_n")} == padded(cols)


@given(st.binary(max_size=60), st.binary(min_size=1, max_size=40))
def test_found_is_find(raw: bytes, part: bytes) -> None:
    for haystack in (raw, raw + part, part + raw + part, raw + part[:-1] + raw + part):
        assert daycols._found(haystack, part) == haystack.find(part)


# ---- arena logs check / import: the same refusals ------------------------------------------


def judged(raw: bytes) -> str:
    try:
        logcheck.check_line(raw)
    except BadLine as exc:
        return f"refused: {exc}"
    return "accepted"


@SETTINGS
@given(book())
def test_check_line_refuses_what_it_refused(levels: bytes) -> None:
    raw = book_line(1_000, "BTC", levels, arena=False)
    now = judged(raw)
    with mock.patch.object(logcheck, "fast_form", return_value=False):  # the decode alone
        before = judged(raw)
    assert now == before
