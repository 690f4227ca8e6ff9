"""bench/twins.py's own logic on a short day: it times each worker count and stops when a
split gives other twins than one pass."""

from __future__ import annotations

import contextlib
import io
import json

from bench import twins


def test_the_twins_bench_times_each_split_of_the_same_twins() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert twins.main(["--hours", "1", "--rounds", "1", "--workers", "1,2", "--json"]) == 0
    doc = json.loads(out.getvalue())
    assert doc["twins"] == 100 and doc["trips"] > 0 and doc["twin_fills"] > 0
    assert set(doc["runs"]) == {"1", "2"}
    for rows in doc["runs"].values():
        (run,) = rows
        assert run["wall_s"] > 0 and run["cpu_s"] > 0
    assert "every run's twins were the same" in twins.report(doc)
