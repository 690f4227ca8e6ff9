"""The backtest's report: block scores, the verdict against the control, charts, warnings.

Block scores are checked on hand-made minute marks (the arithmetic is in the comments); the
bootstrap on hand-made block differences; the charts by parsing what they draw; and the
whole report once through the real ``arena backtest`` command on a small market.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
import json
import os
import random
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_tui.report.charts import NAME_W, PLOT_W, WIDTH, terminal_chart
from arena_tui.report.chartsvg import svg_chart
from arena_tui.report.eligibility import ineligible_reasons, pace
from arena_tui.report.layout import terminal_width
from arena_tui.report.render import exit_gap
from arena_tui.report.table import exit_warnings, table
from arena_tui.report.verdict import (
    Judged,
    Twins,
    block_scores,
    choose_epoch,
    parse_epoch,
    skill_doc,
    verdict_doc,
)
from arena_tui.report.verdict_text import ranked_text, skill_text, summary, verdict_lines
from arena_tui.run.parts import BacktestError
from arena_tui.run.stats import MarkRow
from arena_tui.util.human import Progress, plural
from engine import Rules
from engine.scoring import standing
from engine.units import E8, tdiv
from tests import build
from tests.clirun import ROOT, arena_here
from tests.clirun import arena as cli
from tests.market import MARKETS, market_rows, write_log

T0 = build.T0  # a UTC day boundary
MIN, HOUR, DAY = build.MIN, build.HOUR, build.DAY
USD = 10**6  # money e6
START = 10_000 * USD


def marks(points: list[tuple[int, int]], exits: dict[int, int] | None = None) -> list[MarkRow]:
    """Mark rows as the engine makes them (running peak, drawdown, MDD) from (t, equity)."""
    out, peak, mdd = [], START, 0
    for t, eq in points:
        peak = max(peak, eq)
        dd = tdiv((peak - eq) * E8, peak)
        mdd = max(mdd, dd)
        exit_eq = (exits or {}).get(t, eq)
        out.append(MarkRow(t, eq, peak, dd, mdd, True, exit_eq))
    return out


def walk(seed: int, days: int, drift_usd: int = 0) -> list[MarkRow]:
    """An equity path, one mark an hour: seeded steps of up to $20, plus ``drift_usd``."""
    rng = random.Random(seed)
    eq, points = START, []
    for h in range(1, days * 24 + 1):
        eq += (rng.randint(-20, 20) + drift_usd) * USD
        points.append((T0 + h * HOUR, eq))
    return marks(points)


# ---- block scores ---------------------------------------------------------------------


HAND = marks(
    [
        (T0 + 20 * MIN, 10_100 * USD),
        (T0 + 40 * MIN, 9_999 * USD),
        (T0 + 60 * MIN, 10_200 * USD),  # on the boundary: closes the first hour
        (T0 + 80 * MIN, 10_000 * USD),
        (T0 + 120 * MIN, 10_404 * USD),
        (T0 + 180 * MIN, 10_200 * USD),
    ]
)


def test_block_scores_by_hand() -> None:
    blocks = block_scores(HAND, HOUR, START)
    assert list(blocks) == [T0, T0 + HOUR, T0 + 2 * HOUR]
    first, second, third = blocks.values()
    # Hour 1 opens at the starting $10,000. Peak $10,100, then $9,999: 101/10,100 = 1%
    # exactly (1,000,000 e8). It closes at $10,200 (the mark at 01:00): R = 200/10,000 = 2%.
    assert (first.open_equity, first.close_equity) == (START, 10_200 * USD)
    assert (first.ret, first.mdd, first.score, first.marks) == (2_000_000, 1_000_000, 1_000_000, 3)
    # Hour 2 opens at 01:00's $10,200 (its running peak starts there). $10,000 is down
    # 200/10,200 = 1.96078431% -> 1,960,784 e8 truncated; it closes at $10,404:
    # R = 204/10,200 = 2% exactly. S = 2,000,000 - 1,960,784 = 39,216.
    assert (second.open_equity, second.ret, second.mdd, second.score) == (
        10_200 * USD,
        2_000_000,
        1_960_784,
        39_216,
    )
    # Hour 3: $10,404 -> $10,200: R = -204/10,404 = -1.96078431% -> -1,960,784 (toward zero,
    # where floor division would give -1,960,785); MDD 1,960,784; S = -3,921,568.
    assert (third.ret, third.mdd, third.score) == (-1_960_784, 1_960_784, -3_921_568)


def test_block_scores_use_the_seasons_lambda_and_skip_empty_blocks() -> None:
    blocks = block_scores(HAND, 30 * MIN, START, lambda_num=1, lambda_den=2)
    # Half hours with marks: 00:00 (00:20), 00:30 (00:40, 01:00), 01:00 (01:20), 01:30
    # (02:00), 02:30 (03:00); 02:00 has no mark and is no block.
    assert list(blocks) == [T0 + k * 30 * MIN for k in (0, 1, 2, 3, 5)]
    # 00:30 block: opens at $10,100, $9,999 is 1,000,000 down, closes $10,200:
    # R = 100/10,100 = 990,099 e8 (truncated); S = 990,099 - 1,000,000 / 2 = 490,099.
    b = blocks[T0 + 30 * MIN]
    assert (b.ret, b.mdd, b.score) == (990_099, 1_000_000, 490_099)


def test_one_day_block_is_the_season_score() -> None:
    day = walk(3, 1)
    (block,) = block_scores(day, DAY, START).values()
    last = day[-1]
    assert block.ret == tdiv((last.equity - START) * E8, START)
    assert block.mdd == last.mdd  # from the start, a block's MDD is the engine's MDD
    assert block.score == block.ret - last.mdd


# ---- the verdict: three answers and the floor ---------------------------------------------


def judged(name: str, rows: list[MarkRow], fills: int = 10, **row: Any) -> Judged:
    """A strategy as the verdict reads it: its marks, a ranking row, fills and fees."""
    last = rows[-1] if rows else None
    base = {
        "entry": name,
        "eligible": False,
        "fill_days": 1 if fills else 0,
        "active_marks": len(rows) if fills else 0,
        "marks": len(rows),
        "score": 0 if last is None else tdiv((last.equity - START) * E8, START) - last.mdd,
    }
    return Judged(name, base | row, rows, fills, fills * 10 * USD, {})


def vdoc(
    mine: Judged,
    others: list[tuple[str, list[MarkRow]]],
    epoch: str | None = "1d",
    twins: Twins | str | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    marks_all = [*mine.marks, *(m for _, ms in others for m in ms)]
    end = max((m.t for m in marks_all), default=T0)
    return verdict_doc(
        mine, others, rules=Rules(), epoch=epoch, seed=seed, span=(T0, end), twins=twins
    )  # fmt: skip


def twins_of(scores: list[int], fills: int = 10, freedom: int = E8) -> Twins:
    n = len(scores)
    return Twins(
        scores=scores, seed=0, trips=5, freedom_e8=freedom, fills=[fills] * n,
        fees=[fills * 10 * USD] * n, active=[1] * n, marks=1, skipped=0, legs=5 * n,
    )  # fmt: skip


def test_the_control_against_itself_under_another_seed_is_indistinguishable() -> None:
    doc = vdoc(judged("control_again", walk(1, 30)), [("control_random", walk(2, 30))])
    assert doc["floor"]["paired_blocks"] == 30
    assert doc["floor"]["answer"] == "indistinguishable"
    assert doc["floor"]["text"].startswith("indistinguishable from control_random: mean lead ")


def test_a_clear_winner_is_better_and_makes_money_and_the_doc_holds_the_blocks() -> None:
    doc = vdoc(judged("winner", walk(1, 30, drift_usd=8)), [("control_random", walk(2, 30))])
    floor, money = doc["floor"], doc["money"]
    assert floor["answer"] == "better" and money["answer"] == "makes_money"
    lo, hi = floor["interval"]
    assert 0 < lo <= floor["mean"] <= hi
    assert [b["start"] for b in doc["blocks"]] == [T0 + d * DAY for d in range(30)]
    first = doc["blocks"][0]
    assert (
        first["diff"]
        == first["scores"]["winner"]["score"] - (first["scores"]["control_random"]["score"])
    )
    assert floor["diffs"] == [b["diff"] for b in doc["blocks"]]
    assert floor["resamples"] == 10_000 and floor["seed"] == 0
    loser = vdoc(judged("loser", walk(1, 30, drift_usd=-8)), [("control_random", walk(2, 30))])
    assert loser["floor"]["answer"] == "worse" and loser["money"]["answer"] == "loses_money"


def test_too_few_blocks_or_no_control_say_so() -> None:
    one_day = vdoc(judged("s", walk(1, 1)), [("control_random", walk(2, 1))])
    assert one_day["floor"]["answer"] == "too_few_blocks"
    assert one_day["money"]["answer"] == "too_few_blocks"
    assert one_day["money"]["text"].startswith("can't tell: 1 block of 1d (needs at least 8")
    assert "interval" not in one_day["floor"]
    hourly = vdoc(judged("s", walk(1, 1)), [("control_random", walk(2, 1))], epoch="2h")
    assert hourly["floor"]["paired_blocks"] == 12
    assert hourly["floor"]["answer"] != "too_few_blocks"
    alone = vdoc(judged("s", walk(1, 2)), [])
    assert alone["floor"]["answer"] == "no_control" and "--vs baselines" in alone["floor"]["text"]


def test_a_run_with_no_fills_has_no_trades_to_judge_and_no_other_answer() -> None:
    """Doing nothing never beats anything: every answer is "no trades to judge", even
    against a control that loses money in every block."""
    flat = marks([(T0 + h * HOUR, START) for h in range(1, 24 * 30 + 1)])
    losing = walk(2, 30, drift_usd=-8)
    doc = vdoc(judged("idle", flat, fills=0), [("control_random", losing)], twins="no trades")
    assert doc["verdict"] == "no_trades" and doc["text"] == "no trades to judge"
    for q in ("ranked", "money", "skill", "floor"):
        assert doc[q]["answer"] == "no_trades", q
    lines = verdict_lines(doc)
    assert len(lines) == 1 and "no trades to judge" in lines[0]
    assert not any(w in lines[0] for w in ("better", "skill?", "money?"))


def test_the_first_run_gets_a_block_length_that_answers() -> None:
    """With no --epoch the blocks are the longest that give 24 (partial ones count), and the
    doc says so; an --epoch given is kept even when it gives too few."""
    six_hours = marks([(T0 + m * MIN, START + m * USD) for m in range(1, 6 * 60 + 1)])
    doc = vdoc(judged("s", six_hours), [], epoch=None)
    assert (doc["epoch"], doc["epoch_chosen"]) == ("15m", "chosen: the run is 6 h")
    assert doc["money"]["blocks"] == 24 and doc["money"]["answer"] == "makes_money"
    assert [choose_epoch(h * HOUR) for h in (1, 2, 6, 12, 24, 24 * 5, 24 * 30)] == [
        "5m", "5m", "15m", "30m", "1h", "4h", "1d",
    ]  # fmt: skip
    kept = vdoc(judged("s", six_hours), [], epoch="1d")
    assert kept["epoch_chosen"] is None and kept["money"]["answer"] == "too_few_blocks"


@pytest.mark.parametrize(
    ("above", "ties", "answer", "p"),
    [
        (0, 0, "skill", 1 / 101),
        (4, 0, "skill", 5 / 101),  # 5/101 < 5%: the rank test's largest rejection
        (5, 0, "luck", 6 / 101),
        (2, 3, "luck", 6 / 101),  # ties count against skill
        (96, 0, "worse_than_twins", 1 - 96 / 101),
        (95, 0, "luck", 1 - 95 / 101),
        (100, 0, "worse_than_twins", 1.0),
    ],
)
def test_skill_is_the_rank_among_the_twins(above: int, ties: int, answer: str, p: float) -> None:
    """``p = (1 + twins at or above S) / (n + 1)``: exact for a strategy whose S is
    exchangeable with its twins' (no timing skill), so "skill" at p <= 5% is called at most
    5% of the time; the mirror p says "worse than its twins"."""
    score = 0
    twins = [1000] * above + [0] * ties + [-1000] * (100 - above - ties)
    doc = skill_doc(score, 10, 100 * USD, 5, twins_of(twins))
    assert doc["answer"] == answer
    assert (doc["above"], doc["ties"], doc["below"]) == (above, ties, 100 - above - ties)
    assert doc["p_value"] == round((1 + above + ties) / 101, 4)
    if answer == "worse_than_twins":
        assert doc["p_worse"] == round((1 + 100 - above) / 101, 4)
    elif answer == "skill":
        assert doc["p_value"] == round(p, 4)


def test_twins_that_cannot_move_or_do_not_match_are_no_control() -> None:
    always_in = skill_doc(0, 10, 100 * USD, 5, twins_of([-5] * 100, freedom=4_999_999))
    assert always_in["answer"] == "no_freedom"
    thin = skill_doc(0, 30, 300 * USD, 5, twins_of([-5] * 100, fills=19))  # 19 < 2/3 of 30
    assert thin["answer"] == "unmatched"
    assert "could not repeat its trading" in skill_text(thin)
    fair = skill_doc(0, 30, 300 * USD, 5, twins_of([-5] * 100, fills=21))
    assert fair["answer"] == "skill"
    assert skill_doc(0, 10, 1, 5, None)["answer"] == "off"
    assert skill_doc(0, 10, 1, 5, "a reason")["answer"] == "not_measured"


@given(
    scores=st.lists(st.integers(-(10**7), 10**7), min_size=1, max_size=60),
    mine=st.integers(-(10**7), 10**7),
)
def test_the_skill_counts_add_up(scores: list[int], mine: int) -> None:
    doc = skill_doc(mine, 10, 100 * USD, 5, twins_of(scores))
    n = len(scores)
    assert doc["above"] + doc["ties"] + doc["below"] == n == doc["twins"]
    assert doc["above"] == sum(s > mine for s in scores)
    assert doc["twin_range_90"][0] <= doc["twin_median"] <= doc["twin_range_90"][1]
    assert not (doc["answer"] == "skill" and doc["answer"] == "worse_than_twins")
    if doc["answer"] == "skill":
        assert (1 + doc["above"] + doc["ties"]) * 100 <= 5 * (n + 1)


def test_would_it_be_ranked_at_this_pace() -> None:
    rules = Rules()
    short = pace(rules, eligible=False, fill_days=1, days=1, active_marks=60, marks=100, fills=3)
    assert short["answer"] == "at_pace" and short["projected_fill_days"] == 28
    assert ranked_text(short).startswith("not in this run (fill days 1 of 10); at this pace")
    assert ranked_text(short).endswith(": it would be ranked")
    idle = pace(rules, eligible=False, fill_days=1, days=1, active_marks=19, marks=100, fills=3)
    assert idle["answer"] == "no" and ranked_text(idle).endswith("still not")
    rare = pace(rules, eligible=False, fill_days=1, days=3, active_marks=50, marks=100, fills=1)
    assert (rare["answer"], rare["projected_fill_days"]) == ("no", 9)  # 1 day in 3: 9 of 28
    ten = pace(rules, eligible=False, fill_days=4, days=11, active_marks=50, marks=100, fills=9)
    assert (ten["answer"], ten["projected_fill_days"]) == ("at_pace", 10)
    ranked = pace(rules, eligible=True, fill_days=12, days=28, active_marks=50, marks=100, fills=9)
    assert ranked["answer"] == "yes"
    none = pace(rules, eligible=False, fill_days=0, days=1, active_marks=0, marks=100, fills=0)
    assert none["answer"] == "no_trades"


@pytest.mark.parametrize(("text", "ms"), [("30m", 30 * MIN), ("2h", 2 * HOUR), ("1d", DAY)])
def test_epoch_parses(text: str, ms: int) -> None:
    assert parse_epoch(text) == ms


@pytest.mark.parametrize("text", ["", "0h", "-2h", "2", "h", "1.5h", "2 h", "2hours", "2H", "1w"])
def test_epoch_errors_are_one_line(text: str) -> None:
    with pytest.raises(BacktestError) as err:
        parse_epoch(text)
    msg = str(err.value)
    assert "\n" not in msg and repr(text) in msg and "30m, 2h, 1d" in msg


def test_bad_epoch_fails_before_the_run(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(2))
    out = tmp_path / "out"
    done = cli("backtest", "strategies/momentum.py", str(log), "--epoch", "2x", "--out", str(out))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "arena: error: --epoch '2x': expected a positive whole number and a unit m, h or d "
        "(e.g. 30m, 2h, 1d), or auto"
    ]
    assert not out.exists()


# ---- exit-value equity ----------------------------------------------------------------


def test_exit_gap_over_one_percent_is_named_with_its_time() -> None:
    t1, t2, t3 = T0 + MIN, T0 + 2 * MIN, T0 + 3 * MIN
    rows = marks(
        [(t1, START), (t2, START), (t3, START)],
        # exactly 1% below at t1 is not over; $150 (1.5%) at t2 and $101 at t3 are
        exits={t1: START - 100 * USD, t2: START - 150 * USD, t3: START - 101 * USD},
    )
    gap = exit_gap(rows)
    assert gap is not None
    assert (gap["marks_over"], gap["first_over"], gap["last_over"]) == (2, t2, t3)
    assert (gap["worst_at"], gap["worst_gap"], gap["worst_ratio"]) == (t2, 150 * USD, 1_500_000)
    (line,) = exit_warnings({"entries": [{"entry": "big", "exit_gap": gap}]})
    assert line.startswith("warning: big: exit value was more than 1% away")
    assert "2 marks (2026-01-01 00:02 to 2026-01-01 00:03 UTC)" in line
    assert "worst 1.50% ($150.00) below at 2026-01-01 00:02 UTC" in line
    calm = exit_gap(marks([(t1, START)], exits={t1: START - 100 * USD}))
    assert calm is not None and calm["marks_over"] == 0
    assert exit_warnings({"entries": [{"entry": "calm", "exit_gap": calm}]}) == []


# ---- charts ---------------------------------------------------------------------------


def test_svg_is_well_formed_with_a_path_per_entry() -> None:
    names = ["strat", "control_random", "maker & co"]
    entries = [(n, walk(i, 3)) for i, n in enumerate(names)]
    svg = svg_chart(entries, start=T0, starting_equity=START, limit_pct=15, title="a <title>")
    root = ET.fromstring(svg.encode())
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    paths = root.iter(f"{ns}path")
    series = [(p.get("data-entry"), p.get("data-series")) for p in paths]
    assert [n for n, s in series if s == "equity"] == names
    assert [n for n, s in series if s == "drawdown"] == names
    assert [n for n, s in series if s == "exit"] == ["strat"]  # the strategy's exit value
    texts = [t.text or "" for t in root.iter(f"{ns}text")]
    assert any(t.startswith("$10,") for t in texts)  # dollar axis
    assert any("UTC" in t for t in texts) and "2026-01-01" in " ".join(texts)
    # three hours of a $1 walk: the drawdown's scale stops short of the limit, and says so
    assert "15% limit: the engine pauses the entry" not in texts
    assert any(t.endswith("the engine pauses an entry at 15%, above this scale") for t in texts)
    assert "a <title>" in texts
    assert "<script" not in svg and "http://" not in svg.replace(ns[1:-1], "")


def test_terminal_chart_fits_100_columns() -> None:
    long = "a-strategy-with-a-long-name-x" * 2
    entries = [(long, walk(5, 20, drift_usd=-4)), ("control_random", walk(6, 20))]
    text = terminal_chart(entries, START, 15)
    lines = text.splitlines()
    assert max(len(x) for x in lines) <= WIDTH
    spark = [x for x in lines if x.startswith(long[:16])]
    assert len(spark) == 1 and len(spark[0].split()[1]) >= PLOT_W // 2
    short = terminal_chart([("mine", walk(5, 20)), ("control_random", walk(6, 20))], START, 15)
    (mine,) = [x for x in short.splitlines() if x.startswith("mine ")]
    after = len(mine) - mine.index(" $")  # its last value and its own scale
    assert len(mine.split()[1]) == min(PLOT_W, WIDTH - NAME_W - 1 - after)
    # the strategy loses ~$4 an hour for 480 hours (~19%): past the limit, whose line
    # crosses the chart below its top; full bars at the end
    assert "drawdown of " + long + ":" in text and lines[-2].endswith("█")
    assert sum(x.endswith(" limit") for x in lines) == 1
    vd = vdoc(judged(long, entries[0][1]), entries[1:], twins=twins_of([-(10**6)] * 100))
    assert max(len(x) for x in verdict_lines(vd, WIDTH)) <= WIDTH


def test_progress_shows_inputs_simulated_time_and_speed() -> None:
    now = [0.0]
    out = io.StringIO()
    p = Progress(
        enabled=True, label="backtest", span=(0, 10 * HOUR), clock=lambda: now[0], stream=out
    )
    now[0] = 0.1
    p.update(16_384, HOUR)  # the first update only anchors the speed (too soon to show)
    assert out.getvalue() == ""
    now[0] = 1.0
    p.update(32_768, 2 * HOUR)
    line = out.getvalue()
    assert line.startswith("\rbacktest: 32,768 inputs  at 1970-01-01 02:00:00 UTC (20% of")
    assert "32,768 inputs/s" in line  # 32,768 inputs in 1.0 s
    assert "4,000x real time" in line  # 1 simulated hour in 0.9 s
    p.done()
    assert out.getvalue().endswith("\r\033[K")


# ---- the command ----------------------------------------------------------------------


def test_backtest_report_has_the_three_answers_chart_and_block_table(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(30))
    again = tmp_path / "control_again.py"  # the control under another name: another seed
    shutil.copy(ROOT / "strategies" / "control_random.py", again)
    out = tmp_path / "run"
    done = here(
        "backtest", str(again), str(log), "--vs", "baselines", "--epoch", "2m",
        "--out", str(out), "--seed", "3", "--twins", "20",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text())
    v = report["verdict"]
    assert (v["strategy"], v["control"], v["epoch"]) == ("control_again", "control_random", "2m")
    assert v["floor"]["seed"] == v["money"]["seed"] == v["skill"]["seed"] == 3
    assert v["floor"]["paired_blocks"] == 15 == len(v["blocks"])  # 30 minutes in 2-minute blocks
    assert v["skill"]["twins"] == 20 and len(v["skill"]["twin_scores"]) == 20
    assert v["text"] == summary(v)
    lines = done.stdout.splitlines()
    for label, key in (("ranked?", "ranked"), ("money?", "money"), ("skill?", "skill")):
        (line,) = [x for x in lines if x.lstrip().startswith(label)]
        assert " ".join(line.split()[1:]).startswith(" ".join(v[key]["text"].split()[:6]))
    assert "the verdict on control_again (docs/verdict.md)" in done.stdout
    assert all(e["exit_gap"] is not None for e in report["entries"] if e["marks"])
    root = ET.parse(out / "chart.svg").getroot()
    drawn = {p.get("data-entry") for p in root.iter("{http://www.w3.org/2000/svg}path")}
    assert drawn == {e["entry"] for e in report["entries"]}


def test_a_stopped_paper_run_says_so_and_a_short_backtest_says_why() -> None:
    replay = {"season": "s", "rules_sha256": "ab" * 32, "final": False, "log_sha256": "0"}
    verdict = vdoc(judged("me", [], fills=0), [])
    doc: dict[str, Any] = {"replay": replay, "entries": [], "run_log": None, "verdict": verdict}
    assert "not final: the logs end before the season does" in table(doc)
    assert "not final: stopped before the season's end" in table({**doc, "kind": "paper"})
    assert "(final)" in table({**doc, "replay": {**replay, "final": True}})


# ---- why an entry is not eligible ----------------------------------------------------


@given(
    fill_days=st.integers(0, 15),
    marks=st.integers(0, 400),
    active=st.integers(0, 400),
    min_fill_days=st.integers(0, 12),
    min_active_pct=st.integers(0, 100),
)
def test_reasons_exactly_when_the_engine_says_ineligible(
    fill_days: int, marks: int, active: int, min_fill_days: int, min_active_pct: int
) -> None:
    """The report's reasons come from the engine's figures and agree with its own flag."""
    from types import SimpleNamespace

    active = min(active, marks)
    rules = Rules(min_fill_days=min_fill_days, min_active_pct=min_active_pct)
    acct = SimpleNamespace(
        name="e", idx=0, last_equity=START, mdd=0, fill_days=set(range(fill_days)),
        marks=marks, active_marks=active,
    )  # fmt: skip
    s = standing(SimpleNamespace(rules=rules), acct)  # type: ignore[arg-type]
    row = {"eligible": s.eligible, "fill_days": s.fill_days, "active_marks": active, "marks": marks}
    reasons = ineligible_reasons(row, rules)
    assert (reasons == []) == s.eligible
    rules_missed = {r["rule"] for r in reasons}
    assert ("min_fill_days" in rules_missed) == (not s.eligible and fill_days < min_fill_days)
    if "min_fill_days" in rules_missed:
        assert {"rule": "min_fill_days", "text": f"fill days {fill_days} of {min_fill_days}"} in (
            reasons
        )
    assert "unknown" not in rules_missed
    assert ineligible_reasons({**row, "eligible": True}, rules) == []  # the engine decides


def test_reasons_in_words() -> None:
    rules = Rules()  # Season 0: 10 fill days, active at 20% of marks
    row = {"eligible": False, "fill_days": 3, "active_marks": 199, "marks": 1000}
    assert [r["text"] for r in ineligible_reasons(row, rules)] == [
        "fill days 3 of 10",
        "active 19.90% of marks, needs 20%",
    ]
    unmarked = {"eligible": False, "fill_days": 0, "active_marks": 0, "marks": 0}
    assert [r["rule"] for r in ineligible_reasons(unmarked, rules)] == ["min_fill_days", "marks"]


# ---- the printed report fits the terminal ----------------------------------------------


LONG = "a-strategy-with-a-32-char-name-x"  # the longest entry name there is


def entry_row(name: str, rank: int | None, reasons: list[str]) -> dict[str, Any]:
    """One report.json entry with wide figures (a big equity, fees, thousands of fills)."""
    return {
        "rank": rank, "entry": name, "score": -123_456_789, "return": -98_765_432,
        "mdd": 12_345_678, "equity": 1_234_567_890_123, "exit_equity": 1_234_000_000_000,
        "fees": {"venue": 1_234_560_000, "execution": 1, "performance": 0},
        "funding": -12_345_678, "fills": {"taker": 12_345, "maker": 67_890},
        "rejections": {"PositionCapExceeded": 1_234}, "active_share": 100_000_000,
        "fill_days": 1, "eligible": not reasons,
        "ineligible_reasons": [{"rule": "r", "text": t} for t in reasons],
    }  # fmt: skip


@functools.cache
def three_verdict() -> dict[str, Any]:
    """A verdict over 3 entries, the strategy's name as long as names get (made once: its
    bootstrap takes a while)."""
    others = [("control_random", walk(2, 2)), ("other-" * 5, walk(3, 2))]
    return vdoc(judged(LONG, walk(1, 2)), others, epoch="2h", twins=twins_of([-(10**6)] * 100))


def a_doc() -> dict[str, Any]:
    verdict = three_verdict()
    return {
        "replay": {"season": "s", "rules_sha256": "ab" * 32, "final": False, "log_sha256": "0"},
        "entries": [
            entry_row(LONG, None, ["fill days 1 of 10", "active 5.00% of marks, needs 20%"]),
            entry_row("control_random", None, ["fill days 1 of 10"]),
            entry_row("maker", 1, []),
        ],
        "run_log": "run.jsonl",
        "verdict": verdict,
    }


def rows_of(text: str, name: str) -> list[str]:
    """The table's rows of entry ``name`` (a rank, then the name)."""
    return [
        x
        for x in text.splitlines()
        if x.split()[1:2] == [name] and (x.split()[0] == "-" or x.split()[0].isdigit())
    ]


@settings(deadline=None)  # a slow first call under load is no failure of the layout
@given(width=st.integers(62, 240))
def test_the_table_fits_any_width_and_keeps_names_and_reasons(width: int) -> None:
    """From 62 columns (rank, a 32-character name, an exact S of 12, eligible, the gaps)
    every row keeps its full name."""
    text = table(a_doc(), width)
    assert max(map(len, text.splitlines())) <= width, text
    (row,) = rows_of(text, LONG)  # the full name, on one line
    assert row.split()[0] == "-"
    (maker,) = rows_of(text, "maker")
    assert maker.split()[0] == "1" and maker.endswith("yes")
    why = "no: fill days 1 of 10; active 5.00% of marks, needs 20%"
    if width >= len(f"   -  {LONG}  -123.456789%  {why}"):  # the reasons in the row itself
        assert row.endswith(why)
    else:  # or, when the row has no room, right below the table
        assert row.endswith("no *")
        below = " ".join(text.split()).replace("- ", "")
        assert f"* {LONG} is not eligible: fill days 1 of 10; active 5.00%" in below
    if "not shown at" in text:  # a narrow terminal says what it left out
        assert f"not shown at {width} columns" in " ".join(text.split())
    else:
        assert "1,234,567.89" in row and "12345/67890" in row  # every column
    assert f"the verdict on {LONG} (docs/verdict.md)" in " ".join(text.split())


def test_the_table_unlimited_shows_every_column_and_the_run_log_in_full() -> None:
    text = table(a_doc(), None, Path("/runs/x"))
    head = text.splitlines()[2].split()
    assert head == ["rank", "entry", "S", "R", "MDD", "equity", "$", "exit", "$", "fees", "$",
                    "fund", "$", "fills", "t/m", "rej", "active", "days", "eligible"]  # fmt: skip
    assert "run log       /runs/x/run.jsonl" in text.splitlines()
    assert "not shown" not in text


@settings(deadline=None)
@given(width=st.integers(60, 240))
def test_verdict_and_chart_fit_any_width(width: int) -> None:
    vd = three_verdict()
    lines = verdict_lines(vd, width)
    assert max(map(len, lines)) <= width
    head = next(x for x in lines if x.lstrip().startswith("block (UTC")).split()
    # label (16: "block (UTC 2026)"), both names, the lead (an exact signed percentage, 10
    # wide): both names in full when they fit, else headed by their roles (named above)
    if width >= 2 + 16 + 2 + 32 + 2 + 14 + 2 + 10:
        assert head[3:5] == [LONG, "control_random"]
    if width < 2 + 16 + 2 + 32 + 2 + 14 + 2 + 10:
        assert head[3:5] == ["strategy", "control"]
    assert len(head) - 4 == 3 or any("other entr" in x for x in lines)  # a dropped one is said
    entries = [(LONG, walk(1, 2)), ("control_random", walk(2, 2)), ("other-" * 5, walk(3, 2))]
    chart = terminal_chart(entries, START, 15, width).splitlines()
    assert max(map(len, chart)) <= min(width, WIDTH)
    if width >= 80:
        assert [x.split()[0] for x in chart if x.startswith(LONG)] == [LONG]


def test_terminal_width_is_columns_or_the_terminal_or_no_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "97")
    assert terminal_width() == 97
    monkeypatch.setenv("COLUMNS", "12")
    assert terminal_width() == 40  # narrower is laid out at the least width
    monkeypatch.delenv("COLUMNS")

    def no_terminal(fd: int = 1) -> os.terminal_size:
        raise OSError("not a terminal")

    monkeypatch.setattr(os, "get_terminal_size", no_terminal)
    assert terminal_width() is None  # piped: nothing dropped
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=1: os.terminal_size((132, 40)))
    assert terminal_width() == 132


def test_plural() -> None:
    assert [plural(n, "entry", "entries") for n in (0, 1, 2)] == [
        "0 entries",
        "1 entry",
        "2 entries",
    ]
    assert plural(1234, "input") == "1,234 inputs" and plural(1, "block") == "1 block"


# ---- the run directory, through the command ------------------------------------------------

IDLE = "from arena_tui.strategy import Strategy\n\n\nclass Idle(Strategy):\n    pass\n"


def floats_in(doc: Any, where: str = "") -> list[str]:
    if isinstance(doc, float):
        return [where]
    if isinstance(doc, dict):
        return [x for k, v in doc.items() for x in floats_in(v, f"{where}.{k}")]
    if isinstance(doc, list):
        return [x for i, v in enumerate(doc) for x in floats_in(v, f"{where}[{i}]")]
    return []


def strings_in(doc: Any) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [x for v in doc.values() for x in strings_in(v)]
    if isinstance(doc, list):
        return [x for v in doc for x in strings_in(v)]
    return []


def no_columns() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "COLUMNS"}


def here(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``cli(*args, env=env)`` in this process (in arena's directory, as ``cli`` runs): no
    new interpreter importing the CLI and the verdict's statistics (about 2 s each). The
    runs that print for a terminal-less stdout (the table piped, ``runs show``, ``replay``)
    and a refused one stay real processes."""
    return arena_here(*args, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def idle_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """``arena backtest idle.py --vs baselines --epoch 2m --json`` over 30 minutes: the run
    directory and the report printed on stdout."""
    tmp = tmp_path_factory.mktemp("idle")
    log = write_log(tmp / "market.jsonl", market_rows(30))
    idle = tmp / "idle.py"
    idle.write_text(IDLE, encoding="utf-8")
    out = tmp / "run"
    done = here(
        "backtest", str(idle), str(log), "--vs", "baselines", "--epoch", "2m", "--out", str(out),
        "--json", env=no_columns(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "arena: backtest of 5 entries," in done.stderr
    doc = json.loads(done.stdout)
    assert doc == json.loads((out / "report.json").read_text(encoding="utf-8"))
    return out, doc


FLOATS = {"p_value", "p_worse", "mean_float", "interval_float", "block_length"}


def test_report_json_keeps_integers_beside_every_float(tmp_path: Path) -> None:
    """Every statistic that is a float (a p-value, a bootstrap mean or bound) sits beside
    its exact integers (e8, truncated like the engine's divisions), and each answer reads
    from those integers; nothing else in report.json is a float."""
    log = write_log(tmp_path / "market.jsonl", market_rows(30))
    out = tmp_path / "run"
    done = here(
        "backtest", "strategies/control_random.py", str(log), "--vs", "strategies/momentum.py",
        "--epoch", "2m", "--twins", "10", "--out", str(out), "--json", env=no_columns(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert {f.rsplit(".", 1)[-1].split("[")[0] for f in floats_in(doc)} <= FLOATS
    v = doc["verdict"]
    money = v["money"]
    scores = [b["scores"]["control_random"]["score"] for b in v["blocks"]]
    assert money["mean"] == tdiv(sum(scores), len(scores))
    lo, hi = money["interval"]
    assert lo == int(money["interval_float"][0]) and hi == int(money["interval_float"][1])
    assert (money["answer"] == "makes_money") == (lo > 0)
    assert (money["answer"] == "loses_money") == (hi < 0)
    floor = v["floor"]
    assert floor["answer"] == "is_control"  # the control judged is the control


def test_doing_nothing_is_no_trades_to_judge_through_the_command(
    idle_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """``class Idle(Strategy): pass`` beside the baselines (whose control loses to fees in
    every block): no answer but "no trades to judge", in report.json and on the terminal."""
    out, doc = idle_run
    v = doc["verdict"]
    assert (v["verdict"], v["text"]) == ("no_trades", "no trades to judge")
    assert {q: v[q]["answer"] for q in ("ranked", "money", "skill", "floor")} == dict.fromkeys(
        ("ranked", "money", "skill", "floor"), "no_trades"
    )
    assert "twin_scores" not in v["skill"]  # no twins were traded for it
    shown = cli("runs", "show", str(out))
    assert shown.returncode == 0, shown.stderr
    assert "no trades to judge" in shown.stdout
    assert not any(w in shown.stdout for w in ("better than", "skill?", "makes money"))


def test_report_json_says_why_an_entry_is_not_eligible(
    idle_run: tuple[Path, dict[str, Any]],
) -> None:
    _, doc = idle_run
    by_name = {e["entry"]: e for e in doc["entries"]}
    assert by_name["idle"]["ineligible_reasons"] == [
        {"rule": "min_fill_days", "text": "fill days 0 of 10"},
        {"rule": "min_active_pct", "text": "active 0.00% of marks, needs 20%"},
    ]
    assert by_name["momentum"]["fill_days"] == 1  # it traded, on one day (of thirty minutes)
    for e in doc["entries"]:
        assert e["rank"] is None and not e["eligible"]
        assert {"rule": "min_fill_days", "text": f"fill days {e['fill_days']} of 10"} in (
            e["ineligible_reasons"]
        )


def test_report_json_names_no_absolute_path_and_the_run_moves(
    idle_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    out, doc = idle_run
    assert doc["run_log"] == "run.jsonl"  # relative to the run directory
    assert {e["strategy"] for e in doc["entries"]} == {
        "idle.py", "momentum.py", "reversion.py", "control_random.py", "maker.py",
    }  # fmt: skip
    assert [x for x in strings_in(doc) if x.startswith("/") or str(out.parent) in x] == []
    moved = tmp_path / "elsewhere"
    shutil.copytree(out, moved)
    report = json.loads((moved / "report.json").read_text(encoding="utf-8"))
    again = here("replay", str(moved / report["run_log"]), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == doc["replay"]


def test_fills_and_equity_csv_name_the_coin_and_the_utc_time(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(20))
    out = tmp_path / "run"
    # the CSVs are the point here, not the verdict: no twins' pass
    done = here(
        "backtest", "strategies/momentum.py", str(log), "--twins", "0", "--out", str(out), "--json"
    )
    assert done.returncode == 0, done.stderr
    coins = {str(m["asset"]): m["coin"] for m in MARKETS}
    with (out / "fills.csv").open(newline="", encoding="utf-8") as f:
        fills = list(csv.reader(f))
    old = ["t", "entry", "oid", "cloid", "coin_asset", "side", "px", "sz", "liquidity",
           "venue_fee", "exec_fee"]  # fmt: skip
    quote = ["quote_source", "quote_time", "quote_level", "quote_tid", "quote_px", "quote_sz"]
    # the columns programs read stay in place; the quote and the note come last
    assert fills[0] == [*old, "coin", "time_utc", *quote, "note"]
    assert len(fills) > 1
    for row in fills[1:]:
        t, asset, coin, when = int(row[0]), row[4], row[11], row[12]
        assert coin == coins[asset] == "BTC"
        assert when.endswith("Z") and dt.datetime.fromisoformat(when) == (
            dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=t)
        )
    with (out / "equity.csv").open(newline="", encoding="utf-8") as f:
        marks_csv = list(csv.DictReader(f))
    assert marks_csv and all(
        dt.datetime.fromisoformat(m["time_utc"]).timestamp() * 1000 == int(m["t"])
        for m in marks_csv
    )


def test_the_printed_report_fits_80_columns_with_full_names(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(30))
    mine = tmp_path / f"{LONG}.py"
    shutil.copy(ROOT / "strategies" / "momentum.py", mine)
    out = tmp_path / "run"
    done = here(
        "backtest", str(mine), str(log), "--vs", "baselines", "--epoch", "2m", "--out", str(out),
        env={**no_columns(), "COLUMNS": "80"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    paths = ("run log ", "chart ", "report ")  # a path is as long as it is
    assert [x for x in lines if len(x) > 80 and not x.startswith(paths)] == []
    assert f"run log       {out / 'run.jsonl'}" in lines  # printed whole for the user
    (row,) = rows_of(done.stdout, LONG)
    assert row.endswith("no: fill days 1 of 10")
    head = next(x for x in lines if x.lstrip().startswith("block (UTC")).split()
    assert head[3:5] == [LONG, "control_random"]
    assert [x.split()[0] for x in lines if x.startswith(LONG + " ")] == [LONG]  # the chart
    wide = cli(
        "backtest", str(mine), str(log), "--vs", "baselines", "--epoch", "2m",
        "--out", str(tmp_path / "wide"), env=no_columns(),
    )  # fmt: skip
    assert wide.returncode == 0, wide.stderr
    (row,) = rows_of(wide.stdout, LONG)
    assert len([x for x in row.split("  ") if x]) == 14  # piped: every column
    assert "not shown at" not in wide.stdout


BUY_ONCE = """from arena_tui.strategy import IOC, Strategy


class BuyOnce(Strategy):
    sent = False

    def on_book(self, ctx, book):
        if not self.sent and book.coin == "BTC":
            self.sent = True  # 0.01 BTC, $20 through the ask: one fill
            ctx.order(ctx.asset_of("BTC"), True, book.best_ask_e8 + 20 * 10**8, 1_000_000,
                      False, IOC)
"""


def test_summary_lines_count_in_words(tmp_path: Path) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(2))
    buyer = tmp_path / "buyer.py"
    buyer.write_text(BUY_ONCE, encoding="utf-8")
    out = tmp_path / "run"
    ran = here("backtest", str(buyer), str(log), "--out", str(out), "--json")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.startswith("arena: backtest of 1 entry, writing ")
    replayed = cli("replay", str(out / "run.jsonl"))
    assert replayed.returncode == 0, replayed.stderr
    assert "inputs, 1 fill\n" in replayed.stdout
    (row,) = rows_of(replayed.stdout, "buyer")  # arena replay's table says why, too
    assert row.endswith("  no: fill days 1 of 10")
    done = cli("logs", "check", str(log))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1 file, ")


def test_the_files_written_beside_the_verdict_say_their_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fills.csv, fills.jsonl and equity.csv are written in a thread while the verdict is
    made: they are there when ``write_files`` returns, and the thread's error is raised
    there (the verdict's own first), never lost with the thread."""
    from arena_tui.report import render
    from arena_tui.report.verdict import Judging
    from arena_tui.run.backtest import Backtest
    from arena_tui.run.build import entrants_for
    from arena_tui.run.config import RunConfig
    from arena_tui.season.file import resolve_season

    log = write_log(tmp_path / "market.jsonl", market_rows(10))
    season = resolve_season([str(log)], None)
    strategy = ROOT / "strategies" / "control_random.py"
    result = Backtest(RunConfig(), season, entrants_for(strategy, None), echo=False).run([str(log)])
    how = Judging(epoch="1h", twins=0)
    out = tmp_path / "run"
    out.mkdir()
    render.write_files(result, out, judging=how)
    for name in ("fills.csv", render.FILLS_FILE, "equity.csv", "report.json"):
        assert (out / name).is_file()

    def fails(*_: Any) -> None:
        raise OSError(28, "No space left on device", "fills.csv")

    monkeypatch.setattr(render, "write_unjudged", fails)
    with pytest.raises(OSError, match="No space left"):
        render.write_files(result, out, judging=how)

    def verdict_fails(*_: Any, **__: Any) -> None:
        raise ValueError("the verdict's")

    monkeypatch.setattr(render, "report_doc", verdict_fails)
    with pytest.raises(ValueError, match="the verdict's"):
        render.write_files(result, out, judging=how)
