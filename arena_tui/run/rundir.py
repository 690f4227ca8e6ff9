"""A run's directory: a new one, or ``--out``, refused if it holds a run unless ``force``.

``arena backtest``, ``arena paper`` and arena-tui write a run into one directory: the run
log ``run.jsonl``, its season beside it, ``ranking.json``, the report's files and the
entries' own logs. An earlier run there is never replaced silently, nor are its files left
mixed with a new run's: a directory holding a run (any of :data:`MARKERS`) is refused, and
with ``force`` the earlier run's files are deleted first. ``force`` deletes only files of
the kinds a run writes (:data:`RUN_KINDS`), and only when nothing else is there: a
directory that also holds other files or subdirectories is refused, naming one, so
``--force`` never deletes what arena did not write (``--out .`` in a project, say).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from arena_tui.run.parts import BacktestError
from arena_tui.util.outputs import writing

RUN_LOG = "run.jsonl"
MARKERS = (RUN_LOG, "report.json", "ranking.json")  # any of them: the directory holds a run
RUN_KINDS = (".jsonl", ".json", ".toml", ".csv", ".svg", ".log", ".txt", ".msgpack", ".html")


def held_run(directory: Path) -> str | None:
    """The name of a file saying ``directory`` holds a run, or None."""
    for name in MARKERS:
        if (directory / name).exists():
            return name
    return None


def refuse_held_run(out: Path) -> None:
    """One error line if ``out`` is a file or holds a run (checked before a run is chosen)."""
    if out.exists() and not out.is_dir():
        raise BacktestError(f"--out {out} is a file, not a directory")
    marker = held_run(out)
    if marker is not None:
        raise BacktestError(
            f"--out {out} already holds a run ({marker}): give --force to replace it, or "
            "choose another --out"
        )


def reused_dir(out: Path, force: bool) -> Path:
    """``out`` made, or emptied of an earlier run with ``force``; else one error line."""
    if force and out.is_dir() and held_run(out) is not None:
        _clear(out)
    else:
        refuse_held_run(out)  # (a file, or a run without --force)
    with writing(out, "--out"):
        out.mkdir(parents=True, exist_ok=True)
    return out


def _clear(out: Path) -> None:
    entries = sorted(out.iterdir())
    for entry in entries:
        if entry.is_symlink() or not entry.is_file() or entry.suffix not in RUN_KINDS:
            raise BacktestError(
                f"--out {out} holds {entry.name}, which is not a run's file: --force replaces "
                "only a run's files (move it, or choose another --out)"
            )
    with writing(out, "--out"):
        for entry in entries:
            entry.unlink()


def session_dir(out: Path) -> Path:
    """Where arena-tui puts a run of its session: ``out``, or once the session's own earlier
    run is there (a run that was there before is refused as the session starts), the first
    of ``out-2``, ``out-3``... that does not exist."""
    if held_run(out) is None:
        return out
    for n in itertools.count(2):
        candidate = out.with_name(f"{out.name}-{n}")
        if not candidate.exists():
            return candidate
    raise AssertionError("unreachable")


def new_dir(base: Path) -> Path:
    """A directory made new for this run: ``base``, or ``base-2``, ``base-3``... if taken
    (two runs started in the same second, even by two processes, never share one)."""
    with writing(base):
        base.parent.mkdir(parents=True, exist_ok=True)
        for n in itertools.count(1):
            candidate = base if n == 1 else base.with_name(f"{base.name}-{n}")
            try:
                candidate.mkdir()
            except FileExistsError:
                continue
            return candidate
    raise AssertionError("unreachable")
