"""Loading a strategy file, and naming the line of a strategy that failed.

A strategy file is plain Python with exactly one :class:`arena_tui.run.strategy.Strategy`
subclass defined in it. Errors a builder makes (a missing file, a syntax error, no class,
an exception in a hook) become one :class:`StrategyError` line naming the file and line.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType

from arena_tui.run.strategy import Strategy
from arena_tui.util.errors import ArenaError

BASELINES = ("momentum", "reversion", "control_random", "maker")
STRATEGIES_DIR = Path(__file__).resolve().parents[2] / "strategies"
_BAD_NAME_CHARS = re.compile(r"[^a-z0-9_-]+")
_LOADED = itertools.count(1)


class StrategyError(ArenaError):
    """A strategy that cannot be loaded or that raised: one line, with file and line."""


def entry_name(path: Path) -> str:
    """An entry name from a file name: ``My Strategy.py`` -> ``my-strategy``."""
    name = _BAD_NAME_CHARS.sub("-", path.stem.lower()).strip("-")[:32]
    return name or "strategy"


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
    except Exception as exc:
        raise StrategyError(failure(path, exc, "while loading")) from None
    return module


def load_strategy(path: str | Path) -> Strategy:
    """The one Strategy subclass defined in ``path``, instantiated."""
    p = Path(path)
    if not p.is_file():
        raise StrategyError(f"{p}: no such strategy file")
    module = _import(p.resolve())
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
    if len(classes) > 1:
        names = ", ".join(c.__name__ for c in classes)
        raise StrategyError(f"{p}: defines several Strategy subclasses ({names}); keep one")
    try:
        return classes[0]()
    except Exception as exc:
        raise StrategyError(failure(p.resolve(), exc, "in __init__")) from None


def failure(path: Path, exc: BaseException, when: str) -> str:
    """``file:line: Type: message (when)``, the line being the deepest one in ``path``."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno
    where = f"{path}:{line}" if line is not None else str(path)
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{where}: {type(exc).__name__}{': ' + text if text else ''} ({when})"
