"""A sweep's directory database: its configuration, its trials and every finished result.

Why this module exists: a sweep is long and may be stopped at any moment (Ctrl-C, a
``kill -9``, a lost machine), and a resumed one must recompute nothing it finished. So each
finished job is committed at once, in one transaction (SQLite in WAL mode): either all of
its entries' results are stored or none, and :meth:`SweepStore.done` says exactly which
(entry, day) pairs of a split are in hand. Trials get ids in the order the search asked for
them, and asking again for the same parameters gives the same id, so a resumed search that
replays its trials finds them where they were.

Tables: ``config`` (one JSON document), ``trials`` (id, entry name, parameters as
canonical JSON), ``results`` (split, day SHA-256, entry name, whether it is a trial, the
:class:`~arena_tui.sweep.jobs.EntryResult` as JSON) and ``jobs`` (each finished job: its
split, day, entries, seconds and inputs). ``PRAGMA user_version`` is the schema's version.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import msgspec

from arena_tui.run.params import ParamValue
from arena_tui.sweep import SweepError
from arena_tui.sweep.jobs import DayFile, DayResult, EntryResult

STORE_FILE = "sweep.sqlite"
VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS config (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    id INTEGER PRIMARY KEY,
    params TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    split TEXT NOT NULL,
    day TEXT NOT NULL,
    name TEXT NOT NULL,
    first_t INTEGER,
    trial INTEGER NOT NULL,
    doc BLOB NOT NULL,
    PRIMARY KEY (split, day, name)
);
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    split TEXT NOT NULL,
    day TEXT NOT NULL,
    file TEXT NOT NULL,
    names TEXT NOT NULL,
    seconds REAL NOT NULL,
    inputs INTEGER NOT NULL,
    finished REAL NOT NULL
);
"""
_RESULT = msgspec.json.Decoder(EntryResult)
_DAY = msgspec.json.Decoder(DayFile)
_ENC = msgspec.json.Encoder()


def canonical(params: dict[str, ParamValue]) -> str:
    """The one text of a set of parameter values: sorted keys, no spaces (true is not 1,
    60.0 is not 60: a value keeps its type)."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


class SweepStore:
    """``DIR/sweep.sqlite`` (``path``: the database file, or the directory holding it)."""

    def __init__(self, path: Path) -> None:
        path = Path(path)
        if path.is_dir():
            path = path / STORE_FILE
        self.path = path
        try:
            self._db = sqlite3.connect(path, isolation_level=None)  # transactions by hand
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > VERSION:
                self._db.close()
                raise SweepError(
                    f"{path}: written by a newer arena (sweep store version {version}; this "
                    f"one reads {VERSION})"
                )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit survives a kill
            if version == 0:  # IF NOT EXISTS: a schema cut short is finished next time
                self._db.executescript(f"{_SCHEMA}PRAGMA user_version = {VERSION};")
        except sqlite3.Error as exc:
            raise SweepError(f"{path}: not a sweep database ({exc})") from None

    def _tx(self) -> _Transaction:
        return _Transaction(self._db)

    # ---- configuration -----------------------------------------------------------------

    def save_config(self, doc: dict[str, Any]) -> None:
        with self._tx():
            self._db.execute(
                "INSERT OR REPLACE INTO config (id, doc) VALUES (1, ?)", (json.dumps(doc),)
            )

    def config(self) -> dict[str, Any] | None:
        row = self._db.execute("SELECT doc FROM config WHERE id = 1").fetchone()
        if row is None:
            return None
        doc: dict[str, Any] = json.loads(row[0])
        return doc

    # ---- trials ------------------------------------------------------------------------

    def add_trial(self, params: dict[str, ParamValue], name: str) -> int:
        """The trial's id: a new one (in the order asked), or the id these parameters
        already have (the name they were first stored with is kept)."""
        key = canonical(params)
        with self._tx():
            self._db.execute(
                "INSERT OR IGNORE INTO trials (params, name) VALUES (?, ?)", (key, name)
            )
            row = self._db.execute("SELECT id FROM trials WHERE params = ?", (key,)).fetchone()
        return int(row[0])

    def trials(self) -> list[tuple[int, str, dict[str, ParamValue]]]:
        """Every trial: (id, entry name, parameters), in id order."""
        rows = self._db.execute("SELECT id, name, params FROM trials ORDER BY id")
        return [(int(i), str(name), json.loads(params)) for i, name, params in rows]

    # ---- results -----------------------------------------------------------------------

    def save_day(self, trial_names: list[str], result: DayResult, split: str) -> None:
        """Every entry of a finished job, at once (``trial_names``: which entries are
        trials; the others, the control, are stored too); a result already stored for an
        entry, day and split is replaced (a pass is deterministic: it is the same)."""
        trials = set(trial_names)
        day = result.day
        with self._tx():
            for entry in result.entries:
                self._db.execute(
                    "INSERT OR REPLACE INTO results (split, day, name, first_t, trial, doc) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        split,
                        day.sha256,
                        entry.name,
                        day.first_t,
                        int(entry.name in trials),
                        _ENC.encode(entry),
                    ),
                )
            self._db.execute(
                "INSERT INTO jobs (split, day, file, names, seconds, inputs, finished) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    split,
                    day.sha256,
                    _ENC.encode(day).decode(),
                    json.dumps([e.name for e in result.entries]),
                    result.seconds,
                    result.inputs,
                    time.time(),
                ),
            )

    def done(self, split: str) -> set[tuple[str, str]]:
        """``{(entry name, day sha256)}`` already computed for ``split``."""
        rows = self._db.execute("SELECT name, day FROM results WHERE split = ?", (split,))
        return {(str(name), str(day)) for name, day in rows}

    def finished_days(self, split: str) -> set[str]:
        """The days (SHA-256) a job of ``split`` finished on, whatever it stored (a twin
        job of a day the variant made no trip on stores no entry)."""
        rows = self._db.execute("SELECT DISTINCT day FROM jobs WHERE split = ?", (split,))
        return {str(day) for (day,) in rows}

    def results(self, split: str | None = None) -> list[tuple[str, str, EntryResult]]:
        """(split, day sha256, result) of every stored entry (of ``split`` only, if given),
        by split, then day (calendar order), then entry name."""
        query = "SELECT split, day, doc FROM results"
        args: tuple[str, ...] = ()
        if split is not None:
            query += " WHERE split = ?"
            args = (split,)
        query += " ORDER BY split, first_t, day, name"
        return [
            (str(s), str(d), _RESULT.decode(doc)) for s, d, doc in self._db.execute(query, args)
        ]

    def days(self) -> dict[str, DayFile]:
        """Every day a job finished on, by SHA-256 (the file as the driver saw it)."""
        rows = self._db.execute("SELECT day, file FROM jobs ORDER BY id")
        return {str(sha): _DAY.decode(file) for sha, file in rows}

    def seconds(self) -> float:
        """The workers' time over every finished job."""
        row = self._db.execute("SELECT COALESCE(SUM(seconds), 0) FROM jobs").fetchone()
        return float(row[0])

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SweepStore:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` when the block raises)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
