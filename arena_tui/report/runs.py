"""The runs catalog: every run directory arena knows of, in one SQLite index.

Why this module exists: after a few dozen backtests a builder asks "which run was the one
with window 120 s, on which day, and did it beat the control?". Every answer is already in
each run directory (``report.json``, and the run log's header and end line: the season,
the rules' hash, the data's names and SHA-256), so the index is only a cache of them: it is
rebuilt from the directories whenever it is read (a directory changed since it was indexed
is read again, one that is gone is dropped), and deleting it loses nothing. It lives at
``<data dir>/runs.sqlite``; the runs under ``<data dir>/runs`` are always scanned, other
folders when named (and then remembered while they exist).

A record is one run: when (report.json's time), its kind, the season and rules, the data
(source names, and a fingerprint of their SHA-256s when the run log names them: a thin run
log does; a full one copies its data in and names only the files), the strategy (the first
entry: its file, name and parameters), its S, R, MDD and equity, the verdict (its three
answers' codes and texts and the floor's, and ``verdict_text.summary`` of them; a run
written before the three questions has only its one word and its text), and every entry's
row for ``show`` and ``compare``.

Why one module: reading a run directory, finding them, the index that caches them and
the checks before one is removed all speak of the same thing (what makes a directory a
run, and what a record of it holds); ``commands.runs`` only prints them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.report.verdict_text import summary
from arena_tui.run.rundir import RUN_KINDS, RUN_LOG
from arena_tui.util.errors import ArenaError
from arena_tui.util.paths import data_dir

INDEX_FILE = "runs.sqlite"
SCHEMA = 2  # 2: a record carries the verdict's answers (ranked, money, skill, floor)
ANSWERS = ("ranked", "money", "skill", "floor")  # the verdict's questions, then the floor
MAX_DEPTH = 4  # how deep under a named folder run directories are looked for


class RunsError(ArenaError):
    """A catalog request that cannot be done as asked (one line)."""


@dataclass
class EntryRow:
    """One entry of a run, as report.json ranks it (money e6, ratios e8)."""

    entry: str
    rank: int | None
    strategy: str | None
    params: dict[str, Any] | None
    score: int
    ret: int
    mdd: int
    equity: int
    exit_equity: int | None
    fills: int
    fees: int  # venue + execution + performance
    funding: int
    eligible: bool


@dataclass
class RunRecord:
    """One run directory, as the catalog lists it."""

    path: str  # absolute
    when: int  # ms: when its report was written
    kind: str  # backtest, paper or replay
    season: str
    rules_sha256: str
    start: int | None
    end: int | None
    final: bool
    sources: list[str]  # the data's file names (or the live feed's URL)
    source_sha256: list[str | None]  # each source's SHA-256 when the run log records it
    data_id: str | None  # a fingerprint of the data: the sources' SHA-256s, or None
    strategy: str | None  # the first entry's file name
    entry: str | None  # the first entry's name
    params: dict[str, Any] | None
    score: int | None
    ret: int | None
    mdd: int | None
    equity: int | None
    verdict: str | None  # the skill answer or no_trades; an old run's better / worse / ...
    verdict_text: str | None  # verdict_text.summary: the three answers, or an old run's text
    control: str | None
    # each answer's code (yes, loses_money, luck, better...); None for a run written before
    # the three questions
    ranked: str | None = None
    money: str | None = None
    skill: str | None = None
    floor: str | None = None
    answers: dict[str, str] | None = None  # each answer's text, as the terminal printed it
    entries: list[EntryRow] = field(default_factory=list)

    @property
    def name(self) -> str:
        return Path(self.path).name

    def doc(self) -> dict[str, Any]:
        return asdict(self)


# ---- reading one run directory ------------------------------------------------------------


def is_run_dir(path: Path) -> bool:
    """A directory holding a run's report (``report.json``) and its log or ranking."""
    return (path / "report.json").is_file() and (
        (path / RUN_LOG).is_file() or (path / "ranking.json").is_file()
    )


class _End(msgspec.Struct):
    end: dict[str, Any]


def _log_facts(log: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run log's header and its sources (a thin log's end line names their SHA-256)."""
    if not log.is_file():
        return {}, []
    header: dict[str, Any] = {}
    sources: list[dict[str, Any]] = []
    with contextlib.suppress(OSError, ValueError):
        with log.open("rb") as f:
            first = json.loads(f.readline() or b"{}")
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 65536))
            tail = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        if "arena_run" in first:  # a thin run log: header, then its sources
            header = first.get("header", {})
            sources = list(first.get("sources", []))
            if tail.startswith(b'{"end":'):
                sources = list(msgspec.json.decode(tail, type=_End).end.get("sources", []))
        else:
            header = first.get("header", first)
            sources = [{"name": n} for n in header.get("sources", []) or []]
    return header, sources


def _entry_row(e: dict[str, Any]) -> EntryRow:
    fees = e.get("fees") or {}
    fills = e.get("fills") or {}
    return EntryRow(
        entry=str(e.get("entry")),
        rank=e.get("rank"),
        strategy=e.get("strategy"),
        params=e.get("params"),
        score=int(e.get("score", 0)),
        ret=int(e.get("return", 0)),
        mdd=int(e.get("mdd", 0)),
        equity=int(e.get("equity", 0)),
        exit_equity=e.get("exit_equity"),
        fills=int(fills.get("taker", 0)) + int(fills.get("maker", 0)),
        fees=sum(int(fees.get(k, 0)) for k in ("venue", "execution", "performance")),
        funding=int(e.get("funding", 0)),
        eligible=bool(e.get("eligible")),
    )


def _verdict_facts(verdict: dict[str, Any]) -> dict[str, Any]:
    """The record's verdict fields from report.json's: the answers' codes and texts and
    their summary when it has them all; else (a report written before the three questions,
    or one edited by hand) its own text and no codes, never an error."""
    code = verdict.get("verdict")
    text = verdict.get("text")
    facts: dict[str, Any] = dict.fromkeys(ANSWERS) | {
        "verdict": None if code is None else str(code),
        "verdict_text": None if text is None else str(text),
        "answers": None,
    }
    answers = [a for key in ANSWERS if isinstance(a := verdict.get(key), dict) and "answer" in a]
    if len(answers) < len(ANSWERS):
        return facts
    try:
        text = summary(verdict)
    except (KeyError, TypeError, AttributeError):  # answers no version of arena wrote
        return facts
    return facts | {
        "verdict_text": text,
        "answers": {key: str(a.get("text") or "") for key, a in zip(ANSWERS, answers, strict=True)},
        **{key: str(a["answer"]) for key, a in zip(ANSWERS, answers, strict=True)},
    }


def read_run(path: Path) -> RunRecord:
    """The record of run directory ``path`` (RunsError if it is not one)."""
    path = path.resolve()
    report = path / "report.json"
    if not path.is_dir():
        raise RunsError(f"{path}: no such directory")
    try:
        doc = json.loads(report.read_text(encoding="utf-8"))
        when = report.stat().st_mtime_ns // 1_000_000
    except FileNotFoundError:
        raise RunsError(f"{path}: not a run directory (no report.json)") from None
    except (OSError, ValueError) as exc:
        raise RunsError(f"{path}: not a run directory (report.json: {exc})") from None
    if not isinstance(doc, dict) or "replay" not in doc:
        raise RunsError(f"{path}: not a run directory (report.json is not a run's report)")
    header, sources = _log_facts(path / RUN_LOG)
    replay = doc.get("replay") or {}
    entries = [_entry_row(e) for e in doc.get("entries", []) if isinstance(e, dict)]
    verdict = doc.get("verdict") or {}
    if not isinstance(verdict, dict):
        verdict = {}
    first_name = verdict.get("strategy") or (entries[0].entry if entries else None)
    first = next((e for e in entries if e.entry == first_name), None)
    names = [str(s.get("name")) for s in sources]
    if header.get("feed"):
        names = names or [str(header["feed"])]
    shas: list[str | None] = [s.get("sha256") for s in sources]
    data_id = None
    if shas and all(shas):
        data_id = hashlib.sha256("\n".join(str(s) for s in shas).encode()).hexdigest()
    return RunRecord(
        path=str(path),
        when=when,
        kind=str(doc.get("kind", "backtest")),
        season=str(replay.get("season") or header.get("season") or ""),
        rules_sha256=str(replay.get("rules_sha256") or header.get("rules_sha256") or ""),
        start=header.get("start"),
        end=header.get("end"),
        final=bool(replay.get("final")),
        sources=names,
        source_sha256=shas,
        data_id=data_id,
        strategy=None if first is None else first.strategy,
        entry=first_name,
        params=None if first is None else first.params,
        score=None if first is None else first.score,
        ret=None if first is None else first.ret,
        mdd=None if first is None else first.mdd,
        equity=None if first is None else first.equity,
        control=verdict.get("control"),
        entries=entries,
        **_verdict_facts(verdict),
    )


def _record_of(doc: dict[str, Any]) -> RunRecord:
    entries = [EntryRow(**e) for e in doc.pop("entries", [])]
    return RunRecord(**doc, entries=entries)


# ---- finding run directories --------------------------------------------------------------


def find_runs(roots: Iterable[Path], depth: int = MAX_DEPTH) -> Iterator[Path]:
    """Run directories at or under ``roots`` (not below a run directory, at most ``depth``
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
            if is_run_dir(d):
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
        try:
            st = (path / "report.json").stat()
        except OSError:
            return None
        return f"{st.st_mtime_ns}:{st.st_size}"

    def refresh(self, roots: Sequence[Path] = ()) -> list[RunRecord]:
        """Index every run under the default root and ``roots``, re-read what changed, drop
        what is gone; the records under ``roots`` (none given: all), newest first."""
        known = dict(self.db.execute("SELECT path, stamp FROM runs").fetchall())
        found = list(find_runs([default_root(), *roots]))
        seen = {str(d) for d in found}
        found += [Path(p) for p in known if p not in seen]  # indexed where it was written
        for d in found:
            stamp = self._stamp(d)
            if stamp is None or known.get(str(d)) == stamp:
                continue
            try:
                rec = read_run(d)
            except RunsError:
                continue
            self._put(rec, stamp)
        for path in known:
            p = Path(path)
            if not is_run_dir(p):
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
            self._put(read_run(path), stamp)
            if commit:
                self.db.commit()

    def records(self) -> list[RunRecord]:
        rows = self.db.execute("SELECT doc FROM runs ORDER BY when_ms DESC, path").fetchall()
        out = []
        for (doc,) in rows:
            with contextlib.suppress(ValueError, TypeError):  # a row no version wrote: skipped
                out.append(_record_of(json.loads(doc)))
        return out

    def forget(self, paths: Iterable[str]) -> None:
        for p in paths:
            self.db.execute("DELETE FROM runs WHERE path = ?", (p,))
        self.db.commit()


def remember(path: Path) -> None:
    """Index a run just written, so ``arena runs list`` shows it wherever ``--out`` put it.
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
    """The strategy parameters whose values are not the same in every run."""
    names: list[str] = []
    for r in records:
        for k in r.params or {}:
            if k not in names:
                names.append(k)
    return [k for k in names if len({json.dumps((r.params or {}).get(k)) for r in records}) > 1]


def removable(path: Path) -> str | None:
    """Why ``path`` must not be removed as a run (None: it may): not a run directory, or it
    holds something a run does not write (a subdirectory, another kind of file)."""
    if not path.is_dir():
        return "not a directory"
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
