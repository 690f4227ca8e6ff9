"""The OpenAPI 3.1 document of the API, generated from the msgspec types it decodes with.

Why this module exists: agent builders (and the fuzz tests) read the API from one
machine-readable document; generating its schemas from ``arena_tui.wire.api`` (the Structs
the host answers with and its readers decode with) keeps it true to what the server
actually accepts. Paths, statuses and prose are written here.
"""

from __future__ import annotations

from typing import Any

import msgspec

from arena_tui.logs.notes import MAX_NOTE_CHARS, NOTE_PATTERN
from arena_tui.wire import api as w

REF = "#/components/schemas/{name}"
SECURED: list[dict[str, list[str]]] = [{"bearer": []}]


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": REF.format(name=name)}


def _json(name: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(name)}}}


_ERRORS = {
    "400": _json("Error", "Malformed: not JSON, an unknown field, a wrong type, out of range"),
    "401": _json("Error", "No key or a wrong key (Authorization: Bearer <key>)"),
    "413": _json("Error", "Body larger than the limit (GET /v1/season: limits.body_max_bytes)"),
    "422": _json("Error", "The engine's rule failure: error is the reason, e.g. OrderTooSmall"),
    "429": {
        **_json("Error", "Over the entry's request limit in the moving window"),
        "headers": {
            "Retry-After": {
                "description": "Seconds until a request would be allowed",
                "schema": {"type": "integer", "minimum": 1},
            }
        },
    },
    "503": _json("Error", "The server is stopping; nothing was done"),
}


_PUBLIC_LIMITED = {
    **_json(
        "Error",
        "Over this endpoint's limit for one client (by address; default 20 requests in any "
        "10 s, 10 for /v1/log: the host's --public-limit), or over the public requests of "
        "all clients together (default 50 in any 1 s: --public-total): error RateLimited, "
        "nothing done",
    ),
    "headers": _ERRORS["429"]["headers"],
}


def _errors(*codes: str) -> dict[str, Any]:
    return {code: _ERRORS[code] for code in codes}


def _op(summary: str, ok: str, ok_text: str, *codes: str, **extra: Any) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {"200": _json(ok, ok_text)}}
    op["responses"].update(_errors(*codes))
    op.update(extra)
    return op


def _body(name: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(name)}}}


def _query(name: str, text: str) -> dict[str, Any]:
    schema = {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}
    return {"name": name, "in": "query", "required": False, "description": text, "schema": schema}


def components() -> dict[str, Any]:
    _, schemas = msgspec.json.schema_components(w.ANSWERS, ref_template=REF)
    for name in ("OrderRequest", "CancelRequest"):
        for field in ("limitPx", "sz", "oid"):
            prop = schemas[name]["properties"].get(field)
            if prop is None:
                continue
            options = prop.get("anyOf", [prop])
            for option in options:
                if option.get("type") == "integer":
                    option["maximum"] = w.U64_MAX
    schemas["CancelRequest"]["oneOf"] = [_named_by("oid", "integer"), _named_by("cloid", "string")]
    for option in schemas["OrderRequest"]["properties"]["note"]["anyOf"]:
        if option.get("type") == "string":
            option["maxLength"] = MAX_NOTE_CHARS
            option["pattern"] = NOTE_PATTERN
            option["description"] = (
                "your words beside the order (one line of UTF-8, at most 280 characters, no "
                "control character): logged with it, shown with its fills, never read by the "
                "engine"
            )
    return schemas


def _named_by(field: str, kind: str) -> dict[str, Any]:
    """Of a cancel: ``field`` given (not null) and the other absent or null."""
    other = "cloid" if field == "oid" else "oid"
    props = {field: {"type": kind}, other: {"type": "null"}}
    return {"required": [field], "properties": props}


def document(*, dials: bool = False, public_limits: bool = False) -> dict[str, Any]:
    """The document; ``dials``: with ``/healthz`` and ``/metrics`` (the hosted season's,
    not a lockstep run's); ``public_limits``: every public operation may answer 429."""
    authed = {"security": SECURED}
    paths: dict[str, Any] = {
        "/v1/orders": {
            "post": _op(
                "Place an order (the vault's seven fields)",
                "OrderAccepted",
                "Accepted: in the log; it activates on the first fresh book at activates_at",
                "400",
                "401",
                "413",
                "422",
                "429",
                "503",
                requestBody=_body("OrderRequest"),
                **authed,
            ),
            "get": _op("Your open orders", "Orders", "Open orders", "401", "429", **authed),
        },
        "/v1/cancel": {
            "post": _op(
                "Cancel one of your open orders (takes effect after the activation delay)",
                "CancelAccepted",
                "Cancel pending: the order can fill until effective_at",
                "400",
                "401",
                "413",
                "422",
                "429",
                "503",
                requestBody=_body("CancelRequest"),
                **authed,
            )
        },
        "/v1/fills": {
            "get": _op(
                "Your fills with t >= since, oldest first (at most 1000; more says if cut)",
                "Fills",
                "Fills",
                "400",
                "401",
                "429",
                parameters=[_query("since", "ms; default 0 (all)")],
                **authed,
            )
        },
        "/v1/account": {
            "get": _op("Your cash, equity, positions, cap", "Account", "Account", "401", "429")
            | authed
        },
        "/v1/book/{coin}": {
            "get": _op(
                "The latest book of one of the season's coins",
                "BookOut",
                "The book as received (levels verbatim), the mark at 1e8",
                "401",
                "429",
                parameters=[
                    {"name": "coin", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                **authed,
            )
            | {"responses": _book_responses()}
        },
        "/v1/season": {"get": _op("The season: window, markets, rules", "SeasonInfo", "Season")},
        "/v1/scores": {
            "get": _op(
                "Score rows, one per entry per UTC day, as the engine emits them (public)",
                "Scores",
                "Rows in (day, rank) order",
                "400",
                parameters=[_query("day", "only this UTC day (days since the epoch)")],
            )
        },
        "/v1/stream": {"get": _stream()},
        "/v1/season/file": {
            "get": {
                "summary": "The season file beside the log, byte for byte (public)",
                "description": "Its rules hash is GET /v1/season's rules_sha256.",
                "responses": {
                    "200": {
                        "description": "The season file (JSON)",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        },
        "/v1/log": {"get": _log()},
        "/v1/entries": {
            "get": _op(
                "Every entry with its latest minute mark and score row (public)",
                "Entries",
                "Entries by name",
            )
        },
        "/v1/entries/{entry}/equity": {
            "get": _entry_op(
                "An entry's minute marks with t >= since, oldest first (at most 5000; more "
                "says if cut) (public)",
                "Equity",
            )
        },
        "/v1/entries/{entry}/fills": {
            "get": _entry_op(
                "An entry's fills with t >= since, with quotes and notes (at most 1000) (public)",
                "Fills",
            )
        },
        "/": {"get": _page()},
    }
    if dials:
        paths |= {"/healthz": {"get": _healthz()}, "/metrics": {"get": _metrics()}}
    if public_limits:
        for item in paths.values():
            for op in item.values():
                if "security" not in op:
                    op["responses"]["429"] = _PUBLIC_LIMITED
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "arena host",
            "version": "1",
            "description": "A hosted Circle Arena season: docs/api.md.",
        },
        "paths": paths,
        "components": {
            "schemas": components(),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


def _page() -> dict[str, Any]:
    text = (
        "A self-contained HTML page (no external assets) showing what the public endpoints "
        "serve, updated by reading them every 2 s: docs/api.md, The season page."
    )
    html = {"text/html": {"schema": {"type": "string"}}}
    return {
        "summary": "The season page (public)",
        "description": text,
        "responses": {"200": {"description": "The page", "content": html}},
    }


def _entry_op(summary: str, ok: str) -> dict[str, Any]:
    entry = {"name": "entry", "in": "path", "required": True, "schema": {"type": "string"}}
    return _op(
        summary,
        ok,
        ok,
        "400",
        parameters=[entry, _query("since", "ms; default 0 (all)")],
    ) | {"responses": _entry_responses(ok)}


def _entry_responses(ok: str) -> dict[str, Any]:
    out = {"200": _json(ok, ok)}
    out.update(_errors("400"))
    out["404"] = _json("Error", "No such entry in this season (error: UnknownEntry)")
    return out


def _log_headers(*, ranged: bool = False, unsatisfied: bool = False) -> dict[str, Any]:
    digits = {"type": "string", "pattern": "^[0-9]+$"}
    out: dict[str, Any] = {
        "Accept-Ranges": {
            "description": "Range requests are served (bytes)",
            "required": True,
            "schema": {"type": "string", "enum": ["bytes"]},
        },
        "Arena-Log-Size": {
            "description": "The log's durable size in bytes (whole lines, fsynced)",
            "required": True,
            "schema": digits,
        },
    }
    if ranged or unsatisfied:
        pattern = r"^bytes \*/[0-9]+$" if unsatisfied else r"^bytes [0-9]+-[0-9]+/[0-9]+$"
        out["Content-Range"] = {
            "description": "The bytes sent, of the durable size",
            "required": True,
            "schema": {"type": "string", "pattern": pattern},
        }
    return out


def _log() -> dict[str, Any]:
    text = (
        "The season's input log as it stands: whole lines that are written and fsynced, up "
        "to Arena-Log-Size (captured when the request arrives). Follow it by reading on from "
        "the size you have: Range: bytes=N- (206 with Content-Range; also bytes=N-M, M "
        "inclusive, and bytes=-K, the last K bytes) or ?offset=N (200). N at the size: 416 "
        "for a Range, an empty 200 for an offset; past it: 416. Several ranges, or a Range "
        "with an offset: 400. Public: only key hashes are in the log."
    )
    ndjson = {"application/x-ndjson": {"schema": {"type": "string"}}}
    return {
        "summary": "The season's input log, whole durable lines (public)",
        "description": text,
        "parameters": [_query("offset", "bytes to skip; default 0 (the whole log)")],
        "responses": {
            "200": {"description": "The log", "content": ndjson, "headers": _log_headers()},
            "206": {
                "description": "The range asked for",
                "content": ndjson,
                "headers": _log_headers(ranged=True),
            },
            "400": {
                **_json("Error", "A malformed Range or offset, or both given"),
                "headers": _log_headers(),
            },
            "416": {
                **_json("Error", "Nothing to send: the range starts at or past the end"),
                "headers": _log_headers(unsatisfied=True),
            },
        },
    }


def _book_responses() -> dict[str, Any]:
    out = {"200": _json("BookOut", "The latest book; t is null before the first")}
    out.update(_errors("401", "429"))
    out["404"] = _json("Error", "Not a coin of this season (error: UnknownCoin)")
    return out


def _stream() -> dict[str, Any]:
    text = (
        "A WebSocket (send the same Authorization header with the upgrade). Each text "
        'message is JSON: {"event": {...}} for one of your own engine events (kind: '
        "accepted, rejected, activated, cancel_pending, fill, closed, funding, "
        "performance_fee, paused, mark, score), or a log line as written "
        '({"t":..,"hl":{..}} market data, {"t":..,"arena":{"type":"tick"}}). '
        "?market=0: your events only. A client 10,000 messages behind is closed (1013). "
        "A plain HTTP request (no upgrade) passes the key and the limit, then gets 426."
    )
    return {
        "summary": "Your events and the market, live (WebSocket)",
        "description": text,
        "security": SECURED,
        "parameters": [
            {
                "name": "market",
                "in": "query",
                "required": False,
                "schema": {"type": "string", "enum": ["0", "1"]},
            }
        ],
        "responses": {
            "101": {"description": "Switching to the WebSocket protocol"},
            **_errors("400", "401", "429"),
            "426": _json("Error", "A plain HTTP request: open it as a WebSocket"),
        },
    }


def _healthz() -> dict[str, Any]:
    body = {
        "type": "object",
        "required": ["ok", "season", "over"],
        "properties": {
            "ok": {"type": "boolean"},
            "season": {"type": "string"},
            "over": {"type": "boolean"},
        },
    }
    content = {"application/json": {"schema": body}}
    return {
        "summary": "Can the host take orders? For a load balancer (public)",
        "description": "200 while the log is open and no write of it has failed; 503 once "
        "one has (the host is stopping). over: the season's window has ended.",
        "responses": {
            "200": {"description": "Taking orders", "content": content},
            "503": {"description": "Not taking orders", "content": content},
        },
    }


def _metrics() -> dict[str, Any]:
    text = "text/plain; version=0.0.4; charset=utf-8"
    return {
        "summary": "The operator's dials, in Prometheus' text format (public)",
        "description": "docs/operating.md#metrics lists the series.",
        "responses": {
            "200": {"description": "The metrics", "content": {text: {"schema": {"type": "string"}}}}
        },
    }
