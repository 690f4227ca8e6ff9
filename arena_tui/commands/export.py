"""``arena export``: a run's tables as Parquet for polars, pandas, DuckDB (``report.export``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena_tui.util.errors import fail
from arena_tui.util.human import Progress, plural
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import JsonOpt
from arena_tui.util.outputs import writing

ROW_WORDS = {
    "fills": "fill",
    "orders": "order",
    "marks": "mark",
    "coin_pnl": "coin PnL row",
    "round_trips": "round trip",
    "funding": "funding payment",
    "prices": "price minute",
}


def export_command(
    run: Annotated[
        Path,
        typer.Argument(
            metavar="DIR", help="A run directory (arena backtest --out DIR).", file_okay=False
        ),
    ],
    parquet: Annotated[
        Path,
        typer.Option(
            "--parquet",
            metavar="OUT",
            help="Directory to write the tables into (made if missing; tables already "
            "there are replaced).",
            file_okay=False,
        ),
    ],
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="For a run without its run data (rundata.msgpack) and a thin run log: a "
            "directory to look for its source logs in, as arena replay --data.",
            file_okay=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a run's tables as Parquet: fills, orders (with their lifecycle), minute
    marks (equity, exit value, drawdown, cap used, open orders), per-coin PnL,
    round trips, funding and prices; and run.json (season, rules, entries and
    their parameters, the verdict).

    Coin names and UTC timestamps; every amount both exact (the engine's
    integer: px_e8, fee_e6) and as a float (px, fee). Load them with
    [cyan]from arena_tui.report.frames import load_run[/] (docs/notebook.md).
    Needs polars (pip install 'arena\\[frames]').

    Example: [cyan]arena export runs/first --parquet runs/first-parquet[/]
    """
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.report import rundata
    from arena_tui.report.export import TABLES, tables, write_parquet
    from arena_tui.report.runrecord import is_run_dir

    if not run.is_dir():
        fail(f"{run}: not a directory")
    if not is_run_dir(run) and not (run / rundata.RUNDATA_FILE).is_file():
        fail(f"{run}: not a run directory (no report.json beside a run log)")
    if parquet.exists() and not parquet.is_dir():
        fail(f"--parquet {parquet}: is a file, not a directory")
    if not (run / rundata.RUNDATA_FILE).is_file():
        typer.echo(
            f"arena: {run} has no {rundata.RUNDATA_FILE}: deriving it from its run log",
            err=True,
        )
        progress = Progress(label="replay")
        got = rundata.derive(
            run, data_dir=None if data is None else str(data), progress=progress.update
        )
        progress.done()
        with writing(run / rundata.RUNDATA_FILE):
            rundata.save(got, run)
    else:
        got = rundata.load(run)
    with writing(parquet, "--parquet"):
        files = write_parquet(got, parquet)
    rows = {name: len(next(iter(cols.values()), [])) for name, cols in tables(got).items()}
    if as_json:
        typer.echo(dumps({"out": str(parquet), "files": [p.name for p in files], "rows": rows}))
        return
    counts = ", ".join(plural(rows[name], ROW_WORDS[name]) for name in TABLES)
    typer.echo(f"wrote {len(files)} files to {parquet}: {counts}")
