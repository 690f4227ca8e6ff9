"""The version-1 log on disk: LogReader, LogWriter, iter_raw_lines, read_header.

Contract: /work/shared/design/season0-engine.md, "Log format (version 1)". Every rejection
must name the file and the exact line number (the header is line 1, the first input line 2).
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import lz4.frame
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.logs.logfile import LogError, LogReader, iter_raw_lines, read_header
from arena_tui.logs.writer import LogWriter
from arena_tui.run.replay import replay
from engine import Line
from engine.inputs import Book, Gap, Order, Register, Tick, Trades
from tests.build import MIN, T0, book, cancel, chunked, ctx, order, register, season, tick, trades

HEADER: dict[str, Any] = {
    "arena_log": 1,
    "recording": "synthetic",
    "markets": [
        {"coin": "BTC", "asset": 0, "szDecimals": 5},
        {"coin": "ETH", "asset": 1, "szDecimals": 4},
    ],
}
COINS = ("BTC", "ETH")
SUFFIXES = ("", ".gz", ".lz4")


# ---- helpers ---------------------------------------------------------------------------


def enc(row: Any) -> bytes:
    return json.dumps(row, separators=(",", ":")).encode("utf-8")


def body(rows: list[Any], *, header: Any = HEADER, tail: bytes = b"") -> bytes:
    """A log's uncompressed bytes: the header, one line per row (bytes kept as given)."""
    lines = [header if isinstance(header, bytes) else enc(header)]
    lines += [r if isinstance(r, bytes) else enc(r) for r in rows]
    return b"".join(x + b"\n" for x in lines) + tail


def put(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path``, compressed as its extension says."""
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    elif path.name.endswith(".lz4"):
        path.write_bytes(lz4.frame.compress(data))
    else:
        path.write_bytes(data)
    return path


def read_all(*paths: Path, coins: tuple[str, ...] | None = COINS) -> list[Line]:
    return list(LogReader([str(p) for p in paths], coins=coins))


def rejected(*paths: Path, coins: tuple[str, ...] | None = COINS) -> pytest.ExceptionInfo[LogError]:
    with pytest.raises(LogError) as info:
        read_all(*paths, coins=coins)
    return info


def assert_names(info: pytest.ExceptionInfo[LogError], path: Path, lineno: int) -> None:
    """The error names the file and the exact line, in its message and its fields."""
    msg = str(info.value)
    assert str(path) in msg
    assert f"{path}:{lineno}:" in msg or f"line {lineno}" in msg, msg
    assert info.value.lineno == lineno
    assert info.value.path == str(path)


def setp(row: dict[str, Any], where: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``row`` with the field at ``where`` set to ``value``."""
    out = copy.deepcopy(row)
    node: Any = out
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return out


def delp(row: dict[str, Any], where: tuple[str | int, ...]) -> dict[str, Any]:
    out = copy.deepcopy(row)
    node: Any = out
    for key in where[:-1]:
        node = node[key]
    del node[where[-1]]
    return out


T = T0 + 10_000
GOOD_ROWS: list[dict[str, Any]] = [
    register(T, "alice"),
    book(T + 1, "BTC", time=T, bids=[("100000.0", "1.5")], asks=[("100001.0", "2")]),
    trades(T + 2, ("BTC", "100000.5", "0.01", T + 1, 7), ("BTC", "100001", "0.2", T + 1, 8)),
    ctx(T + 3, "BTC", mark="100000.0", oracle="99999.0", funding="0.0000125"),
    order(T + 4, "alice", 0, True, 100_000 * 10**8, 100_000, cloid="0x2a"),
    cancel(T + 5, "alice", oid=1),
    cancel(T + 5, "alice", cloid="0x2A"),
    tick(T + 1000),
    {"t": T + 2000, "arena": {"type": "gap", "from": T + 1000, "to": T + 1900, "reason": "x"}},
]

# Rows with an integer field, and where that field is.
BOOK = book(T + 3, "BTC", time=T + 2, bids=[("1.0", "1")], asks=[("2.0", "1")])
TRADE = trades(T + 3, ("BTC", "1.0", "1", T + 2, 9))
ORDER = order(T + 3, "alice", 0, True, 10**13, 100_000, cloid="0x1")
CANCEL = cancel(T + 3, "alice", oid=3)
GAP: dict[str, Any] = {"t": T + 3, "arena": {"type": "gap", "from": T, "to": T + 2}}
TICK = tick(T + 3)
INT_FIELDS: list[tuple[str, dict[str, Any], tuple[str | int, ...]]] = [
    ("t", TICK, ("t",)),
    ("book.time", BOOK, ("hl", "data", "time")),
    ("trade.time", TRADE, ("hl", "data", 0, "time")),
    ("trade.tid", TRADE, ("hl", "data", 0, "tid")),
    ("order.asset", ORDER, ("arena", "asset")),
    ("order.limitPx", ORDER, ("arena", "limitPx")),
    ("order.sz", ORDER, ("arena", "sz")),
    ("order.encodedTif", ORDER, ("arena", "encodedTif")),
    ("cancel.oid", CANCEL, ("arena", "oid")),
    ("gap.from", GAP, ("arena", "from")),
    ("gap.to", GAP, ("arena", "to")),
]


def with_bad_line(tmp_path: Path, bad: bytes | dict[str, Any], suffix: str = "") -> Path:
    """A log whose line 4 is ``bad`` (lines 2 and 3 are good, and a good line follows)."""
    rows: list[Any] = [register(T, "alice"), tick(T + 1), bad, tick(T + 5)]
    return put(tmp_path / f"bad.jsonl{suffix}", body(rows))


# ---- the same lines and hash from plain, .gz and .lz4 ----------------------------------


def test_plain_gz_lz4_give_identical_lines_and_sha256(tmp_path: Path) -> None:
    tail = b'{"t":%d,"arena":{"type":"ti' % (T + 9999)
    data = body(GOOD_ROWS, tail=tail)
    results = []
    for suffix in SUFFIXES:
        reader = LogReader([str(put(tmp_path / f"log.jsonl{suffix}", data))], coins=COINS)
        results.append((list(reader), reader.sha256))
    plain_lines, plain_sha = results[0]
    assert [line.t for line in plain_lines] == [r["t"] for r in GOOD_ROWS]
    assert plain_sha == hashlib.sha256(data).hexdigest()  # the torn tail is hashed too
    for lines, sha in results[1:]:
        assert lines == plain_lines
        assert sha == plain_sha


def test_lines_decode_to_the_engine_inputs(tmp_path: Path) -> None:
    lines = read_all(put(tmp_path / "log.jsonl", body(GOOD_ROWS)))
    assert isinstance(lines[0].arena, Register) and lines[0].arena.entry == "alice"
    assert isinstance(lines[1].hl, Book) and lines[1].hl.data.time == T
    assert isinstance(lines[2].hl, Trades)
    assert [(x.px, x.sz, x.time, x.tid) for x in lines[2].hl.data] == [
        ("100000.5", "0.01", T + 1, 7),
        ("100001", "0.2", T + 1, 8),
    ]
    o = lines[4].arena
    assert isinstance(o, Order)
    assert (o.asset, o.isBuy, o.limitPx, o.sz, o.reduceOnly, o.encodedTif, o.cloid) == (
        0,
        True,
        100_000 * 10**8,
        100_000,
        False,
        2,
        "0x2a",
    )
    assert isinstance(lines[7].arena, Tick)
    gap = lines[8].arena
    assert isinstance(gap, Gap) and (gap.from_, gap.to) == (T + 1000, T + 1900)


def test_sha256_covers_all_files_in_the_order_given(tmp_path: Path) -> None:
    a = body([tick(T)], tail=b"torn")
    b = body([tick(T + 1)], header={"arena_log": 1, "season": "x"})
    pa = put(tmp_path / "a.jsonl.gz", a)
    pb = put(tmp_path / "b.jsonl.lz4", b)
    reader = LogReader([str(pa), str(pb)])
    assert [line.t for line in reader] == [T, T + 1]
    assert reader.sha256 == hashlib.sha256(a + b).hexdigest()
    assert reader.sha256 != hashlib.sha256(b + a).hexdigest()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(st.integers(0, 3), max_size=25),
    pads=st.lists(st.text(alphabet='ab é"\\', max_size=40), min_size=25, max_size=25),
    tail=st.binary(max_size=30).filter(lambda b: b"\n" not in b),
    chunk=st.integers(1, 64),
    ahead=st.booleans(),
)
def test_line_splitting_is_independent_of_chunk_size(
    tmp_path: Path, steps: list[int], pads: list[str], tail: bytes, chunk: int, ahead: bool
) -> None:
    t = T
    rows: list[dict[str, Any]] = []
    for step, pad in zip(steps, pads, strict=False):
        t += step
        rows.append({"t": t, "arena": {"type": "register", "entry": pad}})
    data = body(rows, tail=tail)
    with chunked(chunk, ahead):
        for suffix in SUFFIXES:
            reader = LogReader([str(put(tmp_path / f"h.jsonl{suffix}", data))])
            got = list(reader)
            assert [(x.t, x.arena) for x in got] == [
                (r["t"], Register(entry=r["arena"]["entry"])) for r in rows
            ]
            assert reader.sha256 == hashlib.sha256(data).hexdigest()


def test_book_levels_stay_raw_bytes(tmp_path: Path) -> None:
    levels = b'[[{"px":"100.5", "sz":"1","n":3}] ,[{"n":1,"sz":"2.25","px":"101"}]]'
    raw = b'{"t":%d,"hl":{"channel":"l2Book","data":{"coin":"BTC","time":%d,"levels":%s}}}' % (
        T,
        T - 5,
        levels,
    )
    (line,) = read_all(put(tmp_path / "b.jsonl", body([raw])))
    assert isinstance(line.hl, Book)
    assert isinstance(line.hl.data.levels, msgspec.Raw)
    assert bytes(line.hl.data.levels) == levels  # verbatim, spacing and key order kept


def test_torn_final_line_is_ignored_even_when_it_is_valid_json(tmp_path: Path) -> None:
    for tail in (enc(tick(T + 50)), b'{"t":', b"\xff\xfe garbage"):
        data = body([tick(T), tick(T + 1)], tail=tail)
        p = put(tmp_path / "torn.jsonl", data)
        reader = LogReader([str(p)])
        assert [line.t for line in reader] == [T, T + 1]
        assert reader.sha256 == hashlib.sha256(data).hexdigest()
        assert list(iter_raw_lines(p)) == [enc(HEADER), enc(tick(T)), enc(tick(T + 1))]


def test_equal_t_is_allowed_within_and_across_files(tmp_path: Path) -> None:
    a = put(tmp_path / "a.jsonl", body([tick(T), register(T, "x")]))
    b = put(tmp_path / "b.jsonl", body([tick(T)]))
    assert [line.t for line in read_all(a, b)] == [T, T, T]


# ---- rejections: file and exact line ---------------------------------------------------


BAD_LINES: list[tuple[str, bytes | dict[str, Any]]] = [
    ("truncated-json", b'{"t":%d,"arena":{"type":"tick"}' % (T + 2)),
    ("garbage", b"hello"),
    ("blank-line", b""),
    ("trailing-comma", b'{"t":%d,}' % (T + 2)),
    ("array", b"[%d]" % (T + 2)),
    ("number", b"%d" % (T + 2)),
    ("string", b'"t"'),
    ("null", b"null"),
    ("no-t", {"arena": {"type": "tick"}}),
    ("no-t-other-channel", {"hl": {"channel": "pong"}}),
    ("t-null", {"t": None, "arena": {"type": "tick"}}),
    ("t-bool", {"t": True, "arena": {"type": "tick"}}),
    ("t-lower", tick(T)),
    ("t-lower-other-channel", {"t": T, "hl": {"channel": "pong"}}),
    ("t-lower-other-arena-type", {"t": T, "arena": {"type": "hello"}}),
    ("t-float-other-channel", {"t": T + 2.5, "hl": {"channel": "bbo", "data": {}}}),
    ("t-string-other-coin", {"t": str(T + 2), "hl": {"channel": "l2Book", "data": {}}}),
]
for _name, _row, _where in INT_FIELDS:
    BAD_LINES += [
        (f"{_name}-float", setp(_row, _where, T + 2.5)),
        (f"{_name}-integral-float", setp(_row, _where, float(T + 2))),
        (f"{_name}-exponent", setp(_row, _where, 1e3)),
        (f"{_name}-string", setp(_row, _where, str(T + 2))),
    ]
for _field, _value in (("isBuy", 1), ("isBuy", "true"), ("isBuy", None), ("reduceOnly", 0)):
    BAD_LINES.append((f"order.{_field}={_value!r}", setp(ORDER, ("arena", _field), _value)))
for _field in ("entry", "asset", "isBuy", "limitPx", "sz", "reduceOnly", "encodedTif"):
    BAD_LINES.append((f"order-missing-{_field}", delp(ORDER, ("arena", _field))))
BAD_LINES += [
    ("trade-px-number", setp(TRADE, ("hl", "data", 0, "px"), 1.5)),
    ("trade-sz-number", setp(TRADE, ("hl", "data", 0, "sz"), 1)),
    ("ctx-markPx-number", setp(ctx(T + 3, "BTC", mark="1.0"), ("hl", "data", "ctx", "markPx"), 1)),
    ("book-coin-missing", delp(BOOK, ("hl", "data", "coin"))),
    (
        "second-coin-of-two-in-trades",
        setp(
            trades(T + 3, ("DOGE", "1.0", "1", T + 2, 1), ("ETH", "1.0", "1", T + 2, 2)),
            ("hl", "data", 1, "tid"),
            2.0,
        ),
    ),
    ("cancel-entry-number", setp(CANCEL, ("arena", "entry"), 5)),
    ("both-hl-and-arena", {"t": T + 3, "hl": {"channel": "pong"}, "arena": {"type": "tick"}}),
    ("arena-not-object", {"t": T + 3, "arena": "tick"}),
]


@pytest.mark.parametrize(("name", "bad"), BAD_LINES, ids=[n for n, _ in BAD_LINES])
def test_bad_line_is_rejected_with_file_and_line(
    tmp_path: Path, name: str, bad: bytes | dict[str, Any]
) -> None:
    p = with_bad_line(tmp_path, bad)
    assert_names(rejected(p), p, 4)


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize(
    "bad",
    [b"{", tick(T), setp(TICK, ("t",), float(T + 2)), delp(ORDER, ("arena", "sz"))],
    ids=["not-json", "t-lower", "t-float", "missing-sz"],
)
def test_compressed_logs_report_the_same_line(
    tmp_path: Path, suffix: str, bad: bytes | dict[str, Any]
) -> None:
    p = with_bad_line(tmp_path, bad, suffix)
    assert_names(rejected(p), p, 4)


def test_lines_before_the_bad_one_are_yielded_first(tmp_path: Path) -> None:
    p = with_bad_line(tmp_path, b"{")
    seen: list[int] = []
    with pytest.raises(LogError):
        seen.extend(line.t for line in LogReader([str(p)]))
    assert seen == [T, T + 1]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_t_lower_than_the_previous_file_is_rejected(tmp_path: Path, suffix: str) -> None:
    a = put(tmp_path / f"a.jsonl{suffix}", body([tick(T), tick(T + 10)]))
    b = put(tmp_path / f"b.jsonl{suffix}", body([tick(T + 9), tick(T + 20)]))
    info = rejected(a, b)
    assert_names(info, b, 2)
    assert str(a) not in str(info.value).replace(str(b), "")


def test_rejection_in_a_later_file_counts_lines_from_its_own_header(tmp_path: Path) -> None:
    a = put(tmp_path / "a.jsonl", body([tick(T + i) for i in range(7)]))
    b = put(tmp_path / "b.jsonl.gz", body([tick(T + 10), b"{"]))
    assert_names(rejected(a, b), b, 3)


# ---- headers ---------------------------------------------------------------------------


BAD_HEADERS: list[tuple[str, bytes]] = [
    ("missing-header", enc(tick(T - 1))),
    ("version-2", b'{"arena_log":2,"recording":"synthetic"}'),
    ("version-0", b'{"arena_log":0}'),
    ("version-string", b'{"arena_log":"1"}'),
    ("version-float", b'{"arena_log":1.0}'),
    ("not-json", b"arena_log 1"),
    ("not-object", b"[1]"),
]


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize(("name", "header"), BAD_HEADERS, ids=[n for n, _ in BAD_HEADERS])
def test_bad_header_is_rejected_at_line_1(
    tmp_path: Path, suffix: str, name: str, header: bytes
) -> None:
    p = put(tmp_path / f"h.jsonl{suffix}", body([tick(T)], header=header))
    assert_names(rejected(p), p, 1)
    with pytest.raises(LogError) as info:
        read_header(p)
    assert_names(info, p, 1)


def test_wrong_version_message_names_the_version(tmp_path: Path) -> None:
    p = put(tmp_path / "v.jsonl", body([tick(T)], header=b'{"arena_log":2}'))
    assert "2" in str(rejected(p).value).split(":", 2)[-1]


def test_every_file_needs_its_own_header(tmp_path: Path) -> None:
    a = put(tmp_path / "a.jsonl", body([tick(T)]))
    b = tmp_path / "b.jsonl"
    b.write_bytes(enc(tick(T + 1)) + b"\n" + enc(tick(T + 2)) + b"\n")
    assert_names(rejected(a, b), b, 1)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_empty_file_or_torn_header_is_rejected(tmp_path: Path, suffix: str) -> None:
    for data in (b"", enc(HEADER)):  # nothing, or a header without its \n
        p = put(tmp_path / f"e.jsonl{suffix}", data)
        with pytest.raises(LogError) as info:
            read_all(p)
        assert str(p) in str(info.value)


def test_read_header_returns_the_header_fields(tmp_path: Path) -> None:
    h = {"arena_log": 1, "season": "season0", "rules_sha256": "ab" * 32, "extra": [1]}
    p = put(tmp_path / "s.jsonl.lz4", body([tick(T)], header=h))
    header = read_header(p)
    assert (header.arena_log, header.season, header.rules_sha256) == (1, "season0", "ab" * 32)
    assert header.markets is None
    rec = read_header(put(tmp_path / "r.jsonl", body([])))
    assert rec.recording == "synthetic"
    assert rec.markets is not None
    assert [(m.coin, m.asset, m.szDecimals) for m in rec.markets] == [("BTC", 0, 5), ("ETH", 1, 4)]


def test_missing_file_is_a_log_error(tmp_path: Path) -> None:
    p = tmp_path / "nope.jsonl"
    with pytest.raises(LogError) as info:
        read_all(p)
    assert str(p) in str(info.value)


# ---- truncated / corrupt compressed streams --------------------------------------------


def _big_body() -> bytes:
    return body([tick(T + i) for i in range(3000)])


@pytest.mark.parametrize("suffix", [".gz", ".lz4"])
def test_truncated_compressed_stream_is_an_error(tmp_path: Path, suffix: str) -> None:
    whole = put(tmp_path / f"whole.jsonl{suffix}", _big_body()).read_bytes()
    for cut in (len(whole) // 3, len(whole) // 2, len(whole) - 8, len(whole) - 1):
        p = tmp_path / f"cut{cut}.jsonl{suffix}"
        p.write_bytes(whole[:cut])
        with pytest.raises(LogError) as info:
            read_all(p)
        assert str(p) in str(info.value)
        with pytest.raises(LogError):
            list(iter_raw_lines(p))


def test_corrupt_gzip_stream_is_a_log_error(tmp_path: Path) -> None:
    """A corrupt deflate stream must become a LogError, not an escaping zlib.error."""
    whole = bytearray(gzip.compress(_big_body()))
    whole[20] ^= 0xFF  # inside the deflate data, near its start
    p = tmp_path / "corrupt.jsonl.gz"
    p.write_bytes(bytes(whole))
    with pytest.raises(LogError) as info:
        read_all(p)
    assert str(p) in str(info.value)


# ---- ignorable lines: other channels, other arena types, other coins ------------------


IGNORABLE: list[tuple[str, dict[str, Any]]] = [
    ("bbo", {"channel": "bbo", "data": {"coin": "BTC", "time": 1.5, "bbo": [None, None]}}),
    ("pong", {"channel": "pong"}),
    (
        "subscriptionResponse",
        {
            "channel": "subscriptionResponse",
            "data": {"method": "subscribe", "subscription": {"type": "l2Book", "coin": "BTC"}},
        },
    ),
    ("allMids", {"channel": "allMids", "data": {"mids": {"BTC": 100000.5}}}),
    (
        "l2Book-other-coin-time-string",
        setp(setp(BOOK, ("hl", "data", "coin"), "DOGE"), ("hl", "data", "time"), "x")["hl"],
    ),
    (
        "l2Book-other-coin-no-levels",
        delp(setp(BOOK, ("hl", "data", "coin"), "DOGE"), ("hl", "data", "levels"))["hl"],
    ),
    (
        "trades-other-coin-bad-tid",
        setp(setp(TRADE, ("hl", "data", 0, "coin"), "DOGE"), ("hl", "data", 0, "tid"), 1.5)["hl"],
    ),
    (
        "trades-other-coin-px-number",
        setp(setp(TRADE, ("hl", "data", 0, "coin"), "DOGE"), ("hl", "data", 0, "px"), 1)["hl"],
    ),
    (
        "activeAssetCtx-other-coin-markPx-number",
        setp(ctx(T, "DOGE", mark="1"), ("hl", "data", "ctx", "markPx"), 1.25)["hl"],
    ),
]
ARENA_IGNORABLE: list[tuple[str, dict[str, Any]]] = [
    ("hello", {"type": "hello", "version": 1.5}),
    ("heartbeat", {"type": "heartbeat", "t": "not checked"}),
]


@pytest.mark.parametrize(
    "row",
    [{"t": T + 2, "hl": hl} for _, hl in IGNORABLE]
    + [{"t": T + 2, "arena": a} for _, a in ARENA_IGNORABLE],
    ids=[n for n, _ in IGNORABLE] + [n for n, _ in ARENA_IGNORABLE],
)
def test_other_channels_types_and_coins_are_ignorable(tmp_path: Path, row: dict[str, Any]) -> None:
    p = put(tmp_path / "i.jsonl", body([tick(T), row, tick(T + 3)]))
    lines = read_all(p, coins=COINS)
    assert lines[1] == Line(t=T + 2)
    assert lines[1].hl is None and lines[1].arena is None
    assert lines[2] == Line(t=T + 3, arena=Tick())


def test_same_malformed_market_data_for_a_season_coin_is_rejected(tmp_path: Path) -> None:
    """The other-coin leniency must not leak to the reader's own coins."""
    for coin in COINS:
        bad = setp(setp(TRADE, ("hl", "data", 0, "coin"), coin), ("hl", "data", 0, "tid"), 1.5)
        p = with_bad_line(tmp_path, bad)
        assert_names(rejected(p), p, 4)


def test_valid_market_data_for_another_coin_is_accepted(tmp_path: Path) -> None:
    rows = [
        tick(T),
        book(T + 1, "DOGE", bids=[("0.3", "100")], asks=[("0.31", "100")]),
        trades(T + 2, ("DOGE", "0.3", "10", T + 1, 1)),
        ctx(T + 3, "DOGE", mark="0.3"),
    ]
    lines = read_all(put(tmp_path / "d.jsonl", body(rows)), coins=COINS)
    assert [line.t for line in lines] == [T, T + 1, T + 2, T + 3]


# ---- fields the engine checks when it uses them, through replay -------------------------


def replay_rows(tmp_path: Path, rows: list[Any], suffix: str = "") -> Path:
    p = put(tmp_path / f"r.jsonl{suffix}", body(rows))
    replay([str(p)], season())
    return p


def engine_rejects(tmp_path: Path, rows: list[Any], lineno: int, suffix: str = "") -> None:
    p = put(tmp_path / f"r.jsonl{suffix}", body(rows))
    with pytest.raises(LogError) as info:
        replay([str(p)], season())
    assert_names(info, p, lineno)


BAD_DECIMALS = ["1e5", ".5", "5.", "+5", " 5", "5 ", "1,000.0", "", "-", "0x10", "NaN", "١٠"]


@pytest.mark.parametrize("px", BAD_DECIMALS)
def test_replay_rejects_a_trade_px_that_is_not_a_decimal_string(tmp_path: Path, px: str) -> None:
    rows = [register(T0 + 1, "alice"), tick(T0 + 2), trades(T0 + 3, ("BTC", px, "1", T0, 1))]
    engine_rejects(tmp_path, rows, 4)


@pytest.mark.parametrize("sz", ["1e-3", "abc", "0.5.1"])
def test_replay_rejects_a_bad_trade_sz(tmp_path: Path, sz: str) -> None:
    rows = [tick(T0 + 2), trades(T0 + 3, ("ETH", "1.0", "0.1", T0, 1), ("ETH", "1.0", sz, T0, 2))]
    engine_rejects(tmp_path, rows, 3)


@pytest.mark.parametrize(
    "fields",
    [{"mark": "1e5"}, {"oracle": "abc"}, {"funding": "1.25e-5"}, {"funding": ".0001"}],
    ids=["markPx", "oraclePx", "funding-exponent", "funding-leading-dot"],
)
def test_replay_rejects_a_bad_decimal_in_asset_ctx(tmp_path: Path, fields: dict[str, str]) -> None:
    engine_rejects(tmp_path, [tick(T0), ctx(T0 + 1, "BTC", **fields)], 3)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_replay_rejects_a_bad_level_when_the_book_is_used(tmp_path: Path, suffix: str) -> None:
    """Before any ctx mark, a book sets the mid, so its levels are decoded."""
    good = book(T0 + 1, "BTC", bids=[("100", "1")], asks=[("101", "1")])
    bad_px = book(T0 + 2, "BTC", bids=[("1e2", "1")], asks=[("101", "1")])
    engine_rejects(tmp_path, [tick(T0), good, bad_px], 4, suffix)
    bad_n = setp(good, ("hl", "data", "levels", 1, 0, "n"), 1.5)
    engine_rejects(tmp_path, [tick(T0), good, good, bad_n], 5, suffix)


BAD_CLOIDS: list[Any] = ["0x", "2a", "0x" + "1" * 33, "0xg1", " 0x2a", "0x-1", "0x2a ", "", 42]


@pytest.mark.parametrize("cloid", BAD_CLOIDS)
def test_replay_rejects_a_bad_cloid_on_an_order(tmp_path: Path, cloid: Any) -> None:
    rows = [
        register(T0 - MIN, "alice"),
        ctx(T0 + 1, "BTC", mark="100000"),
        setp(order(T0 + 2, "alice", 0, True, 10**13, 100_000), ("arena", "cloid"), cloid),
    ]
    engine_rejects(tmp_path, rows, 4)


@pytest.mark.parametrize("cloid", BAD_CLOIDS)
def test_replay_rejects_a_bad_cloid_on_a_cancel(tmp_path: Path, cloid: Any) -> None:
    bad = setp(cancel(T0 + 2, "alice"), ("arena", "cloid"), cloid)
    rows = [register(T0 - MIN, "alice"), tick(T0 + 1), bad]
    engine_rejects(tmp_path, rows, 4)


@pytest.mark.parametrize(
    "case",
    ["order-of-unregistered-entry", "cancel-decided-by-oid", "trade-after-season-end"],
)
def test_a_malformed_known_field_is_rejected_even_where_the_engine_ignores_it(
    tmp_path: Path, case: str
) -> None:
    """Contract: "A reader rejects ... a malformed known field (a price that is not a
    decimal string, ..., a bad cloid)". Whether a log is valid may not depend on engine
    state, or two scorers would disagree about the same file."""
    rows: list[Any] = [
        register(T0 - MIN, "alice"),
        ctx(T0 + 1, "BTC", mark="100000"),
        order(T0 + 2, "alice", 0, True, 10**13, 100_000, cloid="0x1"),
    ]
    if case == "order-of-unregistered-entry":
        rows.append(order(T0 + 3, "nobody", 0, True, 10**13, 100_000, cloid="0xzz"))
    elif case == "cancel-decided-by-oid":
        rows.append(cancel(T0 + 3, "alice", oid=1, cloid="0xzz"))
    else:
        end = season().end
        rows += [tick(end), trades(end + 1, ("BTC", "1e5", "1", end, 1))]
    engine_rejects(tmp_path, rows, len(rows) + 1)


def test_replay_ignores_malformed_data_for_coins_outside_the_season(tmp_path: Path) -> None:
    rows = [
        register(T0 - MIN, "alice"),
        tick(T0 + 1),
        trades(T0 + 2, ("DOGE", "1e5", "x", T0, 1)),
        ctx(T0 + 3, "DOGE", mark="abc", funding="1e-3"),
        book(T0 + 4, "DOGE", bids=[("bad", "1")], asks=[("1", "1")]),
        setp(trades(T0 + 5, ("SOL", "1", "1", T0, 1)), ("hl", "data", 0, "tid"), 2.5),
        tick(T0 + 3 * MIN),
    ]
    p = put(tmp_path / "ok.jsonl", body(rows))
    result = replay([str(p)], season())
    assert result.inputs == len(rows)
    assert result.log_sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    assert result.end == T0 + 3 * MIN


# ---- LogWriter ---------------------------------------------------------------------------


WHEADER = {"recording": "hyperliquid", "markets": HEADER["markets"]}


def file_lines(p: Path) -> list[bytes]:
    return p.read_bytes().split(b"\n")


def test_writer_new_file_gets_the_header_on_line_1(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "dir" / "w.jsonl"
    with LogWriter(p, WHEADER) as w:
        assert w.existing_header is None
        w.write(T, arena={"type": "tick"})
    lines = file_lines(p)
    assert lines[-1] == b""  # every line ends with \n
    assert json.loads(lines[0]) == {"arena_log": 1, **WHEADER}
    assert json.loads(lines[1]) == {"t": T, "arena": {"type": "tick"}}
    header = read_header(p)
    assert header.arena_log == 1 and header.recording == "hyperliquid"
    assert read_all(p) == [Line(t=T, arena=Tick())]


def test_writer_reopen_appends_and_keeps_earlier_lines(tmp_path: Path) -> None:
    p = tmp_path / "w.jsonl"
    with LogWriter(p, WHEADER) as w:
        w.write(T, arena={"type": "register", "entry": "alice"})
    with LogWriter(p, {"season": "other"}) as w:
        assert w.existing_header is not None
        assert w.existing_header.recording == "hyperliquid"
        w.write(T + 1, arena={"type": "tick"})
    lines = file_lines(p)
    assert len(lines) == 4  # one header, two inputs, and the empty string after the last \n
    assert sum(b"arena_log" in x for x in lines) == 1
    assert read_header(p).season is None
    assert read_all(p) == [Line(t=T, arena=Register(entry="alice")), Line(t=T + 1, arena=Tick())]


@pytest.mark.parametrize(
    "torn",
    [b'{"t":1', b'{"t":%d,"arena":{"type":"tick"}}' % (T + 1), b"\xe2\x82", b"x" * 5000],
    ids=["short", "whole-json-without-newline", "half-utf8", "long"],
)
def test_writer_cuts_a_torn_tail_on_reopen(tmp_path: Path, torn: bytes) -> None:
    p = tmp_path / "w.jsonl"
    with LogWriter(p, WHEADER) as w:
        w.write(T, arena={"type": "tick"})
    before = p.read_bytes()
    with open(p, "ab") as f:  # a crash in the middle of a write
        f.write(torn)
    with LogWriter(p, WHEADER) as w:
        assert p.read_bytes() == before
        w.write(T + 2, arena={"type": "tick"})
    assert p.read_bytes() == before + enc({"t": T + 2, "arena": {"type": "tick"}}) + b"\n"
    assert [line.t for line in read_all(p)] == [T, T + 2]


def test_writer_cuts_a_torn_tail_longer_than_its_read_chunk(tmp_path: Path) -> None:
    """A crash while writing a line bigger than the 1 MiB scan window."""
    p = tmp_path / "w.jsonl"
    with LogWriter(p, WHEADER) as w:
        w.write(T, arena={"type": "tick"})
    before = p.read_bytes()
    with open(p, "ab") as f:
        f.write(b'{"t":%d,"hl":{"channel":"l2Book","data":"' % (T + 1) + b"x" * (3 << 19))
    with LogWriter(p, WHEADER) as w:
        w.write(T + 2, arena={"type": "tick"})
    assert p.read_bytes() == before + enc({"t": T + 2, "arena": {"type": "tick"}}) + b"\n"


def test_writer_replaces_a_torn_header(tmp_path: Path) -> None:
    p = tmp_path / "w.jsonl"
    p.write_bytes(b'{"arena_log":1,"recor')
    with LogWriter(p, WHEADER) as w:
        assert w.existing_header is None
        w.write(T, arena={"type": "tick"})
    assert json.loads(file_lines(p)[0]) == {"arena_log": 1, **WHEADER}
    assert read_all(p) == [Line(t=T, arena=Tick())]


def test_writer_refuses_to_append_to_a_log_of_another_version(tmp_path: Path) -> None:
    p = tmp_path / "w.jsonl"
    p.write_bytes(b'{"arena_log":2}\n')
    with pytest.raises(LogError) as info:
        LogWriter(p, WHEADER)
    assert_names(info, p, 1)
    assert p.read_bytes() == b'{"arena_log":2}\n'


def test_writer_keeps_hl_bytes_verbatim(tmp_path: Path) -> None:
    hl = (
        b'{ "channel" : "trades","data":[{"px":"100000.50","coin":"BTC","sz":"0.010",'
        b'"side":"A","time":%d,"tid":12345678901234,"hash":"0xAB","users":["0x1","0x2"],'
        b'"unknown":{"nested":[1.5,null]}}]}'
    ) % T
    p = tmp_path / "w.jsonl"
    with LogWriter(p, WHEADER) as w:
        w.write(T + 7, hl=hl)
    assert file_lines(p)[1] == b'{"t":%d,"hl":%s}' % (T + 7, hl)
    (line,) = read_all(p)
    assert isinstance(line.hl, Trades)
    assert (line.t, line.hl.data[0].px, line.hl.data[0].sz) == (T + 7, "100000.50", "0.010")
    assert line.hl.data[0].tid == 12345678901234


def test_writer_arena_inputs_round_trip(tmp_path: Path) -> None:
    rows = [r for r in GOOD_ROWS if "arena" in r]
    p = tmp_path / "w.jsonl"
    with LogWriter(p, WHEADER) as w:
        for r in rows:
            w.write(r["t"], arena=r["arena"])
    assert [json.loads(x) for x in file_lines(p)[1:-1]] == rows
    assert len(read_all(p)) == len(rows)


def test_writer_makes_each_line_durable_before_write_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "w.jsonl"
    synced: list[bytes] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(p.read_bytes())  # what another reader sees at the moment of fsync
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)  # logfile calls os.fsync
    w = LogWriter(p, WHEADER)
    try:
        assert synced and synced[-1] == p.read_bytes()
        assert read_header(p).recording == "hyperliquid"
        for i in range(3):
            n = len(synced)
            w.write(T + i, arena={"type": "tick"})
            line = enc({"t": T + i, "arena": {"type": "tick"}}) + b"\n"
            assert len(synced) > n, "write() returned without fsync"
            assert synced[-1].endswith(line)
            # visible to a reader while the writer is still open
            assert p.read_bytes().endswith(line)
            assert [x.t for x in read_all(p)] == [T + j for j in range(i + 1)]
    finally:
        w.close()
