"""Readers cannot slow traders: the public endpoints' per-client limits, the log's bytes
sent off the loop, and the views encoded once per change answering as built afresh."""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from arena_tui.host import answers, logserve, offload
from arena_tui.host.clients import (
    PUBLIC_PATHS,
    LimitError,
    PublicLimits,
    ReaderOptions,
    client_key,
    parse_limits,
    parse_total,
    parse_trusted,
)
from arena_tui.host.encoded import Encoded
from arena_tui.host.ratelimit import MovingWindow
from arena_tui.host.store import ScoreStore
from arena_tui.host.views import Views
from engine import Engine
from engine import events as ev
from tests import build
from tests.clirun import arena_here
from tests.hostkit import FakeClock, btc_book, btc_ctx, hosted

ENCODE = msgspec.json.Encoder().encode
LIMITED = ReaderOptions(default=(3, 10_000), by_path={"/v1/log": (2, 10_000)})


def _other_client(url: str, address: str = "127.0.0.2") -> httpx.Client:
    """A client from another loopback address: another client to the limits."""
    return httpx.Client(base_url=url, transport=httpx.HTTPTransport(local_address=address))


# ---- the limits ----------------------------------------------------------------------


def test_a_public_endpoint_answers_429_after_its_limit_and_recovers_after_the_window(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    with (
        hosted(tmp_path, limiter_clock=clock, readers=LIMITED) as h,
        httpx.Client(base_url=h.url) as anon,
    ):
        t0 = clock.now
        for i in range(3):  # at t0, t0 + 1 s, t0 + 2 s
            clock.now = t0 + i * 1000
            assert anon.get("/v1/scores").status_code == 200
        clock.now = t0 + 6_000
        r = anon.get("/v1/scores")
        assert r.status_code == 429
        assert r.headers["retry-after"] == "4"  # (the first of the three leaves at t0 + 10 s)
        assert r.json()["error"] == "RateLimited"
        assert "\n" not in r.text and "3 requests to /v1/scores in any 10 s" in r.text
        assert anon.get("/v1/scores").status_code == 429  # (a refused one is not counted)
        # each endpoint its own window: the entries, the log are still open
        assert anon.get("/v1/entries").status_code == 200
        assert [anon.get("/v1/log").status_code for _ in range(3)] == [200, 200, 429]
        # the entrants' keyed reads keep their own limit, untouched by the public one
        with h.client("alice") as alice:
            assert alice.get("/v1/account").status_code == 200
        metrics = anon.get("/metrics").text
        assert 'arena_public_limited_total{route="/v1/scores"} 2.0' in metrics
        assert 'arena_public_limited_total{route="/v1/log"} 1.0' in metrics
        clock.now = t0 + 10_000  # the first request leaves the window: one more is allowed
        assert anon.get("/v1/scores").status_code == 200
        assert anon.get("/v1/scores").status_code == 429
        clock.now += 10_000
        assert [anon.get("/v1/scores").status_code for _ in range(4)] == [200, 200, 200, 429]


def test_one_clients_exhaustion_does_not_limit_another(tmp_path: Path) -> None:
    with (
        hosted(tmp_path, limiter_clock=FakeClock(), readers=LIMITED) as h,
        httpx.Client(base_url=h.url) as first,
        _other_client(h.url) as second,
    ):
        for _ in range(3):
            assert first.get("/v1/entries").status_code == 200
        assert first.get("/v1/entries").status_code == 429
        assert second.get("/v1/entries").status_code == 200
        # a made-up X-Forwarded-For from an untrusted peer is not another client
        spoofed = {"X-Forwarded-For": "203.0.113.9"}
        assert first.get("/v1/entries", headers=spoofed).status_code == 429


def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(tmp_path: Path) -> None:
    trusting = ReaderOptions(default=(1, 10_000), trusted=parse_trusted(["127.0.0.1"]))
    with (
        hosted(tmp_path, limiter_clock=FakeClock(), readers=trusting) as h,
        httpx.Client(base_url=h.url) as proxy,
    ):
        one, two = {"X-Forwarded-For": "198.51.100.1"}, {"X-Forwarded-For": "198.51.100.2"}
        assert proxy.get("/v1/season", headers=one).status_code == 200
        assert proxy.get("/v1/season", headers=one).status_code == 429
        assert proxy.get("/v1/season", headers=two).status_code == 200
        assert proxy.get("/v1/season").status_code == 200  # (the proxy's own request)


def test_all_clients_together_are_held_to_the_public_total(tmp_path: Path) -> None:
    budget = ReaderOptions(default=(100, 10_000), by_path={}, total=(3, 10_000))
    clock = FakeClock()
    with (
        hosted(tmp_path, limiter_clock=clock, readers=budget) as h,
        httpx.Client(base_url=h.url) as first,
        _other_client(h.url) as second,
    ):
        assert [first.get("/v1/season").status_code for _ in range(2)] == [200, 200]
        assert second.get("/v1/entries").status_code == 200
        r = second.get("/v1/scores")  # (a client well inside its own limit)
        assert r.status_code == 429 and r.headers["retry-after"] == "10"
        assert "3 public requests in any 10 s from all clients" in r.json()["detail"]
        # the operator's probes and the entrants' keyed requests are never in the total
        assert first.get("/healthz").status_code == 200
        assert 'arena_public_limited_total{route="/v1/scores"} 1.0' in first.get("/metrics").text
        with h.client("alice") as alice:
            assert alice.get("/v1/account").status_code == 200
        clock.now += 10_000
        assert [second.get("/v1/scores").status_code for _ in range(4)] == [200, 200, 200, 429]


def test_a_request_the_total_refuses_is_not_counted_against_its_client() -> None:
    clock = FakeClock()
    limits = PublicLimits(ReaderOptions(default=(2, 10_000), total=(2, 10_000)), clock)
    assert limits.take("/v1/season", "192.0.2.1", None) == (0, "")
    assert limits.take("/v1/season", "192.0.2.2", None) == (0, "")
    clock.now += 5_000
    wait, said = limits.take("/v1/season", "192.0.2.2", None)
    assert wait == 5_000 and said == "2 public requests in any 10 s from all clients"
    clock.now += 5_000  # the first two leave both windows; the refused one was never in
    assert limits.take("/v1/season", "192.0.2.2", None) == (0, "")
    assert limits.take("/v1/season", "192.0.2.2", None) == (0, "")
    wait, said = limits.take("/v1/season", "192.0.2.2", None)
    assert wait == 10_000 and said == "2 requests to /v1/season in any 10 s from one client"


@given(st.lists(st.tuples(st.integers(0, 3_000), st.sampled_from("abc")), max_size=60))
def test_a_windows_wait_is_what_take_would_answer(steps: list[tuple[int, str]]) -> None:
    clock = FakeClock()
    window = MovingWindow(3, 5_000, clock)
    for advance, key in steps:
        clock.now += advance
        expected = window.wait(key)
        assert window.take(key) == expected


def test_the_public_total_option_is_read_or_refused_in_one_line(tmp_path: Path) -> None:
    assert parse_total("200/1") == (200, 1_000) and parse_total("off") is None
    for bad in ("0/1", "5", "/v1/log=5/1", "fast"):
        with pytest.raises(LimitError):
            parse_total(bad)
    done = arena_here("host", "--log", str(tmp_path / "s.jsonl"), "--public-total", "lots")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "Invalid value for --public-total: 'lots': want N/SECONDS or off" in done.stderr


def test_the_default_limits_let_the_season_page_poll() -> None:
    """The page reads each endpoint at most once a poll (the scores up to three times),
    every 2 s: a minute of it, with a reload every 10 s, is never refused."""
    clock = FakeClock()
    limits = PublicLimits(ReaderOptions(), clock)
    poll = ["/v1/season", "/v1/entries", "/v1/scores", "/v1/scores", "/v1/scores"]
    poll += ["/v1/entries/{entry}/fills", "/v1/log"]
    for step in range(30):
        paths = poll + (["/"] if step % 5 == 0 else [])
        for path in paths:
            assert limits.take(path, "192.0.2.7", None) == (0, ""), (step, path)
        clock.now += 2_000


def test_client_keys() -> None:
    proxy = parse_trusted(["10.0.0.0/8", "::1"])
    assert client_key("192.0.2.1", "198.51.100.1", ()) == "192.0.2.1"  # nothing trusted
    assert client_key("192.0.2.1", "198.51.100.1", proxy) == "192.0.2.1"  # not a proxy
    assert client_key("10.1.2.3", "198.51.100.1", proxy) == "198.51.100.1"
    # what the client wrote is left of what the proxy appended: never believed
    assert client_key("10.1.2.3", "1.1.1.1, 198.51.100.1", proxy) == "198.51.100.1"
    # through two trusted proxies
    assert client_key("10.1.2.3", "198.51.100.1, 10.9.9.9", proxy) == "198.51.100.1"
    assert client_key("10.1.2.3", "junk", proxy) == "10.1.2.3"
    assert client_key("10.1.2.3", None, proxy) == "10.1.2.3"
    # an IPv6 client by its /64; a v4-mapped one as IPv4
    assert client_key("2001:db8:1:2:aaaa::1", None, ()) == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:2:bbbb::9", None, ()) == "2001:db8:1:2::/64"
    assert client_key("::ffff:192.0.2.5", None, ()) == "192.0.2.5"
    assert client_key("::1", "2001:db8::7", proxy) == "2001:db8::/64"


def test_limit_options() -> None:
    assert parse_limits([], PUBLIC_PATHS) == ((20, 10_000), {"/v1/log": (10, 10_000)})
    assert parse_limits(["5/2"], PUBLIC_PATHS) == ((5, 2_000), {})  # the log's too
    got = parse_limits(["/v1/log=off", "30/10s"], PUBLIC_PATHS)  # (order does not matter)
    assert got == ((30, 10_000), {"/v1/log": None})
    assert parse_limits(["off"], PUBLIC_PATHS) == (None, {})
    for bad in ("5", "5/0", "0/10", "/v1/orders=5/10", "x=5/10", "5/10m", ""):
        with pytest.raises(LimitError) as err:
            parse_limits([bad], PUBLIC_PATHS)
        assert "\n" not in str(err.value)
    with pytest.raises(LimitError):
        parse_trusted(["not-an-address"])


def test_the_public_paths_are_the_hosts_paths_without_a_key(tmp_path: Path) -> None:
    with hosted(tmp_path) as h:
        doc = httpx.get(f"{h.url}/openapi.json").json()
    keyed: dict[str, Any] = {"security": []}
    public = {p for p, item in doc["paths"].items() if "security" not in item.get("get", keyed)}
    assert public == set(PUBLIC_PATHS) - {"/openapi.json"}  # (not in itself)
    for path in public:  # each documents its 429
        assert "429" in doc["paths"][path]["get"]["responses"], path


def test_a_window_forgets_clients_with_nothing_in_it() -> None:
    clock = FakeClock()
    limits = PublicLimits(ReaderOptions(default=(2, 1_000)), clock)
    window = limits.window("/v1/season")
    assert window is not None
    for i in range(5000):
        limits.take("/v1/season", f"192.0.2.{i % 250}", None)
        clock.now += 1
    assert len(window) <= 250
    clock.now += 10_000
    window.prune(clock.now)
    assert len(window) == 0


# ---- the log's bytes -----------------------------------------------------------------


def test_log_ranges_are_exact_through_the_sendfile_path(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, httpx.Client(base_url=h.url) as anon:
        for i in range(2500):  # a log of several sendfile steps
            h.feed.send(btc_book(100_000 + i % 50))
        h.send(btc_ctx())
        deadline = time.monotonic() + 60  # the feed's books are committed in their own time
        size = int(anon.head("/v1/log").headers["arena-log-size"])
        while size <= 4 * offload.STEP and time.monotonic() < deadline:
            time.sleep(0.02)
            size = int(anon.head("/v1/log").headers["arena-log-size"])
        data = h.log.read_bytes()[:size]
        assert size > 4 * offload.STEP
        cases = [
            ("bytes=0-0", 0, 1),
            ("bytes=0-", 0, size),
            ("bytes=-1", size - 1, size),
            (f"bytes={size - 1}-", size - 1, size),
            (f"bytes={size - 1}-{size + 50}", size - 1, size),
            (f"bytes=-{size + 50}", 0, size),
            ("bytes=7-1000", 7, 1001),
            (f"bytes=1-{size - 2}", 1, size - 1),
        ]
        for spec, first, end in cases:
            r = anon.get("/v1/log", headers={"Range": spec})
            assert r.status_code == 206, spec
            got = int(r.headers["arena-log-size"])
            assert r.content == h.log.read_bytes()[:got][first:end] or got != size, spec
            assert r.headers["content-range"] == f"bytes {first}-{end - 1}/{got}", spec
        whole = anon.get("/v1/log")
        assert whole.status_code == 200
        assert whole.content == h.log.read_bytes()[: int(whole.headers["arena-log-size"])]
        assert whole.content[:size] == data
        r = anon.get("/v1/log", headers={"Range": "bytes=99999999-"})
        assert r.status_code == 416 and r.json()["error"] == "RangeNotSatisfiable"
        assert anon.get("/v1/season").status_code == 200  # (the connection carries on)


def _raw_answer(url: str, request: bytes) -> bytes:
    """Everything the server sends for one raw request, up to its close."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as c:
        c.sendall(request)
        got = b""
        while chunk := c.recv(65536):
            got += chunk
    return got


def test_an_answer_on_a_connection_that_closes_after_it_is_sent_whole(tmp_path: Path) -> None:
    # (urllib sends Connection: close; ab and old proxies speak HTTP/1.0; a stopping server
    # closes after the answer in flight: each answer was held, the connection closed first)
    with hosted(tmp_path) as h:
        key = h.keys["alice"].encode()
        season = httpx.get(f"{h.url}/v1/season").json()["id"]
        account = b"GET /v1/account HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n" % key
        for request, field, want in [
            (b"GET /v1/season HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "id", season),
            (b"GET /v1/season HTTP/1.0\r\n\r\n", "id", season),
            (account + b"Connection: close\r\n\r\n", "entry", "alice"),
        ]:
            got = _raw_answer(h.url, request)
            head, _, body = got.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 "), (request, got[:200])
            assert msgspec.json.decode(body)[field] == want, (request, body[:200])


def _socket_pair() -> tuple[socket.socket, socket.socket]:
    a, b = socket.socketpair()
    a.setblocking(False)
    return a, b


def test_pump_sends_exactly_the_bytes_asked_for_at_its_pace(tmp_path: Path) -> None:
    path = tmp_path / "log"
    data = os.urandom(3 * offload.STEP + 12_345)
    path.write_bytes(data)
    out, peer = _socket_pair()
    got = bytearray()

    def drain() -> None:
        while chunk := peer.recv(1 << 16):
            got.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    pace = offload.Pace(rate=4 * len(data))  # (a quarter of a second for it all)
    started = time.monotonic()
    assert offload.pump(os.dup(out.fileno()), path, 1000, len(data) - 2000, pace=pace)
    elapsed = time.monotonic() - started
    out.close()
    reader.join(10)
    assert bytes(got) == data[1000:-1000]
    assert elapsed >= 0.15  # (paced: a bound of the pace, not a measure of speed)


def test_pump_gives_up_on_a_reader_that_stops_reading_or_goes_away(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(os.urandom(8 << 20))
    out, peer = _socket_pair()
    assert not offload.pump(os.dup(out.fileno()), path, 0, 8 << 20, idle_s=0.2)
    stopping = threading.Event()  # the server stops while a reader holds a thread
    threading.Timer(0.2, stopping.set).start()
    started = time.monotonic()
    assert not offload.pump(os.dup(out.fileno()), path, 0, 8 << 20, abort=stopping)
    assert time.monotonic() - started < offload.IDLE_S / 2
    peer.close()
    assert not offload.pump(os.dup(out.fileno()), path, 0, 1 << 20)
    out.close()


def test_without_the_extension_the_log_is_read_in_pieces(tmp_path: Path) -> None:
    path = tmp_path / "log"
    data = os.urandom(2 * offload.PIECE + 77)
    path.write_bytes(data)

    async def get(request: Request) -> Response:
        start, end = int(request.query_params["a"]), int(request.query_params["b"])
        return logserve.log_response(path, len(data), 206, start, end, False)

    async def main() -> None:
        transport = httpx.ASGITransport(Starlette(routes=[Route("/", get)]))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for a, b in ((0, len(data)), (5, 6), (offload.PIECE - 1, offload.PIECE + 2)):
                r = await client.get("/", params={"a": a, "b": b})
                assert r.content == data[a:b]
                assert r.headers["content-range"] == f"bytes {a}-{b - 1}/{len(data)}"

    asyncio.run(main())


# ---- the views encoded once ----------------------------------------------------------

ENTRIES = ("alice", "bob")
step = st.one_of(
    st.tuples(st.just("mark"), st.sampled_from(ENTRIES), st.integers(-(10**9), 10**9)),
    st.tuples(st.just("fill"), st.sampled_from(ENTRIES), st.integers(1, 10**8)),
    st.tuples(st.just("row"), st.sampled_from(ENTRIES), st.integers(0, 3)),
    st.tuples(st.just("ask"), st.sampled_from((*ENTRIES, "carol")), st.integers(0, 40)),
)


def _views() -> tuple[Engine, Views, Any]:
    season = build.season()
    engine = Engine(season)
    views = Views(engine)
    for name in ENTRIES:
        key = hashlib.sha256(name.encode()).hexdigest()
        (line,) = build.lines([build.register(build.T0 - 1, name, key)])
        views.apply(line, b"", engine.apply(line), live=False)
    return engine, views, season


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(step, max_size=60))
def test_encoded_views_equal_fresh_ones_after_every_change(steps: list[Any]) -> None:
    engine, views, season = _views()
    enc = Encoded(engine, views, season, None)
    (tick,) = build.lines([build.tick(build.T0)])
    t = 0
    with mock.patch.object(answers, "MAX_MARKS", 3), mock.patch.object(answers, "MAX_FILLS", 2):
        for kind, entry, n in steps:
            t += 1
            event: ev.AnyEvent
            if kind == "mark":
                event = ev.MinuteMark(t, entry, n, abs(n), 5, 7, n > 0)
            elif kind == "fill":
                event = ev.Fill(t, entry, t, 0, 0, True, n, 1000, False, 3, 0)
            elif kind == "row":
                event = ev.ScoreRow(t, entry, n, 10**9, 1, 2, 3, 1, True, 1, 4, 5, 6)
            else:
                since = n
                want = ENCODE(answers.equity(views, entry, since))
                assert enc.equity(entry, since) == want
                assert enc.fills(entry, since) == ENCODE(answers.fills(views, entry, since))
                assert enc.entries() == ENCODE(answers.entries(engine, views, season))
                continue
            views.apply(tick, b"", [event], live=False)
            assert enc.entries() == ENCODE(answers.entries(engine, views, season))
            for name in ENTRIES:
                assert enc.equity(name, 0) == ENCODE(answers.equity(views, name, 0))
                assert enc.fills(name, t) == ENCODE(answers.fills(views, name, t))


def test_encoded_scores_follow_every_write_to_the_store(tmp_path: Path) -> None:
    engine, views, season = _views()
    store = ScoreStore(tmp_path / "s.sqlite")
    enc = Encoded(engine, views, season, store)

    def fresh(day: int | None) -> bytes:
        doc = {"season": season.id, "paper": True, "final": engine.over, "rows": store.rows(day)}
        return ENCODE(doc)

    assert enc.scores(None) == fresh(None) and b'"rows":[]' in enc.scores(None)
    for day in range(12):  # (more days than it keeps)
        store.put([ev.ScoreRow(day, "alice", day, 10**9 + day, 1, 2, 3, 1, True, 1, 4, 5, 6)])
        for asked in (None, day, day - 1, 99):
            assert enc.scores(asked) == fresh(asked), (day, asked)
    other = sqlite3.connect(tmp_path / "s.sqlite")  # another process changes the rows
    with other:
        other.execute('UPDATE scores SET "return" = 42 WHERE day = 3')
    assert enc.scores(3) == fresh(3) and b'"return":42' in enc.scores(3)
    other.close()
    store.close()
