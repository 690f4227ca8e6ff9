"""Options shared by several commands, so each is spelled and explained once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

SeasonOpt = Annotated[
    Path | None,
    typer.Option(
        "--season",
        "-s",
        help="Season file (TOML or JSON) to replay under. Default: the season the log names "
        "(found in ./seasons or beside the log), else the backtest defaults: Season 0 rules, "
        "the markets in the log headers, the whole minutes the log spans.",
        dir_okay=False,
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print JSON for programs instead of a table.")
]
