"""``arena record`` as a user runs it: a real subprocess against the fake Hyperliquid.

The done-when case: 20 injected faults, 20 gap records, nothing else lost; a kill -9 and
a restart keep every file readable and mark the restart; the files replay.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from arena_tui.logs.dayfiles import recording_files
from arena_tui.logs.logfile import LogReader
from tests.clirun import arena, arena_running, until
from tests.fakehl import FakeHL
from tests.test_record_feed import check_against_wire, hl_raw, recorded

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--retry-base-ms", "2", "--retry-cap-ms", "20", "--ping-ms", "100"]


@contextmanager
def recording(
    srv: FakeHL, tmp: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """``arena record`` running against ``srv``; stdout/stderr go to tmp/out.txt, err.txt."""
    cmd = ["record", "--ws-url", srv.ws_url, "--info-url", srv.info_url, *FAST, *args]
    with arena_running(tmp, *cmd, env=env) as proc:
        yield proc


def market_lines(out: Path) -> int:
    try:
        return sum(b',"hl":' in r[:24] for r in recorded(out))
    except (OSError, AssertionError, ValueError):
        return -1


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGINT) -> int:
    proc.send_signal(sig)
    return proc.wait(15)


def drain(srv: FakeHL, out: Path, lost: int = 0) -> None:
    """Stop the stream and wait until the recorder has written all of it but ``lost``."""
    srv.settle()  # (frames queued before the pause go out first: counted then)
    want = len(srv.market_sent()) - lost
    until(lambda: market_lines(out) == want, "the recorder to write everything sent")


# 20 interruptions (and 3 malformed frames, which are no interruption).
FAULTS: list[tuple[str, dict[str, Any]]] = [
    *[("close", {})] * 5,
    ("malformed", {}),
    *[("close_frame", {})] * 4,
    *[("refuse", {"n": 2})] * 4,
    ("malformed", {}),
    *[("outage", {"ms": 100})] * 2,
    *[("silence", {})] * 2,
    ("malformed", {}),
    *[("close", {})] * 3,
]


def test_record_survives_20_faults_with_20_gaps_and_nothing_else_lost(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    with (
        FakeHL(pretty_every=11) as srv,
        recording(
            srv, tmp_path, "--coins", "BTC", "--out", str(out), "--json", "--silence-ms", "500"
        ) as proc,
    ):
        conn = 1
        for kind, kw in FAULTS:
            srv.wait(partial(srv.flowing, conn), f"data on connection {conn}")
            srv.inject(kind, **kw)
            if kind == "malformed":
                srv.wait(partial(srv.flowing, conn, srv.data_on(conn) + 10), "more data")
            else:
                conn += 1
        srv.wait(partial(srv.flowing, conn), "data after the last fault")
        # The stream keeps flowing until the stop: pausing it would be a silence of its own
        # (--silence-ms 500), and its reconnect's snapshots a 21st gap (seen under load).
        # So wait until all sent so far is written, stop, and hold the file against the
        # prefix of the wire it holds: what came after the stop is all that may be missing.
        want = len(srv.market_sent())
        until(lambda: market_lines(out) >= want, "the recorder to write everything sent")
        assert stop(proc) == 0
        assert srv.connections == 21, "a reconnect nobody injected"
        rows = recorded(out)
        kept = market_lines(out)
        assert kept >= want
        sent = srv.market_sent()[:kept]
    gaps = check_against_wire(rows, sent)
    assert len(gaps) == 20
    assert sorted({g["reason"] for g in gaps}) == ["disconnected", "silence"]
    events = [json.loads(x) for x in (tmp_path / "out.txt").read_text().splitlines()]
    start = events[0]
    assert (start["event"], start["coins"], start["out"]) == ("start", ["BTC"], str(out))
    assert str(recording_files(out)[0]).startswith(start["file"])  # .gz if midnight passed
    assert sum(e["event"] == "gap" for e in events) == 20
    summary = events[-1]
    assert summary["event"] == "summary"
    assert (summary["gaps"], summary["bad_frames"], summary["messages"]) == (20, 3, len(sent))
    assert summary["files"] == [str(p) for p in recording_files(out)]
    err = (tmp_path / "err.txt").read_text()
    assert f"into {out}" in err and "Traceback" not in err
    # The files are a log: the project's reader and arena replay take them.
    files = [str(p) for p in recording_files(out)]
    done = arena("replay", *files, "--json")
    assert done.returncode == 0, done.stderr
    digest = hashlib.sha256(b"".join(Path(f).read_bytes() for f in files)).hexdigest()
    assert json.loads(done.stdout)["log_sha256"] == digest


def test_kill_9_then_restart_keeps_the_data_and_marks_a_restart_gap(tmp_path: Path) -> None:
    env = {**os.environ, "ARENA_DATA_DIR": str(tmp_path / "data")}
    out = tmp_path / "data" / "recordings"  # the default --out under ARENA_DATA_DIR
    with FakeHL() as srv:
        with recording(srv, tmp_path, "--coins", "BTC,HYPE", env=env) as proc:
            srv.wait(partial(srv.flowing, 1, 40), "data")
            until(lambda: market_lines(out) > 20, "lines in the file")
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        killed = recorded(out)  # readable as the kill left it
        assert len(list(LogReader(recording_files(out)))) == len(killed)
        last_t = json.loads(killed[-1])["t"]
        with recording(srv, tmp_path, "--coins", "BTC,HYPE", env=env) as proc:
            srv.wait(partial(srv.flowing, 2), "data after the restart")
            lost = sum(s.conn == 1 for s in srv.market_sent()) - len(killed)
            drain(srv, out, lost)
            assert stop(proc, signal.SIGTERM) == 0
        sent = srv.market_sent()
    rows = recorded(out)
    assert rows[: len(killed)] == killed  # nothing before the kill was rewritten
    restart = json.loads(rows[len(killed)])
    assert restart["arena"]["reason"] == "restart" and restart["arena"]["from"] == last_t
    kept = [hl_raw(r) for r in killed]
    assert kept == [s.frame for s in sent[: len(kept)]]  # what was lost is inside the gap
    after = [s for s in sent if s.conn == 2]
    assert [hl_raw(r) for r in rows[len(killed) + 1 :]] == [s.frame for s in after]
    assert f"into {out}" in (tmp_path / "err.txt").read_text()


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), done.stderr
    return lines[0]


def test_bad_input_is_one_error_line(tmp_path: Path) -> None:
    with FakeHL() as srv:
        urls = ["--ws-url", srv.ws_url, "--info-url", srv.info_url, "--out", str(tmp_path)]
        assert "not in meta's universe: DOGE" in one_error(
            arena("record", "--coins", "BTC,DOGE", *urls)
        )
        assert "name at least one coin" in one_error(arena("record", "--coins", " , ", *urls))
        bad_ws = ["--ws-url", "http://127.0.0.1:1/ws", "--info-url", srv.info_url]
        assert "not a ws://" in one_error(arena("record", "--coins", "BTC", *bad_ws))
        srv.info_status = 404  # a 5xx is waited out (tests/test_offline_meta.py)
        assert "meta answered HTTP 404" in one_error(arena("record", "--coins", "BTC", *urls))
    # the day the recorder writes to is the UTC day of its first input: today's, or
    # tomorrow's if midnight passes before it (both files record ETH)
    now = time.time()
    for when in (now, now + 86_400):
        (tmp_path / f"hl-{time.strftime('%Y-%m-%d', time.gmtime(when))}.jsonl").write_text(
            '{"arena_log":1,"recording":"hyperliquid","markets":[{"coin":"ETH","asset":1,"szDecimals":4}]}\n'
        )
    with FakeHL() as srv:
        urls = ["--ws-url", srv.ws_url, "--info-url", srv.info_url, "--out", str(tmp_path)]
        msg = one_error(arena("record", "--coins", "BTC", *urls))
    assert "records ETH, this run records BTC" in msg


def test_help_teaches() -> None:
    done = arena("record", "--help")
    assert done.returncode == 0
    for word in ("--coins", "--out", "--ws-url", "--info-url", "--json", "gap", "Example"):
        assert word in done.stdout
    assert "--retry-base-ms" not in done.stdout  # test knobs stay hidden
    assert "record" in arena("--help").stdout
