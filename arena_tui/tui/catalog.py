"""What the start screen offers: recordings, strategies and season files found on disk.

Why this module exists: the start screen must list what a builder has without asking
them to type paths, and the tests must be able to hand it a fixed list. Discovery looks in
the data directory's ``recordings/`` and ``./recordings``, in ``./strategies`` and the
shipped baselines, and in ``./seasons``; paths given on the command line come first. A
strategy file is listed only when it defines a Strategy subclass (read as text, never
imported: importing runs the file).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from arena_tui.run.loader import STRATEGIES_DIR
from arena_tui.util.paths import recordings_dir

LOG_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.lz4", ".gz", ".lz4")
_STRATEGY_CLASS = re.compile(r"^class\s+\w+\s*\([^)]*\bStrategy\b[^)]*\)\s*:", re.MULTILINE)


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
    """Whether ``path`` reads like a strategy file (a ``class X(Strategy):`` in it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return _STRATEGY_CLASS.search(text) is not None


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
