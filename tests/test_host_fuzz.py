"""The API against its own OpenAPI document (schemathesis), over real HTTP.

Schemathesis reads ``/openapi.json`` from the running server and runs every phase it has
on every operation: requests built from the document's examples and boundaries (coverage),
then generated ones, valid and invalid (wrong types, integers written ``111.0``, out of
range, unknown fields, missing fields, other methods, no key), and every check it has
(no 5xx; the status, the content type, the headers and the body as documented; a valid
request accepted, an invalid one refused; a 405 naming the path's methods; the key
enforced). None may fail. Whatever it sends, nothing malformed reaches the log: the log
gains exactly one order or cancel line per 200 or 422 answered to an order or a cancel,
every line of it reads back, and it replays. A second test draws request bodies by hand
and asks the document's schema and the server the same question: is this body well
formed?
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema_rs
import schemathesis
from hypothesis import given, settings
from hypothesis import strategies as st
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status, events, from_schema
from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

from arena_tui.host.schemas import U64_MAX
from arena_tui.logs.logfile import LogReader
from arena_tui.run.replay import replay
from arena_tui.season.file import load_season
from tests.hostkit import Hosted, arena_rows, hosted

LOGGED = {200, 422}
ORDER_FIELDS = ("asset", "isBuy", "limitPx", "sz", "reduceOnly", "encodedTif", "cloid")
INPUTS = ("POST /v1/orders", "POST /v1/cancel")
# What counts as accepting a valid request, where it is not schemathesis's default (2xx,
# and 401/403/404/409/429 it takes as out of the request's hands): an order or a cancel
# that is well formed reaches the engine, and a rule may refuse it (422, logged, as the
# document says); the stream is a WebSocket, and a plain HTTP request, however valid, gets
# the documented 426. Nothing else passes, not even 401 or 429 (the key is good and the
# limit out of reach here).
ACCEPTED = {"POST /v1/orders": ["200", "422"], "POST /v1/cancel": ["200", "422"]}
ACCEPTED["GET /v1/stream"] = ["426"]
ACCEPTED["GET /v1/log"] = ["200", "416"]  # (an offset past the log's end: nothing to send)
EXAMPLES = 50  # per operation and phase: some 500 requests, about 10 s of CPU


def test_the_openapi_document_is_valid_and_covers_every_route(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False) as h, h.client() as anon:
        doc = anon.get("/openapi.json").json()
        OPENAPI_31_VALIDATOR.validate(doc)
        app_paths = {getattr(r, "path", "") for r in h.host.server.config.app.routes}  # type: ignore[union-attr]
        assert set(doc["paths"]) == app_paths - {"/openapi.json"}
        order = doc["components"]["schemas"]["OrderRequest"]
        assert order["required"] == list(ORDER_FIELDS[:-1])
        assert order["additionalProperties"] is False


def _schemathesis(h: Hosted) -> tuple[list[str], Counter[tuple[str, int]], set[str]]:
    """Every phase and every check on every operation: the failures (each with a curl line),
    the answers by operation and status, the operations tested."""
    operations: list[dict[str, Any]] = [
        {
            "include-name": label,
            "checks": {"positive_data_acceptance": {"expected-statuses": statuses}},
        }
        for label, statuses in ACCEPTED.items()
    ]
    config = SchemathesisConfig.from_dict(
        {
            "seed": 20261203,  # the same run every time (a failure reproduces)
            "headers": {"Authorization": f"Bearer {h.keys['alice']}"},
            "workers": 1,
            "phases": {"enabled": True},
            "checks": {"enabled": True},
            "generation": {"mode": "all", "max-examples": EXAMPLES, "database": "none"},
            "operations": operations,
        }
    )
    schema = schemathesis.openapi.from_url(f"{h.url}/openapi.json", config=config)
    failures: list[str] = []
    answers: Counter[tuple[str, int]] = Counter()
    tested: set[str] = set()
    for event in from_schema(schema).execute():
        if isinstance(event, events.NonFatalError | events.FatalError):
            failures.append(f"schemathesis could not run: {event}")
        if isinstance(event, events.EngineFinished) and event.stop_reason != "completed":
            failures.append(f"schemathesis stopped: {event.stop_reason}")
        if not isinstance(event, events.ScenarioFinished):
            continue
        label = str(event.label)
        tested.add(label)
        if event.status in (Status.ERROR, Status.INTERRUPTED):
            failures.append(f"{label}: {event.status} (a request could not be made)")
        for nodes in event.recorder.checks.values():
            for check in nodes:
                info = check.failure_info
                if info is not None:
                    what = f"{info.failure.title}: {info.failure.message}"
                    failures.append(f"{label}: {check.name}: {what}\n  {info.code_sample}")
                elif check.status not in (Status.SUCCESS, Status.SKIP):
                    failures.append(f"{label}: {check.name}: {check.status}")
        for interaction in event.recorder.interactions.values():
            if interaction.response is not None:
                answers[label, interaction.response.status_code] += 1
    return failures, answers, tested


def test_schemathesis_finds_no_failure_and_nothing_malformed_is_logged(tmp_path: Path) -> None:
    with hosted(tmp_path, rate_limit_requests=1_000_000) as h, h.client() as anon:
        failures, answers, tested = _schemathesis(h)
        documented = anon.get("/openapi.json").json()["paths"]
    assert not failures, "\n".join(sorted(set(failures)))
    # (the stateful phase's scenarios, chains of calls such as GET /v1/entries then an
    # entry's views, have no one operation's label)
    assert tested - {"None"} == {f"{m.upper()} {p}" for p, ops in documented.items() for m in ops}
    answered = sum(
        n for (label, status), n in answers.items() if label in INPUTS and status in LOGGED
    )
    logged = len(arena_rows(h.log, "order")) + len(arena_rows(h.log, "cancel"))
    assert logged == answered
    assert answers["POST /v1/orders", 400] > 20  # the invalid ones were refused, unlogged
    assert answers["POST /v1/orders", 422] + answers["POST /v1/orders", 200] > 0
    season = load_season(tmp_path / "season.json")
    lines = sum(1 for _ in LogReader([str(h.log)]))
    result = replay([str(h.log)], season)
    assert result.inputs == lines  # every line reads back and replays
    for row in arena_rows(h.log, "order"):
        assert set(row) <= {"type", "entry", *ORDER_FIELDS, "note"}
        assert json.dumps(row).isascii()


# ---- the document and the server: the same answer to "is this body well formed?" --------


def _integer(top: int) -> st.SearchStrategy[Any]:
    """A valid value of an integer field: in range, written 111 or 111.0 (an integer to
    JSON Schema too)."""
    whole = st.integers(0, top)
    return st.one_of(whole, whole.filter(lambda n: n <= 2**53).map(float))


# Anything at all for a field: integers in and out of range, fractions, and what is no
# number (the values a valid body is broken with).
ANYTHING: st.SearchStrategy[Any] = st.one_of(
    st.integers(-(2**65), 2**66),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([U64_MAX + 1, 2**32, 256, -1, 0.5, 1e-7, 1e300]),
    st.sampled_from([True, False, None, "1", "0x2a", [1], {}]),
)
CLOID = st.from_regex(r"0x[0-9a-fA-F]{1,32}", fullmatch=True)
VALID: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "OrderRequest": {
        "asset": _integer(2**32 - 1),
        "isBuy": st.booleans(),
        "limitPx": _integer(U64_MAX),
        "sz": _integer(U64_MAX),
        "reduceOnly": st.booleans(),
        "encodedTif": _integer(255),
    },
    "CancelRequest": {},
}
PATHS = {"OrderRequest": "/v1/orders", "CancelRequest": "/v1/cancel"}


@st.composite
def bodies(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    """A valid body of ``kind``, then none to three of its fields (or one no request has)
    removed or given any value at all."""
    body = {name: draw(values) for name, values in VALID[kind].items()}
    oid, cloid, null = _integer(U64_MAX), CLOID, st.none()
    named: dict[str, st.SearchStrategy[Any]]
    if kind == "OrderRequest":  # an optional cloid (null: none)
        named = draw(st.sampled_from([{}, {"cloid": cloid}, {"cloid": null}]))
    else:  # exactly one of oid and cloid (null: absent)
        named = draw(
            st.sampled_from(
                [
                    {"oid": oid},
                    {"cloid": cloid},
                    {"oid": oid, "cloid": null},
                    {"oid": null, "cloid": cloid},
                ]
            )
        )
    body |= {name: draw(values) for name, values in named.items()}
    names = [*VALID[kind], "oid", "cloid", "leverage"]
    for name in draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        if draw(st.booleans()):
            body.pop(name, None)
        else:
            body[name] = draw(ANYTHING)
    return body


def test_the_document_and_the_server_agree_on_every_request_body(tmp_path: Path) -> None:
    with hosted(tmp_path, rate_limit_requests=1_000_000) as h, h.client("alice") as alice:
        schemas = alice.get("/openapi.json").json()["components"]["schemas"]
        valid = {kind: jsonschema_rs.validator_for(schemas[kind]).is_valid for kind in PATHS}
        seen: Counter[tuple[str, bool]] = Counter()

        for name in PATHS:  # each its own examples: a shared draw can starve one of them

            @settings(max_examples=120, deadline=None, database=None)
            @given(st.tuples(st.just(name), bodies(name)))
            def agree(drawn: tuple[str, dict[str, Any]]) -> None:
                kind, body = drawn
                r = alice.post(PATHS[kind], content=json.dumps(body))
                assert r.status_code in (200, 400, 422), r.text
                assert valid[kind](body) == (r.status_code != 400), (body, r.text)
                seen[kind, r.status_code != 400] += 1

            agree()
    assert all(seen[kind, ok] > 10 for kind in PATHS for ok in (True, False)), seen
