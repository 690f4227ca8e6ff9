"""The baselines on the shipped synthetic sample, as a newcomer runs them first.

One backtest of the four baselines over the 6-hour sample (shared by the tests here), then:
each trades, none is refused for the cap or the order slots (they plan with the engine's
own headroom and count what is in flight), the maker's cancels release its reserve, the
engine's reserve for the maker stays within 12% of its equity after every event, and the
run log replays to the same ranking.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.loader import BASELINES, baseline_path, entry_name, load_strategy
from arena_tui.run.parts import BacktestResult, Entrant
from arena_tui.season.file import resolve_season
from arena_tui.util.jsonout import dumps
from engine import events as ev
from tests.clirun import ROOT, arena

SAMPLE = ROOT / "recordings" / "synth-3coins-20261201.jsonl.gz"
AVOIDABLE = {"PositionCapExceeded", "TooManyOpenOrders"}


@dataclass
class Held:
    """The maker's account as the engine had it before a log input (every earlier input
    applied, and every event of theirs delivered)."""

    t: int  # the time of the log input about to be applied
    seen: int  # how many events were delivered before it
    reserved: int  # the engine's own counter
    open_reserves: int  # the reserves of its open non-reduce-only orders, summed here
    equity: int


@dataclass
class BaselineRun:
    result: BacktestResult
    events: list[ev.AnyEvent]
    maker: list[Held]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> BaselineRun:
    out = tmp_path_factory.mktemp("baselines")
    entrants = [Entrant(b, load_strategy(baseline_path(b)), baseline_path(b)) for b in BASELINES]
    events: list[ev.AnyEvent] = []
    maker: list[Held] = []
    bt = Backtest(
        RunConfig(run_log="full", cache=False),
        resolve_season([str(SAMPLE)], None),
        entrants,
        run_dir=out,
        on_event=events.append,
    )

    def look(t: int) -> bool:  # called before each log input
        acct = bt.engine.accounts.get("maker")
        if acct is not None:
            held = sum(o.reserve for o in acct.orders.values() if not o.reduce_only)
            equity = acct.equity(bt.engine.assets)
            maker.append(Held(t, len(events), acct.reserved, held, equity))
        return True

    result = bt.run([str(SAMPLE)], pace=look)
    return BaselineRun(result, events, maker)


@pytest.mark.parametrize("name", BASELINES)
def test_each_baseline_trades_and_is_never_refused_for_cap_or_slots(
    run: BaselineRun, name: str
) -> None:
    stats = next(e.stats for e in run.result.entrants if e.name == name)
    assert len(stats.fills) > 0, f"{name} never filled on the sample"
    refused = {r: n for r, n in stats.rejections.items() if r in AVOIDABLE}
    assert not refused, f"{name} was refused {refused}"


def test_the_makers_cancels_release_its_reserve(run: BaselineRun) -> None:
    """Each Cancelled close of the maker frees exactly the reserve its Accepted took: what
    its events leave open is what the engine holds for it, before every log input."""
    reserve: dict[int, int] = {}
    cancelled = seen = 0
    for held in run.maker:
        for e in run.events[seen : held.seen]:
            if isinstance(e, ev.Accepted) and e.entry == "maker":
                reserve[e.oid] = e.reserve  # 0 for a reduce-only order
            elif isinstance(e, ev.Closed) and e.entry == "maker":
                reserve.pop(e.oid)
                cancelled += e.reason == "Cancelled"
        seen = held.seen
        assert held.reserved == held.open_reserves == sum(reserve.values()), held
    assert cancelled > 100  # it requotes all day


def test_the_makers_reserve_never_exceeds_12_percent_of_its_equity(run: BaselineRun) -> None:
    """The engine's own reserved amount for the maker, before every log input of the six
    hours, within the position cap: 12% of its equity then (about $1,200 of $10,000)."""
    assert len(run.maker) > 10_000
    for held in run.maker:
        assert max(held.reserved, held.open_reserves) * 100 <= held.equity * 12, held
    # it quotes close to the cap: the bound is not met by accident
    assert max(h.reserved * 100 / (h.equity * 12) for h in run.maker) > 0.5


def test_the_run_log_replays_to_the_same_ranking(run: BaselineRun) -> None:
    result = run.result
    assert result.run_log is not None
    done = arena("replay", str(result.run_log), "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == dumps(result.replay.to_json())


def test_the_control_against_itself_under_another_seed_is_luck(tmp_path: Path) -> None:
    """A copy of the control (another entry name, so another random stream) does not
    beat the control, block by block over the six hours; its twins repeat its trading
    (whatever they say of its timing: its exits, read from the price, may really beat
    random holds on this market, which has trends and overshoots)."""
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
    assert verdict["floor"]["paired_blocks"] == 12
    assert verdict["floor"]["answer"] == "indistinguishable", verdict["floor"]
    skill = verdict["skill"]
    assert skill["answer"] in {"luck", "skill", "worse_than_twins"}, skill["text"]
    match = skill["match"]
    assert 2 * match["fills"] <= 3 * match["twin_fills_median"] <= 9 * match["fills"] // 2
