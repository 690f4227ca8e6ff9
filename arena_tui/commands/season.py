"""``arena season``: season files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import typer

from arena_tui.commands.replay import utc
from arena_tui.logs.meta import get_markets, meta_source
from arena_tui.season.file import SeasonError, load_season, season_doc
from arena_tui.season.new import check_args, new_season, parse_time, write_season
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import InfoUrlOpt, JsonOpt, MetaOpt
from engine.units import MINUTE_MS

app = typer.Typer(help="Season files: a season's window, markets and rules.", no_args_is_help=True)


@app.command("show")
def show(
    file: Annotated[Path, typer.Argument(help="Season file (TOML or JSON).", dir_okay=False)],
    as_json: JsonOpt = False,
) -> None:
    """Print a season's window, markets, rules and rules_sha256.

    rules_sha256 is the SHA-256 of {"markets":[...],"rules":{...}} as the contract
    encodes it; a log records it, and replaying under other rules is refused.
    """
    s = load_season(file)
    if as_json:
        doc = {**season_doc(s), "rules_sha256": s.rules_sha256}
        typer.echo(dumps(doc))
        return
    minutes = (s.end - s.start) // MINUTE_MS
    typer.echo(
        f"season {s.id}\n  window  {utc(s.start)} -> {utc(s.end)}  "
        f"({s.start} -> {s.end} ms, {minutes:,} minute marks)"
    )
    typer.echo("  markets")
    for m in sorted(s.markets, key=lambda m: m.asset):
        typer.echo(f"    {m.coin:<8} asset {m.asset:<5} szDecimals {m.szDecimals}")
    typer.echo("  rules")
    for name, value in msgspec.structs.asdict(s.rules).items():
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        typer.echo(f"    {name:<26} {shown}")
    typer.echo(f"  rules_sha256  {s.rules_sha256}")


TIME_HELP = "ISO time with a zone (2026-12-07T00:00:00Z) or integer ms, on a minute boundary."


@app.command("new")
def new(
    season_id: Annotated[
        str,
        typer.Argument(
            metavar="ID", help="Season id, 1-64 of [A-Za-z0-9_.-]; default file seasons/ID.toml."
        ),
    ],
    coins: Annotated[
        str, typer.Option("--coins", help="Coins as meta names them, comma-separated: BTC,ETH.")
    ],
    start: Annotated[str, typer.Option("--start", help="Orders are taken from here. " + TIME_HELP)],
    end: Annotated[
        str, typer.Option("--end", help="The last mark; orders stop here. " + TIME_HELP)
    ],
    meta: MetaOpt = None,
    info_url: InfoUrlOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="File to write. Default: seasons/ID.toml.", dir_okay=False
        ),
    ] = None,
    description: Annotated[
        str | None, typer.Option("--description", help="A line saying what the season is.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Write a season file: the window, the coins' markets from meta, the Season 0 rules.

    Asset indexes and szDecimals come from Hyperliquid's meta (live, or [bold]--meta[/] for
    a saved answer); every rule gets its Season 0 value, commented, to edit by
    hand if the season is to differ. The file loads with [bold]arena season show[/] /
    [bold]replay --season[/]; its rules_sha256 is printed. An existing file is kept unless
    --force.

    Example: [cyan]arena season new s1 --coins BTC,ETH --start 2026-12-07T00:00:00Z
    --end 2027-01-04T00:00:00Z[/]
    """
    start_ms, end_ms = parse_time(start, "--start"), parse_time(end, "--end")
    check_args(season_id, start_ms, end_ms)
    path = out if out is not None else Path("seasons") / f"{season_id}.toml"
    if path.exists() and not force:
        raise SeasonError(f"{path} already exists; pass --force to overwrite it")
    meta_file, url = meta_source(meta, info_url)
    s = new_season(season_id, coins, start_ms, end_ms, get_markets(meta_file, url))
    write_season(path, s, description, str(meta_file) if meta_file else url, force)
    if as_json:
        doc = {
            "path": str(path),
            "id": s.id,
            "start": s.start,
            "end": s.end,
            "markets": msgspec.to_builtins(list(s.markets)),
            "rules_sha256": s.rules_sha256,
        }
        typer.echo(dumps(doc))
        return
    markets = ", ".join(f"{m.coin} (asset {m.asset}, szDecimals {m.szDecimals})" for m in s.markets)
    typer.echo(
        f"wrote {path}: season {s.id}, {utc(s.start)} -> {utc(s.end)}, "
        f"{(s.end - s.start) // MINUTE_MS:,} minute marks; {markets}"
    )
    typer.echo(f"rules_sha256 {s.rules_sha256}")
