"""Running the ``arena`` command as a user does: a real subprocess in the repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def arena(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena_tui.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=timeout,
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The command failed with exactly one ``arena: error:`` line and no traceback."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("arena: error: ")
    return lines[0]
