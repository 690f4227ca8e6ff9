"""report.html's data: the run's integers as the compact JSON the page's script draws.

Why this module exists: the page draws from the run data (``rundata``) and the report's
document, but a browser wants floats, short times and no more points than a screen has
pixels. This converts (money to dollars, prices to floats, ratios to percent, times to
seconds after the season's start) and thins what is drawn, never what is counted: series
longer than ``MAX_POINTS`` keep each bucket's lowest and highest point (no peak or trough
is lost); more than ``MAX_MARKERS`` fills, or orders' lives, of one entry on one coin are
drawn evenly spread (``counts`` holds how many there are and how many are drawn, and the
chart's title says so); the round-trips table lists an entry's first ``MAX_TRIPS``.

The scales of the entries' charts are chosen here as the terminal's and chart.svg's are
(``charts``): ``equity_scale`` gives each entry its own dollar range (the page draws the
equity as a strip per entry, so one entry's loss cannot flatten the others), and
``drawdown_scale`` the drawdown chart's top (to the worst drawdown of any entry, at least
1%), whether the pause limit is in view (its line is drawn only then) and the chart's title,
which says the worst drawdown in words.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from arena_tui.report.charts import drawdown_top, equity_scale, limit_in_view, pct_trunc
from arena_tui.report.htmlverdict import pct_f, verdict_charts
from arena_tui.report.rundata import CoinPnl, EntryMark, FillRow, OrderRow, RoundTrip, RunData
from arena_tui.report.runmodel import EntryMarks
from arena_tui.report.table import usd
from arena_tui.util.introws import Picked

MAX_POINTS = 2000  # per drawn series (a 24 h run's 1440 minutes are all drawn)
MAX_MARKERS = 3000  # fills, or orders' lives, of one entry on one coin
MAX_TRIPS = 2000  # round-trip rows of one entry in the table
COUNTS = ("fills", "fills_drawn", "orders", "orders_drawn", "rejected")
Columns = dict[str, list[Any]]


def thin_minmax(n: int, values: Sequence[float | None], limit: int = MAX_POINTS) -> list[int]:
    """Indexes of ``values`` to draw: all of them up to ``limit``, else each of ``limit // 2``
    buckets' lowest and highest (in time order), so no peak or trough is lost."""
    if n <= limit:
        return list(range(n))
    buckets = max(1, limit // 2)
    keep: list[int] = []
    for b in range(buckets):
        known = [
            i for i in range(b * n // buckets, (b + 1) * n // buckets) if values[i] is not None
        ]
        if not known:
            keep.append(b * n // buckets)
            continue
        lo = min(known, key=lambda i: values[i] or 0.0)
        hi = max(known, key=lambda i: values[i] or 0.0)
        keep.extend(sorted({lo, hi}))
    return keep


def spread(n: int, limit: int = MAX_MARKERS) -> list[int]:
    """``limit`` indexes of ``n`` evenly spread (all of them when there are no more)."""
    if n <= limit:
        return list(range(n))
    return [i * n // limit for i in range(limit)]


def usd_f(e6: int | None) -> float | None:
    return None if e6 is None else round(e6 / 1e6, 2)


def px_f(e8: int | None) -> float | None:
    return None if e8 is None else e8 / 1e8


def px_text(e8: int) -> str:
    """A price for a table: 8 significant digits (an average's e8 tail is noise)."""
    return f"{e8 / 1e8:.8g}"


def clock(t: int | None) -> str:
    return "-" if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t // 1000))


def held(ms: int) -> str:
    s = ms // 1000
    h, rest = divmod(s, 3600)
    return f"{h}h{rest // 60:02d}m" if h else f"{rest // 60}m{rest % 60:02d}s"


def _secs(t: int, t0: int) -> float:
    return round((t - t0) / 1000, 3)


def _series(ts: list[int], values: list[float | None], t0: int) -> Columns:
    keep = thin_minmax(len(values), values)
    return {"t": [(ts[i] - t0) // 1000 for i in keep], "v": [values[i] for i in keep]}


def marks_by_entry(marks: Sequence[EntryMark]) -> dict[str, Sequence[EntryMark]]:
    """Each entry's marks in order (a flat store's own rows: nothing copied)."""
    if isinstance(marks, EntryMarks):
        return marks.by_entry()
    by_entry: dict[str, list[EntryMark]] = defaultdict(list)
    for m in marks:
        by_entry[m.entry].append(m)
    return dict(by_entry)


def _marks(rows: Sequence[EntryMark], t0: int) -> dict[str, Columns]:
    ts = [m.t for m in rows]
    cap = [round(m.cap_used * 100 / m.equity, 4) if m.equity > 0 else None for m in rows]
    return {
        "equity": _series(ts, [usd_f(m.equity) for m in rows], t0),
        "exit": _series(ts, [usd_f(m.exit_equity) for m in rows], t0),
        "drawdown": _series(ts, [pct_f(m.drawdown) for m in rows], t0),
        "cap": _series(ts, cap, t0),  # % of equity, as the cap rule measures it
        "orders": _series(ts, [float(m.open_orders) for m in rows], t0),
    }


def _prices(data: RunData, t0: int) -> dict[str, Columns]:
    by_coin: dict[str, list[Any]] = defaultdict(list)
    for p in data.prices:
        by_coin[p.coin].append(p)
    out = {}
    for coin, rows in by_coin.items():
        mids = [px_f(p.mid) for p in rows]
        keep = thin_minmax(len(rows), mids)
        out[coin] = {
            "t": [(rows[i].t - t0) // 1000 for i in keep],
            "mid": [mids[i] for i in keep],
            "high": [px_f(rows[i].high) for i in keep],
            "low": [px_f(rows[i].low) for i in keep],
            "last": [px_f(rows[i].last) for i in keep],
        }
    return out


def _fills(rows: Sequence[FillRow], t0: int) -> Columns:
    keep = spread(len(rows))
    return {
        "t": [_secs(rows[i].t, t0) for i in keep],
        "px": [px_f(rows[i].px) for i in keep],
        "sz": [px_f(rows[i].sz) for i in keep],
        "buy": [int(rows[i].is_buy) for i in keep],
        "taker": [int(rows[i].taker) for i in keep],
    }


def _orders(rows: Sequence[OrderRow], t0: int, end: int) -> Columns:
    """Each order's life; the page writes its hover text from these (``end``: how it
    closed, "" while still open at the end)."""
    keep = spread(len(rows))
    return {
        "t0": [_secs(rows[i].received_t, t0) for i in keep],
        "t1": [_secs(rows[i].closed_t or end, t0) for i in keep],
        "px": [px_f(rows[i].limit_px) for i in keep],
        "sz": [px_f(rows[i].sz) for i in keep],
        "filled": [px_f(rows[i].filled) for i in keep],
        "buy": [int(rows[i].is_buy) for i in keep],
        "end": [rows[i].close_reason or "" for i in keep],
    }


def _costs(names: list[str], pnl: list[CoinPnl], data: RunData) -> dict[str, dict[str, float]]:
    e6: dict[str, dict[str, int]] = {n: dict.fromkeys(("venue", "exec", "perf", "funding"), 0)
                                     for n in names}  # fmt: skip
    for r in pnl:
        c = e6.setdefault(r.entry, dict.fromkeys(("venue", "exec", "perf", "funding"), 0))
        c["venue"] += r.venue_fees
        c["exec"] += r.exec_fees
        c["funding"] += r.funding
    for pf in data.perf_fees:
        e6.setdefault(pf.entry, dict.fromkeys(("venue", "exec", "perf", "funding"), 0))
        e6[pf.entry]["perf"] += pf.fee
    return {n: {k: round(v / 1e6, 2) for k, v in c.items()} for n, c in e6.items()}


def trip_cells(rt: RoundTrip) -> list[str]:
    """One row of the round-trips table."""
    return [
        rt.coin,
        rt.side,
        clock(rt.opened_t),
        clock(rt.closed_t),
        "open" if rt.closed_t is None else held(rt.closed_t - rt.opened_t),
        f"{px_f(rt.qty)}",
        px_text(rt.avg_entry_px),
        "-" if rt.avg_exit_px is None else px_text(rt.avg_exit_px),
        usd(rt.fees),
        usd(rt.pnl),
    ]


def equity_scales(
    by_entry: Mapping[str, Sequence[EntryMark]], starting: int
) -> dict[str, list[float]]:
    """Each entry's own dollar range, [low, high], over its equity and exit value."""
    out: dict[str, list[float]] = {}
    for name, rows in by_entry.items():
        values = [m.equity for m in rows]
        values += [m.exit_equity for m in rows if m.exit_equity is not None]
        lo, hi = equity_scale(values, starting)
        out[name] = [lo / 1e6, hi / 1e6]
    return out


def drawdown_scale(
    by_entry: Mapping[str, Sequence[EntryMark]], names: list[str], limit_pct: int
) -> dict[str, Any]:
    """The drawdown chart's top (%), whether the limit is in view, and its title's two
    lines: the strategy's worst drawdown (the first entry's), and the deepest entry's when
    another's; where the limit is."""
    worst = {n: max((m.drawdown for m in by_entry.get(n, [])), default=0) for n in names}
    deepest = max(worst.values(), default=0)
    top = drawdown_top(deepest, limit_pct)
    shown = limit_in_view(top, limit_pct)
    head = "Drawdown from the peak"
    if names:
        strategy = names[0]
        head += f": {strategy}'s worst {pct_trunc(worst[strategy])}"
        other = max(names, key=lambda n: worst[n])
        if worst[other] > worst[strategy]:
            head += f" ({other}'s {pct_trunc(worst[other])}, the deepest)"
    if shown:
        limit = f"dashed: the {limit_pct}% limit that pauses an entry"
    else:
        limit = f"the {limit_pct}% limit that pauses an entry is above this scale"
    return {
        "top": pct_f(top),
        "limit_in_view": shown,
        "worst": {n: pct_f(w) for n, w in worst.items()},
        "title": [head, limit],  # two lines
    }


def page_data(data: RunData, doc: dict[str, Any]) -> dict[str, Any]:
    """The JSON the page's script draws from (floats: presentation only)."""
    t0 = data.start
    names = data.entry_names()
    coins = [c.coin for c in data.coins]
    counts = {n: {c: dict.fromkeys(COUNTS, 0) for c in coins} for n in names}

    def count(entry: str, coin: str) -> dict[str, int]:
        return counts.setdefault(entry, {}).setdefault(coin, dict.fromkeys(COUNTS, 0))

    by_entry = marks_by_entry(data.marks)
    fill_rows: dict[tuple[str, str], Picked[FillRow]] = {}
    for i, f in enumerate(data.fills):  # each entry's and coin's rows: their numbers only
        key = (f.entry, f.coin)
        rows = fill_rows.get(key)
        if rows is None:
            rows = fill_rows[key] = Picked(data.fills)
        rows.add(i)
    fills: dict[str, dict[str, Columns]] = defaultdict(dict)
    for (entry, coin), frows in fill_rows.items():
        fills[entry][coin] = drawn = _fills(frows, t0)
        count(entry, coin).update(fills=len(frows), fills_drawn=len(drawn["t"]))
    order_rows: dict[tuple[str, str], Picked[OrderRow]] = {}
    rejections: dict[str, dict[str, Columns]] = defaultdict(dict)
    for i, o in enumerate(data.orders):
        if o.status != "rejected":
            got = order_rows.get((o.entry, o.coin))
            if got is None:
                got = order_rows[(o.entry, o.coin)] = Picked(data.orders)
            got.add(i)
            continue
        r = rejections[o.entry].setdefault(o.coin, {"t": [], "px": [], "why": []})
        r["t"].append(_secs(o.received_t, t0))
        r["px"].append(px_f(o.limit_px))
        r["why"].append(f"{'buy' if o.is_buy else 'sell'} {px_f(o.sz)}: {o.reject_reason}")
        count(o.entry, o.coin)["rejected"] += 1
    orders: dict[str, dict[str, Columns]] = defaultdict(dict)
    for (entry, coin), orows in order_rows.items():
        orders[entry][coin] = lives = _orders(orows, t0, data.end)
        count(entry, coin).update(orders=len(orows), orders_drawn=len(lives["t0"]))
    coin_pnl: dict[str, dict[str, dict[str, float | None]]] = {n: {} for n in names}
    for cp in data.coin_pnl:
        coin_pnl.setdefault(cp.entry, {})[cp.coin] = {"pnl": usd_f(cp.pnl)}
    trips: dict[str, dict[str, Any]] = {n: {"rows": [], "total": 0} for n in names}
    for rt in data.round_trips:
        t = trips.setdefault(rt.entry, {"rows": [], "total": 0})
        t["total"] += 1
        if len(t["rows"]) < MAX_TRIPS:
            t["rows"].append(trip_cells(rt))
    return {
        "t0": t0,
        "starting_equity": usd_f(data.starting_equity),
        "limits": {
            "drawdown_pct": data.drawdown_limit_pct,
            "cap_pct": data.position_cap_pct,
            "max_orders": data.max_open_orders,
        },
        "entries": names,
        "coins": coins,
        "marks": {name: _marks(rows, t0) for name, rows in by_entry.items()},
        "equity_scale": equity_scales(by_entry, data.starting_equity),
        "drawdown_scale": drawdown_scale(by_entry, names, data.drawdown_limit_pct),
        "prices": _prices(data, t0),
        "fills": fills,
        "orders": orders,
        "rejections": rejections,
        "counts": counts,
        "costs": _costs(names, data.coin_pnl, data),
        "coin_pnl": coin_pnl,
        "round_trips": trips,
        "verdict": verdict_charts(doc.get("verdict") or data.verdict or {}, t0),
    }
