"""``arena season``: season files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import typer

from arena_tui.commands.replay import utc
from arena_tui.options import JsonOpt
from arena_tui.replay import dumps
from arena_tui.seasonfile import load_season

app = typer.Typer(help="Season files: a season's window, markets and rules.", no_args_is_help=True)


@app.command("show")
def show(
    file: Annotated[Path, typer.Argument(help="Season file (TOML or JSON).", dir_okay=False)],
    as_json: JsonOpt = False,
) -> None:
    """Print a season's window, markets, rules and rules_sha256.

    rules_sha256 is the SHA-256 of {"markets":[...],"rules":{...}} as the contract encodes
    it; a log records it, and replaying under other rules is refused.
    """
    s = load_season(file)
    if as_json:
        doc = {
            "id": s.id,
            "start": s.start,
            "end": s.end,
            "markets": msgspec.to_builtins(list(s.markets)),
            "rules": msgspec.to_builtins(s.rules),
            "rules_sha256": s.rules_sha256,
        }
        typer.echo(dumps(doc))
        return
    minutes = (s.end - s.start) // 60_000
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
