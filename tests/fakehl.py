"""A fake Hyperliquid on 127.0.0.1: a real WebSocket server and a real info endpoint.

The fake for ``arena record``'s tests (never the network). It speaks the real protocol
(subscribe -> subscriptionResponse and a snapshot, ping -> pong, error for the rest) and
streams the real capture (``hftbacktest_collector_btc_20250126.gz``: BTC l2Book and trades,
re-stamped to now with fresh tids so every loop is new data, copied to each subscribed
coin) plus activeAssetCtx messages shaped as Hyperliquid sends them, at accelerated speed.

It remembers every frame it sent, with its kind and when, so a test can check the file
against the wire. Faults, injected on the connection in order with the data (everything
queued before a fault is on the wire before it): ``close`` (TCP closed, no close frame),
``close_frame`` (a 1012 close), ``silence`` (nothing more is sent, pings unanswered, until
the client hangs up), ``malformed`` (a truncated JSON frame), ``refuse`` (close, then reject
the next ``n`` handshakes with HTTP 503), ``outage`` (close and stop listening for ``ms``).
A trades subscription is always answered with a snapshot of the last trades sent, old
ones included, as the real server does after a reconnect.

The info endpoint answers ``meta`` with ``info_status`` (200: the answer; else an error
body); ``info_script`` lists the statuses of the next requests first, 0 meaning "hang up
without an answer" (a network failure), so a test can make it fail, then recover.

It runs in its own thread with its own event loop, so both a test's blocking code and a
test's event loop can talk to it; ``wait(pred)`` waits for a condition, never for a time.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = ROOT / "tests/data/hftbacktest_collector_btc_20250126.gz"  # see tests/data/README.md

MARKET = ("data", "snapshot")  # kinds a recorder must write


def capture_messages() -> list[dict[str, Any]]:
    """The real capture's messages, in order."""
    lines = gzip.decompress(CAPTURE.read_bytes()).decode().splitlines()
    return [json.loads(line.split(" ", 1)[1]) for line in lines if line.strip()]


def meta_answer() -> dict[str, Any]:
    """``meta`` shaped like mainnet's: BTC 0, ETH 1, SOL 5, HYPE 159 with their szDecimals."""
    known = {0: ("BTC", 5), 1: ("ETH", 4), 2: ("ATOM", 2), 5: ("SOL", 2), 159: ("HYPE", 2)}
    universe = []
    for i in range(160):
        name, dec = known.get(i, (f"ALT{i}", 1))
        universe.append({"name": name, "szDecimals": dec, "maxLeverage": 20})
    return {"universe": universe}


def ctx_message(coin: str, n: int) -> dict[str, Any]:
    mark = 105_050 + n % 7
    return {
        "channel": "activeAssetCtx",
        "data": {
            "coin": coin,
            "ctx": {
                "funding": "0.0000125" if n % 2 else "-0.0000015186",
                "openInterest": "12345.678",
                "prevDayPx": "104000.0",
                "dayNtlVlm": "1869311226.52",
                "premium": None if n % 5 == 0 else "0.00031",
                "oraclePx": f"{mark - 10}.0",
                "markPx": f"{mark}.0",
                "midPx": None if n % 5 == 0 else f"{mark}.5",
                "impactPxs": None if n % 5 == 0 else [f"{mark}.0", f"{mark + 1}.0"],
                "dayBaseVlm": "17900.12",
            },
        },
    }


def compact(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Sent:
    conn: int
    t_ms: int  # the server's wall clock just before the frame went on the wire
    frame: bytes
    kind: str  # data | snapshot | control | malformed


@dataclass
class _Conn:
    id: int
    ws: ServerConnection
    queue: asyncio.Queue[tuple[str, bytes]] = field(default_factory=asyncio.Queue)
    subs: list[tuple[str, str]] = field(default_factory=list)  # (type, coin)
    silent: bool = False
    done: bool = False
    sending: bool = False  # a frame taken from the queue is on its way out


class _Gone(Exception):
    """The connection is gone: its sender stops."""


class FakeHL:
    """See the module docstring. Use as a context manager; read state under ``lock``."""

    def __init__(self, *, pace_s: float = 0.001, ctx_every: int = 4, pretty_every: int = 0):
        self.pace_s, self.ctx_every, self.pretty_every = pace_s, ctx_every, pretty_every
        self.lock = threading.Condition()
        self.sent: list[Sent] = []
        self.connections = 0
        self.closed_connections = 0
        self.handshakes_refused = 0
        self.pings = 0
        self.subscribed: list[tuple[int, str, str]] = []  # (conn, type, coin)
        self.outages = 0
        self.info_status = 200
        self.info_script: list[int] = []  # statuses of the next meta requests (0: hang up)
        self.info_requests = 0
        self.paused = False  # stop streaming (control frames still answered)
        self._pauses = self._pauses_seen = 0  # settle(): paused, and the stream saw it
        self._refuse = 0
        self._tape = self._messages()
        self._recent_trades: list[dict[str, Any]] = []
        self._book: dict[str, Any] | None = None
        self._n = 0
        self._current: _Conn | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: Server | None = None
        self.port = 0
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _info_handler(self))

    # ---- life -------------------------------------------------------------------------

    def __enter__(self) -> FakeHL:
        self._thread.start()
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        self._call(self._listen())
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._call(self._close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def info_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/info"

    def _call(self, coro: Any, timeout: float = 10.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _listen(self) -> None:
        self._server = await serve(
            self._handle, "127.0.0.1", self.port, process_request=self._gate, ping_interval=None
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    # ---- what tests use -----------------------------------------------------------------

    def wait(self, pred: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        """Wait until ``pred()`` holds (checked on every change); fail naming ``what``."""
        with self.lock:
            if not self.lock.wait_for(pred, timeout):
                raise AssertionError(f"timed out waiting for {what}")

    def settle(self, timeout: float = 10.0) -> None:
        """Stop streaming and wait until every frame the stream queued before has gone out
        (``sent`` holds it): what a test counts then is final."""
        with self.lock:
            self._pauses += 1
            self.paused = True
        pauses = self._pauses

        def settled() -> bool:
            conn = self._current
            idle = conn is None or conn.done or (conn.queue.empty() and not conn.sending)
            return self._pauses_seen >= pauses and idle

        self.wait(settled, "the stream to settle", timeout)

    def market_sent(self) -> list[Sent]:
        with self.lock:
            return [s for s in self.sent if s.kind in MARKET]

    def data_on(self, conn: int) -> int:
        """Market frames sent on connection ``conn`` (call under ``lock``, or via wait)."""
        return sum(1 for s in self.sent if s.conn == conn and s.kind == "data")

    def flowing(self, conn: int, frames: int = 10) -> bool:
        """Connection ``conn`` is up and has sent ``frames`` data frames."""
        return self.connections >= conn and self.data_on(conn) >= frames

    def inject(self, kind: str, **kw: Any) -> None:
        """Inject a fault on the current connection (see the module docstring)."""
        self._call(self._inject(kind, kw))

    async def _inject(self, kind: str, kw: dict[str, Any]) -> None:
        conn = self._current
        assert conn is not None, "no connection to inject a fault on"
        if kind == "refuse":
            self._refuse = kw.get("n", 3)
        await conn.queue.put(("fault", json.dumps({"kind": kind, **kw}).encode()))

    # ---- the server -----------------------------------------------------------------------

    def _gate(self, connection: ServerConnection, request: Request) -> Response | None:
        if self._refuse > 0:
            self._refuse -= 1
            with self.lock:
                self.handshakes_refused += 1
                self.lock.notify_all()
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "refused for a test\n")
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        with self.lock:
            self.connections += 1
            conn = _Conn(self.connections, ws)
            self.lock.notify_all()
        self._current = conn
        tasks = [asyncio.create_task(self._sender(conn)), asyncio.create_task(self._stream(conn))]
        try:
            async for msg in ws:
                await self._on_client(conn, msg if isinstance(msg, str) else msg.decode())
        except ConnectionClosed:
            pass
        finally:
            conn.done = True
            for task in tasks:
                task.cancel()
            if self._current is conn:
                self._current = None
            with self.lock:
                self.closed_connections += 1
                self.lock.notify_all()

    async def _on_client(self, conn: _Conn, text: str) -> None:
        req = json.loads(text)
        if req.get("method") == "ping":
            with self.lock:
                self.pings += 1
                self.lock.notify_all()
            if not conn.silent:
                await conn.queue.put(("control", b'{"channel":"pong"}'))
            return
        sub = req.get("subscription") or {}
        if req.get("method") != "subscribe" or sub.get("type") not in (
            "l2Book",
            "trades",
            "activeAssetCtx",
        ):
            await conn.queue.put(("control", compact({"channel": "error", "data": text})))
            return
        kind, coin = sub["type"], sub["coin"]
        conn.subs.append((kind, coin))
        with self.lock:
            self.subscribed.append((conn.id, kind, coin))
            self.lock.notify_all()
        echo = {**sub, "nSigFigs": None, "mantissa": None} if kind == "l2Book" else sub
        answer = {
            "channel": "subscriptionResponse",
            "data": {"method": "subscribe", "subscription": echo},
        }
        await conn.queue.put(("control", compact(answer)))
        await conn.queue.put(("snapshot", self._snapshot(kind, coin)))

    def _snapshot(self, kind: str, coin: str) -> bytes:
        if kind == "trades":
            trades = self._recent_trades or _first("trades")["data"]
            return compact({"channel": "trades", "data": [{**t, "coin": coin} for t in trades]})
        if kind == "l2Book":
            book = self._book or _first("l2Book")
            return compact(_for_coin(book, coin))
        return compact(ctx_message(coin, self._n))

    async def _stream(self, conn: _Conn) -> None:
        while not conn.done:
            await asyncio.sleep(self.pace_s)
            if self.paused:
                with self.lock:  # (nothing more is queued until it is unpaused)
                    self._pauses_seen = self._pauses
                    self.lock.notify_all()
                continue
            if conn.silent or not conn.subs:
                continue
            msg = next(self._tape)
            self._n += 1
            for kind, coin in conn.subs:
                if kind == msg["channel"]:
                    await conn.queue.put(("data", self._frame(_for_coin(msg, coin))))
                if kind == "activeAssetCtx" and self._n % self.ctx_every == 0:
                    await conn.queue.put(("data", self._frame(ctx_message(coin, self._n))))

    def _frame(self, doc: dict[str, Any]) -> bytes:
        if self.pretty_every and self._n % self.pretty_every == 0:
            return json.dumps(doc, indent="\t").encode()  # as in jkorf's transcripts
        return compact(doc)

    def _messages(self) -> Iterator[dict[str, Any]]:
        """The capture, forever, re-stamped: exchange times now, trade ids fresh."""
        tid = 1_000_000
        while True:
            for msg in capture_messages():
                now = time.time_ns() // 1_000_000
                if msg["channel"] == "l2Book":
                    msg["data"]["time"] = now
                    self._book = msg
                else:
                    for trade in msg["data"]:
                        tid += 1
                        trade["time"], trade["tid"] = now, tid
                    self._recent_trades = (self._recent_trades + msg["data"])[-10:]
                yield msg

    async def _sender(self, conn: _Conn) -> None:
        """The only writer of the connection: frames and faults go out in queue order."""
        while True:
            kind, frame = await conn.queue.get()
            conn.sending = True
            try:
                await self._send(conn, kind, frame)
            except _Gone:
                return
            finally:
                conn.sending = False
                with self.lock:
                    self.lock.notify_all()

    async def _send(self, conn: _Conn, kind: str, frame: bytes) -> None:
        """One frame or fault from the queue; _Gone when the connection is."""
        if kind == "fault":
            if await self._fault(conn, json.loads(frame)):
                raise _Gone
            return
        if conn.silent:
            return
        t_ms = time.time_ns() // 1_000_000
        try:
            await conn.ws.send(frame.decode())
        except ConnectionClosed:
            raise _Gone from None
        with self.lock:
            self.sent.append(Sent(conn.id, t_ms, frame, kind))
            self.lock.notify_all()

    async def _fault(self, conn: _Conn, fault: dict[str, Any]) -> bool:
        """Apply one fault; True if the connection is gone."""
        kind = fault["kind"]
        if kind == "malformed":
            frame = b'{"channel":"trades","data":[{"coin":"BTC","px":"105'
            await conn.ws.send(frame.decode())
            with self.lock:
                self.sent.append(Sent(conn.id, time.time_ns() // 1_000_000, frame, "malformed"))
                self.lock.notify_all()
            return False
        if kind == "silence":
            conn.silent = True
            return False
        conn.done = True
        if kind == "close_frame":
            await conn.ws.close(1012, "service restart")
            return True
        conn.ws.transport.close()  # FIN after what is queued: no close frame
        if kind == "outage":
            asyncio.get_running_loop().create_task(self._outage(fault.get("ms", 200)))
        return True

    async def _outage(self, ms: int) -> None:
        await self._close()
        await asyncio.sleep(ms / 1000)
        await self._listen()
        with self.lock:
            self.outages += 1
            self.lock.notify_all()


def _first(channel: str) -> dict[str, Any]:
    return next(m for m in capture_messages() if m["channel"] == channel)


def _for_coin(msg: dict[str, Any], coin: str) -> dict[str, Any]:
    data = msg["data"]
    if isinstance(data, list):
        return {"channel": msg["channel"], "data": [{**t, "coin": coin} for t in data]}
    return {"channel": msg["channel"], "data": {**data, "coin": coin}}


def _info_handler(fake: FakeHL) -> type[BaseHTTPRequestHandler]:
    class Info(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            ok = self.path == "/info" and json.loads(body or b"{}") == {"type": "meta"}
            with fake.lock:
                fake.info_requests += 1
                scripted = fake.info_script.pop(0) if ok and fake.info_script else None
                fake.lock.notify_all()
            status = scripted if scripted is not None else fake.info_status if ok else 400
            if status == 0:
                self.close_connection = True  # no answer at all: the client sees a hang-up
                return
            payload = compact(meta_answer()) if status == 200 else b'{"error":"no"}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Info
