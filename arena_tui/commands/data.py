"""``arena data``: the catalog of the market data a directory holds (``arena data list``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from arena_tui.util.human import duration, plural
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import JsonOpt
from arena_tui.util.text import printable

app = typer.Typer(help="What market data you hold: per coin and UTC day (see docs/data.md).")


@app.command("list")
def list_command(
    directory: Annotated[
        Path | None,
        typer.Argument(
            help="A directory of logs. Default: the data directory's history/ (where "
            "arena fetch writes).",
            metavar="DIR",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List, per UTC day and coin, the books, prints and asset contexts DIR's logs hold,
    how much of the day each covers (minutes with data / 1,440), the gap inputs, and where
    the data came from (recorded, fetched, imported, synthetic).

    The counts are kept in DIR/.arena-catalog.json, so a second listing reads
    only the files that changed.

    Example: [cyan]arena data list ~/.local/share/arena/history --json[/]
    """
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.logs.catalog import CatalogError, rows, scan
    from arena_tui.record.fetch import history_dir

    where = directory if directory is not None else history_dir()
    if where.exists() and not where.is_dir():
        raise CatalogError(f"{where}: not a directory; give the directory of the day logs")
    if not where.is_dir():
        raise CatalogError(f"{where}: no such directory (arena fetch writes days there)")

    def note(name: str) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\rdata list: reading {name}\033[K")

    entries = scan(where, note)
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    table = rows(entries)
    errors = [{"file": e.name, "error": e.error} for e in entries if e.error]
    if as_json:
        typer.echo(dumps({"dir": str(where), "rows": table, "errors": errors}))
        return
    if not table:
        typer.echo(f"{where}: no market data")
    else:
        typer.echo(
            f"{'day':<10}  {'coin':<6}  {'source':<9}  {'books':>7} {'cov':>4}  "
            f"{'prints':>8} {'cov':>4}  {'ctxs':>6} {'cov':>4}  {'gaps':>4} {'missing':>12}  file"
        )
        for r in table:  # a coin, a source, a file name: what the logs' headers and names say
            line = (
                f"{r['day']:<10}  {r['coin']:<6}  {r['kind']:<9}  {r['books']:>7,} "
                f"{r['books_coverage_pct']:>3}%  {r['prints']:>8,} {r['trades_coverage_pct']:>3}%  "
                f"{r['ctxs']:>6,} {r['ctxs_coverage_pct']:>3}%  {r['gaps']:>4} "
                f"{duration(r['gap_ms']) if r['gaps'] else '-':>12}  {r['file']}"
            )
            typer.echo(printable(line))
        days = {r["day"] for r in table}
        typer.echo(f"{plural(len(days), 'day')} in {plural(len(entries), 'file')} in {where}")
    for e in errors:
        typer.echo(printable(f"arena: note: {e['file']}: unreadable: {e['error']}"), err=True)
