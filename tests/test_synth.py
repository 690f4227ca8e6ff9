"""``arena synth``: deterministic, Hyperliquid-shaped, readable by the project's own reader.

Files are generated once per module (minutes of data, not hours) through the real command.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from random import Random
from typing import Any

import lz4.frame
import pytest

from arena_tui.logs.logfile import LogReader
from arena_tui.synth.book import DEPTH, Book
from arena_tui.synth.coins import BUILTIN, profile_for
from arena_tui.synth.exact import Grid, Sizes, exp_
from arena_tui.synth.feed import TRADES, CoinFeed, Users
from arena_tui.synth.generate import Synth, choose_markets, header, parse_start, write
from arena_tui.synth.market import BURST, CALM, TREND
from engine.season import Market
from engine.units import lot_e8, parse_e8, price_on_grid
from tests.clirun import arena, arena_here

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "synth-3coins-20261201.jsonl.gz"
START = parse_start("2026-12-01T00:00:00Z")
THREE = choose_markets(["BTC", "ETH", "SOL"], None)
# A meta answer with two coins the table lacks: szDecimals 0 (6 price decimals) and 3.
META = {
    "universe": [
        {"name": "BTC", "szDecimals": 5},
        {"name": "ETH", "szDecimals": 4},
        {"name": "kPEPE", "szDecimals": 0},
        {"name": "SOL", "szDecimals": 2},
        {"name": "XYZ", "szDecimals": 3},
    ]
}


def generate(seed: int, hours: float, markets: list[Market] = THREE) -> bytes:
    buf = io.BytesIO()
    write(buf, markets, seed, START, hours)
    return buf.getvalue()


def generate_file(seed: int, hours: float, markets: list[Market] = THREE) -> bytes:
    """What ``--out FILE`` holds: the same lines, the header saying the first and last t."""
    lines = generate(seed, hours, markets).split(b"\n")
    span = (json.loads(lines[1])["t"], json.loads(lines[-2])["t"])
    return b"\n".join([header(markets, seed, START, hours, span), *lines[1:]])


class PriceCheck:
    def __init__(self, sz_decimals: int) -> None:
        self.sz_decimals = sz_decimals

    def __call__(self, text: str) -> bool:
        return price_on_grid(parse_e8(text), self.sz_decimals)


def lines_of(path: Path) -> list[bytes]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        return f.read().split(b"\n")[:-1]


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """15 minutes of five coins (two of them from --meta), written by the command."""
    tmp = tmp_path_factory.mktemp("synth")
    (tmp / "meta.json").write_text(json.dumps(META))
    out = tmp / "day.jsonl.gz"
    done = arena_here(
        "synth",
        "--coins",
        "BTC,ETH,SOL,kPEPE,XYZ",
        "--meta",
        str(tmp / "meta.json"),
        "--hours",
        "0.25",
        "--seed",
        "11",
        "--out",
        str(out),
        "--json",
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    raw = lines_of(out)
    docs = [json.loads(x) for x in raw]
    by_coin: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for d in docs[1:]:
        hl = d["hl"]
        data = hl["data"]
        coin = data[0]["coin"] if hl["channel"] == "trades" else data["coin"]
        by_coin[coin][hl["channel"]].append(d)
    return {
        "path": out,
        "summary": json.loads(done.stdout),
        "raw": raw,
        "header": docs[0],
        "docs": docs[1:],
        "by_coin": by_coin,
        "sz": {u["name"]: u["szDecimals"] for u in META["universe"]},
    }


# ---- determinism -------------------------------------------------------------------------


def test_same_arguments_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    outs = [tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"]
    for out in outs:
        done = arena_here("synth", "--hours", "0.02", "--seed", "5", "--out", str(out), cwd=ROOT)
        assert done.returncode == 0, done.stderr
    assert outs[0].read_bytes() == outs[1].read_bytes()  # gzip too: no name, no mtime
    plain = gzip.decompress(outs[0].read_bytes())
    assert plain == generate_file(5, 0.02)
    other = generate(6, 0.02)
    assert other.split(b"\n")[1:] != plain.split(b"\n")[1:]


def test_an_lz4_day_is_the_same_bytes_in_a_frame_with_its_content_checksum(
    tmp_path: Path,
) -> None:
    out = tmp_path / "a.jsonl.lz4"
    done = arena_here("synth", "--hours", "0.02", "--seed", "5", "--out", str(out), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    blob = out.read_bytes()
    assert blob[:4] == b"\x04\x22\x4d\x18" and blob[4] & 0x04  # LZ4 frame, content checksum
    assert lz4.frame.decompress(blob) == generate_file(5, 0.02)


def test_a_shorter_run_is_a_prefix_and_coins_do_not_disturb_each_other() -> None:
    short, long = generate(7, 0.02).split(b"\n")[1:-1], generate(7, 0.05).split(b"\n")[1:-1]
    assert len(long) > len(short) > 100
    assert long[: len(short)] == short
    btc_only = generate(7, 0.05, choose_markets(["BTC"], None)).split(b"\n")[1:-1]
    assert btc_only == [x for x in long if b'"coin":"BTC"' in x]


def test_exp_is_exact_enough() -> None:
    for x in (-30.0, -5.3, -0.5, 0.0, 1e-9, 0.7, 3.3, 20.0):
        assert exp_(x) == pytest.approx(math.exp(x), rel=1e-14)


# ---- header, reader, replay -----------------------------------------------------------------


def test_header_says_synthetic_and_how_to_regenerate(day: dict[str, Any]) -> None:
    h = day["header"]
    assert h["arena_log"] == 1 and h["recording"] == "synthetic"
    assert h["generator"] == "arena synth" and "Not real prices" in h["note"]
    assert h["synth"]["seed"] == 11 and h["synth"]["start"] == "2026-12-01T00:00:00Z"
    assert [m["coin"] for m in h["markets"]] == ["BTC", "ETH", "kPEPE", "SOL", "XYZ"]
    assert [m["asset"] for m in h["markets"]] == [0, 1, 2, 3, 4]  # from --meta
    head = json.loads(generate(1, 0.01).split(b"\n")[0])
    assert head["markets"] == [  # the built-in table: Hyperliquid mainnet's indexes
        {"coin": "BTC", "asset": 0, "szDecimals": 5},
        {"coin": "ETH", "asset": 1, "szDecimals": 4},
        {"coin": "SOL", "asset": 5, "szDecimals": 2},
    ]
    assert head["synth"]["command"] == (
        "arena synth --coins BTC,ETH,SOL --hours 0.01 --seed 1 --start 2026-12-01T00:00:00Z"
    )


def test_every_line_passes_the_reader_and_replay_reads_it(day: dict[str, Any]) -> None:
    path = day["path"]
    reader = LogReader([path], coins=list(day["sz"]))
    seen = list(reader)
    assert len(seen) == len(day["raw"]) - 1
    assert all(x.hl is not None for x in seen)
    done = arena("replay", str(path), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["season"] == "backtest" and doc["ranking"] == []
    assert doc["log_sha256"] == hashlib.sha256(b"\n".join(day["raw"]) + b"\n").hexdigest()


def test_json_summary_counts_what_the_file_holds(day: dict[str, Any]) -> None:
    s = day["summary"]
    assert s["lines"] == len(day["raw"]) and s["file_bytes"] == day["path"].stat().st_size
    for coin, chans in day["by_coin"].items():
        got = s["by_coin"][coin]
        assert got["books"] == len(chans["l2Book"])
        assert got["trades"] == len(chans["trades"])
        assert got["prints"] == sum(len(d["hl"]["data"]) for d in chans["trades"])
        assert got["ctxs"] == len(chans["activeAssetCtx"])


# ---- the grid and the shapes ---------------------------------------------------------------


@pytest.mark.parametrize("sz_decimals", [0, 2, 3, 5])
def test_grid_steps_visit_every_valid_price_across_powers_of_ten(sz_decimals: int) -> None:
    grid = Grid(sz_decimals)
    for power in range(3, 8):
        lo = 10**power - 40
        valid = [
            p for p in range(lo, 10**power + 400) if price_on_grid(p * grid.unit_e8, sz_decimals)
        ]
        up = [grid.up(lo)]
        while up[-1] < valid[-1]:
            up.append(grid.above(up[-1]))
        assert up == valid
        down = [valid[-1]]
        while down[-1] > valid[0]:
            down.append(grid.below(down[-1]))
        assert down == valid[::-1]


def test_prices_on_the_grid_and_sizes_in_whole_lots(day: dict[str, Any]) -> None:
    checked = 0
    for coin, chans in day["by_coin"].items():
        szd = day["sz"][coin]
        lot = lot_e8(szd)
        px_ok = PriceCheck(szd)
        for d in chans["l2Book"]:
            for side in d["hl"]["data"]["levels"]:
                for lvl in side:
                    sz = parse_e8(lvl["sz"])
                    assert px_ok(lvl["px"]) and sz > 0 and sz % lot == 0, (coin, lvl)
                    checked += 1
        for d in chans["trades"]:
            for p in d["hl"]["data"]:
                sz = parse_e8(p["sz"])
                assert px_ok(p["px"]) and sz > 0 and sz % lot == 0, (coin, p)
        for d in chans["activeAssetCtx"]:
            ctx = d["hl"]["data"]["ctx"]
            for key in ("markPx", "oraclePx", "prevDayPx"):
                assert px_ok(ctx[key]), (coin, key, ctx[key])
            assert all(px_ok(x) for x in ctx["impactPxs"])
            assert parse_e8(ctx["openInterest"]) % lot == 0
    assert checked > 5 * 2 * 20 * 150


def test_books_twenty_levels_ordered_every_five_seconds(day: dict[str, Any]) -> None:
    for coin, chans in day["by_coin"].items():
        books = chans["l2Book"]
        assert 170 <= len(books) <= 190, coin  # 15 minutes, one every ~5 s
        ts = [d["t"] for d in books]
        gaps = [b - a for a, b in itertools.pairwise(ts)]
        assert min(gaps) >= 4_800 and max(gaps) <= 5_200
        assert 4_950 <= statistics.median(gaps) <= 5_050
        times = []
        for d in books:
            data = d["hl"]["data"]
            assert list(data) == ["coin", "time", "levels"]
            bids, asks = ([parse_e8(x["px"]) for x in side] for side in data["levels"])
            assert len(bids) == len(asks) == 20
            assert all(a > b for a, b in itertools.pairwise(bids))
            assert all(a < b for a, b in itertools.pairwise(asks))
            assert bids[0] < asks[0]
            assert all(type(x["n"]) is int and x["n"] >= 1 for s in data["levels"] for x in s)
            assert 0 < d["t"] - data["time"] < 1_000  # exchange time a little before receipt
            times.append(data["time"])
        assert times == sorted(times)


def test_trades_messages_as_hyperliquid_sends_them(day: dict[str, Any]) -> None:
    tids = set()
    for coin, chans in day["by_coin"].items():
        last = 0
        counts = set()
        for d in chans["trades"]:
            prints = d["hl"]["data"]
            counts.add(len(prints))
            for p in prints:
                assert list(p) == ["coin", "side", "px", "sz", "time", "hash", "tid", "users"]
                assert p["coin"] == coin and p["side"] in ("B", "A")
                assert 0 < d["t"] - p["time"] < 1_000 and p["time"] >= last
                last = p["time"]
                assert len(p["hash"]) == 66 and int(p["hash"], 16) >= 0
                assert type(p["tid"]) is int and p["tid"] not in tids
                tids.add(p["tid"])
                assert len(p["users"]) == 2 and all(len(u) == 42 for u in p["users"])
        assert counts <= {1, 2, 3, 4, 5} and {1, 2} <= counts, coin


def test_prints_take_the_touch_then_walk_through_the_levels() -> None:
    _market, profile = BUILTIN["BTC"]
    grid, sizes = Grid(5), Sizes(5)
    book = Book(grid, sizes, profile, Random(3))
    book.align(1_042_500, 1_042_510)  # 104250.0 / 104251.0
    asks = [(lvl.px, lvl.lots) for lvl in book.asks[:DEPTH]]
    got = [book.take(True, 10**9) for _ in range(5)]  # each empties the level it takes
    assert got == asks[:5]
    assert book.asks[0].px == asks[5][0]
    first = book.bids[0]
    px, lots = book.take(False, 1) or (0, 0)
    assert (px, lots) == (1_042_500, 1) and book.bids[0] is first  # a partial print stays


def test_asset_contexts_are_strings_and_consistent(day: dict[str, Any]) -> None:
    keys = [
        "funding",
        "openInterest",
        "prevDayPx",
        "dayNtlVlm",
        "premium",
        "oraclePx",
        "markPx",
        "midPx",
        "impactPxs",
        "dayBaseVlm",
    ]
    for coin, chans in day["by_coin"].items():
        ctxs = chans["activeAssetCtx"]
        ts = [d["t"] for d in ctxs]
        gaps = [b - a for a, b in itertools.pairwise(ts)]
        assert min(gaps) >= 1_000 and max(gaps) <= 3_000, coin
        floor = 0
        for d in ctxs:
            ctx = d["hl"]["data"]["ctx"]
            assert list(ctx) == keys
            assert all(isinstance(ctx[k], str) for k in keys if k != "impactPxs")
            for k in keys:
                for text in ctx[k] if k == "impactPxs" else [ctx[k]]:
                    parse_e8(text)  # a decimal string
            lo, hi = (parse_e8(x) for x in ctx["impactPxs"])
            assert lo <= parse_e8(ctx["markPx"]) <= hi and lo <= parse_e8(ctx["midPx"]) <= hi
            floor += ctx["funding"] == "0.0000125"
        assert floor > len(ctxs) // 2  # mostly Hyperliquid's interest-only hourly rate


# ---- the market's behaviour ------------------------------------------------------------------


def test_trade_imbalance_leads_the_next_moves() -> None:
    synth = Synth(choose_markets(["BTC"], None), 7, START)
    feed = synth.feeds[0]
    imbalance, mids = [], []
    for n, (_, window) in enumerate(synth.windows()):
        if n == 3600:
            break
        signed = 0
        for _, _, kind, _, line in window:
            if kind == TRADES:
                signed += sum(1 if p["side"] == "B" else -1 for p in json.loads(line)["hl"]["data"])
        imbalance.append(signed)
        mids.append(feed.price.mid)
    lag = 5  # the move over the five seconds after the second's trades are known
    moves = [math.log(mids[i + 1 + lag] / mids[i + 1]) for i in range(len(mids) - lag - 1)]
    assert statistics.correlation(imbalance[: len(moves)], moves) > 0.035


@pytest.mark.parametrize("coin", ["BTC", "SOL"])
def test_a_day_has_calm_trends_bursts_and_the_coins_volatility(coin: str) -> None:
    market, profile = BUILTIN[coin]
    feed = CoinFeed(market, profile, 7, 0, Users(Random(1)), 1.0)
    seen, mids = set(), []
    for s in range(86_400):
        feed.price.step(s * 1000)
        seen.add(feed.price.regime)
        if s % 300 == 0:
            mids.append(feed.price.mid)
    assert seen == {CALM, TREND, BURST}
    returns = [math.log(b / a) for a, b in itertools.pairwise(mids)]
    vol_day = statistics.pstdev(returns) * math.sqrt(288)
    assert 0.7 < vol_day / profile.vol_day < 1.5


def test_generic_profile_prices_near_a_lot_worth_under_a_dollar() -> None:
    p = profile_for(Market(coin="XYZ", asset=9, szDecimals=3))
    assert p.px0 == 500 and p is not BUILTIN["BTC"][1]


# ---- the command line ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--coins", "DOGE"], "unknown coin DOGE"),
        (["--start", "yesterday"], "--start 'yesterday': not a time"),
        (["--hours", "0"], "--hours 0: give more than 0"),
        (["--hours", "1000"], "at most 744"),
        (["--out", "-", "--json"], "--json prints a summary on stdout"),
        (["--coins", "BTC,DOGE", "--meta", "META"], "not in --meta's universe: DOGE"),
        (["--meta", "MISSING"], "cannot read"),
    ],
)
def test_bad_arguments_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "meta.json").write_text(json.dumps(META))
    real = [str(tmp_path / "meta.json") if a == "META" else a for a in args]
    real = [str(tmp_path / "nope.json") if a == "MISSING" else a for a in real]
    if "--out" not in real:
        real += ["--out", str(tmp_path / "x.jsonl")]
    done = arena_here("synth", "--hours", "0.01", *real, cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), done.stderr
    assert message in lines[0]
    assert not (tmp_path / "x.jsonl").exists()


def test_existing_out_is_refused_unless_force(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    out.write_text("keep me\n")
    done = arena_here("synth", "--hours", "0.01", "--out", str(out), cwd=ROOT)
    assert done.returncode == 1 and "already exists (give --force" in done.stderr
    assert out.read_text() == "keep me\n"
    done = arena_here("synth", "--hours", "0.01", "--out", str(out), "--force", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == generate_file(7, 0.01)
    assert [p.name for p in tmp_path.iterdir()] == ["x.jsonl"]  # no temp file left


def test_stdout_and_default_name(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "arena_tui.cli", "synth", "--hours", "0.01", "--out", "-"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == generate(7, 0.01)
    # By default into the data directory's recordings/ (as arena record), never into the
    # project's git-tracked recordings/; the path is said.
    env = {**os.environ, "ARENA_DATA_DIR": str(tmp_path / "data")}
    done2 = arena_here("synth", "--hours", "0.01", "--coins", "SOL,BTC", cwd=tmp_path, env=env)
    assert done2.returncode == 0, done2.stderr
    made = tmp_path / "data/recordings/synth-SOL-BTC-20261201T0000Z-0.01h-seed7.jsonl.gz"
    assert gzip.decompress(made.read_bytes()) == generate_file(7, 0.01, THREE[:1] + THREE[2:])
    assert not (tmp_path / "recordings").exists()
    assert f"wrote {made}: " in done2.stderr
    assert f"arena backtest STRATEGY {made}" in done2.stderr
    wide = {**env, "COLUMNS": "500"}
    assert str(tmp_path / "data/recordings") in arena("synth", "--help", env=wide).stdout


def test_help_teaches() -> None:
    done = arena_here("synth", "--help", cwd=ROOT)
    assert done.returncode == 0
    for word in ("--coins", "--hours", "--seed", "--start", "--meta", "--force", "Example"):
        assert word in done.stdout


# ---- the shipped sample ------------------------------------------------------------------------


def test_shipped_sample_is_synthetic_and_what_its_command_generates() -> None:
    with gzip.open(SAMPLE, "rb") as f:
        head = json.loads(f.readline())
        first = [f.readline() for _ in range(2000)]
    assert head["recording"] == "synthetic" and head["generator"] == "arena synth"
    command = head["synth"]["command"]
    readme = (ROOT / "recordings" / "README.md").read_text()
    assert f"{command} --out recordings/{SAMPLE.name}" in readme
    args = shlex.split(command)[2:]
    opts = dict(zip(args[::2], args[1::2], strict=True))
    markets = choose_markets(opts["--coins"].split(","), None)
    assert head["markets"] == [
        {"coin": m.coin, "asset": m.asset, "szDecimals": m.szDecimals} for m in markets
    ]
    # The generator is prefix-stable: a few minutes of the same command are the file's start.
    again = io.BytesIO()
    write(again, markets, int(opts["--seed"]), parse_start(opts["--start"]), 0.05)
    lines = [x + b"\n" for x in again.getvalue().split(b"\n")[1:-1]]
    assert len(lines) > 300
    assert first[: len(lines)] == lines
