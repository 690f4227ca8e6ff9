"""The report's answer to "beats the control?": the block table and the verdict, as text.

Why this module exists: ``arena_tui.report.verdict`` computes (block scores, the bootstrap);
this renders its document for a person, within the terminal's width: each block's S for up
to six entries (the strategy, the control, then the others, as many as fit), the strategy's
lead, the interval and the verdict in words. Blocks past two dozen are elided; report.json
holds them all.
"""

from __future__ import annotations

import time
from typing import Any

from arena_tui.report.layout import wrap
from arena_tui.util.human import plural

BLOCK_ROWS = 24  # more blocks than this: the table shows the first and last ten
MAX_NAMES = 6  # entries with a column (report.json has them all)
COL_W = 8  # a score column's least width
GAP = "  "  # between two columns


def utc(t_ms: int, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return time.strftime(fmt, time.gmtime(t_ms // 1000))


def signed(e8: int) -> str:
    """An e8 ratio as a signed percentage, 3 decimals, truncated (the bootstrap's figures)."""
    return ("-" if e8 < 0 else "+") + pct3(abs(e8))


def pct3(ratio_e8: int) -> str:
    """An e8 ratio as a percentage with 3 decimals, truncated toward zero (block scores:
    a block's differences are often below the table's 0.01%)."""
    sign = "-" if ratio_e8 < 0 else ""
    whole, frac = divmod(abs(ratio_e8), 10**6)
    return f"{sign}{whole}.{frac // 10**3:03d}%"


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
    shown = rows if len(rows) <= BLOCK_ROWS else [*rows[:10], None, *rows[-10:]]
    names = ordered(v)
    labels, leads, partial = [], [], False
    for row in shown:
        if row is None:
            continue
        marks = max((s["marks"] for s in row["scores"].values()), default=0)
        partial |= marks < full
        stamp = utc(row["start"], "%Y-%m-%d" if daily else "%Y-%m-%d %H:%M")
        labels.append(stamp + ("*" if marks < full else " "))
        leads.append("-" if row.get("diff") is None else pct3(row["diff"]))
    scores = {
        n: [pct3(r["scores"][n]["score"]) if n in r["scores"] else "-" for r in shown if r]
        for n in names
    }
    heads = {n: n for n in names}
    label_w = max([len("block (UTC)"), *map(len, labels)])
    lead_w = max([len("lead"), *map(len, leads)])

    def total() -> int:
        cols = (max([COL_W, len(heads[n]), *map(len, scores[n])]) for n in names)
        return 2 + label_w + sum(len(GAP) + w for w in cols) + len(GAP) + lead_w

    dropped = 0
    while width is not None and total() > width and len(names) > 2:
        names.pop()
        dropped += 1
    if width is not None and total() > width:
        heads[names[0]] = "strategy" if names[0] == v["strategy"] else heads[names[0]]
        if len(names) > 1 and names[1] == v["control"]:
            heads[names[1]] = "control"
    cols = {n: max([COL_W, len(heads[n]), *map(len, scores[n])]) for n in names}
    lines = [
        f"  {'block (UTC)':<{label_w}}"
        + "".join(f"{GAP}{heads[n]:>{cols[n]}}" for n in names)
        + f"{GAP}{'lead':>{lead_w}}"
    ]
    i = 0
    for row in shown:
        if row is None:
            lines.append(f"  ... {plural(len(rows) - 20, 'more block')} (all in report.json)")
            continue
        cells = "".join(f"{GAP}{scores[n][i]:>{cols[n]}}" for n in names)
        lines.append(f"  {labels[i]:<{label_w}}{cells}{GAP}{leads[i]:>{lead_w}}")
        i += 1
    if partial:
        lines.append("  * a partial block: the run covers only part of it")
    if dropped:
        others = plural(dropped, "other entry", "other entries")
        lines += wrap(f"  ({others} not shown at {width} columns: in report.json)", width)
    return lines


def verdict_lines(v: dict[str, Any], width: int | None = None) -> list[str]:
    """The block table (S per block for each entry, the strategy's lead) and the verdict,
    within ``width`` columns (``None``: no limit)."""
    if v["verdict"] == "no_control":
        return wrap(f"beats the control? {v['text']}", width)
    unit = "UTC days" if v["epoch"] == "1d" else f"blocks of {v['epoch']}"
    lines = [
        *wrap(f"beats the control? {v['strategy']} against {v['control']}", width),
        *wrap(
            f"  {unit}; S = R - MDD in each block; lead = strategy's S minus control's",
            width,
        ),
        *block_table(v, width),
    ]
    if v.get("interval") is not None:
        lo, hi = v["interval"]
        lines += wrap(
            f"  mean lead {signed(v['mean_diff'])} a block over "
            f"{plural(v['paired_blocks'], 'block')}; "
            f"{v['confidence_pct']}% interval {signed(lo)} to {signed(hi)}",
            width,
        )
        lines += wrap(
            f"  ({v['resamples']:,} paired block-bootstrap resamples (runs of consecutive "
            f"blocks), seed {v['seed']})",
            width,
        )
    if v.get("note"):
        lines += wrap(f"  {v['note']}", width)
    return [*lines, *wrap(f"verdict: {v['text']}", width)]
