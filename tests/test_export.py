"""The run data (``report.rundata``), ``arena export --parquet`` and the DataFrame loader.

One short backtest (the maker and the baselines over the first hour of the shipped
sample) is made once; the tests read its directory. The totals that must survive every
step are report.json's: each entry's fills, fees and final equity, to the unit.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena_tui.cli import app
from arena_tui.logs import daycache
from arena_tui.report import rundata
from arena_tui.report.export import TABLES
from arena_tui.report.frames import load_run
from arena_tui.report.rundata import Collector, FillRow
from arena_tui.report.runrows import round_trips
from arena_tui.season.file import resolve_season
from engine import Engine
from engine.units import notional
from tests.clirun import SYNTH as SAMPLE
from tests.clirun import sample_season


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The maker and the baselines over the sample's first hour (cache off: the pass reads
    only what it needs)."""
    tmp = tmp_path_factory.mktemp("export")
    sample_season(tmp / "hour.json", 60, name="hour")
    before = os.environ.get("ARENA_CACHE")
    os.environ["ARENA_CACHE"] = "0"
    try:
        out = tmp / "run"
        done = cli(
            "backtest", "strategies/maker.py", str(SAMPLE), "--vs", "baselines",
            "--season", str(tmp / "hour.json"), "--out", str(out), "--json",
        )  # fmt: skip
        assert done.exit_code == 0, done.output
    finally:
        if before is None:
            os.environ.pop("ARENA_CACHE", None)
        else:
            os.environ["ARENA_CACHE"] = before
    return out


def report_of(run: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((run / "report.json").read_text())
    return doc


def test_the_backtest_leaves_its_run_data_with_report_jsons_totals(run_dir: Path) -> None:
    assert (run_dir / rundata.RUNDATA_FILE).is_file()
    data = rundata.load(run_dir)
    report = report_of(run_dir)
    assert data.verdict == report["verdict"]
    assert data.entry_names() == ["maker", "momentum", "reversion", "control_random"]
    maker = data.entries[0]
    assert maker.strategy == "maker.py" and maker.params and "requote_ms" in maker.params
    start = data.starting_equity
    for e in report["entries"]:
        name = e["entry"]
        fills = [f for f in data.fills if f.entry == name]
        assert len(fills) == e["fills"]["taker"] + e["fills"]["maker"]
        assert sum(f.venue_fee for f in fills) == e["fees"]["venue"]
        assert sum(f.exec_fee for f in fills) == e["fees"]["execution"]
        marks = [m for m in data.marks if m.entry == name]
        assert len(marks) == e["marks"] and marks[-1].equity == e["equity"]
        assert marks[-1].exit_equity == e["exit_equity"]
        # each coin's PnL, net of fees and funding, adds up to the equity change
        pnl = sum(c.pnl for c in data.coin_pnl if c.entry == name)
        assert pnl == e["equity"] - start + e["fees"]["performance"]
        funding = sum(r.payment for r in data.funding if r.entry == name)
        assert funding == e["funding"]
        accepted = [o for o in data.orders if o.entry == name and o.status == "accepted"]
        assert len(accepted) == e["orders_accepted"]
        closes: dict[str, int] = {}
        for o in accepted:
            if o.close_reason is not None:
                closes[o.close_reason] = closes.get(o.close_reason, 0) + 1
        assert closes == e["closes"]
        rejected = [o for o in data.orders if o.entry == name and o.status == "rejected"]
        reasons = {o.reject_reason for o in rejected}
        assert len(rejected) <= sum(e["rejections"].values()) and reasons <= set(e["rejections"])
    maker_marks = [m for m in data.marks if m.entry == "maker"]
    assert any(m.open_orders for m in maker_marks) and all(
        m.open_orders <= data.max_open_orders and m.cap_used <= m.cap for m in maker_marks
    )
    coins = {c.coin for c in data.coins}
    assert {p.coin for p in data.prices} == coins
    assert len(data.prices) == len(coins) * len(maker_marks)


def test_the_run_data_is_derived_again_from_the_run_log_alone(
    run_dir: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    (copy / rundata.RUNDATA_FILE).unlink()
    again = rundata.load(copy)  # the thin run log finds its source where it was
    assert again == rundata.load(run_dir)
    assert (copy / rundata.RUNDATA_FILE).is_file()  # and is kept for next time


def test_arena_replay_out_leaves_the_same_run_data_and_a_report_html(
    run_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "replayed"
    # the tables are the point here, not the verdict: no twins' pass
    done = cli("replay", str(run_dir / "run.jsonl"), "--twins", "0", "--out", str(out), "--json")
    assert done.exit_code == 0, done.output
    assert (out / "report.html").stat().st_size > 0
    replayed, ran = rundata.load(out), rundata.load(run_dir)
    tables = ("fills", "orders", "marks", "funding", "coin_pnl", "round_trips", "prices")
    for name in tables:
        assert getattr(replayed, name) == getattr(ran, name), name
    assert [e.name for e in replayed.entries] == [e.name for e in ran.entries]


def test_the_day_caches_warm_pass_gathers_the_same_run_data(run_dir: Path, tmp_path: Path) -> None:
    """The warm pass holds books back while nothing reads them: the collector must still
    see the state the cold pass (the fixture's, cache off) shows at every mark."""
    # the first run reads the log and caches it (its verdict is not compared: no twins'
    # pass), the second reads the cache
    for n, more in ((1, ["--twins", "0"]), (2, [])):
        done = cli(
            "backtest", "strategies/maker.py", str(SAMPLE), "--vs", "baselines", "--season",
            str(run_dir.parent / "hour.json"), "--out", str(tmp_path / f"run{n}"), "--json",
            *more,
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        if n == 1:  # so the second is the warm pass
            coins = [m.coin for m in resolve_season([str(SAMPLE)], None).markets]
            cached = daycache.open_day(SAMPLE, coins)
            assert cached is not None, "the first run wrote no cache"
            cached.close()
    cold = rundata.load(run_dir)
    warm = rundata.load(tmp_path / "run2")
    assert warm.prices == cold.prices and warm.marks == cold.marks
    assert warm == cold


def test_export_round_trips_through_the_loader_with_report_jsons_totals(
    run_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "pq"
    done = cli("export", str(run_dir), "--parquet", str(out), "--json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert sorted(doc["files"]) == sorted([f"{t}.parquet" for t in TABLES] + ["run.json"])
    report = report_of(run_dir)
    import polars as pl

    for source in (out, run_dir):  # the export, and the run directory read directly
        run = load_run(source)
        assert (
            run.entries[0] == "maker"
            and run.meta["rules_sha256"] == (report["replay"]["rules_sha256"])
        )
        assert run.fills.schema["time"] == pl.Datetime("ms", "UTC")
        assert set(run.fills["coin"].unique()) <= {"BTC", "ETH", "SOL"}
        for e in report["entries"]:
            name = e["entry"]
            f = run.fills.filter(pl.col("entry") == name)
            assert f.height == e["fills"]["taker"] + e["fills"]["maker"]
            assert f["venue_fee_e6"].sum() == e["fees"]["venue"]
            assert f["exec_fee_e6"].sum() == e["fees"]["execution"]
            assert abs(f["venue_fee"].sum() - e["fees"]["venue"] / 1e6) < 1e-6
            m = run.marks.filter(pl.col("entry") == name).sort("time")
            assert m["equity_e6"][-1] == e["equity"]
            pnl = run.coin_pnl.filter(pl.col("entry") == name)["pnl_e6"].sum()
            assert pnl == e["equity"] - 10_000_000_000 + e["fees"]["performance"]
        trips = run.round_trips
        assert trips.schema["holding"] == pl.Duration("ms")
        assert trips.filter(pl.col("closed").is_not_null())["holding"].min() is not None
    pdrun = load_run(out, backend="pandas")
    maker = pdrun.fills[pdrun.fills["entry"] == "maker"]
    e = next(x for x in report["entries"] if x["entry"] == "maker")
    assert int(maker["venue_fee_e6"].sum()) == e["fees"]["venue"]
    assert str(pdrun.marks["time"].dtype) == "datetime64[ms, UTC]"


def test_export_refuses_what_is_not_a_run_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for args in (
        ["export", str(tmp_path / "missing"), "--parquet", str(tmp_path / "o")],
        ["export", str(tmp_path / "empty"), "--parquet", str(tmp_path / "o")],
    ):
        done = CliRunner().invoke(app, args)
        assert done.exit_code != 0
        assert "Traceback" not in done.output
        assert "arena: error:" in done.output and "not a" in done.output
    assert not (tmp_path / "o").exists()


# ---- round trips, by hand ----------------------------------------------------------------


def fill(t: int, is_buy: bool, px_usd: int, sz_e8: int, fee: int) -> FillRow:
    return FillRow(
        "a", t, "BTC", is_buy, px_usd * 10**8, sz_e8, True, fee, 0, t, None, None,
        None, None, None, None, None, None,
    )  # fmt: skip


def test_round_trips_run_flat_to_flat_and_a_flip_splits_the_fill() -> None:
    season = resolve_season([str(SAMPLE)], None)
    c = Collector(Engine(season))
    fills = [
        fill(1, True, 100, 2 * 10**8, 20),  # long 2 at 100
        fill(2, True, 110, 2 * 10**8, 22),  # long 4, avg 105
        fill(3, False, 120, 4 * 10**8, 48),  # flat: +60, fees 90
        fill(4, False, 100, 1 * 10**8, 10),  # short 1 at 100
        fill(5, True, 90, 3 * 10**8, 30),  # closes the short (+10), opens long 2 at 90
    ]
    trips = round_trips(["a"], fills, c._mark_px)
    first, second, third = trips
    assert (first.side, first.opened_t, first.closed_t, first.qty) == ("long", 1, 3, 4 * 10**8)
    assert (first.avg_entry_px, first.avg_exit_px) == (105 * 10**8, 120 * 10**8)
    assert first.pnl == 60_000_000 - 90 and first.fills == 3
    assert (second.side, second.closed_t, second.avg_exit_px) == ("short", 5, 90 * 10**8)
    assert second.fees == 10 + 10  # a third of the flipping fill's fee
    assert second.pnl == 10_000_000 - 20
    assert (third.side, third.opened_t, third.closed_t, third.avg_exit_px) == (
        "long", 5, None, None,
    )  # fmt: skip
    assert third.qty == 2 * 10**8 and third.fees == 20
    # still open: no mark in an engine that saw no market data, so valued at nothing
    assert third.pnl == -notional(90 * 10**8, 2 * 10**8) - 20
