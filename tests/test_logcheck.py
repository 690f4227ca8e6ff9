"""``arena logs check``: every kind of damage found with its file:line, and the statistics.

The statistics are checked on a small hand-built log whose numbers are worked out in the
comments; the damage cases each break one line of a good log and expect exactly that line.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from arena_tui.logs.logcheck import SHOW_MAX, check_logs
from tests.build import T0, book, ctx, order, tick, trades
from tests.clirun import ROOT, arena, arena_here, one_error_line

HEADER = {
    "arena_log": 1,
    "recording": "hyperliquid",
    "markets": [{"coin": "BTC", "asset": 0, "szDecimals": 5}],
}
LEVELS = ([("105055.0", "3.03622")], [("105056.0", "6.34472")])


def enc(row: Any) -> bytes:
    return row if isinstance(row, bytes) else json.dumps(row, separators=(",", ":")).encode()


def write(path: Path, rows: list[Any], *, header: Any = HEADER, tail: bytes = b"") -> Path:
    data = b"".join(enc(r) + b"\n" for r in [header, *rows]) + tail
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def gap(t: int, start: int, end: int, reason: str) -> dict[str, Any]:
    return {"t": t, "arena": {"type": "gap", "from": start, "to": end, "reason": reason}}


def p(time: int, tid: int, coin: str = "BTC") -> tuple[str, str, str, int, int]:
    return (coin, "105056.0", "0.01", time, tid)


STATS_ROWS: list[Any] = [
    book(T0 + 1_000, "BTC", T0 + 900, *LEVELS),  # line 2
    book(T0 + 1_500, "ETH", T0 + 1_500),  # 3
    book(T0 + 2_000, "BTC", T0 + 2_000 - 10_000, *LEVELS),  # 4: 10,000 ms old: not stale
    trades(T0 + 2_100, p(T0 + 1_900, 1), p(T0 + 1_900, 2)),  # 5: both applied
    # 6: tid 2 again at 1,900 (dup), an earlier print (dup), tid 4 at 1,900 (new): 2 dups
    trades(T0 + 2_200, p(T0 + 1_900, 2), p(T0 + 1_800, 3), p(T0 + 1_900, 4)),
    book(T0 + 5_000, "BTC", T0 + 5_000 - 10_001, *LEVELS),  # 7: stale
    gap(T0 + 10_000, T0 + 5_000, T0 + 10_000, "disconnected"),  # 8: 5 s
    book(T0 + 11_000, "BTC", T0 + 11_000, *LEVELS),  # 9
    gap(T0 + 41_000, T0 + 11_000, T0 + 41_000, "restart"),  # 10: 30 s, the longest
    book(T0 + 41_000, "BTC", T0 + 41_000, *LEVELS),  # 11
    trades(T0 + 41_100, p(T0 + 1_950, 9), p(T0 + 2_000, 1, "ETH")),  # 12: later time: applied
    ctx(T0 + 41_200, "BTC", mark="105050.0", oracle="105040.0", funding="-0.0000015186"),  # 13
    {"t": T0 + 41_300, "hl": {"channel": "pong"}},  # 14: another channel, ignored
    tick(T0 + 42_000),  # 15
    order(T0 + 42_000, "alice", 0, True, 10_505_600_000_000, 100_000, cloid="0x2A"),  # 16
]


def test_statistics_of_a_small_log(tmp_path: Path) -> None:
    log = write(tmp_path / "day.jsonl", STATS_ROWS, tail=b'{"t":1767225643000,"hl":{"chan')
    done = arena_here("logs", "check", str(log), "--json", cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert doc["ok"] is True and doc["bad_lines"] == 0 and doc["file_errors"] == []
    assert (doc["inputs"], doc["first_t"], doc["last_t"]) == (15, T0 + 1_000, T0 + 42_000)
    assert doc["channels"] == {
        "l2Book": 6,
        "trades": 3,
        "arena:gap": 2,
        "activeAssetCtx": 1,
        "pong": 1,
        "arena:tick": 1,
        "arena:order": 1,
    }
    btc = doc["coins"]["BTC"]
    # Receive-time gaps between BTC books: 1,000, 3,000, 6,000, 30,000 -> lower median 3,000.
    assert (btc["books"], btc["book_gap_median_ms"], btc["book_gap_max_ms"]) == (5, 3_000, 30_000)
    assert (btc["stale_books"], btc["book_age_max_ms"]) == (1, 10_001)
    assert (btc["trades"], btc["prints"], btc["duplicate_prints"], btc["ctxs"]) == (3, 6, 2, 1)
    eth = doc["coins"]["ETH"]
    assert (eth["books"], eth["book_gap_median_ms"], eth["prints"], eth["trades"]) == (
        1,
        None,
        1,
        1,
    )
    assert (doc["stale_books"], doc["duplicate_prints"]) == (1, 2)
    assert doc["gaps"] == {
        "count": 2,
        "total_ms": 35_000,
        "longest": {
            "from": T0 + 11_000,
            "to": T0 + 41_000,
            "ms": 30_000,
            "reason": "restart",
            "file": str(log),
            "line": 10,
        },
    }
    # A torn final line is a note, not damage.
    assert doc["notes"] == [{"file": str(log), "line": 17, "note": doc["notes"][0]["note"]}]
    assert "torn" in doc["notes"][0]["note"]
    assert doc["files"][0]["torn_tail"] is True and doc["files"][0]["lines"] == 16

    table = arena_here("logs", "check", str(log), cwd=ROOT)
    assert table.returncode == 0 and table.stderr == ""
    out = table.stdout
    assert "duplicate prints dropped: 2" in out and "stale books" in out
    assert "longest 30.0 s" in out and f"note: {log}:17:" in out and out.endswith("ok\n")


FLOAT_TIME = {
    "t": T0 + 2_000,
    "hl": {"channel": "l2Book", "data": {"coin": "BTC", "time": 1.5, "levels": [[], []]}},
}
BAD_LEVEL = book(T0 + 2_000, "BTC", T0 + 2_000, [("105055.0", "3.0"), ("1.05e5", "1.0")], [])
FLOAT_T = book(T0 + 2_000, "BTC", T0 + 2_000) | {"t": 1.767e12}


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"t":1767225602000,"hl":{"channel":"l2Book",', "not valid JSON"),
        (book(T0 + 500, "BTC", T0 + 500), "t 1767225600500 is lower than the line before"),
        (FLOAT_TIME, "bad l2Book message: Expected `int`, got `float` - at `$.hl.data.time`"),
        (FLOAT_T, '"t" must be an integer, got float'),
        (BAD_LEVEL, "l2Book levels[0][1].px: not a decimal string: '1.05e5'"),
        (
            trades(T0 + 2_000, ("SOL", "105056.0", " 0.01", T0, 1)),
            "trades data[0].sz: not a decimal string: ' 0.01'",
        ),
        (
            order(T0 + 2_000, "alice", 0, True, 1, 1, cloid="0x" + "f" * 33),
            "bad arena order: bad cloid",
        ),
    ],
)  # fmt: skip
def test_each_kind_of_bad_line_with_file_and_line(tmp_path: Path, line: Any, reason: str) -> None:
    rows = [book(T0 + 1_000, "BTC", T0 + 1_000, *LEVELS), line, tick(T0 + 3_000)]
    log = write(tmp_path / "bad.jsonl", rows)
    done = arena_here("logs", "check", str(log), cwd=ROOT)
    assert done.returncode == 1
    assert f"{log}:3: {reason}" in done.stdout, done.stdout
    assert "bad lines: 1" in done.stdout and done.stdout.endswith("DAMAGED\n")
    assert "logs check found damage: 1 bad line" in one_error_line(done)


def test_keeps_going_past_bad_lines_and_across_files(tmp_path: Path) -> None:
    rows: list[Any] = [book(T0 + 1_000, "BTC", T0 + 1_000, *LEVELS)]
    rows += [b"not json"] * 25 + [tick(T0 + 2_000)]
    first = write(tmp_path / "a.jsonl", rows)
    second = write(tmp_path / "b.jsonl.gz", [tick(T0 + 1_500), tick(T0 + 3_000)])
    doc = check_logs([first, second]).to_json()
    assert doc["bad_lines"] == 26 and len(doc["shown"]) == SHOW_MAX
    assert doc["shown"][0] == {"file": str(first), "line": 3, "reason": "not valid JSON"}
    assert doc["shown"][-1]["line"] == 2 + SHOW_MAX
    assert doc["inputs"] == 4 - 1  # the good lines, t-backwards line aside
    done = arena_here("logs", "check", str(first), str(second), "--json", cwd=ROOT)
    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert out["shown"] == doc["shown"]
    done = arena_here("logs", "check", str(first), str(second), cwd=ROOT)
    assert "... and 6 more (the first 20 shown)" in done.stdout
    # t going back across files is damage too: b's first input is before a's last.
    assert doc["ok"] is False
    again = check_logs([second, first]).to_json()
    reason = f"t {T0 + 1_000} is lower than the line before ({T0 + 3_000})"
    assert again["shown"][0] == {"file": str(first), "line": 2, "reason": reason}


def test_truncated_gz_and_bad_header_are_damage(tmp_path: Path) -> None:
    # Over 1 MB uncompressed, so the first read (1 MB) decodes and the next hits the cut.
    good = write(tmp_path / "good.jsonl.gz", [tick(T0 + i) for i in range(30_000)])
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(good.read_bytes()[:-200])
    done = arena("logs", "check", str(cut), "--json")
    assert done.returncode == 1
    doc = json.loads(done.stdout)
    (err,) = doc["file_errors"]
    assert err["file"] == str(cut) and "truncated or corrupt" in err["reason"]
    assert doc["bad_lines"] == 0 and doc["inputs"] > 0  # lines before the cut were checked
    assert f"{cut}: cannot read" in one_error_line(done)

    v2 = write(tmp_path / "v2.jsonl", [tick(T0)], header={"arena_log": 2})
    done = arena_here("logs", "check", str(v2), str(good), cwd=ROOT)
    assert done.returncode == 1
    assert f"{v2}:1: unsupported log version 2" in done.stdout
    assert "bad lines: 1" in done.stdout

    assert arena_here("logs", "check", str(good), cwd=ROOT).returncode == 0
