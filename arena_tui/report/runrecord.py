"""A run directory, or a sweep directory, as the runs catalog records it.

Why this module exists: ``runs`` finds directories and caches their records in an index;
this reads one directory into its record, from the files the run (or the sweep) wrote, and
never from anything else: no strategy is loaded and no log is replayed.

A run's record: when (report.json's time), its kind, the season and rules, the data
(source names, and a fingerprint of their SHA-256s when the run log names them: a thin run
log does; a full one copies its data in and names only the files), the strategy (the first
entry: its file, name, parameters and their defaults), its S, R, MDD and equity, the
verdict (its three answers' codes and texts and the floor's, and ``verdict_text.summary``
of them; a run written before the three questions has only its one word and its text),
and every entry's row for ``show`` and ``compare``. report.json records every parameter
(``params``) and, since it was added, their defaults (``defaults``): ``changed_params``
says which a run changed (None for an older run, which cannot tell).

A sweep directory's record (kind ``sweep``) is read by ``sweeprecord`` into the same
fields.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.report.verdict_text import summary
from arena_tui.run.rundir import RUN_LOG
from arena_tui.util.errors import ArenaError
from engine.units import NS_PER_MS

SWEEP_STORE = "sweep.sqlite"  # (arena_tui.sweep.store.STORE_FILE: sweep imports report)
ANSWERS = ("ranked", "money", "skill", "floor")  # the verdict's questions, then the floor


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
    defaults: dict[str, Any] | None = None  # each parameter's default; None: not recorded
    # a sweep's: variants, search, days, holdout_days, folds, chosen, finished (else None)
    sweep: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return Path(self.path).name

    def doc(self) -> dict[str, Any]:
        return asdict(self)


def is_run_dir(path: Path) -> bool:
    """A directory holding a run's report (``report.json``) and its log or ranking."""
    return (path / "report.json").is_file() and (
        (path / RUN_LOG).is_file() or (path / "ranking.json").is_file()
    )


def is_sweep_dir(path: Path) -> bool:
    """A directory holding a sweep's store (``arena sweep``)."""
    return (path / SWEEP_STORE).is_file()


def _same(a: object, b: object) -> bool:
    """The same value as JSON writes it (60000 is not 60000.0, true is not 1)."""
    return json.dumps(a) == json.dumps(b)


def changed_params(r: RunRecord) -> dict[str, Any] | None:
    """The parameters a run gave a value other than its default (a sweep: the chosen
    variant's swept values); None when its defaults were not recorded (an older run)."""
    if r.params is None:
        return {}
    if r.kind == "sweep":
        return dict(r.params)
    if r.defaults is None:
        return None
    missing = object()
    return {
        k: v
        for k, v in r.params.items()
        if (d := r.defaults.get(k, missing)) is missing or not _same(v, d)
    }


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


def verdict_facts(verdict: dict[str, Any]) -> dict[str, Any]:
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
        when = report.stat().st_mtime_ns // NS_PER_MS
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
    defaults = None if first is None else first_doc(doc, first.entry).get("defaults")
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
        defaults=defaults if isinstance(defaults, dict) else None,
        **verdict_facts(verdict),
    )


def first_doc(doc: dict[str, Any], entry: str) -> dict[str, Any]:
    """report.json's entry named ``entry`` ({} if none)."""
    for e in doc.get("entries", []):
        if isinstance(e, dict) and e.get("entry") == entry:
            return e
    return {}


def record_of(doc: dict[str, Any]) -> RunRecord:
    """A record from its ``doc()`` (as the index stores it)."""
    entries = [EntryRow(**e) for e in doc.pop("entries", [])]
    return RunRecord(**doc, entries=entries)
