"""One hosted season on uvicorn: the lock, the start-up replay, the tasks, the shutdown.

Why this module exists: the order things start and stop in is what keeps the log whole.
Start: take the log's lock (a second server refuses to start), replay the whole log
(``Session.open``: state, keys, fills and score rows rebuilt), write a ``restart`` gap if
the log held inputs, then start the engine task, the ticker (a ``tick`` on every whole
second), the control socket, the market feed, and only then the HTTP listener, its rate
limit counting the orders and cancels logged in the last window before the start. Stop (a
signal, or the log failing): the listener first, then the feed, then the engine task
drains what is queued; the log is fsynced and closed, the lock released last.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import msgspec
import uvicorn

from arena_tui.host import control, offload
from arena_tui.host.app import Api
from arena_tui.host.checkpoint import Checkpoints
from arena_tui.host.clients import ReaderOptions
from arena_tui.host.errors import HostError
from arena_tui.host.feeds import LiveHostFeed, MarketFeed, ReplayFeed
from arena_tui.host.lock import LogLock
from arena_tui.host.offload import OffloadProtocol
from arena_tui.host.plan import HostOptions, Plan, plan, season_path
from arena_tui.host.ratelimit import MovingWindow, monotonic_ms
from arena_tui.host.readers import ReaderProcess
from arena_tui.host.session import Session
from arena_tui.host.stalls import LoopWatch, trace_path
from arena_tui.host.store import ScoreStore, db_path
from arena_tui.record.feed import Backoff, FeedConfig, wall_ms
from arena_tui.util.human import Progress, plural
from engine.inputs import Line

KEEP_ALIVE_S = 30  # an agent polling every few seconds keeps its connection
_ENCODE = msgspec.json.Encoder().encode
_LINE = msgspec.json.Decoder(Line)


def stderr_note(text: str) -> None:
    sys.stderr.write(f"arena: host: {text}\n")
    sys.stderr.flush()


class Host:
    """A season's server (see the module docstring); ``run`` blocks, ``start`` threads."""

    def __init__(
        self,
        opts: HostOptions,
        *,
        clock: Callable[[], int] = wall_ms,
        limiter_clock: Callable[[], int] = monotonic_ms,
        note: Callable[[str], None] = stderr_note,
        feed: MarketFeed | None = None,
        on_ready: Callable[[dict[str, Any]], None] | None = None,
        readers: ReaderOptions | None = None,
    ) -> None:
        self.opts = opts
        self.readers = ReaderOptions() if readers is None else readers
        self.clock = clock
        self.limiter_clock = limiter_clock
        self.note = note
        self.feed = feed
        self.on_ready = on_ready
        self.lock = LogLock(opts.log)
        self.plan: Plan | None = None
        self.session: Session | None = None
        self.server: uvicorn.Server | None = None
        self.sock: socket.socket | None = None
        self.reader: ReaderProcess | None = None  # --readers-port's child (host.readers)
        self.info: dict[str, Any] = {}
        self.season_file = b""  # the season file beside the log, as read at start
        self.ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    # ---- before the loop ---------------------------------------------------------------

    def prepare(self) -> None:
        """Lock, plan, replay the log, bind the listener; raise HostError and friends."""
        self.lock.acquire()
        try:
            self._prepare()
        except BaseException:
            self.lock.release()
            raise

    def _prepare(self) -> None:
        opts = self.opts
        control.check_path(control.socket_path(opts.log))
        p = self.plan = plan(opts, self.clock())
        for text in p.notes:
            self.note(text)
        try:
            self.season_file = season_path(p.season, opts.log).read_bytes()
        except OSError as exc:
            raise HostError(f"cannot read the season file beside the log: {exc}") from None
        store = ScoreStore(db_path(opts.log))
        every = opts.checkpoint_every_ms
        checkpoints = (
            None
            if every is None
            else Checkpoints(opts.log, every, self.note, check=opts.checkpoint_check)
        )
        session = self.session = Session(
            p.season,
            opts.log,
            p.header,
            store,
            clock=self.clock,
            fsync=opts.fsync,
            checkpoints=checkpoints,
            freeze_gc=opts.freeze_gc,
        )
        session.open(Progress(label="host: replaying the log"))
        if self.feed is None:
            self.feed = self._make_feed(p)
        self.sock = _bind(opts.host, opts.port)
        if opts.readers_port is not None:
            try:
                rsock = _bind(opts.host, opts.readers_port, "--readers-port ")
            except HostError:
                self.sock.close()
                raise
            self.reader = ReaderProcess(
                rsock,
                log=opts.log,
                season_file=self.season_file,
                body_max=opts.body_max,
                readers=self.readers,
                note=self.note,
            )
            session.dials.watch_readers(self.reader.lag)

    def _make_feed(self, p: Plan) -> MarketFeed:
        coins = [m.coin for m in p.season.markets]
        if p.restamp is not None:
            skip = self.clock() if p.resumed else None
            paths = [str(x) for x in self.opts.replay]
            return ReplayFeed(
                paths, coins, p.restamp, skip_before=skip, clock=self.clock, note=self.note
            )
        cfg = FeedConfig(self.opts.ws_url, tuple(coins))
        return LiveHostFeed(cfg, backoff=Backoff(), clock=self.clock, note=self.note)

    # ---- the loop ----------------------------------------------------------------------

    async def serve(self) -> None:
        session, sock, feed = self.session, self.sock, self.feed
        assert session is not None and sock is not None and feed is not None
        self._loop = loop = asyncio.get_running_loop()
        session.bind(loop)
        engine = asyncio.create_task(session.run(), name="arena-engine")
        ticker = asyncio.create_task(self._tick(session), name="arena-ticker")
        watch = self._loop_watch(session)
        watching = asyncio.create_task(watch.run(), name="arena-loop-watch")
        ctl_path = control.socket_path(self.opts.log)
        ctl: asyncio.AbstractServer | None = None
        try:
            ctl = await control.serve(session, ctl_path)
            if session.last_t is not None:
                self._restart_gap(session, session.last_t)
            feed.start(session.push_feed)
            if self.reader is not None:
                self.reader.start(session)
            server = self.server = uvicorn.Server(self._config(session))
            serving = asyncio.create_task(server.serve(sockets=[sock]))
            engine.add_done_callback(lambda _: setattr(server, "should_exit", True))
            while not server.started and not serving.done():
                await asyncio.sleep(0.005)
            if server.started:
                self._ready(sock)
            await serving
        finally:
            feed.stop()
            ticker.cancel()
            watching.cancel()
            if ctl is not None:
                ctl.close()
            if not engine.done():
                session.stop()
            with contextlib.suppress(Exception):
                await engine
            if self.reader is not None:  # (after the drain: its last batches told too)
                self.reader.stop()
                self.reader.sock.close()
            session.close()
            session.store.close()
            with contextlib.suppress(FileNotFoundError):
                ctl_path.unlink()
            self.lock.release()
        if session.failure is not None:
            raise HostError(str(session.failure))

    def _config(self, session: Session) -> uvicorn.Config:
        rules = session.season.rules
        limiter = MovingWindow(
            rules.rate_limit_requests, rules.rate_limit_window_ms, self.limiter_clock
        )
        limiter.restore(session.requests, self.clock())  # (a restart keeps the count)
        api = Api(
            session,
            limiter,
            body_max=self.opts.body_max,
            clock=self.clock,
            season_file=self.season_file,
            readers=self.readers,
            limiter_clock=self.limiter_clock,
        )
        offload.PACE.rate = self.readers.log_rate
        return uvicorn_config(api.app(), graceful_s=2)

    def _ready(self, sock: socket.socket) -> None:
        session = self.session
        assert session is not None
        host, port = sock.getsockname()[:2]
        url = f"http://{host}:{port}"
        self.info = {
            "url": url,
            "port": port,
            "season": session.season.id,
            "rules_sha256": session.season.rules_sha256,
            "log": str(self.opts.log),
            "replayed": session.replayed,
            "entries": len(session.engine.entries()),
        }
        also = ""
        if self.reader is not None:
            self.info["readers_url"] = self.reader.url
            self.info["readers_port"] = self.reader.sock.getsockname()[1]
            also = f"; public reads also on {self.reader.url}"
        s = session.season
        self.note(
            f"season {s.id} (rules {s.rules_sha256[:12]}...), log {self.opts.log} "
            f"({plural(session.replayed, 'input')} replayed, "
            f"{plural(len(session.engine.entries()), 'entry', 'entries')}); "
            f"serving {url} (API: {url}/openapi.json){also}"
        )
        if self.on_ready is not None:
            self.on_ready(self.info)
        self.ready.set()

    def _restart_gap(self, session: Session, last_t: int) -> None:
        t = max(self.clock(), last_t)
        doc = {"type": "gap", "from": last_t, "to": t, "reason": "restart"}
        body = b'"arena":' + _ENCODE(doc) + b"}"
        session.push_feed([(t, body, _LINE.decode(b'{"t":%d,' % t + body))])

    def _loop_watch(self, session: Session) -> LoopWatch:
        ms = self.opts.stall_trace_ms
        trace = None if ms is None else trace_path(self.opts.log)
        watch = LoopWatch(trace=trace, trace_after_ms=ms or 250)
        watch.observe(session.dials.loop_lag.observe)
        return watch

    async def _tick(self, session: Session) -> None:
        while True:
            now = self.clock()
            due = (now // 1000 + 1) * 1000
            await asyncio.sleep((due - now) / 1000)
            session.push_tick(due)

    # ---- running it --------------------------------------------------------------------

    def request_stop(self) -> None:
        server, loop = self.server, self._loop
        if server is not None and loop is not None:
            loop.call_soon_threadsafe(setattr, server, "should_exit", True)

    def run(self) -> None:
        """In the main thread: until SIGINT/SIGTERM (uvicorn's handlers) or a failure."""

        def early(signum: int, frame: FrameType | None) -> None:
            if self.server is None:
                raise KeyboardInterrupt
            self.server.should_exit = True  # (uvicorn re-raises what it caught, at its end)

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, early)
        self.prepare()
        asyncio.run(self.serve())

    def start(self) -> Host:
        """In a thread (tests): prepare here, serve there; returns once it listens."""
        self.prepare()

        def main() -> None:
            try:
                asyncio.run(self.serve())
            except BaseException as exc:
                self.error = exc
                self.ready.set()

        self._thread = threading.Thread(target=main, name="arena-host", daemon=True)
        self._thread.start()
        self.ready.wait(30)
        if self.error is not None:
            raise self.error
        return self

    def stop(self) -> None:
        self.request_stop()
        if self._thread is not None:
            self._thread.join(30)


def uvicorn_config(app: Any, *, graceful_s: int) -> uvicorn.Config:
    """How the host and a lockstep run serve their API: no logging or lifespan of
    uvicorn's, the sans-I/O WebSocket, kept-alive connections, no Server header; h11 with
    the ``arena.sendfile`` extension (large bodies sent off the loop), and no client
    address taken from ``X-Forwarded-For`` (the host's public limits read it only when
    told to trust a proxy: arena_tui.host.clients)."""
    return uvicorn.Config(
        app,
        http=OffloadProtocol,
        proxy_headers=False,
        log_config=None,
        access_log=False,
        ws="websockets-sansio",
        lifespan="off",
        timeout_graceful_shutdown=graceful_s,
        timeout_keep_alive=KEEP_ALIVE_S,
        server_header=False,
    )


def _bind(host: str, port: int, option: str = "") -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto given: asyncio turns Nagle off only on sockets that say IPPROTO_TCP (with 0, a
    # kept-alive connection waited ~40 ms on delayed ACKs for every answer)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        why = exc.strerror or exc
        raise HostError(f"{option}cannot listen on {host}:{port}: {why}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
