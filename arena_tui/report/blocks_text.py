"""The block table the verdict rests on: each block's S per entry and the strategy's lead.

Why this module exists: the answers (``verdict_text``) quote means and intervals of block
scores; this lays the blocks themselves out for a person, within the terminal's width, so a
reader can check them: each block's S for up to six entries (the strategy, the control,
then the others, as many as fit) and the strategy's lead over the control, every digit
(``ratio_pct``). Blocks past a dozen are elided; report.json holds them all.
"""

from __future__ import annotations

import time
from typing import Any

from arena_tui.report.layout import wrap
from arena_tui.util.human import plural, ratio_pct, signed_pct
from engine.units import DAY_MS, MINUTE_MS

BLOCK_ROWS = 12  # more blocks than this: the table shows the first and last five
MAX_NAMES = 6  # entries with a column (report.json has them all)
COL_W = 8  # a score column's least width
GAP = "  "  # between two columns


def utc(t_ms: int, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return time.strftime(fmt, time.gmtime(t_ms // 1000))


def signed(e8: int) -> str:
    """An e8 ratio as an exact signed percentage (the block table's lead)."""
    return signed_pct(e8)


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
    daily = v["block_ms"] % DAY_MS == 0
    full = v["block_ms"] // MINUTE_MS
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
