"""Nothing done for nobody: a run with no run log gathers and hashes nothing, a print's view
is built only when someone can read it (what they read unchanged), and marks nobody reads
one by one (the twins') are counted, not kept.

Each test runs the same small market (``tests.market``) twice: once in the way that used
to do the work, once in the way that skips it, and compares what a strategy or the result
sees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.parts import Entrant
from arena_tui.run.runlogs import NoRunLog
from arena_tui.run.stats import EntryStats
from arena_tui.season.file import resolve_season
from arena_tui.strategy import Book, Context, Strategy, Trade
from engine import events as ev
from tests.market import market_rows, write_log

HERE = Path(__file__)


class Reader(Strategy):
    """Reads the recent prints of every coin at every book (no trades hook)."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def on_book(self, ctx: Context, book: Book) -> None:
        prints = ctx.market(book.coin).prints
        rows = [(p.t, p.tid, p.px_e8, p.sz_e8, p.side) for p in prints]
        self.seen.append((ctx.t, book.coin, len(prints), rows))


class Hooked(Reader):
    """The same, and a trades hook: every print's view is built as it comes."""

    def __init__(self) -> None:
        super().__init__()
        self.trades = 0

    def on_trades(self, ctx: Context, trades: list[Trade]) -> None:
        self.trades += len(trades)
        assert list(ctx.market(trades[0].coin).prints)[-len(trades) :] == trades


def run(tmp: Path, strategy: Strategy, run_dir: Path | None) -> Any:
    log = write_log(tmp / "market.jsonl", market_rows())
    season = resolve_season([str(log)], None)
    bt = Backtest(
        RunConfig(run_log="full", cache=False),
        season,
        [Entrant("e", strategy, HERE)],
        run_dir=run_dir,
    )
    return bt, bt.run([str(log)])


def test_prints_read_without_a_trades_hook_are_the_ones_built_for_it(tmp_path: Path) -> None:
    reader, hooked = Reader(), Hooked()
    run(tmp_path, reader, None)
    run(tmp_path, hooked, None)
    assert hooked.trades > 0 and any(n for _, _, n, _ in reader.seen)
    assert reader.seen == hooked.seen


def test_recent_prints_keep_the_last_ones_when_nobody_reads_them_for_long(
    tmp_path: Path,
) -> None:
    from arena_tui.run import market

    keep = market.RECENT_PRINTS
    market.RECENT_PRINTS = 3  # a few prints between books overflow it
    try:
        reader, hooked = Reader(), Hooked()
        run(tmp_path, reader, None)
        run(tmp_path, hooked, None)
    finally:
        market.RECENT_PRINTS = keep
    assert max(n for _, _, n, _ in reader.seen) == 3
    assert reader.seen == hooked.seen


def test_a_run_without_a_directory_gathers_and_hashes_no_run_log(tmp_path: Path) -> None:
    bt, res = run(tmp_path, Hooked(), None)
    assert isinstance(bt.log, NoRunLog) and res.run_log is None
    assert res.replay.log_sha256 == ""  # nothing was written, so nothing to replay
    (tmp_path / "run").mkdir()
    _, kept = run(tmp_path, Hooked(), tmp_path / "run")
    assert len(kept.replay.log_sha256) == 64
    # everything else of the result is the same
    assert kept.replay.fills_sha256 == res.replay.fills_sha256
    assert kept.replay.ranking == res.replay.ranking and kept.inputs == res.inputs


@given(st.lists(st.tuples(st.integers(0, 10**12), st.booleans()), max_size=50))
def test_marks_counted_not_kept_say_what_the_kept_ones_say(marks: list[tuple[int, bool]]) -> None:
    kept, counted = EntryStats(), EntryStats(keep_marks=False)
    for i, (equity, active) in enumerate(marks):
        m = ev.MinuteMark(
            t=i * 60_000, entry="e", equity=equity, peak=equity, drawdown=0, mdd=0, active=active
        )
        kept.mark(m, None)
        counted.mark(m, None)
    assert counted.marks == [] and len(kept.marks) == len(marks)
    assert counted.mark_count == kept.mark_count == len(kept.marks)
    assert counted.active_marks == kept.active_marks == sum(1 for m in kept.marks if m.active)
