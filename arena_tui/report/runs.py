"""The runs catalog: every run and sweep directory arena knows of, in one SQLite index.

Why this module exists: after a few dozen backtests a builder asks "which run was the one
with window 120 s, on which day, and did it beat the control?". Every answer is already in
each run directory (``report.json``, and the run log's header and end line: the season,
the rules' hash, the data's names and SHA-256), so the index is only a cache of them
(``runrecord`` reads a directory into its record): it is rebuilt from the directories
whenever it is read (a directory changed since it was indexed is read again, one that is
gone is dropped), and deleting it loses nothing. It lives at ``<data dir>/runs.sqlite``;
the runs under ``<data dir>/runs`` and the sweeps under ``<data dir>/sweeps`` are always
scanned, other folders when named (and then remembered while they exist). A sweep
directory is listed beside the runs, as a record of kind ``sweep``.

Finding, indexing, comparing (``differing_params``: the parameters that differ between
runs of the same strategy) and the checks before a run is removed all speak of the same
thing, what makes a directory a run; ``commands.runs`` only prints them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from arena_tui.report.runrecord import (
    SWEEP_STORE,
    RunRecord,
    RunsError,
    is_run_dir,
    is_sweep_dir,
    read_run,
    record_of,
)
from arena_tui.report.sweeprecord import SWEEP_RESULT, read_sweep
from arena_tui.run.rundir import RUN_KINDS
from arena_tui.util.paths import data_dir

INDEX_FILE = "runs.sqlite"
# 2: a record carries the verdict's answers (ranked, money, skill, floor); 3: the defaults
# of its parameters, and sweeps
SCHEMA = 3
MAX_DEPTH = 4  # how deep under a named folder run directories are looked for


def read_any(path: Path) -> RunRecord:
    """The record of a run directory or a sweep directory."""
    if is_sweep_dir(path) and not is_run_dir(path):
        return read_sweep(path)
    return read_run(path)


# ---- finding run directories --------------------------------------------------------------


def find_runs(roots: Iterable[Path], depth: int = MAX_DEPTH) -> Iterator[Path]:
    """Run and sweep directories at or under ``roots`` (not below one, at most ``depth``
    levels down), each once, resolved."""
    seen: set[Path] = set()
    for root in roots:
        if not root.is_dir():
            continue
        stack = [(root.resolve(), 0)]
        while stack:
            d, level = stack.pop()
            if d in seen:
                continue
            seen.add(d)
            if is_run_dir(d) or is_sweep_dir(d):
                yield d
                continue
            if level >= depth:
                continue
            with contextlib.suppress(OSError):
                subs = sorted(
                    (p for p in d.iterdir() if p.is_dir() and not p.name.startswith(".")),
                    reverse=True,
                )
                stack.extend((p.resolve(), level + 1) for p in subs)


# ---- the index ----------------------------------------------------------------------------


def index_path() -> Path:
    return data_dir() / INDEX_FILE


def default_root() -> Path:
    return data_dir() / "runs"


def default_roots() -> list[Path]:
    """Where runs and sweeps go when not told ``--out``: always scanned."""
    return [default_root(), data_dir() / "sweeps"]


class Catalog:
    """The SQLite index; ``refresh`` brings it in line with the directories."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or index_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path)
            self._schema()
        except (OSError, sqlite3.Error) as exc:
            raise RunsError(f"runs index {self.path}: {exc}") from None

    def _schema(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        known: list[str] = []
        if version != SCHEMA:  # another layout: it is only a cache, so rebuilt
            # ...from the run directories, those it knew outside the roots included (a run
            # is indexed where --out put it): their paths are all that is kept of it
            with contextlib.suppress(sqlite3.Error):
                known = [p for (p,) in self.db.execute("SELECT path FROM runs").fetchall()]
            self.db.execute("DROP TABLE IF EXISTS runs")
            self.db.execute(f"PRAGMA user_version = {SCHEMA}")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS runs (path TEXT PRIMARY KEY, stamp TEXT NOT NULL, "
            "when_ms INTEGER NOT NULL, strategy TEXT, season TEXT, rules_sha256 TEXT, "
            "data_id TEXT, score INTEGER, verdict TEXT, doc TEXT NOT NULL)"
        )
        for path in known:
            with contextlib.suppress(RunsError):
                self.add(Path(path), commit=False)
        self.db.commit()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _stamp(path: Path) -> str | None:
        """What changes when the directory's record would: its report.json, or a sweep's
        store (and its write-ahead log) and result."""
        if is_run_dir(path) or not is_sweep_dir(path):
            files = [path / "report.json"]
        else:
            files = [path / SWEEP_RESULT, path / SWEEP_STORE, path / f"{SWEEP_STORE}-wal"]
        parts = []
        for i, f in enumerate(files):
            try:
                st = f.stat()
            except OSError:
                if i == 0 and len(files) == 1:
                    return None
                parts.append("-")
                continue
            parts.append(f"{st.st_mtime_ns}:{st.st_size}")
        return "/".join(parts)

    def refresh(self, roots: Sequence[Path] = ()) -> list[RunRecord]:
        """Index every run under the default root and ``roots``, re-read what changed, drop
        what is gone; the records under ``roots`` (none given: all), newest first."""
        known = dict(self.db.execute("SELECT path, stamp FROM runs").fetchall())
        found = list(find_runs([*default_roots(), *roots]))
        seen = {str(d) for d in found}
        found += [Path(p) for p in known if p not in seen]  # indexed where it was written
        for d in found:
            stamp = self._stamp(d)
            if stamp is None or known.get(str(d)) == stamp:
                continue
            try:
                rec = read_any(d)
            except RunsError:
                continue
            self._put(rec, stamp)
        for path in known:
            p = Path(path)
            if not (is_run_dir(p) or is_sweep_dir(p)):
                self.db.execute("DELETE FROM runs WHERE path = ?", (path,))
        self.db.commit()
        records = self.records()
        if roots:
            under = [str(r.resolve()) for r in roots]
            records = [r for r in records if any(_within(r.path, u) for u in under)]
        return records

    def _put(self, rec: RunRecord, stamp: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rec.path,
                stamp,
                rec.when,
                rec.strategy,
                rec.season,
                rec.rules_sha256,
                rec.data_id,
                rec.score,
                rec.verdict,
                json.dumps(rec.doc(), separators=(",", ":")),
            ),
        )

    def add(self, path: Path, *, commit: bool = True) -> None:
        """Index the run in ``path`` as it is now (RunsError if it is not one)."""
        stamp = self._stamp(path)
        if stamp is not None:
            self._put(read_any(path), stamp)
            if commit:
                self.db.commit()

    def records(self) -> list[RunRecord]:
        rows = self.db.execute("SELECT doc FROM runs ORDER BY when_ms DESC, path").fetchall()
        out = []
        for (doc,) in rows:
            with contextlib.suppress(ValueError, TypeError):  # a row no version wrote: skipped
                out.append(record_of(json.loads(doc)))
        return out

    def forget(self, paths: Iterable[str]) -> None:
        for p in paths:
            self.db.execute("DELETE FROM runs WHERE path = ?", (p,))
        self.db.commit()


def remember(path: Path) -> None:
    """Index a run (or a sweep) just written, so ``arena runs list`` shows it wherever
    ``--out`` put it.
    Best effort: the index is a cache rebuilt from the run directories, so a read-only data
    directory or a busy index never fails the run that was written."""
    with contextlib.suppress(RunsError, sqlite3.Error, OSError), Catalog() as cat:
        cat.add(path)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


# ---- comparing and removing ---------------------------------------------------------------


def same_data(records: Sequence[RunRecord]) -> bool | None:
    """True/False when every run's data has a fingerprint; None when one cannot tell (then
    the source names are compared by the caller)."""
    ids = {r.data_id for r in records}
    if None in ids:
        return None
    return len(ids) == 1


def differing_params(records: Sequence[RunRecord]) -> list[str]:
    """The strategy parameters whose values are not the same in every run of the same
    strategy (runs of different strategies have different parameters: their strategies
    differ, not their values; a parameter one run of a strategy has and another lacks
    differs)."""
    names: list[str] = []
    for r in records:
        for k in r.params or {}:
            if k not in names:
                names.append(k)
    groups: dict[str | None, list[RunRecord]] = {}
    for r in records:
        if r.params is not None:
            groups.setdefault(r.strategy, []).append(r)
    return [
        k
        for k in names
        if any(
            len({json.dumps((r.params or {}).get(k)) for r in group}) > 1
            for group in groups.values()
        )
    ]


def removable(path: Path) -> str | None:
    """Why ``path`` must not be removed as a run (None: it may): not a run directory, or it
    holds something a run does not write (a subdirectory, another kind of file)."""
    if not path.is_dir():
        return "not a directory"
    if is_sweep_dir(path) and not is_run_dir(path):
        return "a sweep, not a run (arena runs rm removes runs only)"
    if not is_run_dir(path):
        return "not a run directory (no report.json beside a run log or ranking.json)"
    for entry in sorted(path.iterdir()):
        if entry.is_symlink() or not entry.is_file():
            return f"holds {entry.name}, which is not a run's file"
        if entry.suffix not in RUN_KINDS:
            return f"holds {entry.name}, which is not a run's file"
    return None


def remove_run(path: Path) -> None:
    shutil.rmtree(path)
