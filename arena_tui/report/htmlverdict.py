"""What report.html's verdict charts draw: the strategy's block scores (money), its random
twins' S (skill) and its lead over the control block by block (the floor).

Why this module exists: ``htmldata`` turns a run into the page's data; the verdict is the
one part of it read from report.json's answers rather than from the run data, and it has
two shapes (the three answers, and an older report's one lead), so it is read here. Floats
are for drawing only: the page's words come from the answers' own ``text``.
"""

from __future__ import annotations

from typing import Any

from arena_tui.report.verdict_text import summary
from arena_tui.util.human import ratio_pct


def pct_f(e8: int) -> float:
    """An e8 ratio in percent (1e8 is 100%)."""
    return round(e8 / 1e6, 4)


def _pct_float(e8: float | None) -> float | None:
    """A float statistic in e8 units (a mean, a bound) in percent."""
    return None if e8 is None else round(e8 / 1e6, 6)


def _band(stat: dict[str, Any]) -> dict[str, float | None]:
    """A mean and its interval in percent (None when there are too few blocks for one)."""
    low, high = stat.get("interval_float") or (None, None)
    return {
        "mean": _pct_float(stat.get("mean_float")),
        "low": _pct_float(low),
        "high": _pct_float(high),
    }


def _old_band(v: dict[str, Any]) -> dict[str, float | None]:
    """The band of a report written before the three questions (integers at the top)."""
    mean = v.get("mean_diff")
    low, high = v.get("interval") or (None, None)
    return {
        "mean": None if mean is None else pct_f(mean),
        "low": None if low is None else pct_f(low),
        "high": None if high is None else pct_f(high),
    }


def verdict_charts(v: dict[str, Any], t0: int) -> dict[str, Any]:
    """What the verdict's charts draw: the strategy's block scores (money), its twins' S
    (skill) and its lead over the control block by block (the floor); None for a chart
    with nothing to draw (no trades; no twins; no control). A report written before the
    three questions has only the lead."""
    blocks = v.get("blocks", [])
    strategy = v.get("strategy") or ""
    out: dict[str, Any] = {
        "block_s": v.get("block_ms", 0) // 1000,
        "strategy": strategy,
        "control": v.get("control") or "",
        "epoch": v.get("epoch") or "",
        "text": summary(v) if v else "no verdict",
        "money": None,
        "skill": None,
        "floor": None,
    }
    if v.get("verdict") == "no_trades":
        return out  # nothing it did can be judged: no chart says otherwise
    answers = "ranked" in v
    if answers:
        scores = [
            {"start_s": (b["start"] - t0) // 1000, "v": pct_f(b["scores"][strategy]["score"])}
            for b in blocks
            if strategy in b.get("scores", {})
        ]
        out["money"] = {"blocks": scores, "answer": v["money"]["answer"]} | _band(v["money"])
        skill = v["skill"]
        if skill.get("twin_scores"):
            out["skill"] = {
                "twins": [pct_f(s) for s in skill["twin_scores"]],
                "score": pct_f(skill["score"]),
                "score_text": ratio_pct(skill["score"]),
                "n": skill["twins"],
                "p_value": skill["p_value"],
                "answer": skill["answer"],
            }
    diffs = [
        {"start_s": (b["start"] - t0) // 1000, "v": pct_f(b["diff"])}
        for b in blocks
        if b.get("diff") is not None  # a block without both entries: no difference
    ]
    if diffs:
        band = _band(v["floor"]) if answers else _old_band(v)
        out["floor"] = {"blocks": diffs} | band
    return out
