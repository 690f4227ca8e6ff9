"""What the command lines import to start: ``arena --help``, ``arena --version``, every
command's ``--help`` and ``arena-tui --help`` load typer, the options and what defines
them, never the modules a command runs with (numpy through the day cache, the report's
HTML and run data, the runner, the sweep, the generator, the S3 archive, Textual...).
Each command imports those in its own body when it runs.

Asserted as which modules are loaded, in a fresh interpreter, never as a time; bench/startup.py
prints the time. The engine is loaded at start (``arena host``'s module imports the host's
checkpoint and plan, which use it), and so are the log reader and the season file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.clirun import ROOT

# Loaded by no command's start. Third-party first, then arena's heavy rooms.
NOT_AT_START = (
    "numpy",
    "scipy",
    "arch",
    "polars",
    "pandas",
    "pyarrow",
    "plotly",
    "textual",
    "websockets",
    "httpx",
    "sqlite3",
    "boto3",
    "optuna",
    "dask",
    "starlette",
    "uvicorn",
    "arena_tui.logs.daycache",
    "arena_tui.logs.catalog",
    "arena_tui.logs.importers",
    "arena_tui.logs.logcheck",
    "arena_tui.report.html",
    "arena_tui.report.render",
    "arena_tui.report.rundata",
    "arena_tui.report.verdict",
    "arena_tui.report.runrecord",
    "arena_tui.run.backtest",
    "arena_tui.run.replay",
    "arena_tui.run.twins",
    "arena_tui.run.hooks",
    "arena_tui.record.feed",
    "arena_tui.record.fetch",
    "arena_tui.sweep.config",
    "arena_tui.sweep.driver",
    "arena_tui.synth.generate",
    "arena_tui.tui.app",
    "arena_tui.tui.catalog",
)

# Runs ARGS (one list of argv lists, JSON) through the app in this interpreter, its output
# swallowed, then prints which of the modules named in argv[2] (JSON) are loaded.
PROBE = """
import contextlib, io, json, sys
imports, runs, watched = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
exec(imports)
if runs:
    from typer.main import get_command
    command = get_command(app)
    for args in runs:
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                command.main(args, prog_name="arena", standalone_mode=False)
            except SystemExit:
                pass
print(json.dumps(sorted(m for m in watched if m in sys.modules)))
"""


def loaded(
    imports: str, runs: list[list[str]] | None = None, watched: Sequence[str] = NOT_AT_START
) -> list[str]:
    """Which of ``watched`` a fresh interpreter has loaded after ``imports`` (and, with
    ``runs``, after running each argv through ``app``)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, imports, json.dumps(runs or []), json.dumps(watched)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found: list[str] = json.loads(done.stdout)
    return found


def every_command() -> list[list[str]]:
    """Every command's words (``["runs", "list"]``...), from the app itself."""
    from typer.main import get_command

    from arena_tui.cli import app

    out: list[list[str]] = []

    def walk(cmd: object, words: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if not subs:
            out.append(words)
            return
        for name, sub in subs.items():
            walk(sub, [*words, name])

    walk(get_command(app), [])
    return out


def test_importing_the_arena_cli_loads_none_of_the_heavy_modules() -> None:
    assert loaded("import arena_tui.cli") == []


def test_help_version_and_every_commands_help_load_none_of_them() -> None:
    commands = every_command()
    assert ["replay"] in commands and ["runs", "list"] in commands and ["sweep"] in commands
    runs = [["--help"], ["--version"], *([*words, "--help"] for words in commands)]
    assert loaded("from arena_tui.cli import app", runs) == []


def test_a_command_s_start_loads_its_own_command_module_alone() -> None:
    """``arena import ...`` does not import the host's, the season's or the replay's command
    modules (asyncio, the host's checkpoints...): each is loaded when its command runs."""
    from arena_tui.cli import COMMANDS

    modules = sorted({module for module, _, _ in COMMANDS.values()})
    assert loaded("import arena_tui.cli", watched=modules) == []
    app = "from arena_tui.cli import app"
    runs = [["import", "hftbacktest", "--help"]]
    assert loaded(app, runs, modules) == ["arena_tui.commands.imports"]
    assert loaded(app, [["--version"]], modules) == []
    assert loaded(app, [["--help"]], modules) == modules  # (it lists every command's help)


def test_arena_tui_help_loads_none_of_them() -> None:
    assert loaded("from arena_tui.tui.cli import cli as app", [["--help"]]) == []


@pytest.mark.parametrize(
    ("imports", "heavy"),
    [
        ("import arena_tui.logs.daykeep", "numpy"),
        ("import arena_tui.run.twins", "arena_tui.logs.daycache"),
        ("from arena_tui.commands.replay import replay_command", None),
    ],
)
def test_the_probe_sees_a_heavy_import(imports: str, heavy: str | None) -> None:
    """The check can fail: a module that does bring numpy (or the day cache) is seen."""
    found = loaded(imports)
    assert (heavy in found) if heavy else found == []


def test_the_defaults_written_beside_their_options_are_their_homes_values() -> None:
    """Option defaults copied into a command (their home module is heavy) are the same."""
    from arena_tui.commands import fetch, synth
    from arena_tui.record import fetch as record_fetch
    from arena_tui.synth import generate, walk

    assert fetch.PRICE_PER_GB == record_fetch.PRICE_PER_GB
    assert synth.DEFAULT_START == generate.DEFAULT_START
    assert synth.REGIMES_MODEL == walk.REGIMES_MODEL
    assert synth.LEAD == walk.LEAD
    assert synth.MEAN_HOLD_S == walk.MEAN_HOLD_S


def test_a_replay_without_a_report_loads_none_of_the_reports_modules(tmp_path: Path) -> None:
    """``arena replay LOG`` (and ``--json``, ``--fills``) scores the log and needs nothing of
    the report (its verdict brings the twins' runner and the day cache, with numpy); with
    ``--out DIR`` it writes one and loads them."""
    sample = str(ROOT / "recordings" / "sample-btc-20250126.jsonl")
    fills = str(tmp_path / "fills.jsonl")
    found = loaded(
        "from arena_tui.cli import app", [["replay", sample, "--json", "--fills", fills]]
    )
    assert "arena_tui.run.replay" in found  # it did replay
    assert [m for m in found if m.startswith("arena_tui.report") or m == "numpy"] == []
    out = str(tmp_path / "report")
    found = loaded("from arena_tui.cli import app", [["replay", sample, "--out", out]])
    assert "arena_tui.report.render" in found and "arena_tui.report.verdict" in found
