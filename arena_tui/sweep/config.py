"""What a sweep is: its settings, its days, the strategy and the space it walks.

A :class:`Config` decides a sweep's results and nothing else does: ``arena sweep`` makes
one from the command line and the sweep file (:func:`new_config`), saves it in the sweep's
store, and ``--resume`` and ``show`` read it back (``sweep.directory``). The days are found
(files, or directories of logs) first, then hashed and put in calendar order by their first
input (:func:`with_days`, :func:`hash_days`: the sweep's directory holds its identity by
then, so a sweep killed while hashing resumes), then split by time (:func:`split_days`).
Every bad setting is one :class:`~arena_tui.sweep.SweepError` line before anything is
written.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from arena_tui.report.verdict import CONTROL, parse_epoch
from arena_tui.run.loader import entry_name, load_strategy
from arena_tui.run.params import Param, ParamValue, params_doc, strategy_params, variant_name
from arena_tui.run.twins import TWINS
from arena_tui.sweep import SweepError
from arena_tui.sweep.jobs import DayFile, Variant, day_file
from arena_tui.sweep.luck import HOLDOUT as HOLDOUT_DEFAULT
from arena_tui.sweep.luck import parse_fraction, split_holdout, walk_forward
from arena_tui.sweep.space import SEARCHES, Dim, load_sweep_file, make_search, parse_space

CONFIG_VERSION = 1
DEFAULT_BATCH = {"grid": 64, "random": 64, "tpe": 8}  # variants per engine pass


@dataclass(frozen=True)
class Config:
    """Everything that decides a sweep's results; saved in the store, read back by
    ``--resume`` and ``show`` (``to_doc`` / ``from_doc``)."""

    strategy: str  # absolute path
    days: list[DayFile]  # by first input time
    param_items: list[str]  # the command line's NAME=SPEC, as given
    file_params: dict[str, Any]  # the sweep file's [params] table ({} without one)
    search: str = "grid"
    trials: int | None = None
    seed: int = 0
    holdout: str | None = "30%"  # as given: 30% or 0.3 (luck.parse_fraction)
    folds: int | None = None
    batch: int | None = None
    epoch: str = "1h"
    latency_ms: int = 0
    strategy_sha256: str = ""  # the strategy file's bytes when the sweep started
    min_fills: int = 1  # training fills a variant needs to be chosen
    twins: int = TWINS  # random twins of the chosen variant, each held-out day

    @property
    def batch_size(self) -> int:
        return self.batch or DEFAULT_BATCH[self.search]

    def to_doc(self) -> dict[str, Any]:
        return {
            "version": CONFIG_VERSION,
            "strategy": self.strategy,
            "days": [
                {
                    "path": d.path,
                    "size": d.size,
                    "sha256": d.sha256,
                    "first_t": d.first_t,
                    "last_t": d.last_t,
                }
                for d in self.days
            ],
            "param_items": self.param_items,
            "file_params": self.file_params,
            "search": self.search,
            "trials": self.trials,
            "seed": self.seed,
            "holdout": self.holdout,
            "folds": self.folds,
            "batch": self.batch,
            "epoch": self.epoch,
            "latency_ms": self.latency_ms,
            "strategy_sha256": self.strategy_sha256,
            "min_fills": self.min_fills,
            "twins": self.twins,
        }

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Config:
        if doc.get("version") != CONFIG_VERSION:
            raise SweepError(f"a sweep of another arena version ({doc.get('version')!r})")
        keys = set(cls.__dataclass_fields__) - {"days"}
        days = [DayFile(**d) for d in doc["days"]]
        return cls(days=days, **{k: doc[k] for k in keys if k in doc})

    def check_strategy(self) -> None:
        """Refuse to go on with a strategy file that changed since the sweep started: its
        stored results and new ones would mix two strategies under one name."""
        now = file_sha256(self.strategy)
        if self.strategy_sha256 and now != self.strategy_sha256:
            raise SweepError(
                f"{self.strategy} changed since the sweep started (SHA-256 {now[:12]}..., was "
                f"{self.strategy_sha256[:12]}...): start a new sweep, or restore the file"
            )


def file_sha256(path: str | Path) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise SweepError(f"{path}: cannot read the strategy file: {exc.strerror or exc}") from None


def find_days(args: Sequence[Path]) -> list[Path]:
    """DAYS as given: files, and every ``*.jsonl*`` file in a directory (sorted later by
    first input time, not by name)."""
    found: list[Path] = []
    for arg in args:
        if arg.is_dir():
            logs = sorted(p for p in arg.iterdir() if ".jsonl" in p.name and p.is_file())
            if not logs:
                raise SweepError(f"{arg}: no logs (*.jsonl, *.jsonl.gz, *.jsonl.lz4) in it")
            found += logs
        elif arg.is_file():
            found.append(arg)
        else:
            raise SweepError(f"{arg}: no such file or directory")
    if not found:
        raise SweepError("no days: give recorded logs or directories of them")
    return found


def hash_days(paths: Sequence[Path]) -> list[DayFile]:
    """Each day's size, SHA-256 and span, by first input time; the same day twice, or a
    day with no input, is one error line."""
    days: list[DayFile] = []
    seen: dict[str, str] = {}
    for p in paths:
        day = day_file(p.resolve())
        if day.first_t is None:
            raise SweepError(f"{p}: no market input in it")
        if day.sha256 in seen:
            raise SweepError(f"{p}: the same day as {seen[day.sha256]} (same SHA-256)")
        seen[day.sha256] = str(p)
        days.append(day)
    return sorted(days, key=lambda d: (d.first_t or 0, d.path))


T = TypeVar("T")


def split_days(cfg: Config) -> list[tuple[list[DayFile], list[DayFile]]]:
    """(training days, held-out days) per fold: one fold with ``--holdout``."""
    return _split(cfg, cfg.days)


def _split(cfg: Config, days: Sequence[T]) -> list[tuple[list[T], list[T]]]:
    if cfg.folds is not None:
        return walk_forward(days, cfg.folds)
    train, held = split_holdout(days, cfg.holdout or HOLDOUT_DEFAULT)
    return [(train, held)]


@dataclass
class Strategy:
    """The strategy swept: its base entry name, its declared parameters, the space."""

    path: str
    base: str
    params: dict[str, Param]
    space: dict[str, Dim]
    cls: type

    def variant(self, values: Mapping[str, ParamValue]) -> Variant:
        name = variant_name(self.base, values, self.params)
        return Variant(name=name, params=dict(params_doc(self.cls, values)))


def load(cfg: Config) -> Strategy:
    path = Path(cfg.strategy)
    cls = type(load_strategy(path))
    params = strategy_params(cls)
    space = parse_space(cls, cfg.param_items, cfg.file_params or None, str(path))
    if not space:
        names = ", ".join(params) or "none"
        raise SweepError(
            f"{path}: nothing to sweep: give --param NAME=SPEC (its parameters: {names})"
        )
    base = entry_name(path)
    if base == CONTROL:
        raise SweepError(f"{path}: the strategy is the control ({CONTROL}); sweep another one")
    return Strategy(str(path), base, params, space, cls)


def new_config(
    strategy: str,
    days: list[Path],
    items: list[str],
    file: Path | None,
    search: str | None,
    trials: int | None,
    seed: int | None,
    holdout: str | None,
    folds: int | None,
    batch: int | None,
    epoch: str | None,
    latency_ms: int,
    min_fills: int | None = None,
    twins: int | None = None,
) -> tuple[Config, list[Path]]:
    """The sweep's settings (the command line over the sweep file over the defaults) and
    its days' files, found but not yet read: ``with_days`` hashes them."""
    path = Path(strategy)
    if not path.is_file():
        raise SweepError(f"{path}: no such strategy file")
    doc = load_sweep_file(file) if file is not None else {}

    def pick(given: Any, key: str, default: Any) -> Any:
        return given if given is not None else doc.get(key, default)

    kind = str(pick(search, "search", "grid"))
    if kind not in SEARCHES:
        raise SweepError(f"--search {kind!r}: expected grid, random or tpe")
    held = pick(holdout, "holdout", None)
    n_folds = pick(folds, "folds", None)
    if held is not None and n_folds is not None:
        raise SweepError("--holdout and --folds are two ways to hold days out: give one")
    if held is not None:
        parse_fraction(str(held))  # a bad share fails now
    blocks = str(pick(epoch, "epoch", "1h"))
    parse_epoch(blocks)
    cfg = Config(
        strategy=str(path.resolve()),
        strategy_sha256=file_sha256(path),
        days=[],
        param_items=list(items),
        file_params=dict(doc.get("params") or {}),
        search=kind,
        trials=pick(trials, "trials", None),
        seed=int(pick(seed, "seed", 0)),
        holdout=None if held is None else str(held),
        folds=n_folds,
        batch=batch,
        epoch=blocks,
        latency_ms=latency_ms,
        min_fills=int(pick(min_fills, "min_fills", 1)),
        twins=int(pick(twins, "twins", TWINS)),
    )
    if doc.get("vs"):
        raise SweepError(
            f"{file}: vs: arena sweep judges every variant against the control "
            "(control_random, in every pass); other entries are not run"
        )
    strat = load(cfg)  # the strategy and the space (unknown parameter, bad spec): one line now
    make_search(kind, strat.space, trials=cfg.trials, seed=cfg.seed)  # type: ignore[arg-type]
    if not days:
        raise SweepError("no days: give recorded logs or directories of them after STRATEGY")
    paths = find_days(days)
    _split(cfg, paths)  # too few days for the split: one line before anything is written
    return cfg, paths


def with_days(cfg: Config, paths: Sequence[Path]) -> Config:
    """``cfg`` with its days read: each one's size, SHA-256 and span, in calendar order
    (a day that is not one, or the same day twice, is one line)."""
    cfg = dataclasses.replace(cfg, days=hash_days(paths))
    split_days(cfg)
    return cfg
