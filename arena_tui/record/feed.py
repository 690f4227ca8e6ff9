"""The socket loop of ``arena record``: one WebSocket to Hyperliquid, kept up forever.

Why this module exists: connecting, subscribing, the heartbeat, silence detection and
the reconnect schedule are the only parts of the recorder that touch the network; they
hand every frame to ``arena_tui.record.recorder.Recorder``, which decides what is written.

- Subscribes ``l2Book``, ``trades`` and ``activeAssetCtx`` for every coin on each connection.
- Sends ``{"method":"ping"}`` every ``ping_s`` (Hyperliquid drops a client that has sent
  nothing for 60 s). Silence: no market data for ``silence_s`` (pongs do not count; a
  server that answers pings but streams nothing is as lost as a dead socket) closes the
  connection with reason ``silence``.
- Reconnects forever: capped exponential backoff with jitter (``Backoff``), reset once a
  connection has delivered market data. ``meta`` (the header's markets) is fetched the
  same way before the first connection: a failure worth retrying waits the same backoff.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from arena_tui.logs.meta import MetaUnavailable, fetch_meta_async
from arena_tui.record.clock import wall_ms as wall_ms  # its home: light, for commands
from arena_tui.record.recorder import Event, Recorder
from engine import Market

CHANNELS = ("l2Book", "trades", "activeAssetCtx")
PING = '{"method":"ping"}'
MAX_FRAME = 1 << 24  # a trades snapshot can be large; Hyperliquid's frames stay far below


@dataclass(frozen=True)
class FeedConfig:
    url: str
    coins: tuple[str, ...]
    ping_s: float = 30.0
    silence_s: float = 60.0
    open_timeout_s: float = 10.0
    close_timeout_s: float = 1.0


class Backoff:
    """Capped exponential backoff with jitter: the n-th retry waits in [c/2, c], c = min(cap,
    base * 2**n). With the defaults the first retry comes within 0.5 s, later ones within 30 s.
    """

    def __init__(
        self, base_ms: int = 500, cap_ms: int = 30_000, rand: Callable[[], float] = random.random
    ) -> None:
        self.base_ms = max(1, base_ms)
        self.cap_ms = max(self.base_ms, cap_ms)
        self.rand = rand
        self.attempt = 0

    def next_ms(self) -> int:
        ceiling = min(self.cap_ms, self.base_ms << min(self.attempt, 40))
        self.attempt += 1
        return ceiling // 2 + int(self.rand() * (ceiling - ceiling // 2))

    def reset(self) -> None:
        self.attempt = 0


def subscriptions(coins: tuple[str, ...]) -> list[str]:
    return [
        json.dumps({"method": "subscribe", "subscription": {"type": kind, "coin": coin}})
        for coin in coins
        for kind in CHANNELS
    ]


async def fetch_meta_retrying(
    info_url: str,
    backoff: Backoff,
    on_event: Callable[[Event], None],
    fetch: Callable[[str], Awaitable[list[Market]]] = fetch_meta_async,
) -> list[Market]:
    """``meta`` from the info endpoint, retried with ``backoff`` until it answers.

    Each failure worth retrying (``MetaUnavailable``) is told as a ``meta_failed`` event with
    the wait before the next try; any other failure (a wrong URL's 404, an answer that is
    not ``meta``) is raised: waiting would not change it.
    """
    failures = 0
    while True:
        try:
            markets = await fetch(info_url)
        except MetaUnavailable as exc:
            failures += 1
            delay_ms = backoff.next_ms()
            on_event({"event": "meta_failed", "detail": str(exc), "retry_ms": delay_ms})
            await asyncio.sleep(delay_ms / 1000)
            continue
        backoff.reset()
        if failures:
            on_event({"event": "meta_fetched", "url": info_url, "tries": failures + 1})
        return markets


async def run_feed(rec: Recorder, cfg: FeedConfig, backoff: Backoff) -> None:
    """Record until cancelled; only an error of the log itself (e.g. a full disk) ends it."""
    while True:
        try:
            ws = await connect(
                cfg.url,
                ping_interval=None,  # our own {"method":"ping"}, as Hyperliquid asks
                open_timeout=cfg.open_timeout_s,
                close_timeout=cfg.close_timeout_s,
                max_size=MAX_FRAME,
            )
        except (OSError, TimeoutError, WebSocketException) as exc:
            rec.on_connect_failed(_describe(exc), delay_ms := backoff.next_ms())
        else:
            rec.on_connected(cfg.url)
            reason, detail = await _session(ws, rec, cfg)
            if rec.delivered:
                backoff.reset()
            rec.on_lost(reason, detail, delay_ms := backoff.next_ms())
        await asyncio.sleep(delay_ms / 1000)


async def _session(ws: ClientConnection, rec: Recorder, cfg: FeedConfig) -> tuple[str, str]:
    """Subscribe and pump frames into the recorder until the connection is lost."""
    loop = asyncio.get_running_loop()
    try:
        async with ws:
            for sub in subscriptions(cfg.coins):
                await ws.send(sub)
            last_data = next_ping = loop.time()
            next_ping += cfg.ping_s
            while True:
                deadline = min(last_data + cfg.silence_s, next_ping)
                try:  # timeout_at, not wait_for: 3.11's wait_for can swallow a cancel
                    async with asyncio.timeout_at(deadline):
                        frame = await ws.recv(decode=False)
                except TimeoutError:
                    pass
                else:
                    if rec.frame(frame):
                        last_data = loop.time()
                now = loop.time()
                if now >= last_data + cfg.silence_s:
                    return "silence", f"no market data for {cfg.silence_s:g} s"
                if now >= next_ping:
                    await ws.send(PING)
                    next_ping = now + cfg.ping_s
    except ConnectionClosed as exc:
        return "disconnected", _describe(exc)
    except (OSError, WebSocketException) as exc:
        return "error", _describe(exc)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, ConnectionClosed) and exc.rcvd is None:
        text = "closed without a close frame"
    return text
