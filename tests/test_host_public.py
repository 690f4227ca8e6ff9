"""What ``arena host`` makes public for anyone to check a season, over real HTTP on 127.0.0.1.

The log (``GET /v1/log``: whole durable lines only, followed by ``Range`` or ``?offset``),
the season file beside it, the paper label, each entry's minute marks and fills (with the
quote each filled against and its order's note), and a scores answer that is what the
database file holds, whoever wrote it. The host is the real one in a thread
(``tests/hostkit.py``); what it serves is compared with the log it wrote.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from websockets.sync.client import connect

from arena_tui.host import answers, logserve
from arena_tui.host.store import db_path
from arena_tui.logs.logfile import LogReader
from arena_tui.record.feed import wall_ms
from arena_tui.season.file import load_season
from engine import Engine
from engine import events as ev
from engine.units import E8, parse_e8
from tests import build
from tests.hostkit import arena_rows, hosted, log_rows, order, wait_until

NDJSON = "application/x-ndjson"

# ---- the log ------------------------------------------------------------------------------


def _get_log(c: httpx.Client, **headers: str) -> httpx.Response:
    return c.get("/v1/log", headers=headers)


def test_the_log_served_is_the_files_whole_lines_and_a_follower_gets_all_of_it(
    tmp_path: Path,
) -> None:
    with hosted(tmp_path) as h, h.client() as anon, h.client("alice") as alice:
        r = anon.get("/v1/log")  # no key: public
        assert r.status_code == 200
        assert r.headers["content-type"] == NDJSON
        assert r.headers["accept-ranges"] == "bytes"
        size = int(r.headers["arena-log-size"])
        assert int(r.headers["content-length"]) == size == len(r.content)
        assert r.content == h.log.read_bytes()[:size]  # the file's prefix, whole lines
        assert r.content.endswith(b"\n")
        assert all(json.loads(x) for x in r.content.splitlines())
        # A follower: reads from the size it has, again and again, as the log grows.
        got = r.content
        for i in range(4):
            assert alice.post("/v1/orders", json=order(cloid=hex(i + 1))).status_code == 200
            r = _get_log(anon, Range=f"bytes={len(got)}-")
            assert r.status_code == 206, r.text
            size = int(r.headers["arena-log-size"])
            assert r.headers["content-range"] == f"bytes {len(got)}-{size - 1}/{size}"
            assert r.content.endswith(b"\n") and b'"cloid":"%s"' % hex(i + 1).encode() in r.content
            got += r.content
        assert got == h.log.read_bytes()[: len(got)]
        # Then ?offset: the same bytes, answered 200.
        r = anon.get("/v1/log", params={"offset": str(len(got))})
        assert r.status_code == 200
        got += r.content
        size = int(r.headers["arena-log-size"])
        assert len(got) == size and got == h.log.read_bytes()[:size]
        # A range read from anywhere: exactly the bytes after it.
        mid = size // 2
        r = _get_log(anon, Range=f"bytes={mid}-")
        assert r.content == got[mid : int(r.headers["arena-log-size"])]
        r = _get_log(anon, Range=f"bytes={mid}-{mid + 9}")
        assert (r.status_code, r.content) == (206, got[mid : mid + 10])
        assert r.headers["content-range"].startswith(f"bytes {mid}-{mid + 9}/")
        r = _get_log(anon, Range="bytes=5-999999999999")  # the end clipped to the size
        end = int(r.headers["arena-log-size"])
        assert r.content == h.log.read_bytes()[5:end]
        r = _get_log(anon, Range="bytes=-10")  # the last ten bytes
        end = int(r.headers["arena-log-size"])
        assert r.content == h.log.read_bytes()[end - 10 : end]
        # HEAD: the headers, no body.
        r = anon.head("/v1/log", headers={"Range": f"bytes={mid}-"})
        assert r.status_code == 206 and r.content == b""
        assert int(r.headers["content-length"]) == int(r.headers["arena-log-size"]) - mid


def test_reading_at_or_past_the_end_and_malformed_requests(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False) as h, h.client() as anon:
        size = int(anon.head("/v1/log").headers["arena-log-size"])

        def at_end(r: httpx.Response) -> int:
            """The size the answer was made at (ticks keep coming: it may have grown)."""
            assert r.headers["accept-ranges"] == "bytes"
            return int(r.headers["arena-log-size"])

        r = _get_log(anon, Range=f"bytes={size}-")
        now = at_end(r)
        if now == size:  # (no tick was written in between: the usual case)
            assert r.status_code == 416
            assert r.headers["content-range"] == f"bytes */{size}"
            assert r.json()["error"] == "RangeNotSatisfiable"
        far = size + 10**9
        r = _get_log(anon, Range=f"bytes={far}-")
        assert (r.status_code, r.headers["content-range"]) == (416, f"bytes */{at_end(r)}")
        r = anon.get("/v1/log", params={"offset": str(far)})
        assert r.status_code == 416
        r = anon.get("/v1/log", params={"offset": str(size)})
        assert r.status_code == 200
        assert r.content == h.log.read_bytes()[size : at_end(r)]  # empty unless it grew
        r = _get_log(anon, Range="bytes=9-3")  # the end before the start: nothing to send
        assert r.status_code == 416
        for bad in ("bytes=a-", "bytes=0-1,5-6", "items=0-", "bytes 0-", "bytes=-", ""):
            r = _get_log(anon, Range=bad)
            assert (r.status_code, r.json()["error"]) == (400, "BadRequest"), bad
            assert "\n" not in r.json()["detail"]
            at_end(r)
        assert "one range only" in _get_log(anon, Range="bytes=0-1,5-6").json()["detail"]
        for bad in ("-1", "abc", "1.5", "9" * 19):
            r = anon.get("/v1/log", params={"offset": bad})
            assert (r.status_code, r.json()["error"]) == (400, "BadRequest"), bad
        r = anon.get("/v1/log", params={"offset": "0"}, headers={"Range": "bytes=0-"})
        assert r.status_code == 400 and "not both" in r.json()["detail"]


@given(
    size=st.integers(1, 10**6),
    first=st.integers(0, 2 * 10**6),
    last=st.none() | st.integers(0, 2 * 10**6),
)
def test_a_range_is_exactly_the_bytes_asked_for_within_the_durable_size(
    size: int, first: int, last: int | None
) -> None:
    spec = f"bytes={first}-{'' if last is None else last}"
    want_end = size if last is None else min(size, last + 1)
    if first >= size or (last is not None and last < first):
        with pytest.raises(logserve.Refused) as refused:
            logserve.byte_slice(size, spec, None)
        assert refused.value.status == 416
    else:
        assert logserve.byte_slice(size, spec, None) == (206, first, want_end)
    if first <= size:  # ?offset: the same start, to the end, 200 (empty at the end)
        assert logserve.byte_slice(size, None, str(first)) == (200, first, size)
    else:
        with pytest.raises(logserve.Refused):
            logserve.byte_slice(size, None, str(first))


def test_a_line_written_but_not_yet_fsynced_is_not_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = threading.Event()
    gate.set()
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        assert gate.wait(20), "the test never opened the gate"
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with (
        hosted(tmp_path, market=False) as h,
        h.client() as anon,
        h.client("alice") as alice,
        ThreadPoolExecutor(1) as pool,
    ):
        before = anon.get("/v1/log")
        gate.clear()  # the next batch is written and flushed, then waits for its fsync
        try:
            placed = pool.submit(alice.post, "/v1/orders", json=order(cloid="0x77"))
            marker = b'"cloid":"0x77"'
            wait_until(lambda: marker in h.log.read_bytes())  # in the file, not durable
            r = anon.get("/v1/log")
            assert marker not in r.content
            assert r.content == h.log.read_bytes()[: int(r.headers["arena-log-size"])]
            assert r.content.startswith(before.content) and r.content.endswith(b"\n")
            assert not placed.done()  # (the answer waits for the fsync too)
        finally:
            gate.set()
        assert placed.result(20).status_code == 422  # (no market yet: logged all the same)
        assert marker in anon.get("/v1/log").content


def test_a_torn_tail_left_by_a_crash_is_never_served(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False):
        pass
    whole = (tmp_path / "season.jsonl").read_bytes()
    torn = b'{"t":%d,"arena":{"type":"ord' % wall_ms()
    with (tmp_path / "season.jsonl").open("ab") as f:
        f.write(torn)  # a crash in the middle of a line
    season = tmp_path / "season.json"
    with hosted(tmp_path, season=season, entries=(), market=False) as h, h.client() as anon:
        wait_until(lambda: b'"reason":"restart"' in h.log.read_bytes())
        served = anon.get("/v1/log").content
        assert served.startswith(whole) and b'"type":"ord' not in served
        assert all(json.loads(x) for x in served.splitlines())


def test_the_season_file_is_served_and_both_answers_say_paper(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False) as h, h.client() as anon:
        r = anon.get("/v1/season/file")
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        beside = tmp_path / "host-test.json"  # written beside the log at the first start
        assert r.content == beside.read_bytes()
        served = tmp_path / "served" / "host-test.json"
        served.parent.mkdir()
        served.write_bytes(r.content)
        season = anon.get("/v1/season").json()
        assert load_season(served).rules_sha256 == season["rules_sha256"]
        assert (
            json.loads(h.log.read_bytes().split(b"\n")[0])["rules_sha256"]
            == (season["rules_sha256"])
        )
        assert season["paper"] is True
        assert anon.get("/v1/scores").json()["paper"] is True
        assert anon.get("/v1/scores", params={"day": "0"}).json()["paper"] is True


# ---- notes and quotes ---------------------------------------------------------------------

NOTE = "breakout over 100k; sizing small — ça tient? 🚀"


def _logged_quote(log: Path, fill: dict[str, Any]) -> None:
    """The fill's quote is what the log line it came from says."""
    q = fill["quote"]
    for row in log_rows(log):
        hl = row.get("hl", {})
        if q["source"] == "book" and hl.get("channel") == "l2Book":
            data = hl["data"]
            if data["coin"] == "BTC" and data["time"] == q["time"]:
                level = data["levels"][1 if fill["isBuy"] else 0][q["level"]]
                assert (parse_e8(level["px"]), parse_e8(level["sz"])) == (q["px"], q["sz"])
                assert level["n"] == q["n"] and fill["px"] == q["px"]
                return
        if q["source"] == "print" and hl.get("channel") == "trades":
            for trade in hl["data"]:
                if trade["tid"] == q["tid"]:
                    assert (trade["time"], parse_e8(trade["px"])) == (q["time"], q["px"])
                    assert parse_e8(trade["sz"]) == q["sz"]
                    return
    raise AssertionError(f"no logged line for the quote {q}")


def _fills(h: Any, alice: httpx.Client, anon: httpx.Client) -> list[dict[str, Any]]:
    """Alice's fills, which the authed and the public view must give alike."""
    mine = alice.get("/v1/fills").json()
    assert anon.get("/v1/entries/alice/fills").json() == mine
    return list(mine["fills"])


def test_notes_and_quotes_round_trip_to_the_log_the_fills_and_a_restart(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice, h.client() as anon:
        ws_url = h.url.replace("http", "ws") + "/v1/stream?market=0"
        auth = {"Authorization": f"Bearer {h.keys['alice']}"}
        with connect(ws_url, additional_headers=auth) as ws:
            # a taker fill with a note (IOC through the ask)
            taker = alice.post("/v1/orders", json={**order(px=100_010, tif=3), "note": NOTE})
            assert taker.status_code == 200
            h.book_after(taker.json()["activates_at"])
            # a resting bid with a note, then a print through it: a maker fill
            bid = alice.post("/v1/orders", json={**order(px=99_000), "note": "patient bid"})
            oid = bid.json()["oid"]
            h.book_after(bid.json()["activates_at"])
            opened = alice.get("/v1/orders").json()["orders"]
            assert [(o["oid"], o["note"]) for o in opened] == [(oid, "patient bid")]
            t = wall_ms()
            h.send(build.trades(t, ("BTC", "98990.0", "0.01", t, 4242)))
            # and a fill without a note, an empty note being none
            plain = alice.post("/v1/orders", json={**order(px=100_010, tif=3), "note": ""})
            h.book_after(plain.json()["activates_at"])
            streamed: list[dict[str, Any]] = []
            while len(streamed) < 3:
                doc = json.loads(ws.recv(timeout=10))["event"]
                if doc["kind"] == "fill":
                    streamed.append(doc)
        notes = [r.get("note") for r in arena_rows(h.log, "order")]
        assert notes == [NOTE, "patient bid", None]  # written with the order; "" is no note
        assert NOTE in h.log.read_bytes().decode("utf-8")
        fills = _fills(h, alice, anon)
        assert [(f["liquidity"], f["note"]) for f in fills] == [
            ("taker", NOTE),
            ("maker", "patient bid"),
            ("taker", None),
        ]
        assert fills[1]["quote"] == {
            "source": "print",
            "tid": 4242,
            "time": t,
            "px": 98_990 * E8,
            "sz": E8 // 100,
        }
        assert fills[0]["quote"]["source"] == "book" and fills[0]["quote"]["level"] == 0
        for f in fills:
            _logged_quote(h.log, f)
        assert [(s["oid"], s["quote"], s["note"]) for s in streamed] == [
            (f["oid"], f["quote"], f["note"]) for f in fills
        ]
        open_orders = alice.get("/v1/orders").json()
        assert [o["note"] for o in open_orders["orders"]] == ["patient bid"]  # (filled, open)
        key, season = h.keys["alice"], tmp_path / "season.json"
    # A restarted server replays the log: the same notes, from the logged lines.
    with hosted(tmp_path, season=season, entries=(), market=False) as again:
        again.keys["alice"] = key
        with again.client("alice") as alice, again.client() as anon:
            assert _fills(again, alice, anon) == fills
            assert alice.get("/v1/orders").json() == open_orders


def test_a_note_too_long_or_not_a_string_is_400_and_nothing_is_logged(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        before = h.inputs()
        for note, why in (("x" * 281, "281 characters; at most 280"), (5, "Expected `str | null`")):
            r = alice.post("/v1/orders", json={**order(), "note": note})
            assert (r.status_code, r.json()["error"]) == (400, "BadRequest")
            assert why in r.json()["detail"] and "\n" not in r.json()["detail"]
        assert h.inputs() == before
        r = alice.post("/v1/orders", json={**order(), "note": "é" * 280})  # 280: fine
        assert r.status_code == 200
        assert arena_rows(h.log, "order")[-1]["note"] == "é" * 280
        rules = alice.get("/v1/season").json()["rules_sha256"]
        assert rules == load_season(tmp_path / "season.json").rules_sha256  # notes or not


# ---- per-entry public views ---------------------------------------------------------------


def _replayed_marks(text: bytes, tmp_path: Path, entry: str) -> list[dict[str, Any]]:
    """The entry's minute marks from a replay of ``text`` (a log) by a fresh engine."""
    path = tmp_path / "served.jsonl"
    path.write_bytes(text)
    engine = Engine(load_season(tmp_path / "season.json"))
    out = []
    for line in LogReader([str(path)]):
        for e in engine.apply(line):
            if isinstance(e, ev.MinuteMark) and e.entry == entry:
                keys = ("t", "equity", "peak", "drawdown", "mdd", "active")
                out.append({k: getattr(e, k) for k in keys})
    return out


def test_each_entrys_marks_and_fills_are_public_and_an_unknown_entry_is_404(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        hosted(tmp_path, mark_interval_ms=1000) as h,
        h.client() as anon,
        h.client("alice") as alice,
    ):
        taker = alice.post("/v1/orders", json={**order(px=100_010, tif=3), "note": "go"})
        h.book_after(taker.json()["activates_at"])

        def marks() -> list[dict[str, Any]]:
            r = anon.get("/v1/entries/alice/equity")
            assert r.status_code == 200 and r.json()["entry"] == "alice"
            return list(r.json()["marks"])

        wait_until(lambda: len(marks()) >= 3, 20)
        served = marks()
        log = anon.get("/v1/log").content
        assert served == _replayed_marks(log, tmp_path, "alice")[: len(served)]
        since = served[1]["t"]
        later = anon.get("/v1/entries/alice/equity", params={"since": since}).json()
        assert later["marks"][: len(served) - 1] == served[1:]
        monkeypatch.setattr(answers, "MAX_MARKS", 2)
        cut = anon.get("/v1/entries/alice/equity").json()
        assert (cut["marks"], cut["more"]) == (served[:2], True)

        listed = anon.get("/v1/entries").json()
        assert (listed["season"], listed["paper"]) == ("host-test", True)
        assert [e["entry"] for e in listed["entries"]] == ["alice", "bob"]
        mine = listed["entries"][0]
        assert mine["fills"] == 1 and mine["marks"] >= len(served)
        assert mine["mark"] == anon.get("/v1/entries/alice/equity").json()["marks"][-1] or (
            mine["marks"] > len(marks())  # (a mark may come between the two reads)
        )
        rows = anon.get("/v1/scores").json()["rows"]
        assert mine["row"] in [r for r in rows if r["entry"] == "alice"]
        (f,) = anon.get("/v1/entries/alice/fills").json()["fills"]
        assert (f["note"], f["quote"]["source"]) == ("go", "book")
        assert anon.get("/v1/entries/bob/fills").json() == {"fills": [], "more": False}
        for path in ("/v1/entries/mallory/equity", "/v1/entries/mallory/fills"):
            r = anon.get(path)
            assert (r.status_code, r.json()["error"]) == (404, "UnknownEntry")
        r = anon.get("/v1/entries/alice/fills", params={"since": "soon"})
        assert (r.status_code, r.json()["error"]) == (400, "BadRequest")


# ---- the scores answer is what the database holds ------------------------------------------


def test_the_scores_answer_serves_a_change_made_on_disk_by_another_process(
    tmp_path: Path,
) -> None:
    with hosted(tmp_path, market=False) as h, h.client() as anon:
        first = anon.get("/v1/scores").json()
        assert anon.get("/v1/scores").json() == first  # (served from the cache)
        row = (20_000, wall_ms(), "mallory", 1, 10**12, 10**8, 0, 10**8, 1, 5, 10**8)
        with sqlite3.connect(db_path(h.log)) as db:  # someone else's connection
            db.execute("INSERT INTO scores VALUES (?,?,?,?,?,?,?,?,?,?,?)", row)
        served = anon.get("/v1/scores").json()["rows"]
        assert [(r["entry"], r["equity"]) for r in served if r["day"] == 20_000] == [
            ("mallory", 10**12)
        ]
        with sqlite3.connect(db_path(h.log)) as db:
            db.execute("UPDATE scores SET equity = 7 WHERE entry = 'mallory'")
        served = anon.get("/v1/scores", params={"day": "20000"}).json()["rows"]
        assert [(r["entry"], r["equity"]) for r in served] == [("mallory", 7)]
        served = anon.get("/v1/scores").json()["rows"]
        assert [(r["entry"], r["equity"]) for r in served if r["day"] == 20_000] == [("mallory", 7)]
