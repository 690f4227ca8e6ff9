"""report.html: the run as one interactive page that opens offline, written beside report.json.

Why this module exists: a table says where a run ended, not why. This page draws, from the
run's data (``arena_tui.report.rundata``) and report.json's document, what a builder looks
for after a backtest: per coin, the book's mid and the prints with an entry's fills (buy or
sell, taker or maker), each order's life from received to closed and the rejections; every
entry's equity and exit-value equity, drawdown against the pause limit, cap used against
the position cap and open orders against the slots; fees and funding; PnL per coin; round
trips; and the verdict: its three answers and the floor in the words the terminal printed,
and what they rest on (the strategy's block scores, its random twins' S with its own marked,
its lead over the control block by block). Every entry is on the shared charts (the legend
hides one); the per-coin charts and the round trips show the entry picked at the top.

Everything a run says is text to the page, never markup: the tables and the verdict are
escaped here, and the page's script writes run text into the page only as text (and into
Plotly's titles and names with its markup characters escaped), so an entry, a coin or a
reason cannot put a tag or a script into the page.

The drawing is Plotly's: plotly.js from the ``plotly`` package, inlined whole, so the page
needs no network. The page's own script (``assets/report.js``) builds the charts in the
browser from compact JSON (``htmldata``: converted and thinned there), so the Python side
never imports plotly (its file is found, not imported).

plotly.js (4.8 MB) and the JSON are inlined gzip-compressed and base64-encoded (2.0 MB):
``assets/loader.js`` unpacks them with the browser's ``DecompressionStream``, so the page
stays one offline file at under half the size. gzip runs with a fixed level and mtime 0,
so the same run gives the same bytes; plotly.js is compressed once per process (about
0.1 s: a backtest pays it once, a test session once).
"""

from __future__ import annotations

import base64
import gzip
import html
import importlib.util
import sys
from functools import cache
from pathlib import Path
from typing import Any

from arena_tui.report.htmldata import clock, page_data, px_f
from arena_tui.report.rundata import RunData
from arena_tui.report.table import COLUMNS, usd
from arena_tui.util.jsonout import dumps

HTML_FILE = "report.html"
LEGEND = (
    "per coin: the book's mid, the prints' range in the minute, the entry's fills (▲ buy, "
    "▼ sell; filled: taker, hollow: maker), its orders' lives at their limit price and its "
    "rejections (✕)"
)
ASSETS = Path(__file__).parent / "assets"
# zlib's level 5: levels 6 to 9 save under 1% of plotly.js's bytes for 60-100% more time
GZIP_LEVEL = 5


class NoPlotly(RuntimeError):
    """plotly (the package carrying plotly.js) is not installed."""


@cache
def plotly_js() -> bytes:
    """plotly.js, as the ``plotly`` package ships it (located, not imported: importing
    plotly's Python side would cost every backtest time for nothing)."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise NoPlotly("the plotly package is not installed: pip install plotly")
    for root in spec.submodule_search_locations:
        path = Path(root) / "package_data" / "plotly.min.js"
        if path.is_file():
            return path.read_bytes()
    raise NoPlotly("plotly is installed without its plotly.min.js")


def pack(raw: bytes) -> bytes:
    """``raw`` as the page carries it: gzip (fixed level, mtime 0: the same bytes every
    time) in base64, which a <script> element holds safely (no ``<``) and ``atob`` reads."""
    return base64.b64encode(gzip.compress(raw, compresslevel=GZIP_LEVEL, mtime=0))


@cache
def plotly_packed() -> bytes:
    """plotly.js packed (``pack``), once per process: compressing it costs ~0.1 s."""
    return pack(plotly_js())


@cache
def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


# ---- the page ----------------------------------------------------------------------------


def _summary(doc: dict[str, Any]) -> str:
    e = html.escape
    head = "".join(f"<th>{e(c.head)}</th>" for c in COLUMNS)
    rows = []
    for r in doc.get("entries", []):
        cells = "".join(f'<td class="{"l" if c.left else ""}">{e(c.cell(r))}</td>' for c in COLUMNS)
        rows.append(f"<tr>{cells}</tr>")
    return (
        f'<table id="summary"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _coin_table(data: RunData) -> str:
    e = html.escape
    heads = ["entry", "coin", "fills", "volume $", "fees $", "funding $", "position", "PnL $"]
    rows = []
    for r in data.coin_pnl:
        cells = [
            r.entry,
            r.coin,
            str(r.fills),
            usd(r.volume),
            usd(r.venue_fees + r.exec_fees),
            usd(r.funding),
            f"{px_f(r.position)}",
            usd(r.pnl),
        ]
        rows.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in heads)
    return (
        f'<table id="coin-pnl"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


# the three questions and the floor, as the page labels them (the order the terminal prints)
QUESTIONS = (
    ("ranked", "Would it be ranked?"),
    ("money", "Does it make money after every cost?"),
    ("skill", "Is it skill, not luck?"),
    ("floor", "The floor"),
)
# each answer's chart, when it has something to draw (``htmldata._verdict``)
EVIDENCE = (("money", "chart-money"), ("skill", "chart-skill"), ("floor", "chart-floor"))


def _verdict_box(v: dict[str, Any]) -> str:
    """The verdict in words: the three answers and the floor as four labelled lines (each
    answer's ``text``, as the terminal printed it) and the block length; "no trades to
    judge" alone for a strategy with no fills; a report written before the three questions
    (or one with no strategy) in its own words."""
    e = html.escape
    strategy = e(str(v.get("strategy") or "?"))
    if v.get("verdict") == "no_trades":
        return (
            f'<div class="verdict no_trades" id="verdict"><b>Verdict</b> on {strategy}: '
            '<span id="verdict-text">no trades to judge</span></div>'
        )
    if "ranked" not in v:
        against = f"{strategy} against {e(str(v.get('control') or '?'))}"
        return (
            f'<div class="verdict {e(str(v.get("verdict", "")))}" id="verdict"><b>Verdict</b>:'
            f' {against}: <span id="verdict-text">{e(str(v.get("text", "")))}</span></div>'
        )
    control = e(str(v.get("control") or "?"))
    rows = []
    for key, question in QUESTIONS:
        label = f"{question} (against {control})" if key == "floor" else question
        answer = v[key]
        rows.append(
            f'<dt>{e(label)}</dt><dd id="verdict-{key}" class="{e(str(answer["answer"]))}">'
            f"{e(str(answer['text']))}</dd>"
        )
    epoch = str(v.get("epoch", "?"))
    unit = "UTC days" if epoch == "1d" else f"blocks of {epoch}"
    chosen = f" ({v['epoch_chosen']})" if v.get("epoch_chosen") else ""
    return (
        f'<div class="verdict {e(str(v.get("verdict", "")))}" id="verdict">'
        f'<b>Verdict</b> on {strategy}: <span id="verdict-text">{e(str(v.get("text", "")))}'
        f'</span><dl class="answers">{"".join(rows)}</dl>'
        f'<div class="note" id="verdict-blocks">{e(unit + chosen)}; S = R - MDD in each '
        "block (docs/verdict.md)</div></div>"
    )


def _evidence(verdict: dict[str, Any]) -> str:
    """The places of the verdict's charts (``page_data``'s verdict: one per answer with
    something to draw; none, and no heading, for a strategy with no fills)."""
    shown = [cid for key, cid in EVIDENCE if verdict.get(key) is not None]
    if not shown:
        return ""
    charts = "".join(f'<div class="chart" id="{cid}"></div>' for cid in shown)
    return f'<h2>What the verdict rests on</h2>\n<div class="grid">{charts}</div>\n'


def page_parts(data: RunData, doc: dict[str, Any]) -> tuple[str, str]:
    """The page around packed plotly.js (``plotly_packed``): what comes before it (the
    tables and charts' places) and what after (the packed data and the page's scripts)."""
    e = html.escape
    kind = doc.get("kind", "backtest")
    rp = doc.get("replay", {})
    final = "final" if rp.get("final") else "not final"
    paper = " · paper" if doc.get("paper", True) else ""
    head = f"arena {kind} · season {data.season} · rules {data.rules_sha256[:12]}{paper} · {final}"
    span = f"{clock(data.start)} to {clock(data.end)} UTC"
    coin_names = ", ".join(c.coin for c in data.coins)
    v = doc.get("verdict") or data.verdict or {}
    charts = [
        ("chart-equity", "Equity"),
        ("chart-drawdown", "Drawdown"),
        ("chart-cap", "Cap used"),
        ("chart-open-orders", "Open orders"),
    ]
    grid = "".join(f'<div class="chart" id="{cid}" title="{t}"></div>' for cid, t in charts)
    coins = "".join(f'<div class="chart" id="chart-price-{e(c.coin)}"></div>' for c in data.coins)
    drawn = page_data(data, doc)
    run_data = pack(dumps(drawn).encode("utf-8")).decode("ascii")
    trip_heads = "".join(
        f"<th>{h}</th>"
        for h in [
            "coin", "side", "opened UTC", "closed UTC", "held", "qty",
            "avg entry", "avg exit", "fees $", "PnL $",
        ]
    )  # fmt: skip
    return (
        f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(head)}</title>
<style>{_asset("report.css")}</style>
</head><body>
<header><h1>{e(head)}</h1>
<div class="sub">{e(span)} · {len(data.entries)} entries · {e(coin_names)}</div>
</header>
<div id="loading">Drawing the charts…</div>
<noscript><style>#loading {{ display: none; }}</style>
<p class="note">The charts need JavaScript.</p></noscript>
{_verdict_box(v)}
<h2>Entries</h2>
{_summary(doc)}
<h2>Every entry over the run</h2>
<div class="grid">{grid}</div>
{_evidence(drawn["verdict"])}
<h2>Fees, funding and PnL per coin</h2>
<div class="grid"><div class="chart" id="chart-costs"></div>
<div class="chart" id="chart-coin-pnl"></div></div>
{_coin_table(data)}
<div class="picker"><label>Entry shown below: <select id="entry"></select></label>
<span class="note">{LEGEND}</span></div>
<h2>Prices, fills and orders of <span class="entry-name"></span></h2>
{coins}
<h2>Round trips of <span class="entry-name"></span> (flat to flat, PnL net of fees)</h2>
<p class="note" id="trips-note"></p>
<div class="scroll"><table id="round-trips"><thead><tr>{trip_heads}</tr></thead>
<tbody id="trips-body"></tbody></table></div>
<script type="application/gzip+base64" id="plotly-gz">""",
        f"""</script>
<script type="application/gzip+base64" id="run-data-gz">{run_data}</script>
<script>{_asset("report.js")}</script>
<script>{_asset("loader.js")}</script>
</body></html>
""",
    )


def write_html(data: RunData, doc: dict[str, Any], out: Path) -> Path | None:
    """``report.html`` in the run directory ``out``; its path. Written in three parts, so
    packed plotly.js's megabytes are copied as they are, never joined into a string. Without
    plotly.js (an install that left the package out) the page is not written, and a
    warning says why: the run and its other files stand."""
    try:
        js = plotly_packed()
    except NoPlotly as exc:
        print(f"arena: warning: {HTML_FILE} not written: {exc}", file=sys.stderr)
        return None
    head, tail = page_parts(data, doc)
    path = out / HTML_FILE
    with path.open("wb") as f:
        f.write(head.encode("utf-8"))
        f.write(js)
        f.write(tail.encode("utf-8"))
    return path
