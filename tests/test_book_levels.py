"""A book is checked in full when it arrives, and converted only as deep as someone reads.

The engine keeps one ``engine.book.BookLevels`` per applied book; the engine (for a mid, an
activation) and a backtest's strategies (``arena_tui.run.market.Book``) read the same one.
These tests pin what must not change with that: every malformed known field of a season
coin's book is refused at its own line, used or not; a strategy reading levels gets what an
eager decode gives; the mid is the one of the latest two-sided book before a ctx mark.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_tui.logs.logfile import LogError
from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.parts import Entrant
from arena_tui.run.replay import replay
from arena_tui.strategy import Context, Strategy
from engine import Engine, MalformedInput, units
from engine.book import BookLevels
from engine.inputs import BookData
from engine.units import parse_e8
from tests.build import MIN, T0, book, ctx, lines, register, season, tick, trades

HEADER = {"arena_log": 1}


def write(path: Path, rows: list[Any]) -> Path:
    lines = [json.dumps(r, separators=(",", ":")).encode() if not isinstance(r, bytes) else r
             for r in [HEADER, *rows]]  # fmt: skip
    path.write_bytes(b"".join(x + b"\n" for x in lines))
    return path


def deep_book(t: int, coin: str = "BTC", depth: int = 8) -> dict[str, Any]:
    bids = [(f"{100_000 - i}.0", f"0.{i + 1}") for i in range(depth)]
    asks = [(f"{100_001 + i}.5", f"1.{i:02d}") for i in range(depth)]
    return book(t, coin, t - 10, bids, asks)


def set_level(row: dict[str, Any], side: int, depth: int, key: str, value: Any) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(row))
    out["hl"]["data"]["levels"][side][depth][key] = value
    return out


BAD_LEVELS = [
    ("px", "1e5"),
    ("px", "5."),
    ("px", ".5"),
    ("px", ""),
    ("px", "1,000"),
    ("px", 100000),
    ("sz", "abc"),
    ("sz", "-"),
    ("sz", " 1"),
    ("n", 1.5),
    ("n", "3"),
]


def quiet_rows(bad: dict[str, Any]) -> list[Any]:
    """A ctx mark first (so no book sets the mid), nobody trading: the bad book is unused."""
    return [
        register(T0 - MIN, "alice"),
        ctx(T0 + 1, "BTC", mark="100000"),
        deep_book(T0 + 2),
        bad,
        tick(T0 + 3_000),
    ]


@pytest.mark.parametrize(("key", "value"), BAD_LEVELS, ids=[f"{k}={v!r}" for k, v in BAD_LEVELS])
def test_a_malformed_deep_level_nobody_reads_is_refused_at_its_line(
    tmp_path: Path, key: str, value: Any
) -> None:
    bad = set_level(deep_book(T0 + 2), 1, 6, key, value)
    log = write(tmp_path / "bad.jsonl", quiet_rows(bad))
    with pytest.raises(LogError) as info:
        replay([str(log)], season())
    assert info.value.lineno == 5 and info.value.path == str(log)
    assert f"{log}:5:" in str(info.value)


def test_a_missing_level_field_and_a_third_side_are_refused(tmp_path: Path) -> None:
    missing = json.loads(json.dumps(deep_book(T0 + 2)))
    del missing["hl"]["data"]["levels"][0][3]["n"]
    three = json.loads(json.dumps(deep_book(T0 + 2)))
    three["hl"]["data"]["levels"].append([])
    for bad in (missing, three):
        log = write(tmp_path / "bad.jsonl", quiet_rows(bad))
        with pytest.raises(LogError) as info:
            replay([str(log)], season())
        assert info.value.lineno == 5


def test_a_malformed_book_after_the_season_end_is_still_refused(tmp_path: Path) -> None:
    end = season().end
    bad = set_level(deep_book(end + 5), 0, 4, "px", "1e5")
    log = write(tmp_path / "late.jsonl", [ctx(T0 + 1, "BTC", mark="1"), tick(end), bad])
    with pytest.raises(LogError) as info:
        replay([str(log)], season())
    assert info.value.lineno == 4


def test_a_malformed_book_of_another_coin_is_ignored(tmp_path: Path) -> None:
    bad = set_level(deep_book(T0 + 2, "DOGE"), 1, 6, "px", "1e5")
    log = write(tmp_path / "other.jsonl", quiet_rows(bad))
    assert replay([str(log)], season()).inputs == 5


def test_a_backtest_refuses_the_same_line(tmp_path: Path) -> None:
    bad = set_level(deep_book(T0 + 2), 1, 6, "sz", "1e-3")
    log = write(tmp_path / "bad.jsonl", quiet_rows(bad)[1:])
    bt = Backtest(RunConfig(cache=False), season(), [])
    with pytest.raises(LogError) as info:
        bt.run([str(log)])
    assert info.value.lineno == 4


# ---- the lazy view equals the eager decode ----------------------------------------------

DECIMAL = st.from_regex(r"-?[0-9]{1,7}(\.[0-9]{1,10})?", fullmatch=True)
ALMOST = st.one_of(DECIMAL, st.text(alphabet="0123456789.-e+ ,", min_size=0, max_size=6))
LEVEL = st.tuples(DECIMAL, DECIMAL, st.integers(-(2**63), 2**63 - 1))


def encode_side(levels: list[tuple[str, str, int]], form: str) -> bytes:
    parts = []
    for px, sz, n in levels:
        if form == "hl":
            parts.append(b'{"px":"%s","sz":"%s","n":%d}' % (px.encode(), sz.encode(), n))
        elif form == "n-first":
            parts.append(b'{"n":%d,"px":"%s","sz":"%s"}' % (n, px.encode(), sz.encode()))
        else:  # another key order, spaces, an unknown key: valid, judged by the full decode
            parts.append(
                b'{ "sz" : "%s", "x": [1], "n": %d, "px": "%s" }' % (sz.encode(), n, px.encode())
            )
    return b"[" + b",".join(parts) + b"]"


def book_data(bids: list[Any], asks: list[Any], form: str) -> BookData:
    raw = b"[" + encode_side(bids, form) + b"," + encode_side(asks, form) + b"]"
    return BookData(coin="BTC", time=T0, levels=msgspec.Raw(raw))


def eager(levels: list[tuple[str, str, int]]) -> list[tuple[int, int, int]]:
    return [(parse_e8(px), parse_e8(sz), n) for px, sz, n in levels]


@settings(max_examples=300, deadline=None)
@given(
    bids=st.lists(LEVEL, max_size=6),
    asks=st.lists(LEVEL, max_size=6),
    form=st.sampled_from(["hl", "n-first", "other"]),
    order=st.sampled_from(["top", "ints", "mid"]),
)
def test_lazy_view_equals_the_eager_decode(
    bids: list[Any], asks: list[Any], form: str, order: str
) -> None:
    view = BookLevels(book_data(bids, asks, form), T0 + 5)
    want_bids, want_asks = eager(bids), eager(asks)
    want_mid = units.tdiv(want_bids[0][0] + want_asks[0][0], 2) if want_bids and want_asks else None
    assert view.two_sided == bool(bids and asks)
    if order == "top":  # the top first, then everything: the same numbers either way
        assert view.best_px(0) == (want_bids[0][0] if want_bids else None)
        assert view.best_px(1) == (want_asks[0][0] if want_asks else None)
    elif order == "mid":
        assert view.mid() == want_mid
    assert view.ints() == (want_bids, want_asks)
    assert view.best_px(0) == (want_bids[0][0] if want_bids else None)
    assert view.mid() == want_mid
    assert [(lv.px, lv.sz, lv.n) for lv in view.sides()[1]] == asks


@settings(max_examples=400, deadline=None)
@given(
    levels=st.lists(st.tuples(ALMOST, ALMOST, st.integers(0, 99)), min_size=1, max_size=4),
    form=st.sampled_from(["hl", "n-first", "other"]),
)
def test_the_fast_check_accepts_exactly_what_the_full_decode_accepts(
    levels: list[tuple[str, str, int]], form: str
) -> None:
    def ok(text: str) -> bool:
        try:
            parse_e8(text)
        except ValueError:
            return False
        return True

    good = all(ok(px) and ok(sz) for px, sz, _ in levels)
    data = book_data(levels, [], form)
    if good:
        BookLevels(data, T0)
    else:
        with pytest.raises(MalformedInput, match=r"l2Book levels\[0\]\[\d\]\.(px|sz)"):
            BookLevels(data, T0)


# ---- the mid: the latest two-sided book before a ctx mark, taken when read --------------


def test_the_mark_is_the_latest_two_sided_book_mid_then_the_ctx() -> None:
    eng = Engine(season())
    a = eng.by_coin["BTC"]
    rows = [
        book(T0 + 1, "BTC", bids=[("100", "1")], asks=[("102", "1")]),
        book(T0 + 2, "BTC", bids=[("200", "1")], asks=[("203", "1")]),
        book(T0 + 3, "BTC", bids=[], asks=[("500", "1")]),  # an empty side: no new mid
    ]
    for line in lines(rows):
        eng.apply(line)
    assert a.mark == 201_50000000  # tdiv(200 + 203, 2) in e8
    (line,) = lines([trades(T0 + 4, ("BTC", "7", "1", T0 + 4, 1))])
    eng.apply(line)
    assert a.mark == 201_50000000
    for line in lines(
        [ctx(T0 + 5, "BTC", mark="300"), book(T0 + 6, "BTC", bids=[("1", "1")], asks=[("3", "1")])]
    ):
        eng.apply(line)
    assert a.mark == 300 * 10**8


# ---- a strategy's view is the engine's book ---------------------------------------------


class Reader(Strategy):
    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def on_book(self, ctx: Context, book: Any) -> None:
        market = ctx.market(book.coin)
        assert id(market.book) == id(book)  # the same view for the whole input
        self.seen.append((book.coin, book.t, book.time, book.best_bid_e8, book.best_ask_e8,
                          book.mid_e8, book.bids, book.asks))  # fmt: skip


def test_a_strategy_reading_deep_levels_gets_the_eager_decode(tmp_path: Path) -> None:
    rows = [deep_book(T0 - 1_000 + i * 1_000, depth=3 + i % 5) for i in range(8)]
    rows.insert(3, book(T0 + 1_500, "BTC", bids=[], asks=[("1.5", "2")]))
    log = write(tmp_path / "books.jsonl", rows)
    reader = Reader()
    bt = Backtest(RunConfig(cache=False), season(), [Entrant("reader", reader, tmp_path / "r.py")])
    bt.run([str(log)])
    want = []
    for row in rows:
        if row["t"] < T0:
            continue  # before the start: the strategy is not registered yet
        data = row["hl"]["data"]
        bids = [(parse_e8(lv["px"]), parse_e8(lv["sz"]), lv["n"]) for lv in data["levels"][0]]
        asks = [(parse_e8(lv["px"]), parse_e8(lv["sz"]), lv["n"]) for lv in data["levels"][1]]
        best_bid = bids[0][0] if bids else None
        best_ask = asks[0][0] if asks else None
        mid = None if not bids or not asks else units.tdiv(bids[0][0] + asks[0][0], 2)
        want.append(("BTC", row["t"], data["time"], best_bid, best_ask, mid, bids, asks))
    assert reader.seen == want


# ---- the decimal memo keeps what is still in use ----------------------------------------


def test_a_price_in_use_survives_a_full_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clearing the memo when full re-parsed every price in use (a thrash every 8,192)."""
    parsed: list[str] = []
    real = units._parse_e8

    def counting(text: str) -> int:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(units, "_parse_e8", counting)
    monkeypatch.setattr(units, "_MEMO_MAX", 16)
    units.E8_MEMO.clear()
    for i in range(200):
        assert parse_e8("105055.5") == 105_055_50_000_000
        assert parse_e8(f"{i}.25") == i * 10**8 + 25_000_000
    assert parsed.count("105055.5") == 1
    assert len(units.E8_MEMO) <= 16  # still bounded
