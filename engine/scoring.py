"""Money over time: funding, the performance fee, minute marks, the drawdown limit, the score.

Why this module exists: everything that happens on the clock's boundaries rather than on an
input lives here, with the score (R, MDD, S), eligibility and the ranking order, so the
score rows and the final ranking are computed by the same code.

May not touch: order admission or fills, files, clocks, floats.
"""

from __future__ import annotations

from msgspec import Struct

from engine import events as ev
from engine.events import Reason
from engine.ledger import Ledger
from engine.orders import close
from engine.state import Account
from engine.units import DAY_MS, E8, tdiv


class Standing(Struct, frozen=True):
    """An entry's score as of one minute mark (or its start, before any mark)."""

    entry: str
    idx: int
    equity: int
    ret: int
    mdd: int
    score: int
    eligible: bool
    fill_days: int
    active_marks: int
    marks: int


def funding(eng: Ledger, h: int) -> None:
    for acct in eng.accounts.values():
        for asset in sorted(acct.positions):
            pos = acct.positions[asset]
            a = eng.assets[asset]
            if a.funding is None or a.oracle is None:
                continue
            num, den = a.funding
            payment = tdiv(pos * a.oracle * num, 10**10 * den)
            acct.cash -= payment
            eng.emit(ev.FundingPaid(t=h, entry=acct.name, asset=asset, payment=payment))


def performance_fee(eng: Ledger, b: int) -> None:
    pct = eng.rules.performance_fee_pct
    for acct in eng.accounts.values():
        equity = acct.equity(eng.assets)
        if equity > acct.fee_hwm:
            fee = tdiv((equity - acct.fee_hwm) * pct, 100)
            acct.cash -= fee
            acct.fee_hwm = equity - fee
            eng.emit(
                ev.PerformanceFee(
                    t=b, entry=acct.name, equity=equity, fee=fee, fee_hwm=acct.fee_hwm
                )
            )


def standing(eng: Ledger, acct: Account) -> Standing:
    """R, MDD, S and eligibility from the entry's state now (called at each mark)."""
    rules = eng.rules
    e0 = rules.starting_equity
    ret = tdiv((acct.last_equity - e0) * E8, e0)
    score = ret - tdiv(acct.mdd * rules.lambda_num, rules.lambda_den)
    fill_days = len(acct.fill_days)
    eligible = (
        fill_days >= rules.min_fill_days
        and acct.marks >= 1
        and acct.active_marks * 100 >= acct.marks * rules.min_active_pct
    )
    return Standing(
        entry=acct.name,
        idx=acct.idx,
        equity=acct.last_equity,
        ret=ret,
        mdd=acct.mdd,
        score=score,
        eligible=eligible,
        fill_days=fill_days,
        active_marks=acct.active_marks,
        marks=acct.marks,
    )


def final_standing(eng: Ledger, acct: Account) -> Standing:
    """The standing as of the last mark; an entry with no mark yet stands at zero."""
    if isinstance(acct.standing, Standing):
        return acct.standing
    return Standing(
        entry=acct.name,
        idx=acct.idx,
        equity=eng.rules.starting_equity,
        ret=0,
        mdd=0,
        score=0,
        eligible=False,
        fill_days=0,
        active_marks=0,
        marks=0,
    )


def order_key(s: Standing) -> tuple[int, int, int]:
    """S descending, then lower MDD, then earlier registration."""
    return (-s.score, s.mdd, s.idx)


def ranking(standings: list[Standing]) -> list[tuple[int | None, Standing]]:
    """Eligible entries ranked 1..n (never shared); ineligible ones follow, unranked."""
    ordered = sorted(standings, key=order_key)
    eligible = [s for s in ordered if s.eligible]
    rest = [s for s in ordered if not s.eligible]
    return [(i + 1, s) for i, s in enumerate(eligible)] + [(None, s) for s in rest]


def mark_entry(eng: Ledger, acct: Account, m: int) -> None:
    equity = acct.equity(eng.assets)
    acct.peak = max(acct.peak, equity)
    dd = tdiv((acct.peak - equity) * E8, acct.peak)
    acct.mdd = max(acct.mdd, dd)
    acct.last_equity = equity
    if not acct.paused and (acct.peak - equity) * 100 >= acct.peak * eng.rules.drawdown_limit_pct:
        acct.paused = True
        for order in list(acct.orders.values()):
            close(eng, order, m, Reason.VaultPaused)
        eng.emit(ev.Paused(t=m, entry=acct.name, equity=equity, peak=acct.peak))
    active = acct.is_active()
    acct.marks += 1
    acct.active_marks += active
    eng.emit(
        ev.MinuteMark(
            t=m,
            entry=acct.name,
            equity=equity,
            peak=acct.peak,
            drawdown=dd,
            mdd=acct.mdd,
            active=active,
        )
    )


def minute_mark(eng: Ledger, m: int) -> None:
    """Mark every registered entry, then refresh each one's score row for the mark's day."""
    for acct in eng.accounts.values():
        mark_entry(eng, acct, m)
    eng.last_mark = m
    day = tdiv(m - 1, DAY_MS)
    for acct in eng.accounts.values():
        acct.standing = standing(eng, acct)
    standings = sorted((final_standing(eng, a) for a in eng.accounts.values()), key=order_key)
    for rank, s in enumerate(standings, start=1):
        eng.emit(
            ev.ScoreRow(
                t=m,
                entry=s.entry,
                day=day,
                equity=s.equity,
                ret=s.ret,
                mdd=s.mdd,
                score=s.score,
                rank=rank,
                eligible=s.eligible,
                fill_days=s.fill_days,
                active_marks=s.active_marks,
                marks=s.marks,
                active_share=tdiv(s.active_marks * E8, s.marks),
            )
        )
