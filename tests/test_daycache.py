"""The day cache (``arena_tui.logs.daycache``) and ``arena cache``.

A cache written while ``LogReader(cache=True)`` reads a log gives back every line's bytes,
``t``, kind and coin exactly (plain, ``.gz`` and ``.lz4`` sources; Hypothesis over small
generated logs); it is a miss, never an error, when the source changed, a coin was not
checked, the cache file is damaged (which is then removed) or the cache is turned off.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import lz4.frame
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.logs import daycache
from arena_tui.logs.daycache import (
    KIND_BOOK,
    KIND_CTX,
    KIND_CTX_PART,
    KIND_OTHER,
    KIND_TRADES,
    CachedDay,
    DayCacheWriter,
    has_day,
    open_day,
)
from arena_tui.logs.logfile import LogError, LogReader
from tests import build
from tests.clirun import ROOT, arena, arena_here, one_error_line

T = build.T0
HEADER = {
    "arena_log": 1,
    "recording": "synthetic",
    "markets": [{"coin": "BTC", "asset": 0, "szDecimals": 5}],
}
BIDS = [("100.5", "1.0"), ("100.0", "2.5")]
ASKS = [("101.0", "0.5")]


def gap(t: int) -> dict[str, Any]:
    return {"t": t, "arena": {"type": "gap", "from": t - 5, "to": t, "reason": "lost the feed ü"}}


# (row, kind, coin name or None): every kind of input the cache tells apart
ROWS: list[tuple[dict[str, Any], int, str | None]] = [
    (build.register(T, "alice"), KIND_OTHER, None),
    (build.book(T + 1, "BTC", bids=BIDS, asks=ASKS), KIND_BOOK, "BTC"),
    (build.book(T + 1, "ETH", bids=BIDS, asks=[]), KIND_BOOK, "ETH"),
    (build.trades(T + 2, ("BTC", "100.7", "0.1", T, 1)), KIND_TRADES, "BTC"),
    (
        build.trades(T + 3, ("ETH", "10.0", "1.0", T, 2), ("ETH", "10.1", "1.0", T, 3)),
        KIND_TRADES,
        "ETH",
    ),
    (
        build.trades(T + 3, ("BTC", "100.7", "0.1", T, 4), ("ETH", "10.1", "1.0", T, 5)),
        KIND_TRADES,
        None,  # prints of two coins
    ),
    ({"t": T + 3, "hl": {"channel": "trades", "data": []}}, KIND_TRADES, None),
    (build.ctx(T + 4, "BTC", mark="100.6", oracle="100.5", funding="0.0001"), KIND_CTX, "BTC"),
    (build.ctx(T + 4, "SOL", mark="150.0", oracle="150.1"), KIND_CTX_PART, "SOL"),
    (build.order(T + 5, "alice", 0, True, 100 * 10**8, 10**5), KIND_OTHER, None),
    (build.cancel(T + 6, "alice", oid=1), KIND_OTHER, None),
    (build.tick(T + 7), KIND_OTHER, None),
    (gap(T + 8), KIND_OTHER, None),
    ({"t": T + 9, "hl": {"channel": "candle", "data": {"coin": "BTC"}}}, KIND_OTHER, None),
    ({"t": T + 9, "arena": {"type": "note", "text": "é"}}, KIND_OTHER, None),
    # another coin's book the typed decoder refuses (its time is a string): ignored
    (
        {
            "t": T + 10,
            "hl": {
                "channel": "l2Book",
                "data": {"coin": "DOGE", "time": "1", "levels": [[], []]},
            },
        },
        KIND_OTHER,
        None,
    ),
    (build.book(T + 11, "BTC", bids=BIDS, asks=ASKS), KIND_BOOK, "BTC"),
]


def encode(rows: list[dict[str, Any]], header: dict[str, Any] = HEADER) -> bytes:
    return b"".join(msgspec.json.encode(r) + b"\n" for r in [header, *rows])


def write(path: Path, data: bytes) -> Path:
    """``data`` at ``path``, compressed as its extension says."""
    if path.name.endswith(".gz"):
        data = gzip.compress(data)
    elif path.name.endswith(".lz4"):
        data = lz4.frame.compress(data)
    path.write_bytes(data)
    return path


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("ARENA_CACHE_DIR", str(d))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    monkeypatch.delenv("ARENA_CACHE_MAX_GB", raising=False)
    return d


def read_all(path: Path, coins: list[str] | None = None) -> tuple[LogReader, list[Any]]:
    reader = LogReader([path], coins=coins, cache=True)
    return reader, list(reader)


def build_cache(path: Path, coins: list[str] | None = None) -> CachedDay:
    reader, _ = read_all(path, coins)
    assert len(reader.finished_writers) == 1
    day = reader.finished_writers[0].commit()
    assert day is not None
    return day


def files(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file())


def assert_round_trip(day: CachedDay, path: Path, data: bytes, coins: list[str] | None) -> None:
    """Everything the cache holds equals what the file and the reader give."""
    raws = data.split(b"\n")
    torn = raws.pop()  # b"" unless the last line is torn
    header, inputs = raws[0], raws[1:]
    lines = list(LogReader([path], coins=coins))
    disk = path.read_bytes()
    assert (day.size, day.sha256) == (len(disk), hashlib.sha256(disk).hexdigest())
    assert day.header_raw == header
    assert day.n == len(inputs) == len(lines)
    assert [day.raw(i) for i in range(day.n)] == inputs
    assert [day.line(i) for i in range(day.n)] == lines
    assert day.t.tolist() == [line.t for line in lines]
    assert (day.first_t, day.last_t) == ((lines[0].t, lines[-1].t) if lines else (None, None))
    ends = range(day.n + 1) if day.n < 40 else [0, 1, 2, day.n // 2, day.n - 1, day.n]
    for i in ends:
        for j in ends:
            assert bytes(day.span(i, j)) == b"\n".join(inputs[i:j])
    assert torn == b"" or torn not in b"\n".join(day.raw(i) for i in range(day.n))


@pytest.mark.parametrize("name", ["day.jsonl", "day.jsonl.gz", "day.jsonl.lz4"])
def test_round_trip_every_kind(cache_dir: Path, tmp_path: Path, name: str) -> None:
    rows = [r for r, _, _ in ROWS]
    data = encode(rows)
    path = write(tmp_path / name, data + b'{"t": 99')  # and a torn final line, ignored
    day = build_cache(path, ["BTC", "ETH"])
    assert_round_trip(day, path, data, ["BTC", "ETH"])
    assert day.checked == {"BTC", "ETH"}
    assert day.kind.tolist() == [k for _, k, _ in ROWS]
    assert [day.coins[c] if c >= 0 else None for c in day.coin.tolist()] == [c for *_, c in ROWS]
    assert set(day.coins) == {"BTC", "ETH", "SOL"}  # DOGE's line was ignored, never decoded
    day.close()
    # a later run finds it: a hit for the checked coins or fewer, by path as given
    again = open_day(str(path), ["ETH"])
    assert again is not None and again.path == str(path)
    assert_round_trip(again, path, data, ["BTC", "ETH"])
    again.close()
    assert open_day(path, ["BTC", "SOL"]) is None  # SOL's data was not checked: a miss


def test_a_commit_not_reopened_is_kept_all_the_same(cache_dir: Path, tmp_path: Path) -> None:
    """``commit(reopen=False)`` (an import, a backtest's first read: nobody reads it now)
    makes the cache visible without reading back what it wrote; the next pass opens it,
    checks it whole, and reads what the reopened one would."""
    data = encode([r for r, _, _ in ROWS])
    path = write(tmp_path / "day.jsonl", data)
    reader, _ = read_all(path, ["BTC", "ETH"])
    (writer,) = reader.finished_writers
    assert writer.commit(reopen=False) is None
    day = open_day(path, ["BTC", "ETH"])
    assert day is not None
    assert_round_trip(day, path, data, ["BTC", "ETH"])
    day.close()
    assert writer.commit() is None  # committed once: nothing left to commit


@st.composite
def logs(draw: st.DrawFn) -> list[tuple[dict[str, Any], int, str | None]]:
    coins = ["BTC", "ETH", "HYPE", "kPEPE"]
    t = T
    out: list[tuple[dict[str, Any], int, str | None]] = []
    for _ in range(draw(st.integers(0, 25))):
        t += draw(st.integers(0, 3))
        kind = draw(st.sampled_from(["book", "trades", "ctx", "part", "tick", "order"]))
        coin = draw(st.sampled_from(coins))
        if kind == "book":
            out.append((build.book(t, coin, bids=BIDS, asks=ASKS), KIND_BOOK, coin))
        elif kind == "trades":
            prints = draw(st.lists(st.sampled_from(coins), min_size=1, max_size=3))
            row = build.trades(t, *[(c, "1.5", "2", t, i) for i, c in enumerate(prints)])
            out.append((row, KIND_TRADES, prints[0] if len(set(prints)) == 1 else None))
        elif kind == "ctx":
            out.append((build.ctx(t, coin, mark="1", oracle="1", funding="0"), KIND_CTX, coin))
        elif kind == "part":
            out.append((build.ctx(t, coin, mark="1.5", funding="0"), KIND_CTX_PART, coin))
        elif kind == "tick":
            out.append((build.tick(t), KIND_OTHER, None))
        else:
            out.append((build.order(t, "bob", 0, False, 10**8, 10**5), KIND_OTHER, None))
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=logs(), suffix=st.sampled_from(["", ".gz", ".lz4"]))
def test_round_trip_generated(
    spec: list[tuple[dict[str, Any], int, str | None]], suffix: str
) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.dict(os.environ, {"ARENA_CACHE_DIR": f"{tmp}/cache"}),
    ):
        data = encode([r for r, _, _ in spec])
        path = write(Path(tmp) / f"log.jsonl{suffix}", data)
        day = build_cache(path)  # coins=None: every coin's data checked
        assert_round_trip(day, path, data, None)
        assert day.kind.tolist() == [k for _, k, _ in spec]
        names = [day.coins[c] if c >= 0 else None for c in day.coin.tolist()]
        assert names == [c for *_, c in spec]
        seen = {c for r, _, _ in spec for c in _coins_of(r)}
        assert day.checked == seen and set(day.coins) == seen
        day.close()
        hit = open_day(path, seen)
        assert hit is not None and hit.n == len(spec)
        hit.close()


def _coins_of(row: dict[str, Any]) -> list[str]:
    data = row.get("hl", {}).get("data")
    if isinstance(data, list):
        return [d["coin"] for d in data]
    return [data["coin"]] if data else []


def test_size_or_mtime_change_is_a_miss(cache_dir: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", encode([r for r, _, _ in ROWS]))
    build_cache(path, ["BTC"]).close()
    st0 = path.stat()
    os.utime(path, ns=(st0.st_atime_ns, st0.st_mtime_ns + 1))
    assert open_day(path, ["BTC"]) is None
    os.utime(path, ns=(st0.st_atime_ns, st0.st_mtime_ns))
    day = open_day(path, ["BTC"])
    assert day is not None
    day.close()
    with path.open("ab") as f:  # same mtime, another size
        f.write(msgspec.json.encode(build.tick(T + 99)) + b"\n")
    os.utime(path, ns=(st0.st_atime_ns, st0.st_mtime_ns))
    assert open_day(path, ["BTC"]) is None


def test_source_missing_raises_as_the_reader(cache_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(LogError, match="no such file"):
        open_day(tmp_path / "gone.jsonl", ["BTC"])


def _damage(file: Path, how: str) -> None:
    data = bytearray(file.read_bytes())
    meta = daycache.read_meta(bytes(data))
    if how == "truncated":
        del data[len(data) // 2 :]
    elif how == "magic":
        data[0:8] = b"NOTADAY!"
    elif how == "line":  # a byte of a cached line flipped
        data[meta.blob_off + 40] ^= 0x01
    elif how == "array":  # a byte of the t array flipped
        data[meta.sections["t"][0] + 8 * 20] ^= 0x10
    elif how == "offsets":
        data[meta.sections["off"][0] + 8 * 3] ^= 0x01
    elif how == "header":  # a letter of the log's header line (still valid msgpack)
        at = data.rindex(b"synthetic")
        data[at] = ord("S")
    elif how == "empty":
        data = bytearray()
    elif how == "garbage":
        data = bytearray(os.urandom(4096))
    file.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "how", ["truncated", "magic", "line", "array", "offsets", "header", "empty", "garbage"]
)
def test_damaged_cache_is_a_miss_and_removed(cache_dir: Path, tmp_path: Path, how: str) -> None:
    rows = [r for r, _, _ in ROWS] + [build.tick(T + 20 + i) for i in range(40)]
    path = write(tmp_path / "a.jsonl", encode(rows))
    build_cache(path, ["BTC"]).close()
    (day_file,) = cache_dir.glob("*.day")
    _damage(day_file, how)
    assert open_day(path, ["BTC"]) is None
    assert not day_file.exists()
    # and the next cold read caches it again
    build_cache(path, ["BTC"]).close()
    day = open_day(path, ["BTC"])
    assert day is not None
    day.close()


@pytest.mark.parametrize("how", ["magic", "line", "array", "header", "empty"])
def test_has_day_answers_from_the_index_and_the_header_alone(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """``has_day`` (whether a pass will read caches) agrees with ``open_day`` on a good
    cache, a changed source, a coin not checked and the cache off; it does not check the
    arrays' and lines' checksums (``open_day``, which the pass calls, does: a cache damaged
    there is found, removed and built again by that pass)."""
    rows = [r for r, _, _ in ROWS] + [build.tick(T + 20 + i) for i in range(40)]
    path = write(tmp_path / "a.jsonl", encode(rows))
    assert not has_day(path, ["BTC"])  # none yet
    build_cache(path, ["BTC"]).close()
    assert has_day(path, ["BTC"]) and has_day(path, [])
    assert not has_day(path, ["BTC", "ETH"])  # ETH was not checked
    st0 = path.stat()
    os.utime(path, ns=(st0.st_atime_ns, st0.st_mtime_ns + 1))
    assert not has_day(path, ["BTC"])  # the source changed
    os.utime(path, ns=(st0.st_atime_ns, st0.st_mtime_ns))
    monkeypatch.setenv("ARENA_CACHE", "0")
    assert not has_day(path, ["BTC"])
    monkeypatch.delenv("ARENA_CACHE")
    (day_file,) = cache_dir.glob("*.day")
    _damage(day_file, how)
    past_header = how in ("line", "array")
    assert has_day(path, ["BTC"]) == past_header  # (magic, header, empty: seen at once)
    assert open_day(path, ["BTC"]) is None and not day_file.exists()
    assert not has_day(path, ["BTC"])
    with pytest.raises(LogError, match="no such file"):
        has_day(tmp_path / "gone.jsonl", ["BTC"])


def test_disabled_by_env_is_a_miss_and_writes_nothing(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "a.jsonl", encode([r for r, _, _ in ROWS]))
    build_cache(path, ["BTC"]).close()
    for value in ["0", "off", "No", "FALSE"]:
        monkeypatch.setenv("ARENA_CACHE", value)
        assert not daycache.cache_enabled()
        assert open_day(path, ["BTC"]) is None
    monkeypatch.setenv("ARENA_CACHE", "0")
    other = cache_dir.parent / "other"
    monkeypatch.setenv("ARENA_CACHE_DIR", str(other))
    reader, _ = read_all(path, ["BTC"])
    assert reader.finished_writers == []
    assert DayCacheWriter(str(path), b"{}", ["BTC"]).commit() is None
    assert not other.exists()


def test_nothing_kept_unless_read_cleanly_to_the_end(cache_dir: Path, tmp_path: Path) -> None:
    rows = [build.tick(T + i) for i in range(3000)]
    good = write(tmp_path / "good.jsonl.gz", encode(rows))
    bad = write(tmp_path / "bad.jsonl", encode(rows) + b'{"t": 1}\n')  # t goes back
    reader = LogReader([good, bad], coins=["BTC"], cache=True)
    with pytest.raises(LogError, match="lower than the line before"):
        list(reader)
    assert [w.path for w in reader.finished_writers] == [str(good)]  # the first file is whole
    assert len(list(cache_dir.glob(".*.part"))) == 1  # its writer, not yet committed
    reader.finished_writers[0].discard()
    # stopped early: the generator closes, the file is not cached
    reader = LogReader([good], coins=["BTC"], cache=True)
    for line in reader:
        if line.t > T + 10:
            break
    reader.close()
    assert reader.finished_writers == []
    assert files(cache_dir) == []
    # read on to the end with rest(): cached
    reader = LogReader([good], coins=["BTC"], cache=True)
    for line in reader:
        if line.t > T + 10:
            break
    assert sum(1 for _ in reader.rest()) == 3000 - 12
    day = reader.finished_writers[0].commit()
    assert day is not None and day.n == 3000
    day.close()


def test_source_changed_during_the_read_keeps_nothing(cache_dir: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", encode([r for r, _, _ in ROWS]))
    reader, _ = read_all(path, ["BTC"])
    with path.open("ab") as f:
        f.write(msgspec.json.encode(build.tick(T + 99)) + b"\n")
    assert reader.finished_writers[0].commit() is None
    assert files(cache_dir) == []


def test_same_bytes_share_one_file_and_writers_race_to_one_good_file(
    cache_dir: Path, tmp_path: Path
) -> None:
    data = encode([r for r, _, _ in ROWS])
    a = write(tmp_path / "a.jsonl", data)
    b = write(tmp_path / "b.jsonl", data)
    # two writers of one source, interleaved: both commit, one good file is left
    r1 = LogReader([a], coins=["BTC"], cache=True)
    r2 = LogReader([a], coins=["BTC"], cache=True)
    for _ in zip(r1, r2, strict=True):
        pass
    d1 = r1.finished_writers[0].commit()
    d2 = r2.finished_writers[0].commit()
    assert d1 is not None and d2 is not None
    d1.close()
    d2.close()
    build_cache(b, ["BTC"]).close()
    assert len(files(cache_dir)) == 3  # one .day, two index entries, no temp files
    assert len(list(cache_dir.glob("*.day"))) == 1
    for src in (a, b):
        day = open_day(src, ["BTC"])
        assert day is not None
        assert_round_trip(day, src, data, ["BTC"])
        day.close()


def test_processes_writing_one_source_leave_one_good_file(cache_dir: Path, tmp_path: Path) -> None:
    rows = [r for r, _, _ in ROWS] + [build.tick(T + 20 + i) for i in range(20_000)]
    data = encode(rows)
    path = write(tmp_path / "a.jsonl.gz", data)
    code = (
        "import sys\nfrom arena_tui.logs.logfile import LogReader\n"
        "r = LogReader([sys.argv[1]], coins=['BTC'], cache=True)\n"
        "for _ in r: pass\n"
        "assert r.finished_writers[0].commit() is not None\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path)], cwd=ROOT) for _ in range(3)]
    assert [p.wait(120) for p in procs] == [0, 0, 0]
    assert sorted(p.suffix for p in cache_dir.glob("*")) == ["", ".day"]  # and the index
    day = open_day(path, ["BTC"])
    assert day is not None
    assert_round_trip(day, path, data, ["BTC"])
    day.close()


def test_size_cap_evicts_least_recently_used(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [
        write(tmp_path / f"{i}.jsonl", encode([build.tick(T + j + i) for j in range(100)]))
        for i in range(3)
    ]
    build_cache(paths[0]).close()
    build_cache(paths[1]).close()
    one = next(cache_dir.glob("*.day")).stat().st_size
    os.utime(daycache.day_file(cache_dir, open_day(paths[1], []).sha256), ns=(1, 1))  # type: ignore[union-attr]
    day = open_day(paths[0], [])  # used now: paths[1]'s is the least recently used
    assert day is not None
    day.close()
    monkeypatch.setenv("ARENA_CACHE_MAX_GB", str((2 * one + one // 2) / 1e9))
    build_cache(paths[2]).close()
    assert [open_day(p, []) is not None for p in paths] == [True, False, True]
    assert len(list((cache_dir / "index").glob("*.json"))) == 2  # its index entry went too


def test_line_outlives_close(cache_dir: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", encode([r for r, _, _ in ROWS]))
    day = build_cache(path, ["BTC"])
    book = day.line(1)
    span = day.span(0, 3)
    day.close()  # views still alive: unmapped when they go, no error
    assert bytes(span).count(b"\n") == 2
    assert book.hl is not None


# ---- arena cache ------------------------------------------------------------------------


def cli(
    cache: Path, *args: str, real_process: bool = False, **env: str
) -> subprocess.CompletedProcess[str]:
    """``arena cache ARGS`` with ``cache`` as its directory and ``env``'s settings, in this
    process (its environment set for the call) or in a real one."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_CACHE")}
    whole = {**full, "ARENA_CACHE_DIR": str(cache), **env}
    if real_process:
        return arena("cache", *args, env=whole)
    return arena_here("cache", *args, cwd=ROOT, env=whole)


def test_cli_info_and_clear(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    empty = cli(cache, "info")
    assert empty.returncode == 0
    assert empty.stdout == f"day cache {cache}: empty (the cache is on)\n"
    off = cli(cache, "info", ARENA_CACHE="off")
    assert "the cache is off (ARENA_CACHE=off)" in off.stdout
    data = encode([r for r, _, _ in ROWS])
    a = write(tmp_path / "a.jsonl.gz", data)
    b = write(tmp_path / "b.jsonl", encode([build.tick(T)]))
    with mock.patch.dict(os.environ, {"ARENA_CACHE_DIR": str(cache)}):
        build_cache(a, ["BTC", "ETH"]).close()
        build_cache(b, ["BTC"]).close()
    os.utime(daycache.day_file(cache, hashlib.sha256(b.read_bytes()).hexdigest()), (0, 0))
    info = cli(cache, "info")
    assert info.returncode == 0, info.stderr
    out = info.stdout
    assert str(a) in out and str(b) in out and "2 cached days" in out
    assert (
        "checked BTC ETH" in out and "2026-01-01 00:00:00.000 -> 2026-01-01 00:00:00.011 UTC" in out
    )
    doc = json.loads(cli(cache, "info", "--json").stdout)
    assert doc["dir"] == str(cache) and doc["enabled"] is True
    by_src = {d["sources"][0]["path"]: d for d in doc["days"]}
    day_a = by_src[str(a)]
    assert day_a["inputs"] == len(ROWS) and day_a["source_bytes"] == a.stat().st_size
    assert day_a["checked"] == ["BTC", "ETH"] and day_a["sources"][0]["state"] == "ok"
    assert doc["bytes"] == sum(d["bytes"] for d in doc["days"])

    # --older-than: only b's (last used in 1970); --dry-run removes nothing
    dry = cli(cache, "clear", "--older-than", "7d", "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("would remove 1 cached day,")
    assert str(b) in dry.stdout and str(a) not in dry.stdout
    assert len(list(cache.glob("*.day"))) == 2
    old = cli(cache, "clear", "--older-than", "7d", "--json")
    assert [d["sources"][0]["path"] for d in json.loads(old.stdout)["removed"]] == [str(b)]
    assert len(list(cache.glob("*.day"))) == 1
    # SOURCE: one not cached is one clear error, nothing removed
    err = one_error_line(cli(cache, "clear", str(a), str(b), real_process=True))
    assert err == f"arena: error: not in the day cache: {b} (arena cache info lists what is)"
    assert len(list(cache.glob("*.day"))) == 1
    gone = cli(cache, "clear", str(a))
    assert gone.returncode == 0 and gone.stdout.startswith("removed 1 cached day,")
    assert files(cache) == []
    bad = one_error_line(cli(cache, "clear", "--older-than", "soon"))
    assert "--older-than 'soon': expected a whole number and a unit" in bad
    assert cli(cache, "clear").stdout == f"nothing to remove: the day cache {cache} is empty\n"


def test_cli_help_teaches(tmp_path: Path) -> None:
    text = cli(tmp_path, "--help").stdout
    for needle in ["ARENA_CACHE=0", "--no-cache", "ARENA_CACHE_DIR", "ARENA_CACHE_MAX_GB"]:
        assert needle in " ".join(text.split()), needle
    assert "--older-than" in cli(tmp_path, "clear", "--help").stdout
