"""bench/imports.py's own logic on a short day: it times arena import against another tree,
in fresh processes, and stops when the trees' day caches differ."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import sys
from pathlib import Path

import pytest

from bench import imports


def test_the_imports_bench_times_both_trees_and_checks_their_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"  # this tree again, as another checkout with its own .venv
    other.mkdir()
    (other / ".venv").symlink_to(Path(sys.executable).parent.parent)  # this venv
    for name in ("arena_tui", "engine", "strategies", "tests"):
        (other / name).symlink_to(imports.ROOT / name)
    out = io.StringIO()
    argv = ["--hours", "0.05", "--rounds", "2", "--against", str(other), "--json"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert imports.main(argv) == 0
    doc = json.loads(out.getvalue())
    assert doc["day"]["books"] > 100
    for name in ("this", "other"):
        assert len(doc["runs"][name]) == 2
        assert all(
            run["cpu_s"] > 0 and run["wall_s"] >= run["cpu_s"] / 2 for run in doc["runs"][name]
        )
    assert len({run["columns_sha256"] for rows in doc["runs"].values() for run in rows}) == 1
    assert set(doc["other_over_this"]) == {
        "cpu_best_s",
        "cpu_median_s",
        "wall_best_s",
        "wall_median_s",
    }
    assert "other / this" in imports.report(doc)

    numbers = itertools.count()
    monkeypatch.setattr(imports, "columns_sha256", lambda cache: str(next(numbers)))
    with (
        pytest.raises(SystemExit, match="caches differ"),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        imports.main(["--hours", "0.05", "--rounds", "1", "--against", str(other)])


def test_another_tree_needs_its_own_venv(tmp_path: Path) -> None:
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()) as err:
        imports.main(["--against", str(tmp_path)])
    assert "no .venv/bin/python" in err.getvalue()
