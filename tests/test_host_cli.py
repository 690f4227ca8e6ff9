"""``arena host`` and ``arena register`` as an organiser runs them: real processes.

- The issue's "done when": the host replays the shipped recording at a speed, ``arena
  register alice`` prints a key, the example agent trades with it, ``/v1/scores`` shows
  alice, and ``arena replay`` of the server's log gives the same scores.
- A crash: ``kill -9`` at random moments during a load of orders and cancels; every
  answered request is in the log and replays to the very answer the server gave, and the
  restarted server's state is the replay's.
- One server per log; registering while it runs or not; keys in no file and no output.
"""

from __future__ import annotations

import json
import random
import select
import signal
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import httpx
import msgspec

from arena_tui.host import answers
from arena_tui.host.plan import HostOptions
from arena_tui.host.register import register
from arena_tui.host.server import Host
from arena_tui.logs.logfile import LogReader
from arena_tui.record.feed import wall_ms
from arena_tui.season.file import input_bounds, load_season
from engine import Engine
from engine import events as ev
from engine.inputs import Cancel, Order
from engine.season import MINUTE_MS
from tests import build
from tests.clirun import ROOT, arena, one_error_line
from tests.hostkit import SYNTH, db_rows, log_rows, order, replay_rows, season_file, wait_until
from tests.market import write_log

SYNTH_MARKETS = [
    {"coin": "BTC", "asset": 0, "szDecimals": 5},
    {"coin": "ETH", "asset": 1, "szDecimals": 4},
    {"coin": "SOL", "asset": 5, "szDecimals": 2},
]


def start_host(*args: str) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """``arena host ... --port 0 --json`` as a process; its ready line."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena_tui.cli", "host", "--port", "0", "--json", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline() if ready else ""
    if not line:
        proc.kill()
        raise AssertionError(f"the host did not start: {proc.communicate()[1]}")
    return proc, json.loads(line)


def stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return out, err


def test_done_when_replay_register_agent_scores_and_replay_agree(tmp_path: Path) -> None:
    season = season_file(
        tmp_path / "rehearsal.json",
        markets=SYNTH_MARKETS,
        mark_interval_ms=1000,
        rate_limit_requests=200,
    )
    log = tmp_path / "host" / "season.jsonl"
    proc, info = start_host(
        *("--season", str(season), "--log", str(log), "--replay", str(SYNTH)),
        *("--speed", "600", "--public-limit", "off", "--public-total", "off"),  # (it polls)
    )
    try:
        done = arena("register", "alice", "--log", str(log))
        assert done.returncode == 0, done.stderr
        key = done.stdout.strip()
        assert key.startswith("alice.") and len(done.stdout.splitlines()) == 1
        assert "through the running host" in done.stderr
        agent = subprocess.run(
            [
                *(sys.executable, "strategies/http_agent.py", "--url", info["url"]),
                *("--key", key, "--seconds", "3", "--every", "0.5"),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert agent.returncode == 0, agent.stderr
        assert "fill: bought" in agent.stdout and "fill: sold" in agent.stdout
        with httpx.Client(base_url=info["url"]) as anon:
            mine = {"Authorization": f"Bearer {key}"}
            # it cancelled what it was done with (a cancel takes effect 200 ms later, and its
            # last IOC closes when it activates): soon nothing of it is open
            wait_until(lambda: anon.get("/v1/orders", headers=mine).json() == {"orders": []})
            after = int(time.time() * 1000) + 1000  # a mark (every second here) after it all

            def scored() -> dict[str, Any]:
                return dict(anon.get("/v1/scores").json())

            wait_until(lambda: any(r["t"] > after for r in scored()["rows"]))
            scores = scored()
    finally:
        out, err = stop(proc)
    assert [r["entry"] for r in scores["rows"]] == ["alice"]
    mark = scores["rows"][0]["t"]
    assert replay_rows(log, season, before_t=mark + 1000) == scores["rows"]
    whole = arena("replay", str(log), "--scores", str(tmp_path / "scores.jsonl"), "--json")
    assert whole.returncode == 0, whole.stderr
    replayed = [json.loads(x) for x in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert replayed == db_rows(log)  # the server's database holds what the replay gives
    assert json.loads(whole.stdout)["ranking"][0]["entry"] == "alice"
    secret = key.split(".", 1)[1]
    for text in (log.read_text(), out, err, agent.stdout, agent.stderr):
        assert secret not in text


def check_restamped_run(log: Path, season: dict[str, Any], before: int) -> None:
    """The season a host made for replaying SYNTH at 60x with no --season, and its log,
    judged by the host's own origin (the wall time it mapped the recording's first input
    to, in the log's header): never by a clock the test read before the host started, as a
    minute boundary may fall in between."""
    origin = json.loads(log.read_bytes().split(b"\n", 1)[0])["replay"]["origin_wall"]
    assert before <= origin  # the host took its origin after the test started it
    assert season["start"] == origin // MINUTE_MS * MINUTE_MS and season["state"] == "running"
    first, last = input_bounds([str(SYNTH)])
    ends = origin + (last - first) // 60  # the recording's last input, re-stamped at 60x
    assert season["end"] - MINUTE_MS < ends <= season["end"]  # the minute after it
    lines = log_rows(log)
    ts = [r["t"] for r in lines]
    assert ts == sorted(ts) and ts[0] >= origin  # re-stamped onto the host's clock
    books = [(r["t"], r["hl"]["data"]) for r in lines if r.get("hl", {}).get("channel") == "l2Book"]
    assert books and all(0 <= t - book["time"] < 1000 for t, book in books)  # fresh, not stale


def test_a_replay_with_no_season_covers_the_restamped_run(tmp_path: Path) -> None:
    log = tmp_path / "season.jsonl"
    before = int(time.time() * 1000)
    proc, info = start_host("--replay", str(SYNTH), "--speed", "60", "--log", str(log))
    try:
        season = httpx.get(info["url"] + "/v1/season").json()
    finally:
        _, err = stop(proc)
    check_restamped_run(log, season, before)
    assert f"made season {season['id']}" in err
    assert load_season(tmp_path / f"{season['id']}.json").rules_sha256 == season["rules_sha256"]
    assert arena("logs", "check", str(log)).returncode == 0


def test_a_host_starting_just_after_a_minute_boundary_covers_its_run(tmp_path: Path) -> None:
    """The race above, made to happen: the test reads a clock 59 ms before a minute boundary,
    and the host (the same one, in a thread, on that clock) starts after the boundary."""
    wall = wall_ms()
    boundary = (wall // MINUTE_MS + 1) * MINUTE_MS
    offset = boundary - 59 - wall

    def clock() -> int:
        return wall_ms() + offset

    before = clock()
    wait_until(lambda: clock() >= boundary)  # under 59 ms: the boundary passes
    log = tmp_path / "season.jsonl"
    opts = HostOptions(log=log, port=0, replay=(SYNTH,), speed=Fraction(60))
    notes: list[str] = []
    host = Host(opts, clock=clock, note=notes.append).start()
    try:
        season = httpx.get(host.info["url"] + "/v1/season").json()
    finally:
        host.stop()
    assert season["start"] == boundary > before  # its minute began after the test's reading
    check_restamped_run(log, season, before)
    assert any(f"made season {season['id']}" in note for note in notes)


def test_one_host_per_log_and_register_with_or_without_it(tmp_path: Path) -> None:
    season = season_file(tmp_path / "season.json")
    log = tmp_path / "season.jsonl"
    missing = arena("register", "alice", "--log", str(log))
    assert "start `arena host --log" in one_error_line(missing)
    proc, _ = start_host("--season", str(season), "--log", str(log), "--replay", str(SYNTH))
    try:
        second = arena("host", "--season", str(season), "--log", str(log), "--port", "0")
        assert f"pid {proc.pid}" in one_error_line(second)
        assert "in use by another arena host" in second.stderr
    finally:
        stop(proc)
    done = arena("register", "bob", "--log", str(log), "--json")  # no server: into the log
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["via"] == "log" and answer["entry"] == "bob"
    assert log_rows(log)[-1]["arena"]["entry"] == "bob"
    assert "already registered" in one_error_line(arena("register", "bob", "--log", str(log)))
    assert "want 1-32 of" in one_error_line(arena("register", "Bob!", "--log", str(log)))
    other = season_file(tmp_path / "other.json", maker_fee_dbps=10)
    refused = one_error_line(arena("register", "carol", "--log", str(log), "--season", str(other)))
    assert (
        load_season(season).rules_sha256 in refused and load_season(other).rules_sha256 in refused
    )
    proc, info = start_host("--season", str(season), "--log", str(log), "--replay", str(SYNTH))
    try:
        headers = {"Authorization": f"Bearer {answer['key']}"}
        assert httpx.get(info["url"] + "/v1/account", headers=headers).json()["entry"] == "bob"
    finally:
        stop(proc)


def test_host_help_teaches_with_an_example() -> None:
    done = arena("host", "--help")
    assert done.returncode == 0
    assert "--replay" in done.stdout and "arena register" in done.stdout
    assert "Example" in done.stdout


# ---- kill -9 -------------------------------------------------------------------------------


def _tiny_recording(path: Path) -> Path:
    """One second of BTC market data (a book every 100 ms, a context): then nothing, so
    what is open after it stays as it is (no book activates it)."""
    t0 = 1_790_000_000_000
    rows: list[dict[str, Any]] = [build.ctx(t0, "BTC", mark="100000.0", oracle="100000.0")]
    for i in range(10):
        t = t0 + i * 100
        rows.append(build.book(t, "BTC", t, [("99999.0", "2.0")], [("100001.0", "2.0")]))
    return write_log(path, rows)


class Load:
    """Threads sending orders (and cancels of their previous order) as fast as answered,
    recording every answer that arrived."""

    def __init__(self, url: str, keys: dict[str, str], cycle: int) -> None:
        self.answers: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
        self.stop = threading.Event()
        self.threads = [
            threading.Thread(target=self._run, args=(url, name, key, cycle), daemon=True)
            for name, key in keys.items()
        ]

    def _run(self, url: str, name: str, key: str, cycle: int) -> None:
        headers = {"Authorization": f"Bearer {key}"}
        previous: str | None = None
        with httpx.Client(base_url=url, headers=headers, timeout=5) as c:
            for n in range(10**6):
                if self.stop.is_set():
                    return
                cloid = f"0x{cycle:02x}{name.encode().hex()}{n:08x}"
                tif = 3 if n % 3 else 2
                kind, path, body = (
                    "order",
                    "/v1/orders",
                    order(px=99_000 + n % 50, tif=tif, cloid=cloid),
                )
                if previous is not None and n % 2:
                    kind, path, body = "cancel", "/v1/cancel", {"cloid": previous}
                try:
                    r = c.post(path, json=body)
                except httpx.HTTPError:
                    return  # the server died under this request: no answer, nothing to check
                self.answers[(kind, cloid if kind == "order" else str(body["cloid"]))] = (
                    r.status_code,
                    r.json(),
                )
                previous = cloid if kind == "order" else previous

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(10)


def _replayed(
    log: Path, season: Path, until: int | None = None
) -> tuple[Engine, dict[tuple[str, str], tuple[int, dict[str, Any]]]]:
    """The engine after the log (its inputs up to t ``until``), and each order's and
    cancel's answer as the API gives it."""
    eng = Engine(load_season(season))
    out: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for line in LogReader([str(log)]):
        if until is not None and line.t > until:
            break
        events = eng.apply(line)
        a = line.arena
        if not isinstance(a, Order | Cancel):
            continue
        e = next(x for x in reversed(events) if getattr(x, "entry", None) == a.entry)
        key = ("order" if isinstance(a, Order) else "cancel", str(a.cloid))
        if isinstance(e, ev.Accepted):
            cloid = f"0x{e.cloid:032x}"
            out[key] = (
                200,
                {"oid": e.oid, "cloid": cloid, "t": e.t, "activates_at": e.activates_at},
            )
        elif isinstance(e, ev.CancelPending):
            out[key] = (200, {"oid": e.oid, "t": e.t, "effective_at": e.effective_at})
        else:
            assert isinstance(e, ev.Rejected)
            out[key] = (422, {"error": str(e.reason)})
    return eng, out


def test_kill_9_at_random_moments_loses_no_answered_order(tmp_path: Path) -> None:
    rng = random.Random(20261203)
    season = season_file(
        tmp_path / "season.json", rate_limit_requests=10**6, activation_delay_ms=300
    )
    recording = _tiny_recording(tmp_path / "tiny.jsonl")
    log = tmp_path / "season.jsonl"
    args = ("--season", str(season), "--log", str(log), "--replay", str(recording))
    keys: dict[str, str] = {}
    answered: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for cycle in range(3):
        proc, info = start_host(*args)
        if cycle == 0:
            for name in ("a1", "a2", "a3", "a4"):
                keys[name] = register(log, name, None, lambda: int(time.time() * 1000)).key
        with Load(info["url"], keys, cycle) as load:
            deadline = time.monotonic() + rng.uniform(0.2, 0.7)  # a random moment under load
            while time.monotonic() < deadline or len(load.answers) < 5:
                time.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        assert proc.returncode == -signal.SIGKILL
        answered.update(load.answers)
        _, replayed = _replayed(log, season)
        missing = [k for k in answered if k not in replayed]
        assert not missing, f"answered but not in the log: {missing[:3]}"
        for k, (status, body) in answered.items():
            assert replayed[k] == (status, body), k
    # The server that starts on that log is the replay: the same orders and accounts.
    effective = max(
        b["effective_at"] for (k, _), (s, b) in answered.items() if k == "cancel" and s == 200
    )
    proc, info = start_host(*args)
    try:
        seen = {}
        for name, key in keys.items():
            headers = {"Authorization": f"Bearer {key}"}
            with httpx.Client(base_url=info["url"], headers=headers) as c:
                # every cancel answered has taken effect (no order changes after that)
                wait_until(lambda: c.get("/v1/account").json()["t"] > effective)
                seen[name] = (c.get("/v1/orders").json(), c.get("/v1/account").json())
    finally:
        stop(proc)
    for name, (orders, account) in seen.items():
        # the log as far as the host had applied it when it answered: its clock's ticks go
        # on logging (one crossing a minute makes a mark) until it is stopped
        eng, _ = _replayed(log, season, until=account["t"])
        assert orders == msgspec.to_builtins(answers.orders(eng, name))
        want = msgspec.to_builtins(answers.account(eng, name))
        assert {k: v for k, v in account.items() if k != "t"} == {
            k: v for k, v in want.items() if k != "t"
        }
    assert sum(1 for k in answered if k[0] == "order") > 20
