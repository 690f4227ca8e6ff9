"""The order lifecycle: the ten checks at receipt, acceptance, cancels, and leaving the venue.

Why this module exists: one place owns an order's life (pending -> resting -> closed, with a
cancel that takes effect later), so that the slot, the reserve and the cloid are taken and
released in exactly one spot each.

May not touch: fills and fees (``engine.fills``), files, clocks, floats.
"""

from __future__ import annotations

import re

from engine import events as ev
from engine.events import Reason
from engine.inputs import Cancel, MalformedInput, Order
from engine.ledger import Ledger
from engine.state import PENDING, Account, OpenOrder
from engine.units import notional, price_on_grid

ALO, GTC, IOC = 1, 2, 3
CANCEL_EFFECT, EXPIRY = 0, 1  # timed-event priorities

_CLOID = re.compile(r"0x[0-9a-fA-F]{1,32}")


def parse_cloid(text: str | None) -> int:
    """``0x`` and 1-32 hex digits, either case, as a number; absent = 0 (none)."""
    if text is None:
        return 0
    if _CLOID.fullmatch(text) is None:
        raise MalformedInput(f"bad cloid {text!r}: want 0x and 1-32 hex digits")
    return int(text[2:], 16)


def format_cloid(cloid: int) -> str | None:
    return None if cloid == 0 else f"0x{cloid:032x}"


def check(eng: Ledger, acct: Account, o: Order, cloid: int, t: int) -> Reason | int:
    """The contract's ten checks in order: the first failure, or the reserve to hold."""
    rules = eng.rules
    if t < eng.season.start or t >= eng.season.end:
        return Reason.SeasonNotActive
    if acct.paused and not o.reduceOnly:
        return Reason.VaultNotActive
    a = eng.assets.get(o.asset)
    if a is None:
        return Reason.MarketNotAllowed
    if o.encodedTif not in (ALO, GTC, IOC):
        return Reason.InvalidTif
    if not price_on_grid(o.limitPx, a.sz_decimals):
        return Reason.InvalidPrice
    if o.sz <= 0 or o.sz % a.lot:
        return Reason.InvalidSize
    if not o.reduceOnly and notional(o.limitPx, o.sz) < rules.min_order_value:
        return Reason.OrderTooSmall
    if cloid and any(x.cloid == cloid for x in acct.orders.values()):
        return Reason.OrderAlreadyExists
    if len(acct.orders) >= rules.max_open_orders:
        return Reason.TooManyOpenOrders
    if o.reduceOnly:
        return 0
    mark = a.mark
    if mark is None:
        return Reason.PositionCapExceeded
    reserve = notional(max(o.limitPx, mark), o.sz)
    exposure = acct.exposure(eng.assets)
    if (exposure + reserve) * 100 > acct.equity(eng.assets) * rules.position_cap_pct:
        return Reason.PositionCapExceeded
    return reserve


def place(eng: Ledger, acct: Account, o: Order, t: int) -> None:
    cloid = parse_cloid(o.cloid)
    result = check(eng, acct, o, cloid, t)
    if isinstance(result, Reason):
        eng.emit(ev.Rejected(t=t, entry=acct.name, reason=result, request="order", cloid=cloid))
        return
    eng.next_oid += 1
    order = OpenOrder(
        eng.next_oid,
        acct,
        o.asset,
        o.isBuy,
        o.limitPx,
        o.sz,
        o.reduceOnly,
        o.encodedTif,
        cloid,
        t,
        result,
    )
    acct.orders[order.oid] = order
    eng.open_orders[order.oid] = order
    acct.reserved += order.reserve
    eng.assets[o.asset].pending.append(order)
    eng.schedule(t + eng.rules.order_lifetime_ms, EXPIRY, order.oid)
    eng.emit(
        ev.Accepted(
            t=t,
            entry=acct.name,
            oid=order.oid,
            cloid=cloid,
            asset=o.asset,
            is_buy=o.isBuy,
            limit_px=o.limitPx,
            sz=o.sz,
            reduce_only=o.reduceOnly,
            tif=o.encodedTif,
            reserve=order.reserve,
            activates_at=t + eng.rules.activation_delay_ms,
        )
    )


def find_for_cancel(acct: Account, oid: int | None, cloid: int) -> OpenOrder | None:
    """The open order a cancel names: by oid when present, else by non-zero cloid."""
    if oid is not None:
        order = acct.orders.get(oid)
    elif cloid:
        order = next((x for x in acct.orders.values() if x.cloid == cloid), None)
    else:
        order = None
    if order is None or order.cancel_at is not None:
        return None
    return order


def cancel(eng: Ledger, acct: Account, c: Cancel, t: int) -> None:
    cloid = parse_cloid(c.cloid)
    order = find_for_cancel(acct, c.oid, cloid)
    if order is None:
        eng.emit(
            ev.Rejected(
                t=t,
                entry=acct.name,
                reason=Reason.OrderNotFound,
                request="cancel",
                cloid=cloid,
                oid=c.oid or 0,
            )
        )
        return
    order.cancel_at = t + eng.rules.activation_delay_ms
    eng.schedule(order.cancel_at, CANCEL_EFFECT, order.oid)
    eng.emit(ev.CancelPending(t=t, entry=acct.name, oid=order.oid, effective_at=order.cancel_at))


def close(eng: Ledger, order: OpenOrder, t: int, reason: Reason) -> None:
    """The order leaves the venue: its slot, reserve and cloid are released."""
    acct = order.entry
    del acct.orders[order.oid]
    del eng.open_orders[order.oid]
    acct.reserved -= order.reserve
    a = eng.assets[order.asset]
    if order.state == PENDING:
        a.pending.remove(order)
    elif order in a.resting:
        a.resting.remove(order)
    eng.emit(ev.Closed(t=t, entry=acct.name, oid=order.oid, reason=reason, filled=order.filled))


def timed(eng: Ledger, t: int, priority: int, oid: int) -> None:
    """A cancel taking effect or an expiry falling due; a no-op if the order already left."""
    order = eng.open_orders.get(oid)
    if order is None:
        return
    if priority == CANCEL_EFFECT and order.cancel_at == t:
        close(eng, order, t, Reason.Cancelled)
    elif priority == EXPIRY and order.received + eng.rules.order_lifetime_ms == t:
        close(eng, order, t, Reason.OrderExpired)
