"""The hosted season's public answers over HTTP: ``/v1/season``, its file, scores, the log.

Every way the host can fail to answer as an arena host does (unreachable, an HTML page, a
404, a body that is not the JSON expected, a log that shrank) is one :class:`VerifyError`
line naming the URL, never a traceback.
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


class VerifyError(ArenaError):
    """The host cannot be verified: unreachable, not an arena host, or a broken answer."""


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
        kind = r.headers.get("content-type", "").split(";")[0] or "no content type"
        if r.status_code == 404 or kind != "application/json":
            return VerifyError(
                f"{self.where(path)}: HTTP {r.status_code} ({kind}): not an arena host, or "
                "one without this endpoint (arena host serves it)"
            )
        return VerifyError(f"{self.where(path)}: HTTP {r.status_code}: {r.text[:200]}")

    def _json(self, path: str, keys: tuple[str, ...]) -> dict[str, Any]:
        r = self._get(path)
        try:
            doc = r.json()
        except ValueError:
            doc = None
        if not isinstance(doc, dict) or any(k not in doc for k in keys):
            raise VerifyError(
                f"{self.where(path)}: not an arena host's answer (want a JSON object with "
                f"{', '.join(keys)})"
            )
        return doc

    def season(self) -> dict[str, Any]:
        return self._json("/v1/season", ("id", "rules_sha256", "start", "end"))

    def scores(self) -> dict[str, Any]:
        doc = self._json("/v1/scores", ("season", "final", "rows"))
        rows = doc["rows"]
        if not isinstance(rows, list) or not all(_is_row(r) for r in rows):
            raise VerifyError(
                f"{self.where('/v1/scores')}: rows must be objects with an entry, a day and "
                "a mark t"
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


def _is_row(r: Any) -> bool:
    return (
        isinstance(r, dict)
        and isinstance(r.get("entry"), str)
        and type(r.get("day")) is int
        and type(r.get("t")) is int
    )
