"""What the ``arena host`` tests share: a season running now, a host in a thread fed by
hand, clients, and readers for the log.

The host under test is the real one (``arena_tui.host.server.Host``: uvicorn, Starlette,
the session, the lock) on 127.0.0.1 with a free port, started in a thread of the test
process so that its rate limiter can take a clock the test steps (no sleeps). Its market
data comes from :class:`ManualFeed`: the test pushes each book, print or context as the
live feed would, through the same ``Session.push_feed``, and waits for it to be applied.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from arena_tui.commands.replay import write_scores
from arena_tui.host.clients import ReaderOptions
from arena_tui.host.feeds import Push
from arena_tui.host.plan import HostOptions
from arena_tui.host.register import register
from arena_tui.host.server import Host
from arena_tui.host.store import db_path
from arena_tui.logs.logcheck import check_line
from arena_tui.record.feed import wall_ms
from arena_tui.run.replay import replay
from arena_tui.season.file import load_season
from engine.units import E8, MINUTE_MS
from tests import build

ROOT = Path(__file__).resolve().parents[1]
SYNTH = ROOT / "recordings/synth-3coins-20261201.jsonl.gz"
MARKETS = [
    {"coin": "BTC", "asset": 0, "szDecimals": 5},
    {"coin": "ETH", "asset": 1, "szDecimals": 4},
]
FAST = {"activation_delay_ms": 200}
UNLIMITED = ReaderOptions(default=None, by_path={}, log_rate=0, total=None)  # no public limit


def season_file(path: Path, *, minutes: int = 30, markets: Any = None, **rules: int) -> Path:
    """A season whose window began at the current minute and runs ``minutes``."""
    start = wall_ms() // MINUTE_MS * MINUTE_MS
    doc = {
        "id": "host-test",
        "start": start,
        "end": start + minutes * MINUTE_MS,
        "markets": markets or MARKETS,
        "rules": {**FAST, **rules},
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


class FakeClock:
    """Milliseconds that move only when the test says so."""

    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


class ManualFeed:
    """Market data pushed by the test (see the module docstring)."""

    def __init__(self) -> None:
        self.push: Push | None = None

    def start(self, push: Push) -> None:
        self.push = push

    def stop(self) -> None:
        pass

    def send(self, row: dict[str, Any]) -> bytes:
        """Push one ``build``-made row (its ``hl`` message) stamped now; the bytes logged."""
        assert self.push is not None
        t = wall_ms()
        body = b'"hl":' + json.dumps(row["hl"], separators=(",", ":")).encode() + b"}"
        self.push([(t, body, check_line(b'{"t":%d,' % t + body))])
        return body


def btc_book(px: int = 100_000, size: str = "2.0") -> dict[str, Any]:
    """A fresh BTC book around ``px`` dollars: bid px - 1, ask px + 1, five levels a side."""
    t = wall_ms()
    bids = [(f"{px - 1 - i}.0", size) for i in range(5)]
    asks = [(f"{px + 1 + i}.0", size) for i in range(5)]
    return build.book(t, "BTC", t, bids, asks)


def btc_ctx(px: int = 100_000) -> dict[str, Any]:
    return build.ctx(wall_ms(), "BTC", mark=f"{px}.0", oracle=f"{px}.0", funding="0.0000125")


def wait_until(pred: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Poll ``pred`` until it holds (never a fixed sleep)."""
    deadline = time.monotonic() + timeout_s
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the host")
        time.sleep(0.002)


@dataclass
class Hosted:
    host: Host
    feed: ManualFeed
    url: str
    log: Path
    limiter_clock: FakeClock | None
    notes: list[str] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)

    @property
    def engine(self) -> Any:
        assert self.host.session is not None
        return self.host.session.engine

    def register(self, name: str) -> str:
        key = register(self.log, name, None, wall_ms).key
        self.keys[name] = key
        return key

    def client(self, name: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[name]}"} if name else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=10)

    def send(self, row: dict[str, Any]) -> None:
        """Push a market row and wait until the engine has applied it."""
        body = self.feed.send(row)
        session = self.host.session
        assert session is not None
        wait_until(lambda: body in self.log.read_bytes() and session.applied >= session.written)

    def book_after(self, t: int) -> None:
        """A fresh BTC book received after ``t`` (the wall clock passes it first: the rules
        count time by the clock, and the host's clock is the wall clock)."""
        wait_until(lambda: wall_ms() > t)
        self.send(btc_book())

    def inputs(self) -> list[bytes]:
        """The log's lines but the ticks (which the server writes every second on its own)."""
        lines = self.log.read_bytes().split(b"\n")
        return [x for x in lines if not x.endswith(b'"arena":{"type":"tick"}}')]


@contextmanager
def hosted(
    tmp_path: Path,
    *,
    season: Path | None = None,
    limiter_clock: FakeClock | None = None,
    body_max: int = 4096,
    entries: tuple[str, ...] = ("alice", "bob"),
    market: bool = True,
    readers: ReaderOptions = UNLIMITED,
    readers_port: int | None = None,
    checkpoint_every_ms: int | None = 3_600_000,
    stall_trace_ms: int | None = None,
    **rules: int,
) -> Iterator[Hosted]:
    """A host in a thread on a fresh log, with ``entries`` registered and BTC priced;
    its public endpoints unlimited unless ``readers`` says otherwise (tests poll them)."""
    season = season or season_file(tmp_path / "season.json", **rules)
    opts = HostOptions(
        log=tmp_path / "season.jsonl",
        season=season,
        port=0,
        body_max=body_max,
        readers_port=readers_port,
        checkpoint_every_ms=checkpoint_every_ms,
        stall_trace_ms=stall_trace_ms,
    )
    feed = ManualFeed()
    notes: list[str] = []
    kwargs: dict[str, Any] = {"limiter_clock": limiter_clock} if limiter_clock else {}
    host = Host(opts, feed=feed, note=notes.append, readers=readers, **kwargs).start()
    h = Hosted(host, feed, host.info["url"], opts.log, limiter_clock, notes)
    try:
        for name in entries:
            h.register(name)
        if market:
            h.send(btc_ctx())
            h.send(btc_book())
        yield h
    finally:
        host.stop()


def order(
    px: int = 99_000,
    sz: int = 100_000,
    *,
    is_buy: bool = True,
    tif: int = 2,
    cloid: str | None = None,
    reduce_only: bool = False,
    asset: int = 0,
) -> dict[str, Any]:
    """A seven-field order body: by default a GTC bid for 0.001 BTC at $99,000."""
    body: dict[str, Any] = {
        "asset": asset,
        "isBuy": is_buy,
        "limitPx": px * E8,
        "sz": sz,
        "reduceOnly": reduce_only,
        "encodedTif": tif,
    }
    if cloid is not None:
        body["cloid"] = cloid
    return body


def replay_rows(log: Path, season: Path, before_t: int | None = None) -> list[dict[str, Any]]:
    """The score rows ``arena replay --scores`` writes for the log (or its lines before
    ``before_t``), through the command's own writer."""
    if before_t is not None:
        lines = log.read_bytes().split(b"\n")
        keep = [lines[0]] + [x for x in lines[1:-1] if json.loads(x)["t"] < before_t]
        cut = log.with_name("cut.jsonl")
        cut.write_bytes(b"\n".join(keep) + b"\n")
        log = cut
    result = replay([str(log)], load_season(season), keep_score_rows=True)
    out = log.with_name("scores.jsonl")
    write_scores(result, out)
    return [json.loads(x) for x in out.read_text().splitlines()]


def db_rows(log: Path) -> list[dict[str, Any]]:
    """What the host's SQLite holds, in the same form."""
    with sqlite3.connect(db_path(log)) as db:
        db.row_factory = sqlite3.Row
        cur = db.execute("SELECT * FROM scores ORDER BY day, rank")
        rows = [dict(r) for r in cur]
    for r in rows:
        r["eligible"] = bool(r["eligible"])
    return rows


def log_rows(log: Path) -> list[dict[str, Any]]:
    """Every complete input line of a log, decoded (the header left out)."""
    rows = log.read_bytes().split(b"\n")[1:-1]
    return [json.loads(r) for r in rows]


def arena_rows(log: Path, kind: str) -> list[dict[str, Any]]:
    return [r["arena"] for r in log_rows(log) if r.get("arena", {}).get("type") == kind]
