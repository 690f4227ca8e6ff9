"""A log cut anywhere in its header line is one error line in every command that reads it.

A small backtest writes a thin run log and a full one; each is cut at every byte offset of
its header line (plain, compressed after the cut, and its compressed form cut), and
``arena replay``, ``arena backtest`` and ``arena logs check`` each read every cut: one
``arena: error:`` line naming the file, exit status 1, never a traceback. The commands run
in this process (``arena_here``: the console script's ``run_cli``), so the few thousand
of them take a second or two.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from arena_tui.run.backtest import Backtest
from arena_tui.run.build import entrants_for
from arena_tui.run.config import RunConfig
from arena_tui.season.file import resolve_season, season_doc
from tests.clirun import ROOT, arena_here
from tests.market import market_rows, write_log

MOMENTUM = str(ROOT / "strategies" / "momentum.py")


def run(*args: str) -> tuple[int, str]:
    """``arena ARGS`` in this process: its exit status and its stderr."""
    done = arena_here(*args)
    return done.returncode, done.stderr


@pytest.fixture(scope="module")
def run_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The thin and the full run log of one short momentum backtest, and its season."""
    tmp = tmp_path_factory.mktemp("cut")
    market = str(write_log(tmp / "m.jsonl", market_rows(minutes=3)))
    season = resolve_season([market], None)
    logs = {"season": json.dumps(season_doc(season)).encode()}  # found beside a log
    for form in ("thin", "full"):
        log = tmp / form / "run.jsonl"
        Backtest(
            RunConfig(logs=(market,), run_log="thin" if form == "thin" else "full", cache=False),
            season,
            entrants_for(Path(MOMENTUM), None),
            run_dir=log.parent,
        ).run([market])
        logs[form] = log.read_bytes()
    assert logs["thin"].startswith(b'{"arena_run":1,') and logs["full"].startswith(
        b'{"arena_log":1,'
    )
    return logs


def cuts(data: bytes, packing: str) -> list[bytes]:
    """Every cut inside line 1 (its newline not reached): of the plain file, gzipped after
    the cut, or of the gzipped file, inside the bytes that carry line 1."""
    line = data.index(b"\n")
    if packing == "plain":
        return [data[:n] for n in range(line + 1)]
    if packing == "cut then gzipped":
        return [gzip.compress(data[:n], mtime=0) for n in range(line + 1)]
    whole = gzip.compress(data, mtime=0)
    return [whole[:n] for n in range(len(gzip.compress(data[: line + 1], mtime=0)))]


COMMANDS: dict[str, Callable[[str, Path], tuple[str, ...]]] = {
    "replay": lambda log, tmp: ("replay", log),
    "backtest": lambda log, tmp: ("backtest", MOMENTUM, log, "--out", str(tmp / "out")),
    "logs check": lambda log, tmp: ("logs", "check", log),
}


@pytest.mark.parametrize("packing", ["plain", "cut then gzipped", "gzipped then cut"])
@pytest.mark.parametrize("form", ["thin", "full"])
def test_every_cut_of_a_header_line_is_one_error_line(
    form: str, packing: str, run_logs: dict[str, bytes], tmp_path: Path
) -> None:
    log = tmp_path / ("c.jsonl" if packing == "plain" else "c.jsonl.gz")
    for data in cuts(run_logs[form], packing):
        log.write_bytes(data)
        for command, args in COMMANDS.items():
            code, err = run(*args(str(log), tmp_path))
            what = f"{command} of {log.name} cut to {len(data)} bytes"
            assert code == 1, f"{what}: exit {code}, {err}"
            lines = err.splitlines()
            assert len(lines) == 1 and lines[0].startswith("arena: error: "), f"{what}: {err}"
            assert str(log) in lines[0], f"{what}: {err}"
    assert not (tmp_path / "out").exists()  # a refused backtest leaves no run behind


def test_a_cut_header_says_so(tmp_path: Path) -> None:
    log = tmp_path / "c.jsonl"
    log.write_bytes(b'{"arena_run":1,"header":{"a')
    for command, args in COMMANDS.items():
        code, err = run(*args(str(log), tmp_path))
        assert code == 1, command
        assert "ends inside its header line (27 bytes, no newline)" in err, (command, err)
    log.write_bytes(b"")
    assert "empty log: no header line" in run("replay", str(log))[1]


def test_a_thin_run_log_compressed_afterwards_replays_as_the_plain_one(
    run_logs: dict[str, bytes], tmp_path: Path
) -> None:
    plain, packed = tmp_path / "run.jsonl", tmp_path / "run.jsonl.gz"
    plain.write_bytes(run_logs["thin"])
    packed.write_bytes(gzip.compress(run_logs["thin"]))
    (tmp_path / "backtest.json").write_bytes(run_logs["season"])
    outs = [arena_here("replay", str(path), "--json") for path in (plain, packed)]
    assert outs[0].returncode == outs[1].returncode == 0, outs[1].stderr
    assert outs[0].stdout == outs[1].stdout and '"log_sha256"' in outs[0].stdout
