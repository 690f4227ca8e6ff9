"""The baselines on the shipped synthetic sample, as a newcomer runs them first.

One backtest of the four baselines over the 6-hour sample (shared by the tests here), then:
each trades, none is refused for the cap or the order slots (they plan with the engine's
own headroom and count what is in flight), the maker's cancels release its reserve, and
the run log replays to the same ranking.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arena_tui.run.backtest import Backtest
from arena_tui.run.loader import BASELINES, baseline_path, entry_name, load_strategy
from arena_tui.run.parts import BacktestResult, Entrant
from arena_tui.season.file import resolve_season
from arena_tui.util.jsonout import dumps
from engine import events as ev
from tests.clirun import ROOT, arena

SAMPLE = ROOT / "recordings" / "synth-3coins-20261201.jsonl.gz"
AVOIDABLE = {"PositionCapExceeded", "TooManyOpenOrders"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[BacktestResult, list[ev.AnyEvent]]:
    out = tmp_path_factory.mktemp("baselines")
    entrants = [Entrant(b, load_strategy(baseline_path(b)), baseline_path(b)) for b in BASELINES]
    events: list[ev.AnyEvent] = []
    bt = Backtest(
        resolve_season([str(SAMPLE)], None),
        entrants,
        run_log=out / "run.jsonl",
        on_event=events.append,
    )
    result = bt.run([str(SAMPLE)])
    return result, events


@pytest.mark.parametrize("name", BASELINES)
def test_each_baseline_trades_and_is_never_refused_for_cap_or_slots(
    run: tuple[BacktestResult, list[ev.AnyEvent]], name: str
) -> None:
    result, _ = run
    stats = next(e.stats for e in result.entrants if e.name == name)
    assert len(stats.fills) > 0, f"{name} never filled on the sample"
    refused = {r: n for r, n in stats.rejections.items() if r in AVOIDABLE}
    assert not refused, f"{name} was refused {refused}"


def test_the_makers_cancels_release_its_reserve(
    run: tuple[BacktestResult, list[ev.AnyEvent]],
) -> None:
    """Each Cancelled close of the maker frees exactly the reserve its Accepted took."""
    _, events = run
    reserve: dict[int, int] = {}
    held = freed = cancelled = 0
    for e in events:
        if isinstance(e, ev.Accepted) and e.entry == "maker":
            reserve[e.oid] = e.reserve
            held += e.reserve
        elif isinstance(e, ev.Closed) and e.entry == "maker":
            freed += reserve.pop(e.oid)
            cancelled += e.reason == "Cancelled"
    assert cancelled > 100  # it requotes all day
    assert held - freed == sum(reserve.values())  # what is still open holds the rest
    assert sum(reserve.values()) <= 12 * 10**8 * 10  # never above the cap's 12% of ~$10k


def test_the_run_log_replays_to_the_same_ranking(
    run: tuple[BacktestResult, list[ev.AnyEvent]],
) -> None:
    result, _ = run
    assert result.run_log is not None
    done = arena("replay", str(result.run_log), "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == dumps(result.replay.to_json())


def test_the_control_against_itself_under_another_seed_is_luck(tmp_path: Path) -> None:
    """A copy of the control (another entry name, so another random stream) does not
    beat the control, block by block over the six hours."""
    mine = tmp_path / "my_control.py"
    shutil.copy(baseline_path("control_random"), mine)
    out = tmp_path / "out"
    done = arena(
        "backtest", str(mine), str(SAMPLE), "--vs", "strategies/control_random.py",
        "--epoch", "30m", "--out", str(out), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    verdict = report["verdict"]
    assert (verdict["strategy"], verdict["control"]) == (entry_name(mine), "control_random")
    assert verdict["paired_blocks"] == 12
    assert verdict["verdict"] == "indistinguishable", verdict
