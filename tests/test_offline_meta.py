"""Without Hyperliquid's ``meta``: the recorder waits for it, every other command says how
to do without it (``--meta FILE``), and ``arena record --meta FILE`` records offline.

Against the fake Hyperliquid on loopback (tests/fakehl.py), whose info endpoint is made
to hang up and answer errors, then recover.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import signal
import socket
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from arena_tui.logs.dayfiles import recording_files
from arena_tui.logs.meta import MetaError, MetaUnavailable
from arena_tui.record.feed import Backoff, fetch_meta_retrying
from engine import Market
from tests.clirun import arena, arena_here, arena_running, one_error_line, until
from tests.fakehl import FakeHL

ROOT = Path(__file__).resolve().parents[1]
META_2023 = ROOT / "tests/data/meta_2023.json"
FAST = ["--retry-base-ms", "20", "--retry-cap-ms", "80", "--ping-ms", "100"]


def header(out: Path) -> dict[str, object]:
    path = recording_files(out)[0]
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        doc: dict[str, object] = json.loads(f.readline())
    return doc


def data_lines(out: Path) -> int:
    files = recording_files(out)
    if not files:
        return 0
    opener = gzip.open if files[0].suffix == ".gz" else open
    with opener(files[0], "rt") as f:
        return sum(1 for line in f if '"hl":' in line)


def dead_url() -> str:
    """An info URL on loopback where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/info"


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGINT) -> int:
    proc.send_signal(sig)
    return proc.wait(15)


def test_meta_is_retried_on_the_sockets_backoff_and_a_wrong_answer_is_not() -> None:
    tries: list[str] = []
    answers: list[Exception | None] = [MetaUnavailable("down")] * 4 + [None]

    async def fetch(url: str) -> list[Market]:
        tries.append(url)
        failure = answers.pop(0)
        if failure is not None:
            raise failure
        return [Market("BTC", 0, 5)]

    events: list[dict[str, Any]] = []
    backoff = Backoff(1, 4, rand=lambda: 1.0)  # waits at the ceiling: 1, 2, 4, 4 ms
    got = asyncio.run(fetch_meta_retrying("u", backoff, events.append, fetch))
    assert got == [Market("BTC", 0, 5)] and len(tries) == 5
    assert [e["retry_ms"] for e in events[:4]] == [1, 2, 4, 4]
    assert events[4] == {"event": "meta_fetched", "url": "u", "tries": 5}
    assert backoff.attempt == 0  # reset, as after a connection that delivered

    tries.clear()
    answers[:] = [MetaError("u: meta answered HTTP 404")]
    with pytest.raises(MetaError, match="404"):
        asyncio.run(fetch_meta_retrying("u", Backoff(1, 4), events.append, fetch))
    assert len(tries) == 1


def test_record_retries_meta_with_its_backoff_until_it_answers(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    with FakeHL() as srv:
        srv.info_script = [0, 503, 0, 429, 502]  # hang-ups and errors worth a retry, then ok
        cmd = ["record", "--coins", "BTC", "--out", str(out), *FAST]
        cmd += ["--ws-url", srv.ws_url, "--info-url", srv.info_url]
        with arena_running(tmp_path, *cmd) as proc:
            srv.wait(partial(srv.flowing, 1, 20), "data after meta answered")
            until(lambda: data_lines(out) > 0, "lines in the file")
            assert stop(proc) == 0
        assert srv.info_requests == 6
    err = (tmp_path / "err.txt").read_text()
    assert "Traceback" not in err
    waits = [line for line in err.splitlines() if "cannot fetch meta" in line or "HTTP" in line]
    assert len(waits) == 5, err  # each failure said, with the next retry
    assert all(line.startswith("arena: record: ") and "; retrying in " in line for line in waits)
    assert "meta answered HTTP 503" in waits[1] and "meta answered HTTP 429" in waits[3]
    assert f"meta fetched from {srv.info_url} (try 6)" in err
    assert header(out)["markets"] == [{"coin": "BTC", "asset": 0, "szDecimals": 5}]


def test_record_waiting_for_meta_prints_json_events(tmp_path: Path) -> None:
    with FakeHL() as srv:
        srv.info_script = [503, 503]
        cmd = ["record", "--coins", "BTC", "--out", str(tmp_path / "rec"), "--json", *FAST]
        cmd += ["--ws-url", srv.ws_url, "--info-url", srv.info_url]
        with arena_running(tmp_path, *cmd) as proc:
            srv.wait(partial(srv.flowing, 1), "data after meta answered")
            assert stop(proc) == 0
    events = [json.loads(line) for line in (tmp_path / "out.txt").read_text().splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[:4] == ["meta_failed", "meta_failed", "meta_fetched", "start"]
    assert all(e["retry_ms"] > 0 for e in events[:2])


def test_record_stops_cleanly_while_waiting_for_meta(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    with FakeHL() as srv:
        srv.info_status = 503
        cmd = ["record", "--coins", "BTC", "--out", str(out), *FAST]
        cmd += ["--ws-url", srv.ws_url, "--info-url", srv.info_url]
        with arena_running(tmp_path, *cmd) as proc:
            srv.wait(lambda: srv.info_requests >= 3, "three tries")
            assert stop(proc, signal.SIGTERM) == 0
        assert srv.connections == 0  # never connected without the markets
    err = (tmp_path / "err.txt").read_text()
    assert err.splitlines()[-1] == "arena: record: stopped before meta answered; nothing recorded"
    assert not out.exists() or not any(out.iterdir())


def test_record_takes_meta_from_a_file_offline(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    with FakeHL() as srv:
        cmd = ["record", "--coins", "SOL,BTC", "--out", str(out), "--meta", str(META_2023)]
        with arena_running(tmp_path, *cmd, "--ws-url", srv.ws_url, *FAST) as proc:
            srv.wait(partial(srv.flowing, 1, 20), "data")
            until(lambda: data_lines(out) > 0, "lines in the file")
            assert stop(proc) == 0
        assert srv.info_requests == 0
    assert header(out)["markets"] == [
        {"coin": "SOL", "asset": 5, "szDecimals": 2},
        {"coin": "BTC", "asset": 0, "szDecimals": 5},
    ]
    both = ["--meta", str(META_2023), "--info-url", "http://127.0.0.1:1/info"]
    assert "not both" in one_error_line(arena_here("record", "--coins", "BTC", *both, cwd=ROOT))
    assert "--meta" in arena_here("record", "--help", cwd=ROOT).stdout


def test_record_gives_up_at_once_on_an_answer_waiting_cannot_change(tmp_path: Path) -> None:
    with FakeHL() as srv:
        srv.info_status = 404  # a wrong --info-url: retrying would not help
        args = ["--ws-url", srv.ws_url, "--info-url", srv.info_url, "--out", str(tmp_path)]
        line = one_error_line(arena("record", "--coins", "BTC", *args, timeout=60))
        assert srv.info_requests == 1
    assert "meta answered HTTP 404" in line and "pass --meta FILE" in line


@pytest.mark.parametrize(
    "command",
    [
        [
            "season",
            "new",
            "s1",
            "--coins",
            "BTC",
            "--start",
            "2026-12-07T00:00Z",
            "--end",
            "2026-12-08T00:00Z",
        ],
        ["import", "hftbacktest", "tests/data/hftbacktest_collector_btc_20250126.gz"],
        ["paper", "strategies/momentum.py", "--coins", "BTC"],
    ],
    ids=["season-new", "import", "paper"],
)
def test_commands_needing_meta_say_how_to_go_offline(tmp_path: Path, command: list[str]) -> None:
    out = tmp_path / ("x.toml" if command[0] == "season" else "x.jsonl.gz")
    if command[0] == "paper":
        out = tmp_path / "run"
    for url in (dead_url(), None):
        if url is None:  # in this process; the dead URL's run is a real one
            with FakeHL() as srv:
                srv.info_status = 500
                done = arena_here(*command, "--info-url", srv.info_url, "--out", str(out), cwd=ROOT)
        else:
            done = arena(*command, "--info-url", url, "--out", str(out), timeout=60)
        line = one_error_line(done)
        assert "meta" in line and "offline, pass --meta FILE (a saved meta answer" in line
        assert line.endswith(
            f"--meta {ROOT / 'seasons/season0.toml'} has BTC, ETH, SOL and HYPE; see --help)"
        ), line
        assert not out.exists()
