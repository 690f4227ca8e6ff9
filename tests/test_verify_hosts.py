"""``arena verify`` against servers that are not arena hosts: one line, nothing compared.

Each server is a plain HTTP server on 127.0.0.1 (the standard library's), answering every
path with one page, or a few paths with answers that look like the API's and are not. It
must never come out as a score difference ("DIFFERENT: ...", which says an arena host
published something its log does not make): it is ``URL: not an arena host (why)``, one
line, exit 1.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from arena_tui.season.file import load_season, season_doc
from arena_tui.verify.remote import NotArenaHost, Remote, VerifyError
from arena_tui.verify.verifier import Verifier
from tests.clirun import ROOT, arena, one_error_line

Page = tuple[int, str, bytes]  # status, content type, body
HTML: Page = (200, "text/html", b"<!doctype html><title>hello</title><p>a web page</p>")
OTHER_JSON: Page = (200, "application/json", b'{"status": "ok", "version": "1.2.3"}')
NOT_FOUND: Page = (404, "text/html", b"<html><body>404 Not Found</body></html>")
SEASON0 = load_season(ROOT / "seasons/season0.toml")


@contextmanager
def serving(pages: dict[str, Page], default: Page) -> Iterator[str]:
    """A plain HTTP server on a free loopback port: ``pages`` by path, else ``default``."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, kind, body = pages.get(self.path.split("?")[0], default)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args: object) -> None:
            pass  # (quiet)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def json_page(doc: object) -> Page:
    return (200, "application/json", json.dumps(doc).encode())


def season_page() -> Page:
    """What an arena host answers to GET /v1/season (the fields verify reads)."""
    info = {"id": SEASON0.id, "rules_sha256": SEASON0.rules_sha256}
    return json_page(info | {"start": SEASON0.start, "end": SEASON0.end, "state": "running"})


def season_file_page() -> Page:
    return json_page(season_doc(SEASON0))


# A server whose /v1/season carries the API's field names with other values, and a season
# file that loads: before the check, the unknown "rules_sha256" made a rules difference.
LOOKALIKE = {
    "/v1/season": json_page({"id": "prod", "rules_sha256": "v2", "start": "2026", "end": "?"}),
    "/v1/season/file": season_file_page(),
}
# An arena host's season and file, then answers that are not the API's.
SCORES_OTHER = {"/v1/season": season_page(), "/v1/season/file": season_file_page()}
SCORES = {"/v1/scores": json_page({"season": SEASON0.id, "final": False, "rows": []})}
LOG_HTML = SCORES_OTHER | SCORES | {"/v1/log": (200, "text/html", HTML[2] + b"\n")}
LOG_NO_LINE = SCORES_OTHER | SCORES | {"/v1/log": HTML}

CASES = {
    "a 404 page everywhere": ({}, NOT_FOUND, "GET /v1/season answered HTTP 404, text/html"),
    "a web page everywhere": ({}, HTML, "GET /v1/season answered text/html, not a JSON object"),
    "other JSON everywhere": (
        {},
        OTHER_JSON,
        "GET /v1/season is not the API's season: no valid id, rules_sha256, start, end",
    ),
    "the API's names, other values": (
        LOOKALIKE,
        NOT_FOUND,
        "GET /v1/season is not the API's season: no valid rules_sha256, start, end",
    ),
    "other JSON for the scores": (
        SCORES_OTHER,
        OTHER_JSON,
        "GET /v1/scores is not the API's score rows",
    ),
    "a web page for the log": (LOG_HTML, NOT_FOUND, "GET /v1/log is not an arena log: bad header"),
    "a page of one unfinished line for the log": (
        LOG_NO_LINE,
        NOT_FOUND,
        f"GET /v1/log is not an arena log: {len(HTML[2])} bytes, no JSON line)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_server_that_is_not_an_arena_host_is_said_so_and_nothing_is_compared(
    case: str, tmp_path: Path
) -> None:
    pages, default, why = CASES[case]
    with serving(pages, default) as url:
        verifier = Verifier(Remote(url), tmp_path)
        try:
            with pytest.raises(NotArenaHost) as raised:
                verifier.once()
        finally:
            verifier.close()
    text = str(raised.value)
    assert text.startswith(f"{url}: not an arena host ({why}"), text
    assert "\n" not in text
    assert verifier.outcome is None or verifier.outcome.ok  # (no difference was reported)


def test_arena_verify_on_a_web_page_is_one_line_and_exit_1() -> None:
    with serving(LOOKALIKE, HTML) as url:
        done = arena("verify", url)
    line = one_error_line(done)
    assert done.returncode == 1 and done.stdout == ""
    assert line.startswith(f"arena: error: {url}: not an arena host (GET /v1/season"), line


def test_an_arena_hosts_own_error_is_not_called_another_server(tmp_path: Path) -> None:
    # a lockstep run serves no log: its 404 is the API's error, said as such
    detail = "a lockstep run serves no log: it is run.jsonl in the run's directory"
    pages = LOG_HTML | {
        "/v1/log": (
            404,
            "application/json",
            json.dumps({"error": "NotFound", "detail": detail}).encode(),
        )
    }
    with serving(pages, NOT_FOUND) as url:
        verifier = Verifier(Remote(url), tmp_path)
        try:
            with pytest.raises(VerifyError) as raised:
                verifier.once()
        finally:
            verifier.close()
    assert not isinstance(raised.value, NotArenaHost)
    assert str(raised.value) == f"{url}/v1/log: HTTP 404 NotFound: {detail}"
