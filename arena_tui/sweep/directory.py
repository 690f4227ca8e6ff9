"""A sweep's directory: made or found, locked while a sweep runs in it, its identity saved
first and read back.

- :func:`sweep_dir` makes a new sweep's directory (``--out``, or a new one under the data
  directory's ``sweeps/``); :func:`holds_sweep` says whether one holds a sweep already.
- :class:`SweepLock`: one sweep per directory, an exclusive ``flock`` on ``DIR/sweep.lock``
  while it runs. A sweep and a ``--resume`` of the same directory at once would both run
  its missing jobs and both write its results; so ``arena sweep`` (new or resumed) takes
  this lock before it touches the store, and a second one on a locked directory is one
  error line naming the holder's pid (``util.pidlock``: the kernel drops it when its
  process dies, ``kill -9`` included; the workers do not inherit it, so it ends with the
  driver). ``arena sweep show`` only reads, and takes no lock.
- The identity: hashing a week of days takes a while, so a new sweep saves its settings
  and its days' paths first (:func:`pending_doc`); a sweep killed before its days were
  read resumes from them (:func:`pending_days`). :func:`discard` removes what a sweep that
  cannot start on its days wrote, so the same command runs once they are fixed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena_tui.run.rundir import new_dir
from arena_tui.sweep import SweepError
from arena_tui.sweep.config import Config
from arena_tui.sweep.store import STORE_FILE, SweepStore
from arena_tui.util.outputs import writing
from arena_tui.util.paths import data_dir
from arena_tui.util.pidlock import PidLock

LOCK_FILE = "sweep.lock"
PENDING = "pending_days"  # a config saved before its days were hashed: their paths


def pending_doc(cfg: Config, paths: Sequence[Path]) -> dict[str, Any]:
    """The sweep's identity before its days are hashed: its settings and the days' paths
    (absolute), saved first so that a sweep killed while hashing can be resumed."""
    return cfg.to_doc() | {PENDING: [str(p.resolve()) for p in paths]}


def pending_days(store: SweepStore) -> list[Path] | None:
    """The days' paths of a sweep saved before its days were hashed; None once they were."""
    doc = store.config() or {}
    paths = doc.get(PENDING)
    return None if paths is None else [Path(p) for p in paths]


def sweep_dir(out: Path | None, cfg: Config) -> Path:
    if out is None:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
        return new_dir(data_dir() / "sweeps" / f"{Path(cfg.strategy).stem}-{stamp}")
    if out.exists() and not out.is_dir():
        raise SweepError(f"--out {out} is a file, not a directory")
    if holds_sweep(out):
        raise SweepError(
            f"--out {out} already holds a sweep: continue it with arena sweep --resume {out}, "
            "or choose another --out"
        )
    with writing(out, "--out"):
        out.mkdir(parents=True, exist_ok=True)
    return out


def holds_sweep(directory: Path) -> bool:
    """Whether ``directory`` holds a sweep: a store with its settings saved (a store a
    sweep killed as it created it left empty is none: a new sweep may take it)."""
    if not (directory / STORE_FILE).is_file():
        return False
    with SweepStore(directory / STORE_FILE) as store:
        return store.config() is not None


def open_store(directory: Path) -> SweepStore:
    if not (directory / STORE_FILE).is_file():
        raise SweepError(f"{directory}: not a sweep directory (no {STORE_FILE} in it)")
    return SweepStore(directory / STORE_FILE)


def saved_config(store: SweepStore, directory: Path) -> Config:
    doc = store.config()
    if doc is None:
        raise SweepError(f"{directory}: the sweep's settings were never saved: start it again")
    return Config.from_doc(doc)


def discard(directory: Path, made: bool) -> None:
    """Remove the store and lock a sweep that could not start wrote (and ``directory``
    itself when this sweep made it and nothing else is in it)."""
    for name in (STORE_FILE, f"{STORE_FILE}-wal", f"{STORE_FILE}-shm", LOCK_FILE):
        (directory / name).unlink(missing_ok=True)
    if made:
        with contextlib.suppress(OSError):
            directory.rmdir()


class SweepLocked(SweepError):
    """Another process is running a sweep in this directory (one line)."""


class SweepLock(PidLock):
    """``with SweepLock(directory):`` the directory is this process's until the block ends
    (or the process does)."""

    def __init__(self, directory: Path, what: str = "--out") -> None:
        self.directory = directory
        super().__init__(directory / LOCK_FILE, named=directory, what=what)

    def refused(self, pid: str) -> Exception:
        return SweepLocked(
            f"{self.directory}: another arena sweep is running in it (pid {pid}); "
            "wait for it to end or stop it (a stopped one resumes with --resume)"
        )
