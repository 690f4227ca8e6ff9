"""The API's answers built from the engine's state and the views: no second copy of either.

Why this module exists: a handler must answer from exactly what the engine holds (an
order's reserve, an account's cap) so an agent never plans against numbers the engine
disagrees with. Each function reads the engine through its read face, builds one Struct of
the wire vocabulary (``arena_tui.wire.api``), and changes nothing.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Literal

import msgspec

from arena_tui.host.views import Marks, Views
from arena_tui.season.file import PAPER
from arena_tui.wire import api as s
from engine import PENDING, Engine, Season, decode_levels, format_cloid, tdiv
from engine import events as ev
from engine.inputs import Level as RawLevel

MAX_FILLS = 1000  # fills in one answer; ``more`` says there are others after them
MAX_MARKS = 5000  # minute marks in one answer (three and a half days of them)


def orders(eng: Engine, entry: str, notes: Mapping[tuple[str, int], str] | None = None) -> s.Orders:
    """The entry's open orders, each with its note (``notes``: Views.notes)."""
    notes = notes or {}
    life = eng.rules.order_lifetime_ms
    coins = {a.asset: a.coin for a in eng.coin_states()}
    out = [
        s.OpenOrder(
            oid=o.oid,
            cloid=format_cloid(o.cloid),
            asset=o.asset,
            coin=coins[o.asset],
            isBuy=o.is_buy,
            limitPx=o.limit_px,
            sz=o.sz,
            reduceOnly=o.reduce_only,
            encodedTif=o.tif,
            filled=o.filled,
            state="pending" if o.state == PENDING else "resting",
            received=o.received,
            reserve=o.reserve,
            cancel_at=o.cancel_at,
            expires_at=o.received + life,
            note=notes.get((entry, o.oid)),
        )
        for o in eng.open_orders_of(entry)
    ]
    return s.Orders(orders=out)


def fill(e: ev.Fill, seq: int, note: str | None) -> s.Fill:
    return s.Fill(
        seq=seq,
        t=e.t,
        entry=e.entry,
        oid=e.oid,
        cloid=format_cloid(e.cloid),
        asset=e.asset,
        isBuy=e.is_buy,
        px=e.px,
        sz=e.sz,
        liquidity="taker" if e.taker else "maker",
        venue_fee=e.venue_fee,
        exec_fee=e.exec_fee,
        quote=e.quote,
        note=note,
    )


def fills_span(views: Views, entry: str, since: int) -> tuple[int, int]:
    """The indexes ``[first, last)`` of the entry's fills an answer for ``since`` holds."""
    first = bisect.bisect_left(views.fill_times.get(entry, []), since)
    return first, min(len(views.fills.get(entry, ())), first + MAX_FILLS)


def fills(views: Views, entry: str, since: int) -> s.Fills:
    """The entry's fills with ``t >= since``, oldest first, at most MAX_FILLS."""
    mine = views.fills.get(entry, [])
    first, last = fills_span(views, entry, since)
    out = [fill(mine[i], i + 1, views.note_of(mine[i])) for i in range(first, last)]
    return s.Fills(fills=out, more=last < len(mine))


def mark_out(marks: Marks, i: int) -> s.MarkOut:
    return s.MarkOut(
        t=marks.t[i],
        equity=marks.equity[i],
        peak=marks.peak[i],
        drawdown=marks.drawdown[i],
        mdd=marks.mdd[i],
        active=bool(marks.active[i]),
    )


def equity(views: Views, entry: str, since: int) -> s.Equity:
    """The entry's minute marks with ``t >= since``, oldest first, at most MAX_MARKS."""
    marks = views.marks.get(entry)
    if marks is None:
        return s.Equity(entry=entry, marks=[], more=False)
    first = marks.first_at(since)
    last = min(len(marks), first + MAX_MARKS)
    out = [mark_out(marks, i) for i in range(first, last)]
    return s.Equity(entry=entry, marks=out, more=last < len(marks))


def _row(r: ev.ScoreRow) -> s.ScoreRow:
    return s.ScoreRow(
        day=r.day,
        t=r.t,
        entry=r.entry,
        rank=r.rank,
        equity=r.equity,
        ret=r.ret,
        mdd=r.mdd,
        score=r.score,
        eligible=r.eligible,
        fill_days=r.fill_days,
        active_share=r.active_share,
    )


def entries(eng: Engine, views: Views, season: Season) -> s.Entries:
    """Every registered entry, by name, with its latest minute mark and score row."""
    out = []
    for name in sorted(eng.entries()):
        marks = views.marks.get(name)
        row = views.latest.get(name)
        out.append(
            s.EntryOut(
                entry=name,
                fills=len(views.fills.get(name, ())),
                marks=0 if marks is None else len(marks),
                mark=mark_out(marks, len(marks) - 1) if marks else None,
                row=None if row is None else _row(row),
            )
        )
    return s.Entries(season=season.id, paper=PAPER, entries=out)


def account(eng: Engine, entry: str) -> s.Account:
    acct = eng.account(entry)
    if acct is None:
        raise KeyError(entry)
    positions = []
    for asset, pos in acct.positions.items():
        a = eng.asset_state(asset)
        assert a is not None  # (a position is in a market of the season)
        positions.append(s.Position(asset=asset, coin=a.coin, sz=pos, mark=a.mark))
    equity = eng.equity(entry)
    return s.Account(
        entry=entry,
        t=eng.t,
        cash=acct.cash,
        equity=equity,
        positions=positions,
        reserved=acct.reserved,
        exposure=eng.exposure(entry),
        cap=tdiv(equity * eng.rules.position_cap_pct, 100),
        open_orders=len(acct.orders),
        paused=acct.paused,
        peak=acct.peak,
        mdd=acct.mdd,
        fee_hwm=acct.fee_hwm,
        marks=acct.marks,
        active_marks=acct.active_marks,
        fill_days=len(acct.fill_days),
    )


def season_info(eng: Engine, season: Season, now: int, body_max: int) -> s.SeasonInfo:
    state: Literal["before", "running", "over"] = "running"
    if eng.over:
        state = "over"
    elif now < season.start:
        state = "before"
    rules = season.rules
    return s.SeasonInfo(
        id=season.id,
        start=season.start,
        end=season.end,
        markets=[s.MarketOut(m.coin, m.asset, m.szDecimals) for m in season.markets],
        rules=msgspec.to_builtins(rules),
        rules_sha256=season.rules_sha256,
        paper=PAPER,
        t=now,
        state=state,
        limits=s.Limits(rules.rate_limit_requests, rules.rate_limit_window_ms, body_max),
    )


def _levels(side: list[RawLevel]) -> list[s.Level]:
    return [s.Level(px=lv.px, sz=lv.sz, n=lv.n) for lv in side]


def book(eng: Engine, views: Views, coin: str) -> s.BookOut | None:
    """The latest book of ``coin`` (None: not a market of the season)."""
    a = eng.coin_state(coin)
    if a is None:
        return None
    seen = views.books.get(coin)
    if seen is None:
        return s.BookOut(coin, a.asset, None, None, [[], []], a.mark, False)
    t, data = seen
    bids, asks = decode_levels(data)
    stale = t - data.time > eng.rules.stale_book_ms
    return s.BookOut(coin, a.asset, t, data.time, [_levels(bids), _levels(asks)], a.mark, stale)
