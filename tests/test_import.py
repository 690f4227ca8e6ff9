"""``arena import hl-archive`` and ``arena import hftbacktest``: real captures into logs.

The samples are real files (tests/data/README.md says where they come from). Every expectation is
counted here from the source file with the standard library (json, gzip, datetime), not
with the importer's code: the books and trades, the receive times, and the verbatim bytes
of every message.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import http.server
import json
import os
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lz4.frame
import pytest

from arena_tui.logs.importers import import_files
from tests.clirun import ROOT, arena, arena_here, one_error_line

DATA = ROOT / "tests" / "data"  # copies of shared/data/hyperliquid's samples (see its README)
ARCHIVE = DATA / "hl_archive_l2Book_BTC_20240101_12_first20.lz4"
COLLECTOR = DATA / "hftbacktest_collector_btc_20250126.gz"
META = ROOT / "tests" / "data" / "meta_2023.json"
BTC = {"coin": "BTC", "asset": 0, "szDecimals": 5}


def log_lines(path: Path) -> list[bytes]:
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    if path.name.endswith(".lz4"):
        opener = lz4.frame.open
    with opener(path, "rb") as f:
        data: bytes = f.read()
    assert data.endswith(b"\n")
    return data.split(b"\n")[:-1]


def expected_archive() -> list[tuple[int, bytes]]:
    """(t, raw bytes) per archive line: raw is the last key, so it is the rest of the line."""
    out = []
    for line in lz4.frame.decompress(ARCHIVE.read_bytes()).split(b"\n")[:-1]:
        doc = json.loads(line)
        when = dt.datetime.fromisoformat(doc["time"][:23] + "+00:00")
        t = int(when.timestamp()) * 1000 + int(doc["time"][20:23])
        raw = line[line.index(b'"raw":') + 6 : -1]
        assert json.loads(raw) == doc["raw"]
        out.append((t, raw))
    return out


def expected_collector(shift_ns: int = 0) -> list[tuple[int, bytes]]:
    out = []
    for line in gzip.decompress(COLLECTOR.read_bytes()).split(b"\n")[:-1]:
        ns, msg = line.split(b" ", 1)
        out.append(((int(ns) + shift_ns) // 1_000_000, msg))
    return out


def body_of(lines: list[bytes]) -> list[tuple[int, bytes]]:
    """(t, hl bytes) of each input line as written: {"t":<t>,"hl":<bytes>}."""
    out = []
    for line in lines[1:]:
        head, rest = line.split(b',"hl":', 1)
        assert head.startswith(b'{"t":') and rest.endswith(b"}")
        out.append((int(head[5:]), rest[:-1]))
    return out


def check_json(*logs: Path, real_process: bool = False) -> dict[str, Any]:
    args = ("logs", "check", *map(str, logs), "--json")
    done = arena(*args) if real_process else arena_here(*args, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def test_archive_sample_becomes_a_log_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "btc-12.jsonl.lz4"
    done = arena(
        "import", "hl-archive", str(ARCHIVE), "--meta", str(META), "--out", str(out), "--json"
    )
    assert done.returncode == 0, done.stderr
    want = expected_archive()
    lines = log_lines(out)
    header = json.loads(lines[0])
    assert header == {
        "arena_log": 1,
        "recording": "hyperliquid",
        "source": "hl-archive",
        "markets": [BTC],
        "first_t": want[0][0],  # what a replay reads instead of a second pass
        "last_t": want[-1][0],
    }
    assert body_of(lines) == want  # t truncated to the ms, raw sliced verbatim
    summary = json.loads(done.stdout)
    assert (summary["books"], summary["trades"], summary["prints"]) == (20, 0, 0)
    assert (summary["first_t"], summary["last_t"]) == (want[0][0], want[-1][0])
    assert summary["out"] == str(out)
    assert f"wrote {out}: 20 books, 0 trades messages (0 prints)" in done.stderr
    assert "2024-01-01 12:00:01.138 -> 2024-01-01 12:00:13.872 UTC" in done.stderr

    report = check_json(out, real_process=True)
    assert report["channels"] == {"l2Book": 20} and report["bad_lines"] == 0
    assert report["coins"]["BTC"]["books"] == 20

    # 12 s of data spans no whole minute: replay it under a one-minute season made for it.
    season = tmp_path / "hour12.toml"
    made = arena(
        "season", "new", "hour12", "--coins", "BTC", "--meta", str(META), "--out", str(season),
        "--start", "2024-01-01T12:00:00Z", "--end", "2024-01-01T12:01:00Z",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    done = arena("replay", str(out), "--season", str(season))
    assert done.returncode == 0, done.stderr
    assert "20 inputs (from the day cache), 0 fills" in done.stdout  # the import's cache


def test_collector_sample_becomes_a_log_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "btc.jsonl.gz"
    done = arena("import", "hftbacktest", str(COLLECTOR), "--meta", str(META), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # no --json: the summary is on stderr only
    msgs = [json.loads(m) for _, m in expected_collector()]
    books = sum(m["channel"] == "l2Book" for m in msgs)
    trades = [m for m in msgs if m["channel"] == "trades"]
    prints = sum(len(m["data"]) for m in trades)
    assert (books, len(trades), prints) == (46, 9, 64)  # as the data README says
    assert f"{books} books, {len(trades)} trades messages ({prints} prints)" in done.stderr
    lines = log_lines(out)
    assert json.loads(lines[0])["markets"] == [BTC]
    assert body_of(lines) == expected_collector()

    report = check_json(out)
    assert report["channels"] == {"l2Book": books, "trades": len(trades)}
    assert report["coins"]["BTC"]["prints"] == prints
    done = arena_here("replay", str(out), "--season", "seasons/sample-btc-20250126.toml", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    # read from the cache the import kept, which knows the hash of the log's text
    assert f"{books + len(trades)} inputs (from the day cache), 0 fills" in done.stdout
    text_sha = hashlib.sha256(gzip.decompress(out.read_bytes())).hexdigest()
    assert f"log_sha256    {text_sha}" in done.stdout


def test_two_files_merge_by_receive_time_and_replay_with_backtest_defaults(
    tmp_path: Path,
) -> None:
    # The capture again, received two minutes later: together they span 19:14:03-19:16:29,
    # so the whole minutes 19:15-19:16 make a backtest window with no season file.
    later = tmp_path / "later.gz"
    shift = 120 * 10**9
    text = b"".join(b"%d %s\n" % (t * 1_000_000 + shift, m) for t, m in expected_collector())
    # (t ms * 1e6 loses the sub-ms part; the order is what matters here)
    later.write_bytes(gzip.compress(text))
    out = tmp_path / "two.jsonl"
    args = ("import", "hftbacktest", str(later), str(COLLECTOR), "--meta", str(META))
    done = arena_here(*args, "--out", str(out), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    got = body_of(log_lines(out))
    assert got == expected_collector() + expected_collector(shift)  # t order, not file order
    done = arena_here("replay", str(out), "--json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["season"] == "backtest" and doc["end"] == 1_737_918_960_000  # 19:16:00

    # The second copy resends every print (same times and tids): all dropped as duplicates,
    # and its books arrive 120 s after their exchange time: all stale.
    btc = check_json(out)["coins"]["BTC"]
    assert btc["books"] == 92 and btc["prints"] == 128
    assert btc["duplicate_prints"] == 64 and btc["stale_books"] == 46


@pytest.mark.parametrize("name", ["btc.jsonl.lz4", "btc.jsonl.gz"])
def test_a_damaged_compressed_import_is_an_error_not_other_lines(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    done = arena_here(
        "import", "hftbacktest", str(COLLECTOR), "--meta", str(META), "-o", str(out), cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    blob = out.read_bytes()
    for cut in (len(blob) - 1, len(blob) // 2):  # torn: the end (checksum) or half missing
        out.write_bytes(blob[:cut])
        assert "truncated or corrupt" in one_error_line(
            arena_here("logs", "check", str(out), cwd=ROOT)
        )
    bad = bytearray(blob)
    bad[len(bad) * 2 // 3] ^= 0x10  # one flipped bit in the compressed data
    out.write_bytes(bytes(bad))
    assert "truncated or corrupt" in one_error_line(arena_here("logs", "check", str(out), cwd=ROOT))


def write_collector(path: Path, rows: list[tuple[int, str]]) -> Path:
    path.write_text("".join(f"{ns} {msg}\n" for ns, msg in rows))
    return path


def book_msg(exchange_ms: int, coin: str = "BTC") -> str:
    data = {"coin": coin, "time": exchange_ms, "levels": [[], []]}
    return json.dumps({"channel": "l2Book", "data": data}, separators=(",", ":"))


def test_merge_is_stable_and_in_ns_order(tmp_path: Path) -> None:
    ns = 1_737_918_843_000 * 10**6
    a = write_collector(
        tmp_path / "a.txt",
        [(ns + 5, book_msg(1)), (ns + 900_000, book_msg(2)), (ns + 2_000_000, book_msg(3))],
    )
    b = write_collector(
        tmp_path / "b.txt",
        [(ns + 5, book_msg(11)), (ns + 100_000, book_msg(12)), (ns + 2_000_000, book_msg(13))],
    )
    out = tmp_path / "m.jsonl"
    summary = import_files([str(a), str(b)], "hftbacktest", out=out, meta_file=META)
    got = [json.loads(hl)["data"]["time"] for _, hl in body_of(log_lines(out))]
    # Ties (+5 ns, +2 ms) keep file order; within one ms the receive ns decides (12 before 2).
    assert got == [1, 11, 12, 2, 3, 13]
    ts = [t for t, _ in body_of(log_lines(out))]
    assert ts == [1_737_918_843_000] * 4 + [1_737_918_843_002] * 2
    assert summary.held == 0


def test_receive_time_going_back_in_a_file_is_held_not_reordered(tmp_path: Path) -> None:
    ns = 1_737_918_843_000 * 10**6
    src = write_collector(
        tmp_path / "a.txt", [(ns, book_msg(1)), (ns - 3_000_000, book_msg(2)), (ns, book_msg(3))]
    )
    out = tmp_path / "m.jsonl.gz"
    done = arena_here(
        "import", "hftbacktest", str(src), "--meta", str(META), "-o", str(out), "--json", cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["held"] == 1 and "raised" in done.stderr
    got = [(t, json.loads(hl)["data"]["time"]) for t, hl in body_of(log_lines(out))]
    assert got == [(1_737_918_843_000, 1), (1_737_918_843_000, 2), (1_737_918_843_000, 3)]


def test_default_name_in_the_data_directorys_recordings(tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_DATA_DIR": str(tmp_path / "data")}
    args = ("import", "hftbacktest", str(COLLECTOR), "--meta", str(META))
    done = arena_here(*args, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    want = tmp_path / "data" / "recordings" / "hftbacktest-BTC-20250126T1914Z.jsonl.lz4"
    assert want.is_file() and f"wrote {want}" in done.stderr
    blob = want.read_bytes()
    assert blob[:4] == b"\x04\x22\x4d\x18" and blob[4] & 0x04  # LZ4 frame, content checksum
    assert body_of(log_lines(want)) == expected_collector()
    assert not (tmp_path / "recordings").exists()  # never into the checkout's recordings/
    again = arena_here(*args, cwd=tmp_path, env=env)
    assert "already exists; refusing to overwrite" in one_error_line(again)


@pytest.mark.parametrize(
    ("rows", "line", "needle"),
    [
        ([(1, book_msg(1)), (2, "oops")], 2, "not a JSON object"),
        ([(1, book_msg(1)), (2, '{"channel":"l2Book"')], 2, "not valid JSON"),
        ([(1, book_msg(1)), (1.5, book_msg(2))], 2, "<receive time ns> <JSON message>"),
        ([(1, book_msg(1).replace('"time":1', '"time":1.0'))], 1, "Expected `int`, got `float`"),
        ([(1, book_msg(1).replace("[[],[]]", '[[{"px":"1e5","sz":"1","n":1}],[]]'))], 1,
         "l2Book levels[0][0].px: not a decimal string: '1e5'"),
    ],
)  # fmt: skip
def test_bad_source_line_is_one_error_naming_file_and_line(
    tmp_path: Path, rows: list[tuple[Any, str]], line: int, needle: str
) -> None:
    src = tmp_path / "bad.txt"
    src.write_text("".join(f"{ns} {msg}\n" for ns, msg in rows))
    out = tmp_path / "out.jsonl"
    msg = one_error_line(
        arena_here("import", "hftbacktest", str(src), "--meta", str(META), "-o", str(out), cwd=ROOT)
    )
    assert f"{src}:{line}:" in msg and needle in msg, msg
    assert list(tmp_path.iterdir()) == [src]  # nothing written, no temporary left


def test_bad_archive_time_and_unknown_coin(tmp_path: Path) -> None:
    first = lz4.frame.decompress(ARCHIVE.read_bytes()).split(b"\n")[0]
    bad = tmp_path / "bad.lz4"
    bad.write_bytes(
        lz4.frame.compress(first + b"\n" + first.replace(b"2024-01-01T", b"Jan") + b"\n")
    )
    msg = one_error_line(
        arena_here("import", "hl-archive", str(bad), "--meta", str(META), cwd=tmp_path)
    )
    assert f"{bad}:2:" in msg and '"time"' in msg
    hype = write_collector(tmp_path / "hype.txt", [(1, book_msg(1, "HYPE"))])
    msg = one_error_line(
        arena_here("import", "hftbacktest", str(hype), "--meta", str(META), cwd=tmp_path)
    )
    assert "not in meta's universe: HYPE" in msg


def test_refuses_to_overwrite_and_both_meta_sources(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    out.write_bytes(b"keep me")
    msg = one_error_line(
        arena_here(
            "import", "hftbacktest", str(COLLECTOR), "--meta", str(META), "-o", str(out), cwd=ROOT
        )
    )
    assert f"{out}: already exists; refusing to overwrite" in msg
    assert out.read_bytes() == b"keep me"
    args = ["--meta", str(META), "--info-url", "http://127.0.0.1:9/info"]
    msg = one_error_line(arena_here("import", "hftbacktest", str(COLLECTOR), *args, cwd=tmp_path))
    assert "not both" in msg


def test_an_unreachable_meta_fails_before_the_files_are_read(tmp_path: Path) -> None:
    """Meta is fetched first: offline, the one-line error (with its --meta hint) comes at
    once, not after a scan of the whole input (minutes for a big archive)."""
    src = tmp_path / "bad.txt"
    src.write_text("not a collector line\n")  # pass 1 would stop here, naming the line
    url = "http://127.0.0.1:9/info"  # (nothing listens: refused at once)
    msg = one_error_line(arena_here("import", "hftbacktest", str(src), "--info-url", url))
    assert "cannot fetch meta" in msg and "--meta" in msg and f"{src}:1" not in msg, msg
    assert list(tmp_path.iterdir()) == [src]


@pytest.fixture
def meta_server() -> Iterator[tuple[str, list[bytes]]]:
    """A fake Hyperliquid info endpoint on loopback answering meta with the 2023 fixture."""
    asked: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            asked.append(self.rfile.read(int(self.headers["Content-Length"])))
            body = META.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/info", asked
    finally:
        server.shutdown()
        server.server_close()


def test_meta_fetched_live_from_info_url(
    tmp_path: Path, meta_server: tuple[str, list[bytes]]
) -> None:
    url, asked = meta_server
    out = tmp_path / "x.jsonl"
    done = arena_here(
        "import", "hftbacktest", str(COLLECTOR), "--info-url", url, "-o", str(out), cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(a) for a in asked] == [{"type": "meta"}]
    assert json.loads(log_lines(out)[0])["markets"] == [BTC]


def test_memory_stays_flat_however_large_the_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the importer's own passes; the day cache it keeps as it checks one file holds its
    # columns until its commit, as a reader keeping it does (tests/test_import_cache.py)
    monkeypatch.setenv("ARENA_CACHE", "0")
    book = book_msg(1).replace(
        "[[],[]]", json.dumps([[{"px": "1.0", "sz": "2.0", "n": 1}] * 20] * 2)
    )
    ns = 1_737_918_843_000 * 10**6
    peaks = []
    for lines in (8_000, 24_000):  # ~12 and ~36 MB of input, read ahead 2 MiB at a time
        src = tmp_path / f"big{lines}.txt"
        with src.open("w") as f:
            for i in range(lines):
                f.write(f"{ns + i * 10**6} {book}\n")
        assert src.stat().st_size > lines * 1_500
        tracemalloc.start()
        try:
            out = tmp_path / f"big{lines}.jsonl.lz4"
            import_files([str(src)], "hftbacktest", out=out, meta_file=META)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        peaks.append(peak)
    # read pieces, the one read ahead and write batches (~10.6 MB), not the input
    assert peaks[1] < 14_000_000, peaks
    assert peaks[1] < peaks[0] * 1.2, peaks  # three times the input: the same peak
