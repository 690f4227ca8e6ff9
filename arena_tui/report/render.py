"""A backtest's report: the ranked table for people, and the files in ``--out``.

Why this module exists: the runner says what happened (engine events, per entry); this
module only renders it: the ranked table with the score, costs and activity of each entry,
``report.json`` (everything, for programs), ``fills.csv`` and ``equity.csv`` (every fill,
every minute mark with its exit-value equity), ``chart.svg``; and, after the table, a
warning where exit-value equity fell far from mark equity, whether the strategy beats the
random control block by block (``arena_tui.report.verdict``, as text by ``verdict_text``), and
a text chart (``arena_tui.report.charts``).
The engine's figures are integers, formatted without floats; only the bootstrap's mean and
interval are floats.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import typer

from arena_tui.report.charts import terminal_chart
from arena_tui.report.chartsvg import svg_chart
from arena_tui.report.verdict import verdict_doc
from arena_tui.report.verdict_text import utc, verdict_lines
from arena_tui.run.parts import BacktestResult, Entrant
from arena_tui.run.stats import MarkRow
from arena_tui.util.jsonout import dumps
from engine.orders import format_cloid
from engine.units import E8, format_e6, format_e8, tdiv

GAP_PCT = 1  # exit value this far below (or above) mark equity: the book cannot absorb it


def pct(ratio_e8: int) -> str:
    """An e8 ratio as a percentage with 2 decimals, truncated toward zero."""
    sign = "-" if ratio_e8 < 0 else ""
    whole, frac = divmod(abs(ratio_e8), 10**6)
    return f"{sign}{whole}.{frac // 10**4:02d}%"


def usd(e6: int) -> str:
    """Money e6 as dollars with cents, truncated toward zero."""
    sign = "-" if e6 < 0 else ""
    whole, frac = divmod(abs(e6), 10**6)
    return f"{sign}{whole:,}.{frac // 10**4:02d}"


def exit_gap(marks: list[MarkRow]) -> dict[str, Any] | None:
    """How far exit-value equity came from mark equity: the worst mark, and the marks where
    the gap exceeded GAP_PCT of equity (a position the displayed book cannot absorb)."""
    worst: tuple[int, MarkRow] | None = None
    over: list[int] = []
    for m in marks:
        if m.exit_equity is None or m.equity <= 0:
            continue
        ratio = tdiv(abs(m.equity - m.exit_equity) * E8, m.equity)
        if worst is None or ratio > worst[0]:
            worst = (ratio, m)
        if abs(m.equity - m.exit_equity) * 100 > m.equity * GAP_PCT:
            over.append(m.t)
    if worst is None:
        return None
    ratio, w = worst
    return {
        "worst_at": w.t,
        "worst_gap": w.equity - (w.exit_equity or 0),  # mark minus exit, e6
        "worst_ratio": ratio,  # |gap| / mark equity, e8
        "limit_pct": GAP_PCT,
        "marks_over": len(over),
        "first_over": over[0] if over else None,
        "last_over": over[-1] if over else None,
    }


def entry_doc(e: Entrant, row: dict[str, Any]) -> dict[str, Any]:
    """One entry of report.json: the ranking row, then what its events add up to."""
    s = e.stats
    last = s.marks[-1] if s.marks else None
    active = row["active_marks"]
    marks = row["marks"]
    return {
        **row,
        "strategy": str(e.path),
        "active_share": (active * 10**8 // marks) if marks else 0,
        "fees": {"venue": s.venue_fees, "execution": s.exec_fees, "performance": s.perf_fees},
        "funding": s.funding,
        "fills": {"taker": s.taker_fills, "maker": s.maker_fills},
        "orders_accepted": s.orders_accepted,
        "rejections": dict(sorted(s.rejections.items())),
        "closes": dict(sorted(s.closes.items())),
        "paused_at": s.paused_at,
        "exit_equity": None if last is None else last.exit_equity,
        "exit_gap": exit_gap(s.marks),
    }


def report_doc(result: BacktestResult, *, epoch: str = "1d", seed: int = 0) -> dict[str, Any]:
    by_name = {e.name: e for e in result.entrants}
    rows = [r for r in result.replay.ranking if r["entry"] in by_name]
    rules = result.replay.season.rules
    verdict = verdict_doc(
        [(e.name, e.stats.marks) for e in result.entrants],
        epoch=epoch,
        seed=seed,
        starting_equity=rules.starting_equity,
        lambda_num=rules.lambda_num,
        lambda_den=rules.lambda_den,
    )
    return {
        "replay": result.replay.to_json(),
        "run_log": None if result.run_log is None else str(result.run_log),
        "inputs": result.inputs,
        "own_inputs": result.own_inputs,
        "dropped_inputs": result.dropped,
        "entries": [entry_doc(by_name[r["entry"]], r) for r in rows],
        "epoch": epoch,
        "verdict": verdict,
    }


def exit_warnings(doc: dict[str, Any]) -> list[str]:
    """One plain warning per entry whose exit value ever fell more than GAP_PCT away."""
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


NOT_FINAL = {
    "backtest": "not final: the logs end before the season does",
    "paper": "not final: stopped before the season's end",
}


def table(doc: dict[str, Any]) -> str:
    rp = doc["replay"]
    state = "final" if rp["final"] else NOT_FINAL[doc.get("kind", "backtest")]
    head = (
        f"{'rank':>4}  {'entry':<16} {'S':>8} {'R':>8} {'MDD':>7} {'equity $':>12} "
        f"{'exit $':>12} {'fees $':>9} {'fund $':>8} {'fills t/m':>9} {'rej':>4} "
        f"{'active':>7} {'days':>4}  eligible"
    )
    lines = [f"season {rp['season']}  rules {rp['rules_sha256'][:12]}  ({state})", "", head]
    for r in doc["entries"]:
        fees = sum(r["fees"].values())
        exit_eq = "-" if r["exit_equity"] is None else usd(r["exit_equity"])
        lines.append(
            f"{r['rank'] or '-':>4}  {r['entry'][:16]:<16} {pct(r['score']):>8} "
            f"{pct(r['return']):>8} {pct(r['mdd']):>7} {usd(r['equity']):>12} {exit_eq:>12} "
            f"{usd(fees):>9} {usd(r['funding']):>8} "
            f"{r['fills']['taker']:>4}/{r['fills']['maker']:<4} "
            f"{sum(r['rejections'].values()):>4} {pct(r['active_share']):>7} "
            f"{r['fill_days']:>4}  {'yes' if r['eligible'] else 'no'}"
        )
    rejected = {k: v for r in doc["entries"] for k, v in r["rejections"].items()}
    if rejected:
        lines += ["", "rejections by reason:"]
        for r in doc["entries"]:
            if r["rejections"]:
                text = ", ".join(f"{k} {v}" for k, v in r["rejections"].items())
                lines.append(f"  {r['entry']}: {text}")
    warnings = exit_warnings(doc)
    if warnings:
        lines += ["", *warnings]
    lines += ["", *verdict_lines(doc["verdict"])]
    lines += ["", f"run log       {doc['run_log']}", f"log_sha256    {rp['log_sha256']}"]
    return "\n".join(lines)


def write_fills(result: BacktestResult, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "t",
                "entry",
                "oid",
                "cloid",
                "coin_asset",
                "side",
                "px",
                "sz",
                "liquidity",
                "venue_fee",
                "exec_fee",
            ]
        )
        for e in result.entrants:
            for fl in e.stats.fills:
                w.writerow(
                    [
                        fl.t,
                        fl.entry,
                        fl.oid,
                        format_cloid(fl.cloid) or "",
                        fl.asset,
                        "buy" if fl.is_buy else "sell",
                        format_e8(fl.px),
                        format_e8(fl.sz),
                        "taker" if fl.taker else "maker",
                        format_e6(fl.venue_fee),
                        format_e6(fl.exec_fee),
                    ]
                )


def write_equity(result: BacktestResult, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["t", "entry", "equity", "exit_equity", "peak", "drawdown", "mdd", "active"])
        for e in result.entrants:
            for m in e.stats.marks:
                w.writerow(
                    [
                        m.t,
                        e.name,
                        format_e6(m.equity),
                        "" if m.exit_equity is None else format_e6(m.exit_equity),
                        format_e6(m.peak),
                        m.drawdown,
                        m.mdd,
                        int(m.active),
                    ]
                )


def write_chart(result: BacktestResult, doc: dict[str, Any], path: Path) -> None:
    season = result.replay.season
    v = doc["verdict"]
    blocks = v.get("paired_blocks", len(v["blocks"]))
    title = (
        f"arena {doc.get('kind', 'backtest')}, season {season.id}: "
        f"{v['strategy']} against {v['control']} "
        f"over {blocks} blocks of {v['epoch']}: {v['text']}"
    )
    svg = svg_chart(
        [(e.name, e.stats.marks) for e in result.entrants],
        start=season.start,
        starting_equity=season.rules.starting_equity,
        limit_pct=season.rules.drawdown_limit_pct,
        title=title,
        control=v["control"],
    )
    path.write_text(svg, encoding="utf-8")


def write_report(
    result: BacktestResult,
    out: Path,
    *,
    epoch: str,
    as_json: bool,
    seed: int = 0,
    kind: str = "backtest",
) -> None:
    """The report files in ``out`` and the report on stdout; ``kind``: backtest or paper."""
    doc = {"kind": kind, **report_doc(result, epoch=epoch, seed=seed)}
    (out / "report.json").write_text(dumps(doc) + "\n", encoding="utf-8")
    write_fills(result, out / "fills.csv")
    write_equity(result, out / "equity.csv")
    write_chart(result, doc, out / "chart.svg")
    if as_json:
        typer.echo(dumps(doc))
        for line in exit_warnings(doc):
            typer.echo(f"arena: {line}", err=True)
        return
    rules = result.replay.season.rules
    chart = terminal_chart(
        [(e.name, e.stats.marks) for e in result.entrants],
        rules.starting_equity,
        rules.drawdown_limit_pct,
    )
    typer.echo(table(doc) + ("\n\n" + chart if chart else ""))
    typer.echo(f"chart         {out / 'chart.svg'}")
