"""What the engine's rules see of the engine: the state they change and the two calls they make.

Why this module exists: ``orders``, ``fills`` and ``scoring`` are the rules that change the
engine's state, and ``core`` calls them; if they named ``core.Engine`` for their types,
``core`` and its rules would import each other (a cycle, if only a type-only one). They are
typed against :class:`Ledger` instead, which says exactly what of the engine they use, and
``core.Engine`` has it structurally (mypy checks it where ``core`` passes itself). A
Protocol costs nothing at run time: the calls are the same attribute reads on the same
object.

May not touch: anything but types (no state, no behaviour), files, clocks, floats.
"""

from __future__ import annotations

from typing import Protocol

from engine.events import AnyEvent
from engine.season import Rules, Season
from engine.state import Account, AssetState, OpenOrder


class Ledger(Protocol):
    """The engine as its rules see it (``core.Engine`` is the one implementation)."""

    season: Season
    rules: Rules
    assets: dict[int, AssetState]  # asset id -> its market, in asset order
    accounts: dict[str, Account]  # entry -> its account, in registration order
    open_orders: dict[int, OpenOrder]  # oid -> every entry's open order, in oid order
    next_oid: int  # the last oid given out (the next order gets one more)
    last_mark: int | None  # the time of the last minute mark run

    def emit(self, event: AnyEvent) -> None:
        """Append ``event`` to what the input being applied returns."""

    def schedule(self, at: int, priority: int, oid: int) -> None:
        """Run order ``oid``'s timed event (cancel taking effect, expiry) at ``at``."""
