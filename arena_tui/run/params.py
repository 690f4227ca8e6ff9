"""A strategy's parameters: typed class attributes with defaults, overridden per run.

A strategy declares a parameter as an annotated class attribute of a supported type with a
default (``lookback_s: int = 60``); ``arena backtest S.py LOG --param lookback_s=120``
runs it with another value, set on the instance before its ``__init__`` runs (the loader
does that). A number parameter may declare the values it takes in the class's ``ranges``
mapping (``ranges = {"lookback_s": (1, 3600)}``: both ends included, None for no bound);
a value outside is refused wherever it comes from. This module finds the declared
parameters and their ranges (:func:`strategy_params`), reads
values from the command line (:func:`parse_overrides`) or as Python objects from a TOML
file or a search (:func:`check_values`), and names a variant's entry
(:func:`variant_name`). A bad name or value is one :class:`ParamError` line naming the
strategy file and the parameter.

Why one module: declaring, reading, checking and naming parameters are one small
vocabulary that the loader, the run's builder, ``arena backtest`` and a sweep all speak;
split, each piece would import the others' rules (the supported types, the defaults).
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
import io
import json
import math
import re
import threading
import tokenize
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena_tui.run.strategy import Strategy
from arena_tui.util.errors import ArenaError

ParamValue = int | float | bool | str
TYPES: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}
_INT = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*")
_BOOLS = {"true": True, "false": False, "1": True, "0": False}
_ENTRY = re.compile(r"[a-z0-9_-]{1,32}")  # the engine's entry names (loader.ENTRY_NAME)
_PLAIN = re.compile(r"[a-z0-9_]*")  # a str value the readable name can carry as is
_HEAD = 20  # a hashed name keeps this much of the base, then "--" and 10 hex digits
_SHORT = 4  # a readable name's parameter names are cut to this many characters at least

__all__ = [
    "Param",
    "ParamError",
    "ParamValue",
    "check_range",
    "check_values",
    "params_doc",
    "parse_overrides",
    "parse_value",
    "range_text",
    "strategy_params",
    "variant_name",
]


@dataclass(frozen=True)
class Param:
    """A declared parameter: its name, type (int, float, bool or str), default and doc;
    for a number, the range its class declares (``low``..``high``, None: no bound)."""

    name: str
    type: type
    default: ParamValue
    doc: str = ""
    low: int | float | None = None
    high: int | float | None = None

    def holds(self, value: ParamValue) -> bool:
        """Whether ``value`` is in the declared range (always, with none declared)."""
        if isinstance(value, bool | str):
            return True
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


class ParamError(ArenaError):
    """A parameter name or value a run cannot take (one line)."""


def _declared_type(annotation: object) -> type | None:
    """int, float, bool or str when ``annotation`` says exactly that, else None (ClassVar,
    Final, any other type: not a parameter). String annotations (``from __future__ import
    annotations``) are read as written, never evaluated."""
    if isinstance(annotation, str):
        text = annotation.strip().removeprefix("builtins.")
        return TYPES.get(text)
    if annotation in TYPES.values():
        return typing.cast(type, annotation)
    return None


def _typed_default(kind: type, value: object) -> ParamValue | None:
    """The default as the parameter's type, or None when it is not one."""
    if kind is bool:
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if kind is float and isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, kind):
        return typing.cast(ParamValue, value)
    return None


def strategy_params(cls: type[Strategy]) -> dict[str, Param]:
    """Declared parameters: annotated class attributes with a default of a supported type,
    on the class and its bases below Strategy (subclass wins), name not starting with "_",
    ClassVar excluded; in declaration order (base first).

    A default of a supported type that is not the declared one (``edge: int = 1.5``) is a
    ParamError; one of another kind (``x: int = None``) makes the attribute no parameter."""
    out: dict[str, Param] = {}
    for klass in reversed(cls.__mro__):
        if klass is Strategy or not issubclass(klass, Strategy):
            continue
        own = vars(klass)
        docs: dict[str, str] | None = None
        for name, annotation in own.get("__annotations__", {}).items():
            if name.startswith("_") or name not in own:
                continue
            kind = _declared_type(annotation)
            if kind is None:
                continue
            default = _typed_default(kind, own[name])
            if default is None and not isinstance(own[name], int | float | str):
                continue  # a default of another kind (None, an object): not a parameter
            if default is None:
                raise ParamError(
                    f"{_where(klass)}: parameter {name} is declared {kind.__name__} but its "
                    f"default is {own[name]!r}"
                )
            if docs is None:
                docs = _comments(klass)
            out[name] = Param(name, kind, default, docs.get(name, ""))
    return _with_ranges(cls, out)


def _with_ranges(cls: type[Strategy], params: dict[str, Param]) -> dict[str, Param]:
    """``params`` with the ranges the classes declare in ``ranges`` (a subclass's entry
    for a name wins); a range of no number parameter, of a bad form, or that leaves out
    its default is a ParamError naming the class's file."""
    for klass in reversed(cls.__mro__):
        if klass is Strategy or not issubclass(klass, Strategy):
            continue
        declared = vars(klass).get("ranges")
        if declared is None:
            continue
        where = f"{_where(klass)}: ranges"
        if not isinstance(declared, Mapping):
            raise ParamError(f'{where} maps parameter names to (low, high), e.g. {{"x": (1, 10)}}')
        for name, bounds in declared.items():
            param = params.get(name) if isinstance(name, str) else None
            if param is None:
                raise ParamError(
                    f"{where}: {name!r} is not a parameter (its parameters: "
                    f"{', '.join(params) or 'none'})"
                )
            if param.type not in (int, float):
                raise ParamError(f"{where}: {name} is {param.type.__name__}; only numbers have one")
            low, high = _bounds(bounds, f"{where}: {name}")
            ranged = Param(param.name, param.type, param.default, param.doc, low, high)
            if not ranged.holds(param.default):
                raise ParamError(
                    f"{where}: {name}'s default {_shown(param.default)} is out of its range "
                    f"{range_text(ranged)}"
                )
            params[name] = ranged
    return params


def _bounds(bounds: object, where: str) -> tuple[int | float | None, int | float | None]:
    ends = tuple(bounds) if isinstance(bounds, tuple | list) else ()
    number = (int, float, type(None))
    if len(ends) != 2 or not all(isinstance(e, number) and not isinstance(e, bool) for e in ends):
        raise ParamError(f"{where}: want (low, high), numbers or None for no bound: got {bounds!r}")
    low, high = ends
    if low is not None and high is not None and low > high:
        raise ParamError(f"{where}: the low end {low} is above the high end {high}")
    return low, high


def range_text(param: Param) -> str:
    """``1..3600``, ``>= 1`` or ``<= 100``; "" with no range declared."""
    low, high = param.low, param.high
    if low is not None and high is not None:
        return f"{low}..{high}"
    if low is not None:
        return f">= {low}"
    return f"<= {high}" if high is not None else ""


def check_range(param: Param, value: ParamValue, where: str = "") -> ParamValue:
    """``value`` when it is in ``param``'s declared range, else one ParamError line
    naming the range (``where``, the strategy file, starts it when given)."""
    if not param.holds(value):
        raise ParamError(
            f"{where + ': ' if where else ''}parameter {param.name} is out of its range "
            f"{range_text(param)}: got {_shown(value)}"
        )
    return value


def _where(klass: type) -> str:
    try:
        return inspect.getsourcefile(klass) or klass.__qualname__
    except (OSError, TypeError):
        return klass.__qualname__


# inspect.getsource(a class) runs ast.parse over the whole file. On CPython 3.11 before
# 3.11.8, two threads converting an AST at once can fail with "SystemError: AST constructor
# recursion depth mismatch" (python/cpython#106905): the depth counter is shared by the
# interpreter. A sweep on an in-process Dask cluster loads strategies on several worker
# threads, and CI hit it there, so the parse is taken one thread at a time.
_SOURCE_LOCK = threading.Lock()


def _comments(klass: type) -> dict[str, str]:
    """The doc of each class attribute: the comment ending its line (``#:`` or ``#``), else
    the ``#:`` comment lines just above it. Nothing when the source cannot be read."""
    try:
        with _SOURCE_LOCK:
            source = inspect.getsource(klass)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (OSError, TypeError, tokenize.TokenError, SyntaxError, IndentationError):
        return {}
    trailing: dict[int, str] = {}  # line -> the comment ending it
    alone: dict[int, str] = {}  # line -> a `#:` comment alone on it
    starts: dict[int, str] = {}  # line -> the name a statement on it begins with
    for tok in tokens:
        line = tok.start[0]
        if tok.type == tokenize.COMMENT:
            text = tok.string.removeprefix("#:").removeprefix("#").strip()
            if line in starts:
                trailing[line] = text
            elif tok.string.startswith("#:"):
                alone[line] = text
        elif tok.type == tokenize.NAME and line not in starts:
            starts[line] = tok.string
    docs: dict[str, str] = {}
    for line, name in starts.items():
        if line in trailing:
            docs.setdefault(name, trailing[line])
            continue
        above = []
        n = line - 1
        while n in alone:
            above.append(alone[n])
            n -= 1
        if above:
            docs.setdefault(name, " ".join(reversed(above)))
    return docs


def _type_word(kind: type) -> str:
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}[kind]


def parse_value(param: Param, text: str, where: str = "", *, in_range: bool = True) -> ParamValue:
    """'120' -> 120 for int (underscores ok, no floats for int), 'true'/'false'/'1'/'0' for
    bool, float() for float (finite only), str as is; ParamError on a bad value, or on one
    out of the parameter's declared range (unless ``in_range=False``: a sweep's step).

    ``where`` (the strategy file) starts the error's line when given."""
    value: ParamValue | None = None
    if param.type is str:
        return text
    stripped = text.strip()
    if param.type is bool:
        value = _BOOLS.get(stripped.lower())
    elif param.type is int:
        value = int(stripped) if _INT.fullmatch(stripped) else None
    elif param.type is float:
        try:
            number = float(stripped)
        except ValueError:
            number = math.nan
        value = number if math.isfinite(number) else None
    if value is None:
        raise ParamError(
            f"{where + ': ' if where else ''}parameter {param.name} is "
            f"{_type_word(param.type)} (default {_shown(param.default)}): got {text!r}"
        )
    return check_range(param, value, where) if in_range else value


def _shown(value: ParamValue) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value)


def _unknown(params: Mapping[str, Param], name: str, where: str) -> ParamError:
    if not params:
        return ParamError(
            f"{where}: no parameter {name!r}: the strategy declares none (declare one as a "
            "typed class attribute with a default, e.g. `lookback_s: int = 60`; see "
            "docs/strategies.md)"
        )
    close = difflib.get_close_matches(name, list(params), n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return ParamError(f"{where}: no parameter {name!r} ({hint}its parameters: {', '.join(params)})")


def parse_overrides(cls: type[Strategy], items: Sequence[str], where: str) -> dict[str, ParamValue]:
    """['lookback_s=120', ...] -> typed values. Unknown name: ParamError listing the
    declared ones (and 'did you mean'); repeated name: error; `where` is the strategy file
    for messages."""
    params = strategy_params(cls)
    out: dict[str, ParamValue] = {}
    for item in items:
        name, eq, text = item.partition("=")
        name = name.strip()
        if not eq or not name:
            raise ParamError(
                f"{where}: --param takes NAME=VALUE (e.g. lookback_s=120), got {item!r}"
            )
        if name not in params:
            raise _unknown(params, name, where)
        if name in out:
            raise ParamError(f"{where}: parameter {name} is given twice (--param {name}=...)")
        out[name] = parse_value(params[name], text, where)
    return out


def check_values(
    cls: type[Strategy], values: Mapping[str, object], where: str
) -> dict[str, ParamValue]:
    """Typed values given as Python objects (from TOML or a sweep's search): the same checks
    (bool is not an int; an int is accepted for a float parameter and becomes float)."""
    params = strategy_params(cls)
    out: dict[str, ParamValue] = {}
    for name, value in values.items():
        if name not in params:
            raise _unknown(params, name, where)
        param = params[name]
        typed = _typed_default(param.type, value)
        if typed is None:
            raise ParamError(
                f"{where}: parameter {name} is {_type_word(param.type)} "
                f"(default {_shown(param.default)}): got {value!r}"
            )
        out[name] = check_range(param, typed, where)
    return out


def params_doc(cls: type[Strategy], values: Mapping[str, ParamValue]) -> dict[str, ParamValue]:
    """Every declared parameter -> its value in this run (the default where not given)."""
    return {name: values.get(name, p.default) for name, p in strategy_params(cls).items()}


def _as_declared(value: ParamValue, param: Param | None) -> ParamValue:
    """An int given for a float parameter as the float it stands for."""
    if param is not None and param.type is float and type(value) is int:
        return float(value)
    return value


def _readable(value: ParamValue) -> str | None:
    """A value's part of a readable name: no '-' in it, one text for one value of a type."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value).replace("-", "m")
    if isinstance(value, float):
        # repr never holds 'm' or 'p', and always signs an exponent: replacing is one-to-one
        return repr(value + 0.0).replace("-", "m").replace(".", "p").replace("+", "")
    return value if _PLAIN.fullmatch(value) else None


def _short_names(params: Mapping[str, Param]) -> dict[str, str] | None:
    """Each parameter's shortest prefix (lower case) no other parameter starts with, at
    least ``_SHORT`` characters long (or the whole name). None when one name (lower case)
    starts another's: then no prefix can tell them apart."""
    lowered = {name: name.lower() for name in params}
    names = list(lowered.values())
    if any(i != j and b.startswith(a) for i, a in enumerate(names) for j, b in enumerate(names)):
        return None
    out = {}
    for name, low in lowered.items():
        n = min(_SHORT, len(low))
        while any(o != low and o.startswith(low[:n]) for o in names):
            n += 1
        out[name] = low[:n]
    return out


def variant_name(base: str, values: Mapping[str, ParamValue], params: Mapping[str, Param]) -> str:
    """The entry name of a variant: a valid entry name (engine: [a-z0-9_-]{1,32}), the
    same for the same values whatever their order, different for different values.
    With no values that differ from the defaults: `base` unchanged.

    Readable when it fits: ``momentum-wind60000-shar10``: the parameters that differ, in
    declaration order, each as its name's shortest prefix no other parameter shares (4
    characters at least) and its value (ints as written with '-' as 'm', floats with '.'
    as 'p', bools 1/0, strings of a-z, 0-9 and _ as they are). Read with the parameters'
    names, such a name gives the values back, so two sets of values never share one.
    Otherwise (too long, another string, names one of which starts another)
    ``<base's first 20>--<10 hex digits>``, a hash of the differing values."""
    order = list(params)
    typed = {name: _as_declared(v, params.get(name)) for name, v in values.items()}
    changed = sorted(
        (
            (name, value)
            for name, value in typed.items()
            if name not in params
            or type(value) is not type(params[name].default)
            or value != params[name].default
        ),
        key=lambda kv: (order.index(kv[0]) if kv[0] in params else len(order), kv[0]),
    )
    if not changed:
        return base
    short = _short_names(params)
    clash = len(base) > _HEAD and (base[_HEAD : _HEAD + 2] == "--" or base[_HEAD:] == "-")
    parts = [_readable(v) for _, v in changed]
    typed_right = all(n in params and type(v) is params[n].type for n, v in changed)
    if short is not None and typed_right and not clash and None not in parts:
        name = base + "".join(f"-{short[n]}{p}" for (n, _), p in zip(changed, parts, strict=True))
        if _ENTRY.fullmatch(name):
            return name
    canon = json.dumps(
        [
            base,
            [
                [n, type(v).__name__, repr(v + 0.0 if isinstance(v, float) else v)]
                for n, v in changed
            ],
        ],
        separators=(",", ":"),
    )
    digest = hashlib.sha256(canon.encode()).hexdigest()[:10]
    head = re.sub(r"[^a-z0-9_-]", "-", base.lower())[:_HEAD]
    return f"{head}--{digest}"
