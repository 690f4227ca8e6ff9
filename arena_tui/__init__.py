"""arena's shell around the pure ``engine``: rooms by capability, imports pointing one way.

Entry points (``cli.py``, ``commands/``, ``tui/``, ``host/``) use the capabilities
(``report/``, ``run/``, ``record/``, ``synth/``), which use the data (``season/``, then
``logs/``), which use ``engine``; ``util/`` (errors, formatting, paths, shared options) is
under all of them. ``strategy.py`` is the public API strategy files import; nothing in
this package imports it. ``.importlinter`` contracts in pyproject.toml keep it so.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    """``arena_tui.load_run``: ``arena_tui.report.frames.load_run``, imported when first
    asked for (the commands never pay for it)."""
    if name == "load_run":
        from arena_tui.report.frames import load_run

        return load_run
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
