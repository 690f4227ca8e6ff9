"""A shell module's compiled twin (setup.py's ``SHELL``) runs only when built from the
source beside it, and never under ``ARENA_ENGINE=pure`` (``arena_tui.util.twins``)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parents[1]
# (the module, its package, its twin's name)
TWINS = [
    ("arena_tui.logs.levelscan", "arena_tui.logs", "_levelscan"),
    ("arena_tui.run.dayscan", "arena_tui.run", "_dayscan"),
    ("arena_tui.logs.daycols", "arena_tui.logs", "_daycols"),
]
# (the module, what its users call, what it says runs when that is its source, where it
# says so)
ENTRIES = [
    ("arena_tui.logs.levelscan", "levels_e8", "expressions", "SCANNER"),
    ("arena_tui.run.dayscan", "Scanner", "python", "SCANNER"),
    ("arena_tui.logs.daycols", "Columns", "python", "BUILDER"),
]


@pytest.mark.parametrize(("name", "package", "twin"), TWINS)
def test_a_twin_runs_only_when_it_is_of_this_very_source(
    name: str, package: str, twin: str
) -> None:
    module = importlib.import_module(name)
    if module._compiled_twin() is None:
        pytest.skip(f"no build of {name} in this install")
    record = importlib.import_module(f"{package}.{twin}_built")
    with mock.patch.object(record, "SOURCE_SHA256", "0" * 64):  # an edit since the build
        assert module._compiled_twin() is None
    with mock.patch.dict(os.environ, {"ARENA_ENGINE": "pure"}):
        assert module._compiled_twin() is None
    assert module._compiled_twin() is not None  # (and again, as built)


@pytest.mark.parametrize(("name", "entry", "says", "where"), ENTRIES)
def test_arena_engine_pure_runs_the_source(name: str, entry: str, says: str, where: str) -> None:
    code = f"import {name} as M; print(M.{where}, M.{entry}.__module__)"
    env = {**os.environ, "ARENA_ENGINE": "pure"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.stdout.split() == [says, name], out.stderr


@pytest.mark.parametrize(("name", "entry", "says", "where"), ENTRIES)
def test_the_build_is_used_when_there_is_one(name: str, entry: str, says: str, where: str) -> None:
    module = importlib.import_module(name)
    built = module._compiled_twin()
    runs = getattr(module, entry).__module__
    if built is None:
        assert (getattr(module, where), runs) == (says, name)
    else:
        assert (getattr(module, where), runs) == ("compiled", built.__name__)
