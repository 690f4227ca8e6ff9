"""The hosted season's public answers over HTTP: ``/v1/season``, its file, scores, the log.

Every way the host can fail to answer as an arena host does (unreachable, an HTML page, a
404, a body that is not the JSON expected, a log that shrank) is one :class:`VerifyError`
line naming the URL, never a traceback. A server that does not answer as an arena host
at all (any other page, any other JSON, an error that is not the API's) is one line,
``URL: not an arena host (why)`` (:class:`NotArenaHost`), and nothing is compared: its
``/v1/season`` must be the API's object (an ``id``, a 64-hex ``rules_sha256``, integer
``start`` and ``end``), its ``/v1/scores`` the API's rows, its errors the API's
``{"error": ...}``, before a difference can be reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import httpx

from arena_tui.util.errors import ArenaError

TIMEOUT_S = 30.0
_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")
_UNSATISFIED = re.compile(r"bytes \*/(\d+)")
_SHA256 = re.compile(r"[0-9a-f]{64}")


class VerifyError(ArenaError):
    """The host cannot be verified: unreachable, not an arena host, or a broken answer."""


class NotArenaHost(VerifyError):
    """The URL answers, but not as an arena host does: ``URL: not an arena host (why)``."""

    def __init__(self, url: str, why: str) -> None:
        super().__init__(f"{url}: not an arena host ({why})")


def base_url(url: str) -> str:
    """``url`` without a trailing slash; VerifyError unless it is http(s)://host..."""
    text = url.strip().rstrip("/")
    if not re.match(r"^https?://[^/\s]+", text):
        raise VerifyError(f"{url!r} is not an http(s) URL (for example http://127.0.0.1:8000)")
    return text


class Remote:
    """One host's public endpoints (no key is needed or sent)."""

    def __init__(self, url: str, client: httpx.Client | None = None) -> None:
        self.url = base_url(url)
        self.http = client or httpx.Client(base_url=self.url, timeout=TIMEOUT_S)

    def close(self) -> None:
        self.http.close()

    def where(self, path: str) -> str:
        return self.url + path

    def _send(self, path: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except httpx.TimeoutException:
            raise VerifyError(f"{self.where(path)}: no answer in {TIMEOUT_S:g} s") from None
        except httpx.TransportError as exc:
            why = str(exc) or type(exc).__name__
            raise VerifyError(f"cannot reach {self.where(path)}: {why}") from None

    def _get(self, path: str) -> httpx.Response:
        r: httpx.Response = self._send(path, lambda: self.http.get(path))
        if r.status_code != 200:
            raise self._refused(path, r)
        return r

    def _refused(self, path: str, r: httpx.Response) -> VerifyError:
        """A status other than the one wanted: the API's own error (an arena host
        without this endpoint, say), or not an arena host at all."""
        kind = r.headers.get("content-type", "").split(";")[0] or "no content type"
        doc = _json_of(r) if kind == "application/json" else None
        if not isinstance(doc, dict) or not isinstance(doc.get("error"), str):
            return NotArenaHost(self.url, f"GET {path} answered HTTP {r.status_code}, {kind}")
        detail = doc.get("detail")
        said = doc["error"] + (f": {_short(detail)}" if isinstance(detail, str) else "")
        return VerifyError(f"{self.where(path)}: HTTP {r.status_code} {said}")

    def _json(self, path: str) -> dict[str, Any]:
        r = self._get(path)
        doc = _json_of(r)
        if not isinstance(doc, dict):
            kind = r.headers.get("content-type", "").split(";")[0] or "no content type"
            raise NotArenaHost(self.url, f"GET {path} answered {kind}, not a JSON object")
        return doc

    def season(self) -> dict[str, Any]:
        """``/v1/season``, the answer that says the URL is an arena host (or not)."""
        doc = self._json("/v1/season")
        wrong = [name for name, ok in _SEASON_FIELDS.items() if not ok(doc.get(name))]
        if wrong:
            raise NotArenaHost(
                self.url, f"GET /v1/season is not the API's season: no valid {', '.join(wrong)}"
            )
        return doc

    def scores(self) -> dict[str, Any]:
        doc = self._json("/v1/scores")
        rows = doc.get("rows")
        season, final = doc.get("season"), doc.get("final")
        if (
            not isinstance(season, str)
            or not isinstance(final, bool)
            or not isinstance(rows, list)
            or not all(_is_row(r) for r in rows)
        ):
            raise NotArenaHost(
                self.url,
                "GET /v1/scores is not the API's score rows (a season, final, and rows "
                "with an entry, a day and a mark t)",
            )
        return doc

    def season_file(self) -> bytes:
        path = "/v1/season/file"
        r = self._get_any(path)
        if r.status_code != 200:
            raise self._refused(path, r)
        return r.content

    def _get_any(self, path: str) -> httpx.Response:
        r: httpx.Response = self._send(path, lambda: self.http.get(path))
        return r

    def read_log(self, offset: int, sink: Callable[[bytes], None]) -> int:
        """Stream the log's bytes from ``offset`` into ``sink``; return the log's size.

        The host answers ``Range: bytes=N-`` with 206 (the bytes from N) or 416 (nothing
        past N). A size below ``offset`` means the log is not the one being read.
        """
        path = "/v1/log"

        def fetch() -> int:
            headers = {"Range": f"bytes={offset}-"}
            with self.http.stream("GET", path, headers=headers) as r:
                return self._log_answer(r, offset, sink)

        size: int = self._send(path, fetch)
        return size

    def _log_answer(self, r: httpx.Response, offset: int, sink: Callable[[bytes], None]) -> int:
        path = "/v1/log"
        content_range = r.headers.get("content-range", "")
        if r.status_code == 416:
            m = _UNSATISFIED.fullmatch(content_range)
            if m is None:
                raise VerifyError(f"{self.where(path)}: 416 without Content-Range: bytes */SIZE")
            size = int(m.group(1))
            self._not_shrunk(size, offset)
            return size
        if r.status_code == 206:
            m = _RANGE.fullmatch(content_range)
            if m is None or int(m.group(1)) != offset:
                raise VerifyError(
                    f"{self.where(path)}: asked for the bytes from {offset}, got "
                    f"Content-Range {content_range!r}"
                )
            size = int(m.group(3))
            self._not_shrunk(size, offset)
            for chunk in r.iter_bytes():
                sink(chunk)
            return size
        if r.status_code == 200 and r.headers.get("content-type", "").startswith(
            ("application/x-ndjson", "application/jsonl", "application/octet-stream", "text/")
        ):  # a server that ignores Range: skip what is held
            skip = offset
            for chunk in r.iter_bytes():
                if skip >= len(chunk):
                    skip -= len(chunk)
                    continue
                sink(chunk[skip:])
                skip = 0
            if skip:
                self._not_shrunk(offset - skip, offset)
            return int(r.headers.get("arena-log-size", offset))
        r.read()
        raise self._refused(path, r)

    def _not_shrunk(self, size: int, offset: int) -> None:
        if size < offset:
            raise VerifyError(
                f"{self.where('/v1/log')}: the log changed under us: it holds {size} bytes "
                f"now, {offset} were read before (a new log, or a restarted season?)"
            )


def _json_of(r: httpx.Response) -> Any:
    try:
        return r.json()
    except ValueError:  # (not JSON, or not UTF-8)
        return None


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 200 else line[:199] + "…"


def _is_int(v: Any) -> bool:
    return type(v) is int


_SEASON_FIELDS: dict[str, Callable[[Any], bool]] = {
    "id": lambda v: isinstance(v, str) and v != "",
    "rules_sha256": lambda v: isinstance(v, str) and _SHA256.fullmatch(v) is not None,
    "start": _is_int,
    "end": _is_int,
}


def _is_row(r: Any) -> bool:
    return (
        isinstance(r, dict)
        and isinstance(r.get("entry"), str)
        and type(r.get("day")) is int
        and type(r.get("t")) is int
    )
