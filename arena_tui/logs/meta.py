"""Hyperliquid's ``meta``: which perp markets exist, their asset indexes and szDecimals.

A coin's asset index is its position in ``meta``'s ``universe`` list; a season, a
recording's header and the engine all name markets as ``{"coin", "asset", "szDecimals"}``
read from it. ``meta`` comes live from the info endpoint (``POST {"type": "meta"}``) or
offline from a saved answer (a JSON file holding that answer, or the ``[meta, ctxs]`` pair
``metaAndAssetCtxs`` returns), or from a season file (TOML or JSON), whose ``markets`` are
those same entries for its coins: the shipped ``seasons/season0.toml`` has BTC, ETH, SOL
and HYPE, so a clone can work offline with no saved answer.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena_tui.util.errors import ArenaError
from engine import Market

if TYPE_CHECKING:
    import httpx

INFO_URL = "https://api.hyperliquid.xyz/info"
WS_URL = "wss://api.hyperliquid.xyz/ws"


class MetaError(ArenaError):
    """``meta`` could not be fetched or read, or lacks a coin asked for (one line)."""


class MetaUnavailable(MetaError):
    """The info endpoint could not answer now (no connection, a timeout, HTTP 5xx, 408 or
    429): worth retrying, unlike a wrong answer (any other status, not a ``meta``)."""


SHIPPED_SEASON = Path(__file__).resolve().parents[2] / "seasons" / "season0.toml"


def _offline_hint() -> str:
    shipped = SHIPPED_SEASON if SHIPPED_SEASON.is_file() else Path("seasons/season0.toml")
    return (
        f"offline, pass --meta FILE (a saved meta answer, or a season file: --meta {shipped} "
        "has BTC, ETH, SOL and HYPE; see --help)"
    )


OFFLINE_HINT = _offline_hint()
RETRY_STATUSES = frozenset({408, 429})


def parse_meta(doc: Any, source: str = "meta") -> list[Market]:
    """Every market of a ``meta`` answer, asset = position in ``universe``; or a season
    file's ``markets`` (its coins only, each with its asset index)."""
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        doc = doc[0]  # metaAndAssetCtxs: [meta, asset contexts]
    universe = doc.get("universe") if isinstance(doc, dict) else None
    if isinstance(doc, dict) and universe is None and isinstance(doc.get("markets"), list):
        return _season_markets(doc["markets"], source)
    if not isinstance(universe, list):
        raise MetaError(
            f'{source}: not a meta answer (want {{"universe": [...]}}) nor a season file '
            '(want "markets")'
        )
    markets = []
    for i, entry in enumerate(universe):
        name = entry.get("name") if isinstance(entry, dict) else None
        dec = entry.get("szDecimals") if isinstance(entry, dict) else None
        if not isinstance(name, str) or type(dec) is not int or not 0 <= dec <= 8:
            raise MetaError(f"{source}: universe[{i}] has no valid name and szDecimals")
        markets.append(Market(coin=name, asset=i, szDecimals=dec))
    return markets


def _season_markets(entries: list[Any], source: str) -> list[Market]:
    markets = []
    for i, entry in enumerate(entries):
        coin, asset, dec = (entry.get(k) if isinstance(entry, dict) else None for k in _KEYS)
        if not isinstance(coin, str) or type(asset) is not int or asset < 0:
            raise MetaError(f"{source}: markets[{i}] has no valid coin and asset")
        if type(dec) is not int or not 0 <= dec <= 8:
            raise MetaError(f"{source}: markets[{i}] has no valid szDecimals")
        markets.append(Market(coin=coin, asset=asset, szDecimals=dec))
    return markets


_KEYS = ("coin", "asset", "szDecimals")


def load_meta_file(path: str | Path) -> list[Market]:
    """A saved ``meta`` answer (JSON), or a season file (``.toml``, or JSON) for its markets."""
    p = Path(path)
    try:
        data = p.read_bytes()
        doc = tomllib.loads(data.decode()) if p.suffix == ".toml" else json.loads(data)
    except OSError as exc:
        raise MetaError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # TOMLDecodeError and UnicodeDecodeError included
        kind = "TOML" if p.suffix == ".toml" else "JSON"
        raise MetaError(f"{p}: not valid {kind}: {exc}") from None
    return parse_meta(doc, str(p))


def fetch_meta(info_url: str = INFO_URL, timeout_s: float = 10.0) -> list[Market]:
    """``meta`` from Hyperliquid's info endpoint (``MetaUnavailable`` if worth retrying)."""
    import httpx  # here: every command imports this module, few fetch meta (0.2 s saved)

    try:
        resp = httpx.post(info_url, json={"type": "meta"}, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise _unreachable(info_url, exc) from None
    return _answer(info_url, resp)


async def fetch_meta_async(info_url: str = INFO_URL, timeout_s: float = 10.0) -> list[Market]:
    """``fetch_meta`` for an event loop (a signal can stop the wait)."""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            resp = await client.post(info_url, json={"type": "meta"})
    except httpx.HTTPError as exc:
        raise _unreachable(info_url, exc) from None
    return _answer(info_url, resp)


def _unreachable(info_url: str, exc: Exception) -> MetaUnavailable:
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
