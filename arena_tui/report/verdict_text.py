"""The verdict in words: each answer as a sentence, and the block table they rest on.

Why this module exists: ``arena_tui.report.verdict`` decides (codes and figures); this says
it for a person, within the terminal's width: the block table (each block's S for up to six
entries: the strategy, the control, then the others, as many as fit, and the strategy's
lead over the control), then one line per question, each with the figures a reader can
check against the table and the ranking above. The same sentences go into report.json's
``text`` fields, so arena runs, report.html and arena-tui say exactly what the terminal
said. Blocks past a dozen are elided here; report.json holds them all.
"""

from __future__ import annotations

from typing import Any

from arena_tui.report.blocks_text import block_table
from arena_tui.report.charts import pct_trunc
from arena_tui.report.eligibility import share_pct
from arena_tui.report.layout import wrap
from arena_tui.util.human import plural, ratio_pct, stat_pct, usd


def _interval(d: dict[str, Any]) -> str:
    lo, hi = d["interval_float"]
    return f"{d['confidence_pct']}% interval {stat_pct(lo)} to {stat_pct(hi)}"


def ranked_text(r: dict[str, Any]) -> str:
    """Question 1 in words (``eligibility.pace_doc``)."""
    share = share_pct(r["active_share"])
    reasons = "; ".join(x["text"] for x in r["reasons"])
    answer = r["answer"]
    if answer == "no_trades":
        return "no trades to judge: no fills"
    if answer == "yes":
        return (
            f"yes: fills on {plural(r['fill_days'], 'UTC day')} (needs {r['min_fill_days']}), "
            f"active {share} of marks (needs {r['min_active_pct']}%)"
        )
    if "projected_fill_days" not in r:
        return f"no: {reasons}"
    pace = (
        f"at this pace ({plural(r['fill_days'], 'fill day')} in {plural(r['days'], 'day')}) "
        f"a {r['season_days']}-day season gives fills on {r['projected_fill_days']} days "
        f"(needs {r['min_fill_days']}) and active {share} (needs {r['min_active_pct']}%)"
    )
    if answer == "at_pace":
        return f"not in this run ({reasons}); {pace}: it would be ranked"
    return f"no: {reasons}; {pace}: still not"


def money_text(m: dict[str, Any], epoch: str) -> str:
    """Question 2 in words."""
    answer = m["answer"]
    if answer == "no_trades":
        return "no trades to judge"
    if answer == "too_few_blocks":
        return (
            f"can't tell: {plural(m['blocks'], 'block')} of {epoch} (needs at least 8; "
            "a shorter --epoch or more days give more)"
        )
    lead = {"makes_money": "yes", "loses_money": "no, it loses", "unclear": "can't tell"}[answer]
    return (
        f"{lead}: mean block S {stat_pct(m['mean_float'])} over "
        f"{plural(m['blocks'], 'block')} of {epoch}, {_interval(m)}"
        + (" (includes 0)" if answer == "unclear" else "")
    )


def skill_text(s: dict[str, Any]) -> str:
    """Question 3 in words."""
    answer = s["answer"]
    if answer == "no_trades":
        return "no trades to judge"
    if answer in ("off", "not_measured"):
        return f"not measured: {s['why']}"
    n, score = s["twins"], ratio_pct(s["score"])
    if s.get("days", 1) > 1:  # a sweep's held-out days: each day its own twins
        score = f"{score} (mean daily S over {s['days']} held-out days)"
    if answer == "no_freedom":
        if not n:  # (no twin traded: report.skill.Untimed)
            return (
                f"can't tell: it is in the market nearly all the run (its busiest coin "
                f"leaves {pct_trunc(s['freedom'])} of the window free), so its trips cannot "
                f"be timed otherwise: no random twins to compare with"
            )
        return (
            f"can't tell: it is in the market nearly all the run, so its {n} random twins "
            f"(the same trips at random times) cannot be timed otherwise"
        )
    if answer == "unmatched":
        m = s["match"]
        return (
            f"can't tell: its random twins could not repeat its trading (median fills "
            f"{m['twin_fills_median']} against its {m['fills']}, fees "
            f"${usd(m['twin_fees_median'])} against ${usd(m['fees'])}), so they are no control"
        )
    if answer == "no_spread":
        return (
            f"can't tell: all {n} random twins scored exactly its S {score} (the run is too "
            "short for its timing to change anything)"
        )
    where = f"S {score} is above {s['below']} of its {n} random twins"
    if s["ties"]:
        where += f" (equal to {s['ties']})"
    if answer == "skill":
        return f"yes: {where}, p {s['p_value']:.3f}: better timing than random"
    if answer == "worse_than_twins":
        return (
            f"no, its timing costs it: S {score} is below {s['above']} of its {n} random "
            f"twins, p {s['p_worse']:.3f}"
        )
    return f"not shown: {where}, p {s['p_value']:.3f}: random timing does as well that often"


def floor_text(f: dict[str, Any], control: str, epoch: str) -> str:
    """The floor (the strategy against ``control``) in words."""
    answer = f["answer"]
    if answer == "no_trades":
        return "no trades to judge"
    if answer in ("is_control", "no_control"):
        return str(f["why"])
    if answer == "too_few_blocks":
        return str(f["text"])
    word = {"better": "better than", "worse": "worse than"}.get(answer, "indistinguishable from")
    return (
        f"{word} {control}: mean lead {stat_pct(f['mean_float'])} a block over "
        f"{plural(f['paired_blocks'], 'block')} of {epoch}, {_interval(f)}"
    )


SHORT = {
    "ranked": {"yes": "ranked", "at_pace": "ranked at pace", "no": "not ranked"},
    "money": {
        "makes_money": "makes money",
        "loses_money": "loses money",
        "unclear": "money unclear",
        "too_few_blocks": "money: too few blocks",
    },
    "skill": {
        "skill": "skill",
        "luck": "luck",
        "worse_than_twins": "worse than its twins",
        "no_freedom": "skill: always in",
        "unmatched": "skill: no twin match",
        "no_spread": "skill: too short",
        "off": "skill not measured",
        "not_measured": "skill not measured",
    },
}


def summary(v: dict[str, Any]) -> str:
    """The three answers in a few words (arena runs list, the chart's title):
    ``ranked at pace · money unclear · luck``; ``no trades to judge``."""
    if v.get("verdict") == "no_trades":
        return "no trades to judge"
    if "ranked" not in v:
        return str(v.get("text") or "-")
    return " · ".join(str(SHORT[q].get(v[q]["answer"], v[q]["answer"])) for q in SHORT)


def fill_texts(v: dict[str, Any]) -> dict[str, Any]:
    """The doc with every answer's ``text`` and the whole verdict's (``summary``)."""
    if "ranked" not in v:
        return v
    epoch = v["epoch"]
    v["ranked"]["text"] = ranked_text(v["ranked"])
    v["money"]["text"] = money_text(v["money"], epoch)
    v["skill"]["text"] = skill_text(v["skill"])
    v["floor"]["text"] = floor_text(v["floor"], v["control"], epoch)
    v["text"] = summary(v)
    return v


def verdict_lines(v: dict[str, Any], width: int | None = None) -> list[str]:
    """The block table and the three answers (and the floor), within ``width`` columns
    (``None``: no limit)."""
    if "ranked" not in v:
        return wrap(f"verdict: {v.get('text', '-')}", width)
    v = fill_texts(v)
    if v["verdict"] == "no_trades":
        rej = v["trades"]["rejections"]
        why = (
            f"{plural(sum(rej.values()), 'order')} rejected: "
            + ", ".join(f"{reason} {n:,}" for reason, n in rej.items())
            if rej
            else "no order filled"
        )
        return wrap(
            f"the verdict on {v['strategy']}: no trades to judge ({why}); nothing it did can be "
            "ranked, make money or show skill",
            width,
        )
    unit = "UTC days" if v["epoch"] == "1d" else f"blocks of {v['epoch']}"
    chosen = f" ({v['epoch_chosen']})" if v.get("epoch_chosen") else ""
    lines = [
        *wrap(f"the verdict on {v['strategy']} (docs/verdict.md)", width),
        *wrap(
            f"  {unit}{chosen}; S = R - MDD in each block"
            + ("; lead = strategy's S minus control's" if v["floor"].get("diffs") else ""),
            width,
        ),
        *block_table(v, width),
    ]
    for label, key in (("ranked?", "ranked"), ("money? ", "money"), ("skill? ", "skill")):
        lines += wrap(f"  {label} {v[key]['text']}", width, indent="          ")
    skill = v["skill"]
    if "twin_median" in skill:
        m = skill["match"]
        lines += wrap(
            f"          twins: the strategy's {plural(m['trips'], 'trip')} re-timed at "
            f"random (seed {skill['seed']}); their S: median {ratio_pct(skill['twin_median'])}"
            f", 90% between {ratio_pct(skill['twin_range_90'][0])} and "
            f"{ratio_pct(skill['twin_range_90'][1])}; fills {m['twin_fills_median']} "
            f"(strategy {m['fills']})",
            width,
        )
    lines += wrap(f"  floor:  {v['floor']['text']}", width, indent="          ")
    return lines
