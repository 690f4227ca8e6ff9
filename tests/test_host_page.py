"""The season page (``GET /`` on the host), opened in headless Chromium against a real host.

A host on 127.0.0.1 (``tests.hostkit``: fed by hand, marks every second) serves the page;
the browser loads it with every request to another origin refused and recorded. The page
must show the score rows exactly as ``/v1/scores`` serves them (order and values), the
paper label and the rules hash, follow new marks and fills without a reload, keep a
hostile note and a hostile entry name as text, and carry its Content-Security-Policy.
Where no Chromium exists the browser tests skip, saying how to get one.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena_tui.host.clients import ReaderOptions, parse_trusted
from arena_tui.host.page import script_json
from arena_tui.host.store import db_path
from arena_tui.record.feed import wall_ms
from tests.browserkit import launched
from tests.hostkit import Hosted, hosted, order, wait_until

HOSTILE_NOTE = "<img src=x onerror=window.__pwned=1>"
HOSTILE_NAME = "<img src=y onerror=window.__pwned=2>"
WAIT_MS = 15_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched("the season page")


def open_page(browser: Any, url: str, *, bypass_csp: bool = False) -> Any:
    """The page at ``url`` in a new tab; ``.messages``: console errors and warnings and
    uncaught errors; ``.requests``: requests to any other origin (refused); ``.scores``:
    every ``/v1/scores`` answer the page was served, decoded. With
    ``bypass_csp`` the page's Content-Security-Policy is not enforced (what keeps run text
    text must be the page's own script, not the policy). Conditions to wait for are
    functions (``() => ...``): the policy refuses Playwright's eval of a bare expression."""
    size = {"width": 1400, "height": 900}
    pg = browser.new_context(viewport=size, bypass_csp=bypass_csp).new_page()
    pg.messages = messages = []
    pg.requests = requests = []
    pg.scores = scores = []
    pg.scores_urls = scores_urls = []
    pg.on(
        "console",
        lambda m: messages.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else 0,
    )
    pg.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))

    def refuse(route: Any) -> None:
        if route.request.url.startswith(url + "/v1/scores"):
            answer = route.fetch()
            scores.append(answer.json())
            scores_urls.append(route.request.url)
            route.fulfill(response=answer)
        elif route.request.url.startswith(url):
            route.continue_()
        else:
            requests.append(route.request.url)
            route.abort()

    pg.route("**/*", refuse)
    pg.goto(url + "/")
    return pg


def latest_day(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the latest day in a served scores answer, in its order, without ``day``
    (the page shows the day once, above the table)."""
    day = max(r["day"] for r in doc["rows"])
    return [{k: v for k, v in r.items() if k != "day"} for r in doc["rows"] if r["day"] == day]


def served_rows(anon: httpx.Client) -> list[dict[str, Any]]:
    return latest_day(anon.get("/v1/scores").json())


def shown_rows(pg: Any) -> list[dict[str, Any]]:
    """The score table as the page shows it: each cell's served value (``data-raw``)."""
    keys = ["rank", "entry", "equity", "return", "mdd", "score", "eligible", "fill_days"]
    keys += ["active_share", "t"]
    cells = pg.evaluate(
        """() => Array.from(document.querySelectorAll('#scores-body tr')).map(tr =>
             Array.from(tr.children).map(td => JSON.parse(td.dataset.raw)))"""
    )
    return [dict(zip(keys, row, strict=True)) for row in cells]


# The host's default per-client limits: the browser (from 127.0.0.1) is counted at them.
# The test's own reads poll fast (wait_until), so they come as a trusted proxy's
# (127.0.0.2) with a new X-Forwarded-For each: fresh clients, never limited, leaving the
# browser's windows to the browser alone. The all-clients budget is off here, or those
# fast polls would spend it under the browser (test_host_readers holds a page's polls to
# the default budget).
PAGE_READERS = ReaderOptions(trusted=parse_trusted(["127.0.0.2"]), total=None)


_SEQ = itertools.count()


def _fresh_client(request: httpx.Request) -> None:
    n = next(_SEQ)
    request.headers["X-Forwarded-For"] = f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"


class PageHosted(Hosted):
    def client(self, name: str | None = None) -> httpx.Client:
        c = super().client(name)
        local = httpx.HTTPTransport(local_address="127.0.0.2")
        return httpx.Client(
            base_url=c.base_url,
            headers=c.headers,
            timeout=c.timeout,
            transport=local,
            event_hooks={"request": [_fresh_client]},
        )


@pytest.fixture
def season_host(tmp_path: Path) -> Iterator[Hosted]:
    with hosted(tmp_path, mark_interval_ms=1000, readers=PAGE_READERS) as h:
        h.__class__ = PageHosted
        yield h
        # the browser polled at the defaults and was never refused
        other = httpx.HTTPTransport(local_address="127.0.0.3")
        with httpx.Client(base_url=h.url, transport=other) as c:
            assert "arena_public_limited_total{" not in c.get("/metrics").text


def test_the_page_shows_the_served_rows_and_follows_new_marks_and_fills(
    season_host: Hosted, browser: Any
) -> None:
    h = season_host
    with h.client() as anon, h.client("alice") as alice:
        wait_until(lambda: len(anon.get("/v1/scores").json()["rows"]) == 2, 20)
        season = anon.get("/v1/season").json()
        pg = open_page(browser, h.url)
        try:
            assert pg.title() == "arena season host-test"
            pg.wait_for_function(
                "() => document.querySelectorAll('#scores-body tr').length === 2", timeout=WAIT_MS
            )
            assert "PAPER" in pg.inner_text("#paper") and "no money" in pg.inner_text("#paper")
            assert pg.inner_text("#rules") == season["rules_sha256"]
            # the rows are exactly those of an answer the page was served, in its order
            shown = shown_rows(pg)
            assert shown in [latest_day(doc) for doc in pg.scores if doc["rows"]]
            assert [r["rank"] for r in shown] == [1, 2]
            # a new mark: a new row is served, and the page shows it without a reload
            t0 = shown[0]["t"]
            pg.wait_for_function(
                "(t) => Number(document.querySelector('#scores-body tr td:last-child')"
                ".dataset.raw) > t",
                arg=t0,
                timeout=WAIT_MS,
            )
            later = shown_rows(pg)
            assert later[0]["t"] > t0
            assert later in [latest_day(doc) for doc in pg.scores if doc["rows"]]
            assert all(s.startswith(h.url + "/v1/scores?day=") for s in pg.scores_urls[1:])
            # a fill: it comes into the fills table with its quote and note
            taker = alice.post("/v1/orders", json={**order(px=100_010, tif=3), "note": "go"})
            assert taker.status_code == 200
            h.book_after(taker.json()["activates_at"])
            pg.wait_for_function(
                "() => document.querySelectorAll('#fills-body tr').length === 1", timeout=WAIT_MS
            )
            assert pg.inner_text("#fills-body .note") == "go"
            assert pg.inner_text("#fills-body .quote").startswith("book level 0: ")
            pg.wait_for_function(
                "() => document.querySelector('#feed-body tr[data-coin=BTC] td:last-child')"
                ".textContent === 'yes'",
                timeout=WAIT_MS,
            )
            assert pg.messages == [] and pg.requests == []
        finally:
            pg.context.close()


def test_a_hostile_note_and_entry_name_stay_text(season_host: Hosted, browser: Any) -> None:
    h = season_host
    with h.client() as anon, h.client("alice") as alice:
        taker = alice.post("/v1/orders", json={**order(px=100_010, tif=3), "note": HOSTILE_NOTE})
        assert taker.status_code == 200  # (angle brackets are not control characters)
        h.book_after(taker.json()["activates_at"])
        wait_until(lambda: len(anon.get("/v1/scores").json()["rows"]) == 2, 20)
        day = max(r["day"] for r in anon.get("/v1/scores").json()["rows"])
        # the scores file is served as it is on disk, whoever wrote it: a hostile name in it
        row = (day, wall_ms(), HOSTILE_NAME, 3, 10**10, 0, 0, 0, 0, 0, 0)
        with sqlite3.connect(db_path(h.log)) as db:
            db.execute("INSERT INTO scores VALUES (?,?,?,?,?,?,?,?,?,?,?)", row)
        assert HOSTILE_NAME in [r["entry"] for r in served_rows(anon)]
        pg = open_page(browser, h.url, bypass_csp=True)  # (the policy would stop onerror too)
        try:
            pg.wait_for_function(
                "() => document.querySelectorAll('#fills-body tr').length === 1 && "
                "document.querySelectorAll('#scores-body tr').length === 3",
                timeout=WAIT_MS,
            )
            assert pg.inner_text("#fills-body .note") == HOSTILE_NOTE
            names = pg.eval_on_selector_all(
                "#scores-body .entry-name", "tds => tds.map(td => td.textContent)"
            )
            assert HOSTILE_NAME in names
            assert pg.evaluate("document.querySelectorAll('img').length") == 0
            assert pg.evaluate("typeof window.__pwned") == "undefined"
            assert pg.requests == []  # (an <img src=x> would have asked for x)
        finally:
            pg.context.close()


def test_the_page_has_its_csp_and_no_external_url(season_host: Hosted) -> None:
    with season_host.client() as anon:
        r = anon.get("/")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "connect-src 'self'" in csp
        assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'", csp)
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert r.headers["x-content-type-options"] == "nosniff"
        text = r.text
        for pattern in (r'src="http', r"href=\"http", r"url\(http", r"//cdn", r"@import"):
            assert re.search(pattern, text, re.IGNORECASE) is None, pattern
        # the same bytes for every reader (rendered once)
        assert anon.get("/").content == r.content
        assert anon.head("/").headers["content-security-policy"] == csp


def test_script_json_holds_no_markup_or_line_separator() -> None:
    doc = {"id": "</script><!--&\u2028\u2029>"}
    text = script_json(doc)
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == doc


def test_the_page_on_the_reader_port_renders_and_its_polls_follow(
    tmp_path: Path, browser: Any
) -> None:
    """``--readers-port``: the page served by the reader process polls that port (relative
    URLs), shows its rows and follows new marks and fills as on the main port."""
    with hosted(tmp_path, mark_interval_ms=1000, readers=PAGE_READERS, readers_port=0) as h:
        h.__class__ = PageHosted
        reader = h.host.reader
        assert reader is not None and reader.started.wait(20)
        local = httpx.HTTPTransport(local_address="127.0.0.2")
        events = {"request": [_fresh_client]}
        with (
            httpx.Client(base_url=reader.url, transport=local, event_hooks=events) as anon,
            h.client("alice") as alice,
        ):
            wait_until(lambda: len(anon.get("/v1/scores").json()["rows"]) == 2, 20)
            pg = open_page(browser, reader.url)
            try:
                assert pg.title() == "arena season host-test"
                pg.wait_for_function(
                    "() => document.querySelectorAll('#scores-body tr').length === 2",
                    timeout=WAIT_MS,
                )
                shown = shown_rows(pg)
                assert shown in [latest_day(doc) for doc in pg.scores if doc["rows"]]
                pg.wait_for_function(
                    "(t) => Number(document.querySelector('#scores-body tr td:last-child')"
                    ".dataset.raw) > t",
                    arg=shown[0]["t"],
                    timeout=WAIT_MS,
                )
                assert all(s.startswith(reader.url + "/v1/scores") for s in pg.scores_urls)
                taker = alice.post("/v1/orders", json={**order(px=100_010, tif=3), "note": "go"})
                h.book_after(taker.json()["activates_at"])
                pg.wait_for_function(
                    "() => document.querySelectorAll('#fills-body tr').length === 1",
                    timeout=WAIT_MS,
                )
                assert pg.inner_text("#fills-body .note") == "go"
                assert pg.messages == [] and pg.requests == []
            finally:
                pg.context.close()
