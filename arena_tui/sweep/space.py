"""A sweep's parameter space and the searches that walk it: grid, random and TPE.

A space maps each swept parameter of the strategy to a :class:`Dim`: a list of values
(``--param lookback_s=30,60,120``), a range (``--param edge_bps=5..50:5``: every step from
the low end up to the high end, both ends included when on a step) or one fixed value
(``--param window=7``), from the command line or a TOML sweep file's ``[params]`` table
(the command line wins). Values are typed by the strategy's declared parameters
(``run.params``): ints stay ints, an int given for a float parameter becomes a float, and
a value (a range's ends) out of the parameter's declared range is refused. A
float range without a step (``0.5..2``) is continuous: the random and TPE searches draw
from it, a grid refuses it.

A search hands out trials (a value for every dimension) with ``ask`` and hears back each
trial's training score with ``tell``. All three ask the same trials for the same seed and
the same ask/tell sequence, so a resumed sweep that asks batch by batch again, telling the
scores it already stored, walks the same trials and recomputes none. A ``tell`` of a trial
never asked (a store replayed in trial order) counts it as done and it is never asked;
grid and random then go on exactly as the uninterrupted sweep, TPE too when the replay
ends at a batch's end (its proposals depend on the scores it had when it asked).

- ``grid``: every combination, in a fixed order (the parameters in declaration order, the
  last one varying fastest; each one's values in the order given). ``trials`` must not be
  smaller than the grid (a partial grid would silently skip part of the space: use
  ``random`` to sample it); a grid over ``GRID_LIMIT`` combinations needs ``--trials``.
- ``random``: ``trials`` distinct combinations drawn with ``random.Random(seed)`` (the
  whole space, shuffled, when it is smaller); raising ``trials`` keeps the first draws.
- ``tpe``: Optuna's TPE sampler, ask-and-tell in the driver process. Each proposal uses a
  sampler seeded from (seed, trials told, trials pending, attempt), so the trials it asks
  depend only on the seed and the ``tell`` sequence; a proposal it already has is dropped
  and drawn again (after ``ATTEMPTS`` of those, a seeded random unseen one).

``random`` and ``tpe`` run ``DEFAULT_TRIALS`` trials when ``trials`` is not given (at most
the size of the space).

Why one module: the dimensions, their parsing and the three searches are one vocabulary
(a search walks the indices a ``Dim`` defines); split, each half would import the other's
private helpers.
"""

from __future__ import annotations

import contextlib
import difflib
import itertools
import math
import random
import re
import tomllib
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from arena_tui.report.verdict import parse_epoch
from arena_tui.run.params import Param, ParamValue, check_values, parse_value, strategy_params
from arena_tui.run.strategy import Strategy
from arena_tui.sweep import SweepError
from arena_tui.sweep.luck import parse_fraction
from arena_tui.util.errors import ArenaError

if TYPE_CHECKING:
    import optuna

SEARCHES = ("grid", "random", "tpe")
GRID_LIMIT = 10_000  # a larger grid needs --trials saying so
DEFAULT_TRIALS = 50  # random and tpe, when --trials is not given
ATTEMPTS = 100  # tpe proposals of already-seen trials before a random unseen one
FILE_KEYS = (
    "params", "search", "trials", "seed", "holdout", "folds", "epoch", "vs", "min_fills", "twins",
)  # fmt: skip
_RANGE = re.compile(r"\s*(.+?)\s*\.\.\s*(.+?)\s*(?::\s*(.+?)\s*)?")

Trial = dict[str, ParamValue]
Key = tuple[ParamValue, ...]


class SpaceError(SweepError):
    """A parameter space or sweep file a sweep cannot take (one line)."""


@dataclass(frozen=True)
class Dim:
    """One swept parameter: a list of values, or a range ``low..high:step``.

    A range's values are ``low + i * step`` up to ``high`` (ints stay ints; floats are
    computed in decimal from the numbers as written, so ``0.1..0.3:0.1`` is 0.1, 0.2,
    0.3); a float range with no step is continuous (``size()`` is None).
    """

    name: str
    values: tuple[ParamValue, ...] | None
    low: int | float | None = None
    high: int | float | None = None
    step: int | float | None = None

    def size(self) -> int | None:
        """How many values; None for a continuous range."""
        if self.values is not None:
            return len(self.values)
        assert self.low is not None and self.high is not None
        if self.step is None:
            return None
        return int((_dec(self.high) - _dec(self.low)) // _dec(self.step)) + 1

    def value_at(self, i: int) -> ParamValue:
        """The ``i``-th value (0-based) of a list or a stepped range."""
        if self.values is not None:
            return self.values[i]
        assert self.low is not None and self.step is not None
        if isinstance(self.low, int) and isinstance(self.step, int):
            return self.low + i * self.step
        return float(_dec(self.low) + i * _dec(self.step))

    def grid(self) -> tuple[ParamValue, ...]:
        """Every value, in order; a continuous range has none to list (SpaceError)."""
        size = self.size()
        if size is None:
            raise SpaceError(
                f"--param {self.name}={self.spec()}: a continuous range has no grid; give a "
                f"step ({self.spec()}:STEP) or use --search random or tpe"
            )
        return tuple(self.value_at(i) for i in range(size))

    def index_of(self, value: object) -> int | None:
        """The position of ``value`` among the values; None when it is not one of them."""
        size = self.size()
        if self.values is not None:
            return next(
                (i for i, v in enumerate(self.values) if type(v) is type(value) and v == value),
                None,
            )
        if size is None or isinstance(value, bool) or not isinstance(value, int | float):
            return None
        assert self.low is not None and self.step is not None
        i = round((value - self.low) / self.step)
        return i if 0 <= i < size and self.value_at(i) == value else None

    def spec(self) -> str:
        """The command-line form: ``30,60,120``, ``5..50:5`` or ``0.5..2``."""
        if self.values is not None:
            return ",".join(_text(v) for v in self.values)
        step = "" if self.step is None else f":{_text(self.step)}"
        return f"{_text(self.low)}..{_text(self.high)}{step}"

    def doc(self) -> list[ParamValue] | str:
        """The sweep-file form (a list, or a range's text): ``parse_space`` reads it back."""
        return list(self.values) if self.values is not None else self.spec()


def _dec(x: int | float) -> Decimal:
    return Decimal(x) if isinstance(x, int) else Decimal(repr(x))


def _text(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def parse_dim(param: Param, spec: str) -> Dim:
    """``"30,60,120"`` | ``"5..50:5"`` | ``"7"`` -> a Dim typed by ``param`` (SpaceError)."""
    return _parse_dim(param, spec)


def _parse_dim(param: Param, spec: str) -> Dim:
    where = f"--param {param.name}={spec}"
    m = _RANGE.fullmatch(spec) if param.type in (int, float) else None
    try:
        if m is None:
            texts = spec.split(",")
            if any(not t.strip() for t in texts) and param.type is not str:
                raise SpaceError(f"{where}: an empty value in the list")
            return _listed(param.name, [parse_value(param, t) for t in texts], where)
        low, high = parse_value(param, m.group(1)), parse_value(param, m.group(2))
        # a step is a distance, not a value: the parameter's range is not its own
        step = None if m.group(3) is None else parse_value(param, m.group(3), in_range=False)
    except SpaceError:
        raise
    except ArenaError as exc:
        raise SpaceError(f"{where}: {exc}") from None
    if step is None and param.type is int:
        step = 1
    assert isinstance(low, int | float) and isinstance(high, int | float)
    if low > high:
        raise SpaceError(f"{where}: the range's low end {low} is above its high end {high}")
    if step is not None and not step > 0:  # type: ignore[operator]
        raise SpaceError(f"{where}: the step must be above 0, got {step}")
    if low == high:
        return Dim(param.name, (low,))
    assert step is None or isinstance(step, int | float)
    return Dim(param.name, None, low, high, step)


def _listed(name: str, values: Sequence[ParamValue], where: str) -> Dim:
    if not values:
        raise SpaceError(f"{where}: no values")
    seen: list[ParamValue] = []
    for v in values:
        if any(type(s) is type(v) and s == v for s in seen):
            raise SpaceError(f"{where}: the value {_text(v)} is given twice")
        seen.append(v)
    return Dim(name, tuple(values))


def parse_space(
    cls: type[Strategy],
    items: Sequence[str],
    toml: Mapping[str, object] | None,
    where: str,
) -> dict[str, Dim]:
    """The space: command-line ``name=spec`` items over the sweep file's ``[params]``.

    ``toml``: the ``[params]`` table, or the whole ``load_sweep_file`` document (then its
    ``params`` table is used). A table value is a list of values, a string (a range or list
    spec such as ``"5..50:5"``; for a str parameter: the one value) or one value. The
    result is in the strategy's declaration order; unknown or repeated names and bad values
    are one ``SpaceError`` line starting with ``where`` (the strategy file).
    """
    params = strategy_params(cls)
    inner = toml.get("params") if toml is not None else None
    table: Mapping[str, object] = inner if isinstance(inner, Mapping) else toml or {}
    given: dict[str, Dim] = {}
    for name, value in table.items():
        given[name] = _from_toml(cls, params, str(name), value, where)
    cli: set[str] = set()
    for item in items:
        name, eq, spec = item.partition("=")
        name = name.strip()
        if not eq or not name:
            raise SpaceError(
                f"{where}: --param takes NAME=VALUES (e.g. lookback_s=30,60,120 or "
                f"edge_bps=5..50:5), got {item!r}"
            )
        if name in cli:
            raise SpaceError(f"{where}: parameter {name} is given twice (--param {name}=...)")
        cli.add(name)
        param = _param(params, name, where)  # its error names the file already
        try:
            given[name] = _parse_dim(param, spec)
        except SpaceError as exc:
            raise SpaceError(f"{where}: {exc}") from None
    return {name: given[name] for name in params if name in given}


def _param(params: Mapping[str, Param], name: str, where: str) -> Param:
    if name in params:
        return params[name]
    if not params:
        raise SpaceError(
            f"{where}: no parameter {name!r}: the strategy declares none to sweep (declare "
            "one as a typed class attribute with a default, e.g. `lookback_s: int = 60`)"
        )
    close = difflib.get_close_matches(name, list(params), n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise SpaceError(f"{where}: no parameter {name!r} ({hint}its parameters: {', '.join(params)})")


def _from_toml(
    cls: type[Strategy], params: Mapping[str, Param], name: str, value: object, where: str
) -> Dim:
    param = _param(params, name, where)
    shown = f"[params] {name}"
    if isinstance(value, str) and param.type is not str:
        try:
            return _parse_dim(param, value)
        except SpaceError as exc:
            raise SpaceError(f"{where}: {shown}: {exc}") from None
    values = value if isinstance(value, list) else [value]
    try:
        typed = [check_values(cls, {name: v}, where)[name] for v in values]
    except ArenaError as exc:
        raise SpaceError(f"{where}: {shown}: {str(exc).removeprefix(f'{where}: ')}") from None
    return _listed(name, typed, f"{where}: {shown}")


def space_doc(space: Mapping[str, Dim]) -> dict[str, list[ParamValue] | str]:
    """The space as a sweep file's ``[params]`` table (for a sweep's stored config)."""
    return {name: dim.doc() for name, dim in space.items()}


def load_sweep_file(path: Path) -> dict[str, Any]:
    """A TOML sweep file: ``[params]`` and the optional keys ``search``, ``trials``,
    ``seed``, ``holdout`` (``"30%"`` or 0.3), ``folds``, ``epoch``, ``vs`` (a string or a
    list of strings: joined with commas). Checked here: unknown keys and wrong types are
    one ``SpaceError`` line naming the file; the ``[params]`` values are checked against
    the strategy by ``parse_space``."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpaceError(f"{path}: cannot read the sweep file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SpaceError(f"{path}: not a TOML sweep file: {exc}") from None
    for key in doc:
        if key not in FILE_KEYS:
            close = difflib.get_close_matches(key, FILE_KEYS, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise SpaceError(f"{path}: unknown key {key!r} ({hint}known: {', '.join(FILE_KEYS)})")

    def bad(key: str, want: str) -> SpaceError:
        return SpaceError(f"{path}: {key} = {doc[key]!r}: expected {want}")

    if not isinstance(doc.setdefault("params", {}), dict):
        raise bad("params", "a [params] table")
    if "search" in doc and doc["search"] not in SEARCHES:
        raise bad("search", " or ".join(SEARCHES))
    for key, least in (("trials", 1), ("folds", 1), ("seed", None), ("min_fills", 1), ("twins", 0)):
        v = doc.get(key)
        if key in doc and (type(v) is not int or (least is not None and v < least)):
            raise bad(key, "a whole number" + ("" if least is None else f" >= {least}"))
    if "holdout" in doc and "folds" in doc:
        raise SpaceError(f"{path}: give holdout or folds, not both")
    try:
        if "holdout" in doc:
            h = doc["holdout"]
            if isinstance(h, bool) or not isinstance(h, str | int | float):
                raise bad("holdout", 'a share of the days such as "30%" or 0.3')
            parse_fraction(str(h))
        if "epoch" in doc:
            if not isinstance(doc["epoch"], str):
                raise bad("epoch", 'a block length such as "1h"')
            parse_epoch(doc["epoch"])
    except SpaceError:
        raise
    except ArenaError as exc:
        raise SpaceError(f"{path}: {exc}") from None
    vs = doc.get("vs")
    if isinstance(vs, list) and vs and all(isinstance(v, str) for v in vs):
        doc["vs"] = ",".join(vs)
    elif "vs" in doc and not isinstance(vs, str):
        raise bad("vs", "a string or a list of strings")
    return doc


class Search(Protocol):
    """Hands out trials and hears their training scores (see the module docstring)."""

    def ask(self, n: int) -> list[dict[str, ParamValue]]:
        """Up to ``n`` new trials ([] when done)."""
        ...

    def tell(self, params: dict[str, ParamValue], value: int) -> None:
        """A trial's training score (e8, higher is better); the first value told wins."""
        ...

    @property
    def total(self) -> int:
        """How many trials the search runs in all (for progress lines)."""
        ...


def make_search(
    kind: Literal["grid", "random", "tpe"],
    space: dict[str, Dim],
    *,
    trials: int | None,
    seed: int,
) -> Search:
    """The search ``kind`` over ``space``; ``trials``: how many at most (see the module)."""
    if trials is not None and trials < 1:
        raise SpaceError(f"--trials {trials}: expected at least 1")
    size = _size(space)
    if kind == "grid":
        if size is None:
            for dim in space.values():
                dim.grid()  # names the continuous one
        assert size is not None
        if trials is not None and trials < size:
            raise SpaceError(
                f"the grid has {size:,} combinations, more than --trials {trials}: a partial "
                "grid would skip part of the space; drop --trials, narrow the space, or "
                f"sample it with --search random --trials {trials}"
            )
        if trials is None and size > GRID_LIMIT:
            raise SpaceError(
                f"the grid has {size:,} combinations (over {GRID_LIMIT:,}): narrow the "
                f"space, sample it with --search random, or confirm with --trials {size}"
            )
        return _Walk(space, _grid_order(space), size)
    limit = min(trials or DEFAULT_TRIALS, size or math.inf)
    assert isinstance(limit, int)
    if kind == "random":
        return _Walk(space, _random_order(space, seed), limit)
    if kind == "tpe":
        return _Tpe(space, limit, seed)
    raise SpaceError(f"--search {kind!r}: expected one of {', '.join(SEARCHES)}")


def _size(space: Mapping[str, Dim]) -> int | None:
    sizes = [dim.size() for dim in space.values()]
    return None if None in sizes else math.prod(s for s in sizes if s is not None)


def _key(space: Mapping[str, Dim], params: Mapping[str, ParamValue]) -> Key:
    missing = [name for name in space if name not in params]
    if missing:
        raise SpaceError(f"a trial without {', '.join(missing)} told to a search over them")
    return tuple(params[name] for name in space)


def _grid_order(space: Mapping[str, Dim]) -> Iterator[Trial]:
    grids = [dim.grid() for dim in space.values()]
    for combo in itertools.product(*grids):
        yield dict(zip(space, combo, strict=True))


def _random_order(space: Mapping[str, Dim], seed: int) -> Iterator[Trial]:
    """Distinct uniform draws from a ``random.Random(seed)``, each dimension in turn (an
    index of a listed or stepped one, a uniform float of a continuous one)."""
    rng = random.Random(seed)
    size = _size(space)
    seen: set[Key] = set()
    while size is None or len(seen) < size:
        trial = {name: _draw(dim, rng) for name, dim in space.items()}
        key = tuple(trial.values())
        if key not in seen:
            seen.add(key)
            yield trial


def _draw(dim: Dim, rng: random.Random) -> ParamValue:
    size = dim.size()
    if size is None:
        assert dim.low is not None and dim.high is not None
        return rng.uniform(dim.low, dim.high)
    return dim.value_at(rng.randrange(size))


class _Walk:
    """Grid and random: a fixed order of trials, skipping those told or asked already."""

    def __init__(self, space: dict[str, Dim], order: Iterator[Trial], limit: int) -> None:
        self._space = space
        self._order = order
        self._limit = limit
        self._seen: set[Key] = set()

    @property
    def total(self) -> int:
        return self._limit

    def ask(self, n: int) -> list[Trial]:
        out: list[Trial] = []
        while len(out) < n and len(self._seen) < self._limit:
            trial = next(self._order, None)
            if trial is None:
                break
            key = _key(self._space, trial)
            if key not in self._seen:
                self._seen.add(key)
                out.append(trial)
        return out

    def tell(self, params: dict[str, ParamValue], value: int) -> None:
        self._seen.add(_key(self._space, params))


def _import_optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise SpaceError("--search tpe needs Optuna: pip install -e '.[sweep]'") from None
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    return optuna


class _Tpe:
    """Optuna's TPE sampler, ask-and-tell; swept dimensions as indices (a stepped range or
    an ascending list of numbers: ordered; other lists: categories; a continuous range:
    a float), fixed ones added to every trial."""

    def __init__(self, space: dict[str, Dim], limit: int, seed: int) -> None:
        self._optuna = _import_optuna()
        self._space = space
        self._limit = limit
        self._seed = seed
        self._told: dict[Key, int] = {}
        self._pending: dict[Key, optuna.trial.Trial | None] = {}
        self._dists = {
            name: self._distribution(dim) for name, dim in space.items() if dim.size() != 1
        }
        with self._quiet():
            self._study = self._optuna.create_study(
                direction="maximize", sampler=self._sampler("start")
            )

    @property
    def total(self) -> int:
        return self._limit

    @contextlib.contextmanager
    def _quiet(self) -> Iterator[None]:
        """Optuna's own warnings (experimental features, its defaults) stay out of a sweep's
        output; its log is silenced once at import."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", self._optuna.exceptions.ExperimentalWarning)
            warnings.filterwarnings("ignore", module=r"optuna(\.|$)")
            yield

    def _sampler(self, *salt: object) -> Any:
        derived = random.Random("/".join(map(str, (self._seed, *salt)))).getrandbits(32)
        return self._optuna.samplers.TPESampler(seed=derived)

    def _distribution(self, dim: Dim) -> Any:
        d = self._optuna.distributions
        size = dim.size()
        if size is None:
            return d.FloatDistribution(dim.low, dim.high)
        values = dim.values
        ordered = values is None or (
            all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
            and list(values) == sorted(values)
        )
        if ordered:
            return d.IntDistribution(0, size - 1)
        return d.CategoricalDistribution(list(range(size)))

    def _decode(self, raw: Mapping[str, Any]) -> Trial:
        out: Trial = {}
        for name, dim in self._space.items():
            if name not in self._dists:
                out[name] = dim.value_at(0)
            elif dim.size() is None:
                out[name] = float(raw[name])
            else:
                out[name] = dim.value_at(int(raw[name]))
        return out

    def _encode(self, trial: Mapping[str, ParamValue]) -> dict[str, Any]:
        raw: dict[str, Any] = {}
        for name in self._dists:
            dim, value = self._space[name], trial[name]
            if dim.size() is None:
                ok = isinstance(value, int | float) and not isinstance(value, bool)
                assert dim.low is not None and dim.high is not None
                if not ok or not dim.low <= value <= dim.high:  # type: ignore[operator]
                    raise SpaceError(f"a trial's {name}={value!r} is outside {dim.spec()}")
                raw[name] = float(value)
            else:
                index = dim.index_of(value)
                if index is None:
                    raise SpaceError(f"a trial's {name}={value!r} is not one of {dim.spec()}")
                raw[name] = index
        return raw

    def ask(self, n: int) -> list[Trial]:
        out: list[Trial] = []
        with self._quiet():
            while len(out) < n and len(self._told) + len(self._pending) < self._limit:
                out.append(self._propose())
        return out

    def _propose(self) -> Trial:
        told, pending = len(self._told), len(self._pending)
        for attempt in range(ATTEMPTS):
            self._study.sampler = self._sampler(told, pending, attempt)
            trial = self._study.ask(self._dists)
            params = self._decode(trial.params)
            key = _key(self._space, params)
            if key not in self._told and key not in self._pending:
                self._pending[key] = trial
                return params
            self._study.tell(trial, state=self._optuna.trial.TrialState.FAIL)
        rng = random.Random(f"{self._seed}/{told}/{pending}/random")
        for params in _random_order(self._space, rng.getrandbits(32)):
            key = _key(self._space, params)
            if key not in self._told and key not in self._pending:
                self._pending[key] = None  # told through add_trial
                return params
        raise AssertionError("asked past the end of a finite space")

    def tell(self, params: dict[str, ParamValue], value: int) -> None:
        key = _key(self._space, params)
        if key in self._told:
            return
        raw = self._encode(params)
        with self._quiet():
            trial = self._pending.pop(key, None)
            if trial is not None:
                self._study.tell(trial, float(value))
            else:
                self._study.add_trial(
                    self._optuna.trial.create_trial(
                        params=raw, distributions=self._dists, value=float(value)
                    )
                )
        self._told[key] = value
