"""``arena import``: market data captured by others, turned into version-1 logs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena_tui.util.human import Ticker, plural, time_range
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import InfoUrlOpt, JsonOpt, MetaOpt

if TYPE_CHECKING:
    from arena_tui.logs.importers import Summary

app = typer.Typer(
    help="Import market data recorded by others into arena logs (see docs/log-format.md).",
    no_args_is_help=True,
)

FilesArg = Annotated[
    list[Path],
    typer.Argument(
        help="Input files (plain, .gz or .lz4), merged by receive time.", dir_okay=False
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="The log to write (.lz4: LZ4, .gz: gzip, else plain JSON Lines); never "
        "overwritten. Default: <source>-<coins>-<first minute UTC>.jsonl.lz4 in the data "
        "directory's recordings/ (ARENA_DATA_DIR overrides it), where arena-tui lists it. "
        "LZ4 writes ~7x faster than gzip and reads ~2.5x faster; gzip files are ~half the size.",
        dir_okay=False,
    ),
]


def _run(
    fmt: str, files: list[Path], meta: Path | None, info_url: str | None, out: Path | None
) -> Summary:
    # here, not at the top: --help and the other commands need none of these
    from arena_tui.logs.daykeep import keep_days
    from arena_tui.logs.importers import import_files
    from arena_tui.logs.meta import meta_source

    meta_file, url = meta_source(meta, info_url)
    ticker = Ticker(f"import {fmt}")
    try:
        s = import_files(
            [str(f) for f in files],
            fmt,
            out=out,
            meta_file=meta_file,
            info_url=url,
            progress=ticker,
        )
    finally:
        ticker.done()
    if not s.cached:  # the day cache, so the first backtest of it is already warm
        keep_days([s.out])
    return s


def _report(s: Summary, as_json: bool) -> None:
    for note in s.notes:
        sys.stderr.write(f"arena: note: {note}\n")
    if s.held:
        sys.stderr.write(
            f"arena: note: {plural(s.held, 'line')} had a receive time earlier than the line "
            "before in their file; their t was raised to it, so t never decreases\n"
        )
    coins = " ".join(m.coin for m in s.markets)
    sys.stderr.write(
        f"wrote {s.out}: {plural(s.books, 'book')}, {plural(s.trades, 'trades message')} "
        f"({plural(s.prints, 'print')}), "
        f"{s.ctxs + s.other:,} other; {time_range(s.first_t, s.last_t)}; markets {coins}\n"
    )
    if as_json:
        typer.echo(dumps(s.to_json()))


@app.command("hl-archive")
def hl_archive(
    files: FilesArg,
    meta: MetaOpt = None,
    info_url: InfoUrlOpt = None,
    out: OutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import Hyperliquid's archive [bold]l2Book[/] objects (an LZ4 frame per hour and coin).

    Each line of [cyan]market_data/<date>/<hour>/l2Book/<coin>.lz4[/] is {"time": "<ISO
    receive time>", "ver_num": 1, "raw": <WebSocket message>}; it becomes {"t":
    <receive ms>, "hl": <raw, byte for byte>}. Several files (hours, coins) are
    merged by receive time. The header lists the coins found, with their asset
    index and szDecimals from meta. A bad line stops the import (naming file and
    line), and nothing is written. The summary goes to stderr; [bold]--json[/] prints it on
    stdout.

    Example:

    [cyan]aws s3 cp s3://hyperliquid-archive/market_data/20240101/12/l2Book/BTC.lz4 . \\
      --request-payer requester && arena import hl-archive BTC.lz4 --out \\
      btc-12.jsonl.lz4[/]
    """
    _report(_run("hl-archive", files, meta, info_url, out), as_json)


@app.command("hftbacktest")
def hftbacktest(
    files: FilesArg,
    meta: MetaOpt = None,
    info_url: InfoUrlOpt = None,
    out: OutOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import hftbacktest collector files: [cyan]<receive time ns> <raw JSON message>[/] a line.

    Each line becomes {"t": <ns // 1,000,000>, "hl": <message, byte for byte>};
    every channel is kept (the replay ignores those it does not use). Several
    files are merged by receive time; the header lists the coins found, from meta.
    A bad line stops the import (naming file and line), and nothing is written.

    Example:

    [cyan]arena import hftbacktest btc_20250126.gz --meta meta.json --out btc.jsonl.lz4[/]
    """
    _report(_run("hftbacktest", files, meta, info_url, out), as_json)
