"""What the arena-tui tests share: a small market, a strategy that does a bit of everything,
and the way to wait for the worker without sleeping.

The market (BTC climbing $1 a second with a book every 5 s, prints every second; SOL
quiet) is written as a recording the way ``tests.build`` writes lines. ``TRADER`` on it
fills as a taker on activation and keeps that order open (filled·held), is rejected for a
too-small order, rests an order far below the market and cancels it, then sells half.
"""

from __future__ import annotations

import asyncio
import functools
import sys
import time
import traceback
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, ParamSpec

from textual.app import App
from textual.pilot import Pilot

from arena_tui.run.config import RunConfig
from arena_tui.tui.screens.run import RunScreen
from arena_tui.tui.source import watched_run
from tests import build, market

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sample-btc-20250126.jsonl"
MAKER = ROOT / "strategies" / "maker.py"
T0 = build.T0
E8 = build.E8
P = ParamSpec("P")
WAIT_S = 30  # a bound, never reached when things work: the runs here take well under 1 s

TRADER = """
from arena_tui.strategy import GTC, IOC, Context, Strategy

E8 = 10**8


class Trader(Strategy):
    def __init__(self) -> None:
        self.books = 0

    def on_book(self, ctx: Context, book) -> None:
        if book.coin != "BTC":
            return
        self.books += 1
        btc = ctx.asset_of("BTC")
        if self.books == 1:
            # through the ask: fills whole as a taker at activation, and stays open
            ctx.order(btc, True, book.best_ask_e8 + 20 * E8, 1_000_000, False, GTC)
            ctx.order(btc, True, book.best_bid_e8, 1_000, False, GTC)  # $1: too small
            ctx.order(btc, True, book.best_bid_e8 - 1000 * E8, 100_000, False, GTC)
        elif self.books == 4:
            for o in ctx.account.open_orders:
                if o.filled_e8 == 0:
                    ctx.cancel(oid=o.oid)
        elif self.books == 8:
            ctx.order(btc, False, book.best_bid_e8 - 20 * E8, 500_000, True, IOC)
"""

FAILING = """
from arena_tui.strategy import Context, Strategy


class Failing(Strategy):
    def on_book(self, ctx: Context, book) -> None:
        raise RuntimeError("no idea what to do")
"""


def write_market(path: Path, minutes: int = 6) -> Path:
    return market.write_log(path, market.market_rows(minutes, sol_ctx=True))


def write_strategy(path: Path, body: str = TRADER) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


def run_screen(app: App[Any]) -> RunScreen:
    """The app's screen, which must be a run's."""
    screen = app.screen
    assert isinstance(screen, RunScreen), screen
    return screen


def trader_spec(tmp_path: Path, body: str = TRADER, vs: str | None = None) -> RunConfig:
    """A run of ``body`` (the trader by default) on the small market, into tmp/run."""
    log = write_market(tmp_path / "market.jsonl")
    strategy = write_strategy(tmp_path / "trader.py", body)
    return watched_run((log,), strategy, vs, out=tmp_path / "run")


async def settled(screen: RunScreen) -> None:
    """Until the worker waits paused (or the run has ended), as the screen last heard."""
    await asyncio.wait_for(screen.settled.wait(), WAIT_S)


async def until(pilot: Pilot[None], pred: Callable[[], bool], what: str) -> None:
    """Until ``pred()`` holds, letting the app run between looks (bounded, never a sleep)."""
    deadline = time.monotonic() + WAIT_S
    while not pred():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.02)


async def finished(screen: RunScreen) -> None:
    await asyncio.wait_for(screen.finished.wait(), WAIT_S)


TEST_S = 240  # a whole pilot test's bound: a hang fails the test, never the suite's run


def aio(test: Callable[P, Coroutine[Any, Any, None]]) -> Callable[P, None]:
    """Run an async test on its own event loop (the pilot needs one; no plugin needed),
    failed if it has not ended within ``TEST_S`` (an await that never returns, say in the
    app's shutdown, would otherwise hang the whole suite)."""

    @functools.wraps(test)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        asyncio.run(_bounded(test(*args, **kwargs), test.__name__))

    return run


async def _bounded(body: Coroutine[Any, Any, None], name: str) -> None:
    """``body`` within ``TEST_S``; past it, the failure says where every thread and the
    test's own coroutine were (a wait inside the test that times out fails as itself)."""
    task = asyncio.ensure_future(body)
    done, _ = await asyncio.wait({task}, timeout=TEST_S)
    if task in done:
        return task.result()
    where = [f"{name} did not end within {TEST_S} s; the test was at:"]
    where += [f"  {frame.f_code.co_filename}:{frame.f_lineno}" for frame in task.get_stack()]
    for ident, frame in sys._current_frames().items():
        where.append(f"thread {ident:#x}:")
        where += ["  " + line.rstrip() for line in traceback.format_stack(frame)[-12:]]
    task.cancel()
    raise AssertionError("\n".join(where))
