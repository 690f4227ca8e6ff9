"""One run config: every run command maps its options to it, the runners take it whole, a
run directory keeps it (``config.json``) and ``--config`` repeats the run from it alone,
to the byte; ``arena sweep show`` is a command of its own."""

from __future__ import annotations

import json
import shlex
import signal
import sys
from functools import partial
from pathlib import Path

import pytest

from arena_tui.host.lockstep_run import THINK
from arena_tui.run.config import (
    CONFIG_FILE,
    DEFAULT_HOOK_TIMEOUT_S,
    DEFAULT_TWINS,
    ConfigError,
    LiveConfig,
    LockstepConfig,
    RunConfig,
    encode_config,
    read_config,
    write_config,
)
from arena_tui.run.hooks import DEFAULT_TIMEOUT_S
from arena_tui.run.paper import paper_config, prepare_paper
from arena_tui.run.twins import TWINS
from arena_tui.sweep.driver import run_config
from arena_tui.sweep.jobs import DayFile, Job, Variant
from tests.clirun import ROOT, arena, arena_here, arena_running, one_error_line, until
from tests.fakehl import FakeHL
from tests.paperkit import arena_type, lines, running_season, write_taker

SAMPLE = ROOT / "recordings" / "sample-btc-20250126.jsonl"
MOMENTUM = ROOT / "strategies" / "momentum.py"


def test_the_defaults_are_the_runners_own() -> None:
    assert DEFAULT_TWINS == TWINS
    assert DEFAULT_HOOK_TIMEOUT_S == DEFAULT_TIMEOUT_S
    assert set(THINK) == {"zero", "measured"}


def test_a_config_reads_back_whole(tmp_path: Path) -> None:
    config = RunConfig(
        kind="lockstep",
        logs=("a.jsonl", "b.jsonl.gz"),
        season="s.toml",
        vs="baselines",
        latency_ms=7,
        seed=3,
        hook_timeout_s=0.5,
        run_log="full",
        lockstep=LockstepConfig(names=("alice", "bob"), think="measured", port=8123),
        epoch="1h",
        twins=5,
    )
    path = write_config(config, tmp_path)
    assert path == tmp_path / CONFIG_FILE
    assert read_config(path) == config
    assert read_config(tmp_path) == config  # a run directory names its config
    assert path.read_bytes() == encode_config(config)
    paper = RunConfig(kind="paper", strategy="x.py", live=LiveConfig(coins=("BTC",), hours=2))
    assert read_config(write_config(paper, tmp_path)) == paper


def test_a_bad_config_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        read_config(tmp_path / "none.json")
    (tmp_path / CONFIG_FILE).write_text('{"kind": "backtest", "speed": 2}')
    with pytest.raises(ConfigError, match="not a run config"):
        read_config(tmp_path)


def backtest(*args: str) -> str:
    done = arena_here("backtest", *args, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_backtest_repeated_from_its_config_is_the_same_to_the_byte(tmp_path: Path) -> None:
    first, again = tmp_path / "first", tmp_path / "again"
    args = [str(MOMENTUM), str(SAMPLE), "--vs", "baselines", "--seed", "4", "--latency-ms", "3"]
    said = backtest(*args, "--twins", "5", "--out", str(first), "--json")
    config = read_config(first)
    assert config.kind == "backtest" and config.strategy == str(MOMENTUM)
    assert config.logs == (str(SAMPLE),) and config.vs == "baselines"
    assert (config.seed, config.latency_ms, config.twins) == (4, 3, 5)
    assert config.out is None and not config.force and config.run_log == "thin"

    # its own directory holds its run: refused, as a second run there is
    refused = arena_here("backtest", "--config", str(first / CONFIG_FILE), cwd=ROOT)
    assert "already holds a run" in one_error_line(refused)

    assert backtest("--config", str(first / CONFIG_FILE), "--out", str(again), "--json") == said
    for name in ("report.json", "ranking.json", "fills.csv", "fills.jsonl", CONFIG_FILE):
        assert (again / name).read_bytes() == (first / name).read_bytes(), name
    report = json.loads((again / "report.json").read_text())
    assert (
        report["replay"]["fills_sha256"]
        == json.loads((first / "ranking.json").read_text())["fills_sha256"]
    )
    assert read_config(again) == config


def test_a_config_names_the_strategy_that_ran_so_it_repeats_from_anywhere(
    tmp_path: Path,
) -> None:
    """A strategy given by a path relative to the builder's directory is kept as the file
    loaded: repeated from another directory, the same file runs (not a missing one, nor
    another file of the same relative name there)."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    (elsewhere / "strategies").mkdir(parents=True)
    (home / "strategies").mkdir(parents=True)
    (home / "strategies" / "mine.py").write_bytes(MOMENTUM.read_bytes())
    # the same relative name, another strategy: what a relative path would pick up
    (elsewhere / "strategies" / "mine.py").write_text(
        "from arena_tui.strategy import Strategy\n\nclass Idle(Strategy):\n    pass\n"
    )
    (home / "strategies" / "rival.py").write_bytes(MOMENTUM.read_bytes())
    args = ["strategies/mine.py", str(SAMPLE), "--vs", "baselines,strategies/rival.py:rival"]
    args += ["--twins", "0", "--json"]
    first = arena_here("backtest", *args, "--out", str(home / "run"), cwd=home)
    assert first.returncode == 0, first.stderr
    ran = str((home / "strategies" / "mine.py").resolve())
    assert read_config(home / "run").strategy == ran
    rival = (home / "strategies" / "rival.py").resolve()
    assert read_config(home / "run").vs == f"baselines,{rival}:rival"
    again = arena_here(
        "backtest", "--config", str(home / "run"), "--out", "again", "--json", cwd=elsewhere
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout)
    assert (elsewhere / "again" / "report.json").read_bytes() == (
        home / "run" / "report.json"
    ).read_bytes()


def test_options_beside_config_replace_its_values(tmp_path: Path) -> None:
    first = tmp_path / "first"
    backtest(str(MOMENTUM), str(SAMPLE), "--twins", "0", "--out", str(first))
    backtest("--config", str(first), "--seed", "9", "--force", "--full-log", "--twins", "0")
    config = read_config(first)
    assert (config.seed, config.run_log, config.force) == (9, "full", False)
    assert config.strategy == str(MOMENTUM)  # what was not given is the config's


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([str(MOMENTUM)], "names what runs: no STRATEGY with it"),
        (["--from", "2025-01-26"], "names what runs: no --from with it"),
        (["--agent", "x"], "names what runs: no --agent with it"),
    ],
)
def test_what_runs_is_not_given_beside_config(tmp_path: Path, args: list[str], said: str) -> None:
    write_config(RunConfig(strategy=str(MOMENTUM), logs=(str(SAMPLE),)), tmp_path)
    done = arena_here("backtest", "--config", str(tmp_path), *args, cwd=ROOT)
    assert said in one_error_line(done)


def test_a_config_is_repeated_by_its_own_command(tmp_path: Path) -> None:
    write_config(RunConfig(strategy=str(MOMENTUM), logs=(str(SAMPLE),)), tmp_path / "")
    paper = arena_here("paper", "--config", str(tmp_path), cwd=ROOT)
    assert "a run of arena backtest: repeat it with arena backtest --config" in one_error_line(
        paper
    )
    write_config(paper_config(MOMENTUM, coins=("BTC",)), tmp_path)
    done = arena_here("backtest", "--config", str(tmp_path), cwd=ROOT)
    assert "a run of arena paper: repeat it with arena paper --config" in one_error_line(done)
    write_config(RunConfig(kind="lockstep", logs=(str(SAMPLE),)), tmp_path)
    done = arena_here("backtest", "--config", str(tmp_path), cwd=ROOT)
    assert "arena host --lockstep" in one_error_line(done)


def test_without_config_strategy_is_still_required() -> None:
    done = arena_here("backtest", cwd=ROOT)
    assert done.returncode == 2 and "Missing argument 'STRATEGY'" in done.stderr
    done = arena_here("paper", cwd=ROOT)
    assert done.returncode == 2 and "Missing argument 'STRATEGY'" in done.stderr


def test_a_paper_run_keeps_its_config(tmp_path: Path) -> None:
    season = running_season(tmp_path / "season.json")
    config = paper_config(write_taker(tmp_path / "taker.py"), season=season, out=tmp_path / "run")
    bt, _ = prepare_paper(config)
    bt.log.close()
    kept = read_config(tmp_path / "run")
    assert kept == config.kept() == config.replace(out=None)
    assert kept.kind == "paper" and kept.live_part() == LiveConfig()


def test_a_sweep_job_takes_what_it_shares_from_the_run_config() -> None:
    from arena_tui.sweep.config import Config

    cfg = Config(strategy=str(MOMENTUM), days=[], param_items=[], file_params={}, seed=5)
    cfg = Config(**{**cfg.__dict__, "latency_ms": 12})
    shared = run_config(cfg)
    day = DayFile(str(SAMPLE), 1, "ab")
    job = Job.of(shared, day, [Variant("m", {})], control=False, epoch="30m")
    assert job == Job(str(MOMENTUM), day, [Variant("m", {})], False, None, 12, 5, "30m")
    back = job.config()
    assert (back.strategy, back.logs, back.latency_ms, back.seed) == (
        str(MOMENTUM),
        (str(SAMPLE),),
        12,
        5,
    )


def test_sweep_show_is_a_command_of_its_own(tmp_path: Path) -> None:
    shown = arena_here("sweep", "show", "--help", cwd=ROOT)
    assert shown.returncode == 0
    assert "Usage: arena sweep show [OPTIONS] [DIR]" in " ".join(shown.stdout.split())
    assert "Print a finished sweep again" in shown.stdout
    main = arena_here("sweep", "--help", cwd=ROOT)
    assert "Usage: arena sweep [OPTIONS] [STRATEGY] [DAYS...]" in " ".join(main.stdout.split())
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in (["show", str(empty)], ["--json", "show", str(empty)]):
        assert "not a sweep directory" in one_error_line(arena_here("sweep", *args, cwd=ROOT))
    assert "takes one sweep directory" in one_error_line(arena_here("sweep", "show", cwd=ROOT))
    late = arena_here("sweep", "--out", str(empty), "show", str(empty), cwd=ROOT)
    assert "give it first" in one_error_line(late)


def test_a_lockstep_run_repeated_from_its_config(tmp_path: Path) -> None:
    first, again = tmp_path / "first", tmp_path / "again"
    agent = f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'strategies/http_agent.py'))}"
    done = arena("backtest", "--agent", agent, str(SAMPLE), "--out", str(first), "--json")
    assert done.returncode == 0, done.stderr
    config = read_config(first)
    assert config.kind == "lockstep" and config.lockstep_part().command == agent
    assert config.logs == (str(SAMPLE),) and config.strategy is None
    repeated = arena("backtest", "--config", str(first), "--out", str(again), "--json")
    assert repeated.returncode == 0, repeated.stderr
    assert repeated.stdout == done.stdout
    for name in ("report.json", "ranking.json", "fills.csv"):
        assert (again / name).read_bytes() == (first / name).read_bytes(), name


def test_arena_paper_repeats_a_paper_run_from_its_config(tmp_path: Path) -> None:
    out, again = tmp_path / "run", tmp_path / "again"
    season = running_season(tmp_path / "season.json")
    strategy = write_taker(tmp_path / "taker.py")
    with FakeHL() as srv:
        feed = ["--ws-url", srv.ws_url, "--info-url", srv.info_url, "--retry-base-ms", "2"]
        for tmp, args in (
            (tmp_path / "a", [str(strategy), "--season", str(season), "--out", str(out)]),
            (tmp_path / "b", ["--config", str(out / CONFIG_FILE), "--out", str(again)]),
        ):
            tmp.mkdir()
            where = Path(args[args.index("--out") + 1]) / "run.jsonl"
            with arena_running(tmp, "paper", *feed, *args, "--json") as proc:
                until(partial(ticked, where), "two ticks in the run log")
                proc.send_signal(signal.SIGINT)
                assert proc.wait(30) == 0, (tmp / "err.txt").read_text()
    kept = read_config(out)
    assert kept.kind == "paper" and kept.strategy == str(strategy)
    assert kept.season == str(season) and kept.live_part().ws_url == srv.ws_url
    assert (again / CONFIG_FILE).read_bytes() == (out / CONFIG_FILE).read_bytes()
    first, second = (json.loads(lines_of(d)[0]) for d in (out, again))
    assert first == second  # the header: the same season, entries, feed


def ticked(run_log: Path) -> bool:
    """Two ticks in ``run_log`` (the run is trading)."""
    try:
        return sum(arena_type(r) == "tick" for r in lines(run_log)) >= 2
    except (OSError, ValueError):
        return False


def lines_of(run_dir: Path) -> list[str]:
    return (run_dir / "run.jsonl").read_text().splitlines()
