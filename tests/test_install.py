"""README's first command installs what running needs, not what testing needs: the first
backtest must not wait for the test tools (issue 23, item 9)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Distributions only the tests, the linters or an optional command need.
TEST_ONLY = {
    "pytest", "pytest-xdist", "hypothesis", "playwright", "ruff", "mypy", "schemathesis",
    "import-linter", "pytest-textual-snapshot", "moto", "boto3", "dask", "optuna", "polars",
    "pyarrow",
}  # fmt: skip
# Their import names: the main job must import none of them.
TEST_ONLY_MODULES = {
    "pytest", "xdist", "hypothesis", "playwright", "ruff", "mypy", "schemathesis",
    "importlinter", "moto", "boto3", "botocore", "dask", "distributed", "optuna", "polars",
    "pyarrow",
}  # fmt: skip


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower()


def test_running_needs_none_of_the_test_tools() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    assert not runtime & TEST_ONLY, runtime & TEST_ONLY
    # ... and testing needs all of them: the second command installs the dev extra.
    dev = {_name(r) for r in project["optional-dependencies"]["dev"]}
    assert dev >= TEST_ONLY, TEST_ONLY - dev


def test_the_first_command_installs_the_package_alone_and_the_second_the_test_extra() -> None:
    ci = [
        line
        for line in (ROOT / ".ci/run").read_text().splitlines()
        if line.startswith((".venv/", "python3 "))
    ]
    first, second = ci
    assert "pip install" in first and "-e ." in first and "[dev]" not in first
    assert "arena backtest" in first
    assert "pip install" in second and "-e '.[dev]'" in second and "pytest" in second
    assert second.index("pip install") < second.index("pytest")


def test_the_main_job_runs_without_any_test_tool(tmp_path: Path) -> None:
    """The first command's backtest, in a fresh interpreter where every module of the dev
    extra fails to import (as on the runtime install alone), writes its whole report."""
    probe = (
        "import importlib.abc, sys\n"
        f"BLOCKED = {sorted(TEST_ONLY_MODULES)!r}\n"
        "class Absent(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in BLOCKED:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Absent())\n"
        "from arena_tui.cli import main\n"
        "main()\n"
    )
    job = [sys.executable, "-c", probe, "backtest", "strategies/momentum.py"]
    job += ["recordings/synth-3coins-20261201.jsonl.gz", "--vs", "baselines"]
    job += ["--out", str(tmp_path / "first")]
    out = subprocess.run(
        job,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "verdict" in out.stdout
    for name in ("run.jsonl", "report.json", "fills.csv", "report.html"):
        assert (tmp_path / "first" / name).is_file(), name
