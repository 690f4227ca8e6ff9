"""The charts' scales, wherever a run is drawn: the terminal report, chart.svg, arena-tui's
equity chart, report.html's data, and the sweep's per-parameter plot.

A drawdown of a fraction of a percent must show (not a flat line under a 15% ceiling),
the limit's line appear only where the scale reaches it, and the worst drawdown be said in
words; every entry's equity must be readable beside an entry that lost far more; the
sweep's plot must never print two tick labels over each other and must title its axes, and
its bins must read in the parameter's own type, never in exponent notation.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from arena_tui.report.charts import (
    SPARK,
    drawdown_lines,
    drawdown_top,
    equity_lines,
    limit_in_view,
)
from arena_tui.report.chartsvg import svg_chart
from arena_tui.report.htmldata import drawdown_scale, equity_scales
from arena_tui.report.rundata import EntryMark
from arena_tui.run.stats import MarkRow
from arena_tui.sweep.plot import bins, groups, number
from arena_tui.sweep.plotsvg import CHAR_W, svg
from arena_tui.tui.widgets.chart import LIMIT, chart_lines

T0 = 1_767_225_600_000  # 2026-01-01 00:00 UTC
MIN = 60_000
USD = 10**6
START = 10_000 * USD
PCT = 10**6  # 1% as an e8 ratio
NS = "{http://www.w3.org/2000/svg}"


def marks(equities: list[int]) -> list[MarkRow]:
    """Minute marks of an equity path (dollars), with its running peak and drawdown."""
    out, peak, mdd = [], START, 0
    for i, usd in enumerate(equities):
        eq = usd * USD
        peak = max(peak, eq)
        dd = (peak - eq) * 10**8 // peak
        mdd = max(mdd, dd)
        out.append(MarkRow(T0 + (i + 1) * MIN, eq, peak, dd, mdd, True, None))
    return out


def down(pct_e2: int, n: int = 60) -> list[MarkRow]:
    """A steady fall to ``pct_e2`` hundredths of a percent below the start, over ``n`` marks."""
    return marks([10_000 - 10_000 * pct_e2 * i // (10_000 * n) for i in range(1, n + 1)])


# ---- the drawdown's scale ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("worst", "top", "shown"),
    [
        (0, 1 * PCT, False),  # nothing: a 1% scale, flat at 0
        (PCT * 6 // 10, 1 * PCT, False),
        (3 * PCT // 2, 2 * PCT, False),
        (12 * PCT, 15 * PCT, True),  # the limit is a top of its own
        (16 * PCT, 20 * PCT, True),
        (100 * PCT, 100 * PCT, True),
    ],
)
def test_the_drawdown_is_scaled_to_its_worst_never_under_1pct(
    worst: int, top: int, shown: bool
) -> None:
    assert drawdown_top(worst, 15) == top
    assert limit_in_view(top, 15) is shown


def test_the_terminal_drawdown_of_a_fraction_of_a_percent_shows_and_says_its_worst() -> None:
    lines = drawdown_lines("mine", down(60), 15)  # 0.60% at worst
    assert (
        lines[0]
        == "drawdown of mine: worst 0.60%; the engine pauses an entry at 15% (above this scale)"
    )
    rows = lines[1:-1]
    assert [r.split()[0] for r in rows if r.split() and r.split()[0].endswith("%")][:1] == ["1%"]
    assert not any(r.endswith(" limit") for r in rows)  # the limit is off the scale
    # 0.60% of a 1% scale: the bars fill the three rows up to the middle and reach into
    # the fourth (on a 15% scale they were a sliver in the bottom row)
    assert rows[1].strip() == "" and rows[2].strip() != "" and rows[3][-1] == "█"
    flat = drawdown_lines("idle", marks([10_000] * 30), 15)
    assert flat[0].startswith("drawdown of idle: worst 0.00%;")
    assert all(set(r.split("%", 1)[-1]) <= {" "} for r in flat[1:-1])  # no bar at all


def test_the_terminal_drawdown_past_the_limit_draws_the_limit_where_it_falls() -> None:
    lines = drawdown_lines("mine", down(1_620), 15)  # 16.20%: a 20% scale
    assert lines[0] == "drawdown of mine: worst 16.20%; the engine pauses an entry at 15%"
    (limit,) = [r for r in lines if r.endswith(" limit")]
    assert limit.lstrip().startswith("15% ") and "─" in limit
    assert lines[1].lstrip().startswith("20%")


def test_each_entry_is_readable_beside_one_that_lost_far_more() -> None:
    """On one scale, $5 moves beside a $100 loss are flat lines: each entry gets its own."""
    calm = marks([10_000 + (5 if i % 10 < 5 else 0) for i in range(60)])
    entries = [("loser", down(100)), ("calm", calm), ("idle", marks([10_000] * 60))]
    lines, _ = equity_lines(entries, START, 100)
    assert lines[0].startswith("equity, each entry on its own scale")

    def row(name: str) -> str:
        (line,) = [x for x in lines if x.startswith(name + " ")]
        return line

    # $5 moves on their own $10 scale (its least height): four levels apart, not flat
    levels = sorted(SPARK.index(c) for c in set(row("calm").split()[1]))
    assert len(levels) == 2 and levels[1] - levels[0] >= 4
    assert row("calm").endswith("$10,000 [$9,998-$10,008]")
    assert row("loser").split()[1][0] == SPARK[-1] and row("loser").split()[1][-1] == SPARK[0]
    assert len(set(row("idle").split()[1])) == 1  # flat stays flat, not blown up


# ---- chart.svg ---------------------------------------------------------------------------


def paths(svg_text: str, series: str) -> dict[str, list[float]]:
    """Each entry's drawn ``series``: the y of every point of its path."""
    root = ET.fromstring(svg_text.encode())
    out = {}
    for p in root.iter(f"{NS}path"):
        if p.get("data-series") == series:
            ys = [float(y) for y in re.findall(r"[ML][\d.]+,([\d.]+)", p.get("d") or "")]
            out[p.get("data-entry") or ""] = ys
    return out


def texts(svg_text: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg_text.encode()).iter(f"{NS}text")]


def test_chart_svg_draws_each_entry_in_a_strip_of_its_own_scale() -> None:
    calm = marks([10_000 + (5 if i % 10 < 5 else 0) for i in range(60)])
    entries = [("loser", down(100)), ("calm", calm)]
    chart = svg_chart(entries, start=T0, starting_equity=START, limit_pct=15, title="t")
    ys = paths(chart, "equity")
    heights = {name: max(v) - min(v) for name, v in ys.items()}
    assert heights["calm"] > 30 and heights["loser"] > 30  # both tall enough to read
    assert max(ys["loser"]) < min(ys["calm"])  # one strip above the other
    assert "calm: $10,000" in texts(chart) and "loser: $9,900" in texts(chart)


def test_chart_svg_drawdown_scale_limit_line_and_words() -> None:
    small = svg_chart(
        [("mine", down(60))], start=T0, starting_equity=START, limit_pct=15, title="t"
    )
    said = texts(small)
    assert (
        "mine's worst drawdown 0.60%; the engine pauses an entry at 15%, above this scale" in said
    )
    assert "15% limit: the engine pauses the entry" not in said
    assert "1.0%" in said and "15.0%" not in said  # the axis ends at 1%
    ys = paths(small, "drawdown")["mine"]
    root = ET.fromstring(small.encode())
    top, height = next(
        (float(r.get("y") or 0), float(r.get("height") or 0))
        for r in root.iter(f"{NS}rect")
        if r.get("class") == "frame" and float(r.get("height") or 0) == 140
    )
    assert max(ys) - top > height / 2  # 0.60% of a 1% panel: more than half its height
    big = svg_chart(
        [("mine", down(1_620))], start=T0, starting_equity=START, limit_pct=15, title="t"
    )
    assert "15% limit: the engine pauses the entry" in texts(big)
    assert "mine's worst drawdown 16.20%; the engine pauses an entry at 15%" in texts(big)


# ---- arena-tui's chart -------------------------------------------------------------------


def test_arena_tui_drawdown_rows_show_a_small_drawdown_and_the_limit_only_in_view() -> None:
    small = [line.plain for line in chart_lines(down(60), 60, START, 15, rows=2)]
    title = next(x for x in small if x.startswith("drawdown"))
    assert title == "drawdown: worst 0.60% (scale 0 to 1%), limit 15% off scale"
    top_row = small[small.index(title) + 1]
    assert top_row.startswith("dd") and top_row[5:].strip() != ""  # 0.60% of 1%: bars on top
    assert LIMIT not in "".join(small)
    big = [line.plain for line in chart_lines(down(1_620), 60, START, 15, rows=2)]
    title = "drawdown: worst 16.20% (scale 0 to 20%), limit 15%"
    assert LIMIT in big[big.index(title) + 1]  # 15% on a 20% scale: in its top row


# ---- report.html's scales ----------------------------------------------------------------


def entry_marks(name: str, rows: list[MarkRow]) -> list[EntryMark]:
    return [
        EntryMark(name, m.t, m.equity, m.exit_equity, m.peak, m.drawdown, m.mdd, 0, 0, 0, True)
        for m in rows
    ]


def test_report_html_scales_each_entry_and_the_drawdown_to_the_data() -> None:
    calm = marks([10_000 + (5 if i % 10 < 5 else 0) for i in range(60)])
    by_entry = {"mine": entry_marks("mine", down(60)), "calm": entry_marks("calm", calm)}
    scales = equity_scales(by_entry, START)
    assert scales["calm"] == [9_997.5, 10_007.5]  # its own, at least $10 tall
    assert scales["mine"] == [9_940.0, 9_999.0]  # its own: $59 tall
    dd = drawdown_scale(by_entry, ["mine", "calm"], 15)
    assert dd["top"] == 1.0 and dd["limit_in_view"] is False
    assert dd["title"] == [
        "Drawdown from the peak: mine's worst 0.60%",
        "the 15% limit that pauses an entry is above this scale",
    ]
    by_entry["calm"] = entry_marks("calm", down(1_620))
    dd = drawdown_scale(by_entry, ["mine", "calm"], 15)
    assert dd["top"] == 20.0 and dd["limit_in_view"] is True
    assert (
        dd["title"][0] == "Drawdown from the peak: mine's worst 0.60% (calm's 16.20%, the deepest)"
    )


# ---- the sweep's plot --------------------------------------------------------------------


def test_bins_read_in_the_parameters_type_never_in_exponents() -> None:
    ints = [label for label, _, _, _ in bins(10, 40, integer=True)]
    assert ints == ["10..14", "15..19", "20..24", "25..29", "30..34", "35..39", "40..44"]
    big = [label for label, _, _, _ in bins(240_123.0, 3_700_456.0, integer=False)]
    assert big[0] == "0..500,000" and big[-1] == "3,500,000..4,000,000"
    small = [label for label, _, _, _ in bins(0.00001, 0.0004, integer=False)]
    assert small[0] == "0.00000..0.00005" and len(small) == 8
    for label in [*ints, *big, *small]:
        assert "e" not in label and "E" not in label
    assert [number(v) for v in (1e-05, 2.0, 1_234_567.5, 1_200_000)] == [
        "0.00001", "2.0", "1,234,567.5", "1,200,000",
    ]  # fmt: skip
    # a TPE search's integer parameter: whole-number bins, every value in exactly one
    points = [(10 + (i * 7) % 31, i) for i in range(60)]
    rows = groups(points)
    assert [label for label, _, _ in rows] == ints
    assert sum(len(s) for _, s, _ in rows) == 60


def sweep_doc(values: dict[str, list[Any]]) -> dict[str, Any]:
    n = len(next(iter(values.values())))
    variants = [
        {
            "name": f"v{i}",
            "params": {k: v[i] for k, v in values.items()},
            "score": (i * 7919) % 3_000_000 - 2_000_000,
            "excluded": None,
        }
        for i in range(n)
    ]
    return {"base": "momentum", "params": dict.fromkeys(values), "folds": [{"variants": variants}]}


def test_the_sweep_plot_never_overlaps_tick_labels_and_titles_its_axes() -> None:
    grid = [60_000, 1_200_000, 1_320_000, 3_000_000] * 5  # two values close together
    tpe = [240_000 + (i * 104_729) % 3_460_000 for i in range(20)]  # anywhere in a range
    floats = [0.00001 + (i * 0.0000197) for i in range(20)]
    doc = sweep_doc({"window_ms": list(grid), "min_rise_e8": tpe, "edge": floats})
    root = ET.fromstring(svg(doc).encode())
    labels = [t for t in root.iter(f"{NS}text") if t.get("text-anchor") == "middle"]
    said = [t.text or "" for t in labels]
    for name in ("window_ms", "min_rise_e8", "edge"):
        assert said.count(name) == 1  # the x axis's title
    assert [t.text for t in root.iter(f"{NS}text")].count("training S") == 3
    assert "1,200,000" in said and "1,320,000" in said  # both, on two rows
    by_row: dict[str, list[tuple[float, float]]] = {}
    for t in labels:
        if t.get("transform") or (t.text or "") in ("window_ms", "min_rise_e8", "edge"):
            continue
        x, w = float(t.get("x") or 0), len(t.text or "") * CHAR_W
        by_row.setdefault(t.get("y") or "", []).append((x - w / 2, x + w / 2))
        assert re.fullmatch(r"[\d,.]+", t.text or ""), t.text  # plain digits
    for spans in by_row.values():
        spans.sort()
        for (_, right), (left, _) in itertools.pairwise(spans):
            assert left > right, spans  # never two labels run together
