"""The size rule (docs/architecture.md, "Size"), held mechanically with :mod:`ast`.

- No class in the shell (``arena_tui``) is over ``CLASS_LIMIT`` lines.
- No function or method, in ``arena_tui`` or ``engine``, has a body (its statements after
  the docstring) over ``BODY_LIMIT`` lines.
- No module, in ``arena_tui`` or ``engine``, is over ``MODULE_LIMIT`` lines, except those
  named in ``LONG_MODULES`` with their reason; each of those says "Why one module:" in its
  docstring. An entry that is no longer over the limit fails too: the list only shrinks.

Every failure names the file (and line). The limits are what the code keeps, not a wish: a
module may say in a sentence why it exists; it needs no paragraph to be 400 lines long.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLASS_LIMIT = 300
BODY_LIMIT = 100
MODULE_LIMIT = 500

# Modules over MODULE_LIMIT, by path under arena_tui/ (or engine/...), and why each is one.
LONG_MODULES = {
    "logs/thinlog.py": "a thin run log's writer and reader, the two halves of one format",
    "sweep/space.py": "the dimensions, their parsing and the searches that walk them",
    "commands/runs.py": "four subcommands printing the same records with the same cells",
}
# One literal is not a long function: the OpenAPI document is data, written as code.
LONG_FUNCTIONS = {"host/openapi.py:document": "the API's OpenAPI document, one literal"}


def modules(*packages: str) -> Iterator[tuple[str, Path]]:
    """Each module with its name as the lists above spell it."""
    for package in packages:
        base = ROOT / package
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).as_posix()
            yield (rel if package == "arena_tui" else f"{package}/{rel}"), path


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's statements after its docstring, first to last line (nested ones in)."""
    body = node.body
    first = body[0]
    if (
        len(body) > 1
        and isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        first = body[1]
    end = node.end_lineno or node.lineno
    return end - first.lineno + 1


def long_classes(limit: int) -> list[str]:
    out = []
    for name, path in modules("arena_tui"):
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.ClassDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > limit:
                    out.append(f"arena_tui/{name}:{node.lineno}: class {node.name}, {size} lines")
    return out


def long_functions(limit: int) -> list[str]:
    out = []
    for name, path in modules("arena_tui", "engine"):
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                key = f"{name}:{node.name}"
                size = body_lines(node)
                if size > limit and key not in LONG_FUNCTIONS:
                    out.append(f"{name}:{node.lineno}: {node.name}, a {size}-line body")
    return out


def long_modules(limit: int) -> list[str]:
    out = []
    for name, path in modules("arena_tui", "engine"):
        size = lines(path)
        if size > limit and name not in LONG_MODULES:
            out.append(f"{name}: {size} lines")
    return out


def test_no_class_in_the_shell_is_over_the_limit() -> None:
    bad = long_classes(CLASS_LIMIT)
    assert not bad, f"classes over {CLASS_LIMIT} lines (split them):\n" + "\n".join(bad)


def test_no_function_body_is_over_the_limit() -> None:
    bad = long_functions(BODY_LIMIT)
    assert not bad, f"function bodies over {BODY_LIMIT} lines:\n" + "\n".join(bad)


def test_no_module_is_over_the_limit_unless_named_with_its_reason() -> None:
    bad = long_modules(MODULE_LIMIT)
    assert not bad, (
        f"modules over {MODULE_LIMIT} lines: split them, or name them in LONG_MODULES with "
        "their reason (and say 'Why one module:' in the docstring):\n" + "\n".join(bad)
    )


def test_a_named_long_module_is_still_long_and_says_why() -> None:
    paths = dict(modules("arena_tui", "engine"))
    for name, reason in LONG_MODULES.items():
        assert reason, name
        path = paths.get(name)
        assert path is not None, f"{name}: named in LONG_MODULES but not there"
        assert lines(path) > MODULE_LIMIT, f"{name}: no longer long; drop it from LONG_MODULES"
        doc = ast.get_docstring(parse(path)) or ""
        assert "Why one module:" in doc, f"{name}: its docstring should say why it is one"
    for key in LONG_FUNCTIONS:
        name, function = key.split(":")
        found = [
            body_lines(node)
            for node in ast.walk(parse(paths[name]))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function
        ]
        assert found and max(found) > BODY_LIMIT, f"{key}: no longer long; drop it"


def test_the_size_checks_can_fail() -> None:
    # with no limit, each check lists what it sees: the checks look where they should
    assert any("class " in c for c in long_classes(0))
    assert any("engine/core.py" in f for f in long_functions(0))
    assert "cli.py: " in "\n".join(long_modules(0))
