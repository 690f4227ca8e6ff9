"""A new user's slips on the command line, each one line that says what was probably meant.

``--vs baseline`` (for ``baselines``), a strategy file's name mistyped, a baseline named
without its file, STRATEGY and LOG given the wrong way round (to ``arena backtest``,
``arena sweep``, a strategy to ``arena replay``): never "no such strategy file" alone, nor
the bad header the log reader would stop at. The commands run in this process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clirun import ROOT, arena_here, one_error_line

SAMPLE = "recordings/sample-btc-20250126.jsonl"
MOMENTUM = "strategies/momentum.py"


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the paths below are as a user in a clone types them


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            [MOMENTUM, SAMPLE, "--vs", "baseline"],
            "baseline: no such strategy file (did you mean --vs baselines (all four)?)",
        ),
        (
            [MOMENTUM, SAMPLE, "--vs", "maker"],
            "maker: no such strategy file (did you mean strategies/maker.py (or --vs "
            "baselines for all four)?)",
        ),
        (
            ["strategies/momentm.py", SAMPLE],
            "strategies/momentm.py: no such strategy file (did you mean strategies/momentum.py?)",
        ),
        (
            [MOMENTUM, SAMPLE, "--vs", "strategies/makr.py"],
            "strategies/makr.py: no such strategy file (did you mean strategies/maker.py?)",
        ),
        (
            ["momentum", SAMPLE],
            "momentum: no such strategy file (did you mean strategies/momentum.py?)",
        ),
        (["nothing_like_it.py", SAMPLE], "nothing_like_it.py: no such strategy file"),
    ],
)
def test_a_strategy_not_found_says_what_it_may_have_meant(
    args: list[str], said: str, tmp_path: Path
) -> None:
    line = one_error_line(arena_here("backtest", *args, "--out", str(tmp_path / "o")))
    assert line == f"arena: error: {said}"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["backtest", SAMPLE, MOMENTUM],
            f"{SAMPLE} is a log, not a strategy file: did you swap STRATEGY and LOG? "
            "(arena backtest STRATEGY LOG...)",
        ),
        (
            [
                "backtest",
                "recordings/synth-3coins-20261201.jsonl.gz",
                MOMENTUM,
                "--vs",
                "baselines",
            ],
            "synth-3coins-20261201.jsonl.gz is a log, not a strategy file: did you swap",
        ),
        (
            ["backtest", "runs-thin.out", MOMENTUM],  # a log by its first bytes, whatever its name
            "runs-thin.out is a log, not a strategy file: did you swap STRATEGY and LOG?",
        ),
        (
            ["backtest", MOMENTUM, SAMPLE, "strategies/maker.py"],
            "strategies/maker.py is a Python file, not a log: did you swap STRATEGY and LOG?",
        ),
        (
            ["sweep", "recordings", MOMENTUM, "--param", "window_ms=60000,120000"],
            "recordings is a directory of logs, not a strategy file: did you swap STRATEGY and "
            "LOG? (arena sweep STRATEGY DAYS... --param NAME=SPEC)",
        ),
        (
            ["replay", MOMENTUM],
            f"{MOMENTUM}: a Python file (a strategy?), not a log: arena backtest {MOMENTUM} LOG...",
        ),
    ],
)
def test_strategy_and_log_the_wrong_way_round_say_so(
    args: list[str], said: str, tmp_path: Path
) -> None:
    if "runs-thin.out" in args:
        renamed = tmp_path / "runs-thin.out"
        renamed.write_bytes((ROOT / SAMPLE).read_bytes())
        args = [str(renamed) if a == "runs-thin.out" else a for a in args]
    out = [] if args[0] == "replay" else ["--out", str(tmp_path / "o")]
    line = one_error_line(arena_here(*args, *out))
    assert said in line, line
    assert "bad header" not in line
    assert not (tmp_path / "o").exists()


def test_the_docs_paths_work_from_the_builders_own_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/strategies.md says: save my_strategy.py, then run it on
    recordings/synth-3coins-20261201.jsonl.gz --vs baselines. In the builder's own
    directory there is no recordings/ nor strategies/: arena reads its own copies and says
    so, one line each, instead of "no such file"."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "my_strategy.py").write_text(
        "from arena_tui.strategy import Strategy\n\n\nclass Mine(Strategy):\n    pass\n"
    )
    done = arena_here(
        "backtest", "my_strategy.py", SAMPLE, "--vs", f"{MOMENTUM}:m2", "--twins", "0", "--json"
    )
    assert done.returncode == 0, done.stderr
    assert f"arena: {SAMPLE}: not in this directory; reading arena's own: {ROOT / SAMPLE}" in (
        done.stderr.splitlines()
    )
    assert f"arena: {MOMENTUM}: not in this directory; running arena's own: {ROOT / MOMENTUM}" in (
        done.stderr.splitlines()
    )
    assert not (tmp_path / "recordings").exists()
    (tmp_path / "recordings").mkdir()  # the builder's own file of that name is theirs
    (tmp_path / SAMPLE).write_bytes((ROOT / SAMPLE).read_bytes())
    own = arena_here("backtest", "my_strategy.py", SAMPLE, "--twins", "0", "--json")
    assert own.returncode == 0, own.stderr
    assert "not in this directory" not in own.stderr
