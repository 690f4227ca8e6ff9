"""No body is ever a 5xx: JSON nested at any depth on every POST endpoint is a one-line 400.

The decoder follows nesting by recursion: a body of 1,000 nested arrays or objects raised
``RecursionError`` in ``schemas.decode`` (HTTP 500) where 900 was a plain 400. Every
POST endpoint is sent the same shapes at depths on both sides of that line (and far past
it), over real HTTP: the hosted API (``/v1/orders``, ``/v1/cancel``) and a lockstep run's
(those two, ``/v1/step``, and the stream's messages). Each answer is a 400 with one line
of detail; nothing reaches the log; the server goes on answering.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from arena_tui.host.lockstep_run import LockstepRun
from arena_tui.run.config import LockstepConfig, RunConfig
from tests.clirun import SYNTH, sample_season
from tests.hostkit import hosted, order

DEPTHS = (2, 100, 900, 1_000, 2_000, 10_000, 100_000)
BODY_MAX = 1 << 20  # (the deepest body is 200 kB: the size limit is not what refuses it)


def shapes(depth: int, field: str) -> dict[str, bytes]:
    """Bodies nested ``depth`` deep: arrays, objects, and arrays in a known field."""
    return {
        "arrays": b"[" * depth + b"]" * depth,
        "objects": b'{"a":' * depth + b"1" + b"}" * depth,
        f"arrays in {field}": b'{"%s":' % field.encode() + b"[" * depth + b"]" * depth + b"}",
    }


def refused(r: httpx.Response, what: str) -> None:
    """A 400 BadRequest with one line of detail."""
    assert r.status_code == 400, f"{what}: HTTP {r.status_code} {r.text[:200]}"
    doc = r.json()
    assert doc["error"] == "BadRequest", what
    assert doc["detail"] and "\n" not in doc["detail"], what


def test_nested_bodies_on_the_hosted_endpoints_are_400_at_every_depth(tmp_path: Path) -> None:
    with (
        hosted(tmp_path, body_max=BODY_MAX, rate_limit_requests=1_000) as h,
        h.client("alice") as alice,
    ):
        before = h.inputs()
        for path, field in (("/v1/orders", "asset"), ("/v1/cancel", "oid")):
            for depth in DEPTHS:
                for shape, body in shapes(depth, field).items():
                    r = alice.post(path, content=body)
                    refused(r, f"{path} {shape} {depth} deep")
        assert h.inputs() == before  # nothing refused was logged
        assert alice.post("/v1/orders", json=order()).status_code == 200  # still serving


def lockstep_season(tmp: Path) -> Path:
    """The sample's first 10 minutes, with room in the rate limit for every body here."""
    path = sample_season(tmp / "season.json", 10, name="bodies")
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["rules"]["rate_limit_requests"] = 1_000
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def reply(ws: ClientConnection) -> dict[str, Any]:
    """The next message that is not the run's own news (step 1 as the run begins on the
    stream's opening, the entry's events): the answer to what was sent."""
    while True:
        message: dict[str, Any] = json.loads(ws.recv(timeout=10))
        if message.get("channel") != "step" and "event" not in message:
            return message


def test_nested_bodies_and_messages_in_a_lockstep_run_are_400_at_every_depth(
    tmp_path: Path,
) -> None:
    seen: dict[str, Any] = {"codes": [], "stream": [], "over": None, "error": None}

    def agent(url: str, key: str) -> None:
        auth = {"Authorization": f"Bearer {key}"}
        try:
            with httpx.Client(base_url=url, headers=auth, timeout=30) as c:
                for path, field in (("/v1/step", "wake"), ("/v1/orders", "asset"),
                                    ("/v1/cancel", "oid")):  # fmt: skip
                    for depth in DEPTHS:
                        for shape, body in shapes(depth, field).items():
                            r = c.post(path, content=body)
                            seen["codes"].append((f"{path} {shape} {depth} deep", r))
                ws_url = url.replace("http://", "ws://") + "/v1/stream?market=0"
                with connect(ws_url, additional_headers=auth, max_size=None) as ws:
                    for depth in DEPTHS:
                        ws.send(b'{"method":"wake","coins":' + b"[" * depth + b"]" * depth + b"}")
                        seen["stream"].append(reply(ws))
                call: dict[str, Any] = {"done": None, "wake": {"coins": [], "every_ms": 300_000}}
                while True:
                    step = c.post("/v1/step", json=call, timeout=None).json()
                    if step.get("over"):
                        seen["over"] = step
                        return
                    call = {"done": step["step"]}
        except Exception as exc:  # (seen by the test, not lost in the thread)
            seen["error"] = exc

    def ready(info: dict[str, Any]) -> None:
        threading.Thread(target=agent, args=(info["url"], info["keys"]["agent"])).start()

    opts = RunConfig(
        kind="lockstep",
        logs=(str(SYNTH),),
        season=str(lockstep_season(tmp_path)),
        out=str(tmp_path / "run"),
        lockstep=LockstepConfig(
            names=("agent",), body_max=BODY_MAX, step_timeout_s=10, connect_timeout_s=30
        ),
    )
    run = LockstepRun(opts, on_ready=ready)
    run.prepare()
    result = run.run()
    assert seen["error"] is None, seen["error"]
    assert len(seen["codes"]) == 3 * 3 * len(DEPTHS)
    for what, r in seen["codes"]:
        refused(r, what)
    assert len(seen["stream"]) == len(DEPTHS)
    for message in seen["stream"]:
        assert message["channel"] == "error" and message["data"]["error"] == "BadRequest"
        assert "\n" not in message["data"]["detail"]
    assert seen["over"] is not None and result.replay.final  # the run went on to its end
    assert result.own_inputs == 1  # the register: nothing refused was logged


@pytest.mark.parametrize("depth", [10, 1_000, 100_000])
def test_a_body_decode_failure_is_one_line_whatever_the_decoder_raises(depth: int) -> None:
    from arena_tui.host import schemas as s

    for body in shapes(depth, "asset").values():
        with pytest.raises(s.BadBody) as raised:
            s.decode(body, s.OrderRequest)
        assert "\n" not in str(raised.value)
    for body in (b"\xff\xfe", b"", b"[" * 5, b'{"asset": 1e999999999999}'):
        with pytest.raises(s.BadBody):
            s.decode(body, s.CancelRequest)
