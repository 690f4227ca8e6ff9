"""``arena verify URL``: a hosted season's published score rows against its published log.

- Against a fake host (httpx's MockTransport serving a log, a season file and rows made by
  ``arena replay``'s own code): agreement; each field changed, a row missing or extra, a
  mark the log never reaches, the rules hash of the season file or the log header
  differing from the published one; the log read in arbitrary pieces (lines cut across
  ``Range`` answers) hashing and scoring as the whole; broken hosts and logs as one line.
- Against the real host (``arena_tui.host.server.Host`` in a thread, replaying the shipped
  recording at 60x onto a clock set 14 s before its season ends, two agents trading over
  HTTP): ``arena verify --follow`` started while it runs ends 0 once the season is final;
  ``arena verify --json --keep`` agrees and ``arena replay`` of the kept log gives the same
  hash; one field of one row changed in the host's SQLite makes it exit 1 naming it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import socket
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from subprocess import PIPE
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_tui.commands.replay import write_scores
from arena_tui.host.plan import HostOptions
from arena_tui.host.register import register
from arena_tui.host.server import Host
from arena_tui.host.store import db_path
from arena_tui.record.feed import wall_ms
from arena_tui.run.replay import replay
from arena_tui.season.file import season_doc
from arena_tui.verify.compare import FIELDS, utc_date
from arena_tui.verify.remote import Remote, VerifyError
from arena_tui.verify.verifier import Verifier
from engine import Season
from engine.season import MINUTE_MS
from tests import build
from tests.clirun import ROOT, arena, one_error_line
from tests.hostkit import SYNTH, UNLIMITED, wait_until
from tests.market import MARKETS, market_rows

URL = "http://arena.test"
T0 = build.T0

# ---- a fake host -------------------------------------------------------------------------


def unit_season() -> Season:
    # two minutes before a day boundary to three after: rows on two UTC days
    return build.season(T0 - 2 * MINUTE_MS, T0 + 3 * MINUTE_MS, (build.BTC, build.SOL))


def log_bytes(
    season: Season, *, rules_sha256: str | None = None, bad: bytes | None = None
) -> bytes:
    header = {"arena_log": 1, "season": season.id, "markets": MARKETS}
    header |= {"rules_sha256": rules_sha256 or season.rules_sha256}
    header |= {"start": season.start, "end": season.end}
    rows = market_rows(minutes=6, start=T0 - 150_000)
    rows += [build.register(T0 - 140_500, "alice"), build.register(T0 - 140_400, "bob")]
    rows.append(build.order(T0 - 99_500, "alice", 0, True, 100_100 * build.E8, 100_000, tif=3))
    rows.append(build.order(T0 - 60_500, "bob", 0, False, 99_900 * build.E8, 100_000, tif=3))
    rows.append(build.order(T0 + 30_500, "alice", 0, False, 100_000 * build.E8, 100_000, tif=3))
    rows.sort(key=lambda r: r["t"])
    lines = [msgspec.json.encode(r) for r in [header, *rows]]
    if bad is not None:
        lines.insert(len(lines) // 2, bad)
    return b"".join(x + b"\n" for x in lines)


def replayed_rows(tmp: Path, season: Season, data: bytes) -> list[dict[str, Any]]:
    """The rows ``arena replay --scores`` writes for the log: what an honest host serves."""
    log = tmp / "truth.jsonl"
    log.write_bytes(data)
    result = replay([str(log)], season, keep_score_rows=True)
    assert result.final and result.fills >= 3
    write_scores(result, tmp / "truth-scores.jsonl")
    return [json.loads(x) for x in (tmp / "truth-scores.jsonl").read_text().splitlines()]


class FakeHost:
    """The public endpoints of a host, from fields a test changes at will."""

    def __init__(self, season: Season, log: bytes, rows: list[dict[str, Any]]) -> None:
        self.info = {"id": season.id, "start": season.start, "end": season.end}
        self.info |= {"rules_sha256": season.rules_sha256, "paper": True, "state": "over"}
        self.season_file = msgspec.json.encode(season_doc(season))
        self.log = log
        self.visible = len(log)
        self.rows = rows
        self.final = True
        self.requests: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.requests.append(path)
        if path == "/v1/season":
            return httpx.Response(200, json=self.info)
        if path == "/v1/season/file":
            return httpx.Response(200, content=self.season_file, headers=_JSON)
        if path == "/v1/scores":
            doc = {"season": self.info["id"], "paper": True, "final": self.final}
            return httpx.Response(200, json=doc | {"rows": self.rows})
        if path == "/v1/log":
            size = self.visible
            start = int(request.headers["range"].removeprefix("bytes=").rstrip("-"))
            if start >= size:
                return httpx.Response(416, headers={"Content-Range": f"bytes */{size}"})
            headers = {"Content-Range": f"bytes {start}-{size - 1}/{size}"}
            return httpx.Response(206, content=self.log[start:size], headers=headers)
        return httpx.Response(
            404, text="<html>not here</html>", headers={"content-type": "text/html"}
        )


_JSON = {"content-type": "application/json"}


def verifier(fake: FakeHost, tmp: Path, **kwargs: Any) -> Verifier:
    client = httpx.Client(base_url=URL, transport=httpx.MockTransport(fake))
    return Verifier(Remote(URL, client), tmp, **kwargs)


@pytest.fixture
def honest(tmp_path: Path) -> FakeHost:
    season = unit_season()
    data = log_bytes(season)
    return FakeHost(season, data, replayed_rows(tmp_path, season, data))


def test_rows_that_follow_from_the_log_agree(honest: FakeHost, tmp_path: Path) -> None:
    out = verifier(honest, tmp_path).once()
    assert out.difference is None and out.ok
    assert out.rows_checked == len(honest.rows) == 4  # alice and bob, two days
    assert (out.entries, out.days, out.final, out.paper) == (2, 2, True, True)
    assert out.log_sha256 == hashlib.sha256(honest.log).hexdigest()
    assert out.log_bytes == len(honest.log)
    # the scores are read before the log (the log then holds every input behind them)
    assert honest.requests.index("/v1/scores") < honest.requests.index("/v1/log")


@pytest.mark.parametrize("name", FIELDS)
def test_each_field_of_a_row_that_differs_is_named(
    honest: FakeHost, tmp_path: Path, name: str
) -> None:
    row = honest.rows[-1]
    truth = row[name]
    row[name] = (not truth) if isinstance(truth, bool) else truth + 7
    out = verifier(honest, tmp_path).once()
    d = out.difference
    assert d is not None and not out.ok
    assert (d.entry, d.day, d.field) == (row["entry"], row["day"], name)
    assert (d.published, d.recomputed) == (row[name], truth)
    text = d.message()
    assert f"{row['entry']} on {utc_date(row['day'])}" in text
    assert f"{name} published {str(row[name]).lower()}, recomputed {str(truth).lower()}" in text


def test_a_row_missing_from_the_published_ones_is_a_difference(
    honest: FakeHost, tmp_path: Path
) -> None:
    gone = honest.rows.pop(0)
    d = verifier(honest, tmp_path).once().difference
    assert d is not None and (d.entry, d.day) == (gone["entry"], gone["day"])
    assert d.published is None and d.recomputed == gone["t"] and "have none for it" in d.why


def test_a_published_row_the_replay_never_makes_is_a_difference(
    honest: FakeHost, tmp_path: Path
) -> None:
    honest.rows.append(dict(honest.rows[-1], entry="mallory"))
    d = verifier(honest, tmp_path).once().difference
    assert d is not None and d.entry == "mallory" and "no row for it" in d.why


def test_a_mark_the_log_never_reaches_is_a_difference_after_waiting(
    honest: FakeHost, tmp_path: Path
) -> None:
    honest.visible = honest.log.index(b'"t":%d' % (T0 + 60_000))  # before the last marks
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += s

    v = verifier(honest, tmp_path, wait_s=3, clock=lambda: now[0], sleep=sleep)
    d = v.once().difference
    assert d is not None and d.field == "t" and "does not reach it after 3 s" in d.why
    assert 3 <= now[0] < 4  # it read the log again while waiting, then gave up


def test_a_season_file_with_other_rules_names_both_hashes(honest: FakeHost, tmp_path: Path) -> None:
    published = "ab" * 32
    honest.info["rules_sha256"] = published
    out = verifier(honest, tmp_path).once()
    d = out.difference
    assert d is not None and d.field == "rules_sha256"
    assert published in d.message() and unit_season().rules_sha256 in d.message()
    assert "/v1/log" not in honest.requests  # nothing else is worth checking then


def test_a_log_header_with_other_rules_names_both_hashes(tmp_path: Path) -> None:
    season = unit_season()
    fake = FakeHost(season, log_bytes(season, rules_sha256="cd" * 32), [])
    d = verifier(fake, tmp_path).once().difference
    assert d is not None and d.field == "rules_sha256"
    assert d.published == "cd" * 32 and d.recomputed == season.rules_sha256


@settings(max_examples=15, deadline=None)
@given(cuts=st.lists(st.integers(1, 40_000), min_size=1, max_size=12))
def test_a_log_read_in_any_pieces_is_the_whole_log(cuts: list[int]) -> None:
    season = unit_season()
    data = LOG_CACHE.setdefault("log", log_bytes(season))
    rows = LOG_CACHE.setdefault("rows", _rows(season, data))
    fake = FakeHost(season, data, rows)
    sizes = iter([*sorted({min(c * 7, len(data)) for c in cuts}), len(data)])
    fake.visible = next(sizes)

    def grow(_: float) -> None:
        fake.visible = next(sizes, len(data))

    with tempfile.TemporaryDirectory() as tmp:
        v = verifier(fake, Path(tmp), wait_s=1e9, clock=lambda: 0.0, sleep=grow)
        out = v.follow(0.1, lambda _: None)
    assert out.ok and out.final and out.rows_checked == 4
    # it stops once the season is final and verified: what it read is whole lines, past
    # the season's end, and hashed as a whole
    held = data[: out.log_bytes]
    assert held.endswith(b"\n") and b'"t":%d' % season.end in held
    assert out.log_sha256 == hashlib.sha256(held).hexdigest()


LOG_CACHE: dict[str, Any] = {}


def _rows(season: Season, data: bytes) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        return replayed_rows(Path(tmp), season, data)


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (b'{"t":"soon"}', '"t" must be an integer'),
        (b"not json", "not valid JSON"),
        (b'{"t":1}', "is lower than the line before"),
    ],
)
def test_a_log_that_does_not_decode_names_its_line(tmp_path: Path, bad: bytes, why: str) -> None:
    season = unit_season()
    data = log_bytes(season, bad=bad)
    lineno = data.split(b"\n").index(bad) + 1
    with pytest.raises(VerifyError, match=rf"{URL}/v1/log:{lineno}: .*{why}"):
        verifier(FakeHost(season, data, []), tmp_path).once()


def test_a_log_that_shrinks_under_a_follower_is_an_error(honest: FakeHost, tmp_path: Path) -> None:
    v = verifier(honest, tmp_path)
    v.start()
    v.round()
    honest.visible = 100
    with pytest.raises(VerifyError, match="changed under us: it holds 100 bytes now"):
        v.round()


def test_a_page_that_is_not_an_arena_host_is_one_error(honest: FakeHost, tmp_path: Path) -> None:
    honest.season_file = b""
    v = verifier(honest, tmp_path)
    v.remote = Remote(URL, httpx.Client(base_url=URL, transport=httpx.MockTransport(_html)))
    with pytest.raises(
        VerifyError,
        match=rf"^{URL}: not an arena host \(GET /v1/season answered HTTP 404, text/html\)$",
    ):
        v.once()


def _html(request: httpx.Request) -> httpx.Response:
    return httpx.Response(404, text="<html/>", headers={"content-type": "text/html"})


def test_an_unreachable_host_or_a_bad_url_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nobody listens there
    done = arena("verify", f"http://127.0.0.1:{port}", "--json")
    assert "cannot reach http://127.0.0.1:" in one_error_line(done) and done.stdout == ""
    assert "is not an http(s) URL" in one_error_line(arena("verify", "127.0.0.1:8000"))


# ---- the real host ------------------------------------------------------------------------

SYNTH_MARKETS = [
    {"coin": "BTC", "asset": 0, "szDecimals": 5},
    {"coin": "ETH", "asset": 1, "szDecimals": 4},
    {"coin": "SOL", "asset": 5, "szDecimals": 2},
]
NOTE = "alice: the ask is thin, taking it \u2197"  # non-ASCII on purpose
RUN_S = 18  # the host's clock starts this long before its season ends


class Running:
    def __init__(self, host: Host, tmp: Path, follower: subprocess.Popen[str]) -> None:
        self.host = host
        self.url: str = host.info["url"]
        self.log = host.opts.log
        self.tmp = tmp
        self.follower = follower  # arena verify --follow, started with the host

    def scores(self) -> dict[str, Any]:
        return dict(httpx.get(self.url + "/v1/scores", timeout=10).json())

    def wait_final(self) -> None:
        wait_until(lambda: self.scores()["final"], timeout_s=RUN_S + 30)


def trade(url: str, key: str, buy: bool, note: str | None = None) -> None:
    """One IOC through the book (a taker fill), with ``note`` if given, waited for."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=10) as c:
        wait_until(lambda: bool(c.get("/v1/book/BTC").json()["levels"][1]))
        bids, asks = c.get("/v1/book/BTC").json()["levels"]
        px = int(Decimal(asks[0]["px"])) + 200 if buy else int(Decimal(bids[0]["px"])) - 200
        body: dict[str, Any] = {"asset": 0, "isBuy": buy, "limitPx": px * 10**8, "sz": 100_000}
        if note is not None:
            body["note"] = note
        r = c.post("/v1/orders", json=body | {"reduceOnly": False, "encodedTif": 3})
        assert r.status_code == 200, r.text
        wait_until(lambda: bool(c.get("/v1/fills").json()["fills"]), timeout_s=15)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """A host replaying SYNTH at 60x, RUN_S seconds before its one-minute season ends, with
    alice and bob each filled once."""
    tmp = tmp_path_factory.mktemp("hosted")
    offset_end = (wall_ms() // MINUTE_MS + 10) * MINUTE_MS  # a minute boundary ahead
    offset = offset_end - RUN_S * 1000 - wall_ms()

    def clock() -> int:
        return wall_ms() + offset

    doc = {"id": "verify-e2e", "start": offset_end - MINUTE_MS, "end": offset_end}
    doc |= {"markets": SYNTH_MARKETS}
    doc["rules"] = {
        "activation_delay_ms": 200,
        "mark_interval_ms": 1000,
        "rate_limit_requests": 10_000,
    }
    season = tmp / "verify-e2e.json"
    season.write_text(json.dumps(doc), encoding="utf-8")
    opts = HostOptions(
        log=tmp / "host" / "season.jsonl",
        season=season,
        port=0,
        replay=(SYNTH,),
        speed=Fraction(60),
    )
    opts.log.parent.mkdir()
    host = Host(opts, clock=clock, note=lambda _: None, readers=UNLIMITED).start()  # (polls)
    url = host.info["url"]
    cmd = [sys.executable, "-m", "arena_tui.cli", "verify", url, "--follow", "--interval", "0.5"]
    follower = subprocess.Popen([*cmd, "--json"], cwd=ROOT, stdout=PIPE, stderr=PIPE, text=True)
    try:
        keys = {name: register(opts.log, name, None, clock).key for name in ("alice", "bob")}
        trade(url, keys["alice"], buy=True, note=NOTE)
        trade(url, keys["bob"], buy=False)
        yield Running(host, tmp, follower)
    finally:
        if follower.poll() is None:
            follower.kill()
        follower.communicate(timeout=30)
        host.stop()


def verify_json(*args: str) -> tuple[int, dict[str, Any]]:
    done = arena("verify", *args, "--json", timeout=120)
    assert done.stdout.count("\n") == 1, done.stdout + done.stderr  # one object, nothing else
    return done.returncode, json.loads(done.stdout)


def test_follow_started_while_the_host_runs_ends_when_the_season_is_final(
    running: Running,
) -> None:
    stdout, stderr = running.follower.communicate(timeout=RUN_S + 60)
    assert running.follower.returncode == 0, stderr
    assert stdout.count("\n") == 1, stdout  # one JSON object; the rounds went to stderr
    out = json.loads(stdout)
    assert out["ok"] and out["final"] and out["first_difference"] is None
    assert out["rows_checked"] >= 2 and out["entries"] == 2 and out["paper"] is True
    rounds = stderr.splitlines()
    # it verified rounds while the season ran (the rows growing), then the final one
    assert rounds[-1].endswith("; final") and len(rounds) >= 3, stderr
    assert sum(r.endswith("; agrees") for r in rounds) >= 2, stderr
    assert out["log_sha256"] == hashlib.sha256(running.log.read_bytes()).hexdigest()


def test_verify_agrees_with_the_host_and_its_kept_log_replays_to_the_same_hash(
    running: Running,
) -> None:
    running.wait_final()
    keep = running.tmp / "kept"
    code, out = verify_json(running.url, "--keep", str(keep))
    assert code == 0 and out["ok"] and out["final"], out
    assert out["rows_checked"] >= 2 and out["entries"] == 2 and out["paper"] is True
    assert out["log_sha256"] == hashlib.sha256(running.log.read_bytes()).hexdigest()
    again = arena("replay", str(keep / "verify-e2e.jsonl"), "--json")
    assert again.returncode == 0, again.stderr
    replayed = json.loads(again.stdout)
    assert replayed["log_sha256"] == out["log_sha256"]
    assert replayed["fills_sha256"] != hashlib.sha256(b"").hexdigest()  # there were fills
    assert replayed["rules_sha256"] == out["rules_sha256"]
    # the agent's note went over HTTP into the log; the report rebuilt from the log alone
    # shows it with alice's fill, beside the quote the fill took
    report = running.tmp / "report"
    done = arena("replay", str(keep / "verify-e2e.jsonl"), "--out", str(report))
    assert done.returncode == 0, done.stderr
    fills = [json.loads(x) for x in (report / "fills.jsonl").read_text("utf-8").splitlines()]
    by_entry = {f["entry"]: f for f in fills}
    assert by_entry["alice"]["note"] == NOTE and by_entry["bob"]["note"] is None
    assert all(f["quote"]["source"] == "book" for f in fills)  # IOCs: taker fills
    with (report / "fills.csv").open(encoding="utf-8", newline="") as f:
        rows = {r["entry"]: r for r in csv.DictReader(f)}
    assert rows["alice"]["note"] == NOTE and rows["bob"]["note"] == ""
    people = arena("verify", running.url)
    assert people.returncode == 0, people.stderr
    assert "verified: " in people.stdout and f"rules {out['rules_sha256']} · paper" in people.stdout


def test_a_score_row_changed_on_disk_makes_verify_fail_naming_it(running: Running) -> None:
    running.wait_final()
    with sqlite3.connect(db_path(running.log)) as db:
        entry, day, was = db.execute(
            "SELECT entry, day, equity FROM scores WHERE entry = 'bob' ORDER BY day DESC"
        ).fetchone()
        db.execute(
            "UPDATE scores SET equity = ? WHERE entry = ? AND day = ?", (was + 1, entry, day)
        )
    try:
        wait_until(lambda: any(r["equity"] == was + 1 for r in running.scores()["rows"]))
        code, out = verify_json(running.url)
        assert code == 1 and out["ok"] is False
        d = out["first_difference"]
        assert (d["entry"], d["day"], d["field"]) == ("bob", day, "equity")
        assert (d["published"], d["recomputed"]) == (was + 1, was)
        people = arena("verify", running.url)
        assert people.returncode == 1
        assert (
            f"bob on {utc_date(day)} (day {day}): equity published {was + 1}, recomputed {was}"
            in (people.stdout)
        )
    finally:
        with sqlite3.connect(db_path(running.log)) as db:
            db.execute(
                "UPDATE scores SET equity = ? WHERE entry = ? AND day = ?", (was, entry, day)
            )
