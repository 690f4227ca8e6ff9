"""What the start screen offers: recordings, strategies and season files found on disk.

Why this module exists: the start screen must list what a builder has without asking
them to type paths, and the tests must be able to hand it a fixed list. Paths given on the
command line come first; then what is the builder's own, then what arena ships:

- recordings: the data directory's ``recordings/`` (where ``arena synth``, ``arena record``
  and ``arena import`` write) and ``history/`` (``arena fetch``'s days), ``./recordings``, the
  recordings in ``.`` itself (a file is taken there only when it starts as a log does), then
  the shipped samples (the ``recordings/`` beside the baselines, found from this package
  wherever arena-tui is started; the synthetic six hours the docs use first);
- strategies: the files in ``.`` and in ``./strategies`` (``my_strategy.py``, saved where
  docs/strategies.md says), then the shipped baselines (marked ``baseline``, in the order
  ``--vs baselines`` runs them) and the other shipped strategies;
- seasons: ``./seasons``, then the shipped season files.

Started in arena's own tree, its ``./recordings``, ``./strategies`` and ``./seasons`` are
what it ships, and are listed (and ordered) as such.

A strategy file is listed only when it defines a Strategy subclass, directly or through
another strategy class (``class Reversion(Momentum)``, ``Momentum`` imported from a file
that defines it from ``Strategy``): read as Python source, never imported (importing runs
the file). The start screen highlights the first strategy: the builder's own when there is
one. With no recording at all, :func:`no_recordings` says where recordings come from.

Whether a recording runs under its own season or the defaults is also decided here,
cheaply (:func:`needs_season`), so the start screen can highlight one that runs and say,
before a run fails, which season file covers a log that spans no whole minute.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
from rich.text import Text

from arena_tui.logs.logfile import iter_raw_lines, open_binary, parse_header
from arena_tui.run.loader import BASELINES, STRATEGIES_DIR
from arena_tui.season.file import load_season
from arena_tui.util.errors import ArenaError
from arena_tui.util.paths import DATA_DIR_ENV, recordings_dir
from engine.season import MINUTE_MS

LOG_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.lz4", ".gz", ".lz4")
LOG_START = b'{"arena_log":'  # how a recording's first line starts (logs.logfile's header)
SHIPPED = STRATEGIES_DIR.parent  # arena's own tree: the baselines, samples and seasons
SAMPLE = "synth-3coins-20261201.jsonl.gz"  # the shipped sample the docs run first
STRATEGY_MAX_BYTES = 1_000_000  # a larger .py in ``.`` is not read to see if it is one
_STRATEGY_CLASS = re.compile(r"^class\s+\w+\s*\([^)]*\bStrategy\b[^)]*\)\s*:", re.MULTILINE)
BASE = "Strategy"  # the API's class (arena_tui.strategy.Strategy), by the name it is used as
DEPTH = 8  # imported strategy classes followed this many files deep (cycles stop there too)


@dataclass(frozen=True)
class Item:
    """One file the start screen lists: its path and where it was found."""

    path: Path
    where: str  # "data dir", "./recordings", "given", ...

    @property
    def label(self) -> Text:
        return Text.assemble(self.path.name, (f"  {self.where}", "dim"))


@dataclass(frozen=True)
class Catalog:
    recordings: tuple[Item, ...]
    strategies: tuple[Item, ...]
    seasons: tuple[Item, ...]


def _is_log(path: Path) -> bool:
    return path.is_file() and path.name.endswith(LOG_SUFFIXES)


def starts_as_log(path: Path) -> bool:
    """Whether ``path`` starts as a recording does (a log's header line; not a thin run
    log, nor the ``fills.jsonl`` of a run written into ``.``)."""
    try:
        with open_binary(path) as f:
            return f.read(len(LOG_START)) == LOG_START
    except (OSError, EOFError, RuntimeError, ValueError):
        return False


def defines_strategy(path: Path) -> bool:
    """Whether ``path`` defines a Strategy subclass, directly or through another strategy
    class it imports (a ``from strategies.momentum import Momentum`` is followed to
    ``momentum.py`` beside it, or under ``./``); a file Python cannot parse is judged by its
    ``class X(Strategy):`` lines, so running it shows the syntax error."""
    return bool(_strategy_classes(path, DEPTH))


def _strategy_classes(path: Path, depth: int) -> set[str]:
    """The names of the Strategy subclasses ``path`` defines (as read, never run)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    try:
        tree = ast.parse(text, str(path))
    except (SyntaxError, ValueError):
        return {m.group(0) for m in _STRATEGY_CLASS.finditer(text)}
    imported: dict[str, tuple[str, int, str | None]] = {}  # name -> (module, level, attr)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imported[alias.asname or alias.name] = (node.module or "", node.level, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:  # import a.b as m: m is a.b
                    imported[alias.asname] = (alias.name, 0, None)
                else:  # import a.b: a is bound
                    head = alias.name.split(".")[0]
                    imported[head] = (head, 0, None)
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(
            _is_strategy(base, path, found, imported, depth) for base in node.bases
        ):
            found.add(node.name)
    return found


def _is_strategy(
    base: ast.expr,
    path: Path,
    local: set[str],
    imported: dict[str, tuple[str, int, str | None]],
    depth: int,
) -> bool:
    dotted = _dotted(base)
    if dotted is None:
        return False
    *owner, name = dotted.split(".")
    if name == BASE:
        return True
    if not owner:
        if name in local:
            return True
        if name not in imported:
            return False
        module, level, attr = imported[name]
        if attr is None:
            return False  # ``import x``: a module, not a class
        if attr == BASE:
            return True
        target = _module_file(path, module, level)
        if target is None:  # ``from pkg import module`` is not a class either
            return False
        return depth > 0 and attr in _strategy_classes(target, depth - 1)
    head = imported.get(owner[0])
    if head is None:
        return False
    module, level, attr = head
    parts = [*module.split("."), *([attr] if attr else []), *owner[1:]]
    target = _module_file(path, ".".join(p for p in parts if p), level)
    return target is not None and depth > 0 and name in _strategy_classes(target, depth - 1)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return None if owner is None else f"{owner}.{node.attr}"
    return None


def _module_file(path: Path, module: str, level: int) -> Path | None:
    """The file an import in ``path`` names, looked for as the runner would find it: relative
    to the file (``from .momentum``), or from beside it, above it, or ``./``."""
    parts = [p for p in module.split(".") if p]
    here = path.resolve().parent
    if not parts:
        return None
    if level:
        ups = [here, *here.parents]
        roots = ups[level - 1 : level]
    else:
        roots = [here, here.parent, Path.cwd()]
    for root in roots:
        candidate = root.joinpath(*parts).with_suffix(".py")
        if candidate.is_file():
            return candidate
    return None


class _T(msgspec.Struct):
    t: int


_T_OF = msgspec.json.Decoder(_T)


@dataclass(frozen=True)
class Span:
    """The receive times of the first and the last input of some logs (ms)."""

    first: int
    last: int


def needs_season(paths: Sequence[Path]) -> Span | None:
    """The logs' span when they need a season file to run: no header names a season and
    their inputs span no whole minute, so the defaults' window is empty. None when they
    run as they are, or cannot be read (the run then says why in one line).

    Cheap whatever the logs' size: the inputs are read only until one lies a whole minute
    past the first minute boundary.
    """
    first: int | None = None
    last = 0
    try:
        for path in paths:
            for lineno, raw in enumerate(iter_raw_lines(path), start=1):
                if lineno == 1:
                    if parse_header(path, raw).season:
                        return None  # the log's own season
                    continue
                t = _T_OF.decode(raw).t
                if first is None:
                    first = t
                last = max(last, t)
                if last >= -(-first // MINUTE_MS) * MINUTE_MS + MINUTE_MS:
                    return None  # a whole minute: the defaults run it
    except (ArenaError, OSError, EOFError, ValueError, RuntimeError, msgspec.DecodeError):
        return None
    return None if first is None else Span(first, last)


def covering(seasons: Sequence[Item], span: Span) -> Item | None:
    """The first season file whose window overlaps ``span`` (None if none does)."""
    for item in seasons:
        try:
            season = load_season(item.path)
        except ArenaError:
            continue
        if season.start <= span.last and span.first < season.end:
            return item
    return None


def runs_alone(path: Path) -> bool:
    """Whether the recording runs under its own season or the defaults (see needs_season)."""
    return needs_season([path]) is None


def _files(directory: Path, keep: Iterable[str]) -> list[Path]:
    if not directory.is_dir():
        return []
    suffixes = tuple(keep)
    return sorted(p for p in directory.iterdir() if p.is_file() and p.name.endswith(suffixes))


def _unique(items: Iterable[Item]) -> tuple[Item, ...]:
    seen: set[Path] = set()
    out = []
    for item in items:
        key = item.path.resolve()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out)


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _own_strategies(directory: Path, where: str) -> list[Item]:
    files = [p for p in _files(directory, [".py"]) if not p.name.startswith("_")]
    return [
        Item(p, where)
        for p in files
        if p.stat().st_size <= STRATEGY_MAX_BYTES and defines_strategy(p)
    ]


def shipped_strategies(directory: Path = STRATEGIES_DIR) -> list[Item]:
    """The strategies arena ships: the baselines in ``--vs baselines``'s order, marked
    ``baseline``, then the others (``shipped``)."""
    found = {p.stem: p for p in _files(directory, [".py"]) if defines_strategy(p)}
    baselines = [Item(found.pop(name), "baseline") for name in BASELINES if name in found]
    return baselines + [Item(p, "shipped") for _, p in sorted(found.items())]


def samples(directory: Path) -> list[Item]:
    """The shipped recordings, the one the docs run first (``SAMPLE``) at the top."""
    files = [p for p in _files(directory, LOG_SUFFIXES) if _is_log(p)]
    files.sort(key=lambda p: (p.name != SAMPLE, p.name))
    return [Item(p, "sample") for p in files]


def discover(
    *,
    logs: Sequence[Path] = (),
    strategies: Sequence[Path] = (),
    seasons: Sequence[Path] = (),
    cwd: Path | None = None,
    data_recordings: Path | None = None,
    shipped: Path | None = None,
) -> Catalog:
    """The files to offer, the ones given first, then the builder's own (in ``cwd``, and
    the data directory's recordings), then what arena ships (under ``shipped``: its
    ``recordings/``, ``strategies/`` and ``seasons/``), each once."""
    here = cwd or Path.cwd()
    data = data_recordings if data_recordings is not None else recordings_dir()
    ours = shipped if shipped is not None else SHIPPED
    recs = [Item(p, "given") for p in logs]
    recs += [Item(p, "data dir") for p in _files(data, LOG_SUFFIXES) if _is_log(p)]
    # arena fetch's days, beside the recordings in the data directory (record.fetch)
    recs += [Item(p, "fetched") for p in _files(data.parent / "history", LOG_SUFFIXES)]
    if not _same_dir(here / "recordings", ours / "recordings"):  # (else: as the samples)
        recs += [Item(p, "./recordings") for p in _files(here / "recordings", LOG_SUFFIXES)]
    recs += [Item(p, "here") for p in _files(here, LOG_SUFFIXES) if starts_as_log(p)]
    recs += samples(ours / "recordings")
    strats = [Item(p, "given") for p in strategies]
    strats += _own_strategies(here, "here")
    if not _same_dir(here / "strategies", ours / "strategies"):  # (else: the baselines)
        strats += _own_strategies(here / "strategies", "./strategies")
    strats += shipped_strategies(ours / "strategies")
    seas = [Item(p, "given") for p in seasons]
    if not _same_dir(here / "seasons", ours / "seasons"):
        seas += [Item(p, "./seasons") for p in _files(here / "seasons", [".toml", ".json"])]
    seas += [Item(p, "shipped") for p in _files(ours / "seasons", [".toml", ".json"])]
    return Catalog(_unique(recs), _unique(strats), _unique(seas))


def no_recordings(data_recordings: Path | None = None) -> str:
    """What the start screen says when it found no recording: where they come from."""
    data = data_recordings if data_recordings is not None else recordings_dir()
    return (
        f"no recordings found here, in ./recordings or in {data.parent} (the data "
        f"directory; ${DATA_DIR_ENV} sets it). Make one: arena synth writes a day of "
        "synthetic BTC, ETH and SOL; arena record records Hyperliquid's live feed; arena "
        "fetch downloads days from Hyperliquid's archive. Or give arena's shipped sample: "
        f"arena-tui recordings/{SAMPLE} in arena's source tree. Then start arena-tui again."
    )
