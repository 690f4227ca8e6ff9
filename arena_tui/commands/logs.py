"""``arena logs``: look inside logs (``check``: every line validated, and a summary)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena_tui.util.errors import fail
from arena_tui.util.human import Ticker, duration, plural, time_range, utc_ms
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import JsonOpt

if TYPE_CHECKING:
    from arena_tui.logs.logcheck import Report

app = typer.Typer(help="Look inside logs: validate them and summarise their data.")


def _header_text(header: dict[str, Any] | None) -> str:
    if header is None:
        return "no valid header"
    kind = f"season {header['season']}" if "season" in header else ""
    if "recording" in header:
        # how it was made, in the catalog's words: recorded, fetched, imported (synthetic
        # says so already)
        kind = f"recording {header['recording']}"
        how = header.get("kind")
        if how in ("fetched", "imported"):
            kind += f" ({how} from {header.get('source')})"
        elif how == "recorded":
            kind += " (recorded)"
    coins = " ".join(m["coin"] for m in header.get("markets", []))
    return f"{kind}  {coins}".strip()


def print_report(r: Report) -> None:
    from arena_tui.logs.logcheck import SHOW_MAX

    doc = r.to_json()
    out = [
        f"{plural(len(r.files), 'file')}, {plural(r.inputs, 'good input')}, "
        f"{time_range(r.first_t, r.last_t)}"
    ]
    width = max(len(f["path"]) for f in r.files)
    for f in r.files:
        lines = plural(f["lines"], "line ", "lines")  # a column: "1 line " as wide as "2 lines"
        out.append(f"  {f['path']:<{width}}  {lines:>16}  {_header_text(f['header'])}")
    out.append("inputs by channel")
    for name, count in r.channels.most_common():
        out.append(f"  {name:<22} {count:>12,}")
    if r.coins:
        out.append("per coin (book gaps by receive time; dup = duplicate prints dropped)")
        out.append(
            f"  {'coin':<10} {'books':>9} {'gap med':>10} {'gap max':>12} {'stale':>7} "
            f"{'trades':>9} {'prints':>10} {'dup':>7} {'ctxs':>9}"
        )
    for coin, s in doc["coins"].items():
        out.append(
            f"  {coin:<10} {s['books']:>9,} {duration(s['book_gap_median_ms']):>10} "
            f"{duration(s['book_gap_max_ms']):>12} {s['stale_books']:>7,} {s['trades']:>9,} "
            f"{s['prints']:>10,} {s['duplicate_prints']:>7,} {s['ctxs']:>9,}"
        )
    out.append(
        f"stale books (receive t - book time > {doc['stale_book_ms']:,} ms): {doc['stale_books']:,}"
    )
    out.append(f"duplicate prints dropped: {doc['duplicate_prints']:,}")
    gap = r.longest_gap
    line = f"gaps: {r.gaps:,}"
    if gap is not None:
        line += (
            f", {duration(r.gap_total_ms)} in all; longest {duration(gap['ms'])} from "
            f"{utc_ms(gap['from'])} to {utc_ms(gap['to'])} UTC ({gap['reason'] or 'no reason'}, "
            f"{gap['file']}:{gap['line']})"
        )
    out.append(line)
    out.append(f"bad lines: {r.bad_lines:,}")
    out += [f"  {b['file']}:{b['line']}: {b['reason']}" for b in r.shown]
    if r.bad_lines > len(r.shown):
        out.append(f"  ... and {r.bad_lines - len(r.shown):,} more (the first {SHOW_MAX} shown)")
    out += [f"damaged file: {e['file']}: {e['reason']}" for e in r.file_errors]
    out += [f"note: {n['file']}:{n['line']}: {n['note']}" for n in r.notes]
    out.append("ok" if r.ok else "DAMAGED")
    typer.echo("\n".join(out))


@app.command("check")
def check(
    logs: Annotated[
        list[Path],
        typer.Argument(help="Log files in order (plain, .gz or .lz4).", dir_okay=False),
    ],
    as_json: JsonOpt = False,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="For a thin run log: a directory to look for its source logs in, by "
            "SHA-256 (as arena replay's --data).",
            file_okay=False,
        ),
    ] = None,
) -> None:
    """Validate LOG... in full and summarise them; exit 1 if anything is damaged.

    Unlike [bold]arena replay[/], every line is checked (book levels and every decimal
    string too, for every coin) and checking goes on past bad lines: the first 20
    are shown with file:line and reason, all are counted. Damage (exit status 1):
    a bad line, a [bold]t[/] lower than the line before (across files too), a bad header, a
    truncated or corrupt compressed stream. A torn final line (no trailing
    newline) is only a note.

    The summary: time range; inputs per channel; per coin, books with their
    receive-time cadence (median and max gap), stale books (receive t - book time
    > 10,000 ms, the Season 0 stale_book_ms), trades messages, prints and
    duplicate prints dropped (the contract's rule), asset contexts; the recorder's
    gap inputs (count, total, longest).

    A thin run log (arena backtest's) is checked merged with its source logs,
    with the line numbers of the equivalent full log.

    Example: [cyan]arena logs check recordings/*.jsonl.gz --json[/]
    """
    from arena_tui.logs.logcheck import check_logs  # here, not at the top: --help needs none of it

    ticker = Ticker("logs check")
    report = check_logs(logs, progress=ticker, data=data)
    ticker.done()
    if as_json:
        typer.echo(dumps(report.to_json()))
    else:
        print_report(report)
    if not report.ok:
        parts = [plural(report.bad_lines, "bad line")] if report.bad_lines else []
        parts += [f"{e['file']}: {e['reason']}" for e in report.file_errors]
        fail("logs check found damage: " + "; ".join(parts))
