"""``arena backtest``: a strategy (and the baselines) on recorded days, under Season 0."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena_tui.backtest import Backtest, BacktestResult, Entrant
from arena_tui.loader import BASELINES, baseline_path, entry_name, load_strategy
from arena_tui.options import JsonOpt, LatencyOpt, SeasonOpt, SeedOpt, StrategyArg, VsOpt
from arena_tui.paths import data_dir
from arena_tui.replay import Progress, dumps
from arena_tui.report import write_report
from arena_tui.report_data import exit_value
from arena_tui.seasonfile import SeasonError, resolve_season
from arena_tui.verdict import parse_epoch


def entrants_for(strategy: Path, vs: str | None) -> list[Entrant]:
    """The strategy, then the baselines or the files ``--vs`` names (no file twice)."""
    paths = [strategy]
    if vs:
        for part in vs.split(","):
            name = part.strip()
            if not name:
                continue
            if name == "baselines":
                paths += [baseline_path(b) for b in BASELINES]
            else:
                paths.append(Path(name))
    seen: set[Path] = set()
    entrants = []
    for p in paths:
        resolved = p.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        entrants.append(Entrant(entry_name(p), load_strategy(p), resolved))
    return entrants


def default_out(strategy: Path, kind: str = "") -> Path:
    """``<data dir>/runs/<entry>-[<kind>-]<UTC stamp>``."""
    import datetime as dt

    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    return data_dir() / "runs" / f"{entry_name(strategy)}-{kind + '-' if kind else ''}{stamp}"


def run_dir(out: Path | None, strategy: Path, kind: str = "") -> Path:
    """``--out``, or a new directory in the data dir for ``strategy``'s run; made."""
    out_dir = out or default_out(strategy, kind)
    if out_dir.exists() and not out_dir.is_dir():
        raise SeasonError(f"--out {out_dir} is a file, not a directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir


def build_backtest(
    strategy: Path,
    paths: list[str],
    *,
    season: Path | None,
    vs: str | None,
    out: Path | None,
    latency_ms: int,
    seed: int,
) -> tuple[Backtest, Path]:
    """The run ``arena backtest`` (and arena-tui) makes: its Backtest and its directory."""
    chosen = resolve_season(paths, season)
    entrants = entrants_for(strategy, vs)
    out_dir = run_dir(out, strategy)
    bt = Backtest(
        chosen,
        entrants,
        run_log=out_dir / "run.jsonl",
        sources=paths,
        latency_ms=latency_ms,
        seed=seed,
        exit_value=exit_value,
    )
    return bt, out_dir


def backtest_command(
    strategy: StrategyArg,
    logs: Annotated[
        list[Path],
        typer.Argument(
            help="Recorded logs, in time order (plain, .gz or .lz4).", metavar="LOG", dir_okay=False
        ),
    ],
    season: SeasonOpt = None,
    vs: VsOpt = None,
    epoch: Annotated[
        str,
        typer.Option(
            "--epoch",
            help="Block length for the verdict against the random control: a number and "
            "m, h or d (30m, 2h, 1d), blocks aligned to the Unix epoch (1d = UTC days).",
        ),
    ] = "1d",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Directory for the run log and the report files "
            "(default: a new one under the data directory).",
            file_okay=False,
        ),
    ] = None,
    latency_ms: LatencyOpt = 0,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    tui: Annotated[
        bool,
        typer.Option(
            "--tui",
            help="Watch the run live in arena-tui (pause, speed, next fill); the report "
            "follows when you quit.",
        ),
    ] = False,
) -> None:
    """Run STRATEGY on LOG... through the Season 0 engine and report how it did.

    The run writes its own log (the market data plus every registration, order and
    cancel) into --out; [cyan]arena replay[/] of it gives the same ranking, byte for byte.

    Example:

    [cyan]arena backtest strategies/momentum.py \\
      recordings/synth-3coins-20261201.jsonl.gz --vs baselines --out /tmp/run[/]
    """
    paths = [str(p) for p in logs]
    parse_epoch(epoch)  # a bad --epoch fails now, not after the run
    bt, out_dir = build_backtest(
        strategy, paths, season=season, vs=vs, out=out, latency_ms=latency_ms, seed=seed
    )
    typer.echo(f"arena: backtest of {len(bt.entrants)} entries, writing {out_dir}", err=True)
    chosen = bt.season
    if tui:
        from arena_tui.tui.app import watch_backtest  # Textual only when asked for

        watched = watch_backtest(bt, paths, title=strategy.name)
        if watched is None:
            typer.echo("arena: stopped before the season started: no report", err=True)
            return
        result: BacktestResult = watched
    else:
        progress = Progress(label="backtest", span=(chosen.start, chosen.end))
        result = bt.run(paths, progress)
    (out_dir / "ranking.json").write_text(dumps(result.replay.to_json()) + "\n", encoding="utf-8")
    write_report(result, out_dir, epoch=epoch, as_json=as_json, seed=seed)
