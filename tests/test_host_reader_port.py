"""``arena host --readers-port``: the public reads served by a child process following the log.

The reader port must answer exactly what the main port answers at the same log offset
(byte for byte: every public endpoint, with its query parameters, HEAD and ranges of the
log), never serve a line the host has not made durable, keep its own public limits, say on
``/healthz`` how far behind it is, and stop when the host stops or dies (``kill -9``); the
host starts a crashed one again and goes on taking orders.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.host.checkpoint import Checkpoints
from arena_tui.host.clients import ReaderOptions
from arena_tui.host.encoded import Encoded
from arena_tui.host.follower import Follower
from arena_tui.host.session import Session
from arena_tui.host.store import ScoreStore
from arena_tui.record.feed import wall_ms
from arena_tui.season.file import load_season
from tests.clirun import ROOT, arena, one_error_line
from tests.hostkit import SYNTH, Hosted, hosted, order, season_file, wait_until

MARK_MS = 1000  # a minute mark every second: rows and marks at once
SKIP = {"date", "content-length"}  # (the one header a clock writes; /v1/season's length)


def _answer(c: httpx.Client, method: str, path: str, headers: dict[str, str]) -> Any:
    r = c.request(method, path, headers=headers)
    body = r.content
    if path == "/v1/season" and r.status_code == 200:  # its "t" is the clock's now
        doc = r.json()
        assert abs(doc.pop("t") - wall_ms()) < 10_000
        body = repr(doc).encode()
    kept = sorted((k, v) for k, v in r.headers.items() if k not in SKIP)
    return r.status_code, kept, body


def _requests(main: httpx.Client, size: int) -> list[tuple[str, str, dict[str, str]]]:
    """Every public endpoint, with the query parameters and ranges worth asking."""
    scores = main.get("/v1/scores").json()["rows"]
    days = sorted({r["day"] for r in scores}) or [0]
    marks = main.get("/v1/entries/alice/equity").json()["marks"]
    since = marks[len(marks) // 2]["t"] if marks else 0
    fills = main.get("/v1/entries/alice/fills").json()["fills"]
    fill_since = fills[-1]["t"] if fills else 0
    get = [
        "/",
        "/openapi.json",
        "/v1/season",
        "/v1/season/file",
        "/v1/scores",
        f"/v1/scores?day={days[-1]}",
        "/v1/scores?day=x",
        "/v1/entries",
        "/v1/entries/alice/equity",
        f"/v1/entries/alice/equity?since={since}",
        "/v1/entries/bob/equity?since=99999999999999",
        "/v1/entries/alice/fills",
        f"/v1/entries/alice/fills?since={fill_since}",
        "/v1/entries/nobody/fills",
        "/v1/log",
        f"/v1/log?offset={size // 2}",
        f"/v1/log?offset={size}",
        f"/v1/log?offset={size + 1}",
    ]
    out: list[tuple[str, str, dict[str, str]]] = [("GET", p, {}) for p in get]
    for r in ("bytes=0-99", f"bytes={size // 3}-", "bytes=-64", f"bytes={size}-", "bytes=x"):
        out.append(("GET", "/v1/log", {"Range": r}))
    out += [("HEAD", "/v1/log", {}), ("HEAD", "/v1/log", {"Range": "bytes=10-"})]
    out += [("HEAD", "/v1/entries", {}), ("POST", "/v1/log", {})]
    return out


def _size(c: httpx.Client) -> int:
    return int(c.head("/v1/log").headers["arena-log-size"])


def _served_at_least(reader: httpx.Client, size: int) -> None:
    wait_until(lambda: reader.get("/healthz").json()["served_bytes"] >= size)


def assert_same_at_one_offset(h: Hosted, reader: httpx.Client) -> int:
    """Both ports' answers to every request, taken while neither moved: equal."""
    with h.client() as main:
        for _ in range(40):
            size = _size(main)
            _served_at_least(reader, size)
            asks = _requests(main, size)
            ours = [_answer(main, m, p, hd) for m, p, hd in asks]
            if _size(main) != size:
                continue  # a batch landed meanwhile (a tick): again
            theirs = [_answer(reader, m, p, hd) for m, p, hd in asks]
            if _size(reader) != size or reader.get("/healthz").json()["served_bytes"] != size:
                continue
            for ask, a, b in zip(asks, ours, theirs, strict=True):
                assert a == b, ask
            return size
    raise AssertionError("the log never held still for a whole comparison")


def _push_tick(h: Hosted, t: int) -> None:
    session, loop = h.host.session, h.host._loop
    assert session is not None and loop is not None
    loop.call_soon_threadsafe(session.push_tick, t)


def test_the_reader_port_answers_what_the_main_port_does_at_the_same_offset(
    tmp_path: Path,
) -> None:
    with hosted(tmp_path, readers_port=0, mark_interval_ms=MARK_MS) as h:
        reader = h.host.reader
        assert reader is not None and reader.started.wait(20)
        with httpx.Client(base_url=reader.url, timeout=10) as rc, h.client("alice") as alice:
            first = assert_same_at_one_offset(h, rc)
            # a resting bid, a crossing bid (a fill after its activation), a cancel
            rest = alice.post("/v1/orders", json={**order(px=99_000), "note": "rest"})
            take = alice.post("/v1/orders", json={**order(px=100_010, tif=3), "note": "go"})
            assert rest.status_code == take.status_code == 200
            h.book_after(take.json()["activates_at"])
            wait_until(lambda: len(rc.get("/v1/entries/alice/fills").json()["fills"]) == 1)
            wait_until(lambda: len(rc.get("/v1/scores").json()["rows"]) >= 2)
            second = assert_same_at_one_offset(h, rc)
            gone = alice.post("/v1/cancel", json={"oid": rest.json()["oid"]})
            assert gone.status_code == 200
            third = assert_same_at_one_offset(h, rc)
            # the season's end: a tick at its end makes the rows final, and the log stops
            _push_tick(h, load_season(tmp_path / "season.json").end)
            wait_until(lambda: rc.get("/v1/scores").json()["final"] is True)
            last = assert_same_at_one_offset(h, rc)
            assert first < second < third < last
            # the keyed paths are not served there, whatever the key
            assert rc.get("/v1/orders", headers=alice.headers).status_code == 404
            assert rc.post("/v1/orders", json=order()).status_code == 404
            assert rc.get("/v1/account", headers=alice.headers).status_code == 404


def test_healthz_says_caught_up_and_metrics_show_the_lag(tmp_path: Path) -> None:
    with hosted(tmp_path, readers_port=0) as h:
        reader = h.host.reader
        assert reader is not None and reader.started.wait(20)
        with httpx.Client(base_url=reader.url, timeout=10) as rc, h.client() as main:
            wait_until(lambda: rc.get("/healthz").json()["caught_up"] is True)
            health = rc.get("/healthz")
            assert health.status_code == 200 and health.json()["behind_bytes"] == 0
            assert health.json()["season"] == "host-test"
            # each durable size told is timed from the host's fsync to served here
            wait_until(lambda: rc.get("/healthz").json()["lag_ms"]["n"] >= 2)  # (ticks)
            lag = rc.get("/healthz").json()["lag_ms"]
            assert 0 <= lag["p50"] <= lag["p99"] <= lag["max"]
            wait_until(lambda: "arena_readers_lag_bytes" in main.get("/metrics").text)
            line = next(
                x for x in main.get("/metrics").text.splitlines() if x.startswith("arena_readers")
            )
            assert float(line.split()[-1]) >= 0
            assert h.host.info["readers_url"] == reader.url


def test_the_reader_port_keeps_its_own_public_limits(tmp_path: Path) -> None:
    limited = ReaderOptions(default=(3, 10_000), by_path={}, total=None)
    with hosted(tmp_path, readers_port=0, readers=limited) as h:
        reader = h.host.reader
        assert reader is not None and reader.started.wait(20)
        with httpx.Client(base_url=reader.url, timeout=10) as rc:
            assert [rc.get("/v1/scores").status_code for _ in range(3)] == [200] * 3
            refused = rc.get("/v1/scores")
            assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
            assert "3 requests to /v1/scores" in refused.json()["detail"]
            assert rc.get("/v1/entries").status_code == 200  # (another endpoint's window)
            assert rc.get("/healthz").status_code == 200  # (the probe: never limited)


# ---- the lag bound: whole durable lines only -------------------------------------------------


@pytest.fixture(scope="module")
def season_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A stopped host's log with registrations, books, marks, rows, orders and a fill."""
    tmp = tmp_path_factory.mktemp("season")
    with (
        hosted(tmp, checkpoint_every_ms=None, mark_interval_ms=MARK_MS) as h,
        h.client("alice") as alice,
    ):
        take = alice.post("/v1/orders", json={**order(px=100_010, tif=3), "note": "go"})
        h.book_after(take.json()["activates_at"])
        session = h.host.session
        assert session is not None
        wait_until(lambda: len(session.views.fills.get("alice", [])) == 1)
        t = wall_ms()
        wait_until(lambda: wall_ms() > t + 2500)  # (marks and rows)
    return tmp / "season.jsonl", tmp / "season.json"


def _answers(session: Any) -> list[bytes]:
    enc = Encoded(session.engine, session.views, session.season, session.store)
    names = sorted(session.engine.entries())
    out = [enc.entries(), enc.scores(None)]
    for name in names:
        out += [enc.equity(name, 0), enc.fills(name, 0)]
    return out


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cuts=st.lists(st.floats(0, 1), min_size=1, max_size=6))
def test_a_line_not_yet_durable_is_never_applied_nor_served(
    season_log: tuple[Path, Path], cuts: list[float]
) -> None:
    log, season_path = season_log
    data = log.read_bytes()
    season = load_season(season_path)
    f = Follower(season, log)
    f.load(0)
    news = 0
    for cut in sorted(cuts):
        told = max(f.target, int(cut * len(data)))
        news += f.tell(told, time.monotonic_ns())
        while f.step(limit=512):
            pass
        whole = data.rfind(b"\n", 0, told) + 1
        assert f.durable_size == whole  # every whole line told, and not a byte past it
        assert f.behind == told - whole
    news += f.tell(len(data), time.monotonic_ns())
    while f.step():
        pass
    assert f.durable_size == len(data) and f.behind == 0
    assert len(f.lags_ms) == news and all(lag >= 0 for lag in f.lags_ms)  # (each told, served)
    # all of it, in any steps: what the host's own replay of the log answers
    s = Session(season, log, {}, ScoreStore(Path(":memory:")), clock=wall_ms)
    s._replay(0, None)
    s.store.put(s.views.rows.values())
    assert _answers(f) == _answers(s)


def test_a_follower_starts_from_a_checkpoint_without_touching_it(
    season_log: tuple[Path, Path], tmp_path: Path
) -> None:
    log, season_path = season_log
    season = load_season(season_path)
    copy = tmp_path / "season.jsonl"
    copy.write_bytes(log.read_bytes())
    s = Session(season, copy, {}, ScoreStore(Path(":memory:")), clock=wall_ms)
    s._replay(0, None)
    s.durable_size = s._hashed
    ck = Checkpoints(copy, 1, lambda text: None)
    # a checkpoint of the state at the whole log, and a stray temporary file beside it
    written = ck.write_now(s._capture())
    stray = tmp_path / f".{copy.name}.ckpt-tmp-1-1"
    stray.write_bytes(b"partial")
    before = sorted(p.name for p in tmp_path.iterdir())
    f = Follower(season, copy)
    f.load(copy.stat().st_size)
    assert f.resumed_at == copy.stat().st_size and written.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    s.store.put(s.views.rows.values())
    assert _answers(f) == _answers(s)
    # one that stands for more than the host has made durable is not used
    g = Follower(season, copy)
    g.load(copy.stat().st_size - 1)
    assert g.resumed_at is None


# ---- lifecycle -------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(name))
    return out


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"  # (exited; its new parent reaps it)


def test_the_reader_process_exits_when_the_host_is_killed_9(tmp_path: Path) -> None:
    season = season_file(tmp_path / "season.json")
    log = tmp_path / "season.jsonl"
    cmd = [sys.executable, "-m", "arena_tui.cli", "host", "--port", "0", "--json"]
    cmd += ["--season", str(season), "--log", str(log), "--replay", str(SYNTH)]
    cmd += ["--readers-port", "0"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        url = info["readers_url"]
        wait_until(lambda: _ok(url + "/healthz"), 20)
        (child,) = _children(proc.pid)
        proc.kill()
        proc.wait()
        wait_until(lambda: _gone(child), 10)
        with pytest.raises(httpx.TransportError):
            httpx.get(url + "/healthz", timeout=2)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _ok(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_a_crashed_reader_process_is_started_again_and_orders_go_on(tmp_path: Path) -> None:
    with hosted(tmp_path, readers_port=0) as h:
        reader = h.host.reader
        assert reader is not None and reader.started.wait(20)
        first = reader.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        with h.client("alice") as alice:
            assert alice.post("/v1/orders", json=order()).status_code == 200
        wait_until(lambda: reader.pid != first and _ok(reader.url + "/healthz"), 15)
        assert reader.restarts == 1
        assert any("reader process exited" in n for n in h.notes)
        with h.client("alice") as alice:
            assert alice.post("/v1/orders", json=order()).status_code == 200
        with httpx.Client(base_url=reader.url) as rc:
            main = h.client()
            wait_until(lambda: rc.get("/v1/entries").content == main.get("/v1/entries").content)
        second = reader.pid
    assert second is not None
    wait_until(lambda: _gone(second), 10)  # (the host stopped: so did its reader process)


def _usage_error(done: subprocess.CompletedProcess[str]) -> str:
    """A refused option, as the CLI says it (exit 2, no traceback): its message, unwrapped."""
    assert done.returncode == 2 and "Traceback" not in done.stderr
    return " ".join(done.stderr.replace("│", " ").split())


def test_bad_reader_port_values_are_one_line_errors(tmp_path: Path) -> None:
    season = str(season_file(tmp_path / "season.json"))
    log = str(tmp_path / "season.jsonl")
    base = ("host", "--season", season, "--log", log)
    assert "Invalid value for '--readers-port'" in _usage_error(
        arena(*base, "--readers-port", "70000")
    )
    assert "parse string as an integer" in _usage_error(arena(*base, "--readers-port", "x"))
    same = _usage_error(arena(*base, "--port", "8123", "--readers-port", "8123"))
    assert "Invalid value for --readers-port: 8123 is --port's" in same
    (tmp_path / "busy").mkdir()
    with hosted(tmp_path / "busy", readers_port=0) as h:
        taken = h.url.rsplit(":", 1)[1]
        busy = one_error_line(arena(*base, "--port", "0", "--readers-port", taken))
        assert f"--readers-port cannot listen on 127.0.0.1:{taken}" in busy


def test_host_help_teaches_the_reader_port() -> None:
    done = arena("host", "--help")
    assert "--readers-port" in done.stdout and "reverse proxy" in done.stdout


def test_without_the_option_no_reader_process_is_started(tmp_path: Path) -> None:
    with hosted(tmp_path) as h:
        assert h.host.reader is None and "readers_url" not in h.host.info
        mine = [Path(f"/proc/{c}/cmdline").read_bytes() for c in _children(os.getpid())]
        assert not any(b"follower" in c for c in mine)
        with h.client() as c:
            assert "arena_readers_lag_bytes" not in c.get("/metrics").text


def test_stdin_closed_before_the_configuration_is_a_quiet_exit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena_tui.host.follower"],
        input=b"",
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0 and done.stderr == b""
