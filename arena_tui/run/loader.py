"""Loading a strategy file, and naming the line of a strategy that failed.

A strategy file is plain Python defining :class:`arena_tui.run.strategy.Strategy`
subclasses (directly or through another one, from this file or imported): the one that no
other class of the file subclasses is the strategy. Errors a builder makes (a missing file,
a syntax error, no class, an exception in a hook) become one :class:`StrategyError` line
naming the file and line. An ``on_*`` method that is not a hook (``on_books``) is never
called: loading warns about it on stderr, naming the hook it is closest to. What the file
prints while it loads goes to stderr, as ``[entry] line``.
"""

from __future__ import annotations

import difflib
import importlib.util
import itertools
import re
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

from arena_tui.run.fields import StrategyError
from arena_tui.run.output import load_output
from arena_tui.run.params import ParamValue, check_values, parse_overrides
from arena_tui.run.strategy import Strategy

BASELINES = ("momentum", "reversion", "control_random", "maker")
STRATEGIES_DIR = Path(__file__).resolve().parents[2] / "strategies"
_BAD_NAME_CHARS = re.compile(r"[^a-z0-9_-]+")
ENTRY_NAME = re.compile(r"[a-z0-9_-]{1,32}")  # what the engine registers (engine.core)
HOOK_NAMES = tuple(name for name in vars(Strategy) if name.startswith("on_"))
_LOADED = itertools.count(1)
_EVENT_WORDS = ("fill", "accept", "reject", "cancel", "close", "order", "activ", "fund", "paus")

__all__ = [
    "BASELINES",
    "ENTRY_NAME",
    "HOOK_NAMES",
    "STRATEGIES_DIR",
    "StrategyError",
    "baseline_path",
    "entry_name",
    "failure",
    "hook_warnings",
    "load_strategy",
    "located",
    "parse_entry",
]


def entry_name(path: Path) -> str:
    """An entry name from a file name: ``My Strategy.py`` -> ``my-strategy``."""
    name = _BAD_NAME_CHARS.sub("-", path.stem.lower()).strip("-")[:32]
    return name or "strategy"


def parse_entry(text: str) -> tuple[Path, str]:
    """``FILE`` or ``FILE:NAME`` -> (the file, the entry name: NAME, else from the file).

    A path that is an existing file is taken whole (even with a ``:`` in it).
    """
    path = Path(text)
    file, colon, name = text.rpartition(":")
    if not colon or not file or path.is_file():
        return path, entry_name(path)
    if ENTRY_NAME.fullmatch(name) is None:
        raise StrategyError(
            f"{text}: entry name {name!r} (after the ':') must be 1-32 characters of "
            "a-z, 0-9, _ and -"
        )
    return Path(file), name


def baseline_path(name: str) -> Path:
    return STRATEGIES_DIR / f"{name}.py"


def _import(path: Path) -> ModuleType:
    module_name = f"arena_strategy_{next(_LOADED)}_{entry_name(path).replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise StrategyError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise StrategyError(f"{path}:{exc.lineno}: SyntaxError: {exc.msg}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() in the file too
        raise StrategyError(failure(path, exc, "while loading")) from None
    return module


def load_strategy(
    path: str | Path,
    name: str | None = None,
    params: Mapping[str, ParamValue] | None = None,
    *,
    overrides: Sequence[str] = (),
) -> Strategy:
    """The strategy class of ``path`` (the Strategy subclass no other one there
    subclasses), instantiated; warns on stderr about ``on_*`` methods that are not hooks.
    What it prints while it loads goes to stderr as ``[name] line``.

    ``params``: values of its declared parameters (``arena_tui.run.params``), checked and
    set on the instance before its ``__init__`` runs, so ``__init__`` sees them;
    ``overrides``: more, as ``--param`` gives them (``NAME=VALUE``; they win)."""
    p = Path(path)
    if not p.is_file():
        raise StrategyError(f"{p}: no such strategy file")
    with load_output(name or entry_name(p)):
        module = _import(p.resolve())
        cls = _strategy_class(p, module)
        values = check_values(cls, params, str(p)) if params else {}
        values.update(parse_overrides(cls, overrides, str(p)))
        try:
            if values:
                strategy = cls.__new__(cls)
                for attr, value in values.items():
                    setattr(strategy, attr, value)
                strategy.__init__()  # type: ignore[misc]
            else:
                strategy = cls()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            raise StrategyError(failure(p.resolve(), exc, "in __init__")) from None
    for warning in hook_warnings(cls):
        sys.stderr.write(f"arena: warning: {warning}\n")
    return strategy


def _strategy_class(p: Path, module: ModuleType) -> type[Strategy]:
    classes = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, Strategy)
        and obj is not Strategy
        and obj.__module__ == module.__name__
    ]
    if not classes:
        raise StrategyError(
            f"{p}: defines no Strategy subclass (write `class MyStrategy(Strategy): ...`, "
            "see docs/strategies.md)"
        )
    leaves = [c for c in classes if not any(o is not c and issubclass(o, c) for o in classes)]
    if len(leaves) > 1:
        names = ", ".join(c.__name__ for c in leaves)
        raise StrategyError(f"{p}: defines several Strategy subclasses ({names}); keep one")
    return leaves[0]


def hook_warnings(cls: type[Strategy]) -> list[str]:
    """One line for each ``on_*`` method of ``cls`` (or its bases) that is not a hook."""
    out = []
    seen: set[str] = set()
    for klass in cls.__mro__:
        if klass is Strategy or not issubclass(klass, Strategy):
            continue
        for attr, value in vars(klass).items():
            if not attr.startswith("on_") or attr in HOOK_NAMES or attr in seen:
                continue
            seen.add(attr)
            code = getattr(value, "__code__", None)
            if code is None:  # not a method
                continue
            where = f"{code.co_filename}:{code.co_firstlineno}"
            close = difflib.get_close_matches(attr, HOOK_NAMES, n=1)
            if not close and any(word in attr for word in _EVENT_WORDS):
                close = ["on_event (fills, rejections, cancels... all come to it)"]
            hint = f"did you mean {close[0]}? " if close else ""
            out.append(
                f"{where}: {klass.__name__}.{attr} is not a hook and is never called "
                f"({hint}the hooks: {', '.join(HOOK_NAMES)})"
            )
    return out


def failure(path: Path, exc: BaseException, when: str) -> str:
    """``file:line: Type: message (when)``, the line being the deepest one in ``path``."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{located(path, exc)}: {type(exc).__name__}{': ' + text if text else ''} ({when})"


def located(path: Path, exc: BaseException) -> str:
    """``file:line``, the deepest line of ``path`` that ``exc`` went through (else ``file``)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno
    return f"{path}:{line}" if line is not None else str(path)
