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

from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import httpx
import msgspec
from msgspec import Struct

from arena_tui.util.text import printable_doc

DAY_MS = 86_400_000
TIMEOUT = httpx.Timeout(5.0, connect=3.0)


class Market(Struct, frozen=True):
    coin: str
    asset: int
    szDecimals: int


class Limits(Struct, frozen=True):
    rate_limit_requests: int
    rate_limit_window_ms: int


class SeasonDoc(Struct, frozen=True):
    id: str
    start: int
    end: int
    markets: tuple[Market, ...]
    rules_sha256: str
    t: int  # the server's clock
    state: Literal["before", "running", "over"]
    limits: Limits
    paper: bool | None = None  # the host says its season is paper (None: an older host)


class ScoreRow(Struct, frozen=True):
    day: int
    t: int
    entry: str
    rank: int
    equity: int  # e6
    ret: int = msgspec.field(name="return")  # e8
    mdd: int  # e8
    score: int  # e8
    eligible: bool
    fill_days: int
    active_share: int  # e8


class ScoresDoc(Struct, frozen=True):
    season: str
    final: bool
    rows: tuple[ScoreRow, ...]
    paper: bool | None = None  # the rows are paper trading's (None: an older host)


class Level(Struct, frozen=True):
    px: str
    sz: str
    n: int


class BookDoc(Struct, frozen=True):
    coin: str
    asset: int
    t: int | None  # receive time (None: no book yet)
    time: int | None  # the exchange's time
    levels: tuple[tuple[Level, ...], tuple[Level, ...]]
    mark: int | None  # e8
    stale: bool


class Position(Struct, frozen=True):
    asset: int
    coin: str
    sz: int  # e8
    mark: int | None  # e8


class AccountDoc(Struct, frozen=True):
    entry: str
    t: int
    cash: int
    equity: int
    positions: tuple[Position, ...]
    reserved: int
    exposure: int
    cap: int
    open_orders: int
    paused: bool
    peak: int
    mdd: int
    marks: int
    active_marks: int
    fill_days: int


class OpenOrder(Struct, frozen=True):
    oid: int
    coin: str
    isBuy: bool
    limitPx: int
    sz: int
    reduceOnly: bool
    filled: int
    state: str
    received: int
    reserve: int
    cancel_at: int | None
    expires_at: int


class OrdersDoc(Struct, frozen=True):
    orders: tuple[OpenOrder, ...]


class _ErrorDoc(Struct):
    error: str = "?"
    detail: str | None = None


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

    def latest_scores(self, now: int) -> tuple[ScoresDoc, tuple[ScoreRow, ...]]:
        """The rows of the latest day that has any (today's, asked for first), as served."""
        doc = self.scores(now // DAY_MS)
        if not doc.rows:
            doc = self.scores()
        return doc, latest_day(doc.rows)

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


def latest_day(rows: tuple[ScoreRow, ...]) -> tuple[ScoreRow, ...]:
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
