"""Every fill of a run with what it filled against and its order's note (issue 12).

A backtest's report (fills.csv, fills.jsonl named by report.json), ``arena replay
--quotes`` and ``arena replay --out`` all carry, beside each fill, the quote the engine
filled it against and the note its order was logged with; here each quote is checked
against the very log line it came from, read independently of the code under test.
"""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from arena_tui.logs.thinlog import ThinRun, is_thin
from arena_tui.run.hooks import Said
from arena_tui.tui.snapshot import Happening
from arena_tui.tui.widgets.activity import describe
from engine import events as ev
from tests import build
from tests.clirun import ROOT, arena, arena_here
from tests.market import market_rows, write_log

E8 = build.E8
CONTROL = Path(__file__).resolve().parents[1] / "strategies" / "control_random.py"

# A taker buy through the ask on the first BTC book, and a post-only sell above the ask
# that the climbing buy prints go through (maker fills); each order with a note, or none.
BOTH = """from arena_tui.strategy import Strategy

NOTES = {notes!r}


class Both(Strategy):
    sent = False

    def on_book(self, ctx, book):
        if self.sent or book.coin != "BTC":
            return
        self.sent = True
        ask = book.best_ask_e8 // 10**8
        ctx.buy("BTC", px=ask + 20, sz="0.005", tif="ioc", **NOTES.get("buy", {{}}))
        ctx.sell("BTC", px=ask + 5, sz="0.005", tif="alo", **NOTES.get("sell", {{}}))
"""
WITH_NOTES = {"buy": {"note": "taker in: the ask is cheap"}, "sell": {"note": "maker out ✓"}}


def write_strategy(path: Path, notes: dict[str, dict[str, str]]) -> Path:
    path.write_text(BOTH.format(notes=notes), encoding="utf-8")
    return path


def backtest(tmp: Path, name: str, notes: dict[str, dict[str, str]], *more: str) -> Path:
    log = tmp / "market.jsonl"
    if not log.exists():
        write_log(log, market_rows(4))
    strategy = write_strategy(tmp / f"{name}.py", notes)
    out = tmp / f"run-{name}"
    args = ("backtest", str(strategy), str(log), "--out", str(out), "--json", *more)
    done = arena_here(*args, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return out


def log_lines(path: Path) -> list[dict[str, Any]]:
    """A run log's inputs; a thin one's (``arena backtest``'s default) merged with its sources."""
    if is_thin(path):
        return [json.loads(x) for x in list(ThinRun(path).raw_lines())[1:]]
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()[1:]]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def e8(text: str) -> int:
    return int(Decimal(text) * E8)


@pytest.fixture(scope="module")
def noted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run directory of ``both.py`` with notes (and control_random beside it)."""
    tmp = tmp_path_factory.mktemp("noted")
    return backtest(tmp, "both", WITH_NOTES, "--vs", str(CONTROL))


def test_every_fill_carries_the_quote_of_the_log_line_it_filled_against(noted: Path) -> None:
    books: dict[tuple[str, int], dict[str, Any]] = {}
    prints: dict[int, dict[str, Any]] = {}
    for line in log_lines(noted / "run.jsonl"):
        hl = line.get("hl")
        if hl is None:
            continue
        if hl["channel"] == "l2Book":
            books[(hl["data"]["coin"], hl["data"]["time"])] = hl["data"]
        elif hl["channel"] == "trades":
            for p in hl["data"]:
                prints[p["tid"]] = p
    doc = json.loads((noted / "report.json").read_text(encoding="utf-8"))
    assert doc["fills_file"] == "fills.jsonl"
    jsonl = read_jsonl(noted / doc["fills_file"])
    rows = read_csv(noted / "fills.csv")
    assert len(rows) == len(jsonl) > 0
    assert {r["liquidity"] for r in rows if r["entry"] == "both"} == {"taker", "maker"}
    coins = {0: "BTC", 5: "SOL"}
    for f in jsonl:
        q = f["quote"]
        if f["liquidity"] == "taker":
            assert q["source"] == "book"
            data = books[(coins[f["asset"]], q["time"])]  # the book of that exchange time
            level = data["levels"][1 if f["isBuy"] else 0][q["level"]]  # a buy takes asks
            assert (e8(level["px"]), e8(level["sz"]), level["n"]) == (q["px"], q["sz"], q["n"])
            assert q["px"] == f["px"]
        else:
            assert q["source"] == "print"
            p = prints[q["tid"]]
            assert (p["time"], e8(p["px"]), e8(p["sz"])) == (q["time"], q["px"], q["sz"])
    by_key = {(f["entry"], f["oid"], f["t"], f["sz"]): f for f in jsonl}
    for r in rows:  # fills.csv says the same, in decimals
        f = by_key[(r["entry"], int(r["oid"]), int(r["t"]), e8(r["sz"]))]
        q = f["quote"]
        assert r["quote_source"] == q["source"] and int(r["quote_time"]) == q["time"]
        assert e8(r["quote_px"]) == q["px"] and e8(r["quote_sz"]) == q["sz"]
        assert r["quote_level"] == str(q.get("level", "")) and r["quote_tid"] == str(
            q.get("tid", "")
        )
        assert r["note"] == (f["note"] or "")


def test_notes_reach_the_run_log_fills_csv_and_fills_jsonl(noted: Path) -> None:
    orders = [x["arena"] for x in log_lines(noted / "run.jsonl") if x.get("arena", {}).get(
        "type") == "order" and x["arena"]["entry"] == "both"]  # fmt: skip
    assert [o.get("note") for o in orders] == [
        "taker in: the ask is cheap",
        "maker out ✓",
    ]
    want = {True: "taker in: the ask is cheap", False: "maker out ✓"}
    jsonl = [f for f in read_jsonl(noted / "fills.jsonl") if f["entry"] == "both"]
    assert jsonl and all(f["note"] == want[f["isBuy"]] for f in jsonl)
    rows = [r for r in read_csv(noted / "fills.csv") if r["entry"] == "both"]
    assert rows and all(r["note"] == want[r["side"] == "buy"] for r in rows)
    control = [r for r in read_csv(noted / "fills.csv") if r["entry"] == "control_random"]
    assert all(r["note"] == "" for r in control)  # a strategy that passes none has none


def test_quotes_are_the_fills_file_plus_quote_and_note(noted: Path, tmp_path: Path) -> None:
    fills, quotes, plain = tmp_path / "fills.jsonl", tmp_path / "quotes.jsonl", tmp_path / "p"
    run = str(noted / "run.jsonl")
    done = arena_here("replay", run, "--fills", str(fills), "--quotes", str(quotes), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    alone = arena_here("replay", run, "--fills", str(plain), cwd=ROOT)
    assert alone.returncode == 0, alone.stderr
    assert fills.read_bytes() == plain.read_bytes()  # the contract's file is untouched
    f_lines = fills.read_text(encoding="utf-8").splitlines()
    q_lines = quotes.read_text(encoding="utf-8").splitlines()
    assert len(f_lines) == len(q_lines) > 0
    for f, q in zip(f_lines, q_lines, strict=True):
        doc = json.loads(q)
        assert set(doc) - set(json.loads(f)) == {"quote", "note"}
        assert json.dumps(doc, sort_keys=True, separators=(",", ":")) == q  # sorted, compact
        del doc["quote"], doc["note"]
        assert json.dumps(doc, sort_keys=True, separators=(",", ":")) == f
    # the report's fills.jsonl is this file, byte for byte
    assert quotes.read_bytes() == (noted / "fills.jsonl").read_bytes()


def test_notes_change_nothing_the_engine_scores(noted: Path, tmp_path: Path) -> None:
    bare = backtest(tmp_path, "both", {}, "--vs", str(CONTROL))
    replays = []
    for run in (noted, bare):
        done = arena_here("replay", str(run / "run.jsonl"), "--json", cwd=ROOT)
        assert done.returncode == 0, done.stderr
        replays.append(json.loads(done.stdout))
    with_notes, without = replays
    assert with_notes["log_sha256"] != without["log_sha256"]  # the notes are in the log
    del with_notes["log_sha256"], without["log_sha256"]
    assert with_notes == without  # rules_sha256, fills_sha256, ranking: the same
    a, b = log_lines(noted / "run.jsonl"), log_lines(bare / "run.jsonl")
    for x in a:
        x.get("arena", {}).pop("note", None)
    assert a == b  # the logs differ by the note keys only
    assert all(f["note"] is None for f in read_jsonl(bare / "fills.jsonl"))


@pytest.mark.parametrize(
    ("call", "why"),
    [
        ('ctx.buy("BTC", px=1000, sz="0.01", note="x" * 281)', "is 281 characters; at most 280"),
        ("ctx.order(0, True, 10**13, 10**6, False, 2, note=7)", "must be a string, not int"),
    ],
)
def test_a_bad_note_is_one_clear_error_and_never_logged(
    tmp_path: Path, call: str, why: str
) -> None:
    log = write_log(tmp_path / "market.jsonl", market_rows(2))
    strategy = tmp_path / "bad.py"
    strategy.write_text(
        "from arena_tui.strategy import Strategy\n\n\nclass Bad(Strategy):\n"
        f"    def on_book(self, ctx, book):\n        {call}\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    done = arena("backtest", str(strategy), str(log), "--out", str(out))
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert line.startswith(f"arena: error: {strategy}:6: ")
    assert ": note " in line and why in line and "(in on_book, entry bad)" in line
    assert "Traceback" not in done.stderr
    assert not [
        x for x in log_lines(out / "run.jsonl") if x.get("arena", {}).get("type") == "order"
    ]


def test_replay_out_rebuilds_the_report_with_the_same_fills_and_notes(
    noted: Path, tmp_path: Path
) -> None:
    rep = tmp_path / "rep"
    done = arena_here("replay", str(noted / "run.jsonl"), "--out", str(rep), "--json", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "kind" not in json.loads(done.stdout)  # stdout stays the contract's object
    doc = json.loads((rep / "report.json").read_text(encoding="utf-8"))
    ran = json.loads((noted / "report.json").read_text(encoding="utf-8"))
    assert doc["kind"] == "replay" and doc["paper"] is True
    assert doc["replay"] == ran["replay"] == json.loads(done.stdout)
    assert [e["entry"] for e in doc["entries"]] == [e["entry"] for e in ran["entries"]]
    assert len(doc["entries"]) == 2
    runs_only = ("strategy", "params", "defaults", "exit_equity", "exit_gap")  # no file, books
    for mine, theirs in zip(doc["entries"], ran["entries"], strict=True):
        assert mine["strategy"] is None and mine["params"] is None and mine["defaults"] is None
        assert {k: v for k, v in mine.items() if k not in runs_only} == {
            k: v for k, v in theirs.items() if k not in runs_only
        }
    assert doc["verdict"] == ran["verdict"]  # the strategy registered first, the control too
    assert (rep / "fills.jsonl").read_bytes() == (noted / "fills.jsonl").read_bytes()
    assert read_csv(rep / "fills.csv") == read_csv(noted / "fills.csv")
    for a, b in zip(read_csv(rep / "equity.csv"), read_csv(noted / "equity.csv"), strict=True):
        assert {**a, "exit_equity": ""} == {**b, "exit_equity": ""}
    assert (rep / "chart.svg").exists()
    assert json.loads((rep / "ranking.json").read_text(encoding="utf-8")) == doc["replay"]


def test_replay_out_of_a_hosted_log_with_agents_and_no_control(tmp_path: Path) -> None:
    """A log from elsewhere (two agents with key hashes, notes on their orders): the report
    is rebuilt, and with no control entry the floor says so."""
    rows = market_rows(4)
    t0 = build.T0
    ask = (100_000 + 31) * E8  # the ask of the book at t0 + 1 s (30 s after the start)
    extra = [
        build.register(t0, "alice", "a" * 64),
        build.register(t0, "bob", "b" * 64),
        build.order(t0 + 1_000, "alice", 0, True, ask + 30 * E8, 500_000, tif=3),
        build.order(t0 + 1_000, "bob", 0, True, ask + 30 * E8, 500_000, tif=3),
    ]
    extra[2]["arena"]["note"] = "alice's reason"
    merged = sorted(rows + extra, key=lambda r: r["t"])  # stable: market first at a tie
    log = write_log(tmp_path / "hosted.jsonl", merged)
    rep = tmp_path / "rep"
    done = arena_here("replay", str(log), "--out", str(rep), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    doc = json.loads((rep / "report.json").read_text(encoding="utf-8"))
    assert [e["entry"] for e in doc["entries"]] == ["alice", "bob"]
    floor = doc["verdict"]["floor"]
    assert floor["answer"] == "no_control"
    assert floor["text"] == "no control_random entry in the log: no floor to compare with"
    # alice buys at the start and holds to the end: her twins have nowhere else to be
    assert doc["verdict"]["skill"]["answer"] == "no_freedom"
    fills = read_jsonl(rep / "fills.jsonl")
    assert {f["entry"]: f["note"] for f in fills} == {"alice": "alice's reason", "bob": None}
    assert {r["entry"]: r["note"] for r in read_csv(rep / "fills.csv")} == {
        "alice": "alice's reason",
        "bob": "",
    }
    assert all(f["quote"]["source"] == "book" for f in fills)


def test_replay_out_refuses_to_overwrite_a_backtests_report(noted: Path) -> None:
    before = (noted / "report.json").read_bytes()
    done = arena("replay", str(noted / "run.jsonl"), "--out", str(noted))
    assert done.returncode == 1
    assert done.stderr.startswith(f"arena: error: --out {noted}: holds the report of a run")
    assert (noted / "report.json").read_bytes() == before


def test_paper_is_said_beside_the_score_and_the_rules_hash(noted: Path) -> None:
    doc = json.loads((noted / "report.json").read_text(encoding="utf-8"))
    assert doc["paper"] is True
    rules = doc["replay"]["rules_sha256"]
    done = arena_here("replay", str(noted / "run.jsonl"), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    head = done.stdout.splitlines()[0]
    assert f"rules_sha256 {rules[:16]}... · paper" in head
    as_json = arena_here("replay", str(noted / "run.jsonl"), "--json", cwd=ROOT)
    assert "paper" not in json.loads(as_json.stdout)  # the contract's object: no new keys
    svg = (noted / "chart.svg").read_text(encoding="utf-8")
    assert f"rules {rules[:12]} · paper" in svg
    from arena_tui.report.table import table

    assert f"rules {rules[:12]} · paper" in table(doc).splitlines()[0]


def test_the_activity_row_of_a_fill_shows_its_quote_and_note() -> None:
    book = ev.BookQuote(time=build.T0 + 4_950, level=1, px=10 * E8, sz=2 * E8, n=3)
    fill = ev.Fill(
        t=build.T0 + 5_000, entry="a", oid=1, cloid=0, asset=0, is_buy=True, px=10 * E8,
        sz=E8, taker=True, venue_fee=1, exec_fee=1, quote=book,
    )  # fmt: skip
    _, _, text = describe(Happening(fill, "BTC", "why I bought"))
    assert text.startswith("buy 1 @ 10 taker, fees $0.00")
    assert "book L1 @ 00:00:04.950" in text and text.endswith("“why I bought”")
    made = ev.PrintQuote(tid=123, time=build.T0 + 4_980, px=11 * E8, sz=E8)
    _, _, text = describe(Happening(msgspec_replace(fill, quote=made, taker=False), "BTC"))
    assert text.endswith("maker, fees $0.00 · print tid 123 @ 00:00:04.980")
    assert describe(Happening(Said(0, "a", "hi"), None))[2] == "hi"


def msgspec_replace(fill: ev.Fill, **changes: Any) -> ev.Fill:
    import msgspec

    return msgspec.structs.replace(fill, **changes)
