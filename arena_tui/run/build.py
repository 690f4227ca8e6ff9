"""The one place a run is built from its config: ``arena backtest``, ``arena paper`` and
arena-tui all make their entrants, run directory and :class:`Backtest` here from one
:class:`~arena_tui.run.config.RunConfig`, so the three cannot drift apart. A strategy
file that is not there is said with the names it might be (``--vs baseline``:
``baselines``; a close file name; a baseline's file), and a STRATEGY and LOG given the
wrong way round are said as that (:func:`check_order`), not as the bad header the log
reader would find.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena_tui.logs.daycache import cache_enabled
from arena_tui.logs.logfile import read_header
from arena_tui.logs.readahead import is_compressed
from arena_tui.logs.thinlog import is_thin
from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig, write_config
from arena_tui.run.fields import StrategyError
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
from arena_tui.run.stream import Subscriber
from arena_tui.season.file import resolve_season
from arena_tui.util.paths import data_dir, shipped


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
        if (copy := shipped(path)) is not None and copy.suffix == ".py":
            sys.stderr.write(f"arena: {path}: not in this directory; running arena's own: {copy}\n")
            path = copy
        if not path.is_file():
            raise missing_strategy(path, vs=i > 0)
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


def kept(config: RunConfig, entrants: Sequence[Entrant]) -> RunConfig:
    """The config a run writes into its directory (``RunConfig.kept``), its strategy named
    by the file that was loaded (absolute, arena's own copy when the given path fell back
    to it; ``FILE:NAME`` kept), so ``--config`` repeats it from any directory."""
    out = config.kept()
    if config.vs is not None:
        out = out.replace(vs=_kept_vs(config.vs))
    if config.strategy is None or not entrants:
        return out  # a lockstep run's agents are not files
    given, name = parse_entry(config.strategy)
    loaded = entrants[0].path  # the strategy is always the first entrant
    return out.replace(
        strategy=str(loaded) if config.strategy == str(given) else f"{loaded}:{name}"
    )


def _kept_vs(vs: str) -> str:
    """``--vs`` with each file made absolute as it was found (``baselines`` as is)."""
    parts = []
    for part in vs.split(","):
        word = part.strip()
        if word and word != "baselines":
            path, name = parse_entry(word)
            found = shipped(path) or path
            if found.is_file():
                word = str(found.resolve()) if word == str(path) else f"{found.resolve()}:{name}"
        parts.append(word)
    return ",".join(parts)


def missing_strategy(path: Path, *, vs: bool = False) -> StrategyError:
    """``PATH: no such strategy file``, with what it may have meant: ``--vs baselines``
    (for a ``--vs`` word close to it), a file of a close name beside where it was looked
    for, or a baseline's file of a close name (``maker`` -> strategies/maker.py)."""
    hints: list[str] = []
    text = str(path)
    if vs and difflib.get_close_matches(text, ["baselines"], n=1, cutoff=0.7):
        hints.append("--vs baselines (all four)")
    folder = path.parent
    if folder.is_dir():
        names = sorted(p.name for p in folder.glob("*.py") if p.is_file())
        want = path.name if path.suffix == ".py" else f"{path.name}.py"
        hints += [str(folder / n) for n in difflib.get_close_matches(want, names, 1, 0.7)]
    stem = path.name.removesuffix(".py")
    for b in difflib.get_close_matches(stem, BASELINES, n=1, cutoff=0.7):
        shown = _shorter(baseline_path(b))
        if shown not in hints and str(baseline_path(b)) not in hints:
            hints.append(shown + (" (or --vs baselines for all four)" if vs and not hints else ""))
    said = f" (did you mean {' or '.join(hints)}?)" if hints else ""
    return StrategyError(f"{path}: no such strategy file{said}")


def _shorter(path: Path) -> str:
    """``path`` relative to the working directory when that is below it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


LOG_MARKS = (b'{"arena_log"', b'{"arena_run"')  # how line 1 of a log begins


def looks_like_log(path: Path) -> bool:
    """A directory (of day logs), a file named as a log is (``.jsonl``, ``.gz``, ``.lz4``),
    or one whose first bytes are a log's header; never a ``.py`` file."""
    name = path.name
    if name.endswith(".py"):
        return False
    if path.is_dir() or ".jsonl" in name or is_compressed(name):
        return True
    try:
        with path.open("rb") as f:
            return f.read(len(LOG_MARKS[0])) in LOG_MARKS
    except OSError:
        return False


def check_order(
    strategy: Path,
    logs: Sequence[str | os.PathLike[str]],
    usage: str = "arena backtest STRATEGY LOG...",
) -> None:
    """Refuse a STRATEGY and LOG given the wrong way round (``arena backtest day.jsonl.gz
    my.py``): a log as the strategy, or a Python file among the logs, in one line saying
    so (``usage``: the command's form), instead of the bad header or the missing strategy
    the run would stop at."""
    py = next((str(p) for p in logs if str(p).endswith(".py")), None)
    if looks_like_log(strategy):
        kind = "a directory of logs" if strategy.is_dir() else "a log"
        what = f"{strategy} is {kind}, not a strategy file"
    elif py is not None:
        what = f"{py} is a Python file, not a log"
    else:
        return
    raise BacktestError(f"{what}: did you swap STRATEGY and LOG? ({usage})")


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
    config: RunConfig, *, subscribers: Sequence[Subscriber] = (), echo: bool = True
) -> tuple[Backtest, Path]:
    """The run ``arena backtest`` (and arena-tui) makes of ``config``: its Backtest and its
    directory, which gets the config (``config.json``: ``--config`` repeats the run).
    ``subscribers``: the run's viewers beyond its own (``arena_tui.run.stream``); ``echo``:
    a strategy's output also goes to stderr (off under a screen, which shows it).

    ``config.run_log``: ``full``, a self-contained run log (the market lines too), or
    ``thin`` (``arena backtest``'s default: the sources' hashes and the own inputs).
    ``config.params``: the strategy's ``--param NAME=VALUE`` texts. ``config.cache``: read
    and write the day cache (``logs.daycache``; also off when ``$ARENA_CACHE`` says so)."""
    strategy, paths = config.strategy_path(), list(config.logs)
    check_order(strategy, paths)
    for path in paths:
        if is_thin(path):
            read_header(path)  # refused: a thin run log holds no market data to trade on
    chosen = resolve_season(paths, config.season_path())
    entrants = entrants_for(strategy, config.vs, overrides=config.params)
    out_dir = run_dir(config.out_path(), strategy, force=config.force)
    runs = config.replace(cache=config.cache and cache_enabled())
    bt = Backtest(
        runs,
        chosen,
        entrants,
        run_dir=out_dir,
        subscribers=subscribers,
        exit_value=exit_value,
        echo=echo,
    )
    write_config(kept(config, entrants), out_dir)
    return bt, out_dir
