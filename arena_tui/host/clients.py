"""The public endpoints' per-client limits: who a client is, and how much each may ask.

Why this module exists: the public reads (the log, the scores, the entries, the page...)
take no key, so the only fair unit is the client's address. Each public endpoint has its
own moving window per client (``--public-limit``): a reader that exhausts ``/v1/log``
still reads the scores, and one client's exhaustion never limits another. The season
page polls about 2.5 requests a second over five endpoints (each at most one a poll, two
s apart), well inside the defaults. A refused request is a 429 with ``Retry-After`` and
is not counted.

A client is the TCP peer's address (an IPv6 one by its /64, the least a host is given).
Behind a reverse proxy every peer is the proxy, so all readers would share one window:
``--trust-proxy ADDR`` names the proxies whose ``X-Forwarded-For`` is believed. Only then
is the header read, from its right end (what the nearest proxy appended) leftward past
the trusted proxies: the first other address is the client. A client can write anything
into the header it sends, but not to the right of what a trusted proxy appended, and an
untrusted peer's header is never read (uvicorn's own reading of it is off).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from arena_tui.host.ratelimit import MovingWindow, monotonic_ms

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

LOG = "/v1/log"
PUBLIC_PATHS = (  # the host's paths that take no key (the dials' two included)
    "/",
    "/openapi.json",
    "/v1/season",
    "/v1/season/file",
    "/v1/scores",
    LOG,
    "/v1/entries",
    "/v1/entries/{entry}/equity",
    "/v1/entries/{entry}/fills",
    "/healthz",
    "/metrics",
)
DEFAULT_LIMIT = (20, 10_000)  # requests per window (ms), each public endpoint, each client
DEFAULT_LOG_LIMIT = (10, 10_000)  # GET /v1/log's
DEFAULT_LOG_RATE = 50_000_000  # bytes/s of log bodies, all readers together
DEFAULT_TOTAL = (50, 1_000)  # public requests per window (ms), all clients together
UNBUDGETED = ("/healthz", "/metrics")  # the operator's probes: never refused for the crowd
_LIMIT = re.compile(r"(?:(/[^=\s]*)=)?(?:(off)|(\d{1,6})/(\d{1,5})s?)")


class LimitError(ValueError):
    """A --public-limit or --trust-proxy value that cannot be read (one line)."""


Limit = tuple[int, int] | None  # (requests, window ms); None: no limit


@dataclass(frozen=True)
class ReaderOptions:
    """The public side's dials (``arena host`` options, docs/operating.md)."""

    default: Limit = DEFAULT_LIMIT
    by_path: dict[str, Limit] = field(default_factory=lambda: {LOG: DEFAULT_LOG_LIMIT})
    trusted: tuple[Network, ...] = ()
    log_rate: int = DEFAULT_LOG_RATE
    total: Limit = DEFAULT_TOTAL  # all clients' public requests together (--public-total)

    def limit(self, path: str) -> Limit:
        return self.by_path.get(path, self.default)


def parse_limits(texts: Iterable[str], paths: Iterable[str]) -> tuple[Limit, dict[str, Limit]]:
    """``--public-limit`` values: ``N/S`` (every public endpoint: N requests in any S
    seconds per client), ``PATH=N/S`` (that endpoint), ``off`` or ``PATH=off``."""
    known = set(paths)
    default: Limit = DEFAULT_LIMIT
    by_path: dict[str, Limit] = {LOG: DEFAULT_LOG_LIMIT}
    parsed = []
    for text in texts:
        m = _LIMIT.fullmatch(text.strip())
        if m is None:
            raise LimitError(f"{text!r}: want N/SECONDS, PATH=N/SECONDS or off (e.g. 60/10)")
        path, off, n, s = m.groups()
        limit: Limit = None
        if not off:
            if int(n) < 1 or int(s) < 1:
                raise LimitError(f"{text!r}: at least 1 request in at least 1 s")
            limit = (int(n), int(s) * 1000)
        if path is not None and path not in known:
            raise LimitError(f"{text!r}: {path} is not a public endpoint ({', '.join(known)})")
        parsed.append((path, limit))
    for path, limit in sorted(parsed, key=lambda pl: pl[0] is not None):  # N/S first
        if path is None:
            default, by_path = limit, {}  # (every endpoint's, /v1/log's too)
        else:
            by_path[path] = limit
    return default, by_path


def parse_total(text: str) -> Limit:
    """``--public-total``: ``N/SECONDS`` (all clients together) or ``off``."""
    m = _LIMIT.fullmatch(text.strip())
    if m is None or m.group(1) is not None:
        raise LimitError(f"{text!r}: want N/SECONDS or off (e.g. 50/1)")
    _, off, n, s = m.groups()
    if off:
        return None
    if int(n) < 1 or int(s) < 1:
        raise LimitError(f"{text!r}: at least 1 request in at least 1 s")
    return (int(n), int(s) * 1000)


def parse_trusted(texts: Iterable[str]) -> tuple[Network, ...]:
    """``--trust-proxy`` values: addresses or networks (127.0.0.1, 10.0.0.0/8, ::1)."""
    out = []
    for text in texts:
        try:
            out.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise LimitError(f"--trust-proxy {text!r}: not an address or network") from None
    return tuple(out)


def _address(text: str) -> Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def client_key(peer: str | None, forwarded: str | None, trusted: tuple[Network, ...]) -> str:
    """The client a request counts against (module docstring)."""
    addr = _address(peer or "")
    if addr is None:
        return peer or "?"
    if trusted and forwarded and any(addr in net for net in trusted):
        for hop in reversed(forwarded.split(",")):
            hop_addr = _address(hop)
            if hop_addr is None:
                break  # (garbage from a proxy: count it against the proxy)
            addr = hop_addr
            if not any(addr in net for net in trusted):
                break
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((addr, 64), strict=False))
    return str(addr)


class PublicLimits:
    """One moving window per public endpoint, counted per client; and one for all public
    requests together (but the operator's probes), so that however many clients read,
    the event loop the orders share spends a bounded part of its time on them."""

    def __init__(self, options: ReaderOptions, clock: Callable[[], int] = monotonic_ms) -> None:
        self.options = options
        self.clock = clock
        self._windows: dict[str, MovingWindow | None] = {}
        total = options.total
        self.total = None if total is None else MovingWindow(*total, clock)

    def window(self, path: str) -> MovingWindow | None:
        if path not in self._windows:
            limit = self.options.limit(path)
            self._windows[path] = None if limit is None else MovingWindow(*limit, self.clock)
        return self._windows[path]

    def limits(self, path: str) -> bool:
        """Whether anything limits ``path``'s requests."""
        return self.window(path) is not None or (self.total is not None and path not in UNBUDGETED)

    def take(self, path: str, peer: str | None, forwarded: str | None) -> tuple[int, str]:
        """(0, "") if allowed (and counted in both), else (ms to wait, the limit in
        words); a refused request is counted in neither."""
        window = self.window(path)
        key = client_key(peer, forwarded, self.options.trusted)
        if window is not None:
            wait = window.wait(key)
            if wait:
                seconds = window.window_ms / 1000
                return (
                    wait,
                    f"{window.limit} requests to {path} in any {seconds:g} s from one client",
                )
        total = self.total
        if total is not None and path not in UNBUDGETED:
            wait = total.take("")
            if wait:
                seconds = total.window_ms / 1000
                return wait, f"{total.limit} public requests in any {seconds:g} s from all clients"
        if window is not None:
            window.take(key)
        return 0, ""
