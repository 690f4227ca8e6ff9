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

import time
from typing import Any

from arena_tui.report.eligibility import share_pct
from arena_tui.report.layout import wrap
from arena_tui.util.human import plural, ratio_pct, signed_pct, stat_pct, usd

BLOCK_ROWS = 12  # more blocks than this: the table shows the first and last five
MAX_NAMES = 6  # entries with a column (report.json has them all)
COL_W = 8  # a score column's least width
GAP = "  "  # between two columns
FLOOR_WORDS = "the season's fixed floor: momentum's exits, coin-flip entries"


def utc(t_ms: int, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return time.strftime(fmt, time.gmtime(t_ms // 1000))


def signed(e8: int) -> str:
    """An e8 ratio as an exact signed percentage (the block table's lead)."""
    return signed_pct(e8)


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
            f"yes: fills on {r['fill_days']} UTC days (needs {r['min_fill_days']}), "
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
        return f"not in this run ({reasons}); {pace}: it would be"
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
    if answer == "no_freedom":
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


def ordered(v: dict[str, Any]) -> list[str]:
    """The entries with block scores: the strategy, then the control, then the rest."""
    names = list(v["blocks"][0]["scores"]) if v["blocks"] else []
    if v["control"] in names:
        names.remove(v["control"])
        names.insert(1 if names else 0, v["control"])
    return names[:MAX_NAMES]


def block_table(v: dict[str, Any], width: int | None) -> list[str]:
    """Each block's S per entry and the lead, the columns as wide as their contents. On a
    narrow terminal the other entries go first (a line says so), then the strategy's and
    the control's columns are headed ``strategy`` and ``control`` (named in full above)."""
    daily = v["block_ms"] % 86_400_000 == 0
    full = v["block_ms"] // 60_000
    rows = v["blocks"]
    keep = BLOCK_ROWS // 2 - 1
    shown = rows if len(rows) <= BLOCK_ROWS else [*rows[:keep], None, *rows[-keep:]]
    names = ordered(v)
    has_lead = any(r.get("diff") is not None for r in rows)
    labels, leads, partial = [], [], False
    for row in shown:
        if row is None:
            continue
        marks = max((s["marks"] for s in row["scores"].values()), default=0)
        partial |= marks < full
        stamp = utc(row["start"], "%Y-%m-%d" if daily else "%m-%d %H:%M")
        labels.append(stamp + ("*" if marks < full else " "))
        leads.append("-" if row.get("diff") is None else signed(row["diff"]))
    scores = {
        n: [ratio_pct(r["scores"][n]["score"]) if n in r["scores"] else "-" for r in shown if r]
        for n in names
    }
    heads = {n: n for n in names}
    year = "" if daily or not rows else utc(rows[0]["start"], " %Y")
    label_head = f"block (UTC{year})"
    label_w = max([len(label_head), *map(len, labels)])
    lead_w = max([len("lead"), *map(len, leads)]) if has_lead else 0

    def total() -> int:
        cols = (max([COL_W, len(heads[n]), *map(len, scores[n])]) for n in names)
        lead = len(GAP) + lead_w if has_lead else 0
        return 2 + label_w + sum(len(GAP) + w for w in cols) + lead

    dropped = 0
    while width is not None and total() > width and len(names) > 2:
        names.pop()
        dropped += 1
    if width is not None and total() > width:
        heads[names[0]] = "strategy" if names[0] == v["strategy"] else heads[names[0]]
        if len(names) > 1 and names[1] == v["control"]:
            heads[names[1]] = "control"
    cols = {n: max([COL_W, len(heads[n]), *map(len, scores[n])]) for n in names}
    lead_head = f"{GAP}{'lead':>{lead_w}}" if has_lead else ""
    lines = [
        f"  {label_head:<{label_w}}"
        + "".join(f"{GAP}{heads[n]:>{cols[n]}}" for n in names)
        + lead_head
    ]
    i = 0
    for row in shown:
        if row is None:
            lines.append(f"  ... {plural(len(rows) - 2 * keep, 'more block')} (all in report.json)")
            continue
        cells = "".join(f"{GAP}{scores[n][i]:>{cols[n]}}" for n in names)
        lead = f"{GAP}{leads[i]:>{lead_w}}" if has_lead else ""
        lines.append(f"  {labels[i]:<{label_w}}{cells}{lead}")
        i += 1
    if partial:
        lines.append("  * a partial block: the run covers only part of it")
    if dropped:
        others = plural(dropped, "other entry", "other entries")
        lines += wrap(f"  ({others} not shown at {width} columns: in report.json)", width)
    return lines


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
            indent="            ",
        )
    lines += wrap(f"  floor:  {v['floor']['text']}", width, indent="          ")
    return lines
