"""The printed report: the ranked table and what follows it, fitted to the terminal.

Why this module exists: ``render`` makes ``report.json`` and the files; this lays the same
document out for a person. The table's columns are as wide as their contents; on a
terminal narrower than the whole table the least needed columns go (funding first, then
rejections, exit value, fees, fills, active share and fill days, equity, MDD, R) and a line
names them; the rank, the full entry name, S and whether the entry is eligible (and if
not, why) always stay. Prose lines are wrapped at the width, never a table row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_tui.report.blocks_text import utc
from arena_tui.report.eligibility import eligible_text
from arena_tui.report.layout import wrap
from arena_tui.report.verdict_text import verdict_lines
from arena_tui.util.human import pct as pct
from arena_tui.util.human import ratio_pct
from arena_tui.util.human import usd as usd

GAP = "  "  # between two columns
NOT_FINAL = {
    "backtest": "not final: the logs end before the season does",
    "paper": "not final: stopped before the season's end",
    "replay": "not final: the log ends before the season does",
}


def eligible_cell(r: dict[str, Any]) -> str:
    return eligible_text(r["eligible"], r.get("ineligible_reasons") or [])


@dataclass(frozen=True)
class Column:
    head: str
    name: str  # in the line naming what a narrow terminal left out
    cell: Callable[[dict[str, Any]], str]
    left: bool = False


COLUMNS = [
    Column("rank", "rank", lambda r: str(r["rank"] or "-")),
    Column("entry", "entry", lambda r: r["entry"], left=True),
    Column("S", "S", lambda r: ratio_pct(r["score"])),
    Column("R", "R", lambda r: ratio_pct(r["return"])),
    Column("MDD", "MDD", lambda r: ratio_pct(r["mdd"])),
    Column("equity $", "equity", lambda r: usd(r["equity"])),
    Column(
        "exit $",
        "exit value",
        lambda r: "-" if r["exit_equity"] is None else usd(r["exit_equity"]),
    ),
    Column("fees $", "fees", lambda r: usd(sum(r["fees"].values()))),
    Column("fund $", "funding", lambda r: usd(r["funding"])),
    Column("fills t/m", "fills", lambda r: f"{r['fills']['taker']}/{r['fills']['maker']}"),
    Column("rej", "rejections", lambda r: str(sum(r["rejections"].values()))),
    Column("active", "active share", lambda r: pct(r["active_share"])),
    Column("days", "fill days", lambda r: str(r["fill_days"])),
    Column("eligible", "eligible", eligible_cell, left=True),
]
ALWAYS = ("rank", "entry", "S", "eligible")
# the others, the most needed first: a narrow terminal drops them from the end
BY_NEED = (
    "R", "MDD", "equity $", "days", "active", "fills t/m", "fees $", "exit $", "rej", "fund $",
)  # fmt: skip


def ranked_rows(entries: list[dict[str, Any]], width: int | None) -> list[str]:
    """The ranked table: every column that fits in ``width``, then a line naming the rest
    (and a line for each ineligible entry whose reasons do not fit its row, marked ``*``)."""
    cells = {c.head: [c.cell(r) for r in entries] for c in COLUMNS}
    notes: list[str] = []

    def size(head: str) -> int:
        return max([len(head), *(len(x) for x in cells[head])])

    def total(heads: list[str]) -> int:
        return sum(size(h) for h in heads) + len(GAP) * (len(heads) - 1)

    chosen = list(ALWAYS)
    if width is not None and total(chosen) > width:  # reasons too long for a row go below
        room = width - total(chosen[:-1]) - len(GAP)
        for i, (r, text) in enumerate(zip(entries, cells["eligible"], strict=True)):
            if len(text) > room and text.startswith("no: "):
                notes += wrap(f"* {r['entry']} is not eligible: {text[4:]}", width)
                cells["eligible"][i] = "no *"
        if total(chosen) > width:  # the names too long for the terminal: cut them
            room = max(width - (total(chosen) - size("entry")), 8)
            cells["entry"] = [n if len(n) <= room else n[: room - 1] + "~" for n in cells["entry"]]
    for head in BY_NEED:  # the most needed first, as long as they fit
        if width is not None and total([*chosen, head]) > width:
            break
        chosen.append(head)
    shown = [c for c in COLUMNS if c.head in chosen]
    widths = {c.head: size(c.head) for c in shown}

    def line(texts: list[str]) -> str:
        return GAP.join(
            f"{t:<{widths[c.head]}}" if c.left else f"{t:>{widths[c.head]}}"
            for c, t in zip(shown, texts, strict=True)
        ).rstrip()

    lines = [line([c.head for c in shown])]
    lines += [line([cells[c.head][i] for c in shown]) for i in range(len(entries))]
    dropped = [c.name for c in COLUMNS if c.head not in chosen]
    if dropped:
        text = f"(not shown at {width} columns, in report.json: {', '.join(dropped)})"
        lines += wrap(text, width)
    return lines + notes


def exit_warnings(doc: dict[str, Any]) -> list[str]:
    """One plain warning per entry whose exit value ever fell more than its limit away."""
    out = []
    for r in doc["entries"]:
        g = r.get("exit_gap")
        if not g or not g["marks_over"]:
            continue
        span = utc(g["first_over"])
        if g["last_over"] != g["first_over"]:
            span += f" to {utc(g['last_over'])}"
        out.append(
            f"warning: {r['entry']}: exit value was more than {g['limit_pct']}% away from mark "
            f"equity at {g['marks_over']} mark{'s' if g['marks_over'] != 1 else ''} "
            f"({span} UTC); worst {pct(g['worst_ratio'])} (${usd(abs(g['worst_gap']))}) "
            f"{'below' if g['worst_gap'] > 0 else 'above'} at "
            f"{utc(g['worst_at'])} UTC: a position the book could not absorb, so mark "
            "equity overstates what closing it would leave"
        )
    return out


def remote_texts(c: dict[str, int]) -> list[str]:
    """A lockstep agent's counts (report.json's ``remote``) in words."""
    text = f"{c['steps']} steps, {c['passes']} passed (not finished within --step-timeout), "
    text += f"{c['reconnects']} reconnects, {c.get('dropped_polls', 0)} dropped long polls; "
    text += f"the clock waited for it {c['waits']} times (at each step, and after each answer "
    text += "it got mid-step)"
    out = [text]
    cut = c.get("output_cut_bytes", 0)
    if cut:
        out.append(
            f"its output passed the cap: agent.out.log keeps its start, {cut:,} bytes more "
            "were not kept"
        )
    return out


def table(doc: dict[str, Any], width: int | None = None, out: Path | None = None) -> str:
    """The printed report of ``doc`` (report.json's document) within ``width`` columns
    (``None``: no limit); ``out``, the run directory, makes the run log's path whole."""
    rp = doc["replay"]
    state = "final" if rp["final"] else NOT_FINAL[doc.get("kind", "backtest")]
    paper = " · paper" if doc.get("paper") else ""  # Season 0's scores are paper trading
    head = f"season {rp['season']}  rules {rp['rules_sha256'][:12]}{paper}  ({state})"
    lines = [*wrap(head, width)]
    lines += ["", *ranked_rows(doc["entries"], width)]
    if any(r["rejections"] for r in doc["entries"]):
        lines += ["", "rejections by reason:"]
        for r in doc["entries"]:
            if r["rejections"]:
                text = ", ".join(f"{k} {v}" for k, v in r["rejections"].items())
                lines += wrap(f"  {r['entry']}: {text}", width)
    remote = [r for r in doc["entries"] if r.get("remote")]
    if remote:  # lockstep agents (arena backtest --agent, arena host --lockstep)
        lines += ["", "agents over HTTP, in lockstep:"]
        for r in remote:
            for text in remote_texts(r["remote"]):
                lines += wrap(f"  {r['entry']}: {text}", width)
    warnings = exit_warnings(doc)
    if warnings:
        lines.append("")
        for w in warnings:
            lines += wrap(w, width)
    lines += ["", *verdict_lines(doc["verdict"], width)]
    run_log = doc["run_log"]
    where = "-" if run_log is None else str(out / run_log if out is not None else run_log)
    lines += ["", f"run log       {where}", f"log_sha256    {rp['log_sha256']}"]
    return "\n".join(lines)
