"""The one place a run is built from options: ``arena backtest``, ``arena paper`` and
arena-tui all make their entrants, run directory and :class:`Backtest` here, so the three
cannot drift apart.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena_tui.logs.daycache import cache_enabled
from arena_tui.logs.logfile import read_header
from arena_tui.logs.thinlog import is_thin
from arena_tui.run.backtest import Backtest
from arena_tui.run.hooks import DEFAULT_TIMEOUT_S
from arena_tui.run.loader import (
    BASELINES,
    baseline_path,
    entry_name,
    load_strategy,
    parse_entry,
)
from arena_tui.run.params import (
    ParamValue,
    check_values,
    params_doc,
    parse_overrides,
    strategy_params,
    variant_name,
)
from arena_tui.run.parts import BacktestError, Entrant
from arena_tui.run.rundir import new_dir, reused_dir
from arena_tui.run.stats import exit_value
from arena_tui.season.file import resolve_season
from arena_tui.util.paths import data_dir


def entrants_for(
    strategy: Path,
    vs: str | None,
    params: Mapping[str, ParamValue] | None = None,
    *,
    overrides: Sequence[str] = (),
) -> list[Entrant]:
    """The strategy, then the baselines or the files ``--vs`` names, each ``FILE`` or
    ``FILE:NAME`` (NAME is the entry's name, else the file's: ``loader.entry_name``).

    ``params`` (typed) and ``overrides`` (``--param NAME=VALUE`` texts, which win) set the
    strategy's parameters; its entry is then named ``params.variant_name`` of the file's
    name (a NAME given with ``FILE:NAME`` is kept as given). Every entrant carries all
    its parameters' values (``Entrant.params``), the others' at their defaults.

    One file under one name twice runs once; two entries of one name are refused (name
    one with ``FILE:NAME``), so one file can run under two names, and two files of one
    name side by side.
    """
    specs = [str(strategy)]
    if vs:
        for part in vs.split(","):
            name = part.strip()
            if not name:
                continue
            if name == "baselines":
                specs += [str(baseline_path(b)) for b in BASELINES]
            else:
                specs.append(name)
    chosen: dict[str, tuple[Path, str]] = {}  # entry name -> (resolved file, as given)
    entrants = []
    for i, text in enumerate(specs):
        path, name = parse_entry(text)
        resolved = path.resolve()
        loaded = None
        values: dict[str, ParamValue] = {}
        if i == 0 and (params or overrides):
            loaded = load_strategy(path, name, params, overrides=overrides)
            cls = type(loaded)
            values = check_values(cls, params or {}, str(path))
            values.update(parse_overrides(cls, overrides, str(path)))
            if name == entry_name(path):
                name = variant_name(name, values, strategy_params(cls))
        if name in chosen:
            if chosen[name][0] == resolved:
                continue
            raise BacktestError(
                f"two entries would be named {name!r} ({chosen[name][1]} and {text}): name "
                f"one with FILE:NAME, e.g. {path}:{name[:30]}-2"
            )
        chosen[name] = (resolved, text)
        s = loaded if loaded is not None else load_strategy(path, name)
        entrants.append(Entrant(name, s, resolved, params=params_doc(type(s), values)))
    return entrants


def default_out(strategy: Path, kind: str = "") -> Path:
    """``<data dir>/runs/<entry>-[<kind>-]<UTC stamp>``."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    return data_dir() / "runs" / f"{entry_name(strategy)}-{kind + '-' if kind else ''}{stamp}"


def run_dir(out: Path | None, strategy: Path, kind: str = "", *, force: bool = False) -> Path:
    """``--out`` (refused if it holds a run, unless ``force``: then that run's files are
    deleted), or a new directory in the data dir for ``strategy``'s run; made."""
    if out is None:
        return new_dir(default_out(strategy, kind))
    return reused_dir(out, force)


def build_backtest(
    strategy: Path,
    paths: list[str],
    *,
    season: Path | None,
    vs: str | None,
    out: Path | None,
    latency_ms: int,
    seed: int,
    force: bool = False,
    hook_timeout_s: float = DEFAULT_TIMEOUT_S,
    full_log: bool = True,
    params: Sequence[str] = (),
    cache: bool = True,
) -> tuple[Backtest, Path]:
    """The run ``arena backtest`` (and arena-tui) makes: its Backtest and its directory.

    ``full_log``: a self-contained run log (the market lines too); else a thin one
    (``arena backtest``'s default: the sources' hashes and the own inputs). ``params``:
    the strategy's ``--param NAME=VALUE`` texts. ``cache``: read and write the day cache
    (``logs.daycache``; it is also off when ``$ARENA_CACHE`` says so)."""
    for path in paths:
        if is_thin(path):
            read_header(path)  # refused: a thin run log holds no market data to trade on
    chosen = resolve_season(paths, season)
    entrants = entrants_for(strategy, vs, overrides=params)
    out_dir = run_dir(out, strategy, force=force)
    bt = Backtest(
        chosen,
        entrants,
        run_log=out_dir / "run.jsonl",
        sources=paths,
        latency_ms=latency_ms,
        seed=seed,
        exit_value=exit_value,
        hook_timeout_s=hook_timeout_s,
        thin=not full_log,
        cache=cache and cache_enabled(),
    )
    return bt, out_dir
