"""One engine run written as bytes, so that two engines' runs can be compared byte for byte.

The compiled engine and its Python sources cannot both be imported in one process (they are
the same module names), so tests/test_engines_agree.py runs the other one in a worker:
``python -m tests.enginediff`` with ``ARENA_ENGINE=pure``, fed cases on stdin (a season's
JSON line, then the log lines, then an empty line) and answering each with one line: what
:func:`run_case` made of it.

What is written: every line's events (or the error it raised, by type and text) and, after
the last line, the engine's whole read face: each entry's account, open orders, equity,
exposure and standing, each coin's state (book levels, marks, funding, trade history), the
time of the next timed event.
"""

from __future__ import annotations

import sys
from array import array
from typing import Any

import msgspec

import engine
from engine import Engine, Line, PrintColumns, Season
from engine.inputs import Trades
from engine.units import parse_e8

_LINE = msgspec.json.Decoder(Line)
_SEASON = msgspec.json.Decoder(Season)

ORDER_FIELDS = (
    "oid",
    "asset",
    "is_buy",
    "limit_px",
    "sz",
    "reduce_only",
    "tif",
    "cloid",
    "received",
    "reserve",
    "state",
    "filled",
    "act_book_time",
    "cancel_at",
)
ACCOUNT_FIELDS = (
    "name",
    "idx",
    "key_sha256",
    "cash",
    "positions",
    "reserved",
    "peak",
    "fee_hwm",
    "mdd",
    "paused",
    "marks",
    "active_marks",
    "last_equity",
)
COIN_FIELDS = (
    "coin",
    "asset",
    "sz_decimals",
    "lot",
    "ctx_mark",
    "book_mid",
    "trade_px",
    "oracle",
    "funding",
    "last_trade_time",
)


def fields(obj: object, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in names}


def state(eng: Engine) -> dict[str, Any]:
    """Everything the read face shows of ``eng``, as builtins."""
    entries = []
    for name in eng.entries():
        acct = eng.account(name)
        assert acct is not None
        row = fields(acct, ACCOUNT_FIELDS)
        row["positions"] = sorted(acct.positions.items())
        row["fill_days"] = sorted(acct.fill_days)
        row["orders"] = [fields(o, ORDER_FIELDS) for o in eng.open_orders_of(name)]
        row["is_active"] = acct.is_active()
        try:
            row["equity"], row["exposure"] = eng.equity(name), eng.exposure(name)
        except AssertionError as exc:  # a position with no mark: said the same by both
            row["equity"] = f"AssertionError: {exc}"
        entries.append(row)
    coins = []
    for a in eng.coin_states():
        row = fields(a, COIN_FIELDS)
        row["mark"] = a.mark
        row["last_trade_tids"] = sorted(a.last_trade_tids)
        row["pending"] = [o.oid for o in a.pending]
        row["resting"] = [o.oid for o in a.resting]
        row["inert"] = [a.awaits_book, a.marks_by_book, a.prints_are_inert]
        book = a.book
        if book is not None:
            row["book"] = [book.coin, book.t, book.time, book.two_sided, book.ints(), book.mid()]
        coins.append(row)
    standings = [msgspec.to_builtins(s) for s in eng.standings()]
    return {
        "t": eng.t,
        "next_due": eng.next_due,
        "final": eng.final,
        "entries": entries,
        "coins": coins,
        "standings": standings,
    }


_INT64 = range(-(1 << 63), 1 << 63)


def _columns(lines: list[Line]) -> tuple[Any, ...] | None:
    """Trades messages as a day cache's columns would give them (``apply_quiet_prints``'
    arguments after the states: starts, then each print's t, coin index, exchange time,
    tid, price and size), with the coin names indexed; None when one is not what a day
    cache holds (a price that does not parse, a number past 64 bits)."""
    names: list[str] = []
    starts, cols = array("q", [0]), [array("q"), array("h"), *(array("q") for _ in range(4))]
    for line in lines:
        assert isinstance(line.hl, Trades)
        for p in line.hl.data:
            try:
                row = [line.t, 0, p.time, p.tid, parse_e8(p.px), parse_e8(p.sz)]
            except ValueError:
                return None
            if not all(type(v) is int and v in _INT64 for v in row):
                return None
            if p.coin not in names:
                names.append(p.coin)
            row[1] = names.index(p.coin)
            for col, v in zip(cols, row, strict=True):
                col.append(v)
        starts.append(len(cols[0]))
    return names, starts, *cols


def quietly(eng: Engine, lines: list[Line], new: bytearray | None = None) -> int:
    """Offer trades messages to ``Engine.apply_quiet_prints`` as a day cache's columns
    would give them: how many it applied (the first ones); 0 when they are not what a day
    cache could hold. ``new`` (one byte a print of ``lines``): the flags it writes."""
    got = _columns(lines)
    if got is None:
        return 0
    names, starts, *cols = got
    states = [eng.coin_state(c) for c in names]
    t, coin, time, tid, px, sz = cols
    columns = PrintColumns(states, starts, t, coin, time, tid, px, sz, new)
    return int(eng.apply_quiet_prints(columns, 0, len(lines)))


def quietly_recorded(eng: Engine, lines: list[Line]) -> list[Any]:
    """``quietly`` for an engine recording prints: per message applied, what ``run_case``
    gives for one (no event, then the prints it applied), read from the flags."""
    messages = [line.hl.data for line in lines if isinstance(line.hl, Trades)]
    new = bytearray(sum(len(prints) for prints in messages))
    done = quietly(eng, lines, new)
    out: list[Any] = []
    k = 0
    for prints in messages[:done]:
        applied = [p for i, p in enumerate(prints) if new[k + i]]
        k += len(prints)
        out += [[], msgspec.to_builtins(applied)]
    return out


def _offered(item: Line | str) -> bool:
    """A trades message a day cache would hold as columns."""
    return isinstance(item, Line) and isinstance(item.hl, Trades) and _columns([item]) is not None


def _decoded(raw: bytes) -> Line | str:
    try:
        return _LINE.decode(raw)
    except ValueError as exc:
        return f"{type(exc).__name__}: {exc}"


def run_case(
    season_json: bytes, lines: list[bytes], record_prints: bool = False, quiet: bool = False
) -> bytes:
    """Apply ``lines`` to a new engine of the season; every event and the final state.
    ``quiet``: each run of trades messages is offered to ``apply_quiet_prints`` first
    (those it applied made no event), the first it refused applied as usual, and the rest
    of the run offered again."""
    eng = Engine(_SEASON.decode(season_json), record_prints=record_prints)
    out: list[Any] = []
    items = [_decoded(raw) for raw in lines]
    k = 0
    while k < len(items):
        if quiet:
            run = 0
            while k + run < len(items) and _offered(items[k + run]):
                run += 1
            offered: list[Line] = items[k : k + run]  # type: ignore[assignment]
            if record_prints:
                got = quietly_recorded(eng, offered) if run else []
                done = len(got) // 2
                out += got
            else:
                done = quietly(eng, offered) if run else 0
                out += [[]] * done
            k += done
            if done and k == len(items):
                break
        line = items[k]
        k += 1
        if isinstance(line, str):
            out.append(line)
            continue
        if line.t < eng.t:
            out.append("skipped: back in time")
            continue
        try:
            events = eng.apply(line)
        except (ValueError, AssertionError) as exc:  # MalformedInput is a ValueError
            out.append(f"{type(exc).__name__}: {exc}")
            continue
        out.append(msgspec.to_builtins(events))
        if record_prints:  # (read after a trades message: what it applied)
            applied = eng.applied_prints if isinstance(line.hl, Trades) else []
            out.append(msgspec.to_builtins(applied))
    out.append(state(eng))
    return msgspec.json.encode(out)


def serve() -> None:
    """Answer cases from stdin (season line, log lines, empty line) on stdout."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(engine.ENGINE.encode() + b"\n")
    stdout.flush()
    while True:
        season = stdin.readline()
        if not season:
            return
        lines = []
        while (raw := stdin.readline()) not in (b"\n", b""):
            lines.append(raw.rstrip(b"\n"))
        stdout.write(run_case(season.rstrip(b"\n"), lines) + b"\n")
        stdout.flush()


if __name__ == "__main__":
    serve()
