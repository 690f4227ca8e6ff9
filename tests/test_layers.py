"""The rooms of arena_tui and the direction of their imports, held by import-linter.

The contracts live in pyproject.toml (``[tool.importlinter]``). The first test runs them on
the tree as it is; the others copy the tree, make one wrong change a later edit could make,
and check that ``lint-imports`` fails naming the import that broke it, so the contracts are
known to bite, not just to pass. (Sizes are tests/test_house_rules.py's.)
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOMS = (
    "commands",
    "host",
    "logs",
    "record",
    "report",
    "run",
    "season",
    "sweep",
    "synth",
    "tui",
    "util",
    "verify",
    "wire",
)


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the tree at ``cwd`` (it puts ``cwd`` first on sys.path)."""
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail("lint-imports is not installed: pip install -e '.[dev]'")
    return subprocess.run(
        [exe, "--no-cache"], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


def test_the_rooms_keep_their_contracts() -> None:
    done = lint_imports(ROOT)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "7 kept, 0 broken" in out, out


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the packages and the contracts, for one wrong change."""
    for package in ("arena_tui", "engine"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_import(path: Path, line: str) -> None:
    """Put ``line`` after the module's ``from __future__`` import."""
    text = path.read_text(encoding="utf-8")
    anchor = "from __future__ import annotations\n"
    assert anchor in text, path
    path.write_text(text.replace(anchor, anchor + line + "\n", 1), encoding="utf-8")


def broken(tree: Path) -> str:
    done = lint_imports(tree)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "Broken contracts" in out, out
    return out


def test_the_backtest_command_importing_the_tui_fails(tree: Path) -> None:
    add_import(tree / "arena_tui/commands/backtest.py", "from arena_tui.tui.app import ArenaApp")
    out = broken(tree)
    assert "arena_tui.commands is not allowed to import arena_tui.tui" in out
    assert "arena_tui.commands.backtest -> arena_tui.tui.app" in out


def test_a_lazy_import_of_the_tui_in_a_command_fails_too(tree: Path) -> None:
    path = tree / "arena_tui/commands/backtest.py"
    text = path.read_text(encoding="utf-8")
    text += "\n\ndef _watch() -> None:\n    from arena_tui.tui import app  # noqa: F401\n"
    path.write_text(text, encoding="utf-8")
    assert "arena_tui.commands.backtest -> arena_tui.tui.app" in broken(tree)


@pytest.mark.parametrize(
    ("module", "line", "named"),
    [
        # data importing a capability
        ("logs/logcheck.py", "from arena_tui.run import replay", "arena_tui.logs.logcheck"),
        # a capability importing an entry point
        ("run/paper.py", "from arena_tui.commands import paper", "arena_tui.run.paper"),
        # the host importing the screen
        ("host/views.py", "from arena_tui.tui import fmt", "arena_tui.host.views"),
        # the verifier importing the host it checks (it knows it over HTTP only)
        ("verify/remote.py", "from arena_tui.host import store", "arena_tui.verify.remote"),
        # the wire vocabulary importing an end of the wire (host and screen meet only there)
        ("wire/api.py", "from arena_tui.host import schemas", "arena_tui.wire.api"),
        ("wire/api.py", "from arena_tui.tui import hostapi", "arena_tui.wire.api"),
        # the generator importing a log reader
        ("synth/generate.py", "from arena_tui.logs import logfile", "arena_tui.synth.generate"),
        # the shell using its own public facade
        ("run/backtest.py", "import arena_tui.strategy", "arena_tui.run.backtest"),
        # the engine importing the shell
        ("engine/core.py", "import arena_tui.util.human", "engine.core"),
    ],
)
def test_an_import_against_the_arrows_fails(tree: Path, module: str, line: str, named: str) -> None:
    base = tree if module.startswith("engine/") else tree / "arena_tui"
    add_import(base / module, line)
    out = broken(tree)
    assert f"{named} -> " in out, out


def test_a_type_only_cycle_inside_a_room_fails(tree: Path) -> None:
    # the loop issue 10 removed: messages and spectator importing each other
    add_import(
        tree / "arena_tui/tui/spectated.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from arena_tui.tui.spectator import SpectatorSource",
    )
    out = broken(tree)
    assert "no import cycle anywhere in arena_tui" in out
    assert "- .spectated -> .spectator (1 import)" in out, out


def test_a_new_room_must_be_placed_in_the_layers(tree: Path) -> None:
    (tree / "arena_tui/fetch").mkdir()
    (tree / "arena_tui/fetch/__init__.py").write_text('"""A room no layer names."""\n')
    out = broken(tree)
    assert "arena_tui.fetch" in out, out


def docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def test_every_room_says_what_it_owns_and_may_import() -> None:
    for room in ROOMS:
        doc = docstring(ROOT / "arena_tui" / room / "__init__.py")
        assert len(doc) > 80, f"arena_tui/{room}/__init__.py needs its docstring"
    for room in ("logs", "record", "report", "run", "season", "synth", "util", "verify", "wire"):
        doc = docstring(ROOT / "arena_tui" / room / "__init__.py")
        assert "May import" in doc, f"arena_tui/{room}/__init__.py: say what it may import"


def test_ls_shows_rooms_not_loose_modules() -> None:
    loose = sorted(p.name for p in (ROOT / "arena_tui").glob("*.py"))
    assert loose == ["__init__.py", "cli.py", "strategy.py"], loose
