"""A shell module's compiled twin (setup.py's ``SHELL``) runs only when built from the
source beside it, and never under ``ARENA_ENGINE=pure`` (``arena_tui.util.twins``)."""

from __future__ import annotations

import importlib
import os
from unittest import mock

import pytest

# (the module, its package, its twin's name)
TWINS = [
    ("arena_tui.logs.levelscan", "arena_tui.logs", "_levelscan"),
    ("arena_tui.run.dayscan", "arena_tui.run", "_dayscan"),
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
