"""One job of a sweep: K variants of a strategy (and the control) over one day, one pass.

Why this module exists: fills never deplete the book (a Season 0 rule), so entries of one
run cannot move each other's results: K variants over one day are K entries of one engine
pass, the day decoded once, and each variant's score, equity curve and fills (apart from
the order ids the engine hands out) are exactly those of running it alone with
``arena backtest --param``. A :class:`Job` says what to run and :func:`run_job` runs it
wherever it lands (in the driver, a local worker process or a Dask worker): its inputs and
its :class:`DayResult` are plain msgspec structs, picklable and small, and the day is read
from the path the driver saw, refused when its bytes are not the driver's (SHA-256).

The results are what a sweep ranks and judges: each entry's final ranking row (S, R, MDD,
equity), its fills and rejections by reason, its block scores (``report.verdict``'s, for
the bootstrap against the control and the reality check) and two digests, of its fills
without order ids and of its minute equity curve, so two runs of one variant can be
compared without carrying either.
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.logs import span
from arena_tui.logs.daycache import cache_enabled
from arena_tui.logs.thinlog import file_sha256
from arena_tui.report.verdict import CONTROL, block_scores, parse_epoch
from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.loader import baseline_path, load_strategy
from arena_tui.run.params import ParamValue
from arena_tui.run.parts import Entrant
from arena_tui.run.quotes import contract_fill
from arena_tui.run.stats import MarkRow, exit_value
from arena_tui.season.file import resolve_season
from arena_tui.sweep import SweepError
from arena_tui.util.errors import ArenaError
from arena_tui.util.jsonout import dumps
from engine import Season
from engine import events as ev


class Variant(msgspec.Struct, frozen=True):
    """One variant of the strategy: its entry name and its full parameters."""

    name: str  # the entry name (run.params.variant_name)
    params: dict[str, ParamValue]  # every declared parameter, defaults filled in


class DayFile(msgspec.Struct, frozen=True):
    """A day's log as the driver saw it: workers must see the same bytes at ``path``."""

    path: str  # absolute
    size: int
    sha256: str  # of the file's bytes on disk
    first_t: int | None = None
    last_t: int | None = None


class Job(msgspec.Struct, frozen=True):
    """K variants of ``strategy`` (and the control) over one day, in one engine pass.

    What it shares with a run config (the strategy, latency, seed) comes from the sweep's
    one :class:`~arena_tui.run.config.RunConfig` (:meth:`of`) and gives it back
    (:meth:`config`); the season travels as its file's text (a worker may not see the
    file), the day as the driver saw it."""

    strategy: str  # the strategy file's path
    day: DayFile
    variants: list[Variant]
    control: bool = True  # also run strategies/control_random.py, named control_random
    season_toml: str | None = None  # a season file's text; else the day's own season
    latency_ms: int = 0
    seed: int = 0
    epoch: str = "1h"  # block length of the block scores

    @classmethod
    def of(
        cls,
        config: RunConfig,
        day: DayFile,
        variants: list[Variant],
        *,
        control: bool = True,
        epoch: str = "1h",
        season_toml: str | None = None,
    ) -> Job:
        """The job of ``variants`` on ``day`` in a run of ``config`` (its strategy,
        latency and seed)."""
        config.strategy_path()  # (a config naming no strategy: one line)
        return cls(
            strategy=str(config.strategy),
            day=day,
            variants=variants,
            control=control,
            season_toml=season_toml,
            latency_ms=config.latency_ms,
            seed=config.seed,
            epoch=epoch,
        )

    def config(self) -> RunConfig:
        """The run config of this job's pass: its strategy on its day, no run log."""
        return RunConfig(
            strategy=self.strategy,
            logs=(self.day.path,),
            latency_ms=self.latency_ms,
            seed=self.seed,
            epoch=self.epoch,
            twins=0,
        )


class EntryResult(msgspec.Struct, frozen=True):
    """One entry's results over one day (money e6, ratios e8)."""

    name: str
    score: int  # S at the end, as the ranking row
    ret: int
    mdd: int
    equity: int
    fills: int
    rejections: dict[str, int]  # by reason
    blocks: list[tuple[int, int]]  # (block start ms, block score e8), report.verdict's
    fills_sha256: str  # of its fills with the order ids removed (fills_digest)
    marks_sha256: str = ""  # of its minute equity curve (marks_digest)
    # what eligibility at scale and the twins' match read (a store from before: zeros)
    fill_days: int = 0
    active_marks: int = 0
    marks: int = 0
    fees: int = 0  # venue + execution, e6
    freedom: int = 100_000_000  # a twin's: run.twins.timing_freedom of the trips (e8)


class DayResult(msgspec.Struct, frozen=True):
    day: DayFile
    entries: list[EntryResult]  # the variants in order, then the control
    seconds: float  # the job's wall time in the worker (the check, the load, the pass)
    inputs: int  # log inputs read


def day_file(path: Path) -> DayFile:
    """A day's size, SHA-256 and first and last input time (``logs.span``: its head and
    end, not a second pass); the path made absolute. A file that cannot be read: one line."""
    p = Path(path).absolute()
    bounds = span.input_bounds([str(p)])  # LogError (one line) for a missing or bad log
    try:
        size, sha = file_sha256(p)
    except OSError as exc:
        raise SweepError(f"{p}: cannot read: {exc.strerror or exc}") from None
    first, last = bounds if bounds is not None else (None, None)
    return DayFile(str(p), size, sha, first, last)


def check_day(day: DayFile) -> None:
    """Refuse a day whose file here is not the driver's (size and SHA-256 of its bytes)."""
    where = socket.gethostname()
    try:
        size, sha = file_sha256(day.path)
    except OSError as exc:
        raise SweepError(
            f"{day.path}: cannot be read on {where} ({exc.strerror or exc}): workers read "
            "the days at the path the driver gave (a shared filesystem)"
        ) from None
    if (size, sha) != (day.size, day.sha256):
        raise SweepError(
            f"{day.path} on {where} is not the driver's file: sha256 {sha} ({size} bytes) "
            f"here, {day.sha256} ({day.size} bytes) on the driver; refusing to run on "
            "other data"
        )


def fill_doc(f: ev.Fill) -> dict[str, Any]:
    """A fill as the fills file has it (``run.quotes.contract_fill``), without its oid: the
    order ids are the engine's count over every entry of the pass, the rest is the
    entry's own."""
    doc = contract_fill(f)
    del doc["oid"]
    return doc


def fills_digest(docs: Iterable[Mapping[str, Any]]) -> str:
    """SHA-256 of fills (``fill_doc``'s form), one compact sorted-key JSON line each."""
    sha = hashlib.sha256()
    for doc in docs:
        sha.update((dumps(dict(doc), sort_keys=True) + "\n").encode("utf-8"))
    return sha.hexdigest()


def marks_digest(marks: Iterable[MarkRow]) -> str:
    """SHA-256 of a minute equity curve: each mark's t, equity, exit-value equity, peak,
    drawdown, MDD and whether it was active, one line each."""
    sha = hashlib.sha256()
    for m in marks:
        exit_eq = "" if m.exit_equity is None else m.exit_equity
        line = f"{m.t},{m.equity},{exit_eq},{m.peak},{m.drawdown},{m.mdd},{int(m.active)}\n"
        sha.update(line.encode("ascii"))
    return sha.hexdigest()


def variant_entrant(path: Path, name: str, params: Mapping[str, ParamValue]) -> Entrant:
    """The entrant of one variant: the strategy loaded with its parameters set before its
    ``__init__`` (``load_strategy``), as ``arena backtest --param`` loads it. Each
    variant imports the file anew: module-level state is not shared between variants,
    so a pass with K of them is K runs alone."""
    strategy = load_strategy(path, name, params)
    return Entrant(name, strategy, path.resolve(), params=dict(params))


def job_season(job: Job) -> Season:
    if job.season_toml is None:
        return resolve_season([job.day.path], None)
    # through a file, so the day's header is checked against it as arena backtest does
    fd, name = tempfile.mkstemp(suffix=".toml", prefix="arena-sweep-season-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(job.season_toml)
        return resolve_season([job.day.path], name)
    finally:
        os.unlink(name)


def entrants(job: Job) -> list[Entrant]:
    """The job's variants in order, then the control (with its defaults)."""
    names = [v.name for v in job.variants]
    if len(set(names)) != len(names):
        raise SweepError(f"variant names must be unique in a job: {', '.join(names)}")
    if job.control and CONTROL in names:
        raise SweepError(f"a variant is named {CONTROL}, as the control is: name it otherwise")
    path = Path(job.strategy)
    out = [variant_entrant(path, v.name, v.params) for v in job.variants]
    if job.control:
        out.append(variant_entrant(baseline_path(CONTROL), CONTROL, {}))
    return out


def run_job(job: Job) -> DayResult:
    """Check the day, then one pass with every variant and the control (no run log).

    Runs in a worker: a failure is one :class:`SweepError` line (picklable, whatever
    raised it); strategies' output is not echoed; nothing is printed.
    """
    began = time.perf_counter()
    try:
        block_ms = parse_epoch(job.epoch)
        check_day(job.day)
        season = job_season(job)
        config = RunConfig(
            logs=(job.day.path,),
            latency_ms=job.latency_ms,
            seed=job.seed,
            run_log="full",
            cache=cache_enabled(),  # a day is run once a batch: read it from the day cache
        )
        # K variants' prints on a worker's stderr say nothing: not echoed
        bt = Backtest(config, season, entrants(job), exit_value=exit_value, echo=False)
        result = bt.run([job.day.path])
    except SweepError:
        raise
    except ArenaError as exc:  # a LogError does not survive pickling: its line does
        raise SweepError(str(exc)) from None
    rules = season.rules
    rows = {r["entry"]: r for r in result.replay.ranking}
    out = []
    for e in result.entrants:
        row = rows[e.name]
        stats = e.stats
        blocks = block_scores(
            stats.marks, block_ms, rules.starting_equity, rules.lambda_num, rules.lambda_den
        )
        out.append(
            EntryResult(
                name=e.name,
                score=row["score"],
                ret=row["return"],
                mdd=row["mdd"],
                equity=row["equity"],
                fills=len(stats.fills),
                rejections=dict(sorted(stats.rejections.items())),
                blocks=[(start, b.score) for start, b in sorted(blocks.items())],
                fills_sha256=fills_digest(fill_doc(f) for f in stats.fills),
                marks_sha256=marks_digest(stats.marks),
                fill_days=row["fill_days"],
                active_marks=row["active_marks"],
                marks=row["marks"],
                fees=stats.venue_fees + stats.exec_fees,
            )
        )
    return DayResult(job.day, out, time.perf_counter() - began, result.inputs)
