"""The hosted API's routes over a lockstep run, plus the step: ``POST /v1/step`` and the
stream's step messages.

Why this module exists: an agent rehearses against exactly the season's API (the same
gates in the same order, the same bodies, the same answers: ``app.Api``), and only the
clock differs. So :class:`LockstepApi` is the hosted ``Api`` with three changes. Reads run
on the runner's thread, between two inputs (``StepGate.ask``: the hosted read handlers never
await, so one runs there as a plain call). Orders and cancels go to the gate instead of a
session: stamped in simulated time, answered when the runner applies them. The rate limit
counts each agent's requests at its simulated time. And ``POST /v1/step`` (long-polling for
the agent's next step) and the stream's ``step`` messages, ``done`` and ``wake``, which
count toward no limit: they are the clock, not requests to the season. A long poll whose
client hangs up before its step comes is counted (``dropped_polls``) and forgotten. A body
or message that does not decode, however (nested too deep, not UTF-8, anything the
decoder raises), is a one-line 400 or stream error, never a 5xx. docs/api.md.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket

from arena_tui.host import schemas as s
from arena_tui.host.app import (
    Api,
    Endpoint,
    Handler,
    PublicHandler,
    accept_stream,
    answer,
    error,
    first_of,
    send_stream,
)
from arena_tui.host.lockstep import (
    CHANNELS,
    CLOSE,
    MIN_EVERY_MS,
    BadWake,
    StepGate,
    Wake,
    parse_wake,
)
from arena_tui.host.openapi import SECURED, document
from arena_tui.host.ratelimit import MovingWindow
from arena_tui.host.store import COLUMNS, row_values
from arena_tui.host.views import Subscriber, Views
from arena_tui.season.file import PAPER
from engine import Engine, Season
from engine import events as ev
from engine.events import Reason

_JSON = msgspec.json.Decoder()


class StepBody(msgspec.Struct, forbid_unknown_fields=True):
    done: int | None = None
    wake: dict[str, Any] | None = None


_WAKE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "coins": {"type": ["array", "null"], "items": {"type": "string"}},
        "channels": {"type": "array", "items": {"enum": list(CHANNELS)}},
        "events": {"type": "boolean"},
        "marks": {"type": "boolean"},
        "every_ms": {"type": ["integer", "null"], "minimum": MIN_EVERY_MS},
    },
}
STEP_OP: dict[str, Any] = {  # /openapi.json's entry for the step (lockstep runs only)
    "summary": "Lockstep: done with step N (null on the first call), maybe a new wake-up "
    "set; long-polls for the next step, or {over: true} when the run has ended",
    "security": SECURED,
    "requestBody": {
        "required": False,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "done": {"type": ["integer", "null"], "minimum": 0},
                        "wake": {"anyOf": [_WAKE_SCHEMA, {"type": "null"}]},
                    },
                }
            }
        },
    },
    "responses": {
        "200": {"description": "{step, t, why, events}, or {over, season, end, final, ranking}"},
        "400": {"description": "A bad body or wake-up set"},
        "401": {"description": "No or a wrong key"},
        "413": {"description": "The body is too large"},
    },
}


def replier(post: Callable[[Callable[[], None]], None], fut: asyncio.Future[Any]) -> Any:
    """A function the runner calls with a value (or an exception) to resolve ``fut``."""

    def resolve(value: Any) -> None:
        if fut.done():
            return
        if isinstance(value, BaseException):
            fut.set_exception(value)
        else:
            fut.set_result(value)

    return lambda value: post(lambda: resolve(value))


def _run_sync(awaitable: Awaitable[Response]) -> Response:
    """A handler that never awaits, run to its end as a plain call."""
    assert isinstance(awaitable, Coroutine)
    coro: Coroutine[Any, Any, Response] = awaitable
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    coro.close()
    raise AssertionError("a lockstep read handler awaited")


class _Run:
    """What ``Api`` reads of a hosted session, for a lockstep run."""

    def __init__(self, api: LockstepApi, engine: Engine, views: Views, season: Season) -> None:
        self.api = api
        self.engine = engine
        self.views = views
        self.season = season

    async def submit(self, doc: dict[str, Any]) -> list[ev.AnyEvent]:
        gate = self.api.gate
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        arrived = time.monotonic()
        entry = doc["entry"]
        reply = replier(gate.post, fut)
        gate.ask(lambda: gate.submit(entry, doc, arrived, reply))
        events: list[ev.AnyEvent] | None = await fut
        if events is None:  # stamped after the run's last input, or sent after the end
            return [ev.Rejected(0, entry, Reason.SeasonNotActive, doc["type"])]
        return events


class LockstepApi(Api):
    """The hosted API over a lockstep run (module docstring)."""

    def __init__(
        self,
        gate: StepGate,
        engine: Engine,
        views: Views,
        season: Season,
        *,
        body_max: int,
        season_file: bytes = b"",
    ) -> None:
        self.gate = gate
        self._gating = ""  # the entry whose request the limiter is counting
        rules = season.rules
        limiter = MovingWindow(
            rules.rate_limit_requests, rules.rate_limit_window_ms, self._limit_clock
        )
        run = _Run(self, engine, views, season)
        super().__init__(
            run,  # type: ignore[arg-type]
            limiter,
            body_max=body_max,
            clock=gate.runner_now,
            season_file=season_file,
        )
        self.subs: dict[str, list[Subscriber]] = {}
        self.market_subs: list[Subscriber] = []
        doc = document()
        doc["paths"]["/v1/step"] = {"post": STEP_OP}
        self.openapi = s.ENCODE(doc)

    def _limit_clock(self) -> int:
        return self.gate.clock_of(self._gating)

    # ---- the gates, the runner's thread for reads ------------------------------------

    def _gate(self, authorization: str | None) -> str | Response:
        self._gating = self.views.keys.entry_for(authorization) or ""
        return super()._gate(authorization)

    async def _on_runner(self, make: Callable[[], Awaitable[Response]]) -> Response:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        reply = replier(self.gate.post, fut)

        def job() -> None:
            try:
                reply(_run_sync(make()))
            except Exception as exc:
                reply(exc)

        self.gate.ask(job)
        result: Response = await fut
        return result

    def _authed(self, handler: Handler) -> Endpoint:
        inline = handler in (self.post_order, self.post_cancel)

        async def endpoint(request: Request) -> Response:
            entry = self._gate(request.headers.get("authorization"))
            if isinstance(entry, Response):
                return entry
            try:
                if inline:
                    return await handler(request, entry)
                return await self._on_runner(lambda: handler(request, entry))
            except s.BadBody as exc:
                return error(400, "BadRequest", str(exc))

        return endpoint

    def _public(self, handler: PublicHandler) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            try:
                return await self._on_runner(lambda: handler(request))
            except s.BadBody as exc:
                return error(400, "BadRequest", str(exc))

        return endpoint

    def paths(self) -> dict[str, dict[str, Endpoint]]:
        out = super().paths()
        public = self._public
        out["/v1/season"] = {"GET": public(self.get_season)}
        out["/v1/scores"] = {"GET": public(self.get_scores)}
        out["/v1/step"] = {"POST": self.post_step}
        return out

    async def get_scores(self, request: Request) -> Response:
        text = request.query_params.get("day")
        day: int | None = None
        if text is not None:
            if not text.isascii() or not text.isdigit() or len(text) > 18:
                return error(400, "BadRequest", "query parameter day: want a non-negative integer")
            day = int(text)
        rows = sorted(self.views.rows.values(), key=lambda r: (r.day, r.rank))
        docs = []
        for r in rows:
            if day is None or r.day == day:
                row: dict[str, Any] = dict(zip(COLUMNS, row_values(r), strict=True))
                row["eligible"] = bool(row["eligible"])
                docs.append(row)
        season = self.session.season
        doc: dict[str, Any] = {
            "season": season.id,
            "paper": PAPER,
            "final": self.engine.over,
            "rows": docs,
        }
        return answer(doc)

    async def get_log(self, request: Request) -> Response:
        detail = "a lockstep run serves no log: it is run.jsonl in the run's directory"
        return error(404, "NotFound", detail)

    # ---- the step --------------------------------------------------------------------

    async def post_step(self, request: Request) -> Response:
        """``{"done": N | null, "wake": {...}}``: long-polls for the agent's next step."""
        entry = self.views.keys.entry_for(request.headers.get("authorization"))
        if entry is None:
            return error(401, "Unauthorized", "send Authorization: Bearer <key>")
        try:
            body = await self._body(request)
        except Exception:  # (_TooLarge)
            return error(413, "PayloadTooLarge", f"bodies are at most {self.body_max} bytes")
        try:
            step = _step_body(body)
            if step.done is not None and step.done < 0:
                raise BadWake("done: a step number (1, 2, ...) or null")
            wake = None if step.wake is None else parse_wake(step.wake, self.gate.coins)
        except (s.BadBody, BadWake) as exc:
            return error(400, "BadRequest", str(exc))
        gate = self.gate
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        reply = replier(gate.post, fut)
        done = step.done
        gate.ask(lambda: gate.step_call(entry, done, wake, reply))
        hangup = asyncio.ensure_future(_hung_up(request))
        try:
            await asyncio.wait({fut, hangup}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            hangup.cancel()
        if not fut.done():  # the client hung up first: nobody to answer
            gate.ask(lambda: gate.poll_dropped(entry, reply))
            fut.cancel()
            return Response(status_code=499)
        try:
            doc = fut.result()
        except BadWake as exc:
            return error(400, "BadRequest", str(exc))
        return answer(doc)

    # ---- the stream ------------------------------------------------------------------

    def offer(self, batch: list[tuple[str | None, bytes]]) -> None:
        """Stream messages from the runner (on the loop's thread), in order."""
        for entry, message in batch:
            if entry is None:
                for sub in self.market_subs:
                    sub.offer(message)
                continue
            for sub in self.subs.get(entry, ()):
                sub.offer(message)

    async def stream(self, ws: WebSocket) -> None:
        sub = await accept_stream(ws, self._gate)
        if sub is None:
            return
        entry, market = sub.entry, sub.market
        self.subs.setdefault(entry, []).append(sub)
        if market:
            self.market_subs.append(sub)
        gate = self.gate
        gate.streams += 1
        name = entry
        gate.ask(lambda: gate.stream_opened(name))
        try:
            sender = asyncio.create_task(send_stream(ws, sub, CLOSE))
            receiver = asyncio.create_task(self._receive(ws, entry, sub))
            await first_of(sender, receiver)
        finally:
            gate.streams -= 1
            self.subs[entry].remove(sub)
            if sub in self.market_subs:
                self.market_subs.remove(sub)

    async def _receive(self, ws: WebSocket, entry: str, sub: Subscriber) -> None:
        gate = self.gate
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text") or message.get("bytes") or b""
            try:
                doc = _stream_message(text)
                if not isinstance(doc, dict):
                    raise BadWake('want an object: {"method": "done", "step": N}')
                method = doc.pop("method", None)
                if method == "done":
                    done = doc.get("step")
                    if type(done) is not int or done < 1 or set(doc) != {"step"}:
                        raise BadWake('done: {"method": "done", "step": N} (N: the step number)')
                    gate.ask(partial(gate.stream_done, entry, done))
                elif method == "wake":
                    wake: Wake = parse_wake(doc, gate.coins)
                    gate.ask(partial(gate.set_wake, gate.by_name[entry], wake))
                else:
                    raise BadWake('method: "done" or "wake"')
            except (s.BadBody, BadWake) as exc:
                detail = {"error": "BadRequest", "detail": str(exc)}
                sub.offer(s.ENCODE({"channel": "error", "data": detail}))


def _step_body(body: bytes) -> StepBody:
    """``POST /v1/step``'s body; s.BadBody (one line) whatever is wrong with it."""
    try:
        return msgspec.json.decode(body or b"{}", type=StepBody, strict=True)
    except Exception as exc:
        raise s.BadBody(s.decode_failure(exc)) from None


def _stream_message(text: str | bytes) -> Any:
    """A stream message as JSON; s.BadBody (one line) whatever is wrong with it."""
    try:
        return _JSON.decode(text)
    except Exception as exc:
        raise s.BadBody(s.decode_failure(exc)) from None


async def _hung_up(request: Request) -> None:
    """Return once the client has closed the connection (its body already read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
