"""Headless Chromium for the tests of pages (report.html, the host's season page).

One place says which browser runs and with which flags, and how a test module gets one:
``yield from launched("report.html")`` in its module-scoped ``browser`` fixture.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium() -> str | None:
    """The browser to drive: $ARENA_CHROMIUM, else Debian's chromium on the PATH."""
    return os.environ.get("ARENA_CHROMIUM") or shutil.which("chromium")


def launched(what: str) -> Iterator[Any]:
    """Headless Chromium (Playwright's Browser) to test ``what`` in, closed after; the test
    skips, saying how to get one, when Playwright or Chromium is not installed (a browser
    that is installed and does not start fails)."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
    )
    exe = chromium()
    if exe is None:
        pytest.skip(f"no Chromium to test {what} in: apt-get install -y chromium")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()
