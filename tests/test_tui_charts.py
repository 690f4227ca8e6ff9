"""arena-tui's charts over time: the market tab's price with the watched entry's fills and
open orders, and the score tab's cap used and open orders at every minute mark.

The drawing functions are checked on hand-made snapshots (where each mark lands); the
screen is driven with Textual's pilot over the small market of ``tests.tuikit``, where
``TRADER`` buys as a taker, keeps that order open, and later sells half.
"""

from __future__ import annotations

from pathlib import Path

from arena_tui.run.stats import MarkRow
from arena_tui.tui.app import make_app
from arena_tui.tui.fmt import clock
from arena_tui.tui.screens.run import RunScreen
from arena_tui.tui.snapshot import Coin, FillMark, Order, Use
from arena_tui.tui.source import watched_run
from arena_tui.tui.widgets.chart import chart_lines
from arena_tui.tui.widgets.pricechart import PriceChart, price_lines
from arena_tui.tui.widgets.usage import UsageChart, usage_lines
from tests import tuikit
from tests.tuikit import E8, T0, aio, finished, settled

MIN = 60_000


def coin(mids: list[int], book_t: int | None = None) -> Coin:
    return Coin(
        coin="BTC",
        bids=(),
        asks=(),
        book_t=book_t,
        prints=(),
        mark=None,
        oracle=None,
        funding=None,
        mids=tuple((T0 + i * MIN, m * E8) for i, m in enumerate(mids)),
    )


def order(px: int, age_min: int, is_buy: bool = True, coin_name: str = "BTC") -> Order:
    return Order(
        oid=1, coin=coin_name, is_buy=is_buy, px=px * E8, sz=E8, filled=0, reserve=0,
        age=age_min * MIN, expires_in=0, state="resting", reduce_only=False,
    )  # fmt: skip


def test_price_chart_puts_fills_and_orders_where_they_happened() -> None:
    mids = [100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110]  # a minute each
    fills = [
        FillMark(T0 + 2 * MIN - 1, "BTC", True, 102 * E8, True),  # taken just before mark 2
        FillMark(T0 + 7 * MIN, "BTC", False, 110 * E8, False),  # on mark 7, at the top
        FillMark(T0 + 7 * MIN, "ETH", True, 50 * E8, True),  # another coin: not drawn
    ]
    orders = [order(90, 3), order(200, 1, coin_name="ETH")]  # BTC: far below, 3 minutes old
    lines = [line.plain for line in price_lines(coin(mids), "me", fills, orders, 80, rows=21)]
    assert lines[0].startswith("BTC: mid each minute, me's fills")
    assert lines[0].endswith("(1)")  # one open order on BTC
    plot = [line[len("110 ") :] for line in lines[1:-1]]  # the price labels cut off
    assert len(plot) == 21
    # the scale spans 90 (the order) to 110 (the top fill): a row per dollar
    assert lines[1].lstrip().startswith("110") and lines[21].lstrip().startswith("90")
    assert plot[8][2] == "▲"  # 102: row 110 - 102 = 8, column of mark 2
    assert plot[0][7] == "▼"  # 110, column 7
    assert "▲" not in "".join(plot[:8] + plot[9:])  # ETH's fill is not on BTC's chart
    bottom = plot[20]
    assert bottom[:7].strip() == "" and set(bottom[7:11]) == {"╌"}  # received at mark 7
    assert plot[10][0] == "─" and plot[0][10] == "─"  # the mids: 100 at the start, 110 at the end


def test_price_chart_without_any_book_says_so() -> None:
    lines = price_lines(coin([]), "me", [], [], 40)
    assert [line.plain for line in lines] == ["BTC: no book yet: the chart starts at the first"]


def test_usage_chart_scales_to_the_limits_and_marks_the_minutes_over_them() -> None:
    uses = [Use(T0 + i * MIN, cap, n) for i, (cap, n) in enumerate([(0, 0), (6 * 10**6, 4),
            (12 * 10**6, 8), (3 * 10**6, 2)])]  # fmt: skip
    lines = usage_lines(uses, 12, 8, width=40, rows=2)
    text = [line.plain for line in lines]
    assert text[0] == "cap used: now 3.00% of 12%, most 12.00%"
    assert text[3] == "open orders: now 2 of 8, most 8"
    cap_rows = [t[7:] for t in text[1:3]]
    assert cap_rows == ["  █ ", " ██▄"]  # half the cap: one row of two; a quarter: half a row
    orders_rows = [t[7:] for t in text[4:6]]
    assert orders_rows == ["  █ ", " ██▄"]
    over = lines[2].spans  # the column at the cap is red, the others green
    styles = {str(s.style) for s in over if s.start >= 7}
    assert "bold red" in styles and "green" in styles


@aio
async def test_market_tab_draws_the_watched_entrys_fills_and_open_order(tmp_path: Path) -> None:
    log = tuikit.write_market(tmp_path / "market.jsonl")
    strategy = tuikit.write_strategy(tmp_path / "trader.py")
    spec = watched_run((log,), strategy, None, out=tmp_path / "run")
    app = make_app(spec=spec, speed=None, paused=True)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await settled(screen)
        await pilot.press("space")
        await finished(screen)
        await pilot.press("4")
        await pilot.pause()
        chart = screen.query_one(PriceChart)
        text = chart.text
        assert text.startswith("BTC: mid each minute, trader's fills")
        plot = "\n".join(text.splitlines()[1:-1])
        assert "▲" in plot and "▼" in plot  # the taker buy and the later sell
        snap = screen.snapshot
        assert snap is not None
        entry = snap.entries[0]
        assert [f.is_buy for f in entry.fills] == [True, False]
        open_btc = [o for o in entry.orders if o.coin == "BTC"]
        assert text.splitlines()[0].endswith(f"({len(open_btc)})")
        assert len(open_btc) == 1 and "╌" in plot  # the filled·held order, still open
        await pilot.press("6")
        await pilot.pause()
        usage = screen.query_one(UsageChart).text.splitlines()
        marks = len(entry.marks)
        assert len(entry.uses) == marks > 0
        assert usage[0].startswith("cap used: now ")
        assert f"open orders: now {entry.uses[-1].open_orders} of 8" in "\n".join(usage)
        assert max(u.cap_used for u in entry.uses) > 0  # it held a position


def test_the_equity_charts_titles_say_less_on_a_narrow_panel_never_wrapping() -> None:
    """Beside the wider score panel (S, R and MDD with every digit) an 80-column terminal
    leaves the chart 30 columns: its titles drop their last clause rather than wrap onto
    two lines and push the time axis off the panel."""
    e6 = 10**6
    marks = [
        MarkRow(T0 + i * MIN, (10_000 - i) * e6, 10_000 * e6, i * 10_000, i * 10_000, True, None)
        for i in range(12)
    ]
    wide = [line.plain for line in chart_lines(marks, 60, 10_000 * e6, 15)]
    assert wide[0] == "$9,989 to $10,000, start $10,000"
    assert "drawdown: worst 0.11% (scale 0 to 1%), limit 15% off scale" in wide
    narrow = [line.plain for line in chart_lines(marks, 30, 10_000 * e6, 15)]
    assert narrow[0] == "$9,989 to $10,000"
    assert "drawdown: worst 0.11%" in narrow
    assert all(len(line) <= 30 for line in narrow), narrow
    assert narrow[-1].strip().startswith(clock(T0)) and len(narrow) == len(wide)
