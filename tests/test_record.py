"""``arena record``'s core with an injected clock and no socket: lines, gaps, days, restarts.

The Recorder is fed frames as the socket loop would; every file it leaves must pass the
project's reader (LogReader) and keep the contract: ``t`` never decreases, one gap per
interruption, nothing overwritten, a crash leaves every file readable.
"""

from __future__ import annotations

import gzip
import io
import json
import threading
from pathlib import Path
from typing import Any

import lz4.frame
import msgspec
import pytest

from arena_tui.logs.dayfiles import compress, day_of, recording_files
from arena_tui.logs.daylog import DayLog
from arena_tui.logs.logfile import LogError, LogReader, open_binary
from arena_tui.logs.writer import LogWriter
from arena_tui.record.feed import Backoff, subscriptions
from arena_tui.record.recorder import Recorder
from arena_tui.record.status import Reporter
from arena_tui.util.paths import recordings_dir
from engine.inputs import Gap
from engine.units import DAY_MS
from tests.fakehl import capture_messages, compact

D0 = 1_796_256_000_000  # 2026-12-03 00:00:00 UTC
BTC = [{"coin": "BTC", "asset": 0, "szDecimals": 5}]
HEADER = {"recording": "hyperliquid", "markets": BTC}
MESSAGES = capture_messages()
BOOK = compact(next(m for m in MESSAGES if m["channel"] == "l2Book"))
TRADES = compact(next(m for m in MESSAGES if m["channel"] == "trades"))
PONG = b'{"channel":"pong"}'
SUBSCRIBED = b'{"channel":"subscriptionResponse","data":{"method":"subscribe","subscription":{}}}'


class Clock:
    """Wall time in ms, set by the test."""

    def __init__(self, t: int) -> None:
        self.t = t

    def __call__(self) -> int:
        return self.t


class Rec(Recorder):
    """A Recorder keeping its events, compressing closed days at once."""

    def __init__(self, out: Path, clock: Clock, header: dict[str, Any]) -> None:
        self.events: list[dict[str, Any]] = []
        super().__init__(DayLog(out, header, background=False), clock, self.events.append)


def recorder(out: Path, clock: Clock, header: dict[str, Any] = HEADER) -> Rec:
    rec = Rec(out, clock, header)
    rec.start()
    return rec


def lines(*paths: Path) -> list[dict[str, Any]]:
    """Every input of the files, checked by the project's reader first."""
    assert len(list(LogReader(paths))) >= 0
    out = []
    for p in paths:
        with open_binary(p) as f:  # .lz4 (and an older arena's .gz) by extension
            raw = f.read()
        rows = [json.loads(x) for x in raw.split(b"\n")[:-1]]  # [-1]: b"" or a torn tail
        assert "arena_log" in rows[0]
        out += rows[1:]
    return out


def gaps(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r["arena"] for r in rows if "arena" in r and r["arena"]["type"] == "gap"]


def test_frames_are_written_verbatim_with_their_receive_time(tmp_path: Path) -> None:
    clock = Clock(D0 + 1000)
    rec = recorder(tmp_path, clock)
    assert rec.frame(SUBSCRIBED) is False
    assert rec.frame(BOOK) is True
    clock.t += 5
    assert rec.frame(PONG) is False
    assert rec.frame(TRADES) is True
    rec.close()
    raw = (tmp_path / "hl-2026-12-03.jsonl").read_bytes().split(b"\n")
    assert json.loads(raw[0]) == {"arena_log": 1, **HEADER}
    assert raw[1:] == [
        b'{"t":%d,"hl":%s}' % (D0 + 1000, BOOK),
        b'{"t":%d,"hl":%s}' % (D0 + 1005, TRADES),
        b"",
    ]
    assert rec.control == 2 and rec.messages == 2
    assert rec.counts == {("BTC", "l2Book"): 1, ("BTC", "trades"): 1}


@pytest.mark.parametrize(
    "frame",
    [
        b'{"channel":"trades","data":[{"coin":"BTC","px":"105',  # truncated
        b'{"channel":"bbo","data":{"coin":"\xff\xfe"}}',  # not UTF-8
        b"[1,2,3]",  # JSON, not an object
        b'{"channel":"bbo"} {"channel":"bbo"}',  # two objects in one frame
        b'{"channel":"x"},"arena":{"type":"tick"}',  # would smuggle an arena input in
        b'{"channel":"l2Book","data":{"coin":"BTC","time":"1","levels":[[],[]]}}',  # str time
        b'{"channel":"trades","data":[{"coin":"BTC","px":"1","sz":"1","time":1}]}',  # no tid
    ],
    ids=["truncated", "utf8", "array", "two", "smuggle", "str-time", "no-tid"],
)
def test_frames_the_log_cannot_hold_are_counted_not_written(tmp_path: Path, frame: bytes) -> None:
    clock = Clock(D0 + 1000)
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    assert rec.frame(frame) is False
    rec.frame(TRADES)
    rec.close()
    rows = lines(tmp_path / "hl-2026-12-03.jsonl")
    assert [r["hl"]["channel"] for r in rows] == ["l2Book", "trades"]
    assert rec.bad_frames == 1
    assert [e["event"] for e in rec.events].count("bad_frame") == 1


def test_unknown_channels_are_kept_verbatim(tmp_path: Path) -> None:
    bbo = b'{"channel":"bbo","data":{"coin":"BTC","time":1,"bbo":[null,null]}}'
    rec = recorder(tmp_path, Clock(D0))
    assert rec.frame(bbo) is True
    rec.close()
    assert lines(tmp_path / "hl-2026-12-03.jsonl") == [{"t": D0, "hl": json.loads(bbo)}]


def test_a_frame_holding_newlines_becomes_one_compact_line(tmp_path: Path) -> None:
    pretty = json.dumps(json.loads(TRADES), indent="\t").encode()
    pretty = pretty.replace(b'"tid": ', b'"tid":\n 123456789012345678901234567890, "x": ', 1)
    rec = recorder(tmp_path, Clock(D0))
    assert rec.frame(pretty) is True
    rec.close()
    raw = (tmp_path / "hl-2026-12-03.jsonl").read_bytes().split(b"\n")[1]
    assert b"\t" not in raw and b": " not in raw
    assert json.loads(raw)["hl"] == json.loads(pretty)  # same tokens, big ints exact
    assert b"123456789012345678901234567890" in raw


def test_t_never_decreases_when_the_clock_steps_back(tmp_path: Path) -> None:
    clock = Clock(D0 + 5000)
    rec = recorder(tmp_path, clock)
    for t in (5000, 4000, 4500, 6000):
        clock.t = D0 + t
        rec.frame(BOOK)
    rec.close()
    assert [r["t"] - D0 for r in lines(tmp_path / "hl-2026-12-03.jsonl")] == [
        5000,
        5000,
        5000,
        6000,
    ]
    assert rec.clamped == 2


def test_one_gap_per_interruption_written_before_the_first_message_back(tmp_path: Path) -> None:
    clock = Clock(D0 + 1000)
    rec = recorder(tmp_path, clock)
    rec.on_connected("ws://x")
    rec.frame(BOOK)
    clock.t = D0 + 1200
    rec.on_lost("silence", "no market data", 10)
    for _ in range(3):
        rec.on_connect_failed("HTTP 503", 10)
    rec.on_connected("ws://x")
    rec.frame(SUBSCRIBED)
    rec.on_lost("disconnected", "no close frame", 10)  # lost again before any data: same gap
    rec.on_connected("ws://x")
    clock.t = D0 + 9000
    rec.frame(TRADES)
    rec.frame(BOOK)
    rec.close()
    rows = lines(tmp_path / "hl-2026-12-03.jsonl")
    assert [r["t"] - D0 for r in rows] == [1000, 9000, 9000, 9000]
    assert rows[1] == {
        "t": D0 + 9000,
        "arena": {"type": "gap", "from": D0 + 1000, "to": D0 + 9000, "reason": "silence"},
    }
    assert rec.gaps == 1 and rec.failed_connects == 3
    reader = LogReader([tmp_path / "hl-2026-12-03.jsonl"])
    assert [type(x.arena) for x in reader if x.arena is not None] == [Gap]


def test_no_gap_before_the_first_data_of_a_new_recording(tmp_path: Path) -> None:
    clock = Clock(D0)
    rec = recorder(tmp_path, clock)
    rec.on_connect_failed("refused", 10)
    rec.on_connected("ws://x")
    rec.on_lost("disconnected", "", 10)
    rec.on_connected("ws://x")
    rec.frame(BOOK)
    rec.close()
    assert gaps(lines(tmp_path / "hl-2026-12-03.jsonl")) == []


def test_files_roll_over_at_utc_midnight_by_receive_time(tmp_path: Path) -> None:
    clock = Clock(D0 + DAY_MS - 100)  # 23:59:59.900
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    clock.t = D0 + DAY_MS - 1
    rec.frame(TRADES)
    clock.t = D0 + DAY_MS  # 00:00:00.000 the next day
    rec.frame(BOOK)
    rec.close()
    day1, day2 = tmp_path / "hl-2026-12-03.jsonl.lz4", tmp_path / "hl-2026-12-04.jsonl"
    assert recording_files(tmp_path) == [day1, day2]
    assert not (tmp_path / "hl-2026-12-03.jsonl").exists()
    assert [r["t"] for r in lines(day1)] == [D0 + DAY_MS - 100, D0 + DAY_MS - 1]
    assert [r["t"] for r in lines(day2)] == [D0 + DAY_MS]
    assert len(list(LogReader([day1, day2]))) == 3


def test_a_gap_across_midnight_goes_into_the_new_day(tmp_path: Path) -> None:
    clock = Clock(D0 + DAY_MS - 2000)
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    rec.on_lost("disconnected", "", 10)
    clock.t = D0 + DAY_MS + 3000
    rec.frame(BOOK)
    rec.close()
    day1, day2 = recording_files(tmp_path)
    assert gaps(lines(day1)) == []
    assert gaps(lines(day2)) == [
        {
            "type": "gap",
            "from": D0 + DAY_MS - 2000,
            "to": D0 + DAY_MS + 3000,
            "reason": "disconnected",
        }
    ]


def test_closed_days_are_compressed_in_the_background(tmp_path: Path) -> None:
    clock = Clock(D0 + 10)
    log = DayLog(tmp_path, HEADER)  # background=True, as in production
    rec = Recorder(log, clock)
    rec.start()
    rec.frame(BOOK)
    clock.t += 2 * DAY_MS
    rec.frame(BOOK)
    rec.close()  # waits for the compression
    assert [p.name for p in recording_files(tmp_path)] == [
        "hl-2026-12-03.jsonl.lz4",
        "hl-2026-12-05.jsonl",
    ]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_restart_on_the_same_day_appends_and_marks_a_restart_gap(tmp_path: Path) -> None:
    clock = Clock(D0 + 1000)
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    clock.t = D0 + 2000
    rec.frame(TRADES)
    rec.close()
    path = tmp_path / "hl-2026-12-03.jsonl"
    before = path.read_bytes()
    clock.t = D0 + 60_000
    rec = recorder(tmp_path, clock)
    assert rec.last_t == D0 + 2000
    clock.t = D0 + 61_000
    rec.frame(BOOK)
    rec.close()
    after = path.read_bytes()
    assert after.startswith(before)
    assert after.count(b"arena_log") == 1
    rows = lines(path)
    assert rows[2] == {
        "t": D0 + 61_000,
        "arena": {"type": "gap", "from": D0 + 2000, "to": D0 + 61_000, "reason": "restart"},
    }
    assert [r["t"] - D0 for r in rows] == [1000, 2000, 61_000, 61_000]


def test_a_crash_mid_line_is_cut_and_the_restart_gap_starts_at_the_last_whole_line(
    tmp_path: Path,
) -> None:
    clock = Clock(D0 + 1000)
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    path = tmp_path / "hl-2026-12-03.jsonl"
    with path.open("ab") as f:  # killed in the middle of a line: no close, a torn tail
        f.write(b'{"t":%d,"hl":{"channel":"l2Bo' % (D0 + 1500))
    assert [r["t"] for r in lines(path)] == [D0 + 1000]  # readable even before the restart
    clock.t = D0 + 3000
    rec2 = recorder(tmp_path, clock)
    rec2.frame(TRADES)
    rec2.close()
    rows = lines(path)
    assert rows[1]["arena"] == {
        "type": "gap",
        "from": D0 + 1000,
        "to": D0 + 3000,
        "reason": "restart",
    }
    assert b"l2Bo" not in path.read_bytes().split(b"\n", 2)[2]


def test_a_restart_on_a_later_day_compresses_the_old_day_and_marks_the_gap(tmp_path: Path) -> None:
    clock = Clock(D0 + 1000)
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    rec.close()  # stopped: the day stays open (plain) until a later day begins
    clock.t = D0 + 2 * DAY_MS + 7
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    rec.close()
    old, new = recording_files(tmp_path)
    assert (old.name, new.name) == ("hl-2026-12-03.jsonl.lz4", "hl-2026-12-05.jsonl")
    assert gaps(lines(new)) == [
        {"type": "gap", "from": D0 + 1000, "to": D0 + 2 * DAY_MS + 7, "reason": "restart"}
    ]
    assert len(list(LogReader([old, new]))) == 3


def test_a_clock_behind_the_recording_appends_to_its_last_day(tmp_path: Path) -> None:
    clock = Clock(D0 + DAY_MS + 500)
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    rec.close()
    clock.t = D0 + 100  # the day before: t is clamped, so the file of the last t is used
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    rec.close()
    assert [p.name for p in recording_files(tmp_path)] == ["hl-2026-12-04.jsonl"]
    assert [r["t"] for r in lines(tmp_path / "hl-2026-12-04.jsonl")] == [D0 + DAY_MS + 500] * 3


@pytest.mark.parametrize("suffix", [".lz4", ".gz"])  # .gz: a crash of an older arena
def test_leftovers_of_a_crash_during_compression_are_finished(tmp_path: Path, suffix: str) -> None:
    clock = Clock(D0 + 1000)
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    rec.close()
    plain = tmp_path / "hl-2026-12-03.jsonl"
    content = plain.read_bytes()
    (tmp_path / f".hl-2026-12-03.jsonl{suffix}.tmp").write_bytes(b"half a compressed file")
    whole = gzip.compress(content) if suffix == ".gz" else lz4.frame.compress(content)
    (tmp_path / f"hl-2026-12-03.jsonl{suffix}").write_bytes(whole)  # renamed, not unlinked
    clock.t = D0 + DAY_MS + 1
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    rec.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["hl-2026-12-03.jsonl.lz4", "hl-2026-12-04.jsonl"]
    assert lz4.frame.decompress((tmp_path / names[0]).read_bytes()) == content


def test_a_closed_day_is_lz4_with_its_content_checksum_so_a_flipped_bit_is_an_error(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "hl-2026-12-03.jsonl"
    body = b"".join(b'{"t":%d,"arena":{"type":"tick"}}\n' % (D0 + i) for i in range(20_000))
    plain.write_bytes(b'{"arena_log":1}\n' + body)
    closed = compress(plain)
    assert closed == tmp_path / "hl-2026-12-03.jsonl.lz4" and not plain.exists()
    blob = closed.read_bytes()
    assert blob[:4] == b"\x04\x22\x4d\x18"  # an LZ4 frame
    assert blob[4] & 0x04  # FLG: content checksum present
    assert sum(1 for _ in LogReader([closed])) == 20_000
    bad = bytearray(blob)
    bad[len(bad) // 2] ^= 0x10  # inside the compressed data
    closed.write_bytes(bytes(bad))
    with pytest.raises(LogError, match="truncated or corrupt"):
        list(LogReader([closed]))
    closed.write_bytes(blob[: len(blob) - 3])  # torn: the checksum's last bytes missing
    with pytest.raises(LogError, match="truncated or corrupt"):
        list(LogReader([closed]))


def test_days_closed_as_gz_by_an_older_arena_are_still_found_read_and_kept_closed(
    tmp_path: Path,
) -> None:
    clock = Clock(D0 + 1000)
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    rec.close()
    plain = tmp_path / "hl-2026-12-03.jsonl"
    old = tmp_path / "hl-2026-12-03.jsonl.gz"
    old.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()  # as an older arena closed it
    clock.t = D0 + 5000  # a clock behind: the recording's last day is already closed
    with pytest.raises(LogError, match=r"hl-2026-12-03\.jsonl\.gz: that day is already closed"):
        recorder(tmp_path, clock)
    clock.t = D0 + DAY_MS + 7
    rec = recorder(tmp_path, clock)
    assert rec.last_t == D0 + 1000  # read back from the .gz
    rec.frame(BOOK)
    rec.close()
    assert recording_files(tmp_path) == [old, tmp_path / "hl-2026-12-04.jsonl"]
    assert gaps(lines(*recording_files(tmp_path)))[0]["from"] == D0 + 1000


def test_a_cancelled_compression_keeps_the_plain_file(tmp_path: Path) -> None:
    plain = tmp_path / "hl-2026-12-03.jsonl"
    plain.write_bytes(b'{"arena_log":1}\n{"t":1}\n')
    cancel = threading.Event()
    cancel.set()
    assert compress(plain, cancel) is None
    assert [p.name for p in tmp_path.iterdir()] == [plain.name]
    assert compress(plain) == tmp_path / "hl-2026-12-03.jsonl.lz4"
    assert (
        lz4.frame.decompress((tmp_path / "hl-2026-12-03.jsonl.lz4").read_bytes())
        == b'{"arena_log":1}\n{"t":1}\n'
    )


def test_a_day_file_of_other_markets_is_refused(tmp_path: Path) -> None:
    rec = recorder(tmp_path, Clock(D0))
    rec.frame(BOOK)
    rec.close()
    both = {
        "recording": "hyperliquid",
        "markets": [*BTC, {"coin": "ETH", "asset": 1, "szDecimals": 4}],
    }
    with pytest.raises(LogError, match="records BTC, this run records BTC,ETH"):
        recorder(tmp_path, Clock(D0 + 5), both)


def test_day_of_is_the_utc_day() -> None:
    assert day_of(D0) == "2026-12-03"
    assert day_of(D0 - 1) == "2026-12-02"
    assert day_of(D0 + DAY_MS - 1) == "2026-12-03"


def test_backoff_is_capped_exponential_with_jitter_and_resets() -> None:
    top, bottom = Backoff(rand=lambda: 0.999999), Backoff(rand=lambda: 0.0)
    highs = [top.next_ms() for _ in range(10)]
    lows = [bottom.next_ms() for _ in range(10)]
    assert highs[0] <= 500 < 1000  # the first retry within 1 s
    assert highs[:7] == [499, 999, 1999, 3999, 7999, 15999, 29999]
    assert set(highs[6:]) == {29999} and set(lows[6:]) == {15000}  # capped at 30 s
    assert all(lo * 2 == hi + 1 for lo, hi in zip(lows, highs, strict=True))
    top.reset()
    assert top.next_ms() == 499
    fast = Backoff(1, 20, rand=lambda: 0.5)
    assert sum(fast.next_ms() for _ in range(20)) < 400  # 20 test reconnects: well under 1 s


def test_every_coin_gets_the_three_subscriptions() -> None:
    subs = [json.loads(s) for s in subscriptions(("BTC", "HYPE"))]
    assert subs[0] == {"method": "subscribe", "subscription": {"type": "l2Book", "coin": "BTC"}}
    assert {(s["subscription"]["type"], s["subscription"]["coin"]) for s in subs} == {
        (kind, coin) for kind in ("l2Book", "trades", "activeAssetCtx") for coin in ("BTC", "HYPE")
    }


class Mono:
    def __init__(self) -> None:
        self.s = 0.0

    def __call__(self) -> float:
        return self.s


def test_group_fsync_hands_lines_to_the_os_at_once_and_fsyncs_once_a_second(
    tmp_path: Path,
) -> None:
    mono = Mono()
    p = tmp_path / "g.jsonl"
    w = LogWriter(p, HEADER, group_fsync_s=1.0, monotonic=mono)
    opened = w.syncs  # opening syncs once (the torn-tail check)
    for i in range(100):
        w.write(D0 + i, arena={"type": "tick"})
        assert p.read_bytes().count(b"\n") == i + 2  # visible to another reader: kill -9 safe
    assert w.syncs == opened
    mono.s = 0.5
    w.maybe_sync()
    assert w.syncs == opened
    mono.s = 1.0
    w.maybe_sync()
    w.maybe_sync()  # nothing new since
    assert w.syncs == opened + 1
    w.close()
    d = LogWriter(tmp_path / "d.jsonl", HEADER)  # the default is unchanged: one fsync a line
    opened = d.syncs
    for i in range(5):
        d.write(D0 + i, arena={"type": "tick"})
    assert d.syncs == opened + 5
    d.close()


def test_data_dir_comes_from_the_env_var_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path / "data"))
    assert recordings_dir() == tmp_path / "data" / "recordings"
    monkeypatch.delenv("ARENA_DATA_DIR")
    assert recordings_dir().parts[-2:] == ("arena", "recordings")


def test_gap_lines_match_the_engine_schema(tmp_path: Path) -> None:
    clock = Clock(D0)
    rec = recorder(tmp_path, clock)
    rec.frame(BOOK)
    rec.on_lost("disconnected", "", 1)
    clock.t += 50
    rec.frame(BOOK)
    rec.close()
    gap = next(x for x in LogReader([tmp_path / "hl-2026-12-03.jsonl"]) if x.arena is not None)
    assert msgspec.to_builtins(gap.arena) == {
        "type": "gap",
        "from": D0,
        "to": D0 + 50,
        "reason": "disconnected",
    }


def status(n: int, connected: bool = True) -> dict[str, Any]:
    return {
        "messages": n,
        "by_coin": {"BTC": {"l2Book": n, "trades": 2 * n}},
        "gaps": 1,
        "bad_frames": 0,
        "connected": connected,
        "bytes": 2_500_000,
        "file": "/x/hl-2026-12-03.jsonl",
    }


def test_status_shows_rates_per_coin_and_channel_and_plain_lines_are_rare() -> None:
    mono, err = Mono(), io.StringIO()
    rep = Reporter(as_json=False, tty=False, every_s=60.0, err=err, monotonic=mono)
    mono.s = 2.0
    rep.tick(status(10))  # 10 books, 20 trades in 2 s
    assert err.getvalue() == ""  # not a tty: a status line only every 60 s
    mono.s = 60.0
    rep.tick(status(68))
    line = err.getvalue()
    assert line.startswith("arena: record: live | msg/s book/trades/ctx BTC 1.0/2.0/0.0 |")
    assert "gaps 1" in line and "2.5 MB" in line and line.endswith("hl-2026-12-03.jsonl\n")
    rep.event({"event": "lost", "reason": "silence", "detail": "no data", "retry_ms": 1500})
    assert err.getvalue().endswith("(silence: no data); retrying in 1.5 s\n")


def test_json_status_and_events_go_to_stdout_as_json_lines() -> None:
    mono, out, err = Mono(), io.StringIO(), io.StringIO()
    rep = Reporter(as_json=True, tty=True, every_s=1.0, out=out, err=err, monotonic=mono)
    rep.event({"event": "gap", "from": D0, "to": D0 + 5, "reason": "disconnected"})
    mono.s = 1.0
    rep.tick(status(4, connected=False))
    rep.summary(status(4), 1000, ["/x/hl-2026-12-03.jsonl"])
    docs = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [d["event"] for d in docs] == ["gap", "status", "summary"]
    assert docs[1]["per_s"] == {"BTC": {"l2Book": 4.0, "trades": 8.0}}
    assert docs[1]["connected"] is False and docs[2]["files"] == ["/x/hl-2026-12-03.jsonl"]
    assert err.getvalue() == ""  # --json: no status line drawn, even on a tty
