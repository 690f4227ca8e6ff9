"""The API fuzzed from its own OpenAPI document (schemathesis), over real HTTP.

Schemathesis reads ``/openapi.json`` from the running server and generates requests for
every operation: valid ones (the answers must match the documented schemas and statuses)
and invalid ones (wrong types, floats, out-of-range integers, unknown fields, missing
fields). Whatever it sends: no 5xx, and nothing malformed reaches the log: the log gains
exactly one order or cancel line per 200 or 422 answered to an order or a cancel, every
line of it reads back, and it replays.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

from arena_tui.logs.logfile import LogReader
from arena_tui.run.replay import replay
from arena_tui.season.file import load_season
from tests.hostkit import Hosted, arena_rows, hosted

LOGGED = {"200", "422"}
ORDER_FIELDS = ("asset", "isBuy", "limitPx", "sz", "reduceOnly", "encodedTif", "cloid")


def test_the_openapi_document_is_valid_and_covers_every_route(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False) as h, h.client() as anon:
        doc = anon.get("/openapi.json").json()
        OPENAPI_31_VALIDATOR.validate(doc)
        app_paths = {getattr(r, "path", "") for r in h.host.server.config.app.routes}  # type: ignore[union-attr]
        assert set(doc["paths"]) == app_paths - {"/openapi.json"}
        order = doc["components"]["schemas"]["OrderRequest"]
        assert order["required"] == list(ORDER_FIELDS[:-1])
        assert order["additionalProperties"] is False


def _fuzz(h: Hosted, mode: GenerationMode, examples: int) -> dict[str, int]:
    schema = schemathesis.openapi.from_url(f"{h.url}/openapi.json")
    auth = {"Authorization": f"Bearer {h.keys['alice']}"}
    counts: dict[str, int] = {}
    skip = {"/v1/stream"}  # a WebSocket; its plain-HTTP answer is checked elsewhere

    strategy = schema.include(path_regex="^/v1/(?!stream)").as_strategy(mode, headers=auth)

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(case=strategy, anonymous=st.booleans())
    def run(case: Any, anonymous: bool) -> None:
        assert case.path not in skip
        headers = {"Authorization": "Bearer wrong.key"} if anonymous and mode.is_negative else None
        response = case.call(base_url=h.url, headers=headers)
        assert response.status_code < 500, (case.method, case.path, response.text)
        if mode.is_positive:  # the answer is documented, and matches its schema
            checks = [not_a_server_error, status_code_conformance, response_schema_conformance]
            case.validate_response(response, checks=checks)
        elif not anonymous:
            case.validate_response(response, checks=[negative_data_rejection])
        if case.method == "POST" and case.path in ("/v1/orders", "/v1/cancel"):
            key = str(response.status_code)
            counts[key] = counts.get(key, 0) + 1

    run()
    return counts


def test_fuzzing_from_the_openapi_document_never_breaks_the_server_or_the_log(
    tmp_path: Path,
) -> None:
    with hosted(tmp_path, rate_limit_requests=1_000_000) as h:
        counts = _fuzz(h, GenerationMode.POSITIVE, 150)
        counts_bad = _fuzz(h, GenerationMode.NEGATIVE, 250)
    answered = sum(n for c, n in [*counts.items(), *counts_bad.items()] if c in LOGGED)
    logged = len(arena_rows(h.log, "order")) + len(arena_rows(h.log, "cancel"))
    assert logged == answered
    assert counts_bad.get("400", 0) > 20  # the negative cases were mostly refused, unlogged
    assert counts.get("422", 0) + counts.get("200", 0) > 0
    season = load_season(tmp_path / "season.json")
    lines = sum(1 for _ in LogReader([str(h.log)]))
    result = replay([str(h.log)], season)
    assert result.inputs == lines  # every line reads back and replays
    for row in arena_rows(h.log, "order"):
        assert set(row) <= {"type", "entry", *ORDER_FIELDS}
        assert json.dumps(row).isascii()
