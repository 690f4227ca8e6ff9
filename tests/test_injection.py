"""Hostile words from an entry (issue 23, item 6): refused where they come in, neutralised
where they go out.

A note with a control character (ESC, BEL, NUL, tab, newline, DEL, C1) is refused by
``check_note``, so by the HTTP API (one-line 400, nothing logged) and the strategy call
(one-line error naming the line, nothing logged) alike. A log written before that rule
still replays with such notes, and everything shown from it is neutralised: every CSV cell
a spreadsheet would run as a formula (``=cmd|' /C calc'!A0``, an entry named ``-bob``) gets
OWASP's leading apostrophe, control characters are stripped from CSVs, the printed report
and arena-tui's Activity rows, while ``fills.jsonl`` and ``--quotes`` keep the note as it
was logged (JSON escapes it).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena_tui.cli import app
from arena_tui.logs.notes import NOTE_PATTERN, NoteError, check_note
from arena_tui.report.render import printed_report
from arena_tui.run.hooks import Said
from arena_tui.run.loader import StrategyError
from arena_tui.tui.snapshot import Happening
from arena_tui.tui.widgets.activity import describe, row
from arena_tui.util.text import csv_cell, csv_row
from engine import events as ev
from tests.clirun import ROOT
from tests.hostkit import arena_rows, hosted, order
from tests.test_strategy_safety import backtest, line_of, log_is_clean, once, own_inputs, strategy

FORMULA = "=cmd|' /C calc'!A0"
ESC = "\x1b[31m"
CONTROLS = [ESC, "\x07", "\x00", "\t", "\n", "\r", "\x7f", "\x85", "\x9b"]
SAMPLE = ROOT / "recordings" / "sample-btc-20250126.jsonl"


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


# ---- refused where they come in -------------------------------------------------------------


@pytest.mark.parametrize("bad", CONTROLS, ids=[f"U+{ord(c[0]):04X}" for c in CONTROLS])
def test_a_note_with_a_control_character_is_refused_saying_which(bad: str) -> None:
    with pytest.raises(NoteError) as info:
        check_note(f"ok so far {bad} then")
    text = str(info.value)
    assert f"U+{ord(bad[0]):04X} at character 11" in text and "\n" not in text
    # a formula, quotes, emoji and any other printable text stay a note: the CSV handles it
    for fine in (FORMULA, "+1", "-short", "@all", "‘quoted’ ✓ 🚀", "é" * 280):
        assert check_note(fine) == fine


def test_the_http_api_refuses_a_control_character_in_a_note_and_logs_nothing(
    tmp_path: Path,
) -> None:
    with hosted(tmp_path) as h, h.client("alice") as alice:
        before = h.inputs()
        for bad in (ESC, "\x07", "\x00", "line\nbreak"):
            r = alice.post("/v1/orders", json={**order(), "note": f"x{bad}"})
            assert (r.status_code, r.json()["error"]) == (400, "BadRequest"), r.text
            detail = r.json()["detail"]
            assert "control character" in detail and "\n" not in detail
        assert h.inputs() == before  # nothing reached the log
        r = alice.post("/v1/orders", json={**order(), "note": FORMULA})  # text: accepted
        assert r.status_code == 200
        assert arena_rows(h.log, "order")[-1]["note"] == FORMULA
        # the OpenAPI document says so: its pattern refuses what check_note refuses
        doc = alice.get("/openapi.json").json()
        note = doc["components"]["schemas"]["OrderRequest"]["properties"]["note"]["anyOf"]
        pattern = next(o for o in note if o.get("type") == "string")["pattern"]
        assert pattern == NOTE_PATTERN
        for text in (*CONTROLS, FORMULA, "é 🚀"):
            assert (re.fullmatch(pattern[1:-1], text) is None) == (text in CONTROLS), repr(text)


@pytest.mark.parametrize("bad", [ESC, "\x07", "\x00"], ids=["ESC", "BEL", "NUL"])
def test_a_strategy_note_with_a_control_character_stops_it_in_one_line(
    tmp_path: Path, bad: str
) -> None:
    call = f"ctx.buy('BTC', 100000, '0.001', note={bad!r})"
    path = strategy(tmp_path / "noisy.py", once(call))
    bt = backtest(tmp_path, {"noisy": path})
    with pytest.raises(StrategyError) as info:
        bt.run([str(tmp_path / "market.jsonl")])
    text = str(info.value)
    assert text.startswith(f"{path.resolve()}:{line_of(path)}: ctx.buy: note {bad!r} (str)")
    assert "has a control character" in text and "\n" not in text and bad not in text
    run_log = tmp_path / "out" / "run.jsonl"
    assert [m["type"] for m in own_inputs(run_log)] == ["register"]  # nothing else logged
    log_is_clean(run_log)


# ---- neutralised where they go out ----------------------------------------------------------


def test_csv_cells_begin_no_formula_and_hold_no_control_character() -> None:
    assert csv_cell(FORMULA) == "'" + FORMULA
    for lead in ("+", "-", "@"):
        assert csv_cell(f"{lead}SUM(A1:A9)") == f"'{lead}SUM(A1:A9)"
    for lead in ("\t", "\r"):  # removed (a control character), and what follows checked
        assert csv_cell(f"{lead}SUM(A1:A9)") == "SUM(A1:A9)"
        assert csv_cell(f"{lead}=SUM(A1:A9)") == "'=SUM(A1:A9)"
    assert csv_cell(f"{ESC}red\x07\x00") == "[31mred"
    assert csv_cell(f"\x07{FORMULA}") == "'" + FORMULA  # no control hides a formula
    # numbers stay numbers: a rebate, a loss, an integer
    numbers = [-5, "-0.472752", "105056.0", "", None]
    assert csv_row(numbers) == numbers
    assert csv_cell("-") == "'-" and csv_cell("-1-1") == "'-1-1"


def _old_log(tmp_path: Path) -> Path:
    """The sample log as a log written before notes were checked could be: alice's two
    orders with hostile notes, and bob renamed ``-bob`` (a valid entry name)."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    notes = iter([FORMULA, f"{ESC}red\x07\x00"])
    out = []
    for text in lines:
        doc = json.loads(text)
        a = doc.get("arena", {})
        if a.get("type") == "order" and a.get("entry") == "alice":
            a["note"] = next(notes)
        if a.get("entry") == "bob":
            a["entry"] = "-bob"
        out.append(json.dumps(doc, separators=(",", ":")))
    log = tmp_path / "old.jsonl"
    log.write_text("\n".join(out) + "\n", encoding="utf-8")
    return log


def test_a_log_with_hostile_notes_still_replays_and_its_csvs_and_report_are_inert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("COLUMNS", "100")
    log = _old_log(tmp_path)
    done = cli("replay", str(log), "--out", str(tmp_path / "run"), "--quotes", str(tmp_path / "q"))
    assert done.exit_code == 0, done.output
    assert "\x1b" not in done.output and "\x07" not in done.output
    run = tmp_path / "run"
    with (run / "fills.csv").open(newline="", encoding="utf-8") as f:
        fills = list(csv.DictReader(f))
    raw = (run / "fills.csv").read_text(encoding="utf-8")
    assert not any(c in raw for c in "\x1b\x07\x00")
    alice = [r["note"] for r in fills if r["entry"] == "alice"]
    assert alice == ["'" + FORMULA, "[31mred"]
    assert {r["entry"] for r in fills} >= {"alice", "'-bob"}
    for r in fills:  # no cell of any row begins a formula, numbers aside
        assert not any(v.startswith(("=", "+", "@")) for v in r.values())
        assert all(
            not v.startswith("-") or v.replace("-", "", 1).replace(".", "", 1).isdigit()
            for v in r.values()
        )
    equity = (run / "equity.csv").read_text(encoding="utf-8")
    assert "\n1737918" in equity and ",'-bob," in equity and ",-bob," not in equity
    # what programs read keeps the note as it was logged (JSON escapes it)
    logged = [json.loads(x)["note"] for x in (run / "fills.jsonl").read_text().splitlines()]
    assert FORMULA in logged and f"{ESC}red\x07\x00" in logged
    quoted = [json.loads(x)["note"] for x in (tmp_path / "q").read_text().splitlines()]
    assert quoted == logged
    # the run data (report.html, arena export) carries each fill's note as logged too
    from arena_tui.report import rundata

    kept = rundata.load(run)
    assert [f.note for f in kept.fills] == logged


def test_the_printed_report_strips_control_characters_from_what_a_run_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path / "data"))
    assert cli("replay", str(SAMPLE), "--out", str(tmp_path / "run")).exit_code == 0
    doc = json.loads((tmp_path / "run" / "report.json").read_text(encoding="utf-8"))
    doc["entries"][0]["entry"] = f"alice{ESC}\x07"  # a report.json someone else wrote
    doc["entries"][0]["rejections"] = {f"Bad{ESC}": 1}
    text = printed_report(doc, 100, tmp_path / "run", chart=f"chart{ESC}")
    assert "\x1b" not in text and "\x07" not in text
    assert "alice[31m" in text and "Bad[31m 1" in text and text.endswith("\n\nchart[31m")


def test_activity_rows_carry_no_control_character() -> None:
    fill = ev.Fill(
        t=1_733_140_800_250, entry="alice", oid=1, cloid=0, asset=0, is_buy=True,
        px=10**13, sz=10**5, taker=True, venue_fee=1, exec_fee=1,
    )  # fmt: skip
    noted = Happening(fill, "BTC", f"{ESC}red\x07\x00 {FORMULA}")
    said = Happening(Said(1_733_140_800_250, "alice", f"{ESC}[2Jcleared\x07\ttabbed"), None)
    for h in (noted, said):
        cells = row(h)
        assert not any(c in "".join(cells) for c in "\x1b\x07\x00\t"), cells
        assert not any(c in describe(h)[2] for c in "\x1b\x07\x00\t")
    assert row(noted)[4].endswith(f"“[31mred {FORMULA}”")
    assert row(said)[4] == "[31m[2Jcleared    tabbed"


def test_what_a_host_serves_reaches_the_spectator_without_control_characters() -> None:
    """arena-tui's spectator shows what a host sends: a host that is not ours (or not
    honest) could name an entry with escape sequences; every string of its answers, the
    error codes too, is printable before anything shows it."""
    import httpx

    from arena_tui.tui.hostapi import HostClient, Refused

    hostile = "bob\x1b[2J\x1b]0;pwned\x07\u202e"
    row = {
        "day": 0, "t": 1, "entry": hostile, "rank": 1, "equity": 1, "return": 0, "mdd": 0,
        "score": 0, "eligible": True, "fill_days": 1, "active_share": 0,
    }  # fmt: skip

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/scores":
            return httpx.Response(200, json={"season": f"s{hostile}", "final": False,
                                             "rows": [row]})  # fmt: skip
        return httpx.Response(404, json={"error": f"nope{hostile}"})

    client = HostClient("http://host.test", transport=httpx.MockTransport(answer))
    scores = client.scores()
    assert scores.rows[0].entry == "bob[2J]0;pwned" and scores.season == "sbob[2J]0;pwned"
    with pytest.raises(Refused) as refused:
        client.book("BTC")
    assert refused.value.code == "nopebob[2J]0;pwned"


def test_a_one_line_error_quoting_what_it_was_given_prints_no_control_character() -> None:
    """An error may quote a path, a name or what a server said: the line is printable."""
    from tests.clirun import arena_here, one_error_line

    done = arena_here("replay", "day\x1b]0;pwned\x07\x1b[2J.jsonl")
    line = one_error_line(done)
    assert line == "arena: error: day]0;pwned[2J.jsonl: no such file", line


def test_arena_data_list_prints_file_names_without_control_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.clirun import arena_here

    monkeypatch.setenv("ARENA_DATA_DIR", str(tmp_path / "data"))
    day = tmp_path / "days"
    day.mkdir()
    (day / "day\x1b[2J.jsonl").write_bytes(
        (ROOT / "recordings/sample-btc-20250126.jsonl").read_bytes()
    )
    done = arena_here("data", "list", str(day))
    assert done.returncode == 0, done.stderr
    assert "day[2J.jsonl" in done.stdout and "\x1b" not in done.stdout
