"""Options shared by several commands, so each is spelled and explained once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

StrategyArg = Annotated[
    Path,
    typer.Argument(
        help="Strategy file (one Strategy subclass; see docs/strategies.md).",
        metavar="STRATEGY",
        dir_okay=False,
    ),
]
SeasonOpt = Annotated[
    Path | None,
    typer.Option(
        "--season",
        "-s",
        help="Season file (TOML or JSON) to replay under. Default: the season the log names "
        "(found beside the log or in ./seasons), else the backtest defaults: Season 0 rules, "
        "the markets in the log headers, the whole minutes the log spans.",
        dir_okay=False,
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print JSON for programs instead of a table.")
]
MetaOpt = Annotated[
    Path | None,
    typer.Option(
        "--meta",
        help='A saved answer of Hyperliquid\'s {"type":"meta"} (JSON) to take asset indexes '
        "and szDecimals from, offline, or a season file (seasons/season0.toml: BTC, ETH, SOL, "
        "HYPE). Default: ask --info-url.",
        dir_okay=False,
    ),
]
InfoUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--info-url",
        help="Hyperliquid info endpoint to fetch meta from when no --meta is given. "
        "Default: https://api.hyperliquid.xyz/info.",
    ),
]


VsOpt = Annotated[
    str | None,
    typer.Option(
        "--vs",
        help="Also run these as entries: 'baselines' (momentum, reversion, "
        "control_random, maker) and/or strategy files, comma-separated.",
    ),
]
LatencyOpt = Annotated[
    int,
    typer.Option(
        "--latency-ms",
        min=0,
        help="Added to the time a strategy's orders are stamped with (the receive time of "
        "the input it was handling).",
    ),
]
SeedOpt = Annotated[
    int,
    typer.Option(
        "--seed",
        help="Seed of the generators handed to strategies, of the verdict's bootstraps and "
        "of the random twins.",
    ),
]
EpochOpt = Annotated[
    str,
    typer.Option(
        "--epoch",
        help="Block length of the verdict's block scores: a number and m, h or d (30m, "
        "2h, 1d = UTC days), aligned to the Unix epoch; auto (the default) chooses the "
        "longest that gives the run 24 blocks, and says so.",
    ),
]
TwinsOpt = Annotated[
    int,
    typer.Option(
        "--twins",
        min=0,
        max=1000,
        help="Random twins of the strategy for the skill answer: its own trips re-timed at "
        "random, traded in one extra pass (docs/verdict.md); 0 skips the question.",
    ),
]
ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Replace the run already in --out: its files are deleted first (a directory "
        "holding anything a run does not write is still refused).",
    ),
]
HookTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--hook-timeout",
        metavar="SECONDS",
        help="Stop the run when one call of a strategy's hook runs longer than this, naming "
        "the hook and the line it was at; 0 turns the limit off (e.g. to step through a hook "
        "in a debugger).",
    ),
]
FromOpt = Annotated[
    str | None,
    typer.Option(
        "--from",
        metavar="DAY",
        help="With a directory of day logs (arena fetch's, arena record's): the first UTC day "
        "to use, YYYY-MM-DD. Default: its first.",
    ),
]
ToOpt = Annotated[
    str | None,
    typer.Option(
        "--to",
        metavar="DAY",
        help="With a directory of day logs: the last UTC day to use (inclusive). Default: its "
        "last.",
    ),
]
CoinsOpt = Annotated[
    str | None,
    typer.Option(
        "--coins",
        metavar="A,B",
        help="With a directory of day logs: use only days holding these coins (a missing day "
        "is an error naming it). The markets traded are still the logs' (or the season's).",
    ),
]

# ---- the run commands' block (arena backtest, arena paper): declared once ---------------

RunStrategyArg = Annotated[
    Path | None,
    typer.Argument(
        help="Strategy file (one Strategy subclass; see docs/strategies.md). Not with "
        "--config (the config names it).",
        metavar="STRATEGY",
        dir_okay=False,
        show_default=False,
    ),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="FILE|DIR",
        help="Repeat a run from its config: a run directory's config.json (or the directory). "
        "STRATEGY and LOG are then not given; every other option given beside it replaces "
        "the config's value (e.g. --out DIR2 to repeat into another directory: the run's own "
        "--out holds its run, refused unless --force).",
        show_default=False,
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Directory for the run log and the report files (default: a new one under "
        "the data directory); one holding a run already is refused unless --force. The run's "
        "config is kept there (config.json: --config repeats the run).",
        file_okay=False,
    ),
]
