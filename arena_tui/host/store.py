"""The score rows in SQLite: one row per entry per UTC day, as the engine emits them.

Why this module exists: the leaderboard must outlive a request and be cheap to serve, but
it is never the truth: the log is. The table is emptied and rebuilt from the log's replay
every time the server starts, and refreshed at every minute mark with the engine's own
``ScoreRow`` events (never re-ranked or recomputed here). So the database needs no
durability of its own (``synchronous=OFF``); a lost write is rebuilt on the next start.
Rows are served with the keys ``arena replay --scores`` writes, so the two compare equal.
What is served is what the file holds: a change made on disk by another process is
served too (``data_version``), so ``arena verify`` checks the rows people actually see.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engine import events as ev

COLUMNS = (
    "day",
    "t",
    "entry",
    "rank",
    "equity",
    "return",
    "mdd",
    "score",
    "eligible",
    "fill_days",
    "active_share",
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    day INTEGER NOT NULL, t INTEGER NOT NULL, entry TEXT NOT NULL, rank INTEGER NOT NULL,
    equity INTEGER NOT NULL, "return" INTEGER NOT NULL, mdd INTEGER NOT NULL,
    score INTEGER NOT NULL, eligible INTEGER NOT NULL, fill_days INTEGER NOT NULL,
    active_share INTEGER NOT NULL, PRIMARY KEY (day, entry)
)
"""
_QUOTED = ", ".join(f'"{c}"' for c in COLUMNS)
_UPSERT = f"INSERT OR REPLACE INTO scores ({_QUOTED}) VALUES ({', '.join('?' * len(COLUMNS))})"
_SELECT = f"SELECT {_QUOTED} FROM scores"


def db_path(log: Path) -> Path:
    return log.with_name(log.name + ".scores.sqlite")


def row_values(r: ev.ScoreRow) -> tuple[int | str, ...]:
    return (
        r.day,
        r.t,
        r.entry,
        r.rank,
        r.equity,
        r.ret,
        r.mdd,
        r.score,
        int(r.eligible),
        r.fill_days,
        r.active_share,
    )


class ScoreStore:
    """The ``scores`` table of one server; emptied on open (it is rebuilt from the log)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute(_SCHEMA)
        self._db.execute("DELETE FROM scores")
        self.version = 0  # bumped on every write, for callers that cache answers

    def put(self, rows: Iterable[ev.ScoreRow]) -> None:
        """Upsert rows in one transaction."""
        values = [row_values(r) for r in rows]
        if not values:
            return
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(_UPSERT, values)
        self.version += 1

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: it changes when another connection (another
        process: an organiser, or someone tampering) commits to the file. With ``version``
        it tells a cached answer it is stale, whoever changed the rows."""
        value = self._db.execute("PRAGMA data_version").fetchone()[0]
        return int(value)

    def rows(self, day: int | None = None) -> list[dict[str, Any]]:
        """Rows in (day, rank) order, optionally of one day, as ``arena replay --scores``."""
        if day is None:
            cur = self._db.execute(_SELECT + " ORDER BY day, rank")
        else:
            cur = self._db.execute(_SELECT + " WHERE day = ? ORDER BY rank", (day,))
        out = []
        for values in cur:
            doc = dict(zip(COLUMNS, values, strict=True))
            doc["eligible"] = bool(doc["eligible"])
            out.append(doc)
        return out

    def close(self) -> None:
        self._db.close()
