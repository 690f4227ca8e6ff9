"""The reader process: the host's public reads served from a follower of its log.

Why this module exists: every public read answered on the host's event loop is time the
orders wait for, and a crowd of readers makes their latency's tail (issue 26). With
``arena host --readers-port``, the host starts this module as a child process
(``python -m arena_tui.host.follower``, spawned: ``host.readers``) that serves the public
paths on another port from its own engine and views:

- built from the newest checkpoint beside the log that passes the quick check (read only:
  the host owns those files), or from the whole log, then following the log as it grows;
- never past what the host made durable: the host writes each new durable size (whole
  lines, fsynced, answered) on the child's stdin, and the child applies whole lines up to
  it and no further, so its answers are the main port's at the same log offset (the
  same ``Api``, ``answers``, ``encoded`` and ``logserve`` code; the authenticated paths are
  not routed: 404);
- with its own per-client limits and public total (the host's ``ReaderOptions``);
- ``GET /healthz``: whether it is caught up, and how many bytes behind;
- stdin's end (the host stopped, or died, ``kill -9`` included) stops it.

The protocol on stdin: one JSON line (:class:`Config`), then one decimal durable size per
line. On stdout: ``ready``, then ``served N`` (its applied offset, at most every
``REPORT_S``) for the host's lag gauge.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import os
import socket
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO

import msgspec
import uvicorn
from starlette.requests import Request
from starlette.responses import Response

from arena_tui.host import offload
from arena_tui.host.app import AUTHED, Api, Endpoint, answer
from arena_tui.host.checkpoint import Checkpoints
from arena_tui.host.clients import ReaderOptions
from arena_tui.host.ratelimit import MovingWindow
from arena_tui.host.readers import Config, reader_options
from arena_tui.host.server import uvicorn_config
from arena_tui.host.store import ScoreStore
from arena_tui.host.views import Views
from arena_tui.logs.logfile import LogError, LogReader, first_line
from arena_tui.record.feed import wall_ms
from arena_tui.season.file import parse_season
from engine import Engine, MalformedInput, Season

STEP_BYTES = 1 << 22  # of log applied between two turns of the loop (a catch-up's pace)
REPORT_S = 0.2  # the least time between two ``served N`` lines to the host
FRESH_S = 1.0  # /healthz says ok while caught up at some moment this recently
LAGS_KEPT = 4096  # the latest lags (durable on the host to served here) /healthz sums up
GRACEFUL_S = 2


class Follower:
    """A read-only session over a log another process writes (module docstring): what
    ``Api`` reads of a session, with ``durable_size`` the bytes applied (and served)."""

    def __init__(
        self, season: Season, log: Path, note: Callable[[str], None] | None = None
    ) -> None:
        self.season = season
        self.log = log
        self.coins = [m.coin for m in season.markets]
        self.note = note or (lambda text: None)
        self.engine = Engine(season)
        self.views = Views(self.engine)
        self.store = ScoreStore(Path(":memory:"))  # (its own rows: the log's, at its offset)
        self.durable_size = 0  # bytes of the log applied: whole lines, all served
        self.target = 0  # the host's durable size as last told
        # (size, monotonic ns it became durable) told and not yet applied; the lags seen
        self._told: deque[tuple[int, int]] = deque()
        self.lags_ms: deque[float] = deque(maxlen=LAGS_KEPT)
        self.resumed_at: int | None = None
        self.last_caught_up = time.monotonic()
        self._head = b""

    @property
    def behind(self) -> int:
        return max(0, self.target - self.durable_size)

    def load(self, upto: int) -> None:
        """Start from the newest usable checkpoint at or before ``upto`` (if any)."""
        ck = Checkpoints(self.log, 1, self.note)
        restored = ck.load_read_only(self.season, upto)
        if restored is not None:
            self.engine, self.views = restored.engine, restored.views
            self.durable_size = self.resumed_at = restored.meta.offset
            self.note(f"from checkpoint at byte {restored.meta.offset:,} of the log")
        self.store.put(self.views.rows.values())
        self.views.changed.clear()

    def step(self, limit: int = STEP_BYTES) -> int:
        """Apply the whole lines after ``durable_size`` up to ``target`` (at most about
        ``limit`` bytes of them); the bytes applied (0: none whole yet)."""
        start = self.durable_size
        want = min(self.target, start + limit)
        if want <= start:
            return 0
        with open(self.log, "rb") as f:
            if start and not self._head:
                self._head = first_line(self.log) + b"\n"
            data = os.pread(f.fileno(), want - start, start)
        cut = data.rfind(b"\n") + 1
        if not cut and want < self.target:  # one line longer than the step: read it whole
            return self.step(limit * 2)
        if not cut:
            return 0
        body = (self._head if start else b"") + data[:cut]
        body_of = _Bytes(body).open  # (a step's bytes, in memory: nothing to read ahead)
        reader = LogReader([str(self.log)], self.coins, hashed=False, opener=body_of, ahead=False)
        apply, views = self.engine.apply, self.views
        for line in reader:
            try:
                events = apply(line)
            except MalformedInput as exc:
                raise reader.error(str(exc)) from None
            views.apply(line, reader.raw, events, live=False)
        if views.changed:
            self.store.put(views.take_changed())
        self.durable_size = start + cut
        if self.durable_size >= self.target:
            self.last_caught_up = time.monotonic()
        self._served(time.monotonic_ns())
        return cut

    def tell(self, size: int, at_ns: int) -> bool:
        """The host made the log durable up to ``size`` at ``at_ns`` (monotonic, this
        machine's): whether that is news."""
        if size <= self.target:
            return False
        self.target = size
        self._told.append((size, at_ns))
        return True

    def _served(self, now_ns: int) -> None:
        """Each size told that is now applied: its lag, durable to served (ms)."""
        told, done = self._told, self.durable_size
        while told and told[0][0] <= done:
            self.lags_ms.append((now_ns - told.popleft()[1]) / 1e6)

    def lag_summary(self) -> dict[str, float]:
        """p50/p99/max of the lags kept (durable on the host to served here, ms)."""
        lags = sorted(self.lags_ms)
        if not lags:
            return {"n": 0}

        def pick(p: float) -> float:
            return round(lags[min(len(lags) - 1, int(len(lags) * p))], 3)

        return {"n": len(lags), "p50": pick(0.5), "p99": pick(0.99), "max": round(lags[-1], 3)}


class _Bytes:
    """An opener for ``LogReader`` over bytes in memory."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def open(self, _: str) -> IO[bytes]:
        return io.BytesIO(self.data)


class ReaderApi(Api):
    """The host's public routes over a follower; the keyed ones are not routed (404)."""

    def __init__(
        self, follower: Follower, *, body_max: int, season_file: bytes, readers: ReaderOptions
    ):
        rules = follower.season.rules
        unused = MovingWindow(rules.rate_limit_requests, rules.rate_limit_window_ms)
        super().__init__(
            follower,  # type: ignore[arg-type]  # (what Api reads of a session: see Follower)
            unused,
            body_max=body_max,
            clock=wall_ms,
            season_file=season_file,
            readers=readers,
        )
        self.follower = follower
        self.openapi = self._host_openapi()

    def _host_openapi(self) -> bytes:
        from arena_tui.host import schemas as s
        from arena_tui.host.openapi import document

        # the host's own document (the main port's, byte for byte): it describes the API
        return s.ENCODE(document(dials=True, public_limits=self.public is not None))

    def paths(self) -> dict[str, dict[str, Endpoint]]:
        paths = {p: m for p, m in super().paths().items() if p not in AUTHED}
        paths["/healthz"] = {"GET": self.get_healthz}
        return paths

    async def get_healthz(self, request: Request) -> Response:
        f = self.follower
        behind = f.behind
        ok = behind == 0 or time.monotonic() - f.last_caught_up < FRESH_S
        body = {
            "ok": ok,
            "season": f.season.id,
            "over": f.engine.over,
            "caught_up": behind == 0,
            "behind_bytes": behind,
            "served_bytes": f.durable_size,
            "durable_bytes": f.target,
            "lag_ms": f.lag_summary(),  # of the last LAGS_KEPT sizes told, durable to served
        }
        return answer(body, 200 if ok else 503, {"Cache-Control": "no-store"})


def _note(text: str) -> None:
    sys.stderr.write(f"arena: host: readers: {text}\n")
    sys.stderr.flush()


class _Child:
    """The child's loop: stdin's durable sizes in, the follow task, uvicorn, reports."""

    def __init__(self, conf: Config, stdout: IO[bytes]) -> None:
        season_bytes = base64.b64decode(conf.season_file)
        season = parse_season(json.loads(season_bytes), conf.log)
        if season.id != conf.season_id or season.rules_sha256 != conf.rules_sha256:
            raise SystemExit("arena: host: readers: the season file is not the host's")
        self.follower = Follower(season, Path(conf.log), _note)
        self.conf = conf
        self.readers = reader_options(conf)
        self.season_bytes = season_bytes
        self.stdout = stdout
        self.more = asyncio.Event()
        self.server: uvicorn.Server | None = None
        self._reported = 0.0
        self._report_due: asyncio.TimerHandle | None = None

    def told(self, line: bytes) -> None:
        size, _, at_ns = line.partition(b" ")
        if self.follower.tell(int(size), int(at_ns or time.monotonic_ns())):
            self.more.set()

    async def follow(self) -> None:
        f = self.follower
        while True:
            await self.more.wait()
            self.more.clear()
            while f.step():
                self.report()
                await asyncio.sleep(0)  # (reads are answered during a long catch-up)

    def report(self) -> None:
        """``served N`` to the host, at most every REPORT_S (the last one always)."""
        now = time.monotonic()
        if now - self._reported >= REPORT_S:
            self._reported = now
            self._write(b"served %d\n" % self.follower.durable_size)
        elif self._report_due is None:
            loop = asyncio.get_running_loop()
            self._report_due = loop.call_later(REPORT_S, self._late_report)

    def _late_report(self) -> None:
        self._report_due = None
        self._reported = time.monotonic()
        self._write(b"served %d\n" % self.follower.durable_size)

    def _write(self, data: bytes) -> None:
        try:
            self.stdout.write(data)
            self.stdout.flush()
        except OSError:  # the host is gone: stdin's end stops this process too
            pass

    async def run(self, lines: asyncio.StreamReader) -> None:
        first = await lines.readline()
        if not first:
            return
        self.told(first)
        self.follower.load(self.follower.target)
        sock = socket.socket(fileno=self.conf.fd)
        api = ReaderApi(
            self.follower,
            body_max=self.conf.body_max,
            season_file=self.season_bytes,
            readers=self.readers,
        )
        offload.PACE.rate = self.readers.log_rate
        server = self.server = uvicorn.Server(uvicorn_config(api.app(), graceful_s=GRACEFUL_S))
        following = asyncio.create_task(self.follow(), name="arena-follow")
        serving = asyncio.create_task(server.serve(sockets=[sock]), name="arena-readers")
        reading = asyncio.create_task(self._read(lines), name="arena-durable")
        while not server.started and not serving.done():
            await asyncio.sleep(0.005)
        if server.started:
            self._write(b"ready\n")
        try:
            await asyncio.wait({serving, following}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            server.should_exit = True
            for task in (reading, following):
                task.cancel()
            with contextlib.suppress(BaseException):
                await serving
        if following.done() and not following.cancelled():
            following.result()  # (a log that cannot be read: one line, from main)

    async def _read(self, lines: asyncio.StreamReader) -> None:
        while line := await lines.readline():
            self.told(line)
        if self.server is not None:  # stdin's end: the host stopped or died
            self.server.should_exit = True


async def _main() -> None:
    loop = asyncio.get_running_loop()
    lines = asyncio.StreamReader(limit=1 << 20)
    stdin = os.fdopen(sys.stdin.fileno(), "rb", buffering=0, closefd=False)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(lines), stdin)
    head = await lines.readline()
    if not head:
        return
    try:
        conf = msgspec.json.decode(head, type=Config)
    except msgspec.DecodeError as exc:
        raise SystemExit(f"arena: host: readers: bad configuration: {exc}") from None
    os.nice(conf.nice)
    await _Child(conf, sys.stdout.buffer).run(lines)


def main() -> int:
    try:
        asyncio.run(_main())
    except LogError as exc:
        _note(f"stopped: {exc}")
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
