"""report.html: written by every ``arena backtest --out``, opened in a real headless browser.

The browser tests load the page in Debian's Chromium (driven by Playwright, with every
request that is not the file itself refused and recorded: the page must need no network),
and check that it logs no console error and that every chart the issue lists is drawn
(Plotly's SVG with its traces): plotly.js and the data are packed (gzip, base64) and
unpacked by the page itself, so this also proves the unpacking. Where no Chromium exists
they skip, saying how to get one; the thinning, the page's data, its size and that the same
run gives the same bytes are checked without a browser.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena_tui.report import html
from arena_tui.report.html import HTML_FILE
from arena_tui.report.htmldata import MAX_POINTS, page_data, spread, thin_minmax
from arena_tui.report.rundata import RunData, load
from arena_tui.util.human import ratio_pct
from tests.browserkit import launched
from tests.clirun import ROOT, arena, arena_here, sample_season

SAMPLE = ROOT / "recordings" / "synth-3coins-20261201.jsonl.gz"
SHARED_CHARTS = (
    "chart-equity",
    "chart-drawdown",
    "chart-cap",
    "chart-open-orders",
    "chart-costs",
    "chart-coin-pnl",
)
VERDICT_CHARTS = ("chart-money", "chart-skill", "chart-floor")  # none without trades
ANSWERS = ("ranked", "money", "skill", "floor")
IDLE = """
from arena_tui.strategy import Strategy


class Idle(Strategy):
    pass
"""
HOSTILE = '<img src="x" onerror="window.pwned = 1">&amp;<b>'  # run text that must stay text
COINS = ("BTC", "ETH", "SOL")


def backtest(
    tmp: Path, out: Path, strategy: str = "strategies/maker.py", *, fresh: bool = False
) -> Path:
    """The 40-minute backtest of ``strategy`` (the maker) against the baselines, written to
    ``out``, in blocks of 5 minutes (9 of them: enough for the intervals); in a new process
    when ``fresh``, else in this one (no new interpreter importing the CLI and the verdict's
    statistics)."""
    season = sample_season(tmp / "short.json", 40, skip_minutes=1, name="html-test")
    args = [
        "backtest", strategy, str(SAMPLE), "--vs", "baselines",
        "--season", str(season), "--epoch", "5m", "--out", str(out),
    ]  # fmt: skip
    done = arena(*args) if fresh else arena_here(*args, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert f"report        {out / HTML_FILE}" in done.stdout
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("html")
    return backtest(tmp, tmp / "run")


@pytest.fixture(scope="module")
def timed_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same backtest of momentum, whose trips leave room for twins (the maker is in
    the market all the run: its twins are not traded, and it has no skill chart)."""
    tmp = tmp_path_factory.mktemp("timed")
    return backtest(tmp, tmp / "run", "strategies/momentum.py")


@pytest.fixture(scope="module")
def idle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same backtest of a strategy that never trades."""
    tmp = tmp_path_factory.mktemp("idle")
    (tmp / "idle.py").write_text(IDLE, encoding="utf-8")
    return backtest(tmp, tmp / "run", str(tmp / "idle.py"))


def report_json(run: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((run / "report.json").read_text(encoding="utf-8"))
    return doc


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched("report.html")


def open_page(browser: Any, path: Path, init_script: str | None = None) -> Any:
    """``path`` in a new tab; ``.messages``: the console's errors and warnings and the
    page's uncaught errors, ``.requests``: any request for something other than the file
    itself (refused). ``init_script`` runs before the page's own scripts."""
    url = path.as_uri()
    pg = browser.new_page(viewport={"width": 1400, "height": 900})
    pg.messages = messages = []
    pg.requests = requests = []

    def console(m: Any) -> None:
        if m.type in ("error", "warning"):
            messages.append(f"{m.type}: {m.text}")

    pg.on("console", console)
    pg.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))

    def refuse(route: Any) -> None:
        if route.request.url == url:
            route.continue_()
        else:
            requests.append(route.request.url)
            route.abort()

    pg.route("**/*", refuse)
    if init_script is not None:
        pg.add_init_script(init_script)
    pg.goto(url)  # returns once the page's scripts have run (the load event)
    return pg


def drawn_page(browser: Any, path: Path) -> Any:
    """``path`` opened (``open_page``) once every chart is drawn, or 15 s have passed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    pg = open_page(browser, path)
    # the page unpacks plotly.js and its data, then draws: a chart that is never drawn:
    # the tests below say which, and why
    with contextlib.suppress(PlaywrightTimeout):
        pg.wait_for_function(
            "document.querySelectorAll('.chart').length === "
            "document.querySelectorAll('.chart[data-drawn]').length",
            timeout=15_000,
        )
    return pg


@pytest.fixture(scope="module")
def page(browser: Any, run_dir: Path) -> Iterator[Any]:
    """report.html loaded in headless Chromium, every chart drawn (see ``open_page``)."""
    pg = drawn_page(browser, run_dir / HTML_FILE)
    yield pg
    pg.close()


def traces(pg: Any, chart_id: str) -> list[str]:
    """The names of the traces drawn in one chart (Plotly's own record of what it drew)."""
    return list(
        pg.evaluate(
            """id => { const d = document.getElementById(id);
                 if (!d || !d.querySelector('svg.main-svg')) return null;
                 return d._fullData.filter(t => t.visible !== false).map(t => t.name); }""",
            chart_id,
        )
        or []
    )


def test_page_loads_offline_without_console_errors(page: Any) -> None:
    assert page.messages == []
    assert page.requests == []  # self-contained: nothing fetched, not even a font


def test_every_chart_is_drawn(page: Any, run_dir: Path) -> None:
    doc = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    names = [e["entry"] for e in doc["entries"]]
    ids = page.evaluate("Array.from(document.querySelectorAll('.chart')).map(d => d.id)")
    # the maker is in the market all the run: no twin is traded, so no skill chart
    assert doc["verdict"]["skill"]["answer"] == "no_freedom"
    verdict_charts = {c for c in VERDICT_CHARTS if c != "chart-skill"}
    assert set(ids) == {*SHARED_CHARTS, *verdict_charts, *(f"chart-price-{c}" for c in COINS)}
    assert page.locator(".chart[data-drawn]").count() == len(ids)
    for chart in ("chart-equity", "chart-drawdown", "chart-cap", "chart-open-orders"):
        drawn = traces(page, chart)
        assert set(names) <= set(drawn), (chart, drawn)  # every entry side by side
        n_points = page.evaluate(
            "id => document.getElementById(id).querySelectorAll('g.trace path.js-line').length",
            chart,
        )
        assert n_points >= len(names), chart
    assert {f"{n} exit value" for n in names} <= set(traces(page, "chart-equity"))
    assert traces(page, "chart-money") == ["maker's S"]
    assert traces(page, "chart-floor") == ["maker − control_random"]
    assert len(traces(page, "chart-costs")) == 4
    assert set(traces(page, "chart-coin-pnl")) == set(names)
    for coin in COINS:
        drawn = traces(page, f"chart-price-{coin}")
        assert {"book mid", "prints low–high"} <= set(drawn), (coin, drawn)
        assert any(t.startswith("fill: ") for t in drawn), (coin, drawn)  # maker fills here
        assert any(t.endswith("orders' lives") for t in drawn), (coin, drawn)
    # the limits are drawn where the rules put them: the drawdown's only when its scale,
    # fitted to the run's worst (a fraction of a percent here), reaches the 15% limit
    shapes = page.evaluate(
        "Object.fromEntries(['chart-drawdown','chart-cap','chart-open-orders'].map(id => "
        "[id, document.getElementById(id).layout.shapes.map(s => s.y0)]))"
    )
    assert shapes == {"chart-drawdown": [], "chart-cap": [12], "chart-open-orders": [8]}
    worst = max(max(m.drawdown for m in load(run_dir).marks if m.entry == n) for n in names)
    assert 0 < worst < 10**6  # under 1%: a 0..1% scale
    dd = page.evaluate(
        "(() => { const d = document.getElementById('chart-drawdown');"
        " return {range: d._fullLayout.yaxis.range, title: d.layout.title.text}; })()"
    )
    assert dd["range"] == [0, 1]
    assert dd["title"].startswith("Drawdown from the peak: maker's worst ")
    assert dd["title"].endswith("the 15% limit that pauses an entry is above this scale")
    # equity: a strip per entry, each on its own scale (its y axis spans its own values)
    strips = page.evaluate(
        "(() => { const d = document.getElementById('chart-equity');"
        " return d._fullData.filter(t => !t.name.endsWith(' exit value')).map(t => {"
        " const ax = d._fullLayout['yaxis' + t.yaxis.slice(1)];"
        " return [t.name, ax.range, Math.min(...t.y), Math.max(...t.y)]; }); })()"
    )
    assert sorted(name for name, *_ in strips) == sorted(names) and strips[0][0] == "maker"
    for name, (lo, hi), low, high in strips:
        assert lo <= low and high <= hi, name
        assert hi - lo < 2 * max(high - low, 10.0), name  # its own values fill its strip
    header = page.inner_text("header h1")
    assert "· paper" in header and doc["replay"]["rules_sha256"][:12] in header
    assert page.locator("#summary tbody tr").count() == len(names)
    assert page.locator("#trips-body tr").count() > 0
    assert page.locator("#loading").count() == 0  # the "drawing…" note is gone once drawn


def test_without_decompression_stream_the_page_says_why(browser: Any, run_dir: Path) -> None:
    """A browser too old to unpack the page shows one line, not a blank page or an error."""
    pg = open_page(browser, run_dir / HTML_FILE, "delete window.DecompressionStream;")
    try:
        note = pg.inner_text("#loading")
        assert note == (
            "This browser cannot open the compressed report: use a current Chrome, Firefox "
            "or Safari."
        )
        assert pg.evaluate("typeof Plotly") == "undefined"
        assert pg.locator(".chart[data-drawn]").count() == 0
        assert pg.messages == [] and pg.requests == []
        assert pg.locator("#summary tbody tr").count() > 0  # the tables are plain HTML
    finally:
        pg.close()


def test_the_entry_picker_redraws_the_coins(page: Any) -> None:
    """Picking another entry draws its fills: momentum trades less than the maker."""
    maker = page.evaluate("document.getElementById('chart-price-BTC').layout.title.text")
    assert maker.startswith("BTC: book mid and prints, maker's")
    page.select_option("#entry", "control_random")
    title = page.evaluate("document.getElementById('chart-price-BTC').layout.title.text")
    assert title.startswith("BTC: book mid and prints, control_random's")
    assert page.inner_text("h2 .entry-name") == "control_random"
    assert page.messages == []
    page.select_option("#entry", "maker")


def test_the_verdict_shows_the_three_answers_and_the_floor(page: Any, run_dir: Path) -> None:
    """The four answers read as report.json (and the terminal) says them; the charts under
    them draw what they rest on: every block's S, every block's lead over the control (the
    maker's skill answer needs no twins, and draws none: ``test_the_skill_chart...``)."""
    v = report_json(run_dir)["verdict"]
    for key in ANSWERS:
        assert page.inner_text(f"#verdict-{key}") == v[key]["text"], key
    labels = page.evaluate(
        "Array.from(document.querySelectorAll('#verdict dt')).map(d => d.textContent)"
    )
    assert labels == [
        "Would it be ranked?",
        "Does it make money after every cost?",
        "Is it skill, not luck?",
        "The floor (against control_random)",
    ]
    assert page.inner_text("#verdict-text") == v["text"]
    assert page.inner_text("#verdict-blocks").startswith("blocks of 5m; S = R - MDD")
    money = page.evaluate(
        "(() => { const d = document.getElementById('chart-money');"
        " return {y: d._fullData[0].y, shapes: d.layout.shapes.map(s => s.type),"
        " title: d.layout.title.text}; })()"
    )
    mine = [b["scores"]["maker"]["score"] for b in v["blocks"]]
    assert money["y"] == pytest.approx([s / 1e6 for s in mine], abs=1e-4)
    assert money["shapes"] == ["line", "rect"]  # the mean and its interval (9 blocks)
    assert money["title"].startswith("Does it make money? maker's S in each block of 5m")
    assert v["skill"]["answer"] == "no_freedom" and v["skill"]["twins"] == 0
    assert "no random twins" in page.inner_text("#verdict-skill")
    lead = page.evaluate("document.getElementById('chart-floor')._fullData[0].y")
    assert lead == pytest.approx([d / 1e6 for d in v["floor"]["diffs"]], abs=1e-4)
    assert page.messages == []


def test_a_run_with_no_trades_says_so_and_draws_no_verdict_chart(
    browser: Any, idle_dir: Path
) -> None:
    v = report_json(idle_dir)["verdict"]
    assert v["verdict"] == "no_trades"
    pg = drawn_page(browser, idle_dir / HTML_FILE)
    try:
        assert pg.inner_text("#verdict") == "Verdict on idle: no trades to judge"
        assert pg.locator("#verdict dd").count() == 0
        for chart in VERDICT_CHARTS:
            assert pg.locator(f"#{chart}").count() == 0, chart
        assert pg.locator(".chart[data-drawn]").count() == pg.locator(".chart").count() > 0
        assert pg.messages == [] and pg.requests == []
    finally:
        pg.close()


def test_the_skill_chart_draws_the_twins(browser: Any, timed_dir: Path) -> None:
    """A strategy with room to move: every twin's S drawn, the strategy's own marked, the
    p-value in the title."""
    v = report_json(timed_dir)["verdict"]
    page = drawn_page(browser, timed_dir / HTML_FILE)
    try:
        assert traces(page, "chart-skill") == ["random twins"]
        assert page.inner_text("#verdict-skill") == v["skill"]["text"]
        skill = page.evaluate(
            "(() => { const d = document.getElementById('chart-skill');"
            " return {x: d._fullData[0].x, at: d.layout.shapes[0].x0,"
            " title: d.layout.title.text, label: d.layout.shapes[0].label.text}; })()"
        )
        s = v["skill"]
        assert len(skill["x"]) == s["twins"] == len(s["twin_scores"]) == 100
        assert skill["x"] == pytest.approx([t / 1e6 for t in s["twin_scores"]], abs=1e-4)
        assert skill["at"] == pytest.approx(s["score"] / 1e6, abs=1e-4)
        assert skill["title"].endswith(f"p {s['p_value']:.3f}")
        assert skill["label"] == f"momentum: S {ratio_pct(s['score'])}"
        assert page.messages == []
    finally:
        page.close()


def test_run_text_is_shown_as_text_never_run(browser: Any, timed_dir: Path, tmp_path: Path) -> None:
    """A report whose texts carry markup (a hand-edited report.json, a hostile run): the
    page shows them as they are, and nothing in them becomes an element or runs."""
    doc = report_json(timed_dir)
    v = doc["verdict"]
    v["strategy"] = HOSTILE
    for key in ANSWERS:
        v[key]["text"] = HOSTILE
    html.write_html(load(timed_dir), doc, tmp_path)
    pg = drawn_page(browser, tmp_path / HTML_FILE)
    try:
        assert pg.inner_text("#verdict-skill") == HOSTILE
        assert pg.evaluate("window.pwned") is None
        assert pg.locator("#verdict img, #verdict b b").count() == 0
        title = pg.evaluate("document.getElementById('chart-skill').layout.title.text")
        assert title.startswith("Is it skill? &lt;img")  # Plotly draws it as the text
        shown = pg.evaluate("document.querySelector('#chart-skill .gtitle').textContent")
        assert shown.startswith(f"Is it skill? {HOSTILE}")
        assert pg.messages == [] and pg.requests == []
    finally:
        pg.close()


# ---- without a browser ---------------------------------------------------------------------


def test_the_page_is_small_because_packed(run_dir: Path) -> None:
    """plotly.js (4.8 MB) and the data are inlined gzip+base64: the 40-minute run's page
    is 2.0 MB (2026-12-04, plotly 7.1.0; 4.9 MB when plotly.js and the data were inlined
    as text)."""
    page = (run_dir / HTML_FILE).read_bytes()
    assert len(page) < 2_500_000, len(page)
    assert len(page) < len(html.plotly_js()) // 2
    assert html.plotly_js()[:2000] not in page  # plotly.js is not inlined as it is
    packed = re.search(rb'id="run-data-gz">([^<]*)</script>', page)
    assert packed is not None
    doc = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    data = json.loads(gzip.decompress(base64.b64decode(packed.group(1))))
    assert data == json.loads(json.dumps(page_data(load(run_dir), doc)))  # unpacks to it


def test_the_same_run_gives_the_same_page(run_dir: Path, tmp_path: Path) -> None:
    """report.html is deterministic: gzip with mtime 0 and a fixed level, the data in order
    (the same bytes from a new process, with its own hash seed, as from this one)."""
    again = backtest(tmp_path, tmp_path / "again", fresh=True)
    assert (again / HTML_FILE).read_bytes() == (run_dir / HTML_FILE).read_bytes()


def test_run_text_is_escaped_in_the_page(run_dir: Path) -> None:
    """Every text the verdict carries goes into the page's HTML escaped."""
    doc = report_json(run_dir)
    v = doc["verdict"]
    v["strategy"] = v["control"] = v["epoch_chosen"] = HOSTILE
    for key in ANSWERS:
        v[key]["text"] = v[key]["answer"] = HOSTILE
    head, tail = html.page_parts(load(run_dir), doc)
    assert "<img" not in head + tail and "window.pwned" not in tail
    assert head.count("&lt;img src=&quot;x&quot; onerror=&quot;window.pwned = 1&quot;&gt;") >= 6


def test_a_report_written_before_the_three_questions_still_shows_its_verdict(
    run_dir: Path,
) -> None:
    """An old report.json's verdict (one word, its text, the lead's mean and interval at
    the top): its text, and the lead's chart only."""
    doc = report_json(run_dir)
    new = doc["verdict"]
    old = {k: new[k] for k in ("strategy", "control", "epoch", "block_ms", "blocks")} | {
        "verdict": "indistinguishable",
        "text": "indistinguishable from control_random: mean lead +0.01 points a block",
        "mean_diff": 1_000_000,
        "interval": [-2_000_000, 3_000_000],
    }
    doc["verdict"] = old
    data = load(run_dir)
    head, _ = html.page_parts(data, doc)
    assert (
        '<div class="verdict indistinguishable" id="verdict"><b>Verdict</b>: maker against '
        'control_random: <span id="verdict-text">indistinguishable from control_random: mean '
        "lead +0.01 points a block</span></div>"
    ) in head
    assert 'id="chart-floor"' in head
    assert 'id="chart-money"' not in head and 'id="chart-skill"' not in head
    drawn = page_data(data, doc)["verdict"]
    assert drawn["money"] is None and drawn["skill"] is None
    assert drawn["floor"] | {"blocks": None} == {
        "blocks": None, "mean": 1.0, "low": -2.0, "high": 3.0,
    }  # fmt: skip
    assert len(drawn["floor"]["blocks"]) == len(new["floor"]["diffs"])


def test_the_page_data_draws_everything_computed(run_dir: Path) -> None:
    """Counts are of everything in the run data; drawn series keep their extremes."""
    data: RunData = load(run_dir)
    doc = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    d = page_data(data, doc)
    for entry in data.entry_names():
        for coin in COINS:
            fills = [f for f in data.fills if f.entry == entry and f.coin == coin]
            assert d["counts"][entry][coin]["fills"] == len(fills)
        marks = [m for m in data.marks if m.entry == entry]
        assert len(d["marks"][entry]["equity"]["v"]) == len(marks)  # a short run: all drawn
        worst = max(m.drawdown for m in marks)
        assert max(d["marks"][entry]["drawdown"]["v"]) == pytest.approx(worst / 1e6, abs=1e-4)


def test_thinning_keeps_every_extreme() -> None:
    n = 10 * MAX_POINTS
    values: list[float | None] = [float((i * 7919) % 1000) for i in range(n)]
    values[12_345] = 5000.0  # one spike
    values[777] = -5.0  # one trough
    values[3] = None
    keep = thin_minmax(n, values)
    assert len(keep) <= MAX_POINTS
    assert keep == sorted(keep)
    assert 12_345 in keep and 777 in keep
    assert thin_minmax(5, [1.0, 2.0, 3.0, 4.0, 5.0]) == [0, 1, 2, 3, 4]
    assert spread(10, 4) == [0, 2, 5, 7]
    assert spread(3, 4) == [0, 1, 2]


def test_without_plotly_the_page_is_skipped_with_a_warning(
    run_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = load(run_dir)
    doc = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    html.plotly_js.cache_clear()
    html.plotly_packed.cache_clear()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    try:
        assert html.write_html(data, doc, tmp_path) is None
    finally:
        html.plotly_js.cache_clear()
        html.plotly_packed.cache_clear()
    assert not (tmp_path / HTML_FILE).exists()
    assert capsys.readouterr().err == (
        "arena: warning: report.html not written: the plotly package is not installed: "
        "pip install plotly\n"
    )
