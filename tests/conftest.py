"""Settings every test shares.

The day cache (``arena_tui.logs.daycache``) goes into a temporary directory for the whole
session, so no test reads a cache another run left in the user's cache directory, or
leaves one there; commands the tests start inherit it through the environment.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _session_day_cache() -> Iterator[None]:
    before = os.environ.get("ARENA_CACHE_DIR")
    where = tempfile.mkdtemp(prefix="arena-test-cache-")
    os.environ["ARENA_CACHE_DIR"] = where
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ARENA_CACHE_DIR", None)
        else:
            os.environ["ARENA_CACHE_DIR"] = before
        shutil.rmtree(where, ignore_errors=True)
