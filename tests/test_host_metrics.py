"""The operator's dials on a real host: ``GET /healthz`` and ``GET /metrics``.

A host on 127.0.0.1 (tests/hostkit.py) is scraped as Prometheus would scrape it, and the
text is read back with ``prometheus_client``'s own parser: the orders by outcome, the
request latency per route, entries paused by drawdown, the log's size and the books'
health are what the host did; ``/healthz`` is 503 once the log cannot be written.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import httpx
import typer
from prometheus_client.parser import text_string_to_metric_families

from arena_tui.cli import app
from arena_tui.host.metrics import Dials
from arena_tui.host.session import LogWriteError
from tests.hostkit import ROOT, hosted, order, wait_until

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: httpx.Client) -> Samples:
    """Every sample of ``GET /metrics``: (name, sorted labels) -> value."""
    r = client.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    out: Samples = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            out[s.name, tuple(sorted(s.labels.items()))] = s.value
    return out


def inputs(samples: Samples, kind: str, outcome: str, reason: str = "") -> float:
    labels = (("kind", kind), ("outcome", outcome), ("reason", reason))
    return samples.get(("arena_inputs_total", labels), 0.0)


def latency_count(samples: Samples, route: str, method: str) -> float:
    labels = (("method", method), ("route", route))
    return samples.get(("arena_request_duration_seconds_count", labels), 0.0)


def test_healthz_is_200_with_a_tiny_body_and_no_key(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False) as h, h.client() as anon:
        r = anon.get("/healthz")
        assert r.status_code == 200
        assert r.json() == {"ok": True, "season": "host-test", "over": False}
        assert len(r.content) < 100
        assert anon.head("/healthz").status_code == 200


def test_orders_and_cancels_are_counted_by_outcome(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice, h.client() as anon:
        before = scrape(anon)
        assert inputs(before, "order", "accepted") == 0
        ok = alice.post("/v1/orders", json=order())
        assert ok.status_code == 200, ok.text
        assert alice.post("/v1/orders", json=order()).status_code == 200
        small = alice.post("/v1/orders", json=order(sz=1))
        assert (small.status_code, small.json()["error"]) == (422, "InvalidSize")
        assert alice.post("/v1/orders", content=b"{").status_code == 400  # never reached it
        gone = alice.post("/v1/cancel", json={"oid": 999})
        assert gone.status_code == 422
        assert alice.post("/v1/cancel", json={"oid": ok.json()["oid"]}).status_code == 200
        after = scrape(anon)
        assert inputs(after, "order", "accepted") == 2
        assert inputs(after, "order", "rejected", "InvalidSize") == 1
        assert inputs(after, "cancel", "rejected", gone.json()["error"]) == 1
        assert inputs(after, "cancel", "accepted") == 1
        # the order path's latency: one observation per answer, 400 and 422 included
        assert latency_count(after, "/v1/orders", "POST") == 4
        assert latency_count(after, "/v1/cancel", "POST") == 2
        # every batch the log writer fsynced is timed; the log's size is what it serves
        assert after["arena_log_fsync_duration_seconds_count", ()] >= 4
        size = int(anon.head("/v1/log").headers["arena-log-size"])
        assert after["arena_log_bytes", ()] <= size
        assert after["arena_log_bytes", ()] >= before["arena_log_bytes", ()]
        assert after["arena_entries", ()] == 2


def test_the_latency_histogram_counts_every_request(tmp_path: Path) -> None:
    with hosted(tmp_path, market=False) as h, h.client() as anon:
        first = latency_count(scrape(anon), "/v1/season", "GET")
        for _ in range(5):
            assert anon.get("/v1/season").status_code == 200
        samples = scrape(anon)
        assert latency_count(samples, "/v1/season", "GET") == first + 5
        assert latency_count(samples, "/metrics", "GET") >= 1
        inf = (("le", "+Inf"), ("method", "GET"), ("route", "/v1/season"))
        assert samples["arena_request_duration_seconds_bucket", inf] == first + 5


def test_the_books_health_per_coin(tmp_path: Path) -> None:
    with hosted(tmp_path) as h, h.client() as anon:
        samples = scrape(anon)
        btc, eth = (("coin", "BTC"),), (("coin", "ETH"),)
        assert samples["arena_book_stale", btc] == 0  # a fresh book was just sent
        assert samples["arena_book_stale", eth] == 1  # none has come
        assert ("arena_feed_lag_seconds", btc) in samples
        assert ("arena_book_age_seconds", eth) not in samples
        assert samples["arena_orders_waiting_stale_book", btc] == 0


def test_entries_paused_by_drawdown_are_counted(tmp_path: Path) -> None:
    # a drawdown limit of 0%: every entry is paused at its first minute mark (one a second)
    with hosted(tmp_path, drawdown_limit_pct=0, mark_interval_ms=1000) as h, h.client() as anon:
        wait_until(lambda: all(h.engine.account(e).paused for e in ("alice", "bob")))
        samples = scrape(anon)
        assert samples["arena_entries_paused", ()] == 2
        assert samples["arena_entries", ()] == 2


def test_healthz_is_503_when_the_log_cannot_be_written(tmp_path: Path) -> None:
    # A failed write sets the session's failure (and stops the host): stand that state in
    # for one request, without breaking a disk, then take it back.
    with hosted(tmp_path, market=False) as h, h.client() as anon:
        session = h.host.session
        assert session is not None
        session.failure = LogWriteError("a test: the disk is full")
        try:
            r = anon.get("/healthz")
            assert (r.status_code, r.json()["ok"]) == (503, False)
        finally:
            session.failure = None
        assert anon.get("/healthz").status_code == 200


def test_two_hosts_in_one_process_keep_their_own_series(tmp_path: Path) -> None:
    one, two = Dials(), Dials()
    one.outcome("order", None)
    assert b'arena_inputs_total{kind="order",outcome="accepted",reason=""} 1.0' in one.scrape()
    assert b"arena_inputs_total{" not in two.scrape()


def _parses(words: list[str]) -> None:
    """``arena host ...`` as written: arena's own parser takes it."""
    assert Path(words[0]).name == "arena" and words[1] == "host", words
    group: Any = typer.main.get_command(app)
    group.commands["host"].make_context("arena", words[2:])


def test_the_unit_and_the_image_run_arena_host_with_options_it_has() -> None:
    # (the unit file and the Dockerfile are not run here: their command lines are parsed)
    unit = (ROOT / "deploy/arena-host.service").read_text()
    exec_start = re.search(r"^ExecStart=((?:.*\\\n)*.*)$", unit, re.M)
    assert exec_start is not None
    _parses(shlex.split(exec_start.group(1).replace("\\\n", " ")))
    assert re.search(r"^Restart=on-failure$", unit, re.M)
    assert re.search(r"^User=arena$", unit, re.M)
    docker = (ROOT / "deploy/Dockerfile").read_text()
    entry = re.search(r"^ENTRYPOINT (.*)$", docker, re.M)
    cmd = re.search(r"^CMD (.*)$", docker, re.M)
    assert entry is not None and cmd is not None
    _parses(json.loads(entry.group(1)) + json.loads(cmd.group(1)))
    assert "pip install -q --no-compile -e ." in docker  # the README's first command's form
