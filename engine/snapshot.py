"""The engine's whole state as plain values, and back: what a checkpoint keeps.

Why this module exists: a host restarted mid-season should not replay weeks of log to
rebuild a state it already had. :func:`dump` turns everything that decides the engine's
future behaviour (its clock and timed events, every account, open order and market) into
ints, strs, bools, None and lists of them; :func:`load` puts it back into a fresh engine of
the same season, so that applying the rest of the log gives exactly the events a full
replay gives. Books keep their logged levels' bytes (as text), so their mids and fills are
computed from the same bytes. Sets are written sorted (their order never matters to the
rules); everything else keeps its order (dicts and lists are iterated by the rules).

May not touch: files, clocks, floats, I/O of any kind (the shell encodes and stores).
"""

from __future__ import annotations

from typing import Any

from msgspec import Raw

from engine.book import BookLevels
from engine.inputs import BookData
from engine.ledger import Ledger
from engine.scoring import Standing
from engine.state import PENDING, RESTING, Account, AssetState, OpenOrder

VERSION = 1  # bump when the shape below changes: an older snapshot is then refused

# The engine's own scalars that are not in its Ledger face, in this order:
# t, over, last_mark, next_funding, next_fee, next_mark, next_due
Clock = tuple[int, bool, int | None, int, int, int, int]
Heap = list[tuple[int, int, int]]
_STANDING = (
    "entry",
    "idx",
    "equity",
    "ret",
    "mdd",
    "score",
    "eligible",
    "fill_days",
    "active_marks",
    "marks",
)


def dump(eng: Ledger, clock: Clock, heap: Heap) -> dict[str, Any]:
    """``eng``'s state as plain values (nothing in it is shared with the engine)."""
    return {
        "version": VERSION,
        "season": eng.season.id,
        "clock": list(clock),
        "next_oid": eng.next_oid,
        "heap": [list(item) for item in heap],  # as the list is: a heap's order matters
        "accounts": [_dump_account(a) for a in eng.accounts.values()],
        "orders": [_dump_order(o) for o in eng.open_orders.values()],
        "assets": [_dump_asset(a) for a in eng.assets.values()],
    }


def load(eng: Ledger, snap: dict[str, Any]) -> tuple[Clock, Heap]:
    """Put ``snap`` into ``eng``, a fresh engine of the same season; return the clock and
    the heap for the engine to take. ValueError when ``snap`` is not one of this season."""
    if snap.get("version") != VERSION:
        raise ValueError(f"snapshot version {snap.get('version')!r}, this engine reads {VERSION}")
    if snap.get("season") != eng.season.id:
        raise ValueError(f"snapshot of season {snap.get('season')!r}, not {eng.season.id!r}")
    if eng.accounts or eng.open_orders or eng.next_oid:
        raise ValueError("a snapshot is loaded into a fresh engine only")
    for row in snap["accounts"]:
        acct = _load_account(row, eng.rules.starting_equity)
        eng.accounts[acct.name] = acct
    for row in snap["orders"]:
        order = _load_order(row, eng.accounts)
        eng.open_orders[order.oid] = order
        order.entry.orders[order.oid] = order
    rows = snap["assets"]
    if [row[0] for row in rows] != list(eng.assets):
        raise ValueError("the snapshot's markets are not the season's")
    for row in rows:
        _load_asset(eng.assets[row[0]], row, eng.open_orders)
    eng.next_oid = _int(snap["next_oid"])
    t, over, last_mark, funding, fee, mark, due = snap["clock"]
    clock: Clock = (
        _int(t),
        bool(over),
        None if last_mark is None else _int(last_mark),
        _int(funding),
        _int(fee),
        _int(mark),
        _int(due),
    )
    heap: Heap = [(_int(at), _int(p), _int(oid)) for at, p, oid in snap["heap"]]
    eng.last_mark = clock[2]
    return clock, heap


def _int(value: object) -> int:
    if type(value) is not int:
        raise ValueError(f"snapshot: want an integer, got {value!r}")
    return value


# ---- accounts and orders -------------------------------------------------------------


def _dump_account(a: Account) -> list[Any]:
    standing = a.standing
    return [
        a.name,
        a.idx,
        a.key_sha256,
        a.cash,
        [[asset, pos] for asset, pos in a.positions.items()],
        a.reserved,
        a.peak,
        a.fee_hwm,
        a.mdd,
        a.paused,
        a.marks,
        a.active_marks,
        sorted(a.fill_days),
        a.last_equity,
        None if not isinstance(standing, Standing) else [getattr(standing, f) for f in _STANDING],
    ]


def _load_account(row: list[Any], equity: int) -> Account:
    (name, idx, key, cash, positions, reserved, peak, fee_hwm, mdd, paused, marks, active) = row[
        :12
    ]
    fill_days, last_equity, standing = row[12:]
    acct = Account(name, _int(idx), key, equity)
    acct.cash = _int(cash)
    acct.positions = {_int(asset): _int(pos) for asset, pos in positions}
    acct.reserved = _int(reserved)
    acct.peak = _int(peak)
    acct.fee_hwm = _int(fee_hwm)
    acct.mdd = _int(mdd)
    acct.paused = bool(paused)
    acct.marks = _int(marks)
    acct.active_marks = _int(active)
    acct.fill_days = {_int(day) for day in fill_days}
    acct.last_equity = _int(last_equity)
    acct.standing = None if standing is None else Standing(*standing)
    return acct


def _dump_order(o: OpenOrder) -> list[Any]:
    return [
        o.oid,
        o.entry.name,
        o.asset,
        o.is_buy,
        o.limit_px,
        o.sz,
        o.reduce_only,
        o.tif,
        o.cloid,
        o.received,
        o.reserve,
        o.state,
        o.filled,
        o.act_book_time,
        o.cancel_at,
    ]


def _load_order(row: list[Any], accounts: dict[str, Account]) -> OpenOrder:
    oid, entry, asset, is_buy, limit_px, sz, reduce_only, tif, cloid, received, reserve = row[:11]
    state, filled, act_book_time, cancel_at = row[11:]
    order = OpenOrder(
        _int(oid),
        accounts[entry],
        _int(asset),
        bool(is_buy),
        _int(limit_px),
        _int(sz),
        bool(reduce_only),
        _int(tif),
        _int(cloid),
        _int(received),
        _int(reserve),
    )
    if state not in (PENDING, RESTING):
        raise ValueError(f"snapshot: order {oid} has state {state!r}")
    order.state = state
    order.filled = _int(filled)
    order.act_book_time = _int(act_book_time)
    order.cancel_at = None if cancel_at is None else _int(cancel_at)
    return order


# ---- markets -------------------------------------------------------------------------


def _dump_book(book: BookLevels | None) -> list[Any] | None:
    if book is None:
        return None
    return [book.coin, book.t, book.time, book.raw().decode("utf-8")]


def _load_book(row: list[Any] | None) -> BookLevels | None:
    if row is None:
        return None
    coin, t, time, levels = row
    data = BookData(coin=coin, time=_int(time), levels=Raw(levels.encode("utf-8")))
    return BookLevels(data, _int(t), True)  # (checked when it was first applied)


def _dump_asset(a: AssetState) -> list[Any]:
    mid_book: list[Any] | str | None = "book" if a.mid_book is a.book else _dump_book(a.mid_book)
    return [
        a.asset,
        a.ctx_mark,
        a.book_mid,
        _dump_book(a.book),
        mid_book if a.mid_book is not None else None,
        a.trade_px,
        a.oracle,
        None if a.funding is None else list(a.funding),
        a.last_trade_time,
        sorted(a.last_trade_tids),
        [o.oid for o in a.pending],
        [o.oid for o in a.resting],
    ]


def _load_asset(a: AssetState, row: list[Any], orders: dict[int, OpenOrder]) -> None:
    _, ctx_mark, book_mid, book, mid_book, trade_px, oracle, funding = row[:8]
    last_trade_time, tids, pending, resting = row[8:]
    a.ctx_mark = _opt(ctx_mark)
    a.book_mid = _opt(book_mid)
    a.book = _load_book(book)
    a.mid_book = a.book if mid_book == "book" else _load_book(mid_book)
    a.trade_px = _opt(trade_px)
    a.oracle = _opt(oracle)
    a.funding = None if funding is None else (_int(funding[0]), _int(funding[1]))
    a.last_trade_time = _opt(last_trade_time)
    a.last_trade_tids = {_int(tid) for tid in tids}
    a.pending = [orders[oid] for oid in pending]
    a.resting = [orders[oid] for oid in resting]


def _opt(value: object) -> int | None:
    return None if value is None else _int(value)
