"""The strategy API, as strategy files import it: ``from arena_tui.strategy import ...``.

This path is public and stays put; the code lives in ``arena_tui.run.strategy`` (hooks,
:class:`Context`) and ``arena_tui.run.market`` (what a strategy reads). Nothing inside
arena_tui imports this module (an import-linter contract says so), so it can never
become a way around the rooms. See docs/strategies.md.
"""

from __future__ import annotations

from arena_tui.run.market import (
    ALO,
    GTC,
    IOC,
    AccountView,
    AssetContext,
    Book,
    MarketView,
    OrderView,
    Trade,
    human,
)
from arena_tui.run.strategy import Context, Strategy

__all__ = [
    "ALO",
    "GTC",
    "IOC",
    "AccountView",
    "AssetContext",
    "Book",
    "Context",
    "MarketView",
    "OrderView",
    "Strategy",
    "Trade",
    "human",
]
