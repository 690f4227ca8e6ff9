"""The compiled twin of a shell module: used only when it was built from the source beside it.

Why this module exists: setup.py compiles a few of the shell's hot modules with Cython
(``arena_tui.logs.levelscan``, ``arena_tui.run.dayscan``, ``arena_tui.logs.daycols``) as a
twin beside the source (``_levelscan``, ``_dayscan``, ``_daycols``), so the source stays
importable (the reference, and what runs without a compiler). A twin built from an older
source (an edit after ``pip install -e .``) must not run: the build records the SHA-256 of
the source and its ``.pxd`` in ``<twin>_built.py``, and the twin is used only when that is
the source's now.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
from pathlib import Path
from types import ModuleType


def compiled_twin(source_file: str, package: str, twin: str) -> ModuleType | None:
    """``package.twin`` (e.g. ``arena_tui.logs._levelscan``), the compiled build of the
    module at ``source_file``, when it was built from that very source and the ``.pxd``
    named for it, and ``ARENA_ENGINE`` is not ``pure``; else None."""
    if os.environ.get("ARENA_ENGINE", "") == "pure":
        return None
    try:
        module = importlib.import_module(f"{package}.{twin}")
        built = importlib.import_module(f"{package}.{twin}_built")
    except ImportError:
        return None
    here = Path(source_file)
    sha = hashlib.sha256(here.read_bytes())
    with contextlib.suppress(FileNotFoundError):
        sha.update(here.with_name(f"{twin}.pxd").read_bytes())
    return module if getattr(built, "SOURCE_SHA256", None) == sha.hexdigest() else None
