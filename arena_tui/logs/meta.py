"""Hyperliquid's ``meta``: which perp markets exist, their asset indexes and szDecimals.

A coin's asset index is its position in ``meta``'s ``universe`` list; a season, a
recording's header and the engine all name markets as ``{"coin", "asset", "szDecimals"}``
read from it. ``meta`` comes live from the info endpoint (``POST {"type": "meta"}``) or
offline from a saved answer (a JSON file holding that answer, or the ``[meta, ctxs]`` pair
``metaAndAssetCtxs`` returns).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from arena_tui.util.errors import ArenaError
from engine import Market

INFO_URL = "https://api.hyperliquid.xyz/info"
WS_URL = "wss://api.hyperliquid.xyz/ws"


class MetaError(ArenaError):
    """``meta`` could not be fetched or read, or lacks a coin asked for (one line)."""


class MetaUnavailable(MetaError):
    """The info endpoint could not answer now (no connection, a timeout, HTTP 5xx, 408 or
    429): worth retrying, unlike a wrong answer (any other status, not a ``meta``)."""


OFFLINE_HINT = "offline, pass --meta FILE (a saved meta answer; see --help)"
RETRY_STATUSES = frozenset({408, 429})


def parse_meta(doc: Any, source: str = "meta") -> list[Market]:
    """Every market of a ``meta`` answer, asset = position in ``universe``."""
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        doc = doc[0]  # metaAndAssetCtxs: [meta, asset contexts]
    universe = doc.get("universe") if isinstance(doc, dict) else None
    if not isinstance(universe, list):
        raise MetaError(f'{source}: not a meta answer (want {{"universe": [...]}})')
    markets = []
    for i, entry in enumerate(universe):
        name = entry.get("name") if isinstance(entry, dict) else None
        dec = entry.get("szDecimals") if isinstance(entry, dict) else None
        if not isinstance(name, str) or type(dec) is not int or not 0 <= dec <= 8:
            raise MetaError(f"{source}: universe[{i}] has no valid name and szDecimals")
        markets.append(Market(coin=name, asset=i, szDecimals=dec))
    return markets


def load_meta_file(path: str | Path) -> list[Market]:
    p = Path(path)
    try:
        doc = json.loads(p.read_bytes())
    except OSError as exc:
        raise MetaError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise MetaError(f"{p}: not valid JSON: {exc}") from None
    return parse_meta(doc, str(p))


def fetch_meta(info_url: str = INFO_URL, timeout_s: float = 10.0) -> list[Market]:
    """``meta`` from Hyperliquid's info endpoint (``MetaUnavailable`` if worth retrying)."""
    try:
        resp = httpx.post(info_url, json={"type": "meta"}, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise _unreachable(info_url, exc) from None
    return _answer(info_url, resp)


async def fetch_meta_async(info_url: str = INFO_URL, timeout_s: float = 10.0) -> list[Market]:
    """``fetch_meta`` for an event loop (a signal can stop the wait)."""
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            resp = await client.post(info_url, json={"type": "meta"})
    except httpx.HTTPError as exc:
        raise _unreachable(info_url, exc) from None
    return _answer(info_url, resp)


def _unreachable(info_url: str, exc: httpx.HTTPError) -> MetaUnavailable:
    return MetaUnavailable(f"{info_url}: cannot fetch meta: {exc or type(exc).__name__}")


def _answer(info_url: str, resp: httpx.Response) -> list[Market]:
    status = resp.status_code
    if status != 200:
        kind = MetaUnavailable if status >= 500 or status in RETRY_STATUSES else MetaError
        raise kind(f"{info_url}: meta answered HTTP {status}")
    try:
        doc = resp.json()
    except ValueError:
        raise MetaError(f"{info_url}: meta answer is not JSON") from None
    return parse_meta(doc, info_url)


def offline_hint(exc: MetaError) -> MetaError:
    """The same failure, saying how to do without the network."""
    return type(exc)(f"{exc}; {OFFLINE_HINT}")


def get_markets(meta_file: str | Path | None, info_url: str = INFO_URL) -> list[Market]:
    """``meta`` from a saved file when given, else live from the info endpoint."""
    if meta_file is not None:
        return load_meta_file(meta_file)
    try:
        return fetch_meta(info_url)
    except MetaError as exc:
        raise offline_hint(exc) from None


def parse_coins(text: str) -> list[str]:
    """``"BTC,ETH, SOL"`` -> ``["BTC", "ETH", "SOL"]`` (order kept, duplicates dropped)."""
    coins: list[str] = []
    for part in text.split(","):
        coin = part.strip()
        if coin and coin not in coins:
            coins.append(coin)
    if not coins:
        raise MetaError("--coins: name at least one coin, e.g. --coins BTC,ETH")
    return coins


def select(markets: Sequence[Market], coins: Sequence[str]) -> tuple[Market, ...]:
    """The markets of ``coins``, in the order given; a coin ``meta`` lacks is an error."""
    by_coin = {m.coin: m for m in markets}
    missing = [c for c in coins if c not in by_coin]
    if missing:
        raise MetaError(f"not in meta's universe: {', '.join(missing)} (coin names are exact)")
    return tuple(by_coin[c] for c in coins)


def meta_source(meta: Path | None, info_url: str | None) -> tuple[Path | None, str]:
    """``--meta`` or ``--info-url`` (not both), as ``meta.get_markets`` takes them."""
    if meta is not None and info_url is not None:
        raise MetaError("give --meta FILE or --info-url URL, not both")
    return meta, info_url or INFO_URL
