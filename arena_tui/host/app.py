"""The HTTP API on Starlette: auth, limits and strict bodies in front of the session.

Why this module exists: every request passes the same gates in the same order before it
can reach the log: the key (401), the entry's moving-window limit (429 with
``Retry-After``), the body size (413), the strict decode (400). None of these writes
anything. What passes is an input: the session logs it, fsyncs it, applies it, and the
handler answers from the events it caused (200, or 422 with the engine's reason). Reads
answer from the engine's state and the views, on the event loop thread that owns them.
The public reads (the season and its file, the scores, the log, each entry's marks and
fills, the page, the dials) take no key and no slot of any entry's limit: they show what
the log makes public. Each has its own limit per client instead (``clients``), and costs
the loop little: the large views are bytes encoded once per change (``encoded``), the
log's bytes are sent by worker threads (``offload``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from arena_tui.host import answers, logserve, metrics
from arena_tui.host import schemas as s
from arena_tui.host.clients import PublicLimits, ReaderOptions
from arena_tui.host.encoded import Encoded
from arena_tui.host.openapi import document
from arena_tui.host.page import Page
from arena_tui.host.ratelimit import MovingWindow, monotonic_ms, retry_after_s
from arena_tui.host.session import LogWriteError, Session
from arena_tui.host.views import Subscriber
from arena_tui.logs.notes import NoteError, check_note
from arena_tui.wire import api as w
from engine import MalformedInput, format_cloid, parse_cloid
from engine import events as ev

JSON = "application/json"
Handler = Callable[[Request, str], Awaitable[Response]]
PublicHandler = Callable[[Request], Awaitable[Response]]
Endpoint = Callable[[Request], Awaitable[Response]]


def answer(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    data = body if isinstance(body, bytes) else s.ENCODE(body)
    return Response(data, status, headers=headers, media_type=JSON)


def error(status: int, code: str, detail: str | None = None, **headers: str) -> Response:
    return answer(w.Error(code, detail), status, headers or None)


def _int_param(request: Request, name: str) -> int | None:
    text = request.query_params.get(name)
    if text is None:
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise s.BadBody(f"query parameter {name}: want a non-negative integer (ms)")
    return int(text)


def _market_param(text: str | None) -> bool:
    """The stream's ``?market=``: 1 (the default) sends market data too, 0 does not."""
    if text not in (None, "0", "1"):
        raise s.BadBody("query parameter market: want 0 or 1")
    return text != "0"


class Api:
    """The routes over one session (see the module docstring)."""

    def __init__(
        self,
        session: Session,
        limiter: MovingWindow,
        *,
        body_max: int,
        clock: Callable[[], int],
        season_file: bytes = b"",
        readers: ReaderOptions | None = None,
        limiter_clock: Callable[[], int] = monotonic_ms,
    ) -> None:
        self.session = session
        self.season_file = season_file  # the season file beside the log, as on disk at start
        self.engine = session.engine
        self.views = session.views
        self.limiter = limiter
        self.body_max = body_max
        self.clock = clock
        # the operator's dials: a hosted session's (a lockstep run, a backtest, has none)
        self.dials = session.dials if isinstance(session, Session) else None
        if self.dials is not None:
            self.dials.watch(session, clock)
        self.encoded = Encoded(
            self.engine, self.views, session.season, getattr(session, "store", None)
        )
        # the public endpoints' limits per client (None: none, as in a lockstep run)
        self.public = None if readers is None else PublicLimits(readers, limiter_clock)
        limited = self.public is not None
        self.openapi = s.ENCODE(document(dials=self.dials is not None, public_limits=limited))
        self.page = Page(session.season)  # the season page, rendered once

    def paths(self) -> dict[str, dict[str, Endpoint]]:
        """Each path's endpoints by method (a GET also answers HEAD)."""
        authed, public = self._authed, self._public
        paths: dict[str, dict[str, Endpoint]] = {
            "/v1/orders": {"GET": authed(self.get_orders), "POST": authed(self.post_order)},
            "/v1/cancel": {"POST": authed(self.post_cancel)},
            "/v1/fills": {"GET": authed(self.get_fills)},
            "/v1/account": {"GET": authed(self.get_account)},
            "/v1/book/{coin}": {"GET": authed(self.get_book)},
            "/v1/season": {"GET": self.get_season},
            "/v1/season/file": {"GET": self.get_season_file},
            "/v1/scores": {"GET": self.get_scores},
            "/v1/log": {"GET": self.get_log},
            "/v1/entries": {"GET": public(self.get_entries)},
            "/v1/entries/{entry}/equity": {"GET": public(self.get_entry_equity)},
            "/v1/entries/{entry}/fills": {"GET": public(self.get_entry_fills)},
            "/openapi.json": {"GET": self.get_openapi},
            "/": {"GET": self.page.get},
            "/v1/stream": {"GET": authed(self.stream_over_http)},
        }
        if self.dials is not None:
            paths["/healthz"] = {"GET": self.get_healthz}
            paths["/metrics"] = {"GET": self.get_metrics}
        return paths

    def app(self) -> Starlette:
        # One route per path, whatever its methods: Starlette answers a method no route of
        # a path takes with the first partly matching route's Allow, so two routes for
        # /v1/orders made OPTIONS /v1/orders say "Allow: POST" (GET missing).
        paths = self.paths()
        routes: list[BaseRoute] = [
            _route(p, self._limited(p, by_method), self.dials) for p, by_method in paths.items()
        ]
        if "/v1/stream" in paths:  # (not on the reader port: host.follower)
            routes.append(WebSocketRoute("/v1/stream", self.stream))
        handlers: dict[Any, Any] = {HTTPException: _http_error, Exception: _server_error}
        return Starlette(routes=routes, exception_handlers=handlers)

    # ---- the gates ---------------------------------------------------------------------

    def _gate(self, authorization: str | None) -> str | Response:
        """The entry, or the 401/429 to answer instead (nothing is logged for either)."""
        entry = self.views.keys.entry_for(authorization)
        if entry is None:
            return error(401, "Unauthorized", "send Authorization: Bearer <key>", **_CHALLENGE)
        wait_ms = self.limiter.take(entry)
        if wait_ms:
            rules = self.engine.rules
            limit = f"{rules.rate_limit_requests} requests per {rules.rate_limit_window_ms} ms"
            seconds = retry_after_s(wait_ms)
            detail = f"{limit}; retry in {seconds} s"
            return error(429, "RateLimited", detail, **{"Retry-After": str(seconds)})
        return entry

    def _limited(self, path: str, by_method: dict[str, Endpoint]) -> dict[str, Endpoint]:
        """A public path's endpoints behind its per-client limit and the public total (an
        authenticated one's, the entry's limit, as they are)."""
        public = self.public
        if public is None or path in AUTHED or not public.limits(path):
            return by_method

        def limited(handler: Endpoint) -> Endpoint:
            async def endpoint(request: Request) -> Response:
                peer = request.client.host if request.client is not None else None
                forwarded = request.headers.get("x-forwarded-for")
                wait_ms, limit = public.take(path, peer, forwarded)
                if wait_ms:
                    if self.dials is not None:
                        self.dials.public_limited.labels(path).inc()
                    seconds = retry_after_s(wait_ms)
                    detail = f"{limit}; retry in {seconds} s"
                    return error(429, "RateLimited", detail, **{"Retry-After": str(seconds)})
                return await handler(request)

            return endpoint

        return {method: limited(handler) for method, handler in by_method.items()}

    def _authed(self, handler: Handler) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            entry = self._gate(request.headers.get("authorization"))
            if isinstance(entry, Response):
                return entry
            try:
                return await handler(request, entry)
            except s.BadBody as exc:
                return error(400, "BadRequest", str(exc))
            except LogWriteError:
                return error(503, "Unavailable", "the server is stopping; retry later")

        return endpoint

    def _public(self, handler: PublicHandler) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except s.BadBody as exc:
                return error(400, "BadRequest", str(exc))

        return endpoint

    async def _body(self, request: Request) -> bytes:
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.body_max:
            raise _TooLarge
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.body_max:
                raise _TooLarge
            chunks.append(chunk)
        return b"".join(chunks)

    # ---- inputs ------------------------------------------------------------------------

    async def post_order(self, request: Request, entry: str) -> Response:
        try:
            o = s.decode(await self._body(request), s.OrderRequest)
            s.check_u64("limitPx", o.limitPx)
            s.check_u64("sz", o.sz)
            parse_cloid(o.cloid)
            note = check_note(o.note)
        except _TooLarge:
            return _too_large(self.body_max)
        except (msgspec.DecodeError, MalformedInput, NoteError) as exc:
            raise s.BadBody(str(exc)) from None
        doc: dict[str, Any] = {"type": "order", "entry": entry, "asset": o.asset}
        doc.update(isBuy=o.isBuy, limitPx=o.limitPx, sz=o.sz, reduceOnly=o.reduceOnly)
        doc["encodedTif"] = o.encodedTif
        if o.cloid is not None:
            doc["cloid"] = o.cloid
        if note is not None:  # (never read by the engine: the rules and scores ignore it)
            doc["note"] = note
        result = _own(await self.session.submit(doc), entry)
        if self.dials is not None:
            accepted = isinstance(result, ev.Accepted)
            self.dials.outcome("order", None if accepted else _reason(result))
        if isinstance(result, ev.Accepted):
            cloid = format_cloid(result.cloid)
            return answer(w.OrderAccepted(result.oid, cloid, result.t, result.activates_at))
        return _rejected(result)

    async def post_cancel(self, request: Request, entry: str) -> Response:
        try:
            c = s.decode(await self._body(request), s.CancelRequest)
            parse_cloid(c.cloid)
        except _TooLarge:
            return _too_large(self.body_max)
        except (msgspec.DecodeError, MalformedInput) as exc:
            raise s.BadBody(str(exc)) from None
        s.check_cancel(c)
        doc: dict[str, Any] = {"type": "cancel", "entry": entry}
        if c.oid is not None:
            doc["oid"] = c.oid
        if c.cloid is not None:
            doc["cloid"] = c.cloid
        result = _own(await self.session.submit(doc), entry)
        if self.dials is not None:
            pending = isinstance(result, ev.CancelPending)
            self.dials.outcome("cancel", None if pending else _reason(result))
        if isinstance(result, ev.CancelPending):
            return answer(w.CancelAccepted(result.oid, result.t, result.effective_at))
        return _rejected(result)

    # ---- reads -------------------------------------------------------------------------

    async def get_orders(self, request: Request, entry: str) -> Response:
        return answer(answers.orders(self.engine, entry, self.views.notes.by_order))

    async def get_fills(self, request: Request, entry: str) -> Response:
        since = _int_param(request, "since") or 0
        return answer(self.encoded.fills(entry, since))

    async def get_account(self, request: Request, entry: str) -> Response:
        return answer(answers.account(self.engine, entry))

    async def get_book(self, request: Request, entry: str) -> Response:
        book = answers.book(self.engine, self.views, request.path_params["coin"])
        if book is None:
            return error(404, "UnknownCoin", "not a market of this season (GET /v1/season)")
        return answer(book)

    async def get_season(self, request: Request) -> Response:
        season = self.session.season
        return answer(answers.season_info(self.engine, season, self.clock(), self.body_max))

    async def get_scores(self, request: Request) -> Response:
        try:
            day = _int_param(request, "day")
        except s.BadBody as exc:
            return error(400, "BadRequest", str(exc))
        return answer(self.encoded.scores(day))

    async def get_season_file(self, request: Request) -> Response:
        return answer(self.season_file)

    async def get_log(self, request: Request) -> Response:
        size = self.session.durable_size  # (what is served ends here, whatever comes next)
        try:
            status, start, end = logserve.byte_slice(
                size, request.headers.get("range"), request.query_params.get("offset")
            )
        except logserve.Refused as exc:
            headers = logserve.log_headers(size)
            if exc.status == 416:
                headers["Content-Range"] = f"bytes */{size}"
            code = "RangeNotSatisfiable" if exc.status == 416 else "BadRequest"
            return error(exc.status, code, exc.detail, **headers)
        head = request.method == "HEAD"
        return logserve.log_response(self.session.log, size, status, start, end, head)

    async def get_entries(self, request: Request) -> Response:
        return answer(self.encoded.entries())

    def _entry(self, request: Request) -> str | Response:
        entry = str(request.path_params["entry"])
        if self.engine.account(entry) is None:
            return error(404, "UnknownEntry", "no such entry in this season (GET /v1/entries)")
        return entry

    async def get_entry_equity(self, request: Request) -> Response:
        entry = self._entry(request)
        if isinstance(entry, Response):
            return entry
        since = _int_param(request, "since") or 0
        return answer(self.encoded.equity(entry, since))

    async def get_entry_fills(self, request: Request) -> Response:
        entry = self._entry(request)
        if isinstance(entry, Response):
            return entry
        since = _int_param(request, "since") or 0
        return answer(self.encoded.fills(entry, since))

    async def get_openapi(self, request: Request) -> Response:
        return answer(self.openapi)

    # ---- the operator's dials (arena_tui.host.metrics) ---------------------------------

    async def get_healthz(self, request: Request) -> Response:
        ok = self.session.taking_orders
        body = {"ok": ok, "season": self.session.season.id, "over": self.engine.over}
        return answer(body, 200 if ok else 503, {"Cache-Control": "no-store"})

    async def get_metrics(self, request: Request) -> Response:
        assert self.dials is not None
        headers = {"Cache-Control": "no-store"}
        return Response(self.dials.scrape(), headers=headers, media_type=metrics.CONTENT_TYPE)

    # ---- the stream --------------------------------------------------------------------

    async def stream_over_http(self, request: Request, entry: str) -> Response:
        _market_param(request.query_params.get("market"))
        return error(426, "UpgradeRequired", "open /v1/stream as a WebSocket", Upgrade="websocket")

    async def stream(self, ws: WebSocket) -> None:
        sub = await accept_stream(ws, self._gate)
        if sub is None:
            return
        self.views.subscribe(sub)
        try:
            sender = asyncio.create_task(send_stream(ws, sub))
            receiver = asyncio.create_task(_until_closed(ws))
            await first_of(sender, receiver)
        finally:
            self.views.unsubscribe(sub)


async def first_of(*tasks: asyncio.Task[None]) -> None:
    """Until the first of a stream's ``tasks`` ends (the others are cancelled); a client
    that went away while a message was sent is how a stream ends, not an error."""
    done, pending = await asyncio.wait(set(tasks), return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in done:
        exc = task.exception()
        if exc is not None and not isinstance(exc, WebSocketDisconnect):
            raise exc


async def accept_stream(
    ws: WebSocket, gate: Callable[[str | None], str | Response]
) -> Subscriber | None:
    """Open ``/v1/stream`` for the key's entry (its subscriber), or deny it: the gate's
    401/429, or 400 for a bad ``?market=`` (the hosted and the lockstep stream alike)."""
    entry = gate(ws.headers.get("authorization"))
    if isinstance(entry, Response):
        await ws.send_denial_response(entry)
        return None
    try:
        market = _market_param(ws.query_params.get("market"))
    except s.BadBody as exc:
        await ws.send_denial_response(error(400, "BadRequest", str(exc)))
        return None
    await ws.accept()
    return Subscriber(entry, market=market)


async def send_stream(ws: WebSocket, sub: Subscriber, end: bytes | None = None) -> None:
    """Send ``sub``'s messages until it is dropped (1013) or ``end`` is offered: that
    message is not sent, the stream closes normally (1000; the lockstep run's end)."""
    while True:
        message = await sub.queue.get()
        if message is None:
            await ws.close(1013, "too slow: more than 10,000 messages behind")
            return
        if message == end:
            await ws.close(1000, "the run is over")
            return
        await ws.send_text(message.decode("utf-8"))


def _route(path: str, by_method: dict[str, Endpoint], dials: metrics.Dials | None) -> Route:
    """The one route of ``path``: each method to its endpoint (HEAD to GET's); others 405.
    Each answer's time is observed in ``dials`` (if any) by route and method."""
    if dials is None:

        async def plain(request: Request) -> Response:
            method = "GET" if request.method == "HEAD" else request.method
            return await by_method[method](request)

        return Route(path, plain, methods=list(by_method))
    observe = {m: dials.timed(path, m) for m in by_method}

    async def endpoint(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        started = metrics.now_s()
        try:
            return await by_method[method](request)
        finally:
            observe[method](metrics.now_s() - started)

    return Route(path, endpoint, methods=list(by_method))


async def _until_closed(ws: WebSocket) -> None:
    while (await ws.receive())["type"] != "websocket.disconnect":
        pass


class _TooLarge(Exception):
    pass


_CHALLENGE = {"WWW-Authenticate": "Bearer"}
# the paths behind a key (the entry's limit); every other path is public (its own limit)
AUTHED = frozenset(
    ("/v1/orders", "/v1/cancel", "/v1/fills", "/v1/account", "/v1/book/{coin}", "/v1/stream")
)


def _too_large(limit: int) -> Response:
    return error(413, "PayloadTooLarge", f"bodies are at most {limit} bytes")


def _own(events: list[ev.AnyEvent], entry: str) -> ev.AnyEvent:
    """The answer to the entry's input: its Accepted, CancelPending or Rejected (the last)."""
    for e in reversed(events):
        if isinstance(e, ev.Accepted | ev.CancelPending | ev.Rejected) and e.entry == entry:
            return e
    raise AssertionError("an input of a registered entry always gets an answer")


def _reason(e: ev.AnyEvent) -> str:
    assert isinstance(e, ev.Rejected)
    return str(e.reason)


def _rejected(e: ev.AnyEvent) -> Response:
    assert isinstance(e, ev.Rejected)
    return error(422, str(e.reason))


_NAMES = {404: "NotFound", 405: "MethodNotAllowed"}


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = _NAMES.get(exc.status_code, "HTTPError")
    headers = dict(exc.headers or {})
    if "Allow" in headers:  # (Starlette joins a set: the order would change with the hash seed)
        headers["Allow"] = ", ".join(sorted(m.strip() for m in headers["Allow"].split(",")))
    return answer(w.Error(code, str(exc.detail)), exc.status_code, headers)


async def _server_error(request: Request, exc: Exception) -> Response:
    return error(500, "InternalError", type(exc).__name__)
