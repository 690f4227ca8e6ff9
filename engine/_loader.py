"""Which engine ``import engine`` loads: the compiled extensions or their Python sources.

Why this module exists: setup.py may compile the hot modules (:data:`COMPILED_MODULES`) with
Cython from the very sources beside them; both must behave the same, so the choice is made
in one place, before any of them is imported, and can be forced for a comparison:

- ``ARENA_ENGINE=pure``: the sources, even when extensions exist (the reference);
- ``ARENA_ENGINE=compiled``: the extensions, or an ImportError saying why not (CI);
- unset: the extensions when every one was built from the source beside it (setup.py
  records each source's SHA-256 in ``engine/_built.py``), else the sources, said in
  :data:`ENGINE`. An extension built from an older source never runs.

The sources are run by a finder placed first on ``sys.meta_path`` that loads only those
modules, from their ``.py`` files. This is the engine's one reach outside itself: it reads
an environment variable and its own source files, once, at import; the engine's state
machine does neither.

May not touch: anything but the choice of loader (no engine state, no clock, no float).
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec
from importlib.util import spec_from_file_location
from types import ModuleType

COMPILED_MODULES = ("units", "book", "state", "orders", "fills", "scoring", "core")
HERE = os.path.dirname(os.path.abspath(__file__))
VARIABLE = "ARENA_ENGINE"


class SourceFirst:
    """A meta-path finder: the engine's compiled modules, loaded from their sources."""

    @classmethod
    def find_spec(
        cls, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        package, _, module = name.partition(".")
        if package != "engine" or module not in COMPILED_MODULES:
            return None
        return spec_from_file_location(name, os.path.join(HERE, f"{module}.py"))


def built_sources() -> dict[str, str]:
    """What setup.py compiled: module -> its source's SHA-256 ({} when nothing was)."""
    try:
        from engine._built import SOURCES  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return {}
    return dict(SOURCES)


def has_extension(module: str) -> bool:
    return any(os.path.exists(os.path.join(HERE, module + s)) for s in EXTENSION_SUFFIXES)


def source_sha256(module: str) -> str:
    """The module's source and its ``.pxd`` (its C types), as setup.py hashed them."""
    h = hashlib.sha256()
    for suffix in (".py", ".pxd"):
        try:
            with open(os.path.join(HERE, module + suffix), "rb") as f:
                h.update(f.read())
        except FileNotFoundError:
            if suffix == ".py":
                raise
    return h.hexdigest()


def why_not_compiled() -> str | None:
    """None when every compiled module may run compiled; else why not."""
    built = built_sources()
    if not built:
        return "no compiled extensions (not built: see setup.py)"
    for module in COMPILED_MODULES:
        if module not in built or not has_extension(module):
            return f"engine.{module} was not compiled"
        if built[module] != source_sha256(module):
            return (
                f"engine/{module}.py or .pxd changed since it was compiled (pip install -e . again)"
            )
    return None


def choose() -> tuple[bool, str]:
    """(compiled?, one line saying which engine runs and why)."""
    want = os.environ.get(VARIABLE, "")
    if want not in ("", "pure", "compiled"):
        raise ImportError(f"{VARIABLE}={want!r}: want 'pure' or 'compiled' (or unset)")
    if want == "pure":
        return False, f"pure Python ({VARIABLE}=pure)"
    reason = why_not_compiled()
    if reason is None:
        return True, "compiled (Cython)"
    if want == "compiled":
        raise ImportError(f"{VARIABLE}=compiled but {reason}")
    return False, f"pure Python: {reason}"


def running_compiled() -> bool:
    """True when every compiled module was imported as its extension, False when every one
    as its source; anything else is a loader bug and refused."""
    loaded = [
        isinstance(sys.modules[f"engine.{m}"].__loader__, ExtensionFileLoader)
        for m in COMPILED_MODULES
    ]
    if any(loaded) != all(loaded) or all(loaded) != CHOSEN:
        raise ImportError(f"engine: chose the {ENGINE} engine, but imported another")
    return all(loaded)


CHOSEN, ENGINE = choose()
if not CHOSEN and SourceFirst not in sys.meta_path:
    sys.meta_path.insert(0, SourceFirst)
