"""``arena host``'s API over real HTTP on 127.0.0.1: every endpoint and every error status.

Each test runs the real server (uvicorn, Starlette, the session writing a real log) in a
thread, with market data pushed by hand (tests/hostkit.py), and checks what an agent
sees against the engine's rules and against the log: accepted inputs are in the log
before the answer, refused requests (400, 401, 413, 429) leave it byte for byte as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from engine.units import E8
from tests import build
from tests.hostkit import (
    FakeClock,
    arena_rows,
    btc_book,
    db_rows,
    hosted,
    log_rows,
    order,
    replay_rows,
    season_file,
    wait_until,
)

# ---- orders -------------------------------------------------------------------------------


def test_an_accepted_order_is_logged_before_it_is_answered(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        r = alice.post("/v1/orders", json=order(cloid="0x2a"))
        assert r.status_code == 200
        body = r.json()
        assert body == {
            "oid": 1,
            "cloid": "0x" + "0" * 30 + "2a",
            "t": body["t"],
            "activates_at": body["t"] + 200,
        }
        logged = arena_rows(h.log, "order")  # read after the answer: it is there already
        assert logged == [
            {
                "type": "order",
                "entry": "alice",
                "asset": 0,
                "isBuy": True,
                "limitPx": 99_000 * E8,
                "sz": 100_000,
                "reduceOnly": False,
                "encodedTif": 2,
                "cloid": "0x2a",
            }
        ]
        orders = alice.get("/v1/orders").json()["orders"]
        assert [(o["oid"], o["state"], o["filled"]) for o in orders] == [(1, "pending", 0)]
        assert orders[0]["reserve"] == 100_000 * E8 * 100_000 // 10**10  # at the mark: higher
        h.book_after(body["activates_at"])  # a fresh book at or after it: the bid rests
        orders = alice.get("/v1/orders").json()["orders"]
        assert [(o["oid"], o["state"]) for o in orders] == [(1, "resting")]


REJECTIONS = [
    ("OrderTooSmall", order(sz=1000)),  # 0.00001 BTC = $0.99
    ("MarketNotAllowed", order(asset=3)),
    ("InvalidTif", order(tif=4)),
    ("InvalidPrice", {**order(), "limitPx": 12_345_678 * 10**6}),  # 123456.78: 8 figures
    ("InvalidSize", order(sz=100_001)),
    ("PositionCapExceeded", order(px=100_000, sz=2 * E8)),  # $200,000 > 12% of $10,000
]


@pytest.mark.parametrize(("reason", "body"), REJECTIONS, ids=[r for r, _ in REJECTIONS])
def test_a_rule_failure_is_422_with_the_reason_and_is_logged(
    tmp_path: Path, reason: str, body: dict[str, Any]
) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        r = alice.post("/v1/orders", json=body)
        assert (r.status_code, r.json()) == (422, {"error": reason})
        assert len(arena_rows(h.log, "order")) == 1  # it reached the engine: it is logged


def test_duplicate_cloid_and_too_many_open_orders_are_422(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        assert alice.post("/v1/orders", json=order(cloid="0x7")).status_code == 200
        r = alice.post("/v1/orders", json=order(cloid="0x0007"))  # the same number
        assert r.json() == {"error": "OrderAlreadyExists"}
        for _ in range(7):
            assert alice.post("/v1/orders", json=order()).status_code == 200
        r = alice.post("/v1/orders", json=order())
        assert (r.status_code, r.json()) == (422, {"error": "TooManyOpenOrders"})
        assert len(h.engine.accounts["alice"].orders) == 8


BAD_BODIES: list[tuple[str, bytes]] = [
    ("not json", b"{asset: 0}"),
    ("an array", b"[0, true, 1, 1, false, 2]"),
    ("empty", b""),
    ("unknown field", json.dumps({**order(), "leverage": 5}).encode()),
    ("price with a fraction", json.dumps({**order(), "limitPx": 9900000000000.5}).encode()),
    ("size with a fraction", json.dumps(order()).replace("100000,", "100000.25,").encode()),
    ("size below one", json.dumps({**order(), "sz": 1e-7}).encode()),
    ("size of 1e400", json.dumps(order()).replace("100000,", "1e400,").encode()),
    ("bool as int", json.dumps({**order(), "asset": True}).encode()),
    ("string size", json.dumps({**order(), "sz": "100000"}).encode()),
    ("int as bool", json.dumps({**order(), "isBuy": 1}).encode()),
    ("negative size", json.dumps({**order(), "sz": -100000}).encode()),
    ("asset over uint32", json.dumps({**order(), "asset": 2**32}).encode()),
    ("price over uint64", json.dumps({**order(), "limitPx": 2**64}).encode()),
    ("tif over uint8", json.dumps({**order(), "encodedTif": 256}).encode()),
    ("missing field", json.dumps({k: v for k, v in order().items() if k != "sz"}).encode()),
    ("null bool", json.dumps({**order(), "reduceOnly": None}).encode()),
    ("empty cloid", json.dumps(order(cloid="0x")).encode()),
    ("cloid with a newline", json.dumps(order(cloid="0x1\n")).encode()),
    ("cloid of 33 digits", json.dumps(order(cloid="0x" + "1" * 33)).encode()),
    ("cloid as a number", json.dumps({**order(), "cloid": 42}).encode()),
    ("trailing garbage", json.dumps(order()).encode() + b" x"),
]


@pytest.mark.parametrize("body", [b for _, b in BAD_BODIES], ids=[n for n, _ in BAD_BODIES])
def test_a_malformed_order_is_400_and_never_logged(tmp_path: Path, body: bytes) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        before = h.inputs()
        r = alice.post("/v1/orders", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 400
        assert r.json()["error"] == "BadRequest" and r.json()["detail"]
        assert h.inputs() == before


def test_an_integer_is_a_number_with_no_fraction_however_it_is_written(tmp_path: Path) -> None:
    # The document says "type": "integer", which JSON Schema (and so every client and tool
    # reading it) takes to admit 111.0 and 1.11e2; the server reads them as the integers
    # they are, exactly (never through a float), and logs them as digits.
    spelled = {
        "asset": "0.0",
        "limitPx": "9.9e12",  # 99,000 dollars at 1e8
        "sz": "100000.000",
        "encodedTif": "2E0",
    }
    body = json.dumps(order())
    for name, text in spelled.items():
        body = body.replace(f'"{name}": {order()[name]}', f'"{name}": {text}')
    assert "9.9e12" in body
    huge = json.dumps(order()).replace("100000,", "9007199254740993.0,")  # over 2**53
    with hosted(tmp_path) as h, h.client("alice") as alice:
        r = alice.post("/v1/orders", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 200, r.text
        r = alice.post("/v1/orders", content=huge, headers={"content-type": "application/json"})
        assert r.status_code == 422  # (logged: the engine saw 9007199254740993 and refused it)
        r = alice.post("/v1/cancel", content=b'{"oid": 1.0}')
        assert r.status_code == 200, r.text
    first, second = arena_rows(h.log, "order")
    assert first == {"type": "order", "entry": "alice", **order()}
    assert second["sz"] == 9007199254740993  # exact: a float would have made it ...992
    assert arena_rows(h.log, "cancel") == [{"type": "cancel", "entry": "alice", "oid": 1}]
    inputs = [x for x in h.inputs() if b'"type":"order"' in x or b'"type":"cancel"' in x]
    assert len(inputs) == 3
    for line in inputs:  # digits only (== alone would not say: 111.0 == 111 in Python)
        json.loads(line, parse_float=lambda text: pytest.fail(f"{text} logged"))


def test_a_body_over_the_limit_is_413_and_never_logged(tmp_path: Path) -> None:
    with hosted(tmp_path, body_max=512) as h, h.client("alice") as alice:
        before = h.inputs()
        padded = json.dumps(order()).encode()[:-1] + b" " * 600 + b"}"  # valid JSON, too big
        r = alice.post("/v1/orders", content=padded)
        assert (r.status_code, r.json()["error"]) == (413, "PayloadTooLarge")

        def chunks() -> Any:  # no Content-Length: the limit holds on the bytes received
            yield padded[:300]
            yield padded[300:]

        r = alice.post("/v1/cancel", content=chunks())
        assert r.status_code == 413
        assert h.inputs() == before
        assert alice.post("/v1/orders", json=order()).status_code == 200  # at the limit: fine


# ---- auth ----------------------------------------------------------------------------------


AUTHED = [
    ("POST", "/v1/orders"),
    ("POST", "/v1/cancel"),
    ("GET", "/v1/orders"),
    ("GET", "/v1/fills"),
    ("GET", "/v1/account"),
    ("GET", "/v1/book/BTC"),
    ("GET", "/v1/stream"),  # (as plain HTTP: the key first, then 426)
]


def test_a_missing_or_wrong_key_is_401_on_every_endpoint_and_logs_nothing(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, httpx.Client(base_url=h.url) as anon:
        alice, bob = h.keys["alice"], h.keys["bob"]
        wrong = [
            {},
            {"Authorization": f"Basic {alice}"},
            {"Authorization": "Bearer"},
            {"Authorization": f"Bearer {alice[:-1]}x"},  # one character off
            {"Authorization": f"Bearer bob.{alice.split('.', 1)[1]}"},  # alice's secret as bob
            {"Authorization": f"Bearer carol.{bob.split('.', 1)[1]}"},  # no such entry
            {"Authorization": "Bearer " + "a" * 500},
        ]
        before = h.inputs()
        for headers in wrong:
            for method, path in AUTHED:
                r = anon.request(method, path, headers=headers, json=order())
                assert r.status_code == 401, (headers, path)
                assert r.headers["www-authenticate"] == "Bearer"
                assert r.json()["error"] == "Unauthorized"
        assert h.inputs() == before
        ok = anon.get("/v1/account", headers={"Authorization": f"bearer  {alice}"})
        assert ok.json()["entry"] == "alice"  # the scheme in any case


def test_keys_never_reach_the_log_the_database_or_the_output(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        alice.post("/v1/orders", json=order())
        alice.get("/v1/account")
        keys = list(h.keys.values())
        rows = arena_rows(h.log, "register")
        assert [r["entry"] for r in rows] == ["alice", "bob"]
        import hashlib

        assert [r["key_sha256"] for r in rows] == [
            hashlib.sha256(k.encode()).hexdigest() for k in keys
        ]
        notes = "\n".join(h.notes)
    db = b"".join(p.read_bytes() for p in tmp_path.iterdir() if ".sqlite" in p.name)
    everything = h.log.read_bytes() + db + notes.encode()
    for key in keys:
        secret = key.split(".", 1)[1]
        assert secret.encode() not in everything


# ---- the rate limit ------------------------------------------------------------------------


def test_the_limit_is_a_moving_window_per_entry_and_a_refusal_logs_nothing(
    tmp_path: Path,
) -> None:
    clock = FakeClock(0)  # the limiter's clock: stepped here, never slept on
    with (
        hosted(tmp_path, limiter_clock=clock) as h,
        h.client("alice") as alice,
        h.client("bob") as bob,
    ):
        answered = [alice.post("/v1/orders", json=order()).status_code for _ in range(10)]
        assert answered == [200] * 8 + [422] * 2  # (TooManyOpenOrders: still requests)
        clock.now = 5_000
        assert all(alice.get("/v1/account").status_code == 200 for _ in range(10))
        before = h.inputs()
        r = alice.post("/v1/orders", json=order())  # the 21st in 10 s
        assert r.status_code == 429
        assert r.headers["retry-after"] == "5"  # the first ten leave the window at 10 s
        assert r.json()["error"] == "RateLimited"
        assert h.inputs() == before  # refused: nothing logged
        assert bob.get("/v1/orders").status_code == 200  # bob's budget is his own
        clock.now = 9_999
        assert alice.get("/v1/orders").headers["retry-after"] == "1"
        clock.now = 10_000  # fixed buckets would allow 20 again; the window allows 10
        assert [alice.get("/v1/orders").status_code for _ in range(11)] == [200] * 10 + [429]
        assert len(arena_rows(h.log, "order")) == 10


# ---- cancels and isolation -----------------------------------------------------------------


def test_cancel_by_oid_or_cloid_then_it_leaves_after_the_delay(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        one = alice.post("/v1/orders", json=order(cloid="0xa")).json()
        two = alice.post("/v1/orders", json=order(cloid="0xb")).json()
        r = alice.post("/v1/cancel", json={"oid": one["oid"]})
        assert r.status_code == 200
        assert r.json() == {"oid": 1, "t": r.json()["t"], "effective_at": r.json()["t"] + 200}
        r = alice.post("/v1/cancel", json={"cloid": "0xB"})  # hex in either case
        assert r.json()["oid"] == two["oid"]
        again = alice.post("/v1/cancel", json={"oid": one["oid"]})  # already being cancelled
        assert (again.status_code, again.json()) == (422, {"error": "OrderNotFound"})
        listed = alice.get("/v1/orders").json()["orders"]
        assert [o["cancel_at"] is not None for o in listed] == [True, True]  # still open
        h.book_after(r.json()["effective_at"])  # an input after the instant: both have left
        assert alice.get("/v1/orders").json()["orders"] == []
        for neither_or_both in [{}, {"oid": None}, {"oid": 2, "cloid": "0xb"}]:
            r = alice.post("/v1/cancel", json=neither_or_both)
            assert r.status_code == 400  # exactly one of oid and cloid (the document's oneOf)
        assert alice.post("/v1/cancel", json={"oid": 9, "cloid": None}).status_code == 422
        assert len(arena_rows(h.log, "cancel")) == 4


def test_an_entry_cannot_see_or_cancel_another_entrys_orders(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice, h.client("bob") as bob:
        oid = alice.post("/v1/orders", json=order(cloid="0x5")).json()["oid"]
        assert bob.get("/v1/orders").json() == {"orders": []}
        theirs = bob.post("/v1/cancel", json={"oid": oid})
        unknown = bob.post("/v1/cancel", json={"oid": oid + 100})
        by_cloid = bob.post("/v1/cancel", json={"cloid": "0x5"})
        assert theirs.status_code == unknown.status_code == by_cloid.status_code == 422
        assert theirs.content == unknown.content == by_cloid.content  # the same answer
        assert [o["oid"] for o in alice.get("/v1/orders").json()["orders"]] == [oid]


# ---- reads ---------------------------------------------------------------------------------


def _taker_fill(h: Any, alice: httpx.Client) -> dict[str, Any]:
    """Alice buys 0.001 BTC through the ask; the next fresh book fills it."""
    answer = alice.post("/v1/orders", json=order(px=100_010, tif=3, cloid="0x99"))
    assert answer.status_code == 200
    h.book_after(answer.json()["activates_at"])
    return dict(answer.json())


def test_fills_since_and_the_account_after_a_fill(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice, h.client("bob") as bob:
        placed = _taker_fill(h, alice)
        fills = alice.get("/v1/fills").json()
        assert fills["more"] is False
        (f,) = fills["fills"]
        assert {k: f[k] for k in ("seq", "entry", "oid", "isBuy", "px", "sz", "liquidity")} == {
            "seq": 1,
            "entry": "alice",
            "oid": placed["oid"],
            "isBuy": True,
            "px": 100_001 * E8,
            "sz": 100_000,
            "liquidity": "taker",
        }
        notional = 100_001 * E8 * 100_000 // 10**10
        fees = (notional * 45 // 100_000, notional * 20 // 100_000)
        assert (f["venue_fee"], f["exec_fee"]) == fees
        assert alice.get(f"/v1/fills?since={f['t']}").json()["fills"] == [f]
        assert alice.get(f"/v1/fills?since={f['t'] + 1}").json()["fills"] == []
        for bad in ("-1", "abc", "1.5", "9" * 19):
            assert alice.get(f"/v1/fills?since={bad}").status_code == 400
        assert bob.get("/v1/fills").json()["fills"] == []
        acct = alice.get("/v1/account").json()
        assert acct["cash"] == 10_000 * 10**6 - notional - f["venue_fee"] - f["exec_fee"]
        assert acct["positions"] == [
            {"asset": 0, "coin": "BTC", "sz": 100_000, "mark": 100_000 * E8}
        ]
        assert acct["equity"] == acct["cash"] + 100_000 * E8 * 100_000 // 10**10
        assert acct["cap"] == acct["equity"] * 12 // 100
        assert bob.get("/v1/account").json()["positions"] == []


def test_book_as_received_and_unknown_coins(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        row = btc_book(px=100_500)
        h.send(row)
        book = alice.get("/v1/book/BTC").json()
        assert book["levels"] == row["hl"]["data"]["levels"]
        assert (book["coin"], book["asset"], book["stale"]) == ("BTC", 0, False)
        assert book["time"] == row["hl"]["data"]["time"]
        eth = alice.get("/v1/book/ETH").json()
        assert (eth["t"], eth["levels"], eth["mark"]) == (None, [[], []], None)
        r = alice.get("/v1/book/DOGE")
        assert (r.status_code, r.json()["error"]) == (404, "UnknownCoin")


def test_season_and_scores_are_public(tmp_path: Path) -> None:
    season_path = season_file(tmp_path / "season.json", mark_interval_ms=1000)
    with hosted(tmp_path, season=season_path) as h, httpx.Client(base_url=h.url) as anon:
        season = anon.get("/v1/season").json()
        session = h.host.session
        assert session is not None
        assert season["rules_sha256"] == session.season.rules_sha256
        assert season["state"] == "running"
        assert season["rules"]["mark_interval_ms"] == 1000
        assert season["limits"] == {
            "rate_limit_requests": 20,
            "rate_limit_window_ms": 10000,
            "body_max_bytes": 4096,
        }
        assert [m["coin"] for m in season["markets"]] == ["BTC", "ETH"]

        def rows_now() -> list[dict[str, Any]]:
            return list(anon.get("/v1/scores").json()["rows"])

        wait_until(lambda: len(rows_now()) == 2)  # one row per entry per day, a mark a second
        first = rows_now()[0]["t"]
        wait_until(lambda: rows_now()[0]["t"] > first)  # refreshed in place at the next mark
        scores = anon.get("/v1/scores").json()
        rows = scores["rows"]
        assert scores["season"] == "host-test" and scores["final"] is False
        assert {r["entry"] for r in rows} == {"alice", "bob"}
        day = rows[0]["day"]
        assert anon.get(f"/v1/scores?day={day + 1}").json()["rows"] == []
        assert anon.get("/v1/scores?day=x").status_code == 400
    # The rows served are the engine's own: a replay of the log cut just before the next
    # mark gives them exactly, and a replay of the whole log gives what the database holds.
    mark = max(r["t"] for r in rows)
    assert replay_rows(h.log, season_path, before_t=mark + 1000) == rows
    assert replay_rows(h.log, season_path) == db_rows(h.log)


def test_unknown_paths_and_methods_answer_json(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False) as h, h.client("alice") as alice:
        r = alice.get("/v1/nothing")
        assert (r.status_code, r.json()["error"]) == (404, "NotFound")
        r = alice.delete("/v1/orders")
        assert (r.status_code, r.json()["error"]) == (405, "MethodNotAllowed")
        assert alice.get("/v1/cancel").status_code == 405
        r = alice.get("/v1/stream")
        assert (r.status_code, r.json()["error"]) == (426, "UpgradeRequired")


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")


def test_every_405_lists_every_method_of_its_path(tmp_path: Path) -> None:
    # Every path the document describes (and the document's own), every method: those it
    # documents are served (a GET also answers HEAD), any other is 405 naming exactly them.
    with hosted(tmp_path, market=False) as h, h.client("alice") as alice:
        doc = alice.get("/openapi.json").json()
        served = {path: {m.upper() for m in ops} for path, ops in doc["paths"].items()}
        served["/openapi.json"] = {"GET"}
        for path, methods in served.items():
            allow = methods | ({"HEAD"} if "GET" in methods else set())
            url = path.replace("{coin}", "BTC").replace("{entry}", "alice")
            for method in METHODS:
                r = alice.request(method, url)
                if method in allow:
                    assert r.status_code != 405, (method, path)
                    continue
                assert r.status_code == 405, (method, path, r.status_code)
                assert r.headers["allow"] == ", ".join(sorted(allow)), (method, path)
                if method != "HEAD":
                    assert r.json()["error"] == "MethodNotAllowed"
        assert len(served) == 17  # (tests/test_host_fuzz.py: the document names every route)


# ---- the stream ----------------------------------------------------------------------------


def _recv_json(ws: Any) -> dict[str, Any]:
    return dict(json.loads(ws.recv(timeout=10)))


def test_the_stream_carries_own_events_and_the_market(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice, h.client("bob") as bob:
        ws_url = h.url.replace("http", "ws") + "/v1/stream"
        auth = {"Authorization": f"Bearer {h.keys['alice']}"}
        with (
            connect(ws_url, additional_headers=auth) as ws,
            connect(ws_url + "?market=0", additional_headers=auth) as events_only,
        ):
            bob.post("/v1/orders", json=order())  # bob's: alice never sees it
            oid = alice.post("/v1/orders", json=order(cloid="0x3")).json()["oid"]
            row = btc_book(px=100_200)
            h.send(row)
            seen = [_recv_json(ws)]
            while seen[-1].get("hl") != row["hl"]:  # up to the book pushed last
                seen.append(_recv_json(ws))
            events = [m["event"] for m in seen if "event" in m]
            assert [(e["kind"], e["entry"], e["oid"]) for e in events[:1]] == [
                ("accepted", "alice", oid)
            ]
            assert events[0]["cloid"] == "0x" + "0" * 31 + "3"
            assert all(e["entry"] == "alice" for e in events)
            first = _recv_json(events_only)
            assert first["event"]["kind"] == "accepted"  # no market lines on this one
        with pytest.raises(InvalidStatus) as refused:
            connect(ws_url, additional_headers={"Authorization": "Bearer nope.nope"})
        assert refused.value.response.status_code == 401


# ---- restart and the lock ------------------------------------------------------------------


def test_a_restart_replays_the_log_to_the_same_answers(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        _taker_fill(h, alice)
        alice.post("/v1/orders", json=order(cloid="0x10"))
        before = {p: alice.get(p).json() for p in ("/v1/orders", "/v1/fills")}
        account = alice.get("/v1/account").json()
        key = h.keys["alice"]
    season = tmp_path / "season.json"
    with hosted(tmp_path, season=season, entries=(), market=False) as again:
        again.keys["alice"] = key  # the key still works: its hash came back from the log
        with again.client("alice") as alice:
            assert {p: alice.get(p).json() for p in before} == before
            after = alice.get("/v1/account").json()
            assert {k: v for k, v in after.items() if k != "t"} == {
                k: v for k, v in account.items() if k != "t"
            }
        gaps = [r["arena"] for r in log_rows(again.log) if r.get("arena", {}).get("type") == "gap"]
        assert [g["reason"] for g in gaps] == ["restart"]


def test_a_second_server_on_the_same_log_refuses_to_start(tmp_path: Path) -> None:
    from arena_tui.host.errors import HostError
    from arena_tui.host.plan import HostOptions
    from arena_tui.host.server import Host

    with hosted(tmp_path, market=False) as h:
        opts = HostOptions(log=h.log, season=tmp_path / "season.json", port=0)
        with pytest.raises(HostError, match=r"in use by another arena host .*pid \d+"):
            Host(opts).prepare()


def test_a_log_started_under_other_rules_is_refused_naming_both_hashes(tmp_path: Path) -> None:
    from arena_tui.host.plan import HostOptions
    from arena_tui.host.server import Host
    from arena_tui.season.file import SeasonError, load_season

    with hosted(tmp_path, market=False):
        pass
    first = load_season(tmp_path / "season.json")
    other = season_file(tmp_path / "other.json", taker_fee_dbps=50)
    opts = HostOptions(log=tmp_path / "season.jsonl", season=other, port=0)
    with pytest.raises(SeasonError) as refused:
        Host(opts).prepare()
    assert first.rules_sha256 in str(refused.value)
    assert load_season(other).rules_sha256 in str(refused.value)


def test_market_data_from_the_feed_is_logged_and_applied(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False) as h:
        row = build.ctx(0, "BTC", mark="100123.0", oracle="100120.0", funding="0.00001")
        h.send(row)
        assert h.engine.by_coin["BTC"].mark == 100_123 * E8
        assert [r["hl"] for r in log_rows(h.log) if "hl" in r] == [row["hl"]]
