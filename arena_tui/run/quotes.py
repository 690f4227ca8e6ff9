"""A fill with what it filled against and its order's note: the quotes file's lines.

Why this module exists: the contract's fills file (``replay.fill_line``) and its hash must
stay as they are, yet people and programs should see, beside every fill, the market it
filled against (``ev.Fill.quote``: a taker fill's book level, a maker fill's print) and
the note its order carried. A note is never an engine input: it is the optional ``"note"``
key of the logged order line, paired here with the ``ev.Accepted`` the line caused (same
entry) to learn the order's oid. A backtest (``run.backtest``) and ``arena replay`` both
pair them here, from what is in the log, so a report rebuilt from a run log shows the same
notes as the run's own.
"""

from __future__ import annotations

from typing import Any

import msgspec

from arena_tui.logs.notes import note_in
from arena_tui.util.jsonout import dumps
from engine import events as ev
from engine import format_cloid


class OrderNotes:
    """The note of every order that had one, by (entry, oid)."""

    __slots__ = ("by_order",)

    def __init__(self) -> None:
        self.by_order: dict[tuple[str, int], str] = {}

    def accepted(self, entry: str, note: str | None, out: list[ev.AnyEvent]) -> None:
        """``out``: the events of applying one order line of ``entry`` carrying ``note``;
        its ``Accepted`` names the order's oid (a rejected order has no fill to note)."""
        if not note:
            return
        for e in out:
            if type(e) is ev.Accepted and e.entry == entry:
                self.by_order[(entry, e.oid)] = note

    def logged(self, raw: bytes, out: list[ev.AnyEvent]) -> None:
        """The same for one logged line (any line: only an order line with a note counts)."""
        if b'"note"' not in raw:
            return
        note = note_in(raw)
        if note is None:
            return
        for e in out:
            if type(e) is ev.Accepted:
                self.by_order[(e.entry, e.oid)] = note
                return

    def of(self, fill: ev.Fill) -> str | None:
        """The note of ``fill``'s order, or None."""
        return self.by_order.get((fill.entry, fill.oid)) if self.by_order else None


def quote_doc(quote: ev.Quote | None) -> dict[str, Any] | None:
    """A fill's quote as JSON everywhere: ``{"source": "book", ...}`` or ``"print"``."""
    return None if quote is None else msgspec.to_builtins(quote)


def contract_fill(f: ev.Fill) -> dict[str, Any]:
    """A fill with exactly the contract's fills-file fields (``replay.fill_line``)."""
    return {
        "t": f.t,
        "entry": f.entry,
        "oid": f.oid,
        "cloid": format_cloid(f.cloid),
        "asset": f.asset,
        "isBuy": f.is_buy,
        "px": f.px,
        "sz": f.sz,
        "liquidity": "taker" if f.taker else "maker",
        "venue_fee": f.venue_fee,
        "exec_fee": f.exec_fee,
    }


def fill_doc(f: ev.Fill, note: str | None) -> dict[str, Any]:
    """A fill for people and programs: the contract's fill line's fields, then ``quote``
    and ``note``."""
    return {**contract_fill(f), "quote": quote_doc(f.quote), "note": note}


def quote_line(f: ev.Fill, note: str | None) -> bytes:
    """One line of a quotes file (``arena replay --quotes``, a run's ``fills.jsonl``): the
    fills file's line plus ``quote`` and ``note``, sorted keys, no whitespace."""
    return (dumps(fill_doc(f, note), sort_keys=True) + "\n").encode("utf-8")
