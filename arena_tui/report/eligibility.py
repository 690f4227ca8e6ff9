"""Why an entry is not ranked: the eligibility rules it misses, in words.

The engine decides eligibility (``engine.scoring.standing``) and reports the figures it
decided from: ``eligible``, ``fill_days``, ``active_marks`` and ``marks`` in each ranking
row. This module only names which of the season's rules those figures miss, comparing
them exactly as the engine does (``tests/test_report.py`` checks, over generated figures,
that an entry has reasons exactly when the engine calls it ineligible). An eligible row
has no reasons whatever the figures say: the engine's flag decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena_tui.run.stats import MarkRow
from engine import Rules
from engine.units import DAY_MS, E8, tdiv


def share_pct(ratio_e8: int) -> str:
    """An e8 ratio as a percentage with 2 decimals, truncated (as the report's table)."""
    whole, frac = divmod(ratio_e8, 10**6)
    return f"{whole}.{frac // 10**4:02d}%"


def ineligible_reasons(row: dict[str, Any], rules: Rules) -> list[dict[str, str]]:
    """``[{"rule", "text"}]`` for each rule a ranking row misses; ``[]`` when eligible.

    ``rule`` names the season's rule (``min_fill_days``, ``min_active_pct``, or ``marks``
    for an entry with no minute mark yet); ``text`` says it with the entry's figure, e.g.
    ``fill days 1 of 10``.
    """
    if row["eligible"]:
        return []
    out = []
    fill_days, active, marks = row["fill_days"], row["active_marks"], row["marks"]
    if fill_days < rules.min_fill_days:
        out.append(
            {"rule": "min_fill_days", "text": f"fill days {fill_days} of {rules.min_fill_days}"}
        )
    if marks < 1:
        out.append({"rule": "marks", "text": "no minute mark yet"})
    elif active * 100 < marks * rules.min_active_pct:
        share = share_pct(tdiv(active * E8, marks))
        out.append(
            {
                "rule": "min_active_pct",
                "text": f"active {share} of marks, needs {rules.min_active_pct}%",
            }
        )
    if not out:  # the engine said no for a rule this module does not know yet
        out.append({"rule": "unknown", "text": "not eligible (see the season's rules)"})
    return out


def eligible_text(eligible: bool, reasons: list[dict[str, str]]) -> str:
    """The table's word for it: ``yes``, or ``no: fill days 1 of 10; ...``."""
    if eligible:
        return "yes"
    return "no: " + "; ".join(r["text"] for r in reasons) if reasons else "no"


SEASON_DAYS = 28  # Season 0's window (the contract: 40,320 minute marks)


def covered_days(marks: Sequence[MarkRow]) -> int:
    """The UTC days the entry's marks fall on (a mark closes the minute before it)."""
    return len({tdiv(m.t - 1, DAY_MS) for m in marks})


def pace_doc(
    row: dict[str, Any], marks: Sequence[MarkRow], rules: Rules, fills: int
) -> dict[str, Any]:
    """Question 1, "would it be ranked?", for a run: ``pace`` of its ranking row, the
    days its marks cover."""
    return pace(
        rules,
        eligible=bool(row["eligible"]),
        fill_days=row["fill_days"],
        days=covered_days(marks),
        active_marks=row["active_marks"],
        marks=row["marks"],
        fills=fills,
        reasons=ineligible_reasons(row, rules),
    )


def pace(
    rules: Rules,
    *,
    eligible: bool,
    fill_days: int,
    days: int,
    active_marks: int,
    marks: int,
    fills: int,
    reasons: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """Would it be ranked: the engine's eligibility, and for runs shorter than the season
    what the same pace gives over ``SEASON_DAYS``.

    The pace is the share of the run's UTC days with a fill (partial days count as days:
    a 6-hour run with fills has a pace of 1 day in 1, roughly said), projected over the
    season: ``fill_days * SEASON_DAYS // days``; the active share is the run's own. It
    would be ranked when both clear the season's rules. An entry with no fills: no
    trades to judge. ``reasons``: the rules the run itself misses (default: from the
    figures, as ``ineligible_reasons``).
    """
    if reasons is None:
        row = {"eligible": eligible, "fill_days": fill_days}
        reasons = ineligible_reasons(row | {"active_marks": active_marks, "marks": marks}, rules)
    share = tdiv(active_marks * E8, marks) if marks else 0
    base: dict[str, Any] = {
        "eligible": eligible,
        "fill_days": fill_days,
        "days": days,
        "min_fill_days": rules.min_fill_days,
        "active_share": share,
        "min_active_pct": rules.min_active_pct,
        "reasons": reasons,
    }
    if fills == 0:
        return base | {"answer": "no_trades"}
    if eligible:
        return base | {"answer": "yes"}
    if days >= SEASON_DAYS or days == 0:
        return base | {"answer": "no"}
    projected = min(SEASON_DAYS, fill_days * SEASON_DAYS // days)
    active_ok = marks > 0 and active_marks * 100 >= marks * rules.min_active_pct
    at_pace = projected >= rules.min_fill_days and active_ok
    return base | {
        "answer": "at_pace" if at_pace else "no",
        "season_days": SEASON_DAYS,
        "projected_fill_days": projected,
    }
