"""Why an entry is not ranked: the eligibility rules it misses, in words.

The engine decides eligibility (``engine.scoring.standing``) and reports the figures it
decided from: ``eligible``, ``fill_days``, ``active_marks`` and ``marks`` in each ranking
row. This module only names which of the season's rules those figures miss, comparing
them exactly as the engine does (``tests/test_report.py`` checks, over generated figures,
that an entry has reasons exactly when the engine calls it ineligible). An eligible row
has no reasons whatever the figures say: the engine's flag decides.
"""

from __future__ import annotations

from typing import Any

from engine import Rules
from engine.units import E8, tdiv


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
