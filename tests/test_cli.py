"""The ``arena`` command as a user runs it: real files; ``arena --help`` and the missing
files' one-line errors in real subprocesses (the exit code and no traceback at the process
level), the rest in this process through the same entry point (``arena_here``)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.main import get_command

import engine
from arena_tui.cli import app
from arena_tui.tui.cli import cli
from tests.clirun import ROOT, arena, arena_here, one_error_line

SAMPLE = ROOT / "recordings" / "sample-btc-20250126.jsonl"
SAMPLE_SEASON = ROOT / "seasons" / "sample-btc-20250126.toml"


def test_help_teaches() -> None:
    done = arena("--help")
    assert done.returncode == 0
    assert "replay" in done.stdout and "season" in done.stdout
    done = arena_here("replay", "--help", cwd=ROOT)
    assert done.returncode == 0
    for word in ("--season", "--json", "--fills", "--scores", "Example"):
        assert word in done.stdout


def test_a_mistyped_command_gets_the_nearest_names() -> None:
    # the commands are made when first used: the suggestions still know every name
    done = arena_here("replayy")
    assert done.returncode == 2
    assert "No such command 'replayy'. Did you mean 'replay'?" in done.stdout + done.stderr
    done = arena_here("imprt", "hftbacktest")
    assert "Did you mean 'import'?" in done.stdout + done.stderr


def test_version_says_which_engine_runs() -> None:
    # A fresh process, so that ARENA_ENGINE chooses before anything imports the engine: the
    # line must name the engine that the same choice gives here, and pure must be pure.
    done = arena("--version")
    assert done.returncode == 0, done.stderr
    name, which = done.stdout.splitlines()
    assert re.fullmatch(r"arena [0-9]+\.[0-9]+\.[0-9]+.*", name)
    assert which == f"engine: {engine.ENGINE}"
    forced = arena("--version", env={**os.environ, "ARENA_ENGINE": "pure"})
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[1].startswith("engine: pure Python")


HELP_WIDTH = 78  # an 80-column terminal, less the help panel's padding
MARKUP = re.compile(r"\[/?[a-z ]*\]")


def commands(cmd: object, name: str) -> Iterator[tuple[str, str]]:
    yield name, getattr(cmd, "help", None) or ""
    for sub, child in getattr(cmd, "commands", {}).items():
        yield from commands(child, f"{name} {sub}")


def test_every_help_text_fits_80_columns_unwrapped() -> None:
    # Typer's rich mode keeps a docstring's line breaks, so a longer line is wrapped by
    # the terminal and leaves a ragged one-word line behind it. The first paragraph is
    # joined into one line by typer and wrapped cleanly, so only the others count.
    found = dict(commands(get_command(app), "arena")) | dict(commands(get_command(cli), "tui"))
    assert {"arena replay", "arena import hl-archive", "arena logs check", "tui"} <= set(found)
    for name, text in found.items():
        for par in text.split("\n\n")[1:]:
            for line in par.split("\n"):
                assert len(MARKUP.sub("", line)) <= HELP_WIDTH, (name, line)


def test_replay_table_for_people() -> None:
    done = arena_here("replay", str(SAMPLE), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "sample-btc-20250126" in out and "(final)" in out
    lines = out.splitlines()
    header = next(i for i, x in enumerate(lines) if x.lstrip().startswith("rank"))
    # Ranked rows first, unranked after, as in the JSON.
    assert lines[header + 1].split()[:2] == ["1", "carol"]
    assert lines[header + 2].split()[:2] == ["2", "bob"]
    assert lines[header + 3].split()[:2] == ["-", "dave"]


def test_fills_file_hash_is_fills_sha256(tmp_path: Path) -> None:
    fills = tmp_path / "fills.jsonl"
    done = arena_here("replay", str(SAMPLE), "--json", "--fills", str(fills), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["fills_sha256"] == hashlib.sha256(fills.read_bytes()).hexdigest()
    assert list(doc) == [
        "season",
        "rules_sha256",
        "log_sha256",
        "end",
        "final",
        "fills_sha256",
        "ranking",
    ]
    assert list(doc["ranking"][0]) == [
        "rank",
        "entry",
        "score",
        "return",
        "mdd",
        "equity",
        "eligible",
        "fill_days",
        "active_marks",
        "marks",
    ]


def test_bad_json_line_names_file_and_line(tmp_path: Path) -> None:
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    lines[9] = b'{"t":1737918843893,"hl":{"channel":"l2Book",\n'
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines))
    msg = one_error_line(arena_here("replay", str(bad), "--season", str(SAMPLE_SEASON), cwd=ROOT))
    assert f"{bad}:10:" in msg and "not valid JSON" in msg


def test_changed_season_is_refused_naming_both_hashes(tmp_path: Path) -> None:
    changed = tmp_path / "sample-btc-20250126.toml"
    text = SAMPLE_SEASON.read_text()
    changed.write_text(
        text.replace("\nmin_fill_days = 1\n", "\nmin_fill_days = 1\ntaker_fee_dbps = 50\n")
    )
    header = json.loads(SAMPLE.read_bytes().split(b"\n", 1)[0])
    msg = one_error_line(arena_here("replay", str(SAMPLE), "--season", str(changed), cwd=ROOT))
    show = arena_here("season", "show", str(changed), "--json", cwd=ROOT)
    shown = json.loads(show.stdout)["rules_sha256"]
    assert header["rules_sha256"] in msg and shown in msg
    assert shown != header["rules_sha256"]


def test_recording_without_season_uses_backtest_defaults(tmp_path: Path) -> None:
    # A recorder's file: no season, markets in the header. Inputs from 00:00:30 to 00:03:10.
    t0 = 1_767_225_600_000
    rows = [
        {
            "arena_log": 1,
            "recording": "hyperliquid",
            "markets": [{"coin": "BTC", "asset": 0, "szDecimals": 5}],
        }
    ]
    rows += [{"t": t0 + 30_000 + 20_000 * i, "arena": {"type": "tick"}} for i in range(9)]
    log = tmp_path / "day.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = arena_here("replay", str(log), "--json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    # start = 00:01 (first boundary at/after 00:00:30), end = 00:03 (last at/before 00:03:10).
    assert doc["season"] == "backtest"
    assert doc["end"] == t0 + 180_000 and doc["final"] is True
    assert doc["ranking"] == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["replay", "nope.jsonl"], "nope.jsonl: no such file"),
        (["replay", str(SAMPLE), "--season", "nope.toml"], "nope.toml: cannot read"),
        (["season", "show", "nope.toml"], "nope.toml: cannot read"),
    ],
)
def test_missing_files_are_one_line(args: list[str], needle: str) -> None:
    assert needle in one_error_line(arena(*args))


def test_season_show_prints_rules_and_hash() -> None:
    done = arena_here("season", "show", "seasons/season0.toml", cwd=ROOT)
    assert done.returncode == 0
    doc = json.loads(
        arena_here("season", "show", "seasons/season0.toml", "--json", cwd=ROOT).stdout
    )
    assert doc["rules_sha256"] in done.stdout
    assert "position_cap_pct" in done.stdout and "HYPE" in done.stdout
    assert [(m["coin"], m["asset"], m["szDecimals"]) for m in doc["markets"]] == [
        ("BTC", 0, 5),
        ("ETH", 1, 4),
        ("SOL", 5, 2),
        ("HYPE", 159, 2),
    ]
    assert doc["end"] - doc["start"] == 28 * 86_400_000


def test_replay_of_a_log_spanning_no_whole_minute_only_checks_it(tmp_path: Path) -> None:
    """No season, 25 s of data: no window to score, but every line is read and hashed."""
    log = tmp_path / "short.jsonl"
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    header = json.loads(lines[0])
    header.pop("season")
    header.pop("rules_sha256")
    body = [x for x in lines[1:] if b'"arena"' not in x]  # market data only, 19:14:03-19:14:29
    log.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(body))
    done = arena_here("replay", str(log), "--json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    want_log = hashlib.sha256(log.read_bytes()).hexdigest()
    assert (doc["end"], doc["final"], doc["ranking"], doc["log_sha256"]) == (
        None,
        False,
        [],
        want_log,
    )
    assert doc["fills_sha256"] == hashlib.sha256(b"").hexdigest()
    assert "no whole minute" in done.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(log.read_bytes() + b'{"t":1.5}\n')
    done = arena_here("replay", str(bad), cwd=ROOT)
    n = len(bad.read_bytes().splitlines())
    assert f"{bad}:{n}: " in one_error_line(done)
