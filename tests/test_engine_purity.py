"""The engine is pure, mechanically: what it imports, what it calls, which numbers it writes.

Every ``engine/*.py`` is parsed with :mod:`ast` and held to the contract's "no clock, no
randomness, no I/O, no float": imports only from an allow-list, no float literal, no true
division, no call that reads a clock or a random source or makes a float. A subprocess then
checks that ``import engine`` loads none of the forbidden modules. Every failure names the
file and line.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# engine/_loader.py chooses, at import, whether the compiled extensions or their sources run
# (setup.py, ARENA_ENGINE): it alone reads an environment variable and the engine's own
# source files, and is held to its own short list below instead.
LOADER = ROOT / "engine" / "_loader.py"
ENGINE_FILES = sorted(p for p in (ROOT / "engine").glob("*.py") if p != LOADER)
LOADER_IMPORTS = frozenset(
    {
        "__future__",
        "hashlib",
        "os",
        "sys",
        "types",
        "collections.abc",
        "importlib.machinery",
        "importlib.util",
        "engine._built",
    }
)
LOADER_CALLS = frozenset({"open"})  # its own sources, to hash them

# Modules the engine may import from; a dotted entry also allows its submodules.
ALLOWED = ("__future__", "enum", "heapq", "re", "typing", "collections.abc", "hashlib", "json")
ALLOWED_PACKAGES = ("msgspec", "engine")
FORBIDDEN = frozenset(
    {
        "arena_tui",
        "textual",
        "httpx",
        "websockets",
        "time",
        "datetime",
        "random",
        "asyncio",
        "os",
        "socket",
        "threading",
        "io",
        "pathlib",
        "sys",
        "secrets",
        "uuid",
    }
)
# Calls that make a float, read a clock or a random source, or import or run code by name.
FORBIDDEN_CALLS = frozenset(
    {
        "float",
        "round",
        "time",
        "time_ns",
        "monotonic",
        "perf_counter",
        "now",
        "utcnow",
        "today",
        "random",
        "randint",
        "randrange",
        "getrandbits",
        "urandom",
        "uuid4",
        "__import__",
        "import_module",
        "eval",
        "exec",
        "open",
    }
)


def test_there_are_engine_files() -> None:
    names = {p.name for p in ENGINE_FILES}
    assert {"__init__.py", "core.py", "units.py"} <= names, names
    assert LOADER.exists()


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"


def imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The module names an import statement reads (relative imports are the engine's own)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        return ["engine" + ("." + node.module if node.module else "")]
    return [node.module or ""]


def allowed(module: str) -> bool:
    if module in ALLOWED:
        return True
    return any(module == p or module.startswith(p + ".") for p in ALLOWED_PACKAGES)


def imports(path: Path) -> list[tuple[ast.AST, str]]:
    return [
        (node, module)
        for node in ast.walk(parse(path))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for module in imported(node)
    ]


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_imports_only_from_the_allow_list(path: Path) -> None:
    bad = [f"{where(path, n)}: imports {m!r}" for n, m in imports(path) if not allowed(m)]
    assert not bad, "engine imports outside the allow-list:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_imports_nothing_forbidden(path: Path) -> None:
    bad = [
        f"{where(path, n)}: imports {m!r}" for n, m in imports(path) if m.split(".")[0] in FORBIDDEN
    ]
    assert not bad, "engine imports a forbidden module:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_no_float_literal(path: Path) -> None:
    bad = [
        f"{where(path, node)}: literal {node.value!r}"
        for node in ast.walk(parse(path))
        if isinstance(node, ast.Constant) and isinstance(node.value, float | complex)
    ]
    assert not bad, "float literals in the engine:\n" + "\n".join(bad)


def negative_power(node: ast.BinOp) -> bool:
    """``x ** -n`` is a float for any int x."""
    right = node.right
    if isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub):
        return True
    return isinstance(right, ast.Constant) and isinstance(right.value, int) and right.value < 0


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_no_true_division(path: Path) -> None:
    bad = []
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.Div):
            op = "/=" if isinstance(node, ast.AugAssign) else "/"
            bad.append(f"{where(path, node)}: '{op}' (use tdiv)")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and negative_power(node):
            bad.append(f"{where(path, node)}: '** -n' makes a float")
    assert not bad, "true division in the engine:\n" + "\n".join(bad)


def called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_no_forbidden_call(path: Path) -> None:
    bad = [
        f"{where(path, node)}: calls {called_name(node)}(...)"
        for node in ast.walk(parse(path))
        if isinstance(node, ast.Call) and called_name(node) in FORBIDDEN_CALLS
    ]
    assert not bad, "clock, randomness, float or dynamic code in the engine:\n" + "\n".join(bad)


def test_the_loader_reaches_out_only_to_choose_the_engine() -> None:
    tree = parse(LOADER)
    bad = [
        f"{where(LOADER, n)}: imports {m!r}" for n, m in imports(LOADER) if m not in LOADER_IMPORTS
    ]
    bad += [
        f"{where(LOADER, node)}: calls {called_name(node)}(...)"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and called_name(node) in FORBIDDEN_CALLS - LOADER_CALLS
    ]
    bad += [
        f"{where(LOADER, node)}: literal {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, float | complex)
    ]
    assert not bad, "the engine's loader does more than choose:\n" + "\n".join(bad)


# ---- at run time --------------------------------------------------------------------------

LIST_MODULES = "import sys; print(*sorted(sys.modules), sep='\\n')"


def loaded_after(imports_first: str) -> set[str]:
    """The modules in ``sys.modules`` of a fresh interpreter after running ``imports_first``."""
    done = subprocess.run(
        [sys.executable, "-c", f"{imports_first}\n{LIST_MODULES}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_importing_the_engine_loads_nothing_forbidden() -> None:
    """``import engine`` adds no forbidden module to what the interpreter starts with.

    msgspec (an allowed dependency) itself imports ``datetime`` and ``uuid`` when it loads,
    so those count as the engine's only if ``import msgspec`` alone does not load them.
    """
    bare = loaded_after("")
    libraries = loaded_after("import msgspec, hashlib, heapq, json, re, enum, typing")
    with_engine = loaded_after("import engine")
    assert "engine.core" in with_engine, "the subprocess did not import the engine"
    new = with_engine - bare
    forbidden = sorted(m for m in new if m.split(".")[0] in FORBIDDEN)
    bad = sorted({m.split(".")[0] for m in forbidden if m not in libraries})
    assert not bad, f"import engine loads forbidden modules: {bad}"
    shell = sorted(
        m for m in with_engine if m.split(".")[0] in {"arena_tui", "textual", "httpx", "websockets"}
    )
    assert not shell, f"import engine loads the shell or its libraries: {shell}"
