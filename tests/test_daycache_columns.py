"""The day cache's columns (``logs.daycols``, ``logs.dayinputs``): checked once, the same
inputs, the same backtest.

Every market line a cache holds as columns gives back the very ``Line`` the reader
decodes (books in either key order, with whitespace or without, empty sides; prints with
any side; contexts missing fields), its integer columns are what the engine would parse,
and a backtest with a strategy hooking books, prints and contexts is the same, to the
run log's byte, cold, building the cache and warm (Hypothesis over generated days). A
coin whose market data fails a check is not *checked*; a damaged cache is refused in one
line and rebuilt; an old version is rebuilt without a word; synth and a recorder's day
close keep the cache as they write.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.logs import daycache
from arena_tui.logs.daycache import CachedDay, open_day
from arena_tui.logs.daykeep import keep_day
from arena_tui.logs.daylog import DayLog
from arena_tui.logs.logfile import LogReader
from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.market import AssetContext, Book, Trade
from arena_tui.run.parts import Entrant
from arena_tui.strategy import IOC, Context, Strategy
from engine import BookLevels, decode_levels
from engine.book import WHITESPACE_FREE
from engine.inputs import Book as BookMsg
from engine.inputs import Line
from engine.units import parse_e8
from tests import build
from tests.clirun import arena

T = build.T0
HERE = Path(__file__)
HEADER = {
    "arena_log": 1,
    "recording": "synthetic",
    "markets": [
        {"coin": "BTC", "asset": 0, "szDecimals": 5},
        {"coin": "ETH", "asset": 1, "szDecimals": 4},
    ],
}


@st.composite
def decimal_text(draw: st.DrawFn, top: int = 200_000) -> str:
    whole = draw(st.integers(1, top))
    digits = draw(st.integers(0, 3))
    frac = draw(st.integers(0, 10**digits - 1)) if digits else 0
    text = f"{whole}.{frac:0{digits}d}" if digits else str(whole)
    return text + ("0" if digits and draw(st.booleans()) else "")


@st.composite
def book_row(draw: st.DrawFn, t: int, coin: str) -> tuple[dict[str, Any], bool]:
    """An l2Book line, and whether to write it with JSON's optional whitespace."""
    sides = []
    for _ in range(2):
        n = draw(st.integers(0, 4))
        side = []
        for _ in range(n):
            px, sz, count = draw(decimal_text()), draw(decimal_text(50)), draw(st.integers(0, 9))
            side.append(
                {"n": count, "px": px, "sz": sz}
                if draw(st.booleans())
                else {"px": px, "sz": sz, "n": count}
            )
        sides.append(side)
    data = {"coin": coin, "time": t - draw(st.integers(0, 3000)), "levels": sides}
    return {"t": t, "hl": {"channel": "l2Book", "data": data}}, draw(st.booleans())


@st.composite
def days(draw: st.DrawFn) -> list[tuple[dict[str, Any], bool]]:
    """A few minutes of market data of BTC, ETH and DOGE, and ticks."""
    t = T - 2000
    out: list[tuple[dict[str, Any], bool]] = []
    tid = 0
    for _ in range(draw(st.integers(1, 60))):
        t += draw(st.integers(0, 9000))
        kind = draw(st.sampled_from(["book", "book", "trades", "ctx", "tick"]))
        coin = draw(st.sampled_from(["BTC", "ETH", "DOGE"]))
        if kind == "book":
            out.append(draw(book_row(t, coin)))
        elif kind == "trades":
            prints = []
            for _ in range(draw(st.integers(0, 3))):
                tid += draw(st.integers(0, 1))  # a resent print now and then
                p: dict[str, Any] = {"coin": coin, "px": draw(decimal_text()), "tid": tid}
                p |= {"sz": draw(decimal_text(5)), "time": t - draw(st.integers(0, 50))}
                side = draw(st.sampled_from(["B", "A", None, "X"]))
                if side is not None:
                    p["side"] = side
                prints.append(p)
            out.append(({"t": t, "hl": {"channel": "trades", "data": prints}}, False))
        elif kind == "ctx":
            fields = {
                "funding": draw(st.sampled_from([None, "0.0000125", "-0.0001", "0"])),
                "markPx": draw(st.none() | decimal_text()),
                "oraclePx": draw(st.none() | decimal_text()),
            }
            ctx = {k: v for k, v in fields.items() if v is not None}
            data = {"coin": coin, "ctx": ctx}
            out.append(({"t": t, "hl": {"channel": "activeAssetCtx", "data": data}}, False))
        else:
            out.append((build.tick(t), False))
    return out


def encode(rows: list[tuple[dict[str, Any], bool]]) -> bytes:
    lines = [msgspec.json.encode(HEADER)]
    for row, spaced in rows:
        lines.append(json.dumps(row).encode() if spaced else msgspec.json.encode(row))
    return b"\n".join(lines) + b"\n"


def build_cache(path: Path, coins: list[str] | None = None) -> CachedDay:
    reader = LogReader([path], coins=coins, cache=True)
    for _ in reader:
        pass
    (writer,) = reader.finished_writers
    day = writer.commit()
    assert day is not None
    return day


def plain(line: Line) -> Line:
    """``line`` with a book's levels in one form (the cache keeps a log's levels with
    whitespace re-encoded without: the same levels, which the engine need not scan)."""
    hl = line.hl
    if type(hl) is not BookMsg:
        return line
    levels = msgspec.json.encode(decode_levels(hl.data))
    data = msgspec.structs.replace(hl.data, levels=msgspec.Raw(levels))
    return msgspec.structs.replace(line, hl=BookMsg(data=data))


def assert_columns(day: CachedDay, path: Path) -> None:
    """Every line as the reader decodes it; the integer columns as the engine parses."""
    lines = list(LogReader([path]))
    assert [plain(day.line(i)) for i in range(day.n)] == [plain(line) for line in lines]
    px, sz, cnt = day.array("b_px"), day.array("b_sz"), day.array("b_n")
    nlev = day.array("b_nlev").reshape(-1, 2)
    kept = [(i, line) for i, line in enumerate(lines) if day.row[i] >= 0]
    books = [(i, line) for i, line in kept if type(line.hl) is BookMsg]
    assert len(books) == len(nlev)
    for k, (i, line) in enumerate(books):
        assert day.row[i] == k
        sides = msgspec.json.decode(bytes(line.hl.data.levels))  # type: ignore[union-attr]
        for s, side in enumerate(sides):
            assert nlev[k, s] == len(side)
            assert px[k, s, : len(side)].tolist() == [parse_e8(lv["px"]) for lv in side]
            assert sz[k, s, : len(side)].tolist() == [parse_e8(lv["sz"]) for lv in side]
            assert cnt[k, s, : len(side)].tolist() == [lv["n"] for lv in side]
        levels = day.inputs.levels(k)
        assert b" " not in bytes(levels) and msgspec.json.decode(levels) == sides
        # the engine's trusted book (no check, no scan) is its checked one
        cached = day.line(i).hl
        assert type(cached) is BookMsg and type(line.hl) is BookMsg
        fast = BookLevels(cached.data, line.t, WHITESPACE_FREE)
        slow = BookLevels(line.hl.data, line.t)
        assert (fast.two_sided, fast.ints()) == (slow.two_sided, slow.ints())
    prints = [
        p for _, line in kept if line.hl is not None and isinstance(line.hl.data, list)
        for p in line.hl.data
    ]  # fmt: skip
    assert day.array("p_px").tolist() == [parse_e8(p.px) for p in prints]
    assert day.array("p_sz").tolist() == [parse_e8(p.sz) for p in prints]
    assert day.array("p_tid").tolist() == [p.tid for p in prints]
    assert [day.coins[c] for c in day.array("p_coin").tolist()] == [p.coin for p in prints]
    sides = {"": 0, "B": 1, "A": 2}
    assert day.array("p_side").tolist() == [sides.get(p.side, 3) for p in prints]  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=days())
def test_columns_give_back_the_lines_the_reader_decodes(
    rows: list[tuple[dict[str, Any], bool]],
) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.dict(os.environ, {"ARENA_CACHE_DIR": f"{tmp}/cache"}),
    ):
        path = Path(tmp) / "day.jsonl"
        path.write_bytes(encode(rows))
        day = build_cache(path)
        assert_columns(day, path)
        day.close()
        again = open_day(path, day.checked)
        assert again is not None
        assert_columns(again, path)
        again.close()


class Reader(Strategy):
    """Hooks every kind of market data, keeps what it saw, and trades on books."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def on_book(self, ctx: Context, book: Book) -> None:
        self.seen.append(("book", book.coin, book.t, book.time, book.bids, book.asks, book.mid_e8))
        ask, bid = book.best_ask_e8, book.best_bid_e8
        if ask is not None and bid is not None and ctx.rng.random() < 0.3 and ctx.open_slots:
            is_buy = ctx.rng.random() < 0.5
            sz = ctx.sz_e8(book.coin, "0.001" if book.coin == "BTC" else "0.01")
            ctx.order(ctx.asset_of(book.coin), is_buy, ask if is_buy else bid, sz, False, IOC)

    def on_trades(self, ctx: Context, trades: list[Trade]) -> None:
        self.seen.append([(p.coin, p.px_e8, p.sz_e8, p.side, p.tid, p.time) for p in trades])

    def on_asset_ctx(self, ctx: Context, view: AssetContext) -> None:
        self.seen.append(("ctx", view.coin, view.mark_e8, view.oracle_e8, view.funding))


def backtest(path: Path, run_dir: Path, cache: bool) -> tuple[Any, bytes, list[Any]]:
    reader = Reader()
    season = build.season(start=T, end=T + 4 * build.HOUR)
    bt = Backtest(
        RunConfig(cache=cache, seed=5), season, [Entrant("r", reader, HERE)], run_dir=run_dir
    )
    result = bt.run([str(path)])
    fills = [msgspec.to_builtins(f) for f in result.fill_events]
    doc = (result.replay.to_json(), result.inputs, result.own_inputs, fills)
    return doc, (run_dir / "run.jsonl").read_bytes(), reader.seen


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=days())
def test_a_warm_backtest_from_columns_is_the_cold_one(
    rows: list[tuple[dict[str, Any], bool]],
) -> None:
    """Every book, print and context applied and hooked, from the columns when warm."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.dict(os.environ, {"ARENA_CACHE_DIR": f"{tmp}/cache"}),
    ):
        path = Path(tmp) / "day.jsonl"
        last = max(row["t"] for row, _ in rows)
        path.write_bytes(encode([*rows, (build.tick(max(T + 60_000, last + 1)), False)]))
        cold = backtest(path, Path(tmp) / "cold", cache=False)
        building = backtest(path, Path(tmp) / "build", cache=True)
        day = open_day(path, ["BTC", "ETH"])
        assert day is not None, "the cold pass kept no cache"
        day.close()
        warm = backtest(path, Path(tmp) / "warm", cache=True)
        assert building == cold
        assert warm == cold


def test_a_coin_with_bad_market_data_is_not_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    rows = [
        (build.book(T, "BTC", bids=[("100", "1")], asks=[("101", "1")]), False),
        (build.book(T + 1, "DOGE", bids=[("1e5", "1")], asks=[]), False),  # not a decimal
        (build.trades(T + 2, ("SOL", "1.5", "x", T, 1)), False),
        (build.ctx(T + 3, "HYPE", mark="12.5", oracle="12.4", funding="0.0001"), False),
        (build.ctx(T + 4, "ETH", mark="abc"), False),
        # a decimal whose e8 is past int64: its coin unchecked, the cache kept all the same
        (build.trades(T + 5, ("XRP", "100000000000", "1", T, 2)), False),
    ]
    path = tmp_path / "day.jsonl"
    path.write_bytes(encode(rows))
    day = build_cache(path)
    assert day.checked == {"BTC", "HYPE"}
    assert day.row.tolist() == [0, -1, -1, 0, -1, -1]
    assert_columns(day, path)  # the unchecked lines are decoded as they are
    day.close()
    assert open_day(path, ["BTC", "HYPE"]) is not None
    assert open_day(path, ["BTC", "ETH"]) is None


def test_a_damaged_cache_is_refused_in_one_line_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    rows = [
        (build.book(T + i, "BTC", bids=[("100", "1")], asks=[("101", "2")]), False)
        for i in range(50)
    ]
    path = tmp_path / "day.jsonl"
    path.write_bytes(encode(rows))
    keep_day(path).close()  # type: ignore[union-attr]
    (file,) = (tmp_path / "cache").glob("*.day")
    data = bytearray(file.read_bytes())
    meta = daycache.read_meta(bytes(data))
    data[meta.sections["b_px"][0] + 8 * 3] ^= 0x04  # a level's price, a bit flipped
    file.write_bytes(bytes(data))
    capsys.readouterr()
    assert open_day(path, ["BTC"]) is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "day cache" in err and "damaged (arrays checksum)" in err
    assert not file.exists()
    # the next backtest reads the log and caches it again; then it is warm, the same
    cold = backtest(path, tmp_path / "cold", cache=True)
    assert file.exists()
    assert backtest(path, tmp_path / "warm", cache=True) == cold
    # a cache of another version is rebuilt without a word
    data = bytearray(file.read_bytes())
    data[8] = 1  # the preamble's version
    file.write_bytes(bytes(data))
    capsys.readouterr()
    assert open_day(path, ["BTC"]) is None
    assert capsys.readouterr().err == ""
    day = keep_day(path)
    assert day is not None and day.checked == {"BTC"}
    day.close()


def test_synth_and_a_days_close_keep_the_cache(tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("ARENA_CACHE", None)
    out = tmp_path / "synth.jsonl.lz4"
    done = arena(
        "synth", "--coins", "BTC,ETH", "--hours", "0.05", "--seed", "3", "--out", str(out), env=env
    )
    assert done.returncode == 0, done.stderr
    with mock.patch.dict(os.environ, {"ARENA_CACHE_DIR": env["ARENA_CACHE_DIR"]}):
        day = open_day(out, ["BTC", "ETH"])
        assert day is not None and day.checked == {"BTC", "ETH"}
        day.close()
        rec = tmp_path / "rec"
        log = DayLog(rec, HEADER, group_fsync_s=None, background=False)
        log.open(T)
        log.write_hl(T + 5, msgspec.json.encode(build.book(T, "BTC", bids=[("1", "1")])["hl"]))
        log.write_arena(T + build.DAY + 5, {"type": "tick"})  # the next day closes it
        log.close()
        closed = rec / "hl-2026-01-01.jsonl.lz4"
        assert closed.exists()
        day = open_day(closed, ["BTC"])
        assert day is not None and day.n == 1
        day.close()
