"""Builds the engine's hot modules with Cython, or installs them as pure Python.

``engine/*.py`` is the one source: Cython compiles it in its pure-Python mode, with the
static types in the ``.pxd`` file beside each module. Every module also runs uncompiled (the
reference, ``ARENA_ENGINE=pure``), and the install falls back to it when Cython or a C
compiler is missing, or when ``ARENA_PURE_BUILD=1`` is set. The fallback is said on stderr
(``pip install -v`` shows it) and by ``python -c "import engine; print(engine.ENGINE)"``.

Beside the extensions the build writes ``engine/_built.py``: the SHA-256 of each compiled
module's source, so ``import engine`` can refuse an extension built from another source
(an edit after ``pip install -e .``) and run the source instead.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# The modules compiled, in import order; the rest of engine/ (vocabulary, season, the
# loader) stays Python: it runs once, or is msgspec's.
COMPILED = ("units", "book", "state", "orders", "fills", "scoring", "core")
BUILT = "_built.py"
# The shell's compiled modules, (source, extension): a book's levels scanned from their
# bytes, the warm pass's scan over a cached day's columns, and those columns built as a
# day cache is written. Each is built from its
# source (+ the .pxd named for the extension) as a twin beside it, so the source stays
# importable (the reference, and what runs without a compiler); the source uses the build
# only when ``<twin>_built.py`` records its current SHA-256 (arena_tui/util/twins.py).
# ``checked``: the module checks every index before it reads it (its .pxd says so), so
# Cython's bounds and negative-index checks are off; else they stay on.
SHELL = (
    ("arena_tui/logs/levelscan", "arena_tui.logs._levelscan", True),
    ("arena_tui/run/dayscan", "arena_tui.run._dayscan", False),
    ("arena_tui/logs/daycols", "arena_tui.logs._daycols", False),
)


def say(text: str) -> None:
    print(f"arena setup: {text}", file=sys.stderr)


def source_sha256(name: str, folder: str = "engine", pxd_name: str = "") -> str:
    """The module's source and its ``.pxd`` (its C types), as engine/_loader.py hashes them."""
    h = hashlib.sha256((ROOT / folder / f"{name}.py").read_bytes())
    pxd = ROOT / folder / f"{pxd_name or name}.pxd"
    if pxd.exists():
        h.update(pxd.read_bytes())
    return h.hexdigest()


def built_text(names: tuple[str, ...]) -> str:
    rows = "".join(f'    "{n}": "{source_sha256(n)}",\n' for n in names)
    return (
        '"""Written by setup.py when it compiles the engine: each module\'s source SHA-256."""\n'
        "\n"
        f"SOURCES: dict[str, str] = {{\n{rows}}}\n"
    )


class BuildEngine(build_ext):
    """``build_ext`` that never fails the install: a module that does not compile runs as
    Python (said on stderr), and the hashes of those that did are written beside them."""

    def initialize_options(self) -> None:
        super().initialize_options()
        self.done: list[str] = []

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler at all: the install goes on, pure
            say(f"no compiled engine ({exc}); the engine runs as pure Python")
        self.write_built()

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # a compiler error: that module runs as Python
            say(f"{ext.name} did not compile ({exc}); it runs as pure Python")
            return
        self.done.append(ext.name.rsplit(".", 1)[1])

    def write_built(self) -> None:
        done = tuple(n for n in COMPILED if n in self.done)
        target = Path(self.get_ext_fullpath("engine.core")).parent / BUILT
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(built_text(done), encoding="utf-8")
        if done:
            say(f"compiled engine modules: {', '.join(done)}")
        for source, ext_name, _ in SHELL:
            twin = ext_name.rsplit(".", 1)[1]
            if twin not in self.done:
                continue
            folder, name = source.rsplit("/", 1)
            sha = source_sha256(name, folder, twin)  # (its .pxd is named for the twin)
            text = '"""Written by setup.py: the SHA-256 of the source it compiled."""\n\n'
            Path(self.get_ext_fullpath(ext_name)).with_name(f"{twin}_built.py").write_text(
                text + f'SOURCE_SHA256 = "{sha}"\n', encoding="utf-8"
            )
            say(f"compiled {source}.py")


def pure(why: str) -> list[Extension]:
    """No extensions: the engine installs as Python, and an in-place build's leftovers
    (``pip install -e .`` before) are removed so that the sources run."""
    say(f"{why}: the engine is installed as pure Python")
    for path in [*(ROOT / "engine").glob("*.so"), *(ROOT / "engine").glob("*.pyd")]:
        path.unlink()
    (ROOT / "engine" / BUILT).unlink(missing_ok=True)
    for source, ext_name, _ in SHELL:
        folder, twin = (ROOT / source).parent, ext_name.rsplit(".", 1)[1]
        for path in [*folder.glob(f"{twin}.*.so"), *folder.glob(f"{twin}.*.pyd")]:
            path.unlink()
        (folder / f"{twin}_built.py").unlink(missing_ok=True)
    return []


def extensions() -> list[Extension]:
    if os.environ.get("ARENA_PURE_BUILD", "") not in ("", "0"):
        return pure("ARENA_PURE_BUILD is set")
    try:
        from Cython.Build import cythonize
        from Cython.Compiler.Errors import CompileError
    except ImportError:
        return pure("Cython is not installed")
    modules = [
        Extension(f"engine.{name}", [f"engine/{name}.py"], extra_compile_args=["-O2"])
        for name in COMPILED
    ]
    try:
        built = list(
            cythonize(
                modules,
                build_dir="build/cython",
                language_level=3,
                quiet=True,
                force=True,  # never a C file translated from an older .py or .pxd
                compiler_directives={
                    "binding": True,  # functions keep Python's introspection (signatures)
                    "embedsignature": True,
                    "always_allow_keywords": True,
                    # the .pxd files alone give C types; an annotation ``int`` stays a
                    # Python int (exact however large)
                    "annotation_typing": False,
                },
            )
        )
    except CompileError as exc:
        return pure(f"Cython could not translate {exc}")
    return built + shell_extension()


def shell_extension() -> list[Extension]:
    """``SHELL``'s modules, each translated on its own: one that does not translate alone
    runs as Python."""
    from Cython.Build import cythonize
    from Cython.Compiler.Errors import CompileError

    built: list[Extension] = []
    for source, ext_name, checked in SHELL:
        directives = {"binding": True, "annotation_typing": False}
        if checked:
            directives.update(boundscheck=False, wraparound=False)
        ext = Extension(ext_name, [f"{source}.py"], extra_compile_args=["-O2"])
        try:
            built += cythonize(
                [ext],
                build_dir="build/cython",
                language_level=3,
                quiet=True,
                force=True,
                compiler_directives=directives,
            )
        except CompileError as exc:
            say(f"{source}.py: Cython could not translate {exc}; it runs as Python")
    return built


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildEngine})
