"""The shell reads the engine through its read face only, mechanically.

``engine`` says what is public (its package names, ``engine.inputs``, ``engine.events``,
``engine.season``, ``engine.units``) and what is its inside (``core``, ``state``,
``orders``, ``fills``, ``scoring``, ``book``, ``ledger``). Every module of ``arena_tui`` is
parsed with :mod:`ast` and held to it: no import of the inside (type-only ones included), no
read of the engine's own tables (``.by_coin``, ``.accounts``, ``.assets``,
``.open_orders``), no write of its construction options (``.books_checked``,
``.record_prints``: they are ``Engine(...)`` keywords), no read of a private name the engine
assigns or defines (``._next_due``, a book's ``._sides``, ``._run_due``, ...) and no import
of a private name. Every failure names the file and line.

Attribute names alone cannot say whose attribute it is (a mark row has its own
``open_orders``, a strategy's account view too), so the scan keys on the house's names for the
engine: it is held as ``engine``, ``eng`` or ``_engine`` (``bt.engine``, ``self._engine``),
and a test below keeps it so (a variable or parameter typed ``Engine``, or given an
``Engine(...)`` or an ``x.engine``, is named one of those). A private name is the engine's
wherever it is read on something other than ``self``/``cls``.

The engine's own tests (``tests/test_engine*.py``, ``test_book_levels.py``,
``test_rules_*.py``) may read its inside: they are about it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL_FILES = sorted((ROOT / "arena_tui").rglob("*.py"))
INSIDE = ("core", "state", "orders", "fills", "scoring", "book", "ledger", "snapshot")
INSIDE_MODULES = frozenset(f"engine.{name}" for name in INSIDE)
ENGINE_NAMES = frozenset({"engine", "eng", "_engine"})  # what the shell calls an Engine
TABLES = frozenset({"by_coin", "accounts", "assets", "open_orders"})  # read: use the face
OPTIONS = frozenset({"books_checked", "record_prints"})  # written: Engine(...) keywords


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_names() -> frozenset[str]:
    """Every ``_name`` (not dunder) the engine assigns as an attribute or defines as a
    method: its private state and steps."""
    names = set()
    for path in sorted((ROOT / "engine").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                names.update(
                    f.name
                    for f in node.body
                    if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                )
    return frozenset(n for n in names if private(n))


PRIVATE = private_names()


def last_name(node: ast.expr) -> str | None:
    """``engine`` for ``engine``, ``bt.engine`` and ``self.bt.engine``; None for a call."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def inside_imports(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in INSIDE_MODULES:
                    yield node.lineno, f"imports {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module in INSIDE_MODULES:
                yield node.lineno, f"imports {node.module}"
            elif node.module == "engine":
                for alias in node.names:
                    if alias.name in INSIDE:
                        yield node.lineno, f"imports engine.{alias.name}"
            if node.module.split(".")[0] == "engine":
                for alias in node.names:
                    if private(alias.name):
                        yield node.lineno, f"imports the private {node.module}.{alias.name}"


def inside_reads(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = last_name(node.value)
        what = f"{ast.unparse(node.value)}.{node.attr}"
        if node.attr in PRIVATE and owner not in ("self", "cls"):
            yield node.lineno, f"reads the engine's private {what}"
        elif owner in ENGINE_NAMES:
            if node.attr in TABLES and isinstance(node.ctx, ast.Load):
                yield node.lineno, f"reads {what} (use the read face)"
            elif node.attr in OPTIONS and isinstance(node.ctx, ast.Store):
                yield node.lineno, f"sets {what} (an Engine(...) keyword)"


def violations(paths: list[Path]) -> list[str]:
    out = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        found = sorted({*inside_imports(tree), *inside_reads(tree)})
        out += [f"{rel}:{line}: {what}" for line, what in found]
    return out


def test_the_shell_reads_the_engine_through_its_face_only() -> None:
    bad = violations(SHELL_FILES)
    assert not bad, "the shell touches the engine's inside:\n" + "\n".join(bad)


def engine_holders(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Names that hold an Engine: typed ``Engine``, given ``Engine(...)`` or ``x.engine``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            if ast.unparse(node.annotation).strip("'\"") == "Engine":
                yield node.lineno, node.arg
        elif isinstance(node, ast.AnnAssign):
            name = last_name(node.target)
            if name and ast.unparse(node.annotation).strip("'\"") == "Engine":
                yield node.lineno, name
        elif isinstance(node, ast.Assign):
            value = node.value
            holds = (isinstance(value, ast.Call) and last_name(value.func) == "Engine") or (
                isinstance(value, ast.Attribute) and value.attr in ENGINE_NAMES
            )
            if holds:
                for target in node.targets:
                    name = last_name(target)
                    if name is not None:
                        yield node.lineno, name


def test_the_shell_calls_an_engine_by_the_names_the_scan_knows() -> None:
    bad = []
    for path in SHELL_FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, name in engine_holders(tree):
            if name not in ENGINE_NAMES:
                bad.append(f"{path.relative_to(ROOT)}:{line}: an Engine named {name!r}")
    assert not bad, f"call it one of {sorted(ENGINE_NAMES)}:\n" + "\n".join(bad)


def test_no_engine_module_imports_the_engine_itself() -> None:
    # the rules (orders, fills, scoring) are typed against engine.ledger.Ledger, so no
    # engine module imports engine.core, not even for a type
    bad = []
    for path in sorted((ROOT / "engine").glob("*.py")):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            if "engine.core" in names:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, bad


def test_the_scan_sees_each_kind_of_touch(tmp_path: Path) -> None:
    # the check itself can fail: one line of each kind is found, and look-alikes are not
    module = tmp_path / "probe.py"
    module.write_text(
        "from engine.state import Account\n"
        "from engine import Engine, state\n"
        "import engine.core\n"
        "def f(engine: Engine, m: object) -> None:\n"
        "    engine.accounts\n"
        "    bt.engine.by_coin\n"
        "    self._engine.assets\n"
        "    eng.open_orders\n"
        "    engine.books_checked = True\n"
        "    engine._next_due\n"
        "    book._sides\n"
        "    m.open_orders\n"  # a mark row's own count
        "    ctx.account.open_orders\n"  # a strategy's account view
        "    self._out\n"  # a shell object's own private name
        "    x = engine.record_prints\n"  # reading an option is allowed
        "from engine.units import _parse_e8\n",
        encoding="utf-8",
    )
    found = violations([module])
    assert [int(v.split(":")[1]) for v in found] == [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 16], found
    assert "_next_due" in PRIVATE and "_sides" in PRIVATE
