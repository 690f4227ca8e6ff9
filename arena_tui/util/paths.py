"""Where arena keeps its files: one place, so every command and the docs agree.

``ARENA_DATA_DIR`` (checked first) overrides the per-user data directory that
platformdirs picks (``~/.local/share/arena`` on Linux, ``~/Library/Application
Support/arena`` on macOS). Nothing is created here; the writers create what they need.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "arena"
DATA_DIR_ENV = "ARENA_DATA_DIR"
# arena's own tree (its baselines, samples and seasons), wherever the command is run from
ARENA_TREE = Path(__file__).resolve().parents[2]


def shipped(path: Path) -> Path | None:
    """``path`` (relative, not found from here) as a file of arena's own tree, when it is
    one: so ``recordings/synth-3coins-20261201.jsonl.gz`` or ``seasons/season0.toml`` from
    the docs work in the builder's own directory too. None otherwise."""
    if path.is_absolute() or path.exists():
        return None
    candidate = ARENA_TREE / path
    return candidate if candidate.is_file() else None


def data_dir() -> Path:
    """arena's data directory: ``$ARENA_DATA_DIR``, else the platform's user data dir."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def recordings_dir() -> Path:
    """Where ``arena record`` writes its daily files unless told ``--out``."""
    return data_dir() / "recordings"
