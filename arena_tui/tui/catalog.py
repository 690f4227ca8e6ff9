"""What the start screen offers: recordings, strategies and season files found on disk.

Why this module exists: the start screen must list what a builder has without asking
them to type paths, and the tests must be able to hand it a fixed list. Discovery looks in
the data directory's ``recordings/`` and ``./recordings``, in ``./strategies`` and the
shipped baselines, and in ``./seasons``; paths given on the command line come first. A
strategy file is listed only when it defines a Strategy subclass, directly or through
another strategy class (``class Reversion(Momentum)``, ``Momentum`` imported from a file
that defines it from ``Strategy``): read as Python source, never imported (importing runs
the file).

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

from arena_tui.logs.logfile import iter_raw_lines, parse_header
from arena_tui.run.loader import STRATEGIES_DIR
from arena_tui.season.file import load_season
from arena_tui.util.errors import ArenaError
from arena_tui.util.paths import recordings_dir
from engine.season import MINUTE_MS

LOG_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.lz4", ".gz", ".lz4")
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


def discover(
    *,
    logs: Sequence[Path] = (),
    strategies: Sequence[Path] = (),
    seasons: Sequence[Path] = (),
    cwd: Path | None = None,
    data_recordings: Path | None = None,
) -> Catalog:
    """The files to offer, the ones given first, each once."""
    here = cwd or Path.cwd()
    data = data_recordings if data_recordings is not None else recordings_dir()
    recs = [Item(p, "given") for p in logs]
    recs += [Item(p, "data dir") for p in _files(data, LOG_SUFFIXES) if _is_log(p)]
    recs += [Item(p, "./recordings") for p in _files(here / "recordings", LOG_SUFFIXES)]
    strats = [Item(p, "given") for p in strategies]
    for directory, where in ((here / "strategies", "./strategies"), (STRATEGIES_DIR, "baseline")):
        strats += [Item(p, where) for p in _files(directory, [".py"]) if defines_strategy(p)]
    seas = [Item(p, "given") for p in seasons]
    seas += [Item(p, "./seasons") for p in _files(here / "seasons", [".toml", ".json"])]
    return Catalog(_unique(recs), _unique(strats), _unique(seas))
