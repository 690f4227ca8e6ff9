"""What arena-tui's spectator reads from a running ``arena host``, over its HTTP API only.

Why this module exists: the spectator must show exactly what the host serves (its score
rows are never re-ranked or recomputed here), must not crash on a host that is down,
stopping or not an arena host at all, and must not share Python objects with the server.
:class:`HostClient` makes the reads (``docs/api.md``) and decodes each answer strictly into
frozen Structs (unknown fields are ignored, so a newer host still reads); what goes wrong
is one of three exceptions, each with a line a person can read:

- :class:`HostDown`: no answer (refused, timed out, reset), a 5xx, or an answer that is not
  the API's JSON: the link is down, and the spectator retries with backoff;
- :class:`Refused`: a 4xx the API sends on purpose (401 wrong key, 404 unknown coin, 429
  with its ``Retry-After``): the link is fine, one panel says why it is empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import msgspec

from arena_tui.util.text import printable_doc
from arena_tui.wire.api import (
    Account,
    BookOut,
    Error,
    Level,
    Limits,
    OpenOrder,
    Orders,
    Position,
    ScoreRow,
    Scores,
    SeasonInfo,
)

__all__ = [
    "AccountDoc",
    "BookDoc",
    "HostClient",
    "HostDown",
    "Level",
    "OpenOrder",
    "OrdersDoc",
    "Position",
    "Refused",
    "ScoreRow",
    "ScoresDoc",
    "SeasonDoc",
    "host_url",
    "latest_day",
    "paper_label",
]

TIMEOUT = httpx.Timeout(5.0, connect=3.0)

# The answers as the host encodes them (``arena_tui.wire.api``), by the names the panels use.
AccountDoc = Account
BookDoc = BookOut
OrdersDoc = Orders

# What a host older than a field does not send is read as None (each override only
# widens a field of the wire's Struct; the fields are the wire's, never declared again).


class LimitsDoc(Limits, frozen=True, kw_only=True):
    body_max_bytes: int | None = None  # type: ignore[assignment]


class SeasonDoc(SeasonInfo, frozen=True, kw_only=True):
    """``GET /v1/season`` as read from any host (a field an older host omits: None)."""

    rules: dict[str, Any] | None = None  # type: ignore[assignment]
    paper: bool | None = None  # type: ignore[assignment]  # (None: the host did not say)
    limits: LimitsDoc


class ScoresDoc(Scores, frozen=True, kw_only=True):
    """``GET /v1/scores`` as read: ``paper`` None from a host that does not say."""

    paper: bool | None = None  # type: ignore[assignment]


class _ErrorDoc(Error, frozen=True, kw_only=True):
    error: str = "?"  # an error without its code still reads


class HostDown(Exception):
    """No usable answer: the host is down, stopping, or not an arena host."""


class Refused(Exception):
    """A 4xx from the API: ``status``, the API's ``error`` code and any ``Retry-After``."""

    def __init__(self, status: int, code: str, retry_after_s: float | None = None) -> None:
        super().__init__(f"{status} {code}")
        self.status = status
        self.code = code
        self.retry_after_s = retry_after_s


T = TypeVar("T")


def host_url(text: str) -> str:
    """A host's base URL from what a person typed (``127.0.0.1:8000`` is ``http://``...)."""
    text = text.strip().rstrip("/")
    if not text:
        raise ValueError("give the host's URL, e.g. http://127.0.0.1:8000")
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{text!r} is not an http(s) URL like http://127.0.0.1:8000")
    try:
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        raise ValueError(f"{text!r}: the port is not a number from 0 to 65535") from None
    if parts.path or parts.query:
        raise ValueError(f"{text!r}: give the host's root URL, without a path")
    return text


class HostClient:
    """The reads of ``docs/api.md``; ``key`` (an entry's) is sent where one is given."""

    def __init__(
        self, url: str, key: str | None = None, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.url = url
        self.key = key
        self.http = httpx.Client(base_url=url, timeout=TIMEOUT, transport=transport)

    def close(self) -> None:
        self.http.close()

    def _get(self, path: str, kind: type[T], *, keyed: bool = False, **params: Any) -> T:
        headers = {"Authorization": f"Bearer {self.key}"} if keyed and self.key else {}
        try:
            r = self.http.get(path, headers=headers, params=params or None)
        except httpx.TimeoutException:
            raise HostDown("timed out") from None
        except httpx.HTTPError as exc:
            raise HostDown(_reason(exc)) from None
        if r.status_code >= 500:
            raise HostDown(f"GET {path} answered {r.status_code}")
        try:
            # what a host sends is shown on this terminal: no string of it may drive it
            doc = printable_doc(msgspec.json.decode(r.content))
            if r.status_code >= 400:
                err = msgspec.convert(doc, type=_ErrorDoc)
                retry = r.headers.get("retry-after", "")
                raise Refused(r.status_code, err.error, float(retry) if retry.isdigit() else None)
            return msgspec.convert(doc, type=kind)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            why = f"{r.status_code}, not the arena API's JSON"
            raise HostDown(f"GET {path} answered {why} (is it an arena host?): {exc}") from None

    def season(self) -> SeasonDoc:
        return self._get("/v1/season", SeasonDoc)

    def scores(self, day: int | None = None) -> ScoresDoc:
        if day is None:
            return self._get("/v1/scores", ScoresDoc)
        return self._get("/v1/scores", ScoresDoc, day=str(day))

    def book(self, coin: str) -> BookDoc:
        return self._get(f"/v1/book/{coin}", BookDoc, keyed=True)

    def account(self) -> AccountDoc:
        return self._get("/v1/account", AccountDoc, keyed=True)

    def orders(self) -> OrdersDoc:
        return self._get("/v1/orders", OrdersDoc, keyed=True)


def paper_label(paper: bool | None) -> str:
    """What the host says of money at stake, as people read it ("" if it says nothing)."""
    if paper is None:
        return ""
    return "paper" if paper else "not paper"


def latest_day(rows: Sequence[ScoreRow]) -> tuple[ScoreRow, ...]:
    """The rows of the last day among ``rows``, in the order served."""
    if not rows:
        return ()
    last = max(r.day for r in rows)
    return tuple(r for r in rows if r.day == last)


def _reason(exc: httpx.HTTPError) -> str:
    text = str(exc) or type(exc).__name__
    if "refused" in text.lower():
        return "connection refused"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect: {text}"
    return text
