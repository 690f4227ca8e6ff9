"""A backtest's report: the ranked table for people, and the files in ``--out``.

Why this module exists: the runner says what happened (engine events, per entry); this
module only renders it: ``report.json`` (everything, for programs), ``fills.csv`` and
``equity.csv`` (every fill, every minute mark with its exit-value equity), ``chart.svg``,
and the printed report: the ranked table with the score, costs and activity of each entry
and why it is not eligible, warnings where exit-value equity fell far from mark equity,
whether the strategy beats the random control block by block (``table``,
``arena_tui.report.verdict`` and ``verdict_text``), and a text chart (``charts``), fitted to
the terminal's width. report.json holds integers only (money e6, ratios e8, times ms; the
verdict's mean and interval too) and paths relative to the run directory; docs/report.md
describes every file.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

import typer

from arena_tui.report.charts import terminal_chart
from arena_tui.report.chartsvg import svg_chart
from arena_tui.report.eligibility import ineligible_reasons
from arena_tui.report.layout import terminal_width
from arena_tui.report.table import exit_warnings, table
from arena_tui.report.table import pct as pct  # arena-tui writes money and ratios alike
from arena_tui.report.table import usd as usd
from arena_tui.report.verdict import verdict_doc
from arena_tui.run.parts import BacktestResult, Entrant
from arena_tui.run.stats import MarkRow
from arena_tui.util.human import iso_ms
from arena_tui.util.jsonout import dumps
from engine import Rules
from engine.orders import format_cloid
from engine.units import E8, format_e6, format_e8, tdiv

GAP_PCT = 1  # exit value this far below (or above) mark equity: the book cannot absorb it


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


def entry_doc(e: Entrant, row: dict[str, Any], rules: Rules) -> dict[str, Any]:
    """One entry of report.json: the ranking row, why it is not eligible (the rules its
    figures miss), then what its events add up to."""
    s = e.stats
    last = s.marks[-1] if s.marks else None
    active = row["active_marks"]
    marks = row["marks"]
    return {
        **row,
        "ineligible_reasons": ineligible_reasons(row, rules),
        "strategy": e.path.name,  # the file's name: a run directory names no other place
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


def run_log_name(run_log: Path | None, out: Path | None) -> str | None:
    """The run log as report.json names it: relative to the run directory (``run.jsonl``),
    so the directory can be moved or copied whole and still say where its log is."""
    if run_log is None:
        return None
    if out is None:
        return run_log.name
    return Path(os.path.relpath(run_log, out)).as_posix()


def report_doc(
    result: BacktestResult, *, epoch: str = "1d", seed: int = 0, out: Path | None = None
) -> dict[str, Any]:
    """report.json's document; ``out``: the run directory it is written in."""
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
        "run_log": run_log_name(result.run_log, out),
        "inputs": result.inputs,
        "own_inputs": result.own_inputs,
        "dropped_inputs": result.dropped,
        "entries": [entry_doc(by_name[r["entry"]], r, rules) for r in rows],
        "epoch": epoch,
        "verdict": verdict,
    }


EQUITY_COLUMNS = [
    "t", "entry", "equity", "exit_equity", "peak", "drawdown", "mdd", "active", "time_utc",
]  # fmt: skip


def write_fills(result: BacktestResult, path: Path) -> None:
    """Every fill, one row each: the columns the contract's fills have, spelled for people
    (``coin_asset`` is the asset index), then the fill's ``coin`` and ``time_utc``."""
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
                "coin",
                "time_utc",
            ]
        )
        coins = {m.asset: m.coin for m in result.replay.season.markets}
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
                        coins.get(fl.asset, ""),
                        iso_ms(fl.t),
                    ]
                )


def write_equity(result: BacktestResult, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(EQUITY_COLUMNS)
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
                        iso_ms(m.t),
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
    doc = {"kind": kind, **report_doc(result, epoch=epoch, seed=seed, out=out)}
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
    width = terminal_width()
    chart = terminal_chart(
        [(e.name, e.stats.marks) for e in result.entrants],
        rules.starting_equity,
        rules.drawdown_limit_pct,
        width,
    )
    typer.echo(table(doc, width, out) + ("\n\n" + chart if chart else ""))
    typer.echo(f"chart         {out / 'chart.svg'}")
