"""The one place a run is built from options: ``arena backtest``, ``arena paper`` and
arena-tui all make their entrants, run directory and :class:`Backtest` here, so the three
cannot drift apart.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from arena_tui.run.backtest import Backtest
from arena_tui.run.loader import BASELINES, baseline_path, entry_name, load_strategy
from arena_tui.run.parts import Entrant
from arena_tui.run.stats import exit_value
from arena_tui.season.file import SeasonError, resolve_season
from arena_tui.util.paths import data_dir


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
