"""A backtest's report: the ranked table for people, and the files in ``--out``.

Why this module exists: the runner says what happened (engine events, per entry); this
module only renders it: ``report.json`` (everything, for programs), ``fills.csv`` and
``equity.csv`` (every fill, every minute mark with its exit-value equity; every cell through
``util.text.CsvWriter``, so no note or name can be a spreadsheet formula), ``fills.jsonl``
(every fill with its quote and its order's note, as ``arena replay --quotes`` writes it),
``chart.svg``, and the printed report (every line without control characters, whoever
wrote the log): the ranked table with the score, costs and activity of each entry and why
it is not eligible, warnings where exit-value equity fell far from mark equity, whether the
strategy beats the random control block by block (``table``, ``arena_tui.report.verdict``
and ``verdict_text``), and a text chart (``charts``), fitted to
the terminal's width. report.json holds integers only (money e6, ratios e8, times ms; the
verdict's mean and interval too) and paths relative to the run directory; docs/report.md
describes every file.

Every file of a run directory is written here from one result and one document
(``write_files``), so report.json, the CSVs, fills.jsonl and the chart cannot disagree about
a run, whether it was a backtest, a paper run or a log replayed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import typer

from arena_tui.report.charts import terminal_chart
from arena_tui.report.chartsvg import svg_chart
from arena_tui.report.eligibility import ineligible_reasons
from arena_tui.report.html import HTML_FILE, write_html
from arena_tui.report.layout import terminal_width
from arena_tui.report.rundata import RunData
from arena_tui.report.rundata import save as save_rundata
from arena_tui.report.runs import remember as remember_run
from arena_tui.report.table import exit_warnings, table
from arena_tui.report.table import pct as pct  # arena-tui writes money and ratios alike
from arena_tui.report.table import usd as usd
from arena_tui.report.verdict import (
    CONTROL,
    Judging,
    Twins,
    Untimed,
    judged,
    measure_twins,
    verdict_doc,
)
from arena_tui.run.params import ParamError, ParamValue, strategy_params
from arena_tui.run.parts import BacktestResult, Entrant
from arena_tui.run.quotes import quote_line
from arena_tui.run.stats import MarkRow
from arena_tui.season.file import PAPER
from arena_tui.util.human import Progress, iso_ms
from arena_tui.util.jsonout import dumps
from arena_tui.util.text import CsvWriter, printable
from engine import Rules, format_cloid
from engine import events as ev
from engine.units import E8, format_e6, format_e8, tdiv

FILLS_FILE = "fills.jsonl"  # every fill with its quote and note, in run order
GAP_PCT = 1  # exit value this far below (or above) mark equity: the book cannot absorb it


def exit_gap(marks: Sequence[MarkRow]) -> dict[str, Any] | None:
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


def param_defaults(e: Entrant) -> dict[str, ParamValue]:
    """The default of each parameter the entry's strategy declares (report.json's
    ``defaults``, beside ``params``)."""
    try:
        declared = strategy_params(type(e.strategy))
    except ParamError:  # (checked when the strategy was loaded)
        return {}
    return {name: p.default for name, p in declared.items() if name in e.params}


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
        # the file's name: a run directory names no other place (none when the entry was
        # rebuilt from a log alone: arena replay --out)
        "strategy": e.path.name or None,
        # every declared parameter and its value in this run, and its default (none when
        # rebuilt from a log): arena runs lists the parameters a run changed
        "params": e.params if e.path.name else None,
        "defaults": param_defaults(e) if e.path.name else None,
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
        **({} if e.remote is None else {"remote": e.remote}),  # a lockstep agent's counts
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
    result: BacktestResult,
    *,
    judging: Judging | None = None,
    out: Path | None = None,
    kind: str = "backtest",
    twins: Twins | Untimed | str | None = None,
) -> dict[str, Any]:
    """report.json's document; ``out``: the run directory it is written in; ``twins``: the
    strategy's twins (``verdict.measure_twins``), or why there are none."""
    how = judging or Judging()
    by_name = {e.name: e for e in result.entrants}
    rows = [r for r in result.replay.ranking if r["entry"] in by_name]
    season = result.replay.season
    rules = season.rules
    verdict = verdict_doc(
        judged(result),
        [(e.name, e.stats.marks) for e in result.entrants[1:]],
        rules=rules,
        epoch=how.epoch,
        seed=how.seed,
        span=(season.start, result.replay.end or season.start),
        twins=twins,
        no_control=(
            f"no {CONTROL} entry in the log: no floor to compare with" if kind == "replay" else None
        ),
    )
    return {
        "replay": result.replay.to_json(),
        "run_log": run_log_name(result.run_log, out),
        "fills_file": FILLS_FILE,
        "inputs": result.inputs,
        "own_inputs": result.own_inputs,
        "dropped_inputs": result.dropped,
        "entries": [entry_doc(by_name[r["entry"]], r, rules) for r in rows],
        "epoch": verdict["epoch"],
        "verdict": verdict,
    }


EQUITY_COLUMNS = [
    "t", "entry", "equity", "exit_equity", "peak", "drawdown", "mdd", "active", "time_utc",
]  # fmt: skip


QUOTE_COLUMNS = [
    "quote_source", "quote_time", "quote_level", "quote_tid", "quote_px", "quote_sz", "note",
]  # fmt: skip


def quote_cells(fl: ev.Fill, note: str | None) -> list[object]:
    """fills.csv's last columns: what the fill filled against (a book level: time, level,
    px, sz; a print: time, tid, px, sz), then its order's note; empty where not so."""
    q = fl.quote
    if isinstance(q, ev.BookQuote):
        cells: list[object] = ["book", q.time, q.level, "", format_e8(q.px), format_e8(q.sz)]
    elif isinstance(q, ev.PrintQuote):
        cells = ["print", q.time, "", q.tid, format_e8(q.px), format_e8(q.sz)]
    else:
        cells = ["", "", "", "", "", ""]
    return [*cells, note or ""]


def write_fills(result: BacktestResult, path: Path) -> None:
    """Every fill, one row each: the columns the contract's fills have, spelled for people
    (``coin_asset`` is the asset index), then the fill's ``coin`` and ``time_utc``, then its
    quote and its order's note (``QUOTE_COLUMNS``)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = CsvWriter(f)
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
                *QUOTE_COLUMNS,
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
                        *quote_cells(fl, result.notes.of(fl)),
                    ]
                )


def write_quotes(result: BacktestResult, path: Path) -> None:
    """Every fill of the run in the order it happened, each as ``arena replay --quotes``
    writes it (the fills file's line plus ``quote`` and ``note``)."""
    of = result.notes.of
    with path.open("wb") as f:
        for fl in result.fill_events:
            f.write(quote_line(fl, of(fl)))


def write_equity(result: BacktestResult, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = CsvWriter(f)
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
    title = (
        f"arena {doc.get('kind', 'backtest')}, season {season.id} "
        f"(rules {season.rules_sha256[:12]} · paper): "
        f"{v['strategy']}, blocks of {v['epoch']}: {v['text']}"
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


def write_files(
    result: BacktestResult,
    out: Path,
    *,
    judging: Judging | None = None,
    kind: str = "backtest",
    rundata: RunData | None = None,
) -> dict[str, Any]:
    """ranking.json, report.json, fills.csv, fills.jsonl, equity.csv and chart.svg in
    ``out``; the doc. ``judging``: the verdict's block length, seed and twins (its
    sources: the logs the twins trade on, a progress line on stderr while they do).
    ``kind``: backtest, paper, or replay (a report rebuilt from a log by ``arena replay``).
    ``rundata``: what a ``rundata.Collector`` gathered in the pass: saved as
    ``rundata.msgpack`` with the verdict (none given: ``rundata.load`` derives it later)."""
    (out / "ranking.json").write_text(dumps(result.replay.to_json()) + "\n", encoding="utf-8")
    how = judging or Judging()
    season = result.replay.season
    progress = Progress(label="twins", span=(season.start, result.replay.end or season.end))
    twins = measure_twins(result, how, progress)
    # the files no verdict is in, written in a thread while the verdict is made: its money
    # interval waits for the stats worker's bootstrap (``report.statsworker``), and a day
    # of many fills takes about as long to write them
    with ThreadPoolExecutor(1, "arena-report-files") as beside:
        unjudged = beside.submit(write_unjudged, result, out)
        doc = report_doc(result, judging=how, out=out, kind=kind, twins=twins)
    unjudged.result()  # (its error, if any: the verdict's own came first)
    doc = {"kind": kind, "paper": PAPER, **doc}
    (out / "report.json").write_text(dumps(doc) + "\n", encoding="utf-8")
    if rundata is not None:
        rundata.verdict = doc["verdict"]
        save_rundata(rundata, out)
        write_html(rundata, doc, out)  # report.html: drawn from the same data
    write_chart(result, doc, out / "chart.svg")
    remember_run(out)  # arena runs list shows it, wherever it is
    return doc


def write_unjudged(result: BacktestResult, out: Path) -> None:
    """fills.csv, fills.jsonl and equity.csv: what the pass alone says."""
    write_fills(result, out / "fills.csv")
    write_quotes(result, out / FILLS_FILE)
    write_equity(result, out / "equity.csv")


def printed_report(doc: dict[str, Any], width: int | None, out: Path, chart: str = "") -> str:
    """The report as printed: the table (``table``), then the chart, every line without
    control characters (``util.text.printable``): a log or a report.json someone else wrote
    cannot drive the terminal through it."""
    text = table(doc, width, out) + ("\n\n" + chart if chart else "")
    return "\n".join(printable(line) for line in text.split("\n"))


def write_report(
    result: BacktestResult,
    out: Path,
    *,
    judging: Judging | None = None,
    as_json: bool,
    kind: str = "backtest",
    rundata: RunData | None = None,
) -> None:
    """The report files in ``out`` and the report on stdout; ``kind``: backtest or paper."""
    doc = write_files(result, out, judging=judging, kind=kind, rundata=rundata)
    if as_json:
        typer.echo(dumps(doc))
        for line in exit_warnings(doc):
            typer.echo(printable(f"arena: {line}"), err=True)
        return
    rules = result.replay.season.rules
    width = terminal_width()
    chart = terminal_chart(
        [(e.name, e.stats.marks) for e in result.entrants],
        rules.starting_equity,
        rules.drawdown_limit_pct,
        width,
    )
    typer.echo(printed_report(doc, width, out, chart))
    typer.echo(f"chart         {out / 'chart.svg'}")
    if (out / HTML_FILE).is_file():
        typer.echo(f"report        {out / HTML_FILE}")
