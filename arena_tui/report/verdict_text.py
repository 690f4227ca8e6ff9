"""The report's answer to "beats the control?": the block table and the verdict, as text.

Why this module exists: ``arena_tui.report.verdict`` computes (block scores, the bootstrap);
this renders its document for a person, within 100 columns: each block's S for up to six
entries (the strategy, the control, then the others), the strategy's lead, the interval
and the verdict in words. Blocks past two dozen are elided; report.json holds them all.
"""

from __future__ import annotations

import time
from typing import Any

BLOCK_ROWS = 24  # more blocks than this: the table shows the first and last ten


def utc(t_ms: int, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return time.strftime(fmt, time.gmtime(t_ms // 1000))


def signed(e8: float) -> str:
    """A float e8 ratio as a signed percentage, 3 decimals (the bootstrap's figures)."""
    return f"{e8 / 10**6:+.3f}%"


def pct3(ratio_e8: int) -> str:
    """An e8 ratio as a percentage with 3 decimals, truncated toward zero (block scores:
    a block's differences are often below the table's 0.01%)."""
    sign = "-" if ratio_e8 < 0 else ""
    whole, frac = divmod(abs(ratio_e8), 10**6)
    return f"{sign}{whole}.{frac // 10**3:03d}%"


def verdict_lines(v: dict[str, Any]) -> list[str]:
    """The block table (S per block for each entry, the strategy's lead) and the verdict."""
    if v["verdict"] == "no_control":
        return [f"beats the control? {v['text']}"]
    names = list(v["blocks"][0]["scores"]) if v["blocks"] else []
    if v["control"] in names:  # the strategy, then the control, then the rest
        names.remove(v["control"])
        names.insert(1 if names else 0, v["control"])
    names = names[:6]
    daily = v["block_ms"] % 86_400_000 == 0
    unit = "UTC days" if v["epoch"] == "1d" else f"blocks of {v['epoch']}"
    lines = [
        f"beats the control? {v['strategy']} against {v['control']}",
        f"  {unit}; S = R - MDD within each block; lead = the strategy's S minus the control's",
        f"  {'block (UTC)':<17}" + "".join(f" {n[:10]:>10}" for n in names) + f" {'lead':>9}",
    ]
    full = v["block_ms"] // 60_000
    rows = v["blocks"]
    shown = rows if len(rows) <= BLOCK_ROWS else [*rows[:10], None, *rows[-10:]]
    partial = False
    for row in shown:
        if row is None:
            lines.append(f"  ... {len(rows) - 20} more blocks (all in report.json)")
            continue
        marks = max((s["marks"] for s in row["scores"].values()), default=0)
        mark = "*" if marks < full else " "
        partial |= marks < full
        cells = "".join(
            f" {pct3(row['scores'][n]['score']) if n in row['scores'] else '-':>10}" for n in names
        )
        lead = "-" if row.get("diff") is None else pct3(row["diff"])
        label = utc(row["start"], "%Y-%m-%d" if daily else "%Y-%m-%d %H:%M") + mark
        lines.append(f"  {label:<17}{cells} {lead:>9}")
    if partial:
        lines.append("  * a partial block: the run covers only part of it")
    if v.get("interval") is not None:
        lo, hi = v["interval"]
        lines.append(
            f"  mean lead {signed(v['mean_diff'])} a block over {v['paired_blocks']} blocks; "
            f"{v['confidence_pct']}% interval {signed(lo)} to {signed(hi)}"
        )
        lines.append(
            f"  ({v['resamples']:,} paired block-bootstrap resamples (runs of consecutive blocks), "
            f"seed {v['seed']})"
        )
    if v.get("note"):
        lines.append(f"  {v['note']}")
    lines.append(f"verdict: {v['text']}")
    return lines
