"""The backtest runner and the strategy API, on small hand-built markets.

Each test writes a recording (books, prints and asset contexts built with ``tests.build``)
and strategy files into ``tmp_path``, runs the backtest the way ``arena backtest`` does
(``Backtest.run``) or as the real command, and checks what the engine did.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.loader import StrategyError, entry_name, load_strategy
from arena_tui.run.parts import BacktestError, Entrant
from arena_tui.run.replay import replay
from arena_tui.season.file import resolve_season
from arena_tui.util.jsonout import dumps
from engine import Season
from engine.events import Reason
from tests import build
from tests.clirun import ROOT, arena
from tests.market import market_rows, write_log

T0 = build.T0
MIN = build.MIN


def write_strategy(path: Path, body: str) -> Path:
    path.write_text(
        "from arena_tui.strategy import ALO, GTC, IOC, Context, Strategy\n"
        "from engine import events as ev\n\n" + body,
        encoding="utf-8",
    )
    return path


def season_of(log: Path) -> Season:
    return resolve_season([str(log)], None)


def run(
    tmp_path: Path, strategies: dict[str, str], rows: list[dict[str, Any]] | None = None, **kw: Any
) -> tuple[Backtest, Any, Path]:
    log = write_log(tmp_path / "market.jsonl", rows if rows is not None else market_rows())
    entrants = []
    for name, body in strategies.items():
        path = write_strategy(tmp_path / f"{name}.py", body)
        entrants.append(Entrant(entry_name(path), load_strategy(path), path))
    season = season_of(log)
    bt = Backtest(RunConfig(run_log="full", cache=False, **kw), season, entrants, run_dir=tmp_path)
    return bt, bt.run([str(log)]), log


BUY_ONCE = """
class BuyOnce(Strategy):
    def __init__(self):
        self.sent = False
        self.events = []

    def on_book(self, ctx: Context, book) -> None:
        if not self.sent and book.coin == "BTC":
            self.sent = True
            # $20 through the ask: it activates on the book 5 s later, $5 higher.
            # 0.01 BTC at $100k is $1,000: within 12% of $10,000.
            ctx.order(ctx.asset_of("BTC"), True, book.best_ask_e8 + 20 * 10**8, 1_000_000,
                      False, IOC)

    def on_event(self, ctx: Context, event) -> None:
        self.events.append((ctx.t, event))
"""


def test_run_log_replays_to_the_same_ranking_byte_for_byte(tmp_path: Path) -> None:
    _, result, _ = run(tmp_path, {"buyer": BUY_ONCE})
    assert result.replay.fills > 0
    again = replay(
        [str(tmp_path / "run.jsonl")], resolve_season([str(tmp_path / "run.jsonl")], None)
    )
    assert dumps(again.to_json()) == dumps(result.replay.to_json())


def test_registration_at_start_before_the_first_input_at_or_after_it(tmp_path: Path) -> None:
    bt, _, _ = run(tmp_path, {"buyer": BUY_ONCE})
    lines = (tmp_path / "run.jsonl").read_bytes().splitlines()
    header = json.loads(lines[0])
    assert header["season"] == bt.season.id and header["start"] == bt.season.start
    rows = [json.loads(x) for x in lines[1:]]
    i = next(i for i, r in enumerate(rows) if "arena" in r)
    assert rows[i] == {"t": bt.season.start, "arena": {"type": "register", "entry": "buyer"}}
    assert all(r["t"] < bt.season.start for r in rows[:i])
    assert rows[i + 1]["t"] >= bt.season.start


def test_order_is_stamped_with_the_handled_input_time_plus_latency(tmp_path: Path) -> None:
    for latency in (0, 1500):
        d = tmp_path / str(latency)
        d.mkdir()
        bt, _, _ = run(d, {"buyer": BUY_ONCE}, latency_ms=latency)
        rows = [json.loads(x) for x in (d / "run.jsonl").read_bytes().splitlines()[1:]]
        order_i = next(i for i, r in enumerate(rows) if r.get("arena", {}).get("type") == "order")
        # the first BTC book at or after the start is the input the strategy handled
        book_t = next(
            r["t"]
            for r in rows
            if r["t"] >= bt.season.start and r.get("hl", {}).get("channel") == "l2Book"
        )
        assert rows[order_i]["t"] == book_t + latency
        # applied after every market input stamped at or before it, before any later one
        assert all(r["t"] <= book_t + latency for r in rows[:order_i])
        assert rows[order_i + 1]["t"] > book_t + latency


def test_strategy_sees_its_fill_and_the_account_as_the_engine_has_it(tmp_path: Path) -> None:
    bt, result, _ = run(tmp_path, {"buyer": BUY_ONCE})
    strat = result.entrants[0].strategy
    kinds = [type(e).__name__ for _, e in strat.events]
    assert kinds[:3] == ["Accepted", "Activated", "Fill"]
    acct = bt.engine.accounts["buyer"]
    assert acct.positions == {0: 1_000_000}
    ctx = result.entrants[0].ctx
    assert ctx.account.position("BTC") == 1_000_000
    assert ctx.account.cash_e6 == acct.cash
    assert ctx.account.equity_e6 == acct.equity(bt.engine.assets)


OVER_CAP = """
class OverCap(Strategy):
    def __init__(self):
        self.reasons = []

    def on_book(self, ctx: Context, book) -> None:
        if not self.reasons and book.coin == "BTC":
            self.reasons.append("sent")
            # 0.02 BTC at $100k = $2,000 > 12% of $10,000: the engine must refuse it
            ctx.buy("BTC", 100_100, "0.02", tif="gtc")

    def on_event(self, ctx: Context, event) -> None:
        if isinstance(event, ev.Rejected):
            self.reasons.append(event.reason)
"""


def test_the_api_cannot_bypass_the_cap(tmp_path: Path) -> None:
    _, result, _ = run(tmp_path, {"over": OVER_CAP})
    assert result.entrants[0].strategy.reasons == ["sent", Reason.PositionCapExceeded]
    assert result.entrants[0].stats.rejections == {"PositionCapExceeded": 1}


IN_FLIGHT = """
class Plans(Strategy):
    def __init__(self):
        self.seen = []

    def on_start(self, ctx: Context) -> None:
        self.seen.append(("start", ctx.open_slots, ctx.headroom_e6))

    def on_book(self, ctx: Context, book) -> None:
        if book.coin != "BTC" or len(self.seen) > 1:
            return
        before = (ctx.open_slots, ctx.headroom_e6)
        ctx.order(ctx.asset_of("BTC"), True, book.best_bid_e8, 500_000, False, ALO)
        self.seen.append((before, (ctx.open_slots, ctx.headroom_e6), ctx.orders_on("BTC")))
"""


def test_orders_in_flight_count_against_slots_and_headroom(tmp_path: Path) -> None:
    _, result, _ = run(tmp_path, {"plans": IN_FLIGHT})
    seen = result.entrants[0].strategy.seen
    (before_slots, before_room), (after_slots, after_room), on_btc = seen[1]
    assert after_slots == before_slots - 1
    # reserve = notional(max(limit, mark), 0.005 BTC): the mark is above the bid here
    assert 0 < before_room - after_room <= 505 * 10**6
    assert on_btc == 1


RAISES = """
class Boom(Strategy):
    def on_trades(self, ctx: Context, trades) -> None:
        if ctx.t >= ctx.season.start + 90_000:
            raise ZeroDivisionError("the strategy divided by zero")
"""


def test_a_failing_strategy_names_its_file_and_line_and_keeps_the_run_log(
    tmp_path: Path,
) -> None:
    with pytest.raises(StrategyError) as info:
        run(tmp_path, {"boom": RAISES})
    text = str(info.value)
    path = tmp_path / "boom.py"
    line = (
        path.read_text()
        .splitlines()
        .index('            raise ZeroDivisionError("the strategy divided by zero")')
    )
    assert text.startswith(f"{path.resolve()}:{line + 1}: ZeroDivisionError")
    assert "on_trades" in text
    lines = (tmp_path / "run.jsonl").read_bytes().splitlines()
    last_t = json.loads(lines[-1])["t"]
    assert len(lines) > 100 and last_t >= season_of(tmp_path / "market.jsonl").start + 90_000


def test_strategy_file_errors_are_one_line(tmp_path: Path) -> None:
    none = tmp_path / "none.py"
    none.write_text("x = 1\n")
    with pytest.raises(StrategyError, match=r"none\.py: defines no Strategy subclass"):
        load_strategy(none)
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    with pytest.raises(StrategyError, match=r"bad\.py:1: SyntaxError"):
        load_strategy(bad)
    with pytest.raises(StrategyError, match="no such strategy file"):
        load_strategy(tmp_path / "missing.py")


def test_entry_names_must_be_unique_and_free(tmp_path: Path) -> None:
    path = write_strategy(tmp_path / "s.py", BUY_ONCE)
    twice = [Entrant("s", load_strategy(path), path), Entrant("s", load_strategy(path), path)]
    log = write_log(tmp_path / "m.jsonl", market_rows(3))
    with pytest.raises(BacktestError, match="unique"):
        Backtest(RunConfig(cache=False), season_of(log), twice)
    rows = market_rows(3)
    rows.insert(0, build.register(rows[0]["t"], "s"))  # the log already has an entry "s"
    log = write_log(tmp_path / "taken.jsonl", rows)
    bt = Backtest(RunConfig(cache=False), season_of(log), twice[:1])
    with pytest.raises(BacktestError, match="already taken"):
        bt.run([str(log)])


def test_cli_backtest_writes_files_and_replay_agrees(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(20))
    out = tmp_path / "run"
    done = arena(
        "backtest", "strategies/momentum.py", str(log), "--vs", "baselines", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    for name in ("run.jsonl", "ranking.json", "report.json", "fills.csv", "equity.csv"):
        assert (out / name).is_file(), name
    again = arena("replay", str(out / "run.jsonl"), "--json")
    assert again.returncode == 0, again.stderr
    assert again.stdout == (out / "ranking.json").read_text()
    report = json.loads((out / "report.json").read_text())
    names = [e["entry"] for e in report["entries"]]
    assert sorted(names) == ["control_random", "maker", "momentum", "reversion"]
    momentum = next(e for e in report["entries"] if e["entry"] == "momentum")
    assert momentum["fills"]["taker"] > 0  # the market climbs with buyers ahead: it buys


def test_cli_backtest_failing_strategy_is_one_line(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(3))
    strat = write_strategy(tmp_path / "boom.py", RAISES)
    done = arena("backtest", str(strat), str(log), "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    err = [x for x in done.stderr.splitlines() if x.startswith("arena: error:")]
    assert len(err) == 1 and "boom.py:" in err[0] and "ZeroDivisionError" in err[0]
    assert (tmp_path / "out" / "run.jsonl").stat().st_size > 0


def test_the_example_in_docs_strategies_runs(tmp_path: Path) -> None:
    """docs/strategies.md's first example loads, trades on a dip and closes the position."""
    text = (ROOT / "docs" / "strategies.md").read_text(encoding="utf-8")
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "dip.py"
    path.write_text(example, encoding="utf-8")
    rows = market_rows(10)
    t = rows[-1]["t"]  # the last book's mid is about $100,630
    rows.append(build.trades(t + 100, ("BTC", "100300.0", "0.001", t + 90, 10**6)))  # a dip
    # the market is down there when the IOC buy (limit $100,320) activates
    a = t + 2_500
    rows.append(build.book(a, "BTC", a, [("100290.0", "2.0")], [("100310.0", "2.0")]))
    rows.append(build.trades(a + 100, ("BTC", "100450.0", "0.001", a + 90, 10**6 + 1)))  # a pop
    # mid $100,300 + $100 < $100,450: an IOC sell at $100,430 fills on the next book's bid
    b = a + 2_500
    rows.append(build.book(b, "BTC", b, [("100440.0", "2.0")], [("100460.0", "2.0")]))
    rows.append(build.tick(b + 60_000))
    log = write_log(tmp_path / "m.jsonl", rows)
    e = Entrant("dip", load_strategy(path), path)
    bt = Backtest(RunConfig(cache=False), season_of(log), [e])
    bt.run([str(log)])
    sides = [f.is_buy for f in e.stats.fills]
    assert sides == [True, False], e.stats.fills
    assert bt.engine.accounts["dip"].positions == {}


def test_same_run_under_any_hash_seed(tmp_path: Path) -> None:
    """The baselines' backtest gives the same run log, ranking and fills in any process."""
    log = write_log(tmp_path / "market.jsonl", market_rows(8))
    outputs = []
    for hash_seed in ("0", "1", "random"):
        out = tmp_path / f"out-{hash_seed}"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = arena(
            "backtest", "strategies/momentum.py", str(log), "--vs", "baselines", "--out",
            str(out), env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        outputs.append([(out / n).read_bytes() for n in ("run.jsonl", "ranking.json", "fills.csv")])
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[0][2].count(b"\n") > 1  # someone traded


ELSEWHERE = """
class Elsewhere(Strategy):
    def __init__(self):
        self.reasons = []
        self.room = None

    def on_book(self, ctx: Context, book) -> None:
        if self.room is None:
            ctx.order(7, True, 100 * 10**8, 10**8, False, GTC)  # asset 7: not in the season
            self.room = (ctx.headroom_e6, ctx.account.headroom_e6, ctx.open_slots)

    def on_event(self, ctx: Context, event) -> None:
        if isinstance(event, ev.Rejected):
            self.reasons.append(event.reason)
"""


def test_an_order_for_another_market_is_rejected_and_reserves_nothing(tmp_path: Path) -> None:
    _, result, _ = run(tmp_path, {"elsewhere": ELSEWHERE}, rows=market_rows(2))
    strat = result.entrants[0].strategy
    assert strat.reasons == [Reason.MarketNotAllowed]
    in_flight_room, engine_room, slots = strat.room
    assert in_flight_room == engine_room > 0  # it cannot take any of the cap
    assert slots == 7  # but it does take a slot until the engine answers
