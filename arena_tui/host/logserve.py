"""``GET /v1/log``: the season's input log, served as it stands, whole and durable lines only.

Why this module exists: anyone may check a season by replaying its log (``arena verify``),
so the host serves it, public like the scores (only key hashes are in it). What it serves
is never more than the session's ``durable_size``, the bytes written and fsynced, all whole
lines (a torn tail is cut at start, before anything is served), captured when the request
arrives: a reader never sees a line the server could still lose, nor half of one. The body
is sent from the file by a worker thread (``os.sendfile``, :mod:`arena_tui.host.offload`),
never through the event loop the orders share: a season's log may be gigabytes and its
readers many.

A follower reads on from where it stopped, by ``Range: bytes=N-`` (206, ``Content-Range``)
or ``?offset=N`` (200): see :func:`byte_slice` for every case and docs/api.md for the table.
"""

from __future__ import annotations

import re
from pathlib import Path

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from arena_tui.host import offload

NDJSON = "application/x-ndjson"
MAX_DIGITS = 18
_RANGE = re.compile(r"bytes=(?:(\d{1,18})-(\d{1,18})?|-(\d{1,18}))", re.IGNORECASE)


class Refused(Exception):
    """The request cannot be served: 400 (malformed) or 416 (outside the log)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def byte_slice(size: int, range_header: str | None, offset: str | None) -> tuple[int, int, int]:
    """(status, start, end): answer ``status`` with the bytes ``[start, end)`` of a log of
    ``size`` durable bytes; Refused(400 or 416) if it cannot be served.

    - neither: 200, the whole log;
    - ``Range: bytes=N-``: 206 from N to the end; ``bytes=N-M``: 206 from N to M inclusive
      (M clipped to the end); ``bytes=-K``: 206, the last K bytes; N at or past the end,
      M before N, or K of 0: 416 (nothing to send);
    - ``?offset=N``: 200 from N to the end (empty when N is the size); N past the end: 416;
    - both, several ranges, another unit, anything else: 400.
    """
    if range_header is not None and offset is not None:
        raise Refused(400, "give Range or ?offset, not both")
    if offset is not None:
        if not offset.isascii() or not offset.isdigit() or len(offset) > MAX_DIGITS:
            raise Refused(400, "query parameter offset: want a non-negative integer (bytes)")
        start = int(offset)
        if start > size:
            raise Refused(416, f"offset {start} is past the log's {size} bytes")
        return 200, start, size
    if range_header is None:
        return 200, 0, size
    m = _RANGE.fullmatch(range_header.strip())
    if m is None:
        why = "one range only" if "," in range_header else "want bytes=N-, bytes=N-M or bytes=-K"
        raise Refused(400, f"Range {range_header.strip()[:60]!r}: {why}")
    first, last, suffix = m.groups()
    if suffix is not None:
        count = int(suffix)
        if count == 0 or size == 0:
            raise Refused(416, f"Range {range_header.strip()}: no bytes to send")
        return 206, max(0, size - count), size
    start = int(first)
    if start >= size:
        raise Refused(416, f"Range starts at {start}; the log has {size} bytes")
    if last is not None and int(last) < start:
        raise Refused(416, f"Range ends at {last}, before its start {start}")
    end = size if last is None else min(size, int(last) + 1)
    return 206, start, end


def log_headers(size: int) -> dict[str, str]:
    """The headers of every answer of ``GET /v1/log``."""
    return {"Accept-Ranges": "bytes", "Arena-Log-Size": str(size)}


class LogSlice(Response):
    """The bytes ``[start, end)`` of the log file as a response body: sent by a worker
    thread where the server offers ``arena.sendfile``, else read in pieces in its pool."""

    media_type = NDJSON

    def __init__(self, path: Path, start: int, end: int, status: int, headers: dict[str, str]):
        super().__init__(None, status, headers, NDJSON)
        self.path, self.start, self.end = path, start, end

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = {"type": "http.response.start", "status": self.status_code}
        await send(start | {"headers": self.raw_headers})
        count = self.end - self.start
        if count and offload.EXTENSION in scope.get("extensions", {}):
            message = {"type": offload.EXTENSION, "path": str(self.path)}
            await send(message | {"offset": self.start, "count": count})
            return
        async for piece in offload.pieces(self.path, self.start, self.end):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def log_response(path: Path, size: int, status: int, start: int, end: int, head: bool) -> Response:
    """The bytes ``[start, end)`` of the log (headers only for a HEAD)."""
    headers = log_headers(size)
    headers["Content-Length"] = str(end - start)
    if status == 206:
        headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
    if head:
        return Response(b"", status, headers=headers, media_type=NDJSON)
    return LogSlice(path, start, end, status, headers)
