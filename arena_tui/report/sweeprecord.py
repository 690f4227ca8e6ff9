"""A sweep directory as the runs catalog records it (kind ``sweep``).

Why this module exists: ``arena runs list`` lists sweeps beside runs, and a sweep's
directory is not a run's: its store ``sweep.sqlite`` (``arena_tui.sweep.store``), and
``sweep.json`` once the sweep has finished (``arena sweep show`` prints the same document).
The record says what ``arena sweep show`` would, in a few words: the strategy, the chosen
variant and its swept values (``params``, their defaults in ``defaults``), its held-out S
and answers, the days, and ``sweep``: ``finished``, ``variants``, ``search``, ``days``,
``holdout_days``, ``folds``, ``chosen``, and for an unfinished sweep (no ``sweep.json``
yet: read from its store's settings, opened read-only, never written) ``jobs`` stored.
Nothing here loads the strategy or imports the sweep (which imports report).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from arena_tui.report.runrecord import SWEEP_STORE, RunRecord, RunsError, verdict_facts
from engine.units import NS_PER_MS

SWEEP_RESULT = "sweep.json"  # written when the sweep finishes


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _sweep_config(store: Path) -> tuple[dict[str, Any], int]:
    """A sweep store's settings and how many jobs it holds, read-only ({} and 0 when it
    cannot be read: a sweep just started, or a file that is not one)."""
    with contextlib.suppress(sqlite3.Error, ValueError, TypeError):
        db = sqlite3.connect(f"{store.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT doc FROM config WHERE id = 1").fetchone()
            jobs = db.execute("SELECT count(*) FROM jobs").fetchone()[0]
        finally:
            db.close()
        doc = json.loads(row[0]) if row else {}
        return (doc if isinstance(doc, dict) else {}), int(jobs)
    return {}, 0


def read_sweep(path: Path) -> RunRecord:
    """The record of sweep directory ``path``: from its ``sweep.json`` when finished, else
    from its store's settings (RunsError if it is not a sweep)."""
    path = path.resolve()
    store = path / SWEEP_STORE
    if not store.is_file():
        raise RunsError(f"{path}: not a sweep directory (no {SWEEP_STORE})")
    result = path / SWEEP_RESULT
    doc: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(result.read_text(encoding="utf-8"))
        doc = loaded if isinstance(loaded, dict) and "folds" in loaded else {}
    finished = bool(doc)
    jobs = 0
    if not finished:
        doc, jobs = _sweep_config(store)
    try:
        when = (result if finished else store).stat().st_mtime_ns // NS_PER_MS
    except OSError as exc:
        raise RunsError(f"{path}: {exc}") from None
    days = [d for d in doc.get("days") or [] if isinstance(d, dict)]
    folds = [f for f in doc.get("folds") or [] if isinstance(f, dict)]
    last = folds[-1] if folds else {}
    chosen = doc.get("chosen") if isinstance(doc.get("chosen"), dict) else None
    params = _dict(doc.get("params"))
    verdict = _dict(doc.get("verdict"))
    shas = [d.get("sha256") for d in days]
    data_id = None
    if shas and all(shas):
        data_id = hashlib.sha256("\n".join(str(x) for x in shas).encode()).hexdigest()
    strategy = doc.get("strategy")
    return RunRecord(
        path=str(path),
        when=when,
        kind="sweep",
        season="",
        rules_sha256="",
        start=days[0].get("first_t") if days else None,
        end=days[-1].get("last_t") if days else None,
        final=finished,
        sources=[Path(str(d.get("path"))).name for d in days],
        source_sha256=shas,
        data_id=data_id,
        strategy=Path(str(strategy)).name if strategy else None,
        entry=None if chosen is None else chosen.get("name"),
        params=None if chosen is None else chosen.get("params"),
        score=None if chosen is None else chosen.get("holdout_score"),
        ret=None,
        mdd=None,
        equity=None,
        control=verdict.get("control"),
        defaults={k: v.get("default") for k, v in params.items() if isinstance(v, dict)},
        sweep={
            "finished": finished,
            "variants": len(last.get("variants") or []) if finished else None,
            "search": doc.get("search"),
            "days": len(days),
            "holdout_days": sum(len(f.get("holdout_days") or []) for f in folds),
            "folds": len(folds),
            "chosen": None if chosen is None else chosen.get("name"),
            "jobs": None if finished else jobs,
        },
        **verdict_facts(verdict),
    )
