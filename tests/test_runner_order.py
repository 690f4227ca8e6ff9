"""The runner's ordering and stamping rules, one test each, on logs shaped to expose them.

``arena_tui.run.backtest`` turns strategies into log inputs exactly as a hosted season
would; these are its rules (docs/strategies.md "Timing", the contract's last paragraph):

- entries register at the season's start, in the order given, just before the first log
  input stamped at or after it (and after every input before it), even when no input falls
  on the start;
- no hook runs before the registrations, but the market before the start is already known;
- what a hook sends is stamped with the time of the input it handles plus the latency,
  whichever hook it is;
- a strategy input goes after every log input stamped at or before its time, inputs of
  one time in the order sent;
- what is stamped at the last log input's time is applied at the end (before ``on_end``),
  what is stamped after it is dropped, and nothing is logged or handled once the season is
  over;
- a failing hook leaves the run log up to the input it failed on;
- a request leaves ``ctx.in_flight`` when the engine receives it.

Each test's strategy is a :class:`Probe` in this module: it records every hook call as
``(hook, ctx.t, argument)`` and sends what its ``act`` says.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.loader import StrategyError
from arena_tui.run.market import AssetContext, Book, Trade
from arena_tui.run.parts import BacktestResult, Entrant
from arena_tui.season.file import resolve_season
from arena_tui.strategy import GTC, Context, Strategy
from engine import Season
from engine import events as ev
from tests import build
from tests.market import write_log

T0 = build.T0  # the season's start in every test here
MIN = build.MIN
E8 = build.E8
HERE = Path(__file__)

Act = Callable[[Context, str, Any], None]


class Probe(Strategy):
    """Records each hook call as ``(hook, ctx.t, argument)``, then calls ``act``."""

    def __init__(self, act: Act | None = None) -> None:
        self.calls: list[tuple[str, int, Any]] = []
        self.act = act

    def _hook(self, ctx: Context, hook: str, arg: Any) -> None:
        self.calls.append((hook, ctx.t, arg))
        if self.act is not None:
            self.act(ctx, hook, arg)

    def on_start(self, ctx: Context) -> None:
        self._hook(ctx, "on_start", None)

    def on_book(self, ctx: Context, book: Book) -> None:
        self._hook(ctx, "on_book", book)

    def on_trades(self, ctx: Context, trades: list[Trade]) -> None:
        self._hook(ctx, "on_trades", trades)

    def on_asset_ctx(self, ctx: Context, asset_ctx: AssetContext) -> None:
        self._hook(ctx, "on_asset_ctx", asset_ctx)

    def on_event(self, ctx: Context, event: ev.AnyEvent) -> None:
        self._hook(ctx, "on_event", event)

    def on_mark(self, ctx: Context, mark: ev.MinuteMark) -> None:
        self._hook(ctx, "on_mark", mark)

    def on_end(self, ctx: Context) -> None:
        self._hook(ctx, "on_end", None)

    def hooks(self, *names: str) -> list[tuple[str, int, Any]]:
        return [c for c in self.calls if c[0] in names]

    def events(self, kind: type[Any]) -> list[tuple[int, Any]]:
        """``(ctx.t, event)`` of each ``on_event`` call with an event of ``kind``."""
        return [(t, e) for h, t, e in self.calls if h == "on_event" and isinstance(e, kind)]


def buy(ctx: Context, cloid: int) -> None:
    """A GTC bid for 0.001 BTC at $99,000 ($99 of the $1,200 cap), followed by ``cloid``."""
    ctx.order(ctx.asset_of("BTC"), True, 99_000 * E8, 100_000, False, GTC, cloid)


def once(hook: str, cloid: int, when: Callable[[Any], bool] = lambda _: True) -> Act:
    """An act that buys (with ``cloid``) at the first call of ``hook`` whose argument passes."""
    done: list[bool] = []

    def act(ctx: Context, name: str, arg: Any) -> None:
        if name == hook and not done and when(arg):
            done.append(True)
            buy(ctx, cloid)

    return act


def book(t: int) -> dict[str, Any]:
    return build.book(t, "BTC", t, [("99999.0", "1.0")], [("100001.0", "1.0")])


def trade(t: int, tid: int) -> dict[str, Any]:
    return build.trades(t, ("BTC", "100000.0", "0.001", t, tid))


def ctx_row(t: int) -> dict[str, Any]:
    return build.ctx(t, "BTC", mark="100000.0", oracle="100000.0", funding="0.0000125")


@dataclass
class Run:
    bt: Backtest
    result: BacktestResult
    rows: list[dict[str, Any]]  # the run log's inputs, decoded

    def kinds(self) -> list[tuple[int, str]]:
        """Each run-log input as ``(t, what)``: ``l2Book``, ``trades``, ``activeAssetCtx``,
        ``tick``, ``register NAME`` or ``order CLOID``."""
        out = []
        for r in self.rows:
            a = r.get("arena")
            if a is None:
                what = r["hl"]["channel"]
            elif a["type"] == "register":
                what = f"register {a['entry']}"
            elif a["type"] == "order":
                what = f"order {int(a.get('cloid', '0x0'), 16)}"
            else:
                what = a["type"]
            out.append((r["t"], what))
        return out

    def stamp(self, cloid: int) -> int:
        (t,) = [t for t, what in self.kinds() if what == f"order {cloid}"]
        return t


def run(
    tmp_path: Path,
    rows: list[dict[str, Any]],
    probes: dict[str, Probe],
    *,
    season: Season | None = None,
    latency_ms: int = 0,
) -> Run:
    """A backtest of ``probes`` over ``rows`` (the logs' own season unless one is given)."""
    log = write_log(tmp_path / "market.jsonl", rows)
    entrants = [Entrant(name, probe, HERE) for name, probe in probes.items()]
    season = season or resolve_season([str(log)], None)
    run_log = tmp_path / "run.jsonl"
    config = RunConfig(latency_ms=latency_ms, run_log="full", cache=False)
    bt = Backtest(config, season, entrants, run_dir=run_log.parent)
    result = bt.run([str(log)])
    decoded = [json.loads(x) for x in run_log.read_bytes().splitlines()[1:]]
    return Run(bt, result, decoded)


def season(minutes: int) -> Season:
    """From T0, ``minutes`` long: a window that need not end at the log's last input."""
    return build.season(start=T0, end=T0 + minutes * MIN, markets=(build.BTC, build.SOL))


# ---- registration ----------------------------------------------------------------------


def test_entries_register_at_the_start_though_no_input_falls_on_it(tmp_path: Path) -> None:
    """No input between the start and the first mark: a registration stamped at the first
    input after the start (the live rule) would miss that mark."""
    rows = [ctx_row(T0 - 500), book(T0 - 500), book(T0 + 61_000), build.tick(T0 + 120_500)]
    probe = Probe()
    r = run(tmp_path, rows, {"p": probe})
    assert r.bt.season.start == T0  # the first minute at or after the first input
    assert r.kinds() == [
        (T0 - 500, "activeAssetCtx"),
        (T0 - 500, "l2Book"),
        (T0, "register p"),
        (T0 + 61_000, "l2Book"),
        (T0 + 120_500, "tick"),
    ]
    assert probe.calls[0] == ("on_start", T0, None)
    assert r.bt.engine.accounts["p"].marks == 2  # the marks at T0 + 1 min and T0 + 2 min
    assert [row["marks"] for row in r.result.replay.ranking] == [2]


def test_registrations_go_after_the_inputs_before_the_start_and_before_the_one_on_it(
    tmp_path: Path,
) -> None:
    rows = [
        book(T0 - 2000),
        ctx_row(T0 - 1000),
        book(T0),
        trade(T0, 1),
        build.tick(T0 + MIN),
    ]
    r = run(tmp_path, rows, {"p": Probe()})
    assert r.kinds() == [
        (T0 - 2000, "l2Book"),
        (T0 - 1000, "activeAssetCtx"),
        (T0, "register p"),
        (T0, "l2Book"),
        (T0, "trades"),
        (T0 + MIN, "tick"),
    ]


def test_entries_register_in_the_order_given_which_breaks_their_tie(tmp_path: Path) -> None:
    rows = [ctx_row(T0 - 1000), book(T0 + 1000), build.tick(T0 + 2 * MIN)]
    r = run(tmp_path, rows, {"zed": Probe(), "amy": Probe(), "kim": Probe()})
    registered = [what for _, what in r.kinds() if what.startswith("register")]
    assert registered == ["register zed", "register amy", "register kim"]
    assert list(r.bt.engine.accounts) == ["zed", "amy", "kim"]
    # three idle entries score the same: registration order ranks them
    assert [row["entry"] for row in r.result.replay.ranking] == ["zed", "amy", "kim"]


# ---- hooks before the start ------------------------------------------------------------


def pre_and_post_start_market() -> list[dict[str, Any]]:
    """Book, prints and a context before the start, then again after it."""
    return [
        book(T0 - 3000),
        trade(T0 - 2000, 1),
        ctx_row(T0 - 1000),
        book(T0 + 1000),
        trade(T0 + 2000, 2),
        ctx_row(T0 + 3000),
        build.tick(T0 + MIN),
    ]


def test_no_hook_runs_before_the_entries_are_registered(tmp_path: Path) -> None:
    probe = Probe()
    run(tmp_path, pre_and_post_start_market(), {"p": probe})
    market = probe.hooks("on_book", "on_trades", "on_asset_ctx")
    assert probe.calls[0] == ("on_start", T0, None)
    assert [(h, t) for h, t, _ in market] == [
        ("on_book", T0 + 1000),
        ("on_trades", T0 + 2000),
        ("on_asset_ctx", T0 + 3000),
    ]


def test_the_market_before_the_start_is_known_at_on_start(tmp_path: Path) -> None:
    seen: list[tuple[int | None, list[int], int | None]] = []

    def look(ctx: Context, hook: str, _: Any) -> None:
        if hook == "on_start":
            btc = ctx.market("BTC")
            last = btc.book.t if btc.book is not None else None
            seen.append((last, [p.tid for p in btc.prints], btc.mark_e8))

    run(tmp_path, pre_and_post_start_market(), {"p": Probe(look)})
    assert seen == [(T0 - 3000, [1], 100_000 * E8)]


# ---- stamping --------------------------------------------------------------------------


def test_an_order_is_stamped_with_the_handled_inputs_time_plus_the_latency(
    tmp_path: Path,
) -> None:
    """The latency crosses an input: the order goes after it and before the next one."""
    rows = [
        ctx_row(T0 - 1000),
        book(T0 + 1000),  # handled: the order is stamped 1500 ms later
        trade(T0 + 2000, 1),
        book(T0 + 3000),
        build.tick(T0 + MIN),
    ]
    probe = Probe(once("on_book", 7))
    r = run(tmp_path, rows, {"p": probe}, latency_ms=1500)
    assert r.kinds()[2:6] == [
        (T0 + 1000, "l2Book"),
        (T0 + 2000, "trades"),
        (T0 + 2500, "order 7"),
        (T0 + 3000, "l2Book"),
    ]
    ((t, accepted),) = probe.events(ev.Accepted)
    assert t == accepted.t == T0 + 2500 and accepted.activates_at == T0 + 4500


def test_every_hook_stamps_with_the_time_of_the_input_it_handles(tmp_path: Path) -> None:
    """on_start at the start, market hooks at their input, on_event at the strategy input
    it answers, on_mark at the input that brought the mark (not the mark's own time)."""
    rows = [
        ctx_row(T0 - 1000),
        book(T0 + 1000),
        trade(T0 + 2000, 1),
        ctx_row(T0 + 3000),
        build.tick(T0 + MIN + 500),  # brings the mark at T0 + 1 min
        build.tick(T0 + 2 * MIN + 500),
    ]
    plan = {"on_start": 1, "on_book": 2, "on_trades": 3, "on_asset_ctx": 4, "on_mark": 5}
    sent: set[str] = set()

    def act(ctx: Context, hook: str, arg: Any) -> None:
        answer = hook == "on_event" and isinstance(arg, ev.Accepted) and arg.cloid == 1
        if (hook in plan or answer) and hook not in sent:
            sent.add(hook)
            buy(ctx, plan.get(hook, 6))  # 6: in on_event, answering on_start's order

    r = run(tmp_path, rows, {"p": Probe(act)}, latency_ms=100)
    assert {cloid: r.stamp(cloid) for cloid in range(1, 7)} == {
        1: T0 + 100,
        2: T0 + 1100,
        3: T0 + 2100,
        4: T0 + 3100,
        5: T0 + MIN + 600,
        6: T0 + 200,  # on_event for order 1, received at T0 + 100
    }


def test_an_order_waits_for_every_log_input_of_its_millisecond(tmp_path: Path) -> None:
    """Latency 0: the order handled at a book is stamped with the book's millisecond, which
    holds two more log inputs; it goes after them, before the next millisecond."""
    rows = [
        ctx_row(T0 - 1000),
        book(T0 + 1000),
        trade(T0 + 1000, 1),
        ctx_row(T0 + 1000),
        book(T0 + 1001),
        build.tick(T0 + MIN),
    ]
    probe = Probe(once("on_book", 7))
    r = run(tmp_path, rows, {"p": probe})
    assert r.kinds()[2:7] == [
        (T0 + 1000, "l2Book"),
        (T0 + 1000, "trades"),
        (T0 + 1000, "activeAssetCtx"),
        (T0 + 1000, "order 7"),
        (T0 + 1001, "l2Book"),
    ]
    # the strategy handled those inputs before its order reached the engine
    order = [(h, t) for h, t, a in probe.calls if h != "on_event" or isinstance(a, ev.Accepted)]
    assert order[1:6] == [
        ("on_book", T0 + 1000),
        ("on_trades", T0 + 1000),
        ("on_asset_ctx", T0 + 1000),
        ("on_event", T0 + 1000),
        ("on_book", T0 + 1001),
    ]


def test_inputs_of_one_time_go_in_the_order_sent(tmp_path: Path) -> None:
    """Two orders from one hook, then another entry's from the same input: one stamp."""

    def two(ctx: Context, hook: str, _: Any) -> None:
        if hook == "on_book":
            buy(ctx, 1)
            buy(ctx, 2)

    rows = [ctx_row(T0 - 1000), book(T0 + 1000), build.tick(T0 + MIN)]
    a, b = Probe(two), Probe(once("on_book", 3))
    r = run(tmp_path, rows, {"a": a, "b": b})
    assert [what for _, what in r.kinds() if what.startswith("order")] == [
        "order 1",
        "order 2",
        "order 3",
    ]
    oids = [(e.cloid, e.oid) for p in (a, b) for _, e in p.events(ev.Accepted)]
    assert oids == [(1, 1), (2, 2), (3, 3)]


# ---- the end ---------------------------------------------------------------------------


LAST = T0 + 30_000  # the last log input of the end tests; their season runs on past it


def ends_at_last() -> list[dict[str, Any]]:
    return [ctx_row(T0 - 1000), book(T0 + 1000), book(LAST)]


def test_what_is_stamped_at_the_last_input_is_applied_before_on_end(tmp_path: Path) -> None:
    probe = Probe(once("on_book", 7, lambda b: b.t == LAST))
    r = run(tmp_path, ends_at_last(), {"p": probe}, season=season(2))
    assert r.kinds()[-2:] == [(LAST, "l2Book"), (LAST, "order 7")]
    assert r.result.dropped == 0 and r.result.own_inputs == 2  # the registration, the order
    assert [o.cloid for o in r.bt.engine.accounts["p"].orders.values()] == [7]
    hooks = [h for h, _, a in probe.calls if h != "on_event" or isinstance(a, ev.Accepted)]
    assert hooks[-2:] == ["on_event", "on_end"]  # on_end sees the order accepted


def test_what_is_stamped_after_the_last_input_is_dropped(tmp_path: Path) -> None:
    probe = Probe(once("on_book", 7, lambda b: b.t == LAST))
    r = run(tmp_path, ends_at_last(), {"p": probe}, season=season(2), latency_ms=1)
    assert r.kinds()[-1] == (LAST, "l2Book")  # nothing invented past the last input
    assert r.result.dropped == 1 and r.result.own_inputs == 1
    assert r.bt.engine.accounts["p"].orders == {} and probe.events(ev.Accepted) == []
    assert probe.calls[-1][0] == "on_end"


def test_nothing_is_logged_or_handled_once_the_season_is_over(tmp_path: Path) -> None:
    """The input at the end ends the pass: later inputs are not read, market hooks do not
    run for it, and what on_mark sends at the end is not logged."""
    end = T0 + MIN
    rows = [
        ctx_row(T0 - 1000),
        book(T0 + 30_000),
        book(end),
        book(end + 500),
        trade(end + 1000, 1),
        build.tick(end + MIN),
    ]

    def act(ctx: Context, hook: str, _: Any) -> None:
        if hook in ("on_book", "on_mark"):
            buy(ctx, 1 if hook == "on_book" else 2)

    probe = Probe(act)
    r = run(tmp_path, rows, {"p": probe}, season=season(1))
    assert r.kinds()[-3:] == [(T0 + 30_000, "l2Book"), (T0 + 30_000, "order 1"), (end, "l2Book")]
    assert r.result.inputs == 3 and r.result.own_inputs == 2  # the rest is never read
    assert r.result.replay.final
    assert r.result.dropped == 1  # on_mark's order, stamped at the end
    assert [(h, t) for h, t, _ in probe.hooks("on_book", "on_trades", "on_mark", "on_end")] == [
        ("on_book", T0 + 30_000),
        ("on_mark", end),
        ("on_end", end),
    ]


# ---- failures and the in-flight list ---------------------------------------------------


def test_a_failing_hook_leaves_the_run_log_up_to_the_input_it_failed_on(tmp_path: Path) -> None:
    def fail(ctx: Context, hook: str, _: Any) -> None:
        if hook == "on_trades":
            buy(ctx, 7)  # sent, never received: the run ends first
            raise RuntimeError("the strategy broke")

    rows = [ctx_row(T0 - 1000), book(T0 + 1000), trade(T0 + 2000, 1), book(T0 + 3000)]
    log = tmp_path / "run.jsonl"
    with pytest.raises(StrategyError, match="RuntimeError"):
        run(tmp_path, rows, {"p": Probe(fail)}, season=season(1))
    got = [json.loads(x) for x in log.read_bytes().splitlines()[1:]]
    assert [r["t"] for r in got] == [T0 - 1000, T0, T0 + 1000, T0 + 2000]
    assert got[-1] == trade(T0 + 2000, 1)  # the input it failed on, verbatim


def test_a_request_leaves_the_in_flight_list_when_the_engine_receives_it(
    tmp_path: Path,
) -> None:
    seen: list[tuple[str, int, int]] = []

    def act(ctx: Context, hook: str, arg: Any) -> None:
        if hook == "on_book" and not seen:
            buy(ctx, 7)
            seen.append(("sent", len(ctx.in_flight), ctx.open_slots))
        elif hook == "on_event" and isinstance(arg, ev.Accepted):
            seen.append(("accepted", len(ctx.in_flight), ctx.open_slots))

    rows = [ctx_row(T0 - 1000), book(T0 + 1000), build.tick(T0 + MIN)]
    run(tmp_path, rows, {"p": Probe(act)}, latency_ms=500)
    # 8 slots: the order takes one while in flight, and the same one once it is open
    assert seen == [("sent", 1, 7), ("accepted", 0, 7)]
