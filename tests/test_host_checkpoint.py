"""A host restarted from a checkpoint is the host a full replay of its log makes.

A two-day synthetic season log (books, one-sided books, prints, contexts, three entries
with keys, orders with notes, cancels, fills, minute marks and score rows) is cut at
Hypothesis-drawn points: a session opened on the cut log writes a checkpoint, the rest of
the log is appended, and a session opened on the whole log from that checkpoint must hold
exactly what a session that replayed the whole log holds: the engine's snapshot, every
view the API answers from, the score rows in SQLite, the rate limit's past, the log's
hash, and the same answers to the same next requests over the API and the same events for
the same next inputs. A checkpoint cut short or garbled, one of another format, one whose
log prefix was altered since, and one of another season are each ignored with one line (and
removed), then the whole log is replayed. Both checks are run: ``full`` hashes the whole
prefix before the start; ``quick`` starts after the size and the prefix's first and last
MiB, and a prefix altered between them is found behind the start: the session stops with
one line and this log's checkpoints are removed, so the next start replays it all. A real
``arena host`` process killed with ``kill -9`` while it writes checkpoints leaves nothing a
restart trusts wrongly.
``--checkpoint-every off`` writes and reads none.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import signal
import struct
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.commands.host import parse_every
from arena_tui.host import checkpoint
from arena_tui.host.app import Api
from arena_tui.host.checkpoint import CHECKS, KEEP, Checkpoints
from arena_tui.host.plan import HostOptions
from arena_tui.host.prefix import WINDOW, Behind
from arena_tui.host.ratelimit import MovingWindow
from arena_tui.host.register import register
from arena_tui.host.server import Host
from arena_tui.host.session import CheckpointMismatch, Session
from arena_tui.host.store import ScoreStore
from arena_tui.record.feed import wall_ms
from arena_tui.season.file import load_season
from engine import Season
from engine.units import E8
from tests import build
from tests.clirun import SYNTH, arena_here, arena_running, until
from tests.hostkit import ManualFeed, season_file

HOUR = build.HOUR
SEASON = build.season(
    start=build.T0,
    end=build.T0 + 2 * build.DAY,
    markets=(build.BTC,),
    max_open_orders=4,
    min_fill_days=1,
)
KEYS = {name: f"{name}.{name[0] * 43}" for name in ("alice", "bob", "carol")}


def synth_rows(seed: int = 7) -> list[dict[str, Any]]:
    """About 40,000 inputs over the season's two days and a bit."""
    rng = random.Random(seed)
    t = build.T0 - build.MIN
    rows = [
        build.register(t, name, hashlib.sha256(key.encode()).hexdigest())
        for name, key in KEYS.items()
    ]
    mid, tid, n = 100_000, 0, 0
    while t < SEASON.end + 10 * build.MIN:
        t += 10_000
        n += 1
        mid += rng.choice([-20, -5, 0, 5, 20])
        one_sided = rng.random() < 0.03
        bids = [(f"{mid - 1 - i}", "0.5") for i in range(3)]
        asks = [] if one_sided else [(f"{mid + 1 + i}", "0.5") for i in range(3)]
        rows.append(build.book(t, "BTC", t - 50, bids, asks))
        tid += 1
        rows.append(build.trades(t + 1, ("BTC", f"{mid + rng.randint(-30, 30)}", "0.4", t, tid)))
        if n % 6 == 0:
            rows.append(build.ctx(t + 2, "BTC", f"{mid}", f"{mid}", "0.0000125"))
        if n % 9 == 0:
            who = rng.choice(list(KEYS))
            row = build.order(
                t + 3,
                who,
                0,
                rng.random() < 0.5,
                (mid + rng.randint(-40, 40)) * E8,
                rng.choice([1_000, 10_000, 50_000]),
                tif=rng.choice([1, 2, 2, 3]),
            )
            if rng.random() < 0.5:
                row["arena"]["note"] = f"note {n} <b>of {who}</b>"
            rows.append(row)
        if n % 31 == 0:
            rows.append(build.cancel(t + 4, rng.choice(list(KEYS)), oid=rng.randint(1, n // 9)))
    return rows


def header(season: Season) -> bytes:
    doc = {"arena_log": 1, "season": season.id, "rules_sha256": season.rules_sha256}
    return json.dumps(doc).encode() + b"\n"


LINES = [json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in synth_rows()]
LOG = header(SEASON) + b"".join(LINES)


def open_session(
    log: Path,
    season: Season = SEASON,
    notes: list[str] | None = None,
    *,
    ck: bool = True,
    check: str = "quick",
) -> Session:
    said = notes if notes is not None else []
    checkpoints = Checkpoints(log, HOUR, said.append, check=check) if ck else None
    db = log.with_name(f"{log.name}.{len(list(log.parent.iterdir()))}.sqlite")
    s = Session(season, log, {}, ScoreStore(db), clock=lambda: 0, checkpoints=checkpoints)
    s.open()
    return s


def shut(s: Session) -> None:
    s.close()
    s.store.close()


def state(s: Session) -> dict[str, Any]:
    """Everything a session answers from (and the next checkpoint would hold)."""
    v = s.views
    return {
        "engine": s.engine.snapshot(),
        "rows": list(v.rows.items()),
        "latest": list(v.latest.items()),
        "books": [(c, t, d.time, bytes(d.levels)) for c, (t, d) in v.books.items()],
        "marks": {
            e: [bytes(c) for c in (m.t, m.equity, m.peak, m.drawdown, m.mdd, m.active)]
            for e, m in v.marks.items()
        },
        "fills": v.fills,
        "fill_times": v.fill_times,
        "notes": list(v.notes.by_order.items()),
        "keys": {e: v.keys.entry_for(f"Bearer {k}") for e, k in KEYS.items()},
        "requests": {e: list(d) for e, d in s.requests.items()},
        "inputs": (s.replayed, s.last_t, s.durable_size, s.hasher.hexdigest()),
        "store": s.store.rows(),
    }


def answers(s: Session) -> list[Any]:
    """The API's answers to the same reads, then the engine's to the same next inputs."""
    rules = s.season.rules
    limiter = MovingWindow(rules.rate_limit_requests, rules.rate_limit_window_ms, lambda: 0)
    api = Api(s, limiter, body_max=4096, clock=lambda: s.last_t or 0)

    async def reads() -> list[Any]:
        out: list[Any] = []
        transport = httpx.ASGITransport(app=api.app())
        async with httpx.AsyncClient(transport=transport, base_url="http://host") as client:
            for path in ("/v1/scores", "/v1/entries", "/v1/season"):
                out.append((await client.get(path)).json())
            for name, key in KEYS.items():
                auth = {"Authorization": f"Bearer {key}"}
                for path in ("/v1/account", "/v1/orders", "/v1/fills", "/v1/book/BTC"):
                    out.append((await client.get(path, headers=auth)).json())
                out.append((await client.get(f"/v1/entries/{name}/equity")).json())
                out.append((await client.get(f"/v1/entries/{name}/fills")).json())
        return out

    out = asyncio.run(reads())
    t = (s.last_t or 0) + 1
    nxt = [
        build.order(t, "alice", 0, True, 99_000 * E8, 10_000),
        build.cancel(t + 1, "bob", oid=1),
        build.tick(t + 3 * HOUR),
    ]
    out.extend(s.engine.apply(line) for line in build.lines(nxt))
    return out


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[Any]]:
    log = tmp_path_factory.mktemp("full") / "season.jsonl"
    log.write_bytes(LOG)
    s = open_session(log, ck=False)
    try:
        return state(s), answers(s)
    finally:
        shut(s)


def checkpoint_at(log: Path, cut: int) -> Path:
    """The log of the first ``cut`` inputs, a checkpoint of it written, the rest appended."""
    log.write_bytes(header(SEASON) + b"".join(LINES[:cut]))
    s = open_session(log)
    assert s.checkpoints is not None
    written = s.checkpoints.write_now(s._capture())
    shut(s)
    with log.open("ab") as f:
        f.writelines(LINES[cut:])
    return written


def started_from(notes: list[str], written: Path) -> bool:
    """The only note is the start from ``written``."""
    return len(notes) == 1 and notes[0].startswith(f"checkpoint {written.name}: starting from")


@pytest.mark.parametrize("check", CHECKS)
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(cut=st.integers(0, len(LINES)))
def test_a_checkpoint_and_the_rest_of_the_log_make_the_full_replays_host(
    tmp_path: Path, full: tuple[dict[str, Any], list[Any]], check: str, cut: int
) -> None:
    log = tmp_path / f"{check}{cut}" / "season.jsonl"
    log.parent.mkdir()
    written = checkpoint_at(log, cut)
    notes: list[str] = []
    s = open_session(log, notes=notes, check=check)
    try:
        assert started_from(notes, written), notes
        assert isinstance(s.hasher, Behind) == (check == "quick")
        assert s.resumed_at == int(written.name.split(".")[2])
        assert state(s) == full[0]
        assert answers(s) == full[1]
    finally:
        shut(s)


def garble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def another_format(path: Path) -> None:
    """The same checkpoint as a later arena would write it: the next format, checksum
    whole."""
    data = path.read_bytes()[:-32]
    at = len(checkpoint.MAGIC)
    (n,) = struct.unpack_from(">I", data, at)
    meta = msgspec.msgpack.decode(data[at + 4 : at + 4 + n])
    body = msgspec.msgpack.encode({**meta, "format": checkpoint.FORMAT + 1})
    data = data[:at] + struct.pack(">I", len(body)) + body + data[at + 4 + n :]
    path.write_bytes(data + hashlib.sha256(data).digest())


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (another_format, "of another format"),
        (lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 3]), "torn or garbled"),
        (garble, "torn or garbled"),
        (lambda p: p.write_bytes(b""), "not a checkpoint"),
    ],
    ids=["another-format", "cut-short", "one-bit-flipped", "empty"],
)
def test_a_damaged_checkpoint_is_ignored_said_and_the_log_replayed(
    tmp_path: Path, full: tuple[dict[str, Any], list[Any]], damage: Any, said: str
) -> None:
    log = tmp_path / "season.jsonl"
    written = checkpoint_at(log, len(LINES) // 2)
    damage(written)
    notes: list[str] = []
    s = open_session(log, notes=notes)
    try:
        assert len(notes) == 1 and said in notes[0] and written.name in notes[0]
        assert s.resumed_at is None and not written.exists()
        assert state(s) == full[0]
    finally:
        shut(s)


@pytest.mark.parametrize("where", ["head", "tail"])
def test_a_checkpoint_whose_log_prefix_changed_near_its_ends_is_ignored_at_once(
    tmp_path: Path, where: str
) -> None:
    log = tmp_path / "season.jsonl"
    cut = len(LINES) // 2
    written = checkpoint_at(log, cut)
    offset = int(written.name.split(".")[2])
    data = log.read_bytes()
    near = WINDOW // 2 if where == "head" else offset - WINDOW // 2  # (what a quick check reads)
    at = data.index(b'"px":"', near) + 6
    altered = data[:at] + (b"7" if data[at : at + 1] != b"7" else b"6") + data[at + 1 :]
    log.write_bytes(altered)
    notes: list[str] = []
    s = open_session(log, notes=notes)
    reference = tmp_path / "ref" / "season.jsonl"
    reference.parent.mkdir()
    reference.write_bytes(altered)
    r = open_session(reference, ck=False)
    try:
        assert len(notes) == 1 and "first bytes are not the ones" in notes[0]
        assert s.resumed_at is None and not written.exists()
        assert state(s) == state(r)
    finally:
        shut(s)
        shut(r)


def alter_middle(log: Path, end: int) -> bytes:
    """The log with one price digit changed half way to byte ``end``, more than a quick
    check's window from either end of that prefix."""
    data = log.read_bytes()
    at = data.index(b'"px":"', end // 2) + 6
    assert WINDOW < at < end - WINDOW
    altered = data[:at] + (b"7" if data[at : at + 1] != b"7" else b"6") + data[at + 1 :]
    log.write_bytes(altered)
    return altered


def test_a_prefix_altered_in_the_middle_is_found_behind_a_quick_start(tmp_path: Path) -> None:
    log = tmp_path / "season.jsonl"
    written = checkpoint_at(log, len(LINES) // 2)
    offset = int(written.name.split(".")[2])
    older = checkpoint_at(tmp_path / "older.jsonl", 1000)  # another log's: kept
    altered = alter_middle(log, offset)
    notes: list[str] = []
    s = open_session(log, notes=notes)
    try:
        assert started_from(notes, written) and s.resumed_at == offset  # (not seen yet)
        assert isinstance(s.hasher, Behind)
        s.hasher.join(30)
        assert s.mismatched is not None and written.name in s.mismatched
        assert "first bytes are not the ones it was made from" in s.mismatched
        assert not list(tmp_path.glob("season.jsonl.*.ckpt")) and older.exists()

        async def engine_task() -> None:
            s.bind(asyncio.get_running_loop())
            await s.run()

        with pytest.raises(CheckpointMismatch, match="next start replays the whole log"):
            asyncio.run(engine_task())
        assert not list(tmp_path.glob("season.jsonl.*.ckpt"))  # none written meanwhile
    finally:
        shut(s)
    again: list[str] = []
    r = open_session(log, notes=again)  # the next start: the whole (altered) log
    reference = tmp_path / "ref" / "season.jsonl"
    reference.parent.mkdir()
    reference.write_bytes(altered)
    ref = open_session(reference, ck=False)
    try:
        assert again == [] and r.resumed_at is None
        assert state(r) == state(ref)
    finally:
        shut(r)
        shut(ref)


def test_a_full_check_finds_the_same_alteration_before_the_start(tmp_path: Path) -> None:
    log = tmp_path / "season.jsonl"
    written = checkpoint_at(log, len(LINES) // 2)
    alter_middle(log, int(written.name.split(".")[2]))
    notes: list[str] = []
    s = open_session(log, notes=notes, check="full")
    try:
        assert len(notes) == 1 and "first bytes are not the ones" in notes[0]
        assert s.resumed_at is None and not written.exists() and s.mismatched is None
    finally:
        shut(s)


def test_a_checkpoint_of_another_season_is_ignored(
    tmp_path: Path, full: tuple[dict[str, Any], list[Any]]
) -> None:
    other = build.season(
        start=SEASON.start, end=SEASON.end, markets=SEASON.markets, maker_fee_dbps=10
    )
    log = tmp_path / "season.jsonl"
    log.write_bytes(header(other) + b"".join(LINES[:5000]))
    s = open_session(log, other)
    assert s.checkpoints is not None
    s.checkpoints.write_now(s._capture())
    shut(s)
    log.write_bytes(LOG)  # the same name, now the season's own log, hashed as it is
    wrong = next(tmp_path.glob("*.ckpt"))
    prefix = LOG[: int(wrong.name.split(".")[2])]
    renamed = wrong.with_name(
        wrong.name.replace(wrong.name.split(".")[3], hashlib.sha256(prefix).hexdigest())
    )
    wrong.rename(renamed)
    notes: list[str] = []
    s = open_session(log, notes=notes)
    try:
        assert len(notes) == 1 and "of another season or rules" in notes[0], notes
        assert state(s) == full[0]
    finally:
        shut(s)


def test_checkpoints_are_written_pruned_and_the_newest_taken(tmp_path: Path) -> None:
    log = tmp_path / "season.jsonl"
    for cut in (1000, 9000, 17000, 25000, 33000):
        checkpoint_at(log, cut)
    kept = sorted(tmp_path.glob("*.ckpt"))
    assert [int(p.name.split(".")[2]) for p in kept] == [
        len(header(SEASON) + b"".join(LINES[:cut])) for cut in (17000, 25000, 33000)
    ]
    (tmp_path / ".season.jsonl.ckpt-tmp-123-456").write_bytes(b"half a checkpoint")
    s = open_session(log)
    try:
        assert s.resumed_at == int(kept[-1].name.split(".")[2])
        assert not list(tmp_path.glob(".season.jsonl.ckpt-tmp-*"))
    finally:
        shut(s)


def kill_while_writing(proc: Any, folder: Path, timeout_s: float = 10.0) -> bool:
    """``kill -9`` the host as soon as a checkpoint is being written (or after
    ``timeout_s``); whether it was caught mid-write."""
    deadline = time.monotonic() + timeout_s
    caught = False
    while not caught and time.monotonic() < deadline:
        caught = any(p.name.startswith(".season.jsonl.ckpt-tmp-") for p in folder.iterdir())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    return caught


def test_a_host_killed_while_it_checkpoints_restarts_as_a_full_replay(tmp_path: Path) -> None:
    season = season_file(tmp_path / "season.json", minutes=24 * 60)
    log = tmp_path / "season.jsonl"
    args = ["host", "--replay", str(SYNTH), "--speed", "600", "--season", str(season)]
    args += ["--log", str(log), "--port", "0", "--checkpoint-every", "200ms"]
    with arena_running(tmp_path, *args) as proc:
        until(lambda: len(list(tmp_path.glob("*.ckpt"))) >= 3, "three checkpoints", 60)
        kill_while_writing(proc, tmp_path)  # (caught mid-write in 3 runs of 3 here)
    s = load_season(season)
    notes: list[str] = []
    resumed = open_session(log, s, notes)
    reference = tmp_path / "ref" / "season.jsonl"
    reference.parent.mkdir()
    reference.write_bytes(log.read_bytes())
    replayed = open_session(reference, s, ck=False)
    try:
        assert len(notes) == 1 and "starting from byte" in notes[0], notes
        assert resumed.resumed_at is not None
        assert not list(tmp_path.glob(".*.ckpt-tmp-*"))
        assert state(resumed) == state(replayed)
    finally:
        shut(resumed)
        shut(replayed)


def test_checkpoint_every_is_checked_and_off_turns_them_off(tmp_path: Path) -> None:
    for bad in ("5x", "0m", "1.5h", ""):
        done = arena_here("host", "--log", str(tmp_path / "s.jsonl"), "--checkpoint-every", bad)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert "Invalid value for --checkpoint-every" in done.stderr
        assert not (tmp_path / "s.jsonl").exists()
    done = arena_here("host", "--log", str(tmp_path / "s.jsonl"), "--checkpoint-check", "fast")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "Invalid value for --checkpoint-check: 'fast': quick or full" in done.stderr
    assert parse_every("90s") == 90_000 and parse_every("1h") == HOUR
    assert parse_every("off") is None
    for every in (None, HOUR):
        folder = tmp_path / str(every)
        folder.mkdir()
        # one season file for both starts (written again, a minute boundary crossed between
        # them would give it another window than the log's)
        season = season_file(folder / "season.json")
        for name in ("alice", "bob"):  # a start, a stop (the last checkpoint), a start again
            opts = HostOptions(
                log=folder / "season.jsonl", season=season, port=0, checkpoint_every_ms=every
            )
            notes: list[str] = []
            host = Host(opts, feed=ManualFeed(), note=notes.append).start()
            session = host.session
            assert session is not None
            resumed = session.resumed_at
            register(opts.log, name, None, wall_ms)
            host.stop()
        written = len(list(folder.glob("*.ckpt")))
        assert (0 < written <= KEEP) if every else written == 0
        assert (resumed is not None) == bool(every)
        assert session is not None and session.engine.entries() == ["alice", "bob"]


def test_a_checkpoint_goes_to_disk_a_little_at_a_time_and_reads_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written in slices flushed to disk as it goes (one fsync of a large file at the end
    held the log's own fsync behind it), the checkpoint is still the state, byte for byte."""
    synced: list[int] = []
    monkeypatch.setattr(checkpoint, "SYNC_EVERY", 4096)
    monkeypatch.setattr(checkpoint, "_SYNC", synced.append)
    log = tmp_path / "season.jsonl"
    written = checkpoint_at(log, 9000)
    assert len(synced) >= written.stat().st_size // (2 * 4096) > 2  # (slices of whole frames)
    s = open_session(log)
    try:
        assert s.resumed_at == int(written.name.split(".")[2])  # it was taken
        resumed = state(s)
    finally:
        shut(s)
    full = open_session(log, ck=False)
    try:
        assert resumed == state(full)
    finally:
        shut(full)
