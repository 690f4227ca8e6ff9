"""bench/peers.py's own logic, without the peers: its raw day, the arena side, the skips.

The peers (hftbacktest, NautilusTrader) are never imported here; a missing peer must be
skipped with one line that says how to install it, and the arena side must still run.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import sys
from pathlib import Path

from bench import peers


def test_the_raw_day_is_collector_lines_that_arena_import_takes(tmp_path: Path) -> None:
    raw = tmp_path / "raw.gz"
    counts = peers.write_raw(raw, 0.05, 7, 620, 1.5)
    lines = gzip.decompress(raw.read_bytes()).split(b"\n")
    assert lines.pop() == b""
    assert len(lines) == counts["lines"]
    ns = [int(line[:19]) for line in lines]
    assert all(line[19:20] == b" " for line in lines)  # hftbacktest's convert slices [:19]
    assert ns == sorted(ns) and ns[0] // 1_000_000 >= peers.START_MS
    channels = [json.loads(line[20:])["channel"] for line in lines]
    assert channels.count("l2Book") == counts["books"]
    assert channels.count("trades") == counts["trades"]
    assert counts["books"] + counts["trades"] == counts["lines"]  # no other channel
    # a book about every 620 ms over 180 s, plus the synth's own every 5 s
    assert 290 <= counts["books"] <= 360
    assert list(peers.raw_lines(0.05, 7, 620, 1.5)) == [line + b"\n" for line in lines]


def test_a_run_without_the_peers_skips_them_and_times_arena(tmp_path: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert peers.main(["--hours", "0.05", "--rounds", "1", "--json"]) == 0
    doc = json.loads(out.getvalue())
    assert set(doc["skipped"]) == {"hftbacktest", "nautilus"}
    for why in doc["skipped"].values():
        assert "--peers-python" in why and "pip install hftbacktest==2.4.4 nautilus_trader" in why
    assert set(doc["e2e"]) == set(doc["core"]) == {"touch", "book"}
    for variant in ("touch", "book"):
        (arena,) = doc["e2e"][variant]["arena"]
        assert arena["s"] >= arena["import_s"] > 0 and arena["fills"] >= 0
        assert set(doc["e2e"][variant]) == {"arena"} and set(doc["core"][variant]) == {"arena"}
        (core,) = doc["core"][variant]["arena"]
        assert core["inputs"] > 200 and core["touch_s"] > 0 and core["nothing_s"] > 0
        assert doc["summary"][variant]["arena_e2e_s"] == arena["s"]
        # and again with --twins 0 (the peers judge nothing): the same import, its own run
        assert arena["bare_s"] == arena["import_s"] + arena["bare_run_s"]
        assert doc["summary"][variant]["arena_e2e_bare_s"] == arena["bare_s"]
        # what the quoter did, counted by itself (end to end: printed at its end) and by
        # the engine: every order it sent reached the engine, and none was refused
        for run in (arena, core):
            assert 0 < run["wakeups"] <= doc["day"]["books"] and run["orders"] > 0
            assert run["engine_orders"] == run["orders"] and run["refused"] == 0
    touch, book = doc["e2e"]["touch"]["arena"][0], doc["e2e"]["book"]["arena"][0]
    assert book["orders"] > touch["orders"]  # it looks at every book, not every 2 s


def test_a_peer_missing_from_the_given_interpreter_is_one_line_naming_the_install() -> None:
    # arena's own interpreter has neither peer installed (the suite never needs them)
    why = peers.peer_missing(sys.executable, "hftbacktest")
    assert why is not None and why.startswith("hftbacktest: skipped (hftbacktest is not installed")
    assert "pip install hftbacktest==2.4.4 nautilus_trader" in why
    gone = peers.peer_missing("/nonexistent/python", "nautilus")
    assert gone is not None and gone.startswith("nautilus: skipped (cannot run /nonexistent/python")
