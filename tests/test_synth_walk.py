"""``arena synth --model walk``: no edge for anyone, and ``--signal``'s edge exactly as planted.

The walk is the null a skill-or-luck verdict is calibrated on, so these tests measure what
the data shows a strategy: returns of the mid, the prints' imbalance, the oracle's gap to
the mid. Each statistic is a correlation of ``n`` pairs, whose standard error with no
relation is ``1 / sqrt(n)``; a "no edge" check allows ``3 / sqrt(n)`` either way (a true
null fails it 0.3% of the time; the days are seeded, so a pass is a pass for good). At one
minute, 6 hours of two coins give n ~ 700 and a band of +-0.11: that catches gross effects
only, so two finer statistics are shown to fire on the default model, whose effects are
known to be there: the prints' lead over the next 5 seconds (n ~ 43,000, band +-0.014) and
the 5-minute variance ratio; the oracle's gap is shown to fire on a signal day. The default
model's bytes are pinned by digests taken before the walk existed.

Two 6-hour days of BTC and ETH (and 2 hours of the default model) are generated once, in
process, through the generator the command uses, and read a second at a time: every line
of the output, and the generator's touch and hidden state (the truth the signal's checks
compare with).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena_tui.logs.logfile import LogReader
from arena_tui.synth.feed import BOOK, CTX, TRADES
from arena_tui.synth.generate import Synth, choose_markets, parse_start, write
from arena_tui.synth.walk import LEAD, MEAN_HOLD_S, REGIMES_MODEL, WALK_MODEL, Model, Walk
from arena_tui.synth.walk import expected_return as truth
from tests.clirun import arena, arena_here

ROOT = Path(__file__).resolve().parents[1]
START = parse_start("2026-12-01T00:00:00Z")
TWO = ["BTC", "ETH"]
HOURS = 6
SIGNAL = 200  # bps an hour: strong enough to see in 6 hours of two coins (3.3 bps a minute)
CTX_PX = re.compile(r'"oraclePx":"([0-9.]+)".*"midPx":"([0-9.]+)"')
BOOK_TOUCH = re.compile(r'"levels":\[\[\{"px":"([0-9.]+)".*?\],\[\{"px":"([0-9.]+)"')
PRINT = re.compile(r'"side":"([AB])","px":"([0-9.]+)"')

# sha256 of ``write(...)`` of the default model, computed on the tree before --model existed.
PINNED = [
    (
        ["BTC", "ETH", "SOL"],
        7,
        0.05,
        "fec4e0491d619851473451d294bed77e9f8771ee5787281e904a3e0659a2b233",
    ),
    (
        ["BTC", "ETH", "SOL", "HYPE"],
        3,
        0.1,
        "bf52c4bb93786c10394dcf437f8ef1b222f408c410e9db388933d8fec6b407ed",
    ),
]


@dataclass
class Coin:
    """One coin's day as read: per second (the generator's) and per minute (the data's)."""

    touch: list[float] = field(default_factory=list)  # (bid + ask) / 2 after each second's step
    state: list[int] = field(default_factory=list)  # the drift state after each step
    flow: list[int] = field(default_factory=list)  # buy prints - sell prints, each second
    # Each minute, at its last asset context: the mid (ctx midPx), oracle - mid over the mid,
    # and the prints' imbalance between the minute before's sample and this one.
    mid: list[float] = field(default_factory=list)
    gap: list[float] = field(default_factory=list)
    imbalance: list[int] = field(default_factory=list)
    through: int = 0  # prints strictly through the last book's touch (a resting order fills)
    prints: int = 0


def read_day(model: Model, seed: int, hours: float, coins: Sequence[str] = TWO) -> dict[str, Coin]:
    synth = Synth(choose_markets(list(coins), None), seed, START, model=model)
    names = [m.coin for m in synth.markets]
    out = {c: Coin() for c in names}
    sample: dict[str, tuple[float, float, int] | None] = dict.fromkeys(names)
    total = dict.fromkeys(names, 0)  # buy prints - sell prints so far
    sampled = dict.fromkeys(names, 0)  # ... at the last minute's sample
    touch: dict[str, tuple[float, float]] = {}
    end = START + round(hours * 3_600_000)
    for t0, window in synth.windows():
        if t0 >= end:
            break
        if t0 % 60_000 == 0:
            for c in names:
                got = sample[c]
                if got is not None:
                    out[c].mid.append(got[0])
                    out[c].gap.append(got[1])
                    out[c].imbalance.append(got[2] - sampled[c])
                    sampled[c] = got[2]
        flow = dict.fromkeys(names, 0)
        for _, order, kind, _, line in window:
            c, day = names[order], out[names[order]]
            if kind == TRADES:
                for side, px_text in PRINT.findall(line):
                    sign = 1 if side == "B" else -1
                    flow[c] += sign
                    total[c] += sign
                    px, (bid, ask) = float(px_text), touch.get(c, (0.0, math.inf))
                    day.through += px > ask if sign > 0 else px < bid
                    day.prints += 1
            elif kind == BOOK:
                found = BOOK_TOUCH.search(line)
                assert found is not None
                touch[c] = (float(found[1]), float(found[2]))
            elif kind == CTX:
                found = CTX_PX.search(line)
                assert found is not None
                oracle, mid = float(found[1]), float(found[2])
                sample[c] = (mid, (oracle - mid) / mid, total[c])
        for c in names:
            feed, day = synth.by_coin[c], out[c]
            day.flow.append(flow[c])
            day.touch.append((feed.price.bid + feed.price.ask) / 2)
            day.state.append(feed.price.state if isinstance(feed.price, Walk) else 0)
    return out


@pytest.fixture(scope="module")
def walk_day() -> dict[str, Coin]:
    return read_day(Model(WALK_MODEL), 3, HOURS)


@pytest.fixture(scope="module")
def signal_day() -> dict[str, Coin]:
    return read_day(Model(WALK_MODEL, SIGNAL), 3, HOURS)


@pytest.fixture(scope="module")
def regimes_day() -> dict[str, Coin]:
    """The default model, where the same statistics must fire: they have the power to."""
    return read_day(Model(REGIMES_MODEL), 3, 2)


def returns(xs: Sequence[float], lag: int = 1) -> list[float]:
    return [b / a - 1 for a, b in zip(xs, xs[lag:], strict=False)]


def sign(x: float) -> float:
    return float((x > 0) - (x < 0))


def pairs(day: dict[str, Coin], what: str) -> tuple[list[float], list[float]]:
    """(what is known at minute k, the mid's return over minute k + 1), pooled over coins."""
    xs: list[float] = []
    ys: list[float] = []
    for coin in day.values():
        r = returns(coin.mid)  # r[k]: from sample k to sample k + 1
        for k in range(1, len(r)):
            known = {
                "last return": r[k - 1],
                "imbalance sign": sign(coin.imbalance[k]),
                "gap": coin.gap[k],
                "gap sign": sign(coin.gap[k]) * (abs(coin.gap[k]) >= LEAD / 2),
            }[what]
            xs.append(known)
            ys.append(r[k])
    return xs, ys


def no_relation(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """The correlation and the band a true null stays in: 3 standard errors, 3 / sqrt(n)."""
    return statistics.correlation(xs, ys), 3 / math.sqrt(len(xs))


def flow_lead(day: dict[str, Coin], ahead: int = 5) -> tuple[float, float]:
    """Corr(this second's print imbalance, the touch's move over the ``ahead`` seconds after
    it): the regimes model's lead (tests/test_synth.py), read the same way on any day."""
    xs: list[float] = []
    ys: list[float] = []
    for coin in day.values():
        # move[i]: from the touch second i's step set (before its prints) to the one after
        # step i + ahead, all of whose moves come after second i's prints.
        move = returns(coin.touch, ahead)
        for i in range(len(move)):
            xs.append(coin.flow[i])
            ys.append(move[i])
    return no_relation(xs, ys)


def variance_ratio(day: dict[str, Coin], q: int = 300) -> tuple[float, float]:
    """Var(q-second moves) / (q Var(1-second moves)) of the touch, averaged over coins, and
    its standard error with no relation (Lo and MacKinlay's, for overlapping moves:
    sqrt(2 (2q - 1)(q - 1) / (3 q n)) a coin). A martingale's is 1; moves that revert
    (the default model's overshoots) pull it under 1, moves that persist (its trends and
    flow) push it over."""
    ratios = []
    for coin in day.values():
        one, many = returns(coin.touch), returns(coin.touch, q)
        ratios.append(
            statistics.fmean(r * r for r in many) / (q * statistics.fmean(r * r for r in one))
        )
    n = len(next(iter(day.values())).touch)
    se = math.sqrt(2 * (2 * q - 1) * (q - 1) / (3 * q * n) / len(ratios))
    return statistics.fmean(ratios), se


# ---- the default model is what it was ---------------------------------------------------------


@pytest.mark.parametrize(("coins", "seed", "hours", "digest"), PINNED)
def test_the_default_models_bytes_are_unchanged(
    coins: list[str], seed: int, hours: float, digest: str
) -> None:
    for model in (None, Model(), Model(REGIMES_MODEL)):
        buf = io.BytesIO()
        write(buf, choose_markets(coins, None), seed, START, hours, model=model)
        assert hashlib.sha256(buf.getvalue()).hexdigest() == digest


def test_model_regimes_on_the_command_line_is_the_default(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out, extra in ((a, []), (b, ["--model", "regimes"])):
        done = arena_here(
            "synth", "--hours", "0.02", "--seed", "5", "--out", str(out), *extra, cwd=ROOT
        )
        assert done.returncode == 0, done.stderr
    assert a.read_bytes() == b.read_bytes()
    head = json.loads(a.read_bytes().split(b"\n")[0])
    assert "model" not in head["synth"] and "--model" not in head["synth"]["command"]


# ---- the walk has no edge -------------------------------------------------------------------


def test_walk_minute_returns_are_not_autocorrelated(walk_day: dict[str, Coin]) -> None:
    xs, ys = pairs(walk_day, "last return")
    rho, band = no_relation(xs, ys)
    assert len(xs) > 700 and abs(rho) < band, (rho, band)


def test_walk_print_imbalance_does_not_predict_the_next_minute(walk_day: dict[str, Coin]) -> None:
    xs, ys = pairs(walk_day, "imbalance sign")
    rho, band = no_relation(xs, ys)
    assert abs(rho) < band, (rho, band)
    # The regression slope (bps of next-minute return per unit of the sign) in its band too.
    slope = statistics.linear_regression(xs, ys).slope
    assert abs(slope) < band * statistics.pstdev(ys) / statistics.pstdev(xs), slope


def test_walk_prints_lead_nothing_second_by_second_where_the_regimes_flow_does(
    walk_day: dict[str, Coin], regimes_day: dict[str, Coin]
) -> None:
    rho, band = flow_lead(walk_day)  # n ~ 43,000: the band is ~0.014
    assert abs(rho) < band, (rho, band)
    rho_r, band_r = flow_lead(regimes_day)
    assert rho_r > 2 * band_r > band, (rho_r, band_r)


def test_walk_moves_neither_revert_nor_persist_over_five_minutes(
    walk_day: dict[str, Coin], regimes_day: dict[str, Coin]
) -> None:
    ratio, se = variance_ratio(walk_day)
    assert abs(ratio - 1) < 3 * se, (ratio, se)
    ratio_r, se_r = variance_ratio(regimes_day)
    assert abs(ratio_r - 1) > 3 * se_r, (ratio_r, se_r)


def test_walk_oracle_gap_does_not_predict_the_next_minute(walk_day: dict[str, Coin]) -> None:
    xs, ys = pairs(walk_day, "gap")
    rho, band = no_relation(xs, ys)
    assert abs(rho) < band, (rho, band)
    # Nor is there an announcement to read: the gap stays inside half the lead.
    signs, _ = pairs(walk_day, "gap sign")
    assert sum(x != 0 for x in signs) < len(signs) // 100


def test_walk_prints_go_through_the_touch_so_resting_orders_can_fill(
    walk_day: dict[str, Coin],
) -> None:
    for coin, day in walk_day.items():
        assert 0.03 < day.through / day.prints < 0.6, (coin, day.through, day.prints)


def test_walk_volatility_is_the_coins_own(walk_day: dict[str, Coin]) -> None:
    from arena_tui.synth.coins import BUILTIN

    for coin, day in walk_day.items():
        r = returns(day.touch[::60])
        vol_day = statistics.pstdev(r) * math.sqrt(1_440)
        # 360 minutes: the standard error of a volatility is about 1 / sqrt(2 n) of it, 4%.
        assert abs(vol_day / BUILTIN[coin][1].vol_day - 1) < 0.15, (coin, vol_day)


# ---- the signal is what was planted ---------------------------------------------------------


def test_signal_oracle_gap_predicts_the_next_minute(signal_day: dict[str, Coin]) -> None:
    xs, ys = pairs(signal_day, "gap sign")
    rho, band = no_relation(xs, ys)
    assert rho > band, (rho, band)
    # The announcement reads the state: when the gap is past half the lead the state agrees.
    for coin in signal_day.values():
        minute_state = coin.state[59::60]
        agree = [
            sign(g) == s for g, s in zip(coin.gap, minute_state, strict=False) if abs(g) >= LEAD / 2
        ]
        assert len(agree) > 60 and sum(agree) >= 0.97 * len(agree)


def test_signal_mean_returns_given_the_state_are_the_truth(signal_day: dict[str, Coin]) -> None:
    by_state: dict[int, list[float]] = {-1: [], 0: [], 1: []}
    for coin in signal_day.values():
        # The minute from second 60k to 60(k+1): its 60 moves follow the states held after
        # steps 60k .. 60(k+1) - 1 (a step moves by the state held before it).
        for k in range(len(coin.touch) // 60 - 1):
            held = set(coin.state[60 * k : 60 * (k + 1)])
            if len(held) == 1:
                by_state[held.pop()].append(coin.touch[60 * (k + 1)] / coin.touch[60 * k] - 1)
    for s, rs in by_state.items():
        assert len(rs) > 60, (s, len(rs))
        mean, se = statistics.mean(rs), statistics.stdev(rs) / math.sqrt(len(rs))
        want = truth(s, SIGNAL, 60)  # s * 200 bps / 60 a minute, compounded each second
        assert abs(want - s * SIGNAL / 1e4 / 60) <= 1e-3 * abs(want)
        assert abs(mean - want) < 3 * se, (s, mean, want, se)
        if s:
            assert mean * s > 3 * se  # and it is there to be found


def test_signal_states_hold_about_the_mean_time(signal_day: dict[str, Coin]) -> None:
    changes = sum(
        sum(a != b for a, b in zip(c.state, c.state[1:], strict=False)) for c in signal_day.values()
    )
    expected = 2 * HOURS * 3_600 / MEAN_HOLD_S  # 24; Poisson: sd ~5
    assert abs(changes - expected) < 4 * math.sqrt(expected), changes


def test_signal_zero_changes_only_the_asset_contexts() -> None:
    """``--signal 0`` announces states that drift nothing: the walk's books and prints."""
    markets = choose_markets(TWO, None)
    walk, placebo = io.BytesIO(), io.BytesIO()
    write(walk, markets, 4, START, 0.2, model=Model(WALK_MODEL))
    write(placebo, markets, 4, START, 0.2, model=Model(WALK_MODEL, 0.0))
    a, b = walk.getvalue().split(b"\n")[1:], placebo.getvalue().split(b"\n")[1:]
    assert len(a) == len(b)
    differ = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    assert differ and all(b"activeAssetCtx" in x for x, _ in differ)
    assert any(b'"oraclePx"' in x for x, _ in differ)


# ---- the command line ------------------------------------------------------------------------


def test_same_arguments_same_bytes_and_the_header_says_the_model(tmp_path: Path) -> None:
    runs: dict[str, list[bytes]] = {}
    for name, extra in (("walk", []), ("signal", ["--signal", "40"])):
        for i in range(2):
            out = tmp_path / f"{name}{i}.jsonl.gz"
            done = arena_here(
                "synth",
                "--model",
                "walk",
                *extra,
                "--coins",
                "BTC,ETH",
                "--hours",
                "0.05",
                "--seed",
                "5",
                "--out",
                str(out),
                "--json",
                cwd=ROOT,
            )
            assert done.returncode == 0, done.stderr
            runs.setdefault(name, []).append(out.read_bytes())
            summary = json.loads(done.stdout)
            assert summary["model"] == "walk"
            assert summary["signal_bps_per_hour"] == (40 if extra else None)
    assert runs["walk"][0] == runs["walk"][1] and runs["signal"][0] == runs["signal"][1]
    assert runs["walk"][0] != runs["signal"][0]
    head: dict[str, Any] = json.loads(gzip.decompress(runs["signal"][0]).split(b"\n")[0])
    assert head["synth"]["model"] == "walk"
    assert head["synth"]["signal_bps_per_hour"] == 40
    assert head["synth"]["signal_lead"] == LEAD
    assert head["synth"]["signal_mean_hold_s"] == MEAN_HOLD_S
    assert head["synth"]["command"].endswith("--model walk --signal 40")
    walk_head = json.loads(gzip.decompress(runs["walk"][0]).split(b"\n")[0])
    assert walk_head["synth"]["model"] == "walk" and "signal_bps_per_hour" not in walk_head["synth"]
    # The readers take the new fields: the reader, and arena logs check.
    path = tmp_path / "signal0.jsonl.gz"
    assert sum(1 for _ in LogReader([path], coins=TWO)) > 300
    done = arena("logs", "check", str(path))
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--signal", "20"], "--signal plants a drift in the walk only: give --model walk"),
        (["--model", "regimes", "--signal", "20"], "--signal plants a drift in the walk only"),
        (["--model", "trend"], "--model 'trend': give regimes or walk"),
        (["--model", "walk", "--signal", "-5"], "--signal -5.0: give 0 to 1000"),
        (["--model", "walk", "--signal", "nan"], "--signal nan: give 0 to 1000"),
    ],
)
def test_bad_model_arguments_are_one_line_errors(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "x.jsonl"
    done = arena_here("synth", "--hours", "0.01", *args, "--out", str(out), cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), done.stderr
    assert message in lines[0]
    assert not out.exists()


def test_help_explains_model_and_signal() -> None:
    done = arena_here("synth", "--help", cwd=ROOT)
    assert done.returncode == 0
    assert "--model" in done.stdout and "--signal" in done.stdout and "BPS" in done.stdout


def test_bench_strategies_trade_on_a_walk_day(tmp_path: Path) -> None:
    day = tmp_path / "day.jsonl.gz"
    args = [
        "--model",
        "walk",
        "--signal",
        "200",
        "--coins",
        "BTC,ETH",
        "--hours",
        "1",
        "--seed",
        "2",
        "--out",
    ]
    done = arena("synth", *args, str(day))
    assert done.returncode == 0, done.stderr
    bench = ROOT / "bench" / "strategies"
    done = arena(
        "backtest",
        str(bench / "random_taker.py"),
        str(day),
        "--vs",
        f"{bench / 'random_maker.py'},{bench / 'oracle_follower.py'}",
        "--out",
        str(tmp_path / "run"),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    fills = {e["entry"]: e["fills"] for e in report["entries"]}
    assert set(fills) == {"random_taker", "random_maker", "oracle_follower"}
    assert fills["random_taker"]["taker"] >= 6
    assert fills["random_maker"]["maker"] >= 3
    assert fills["oracle_follower"]["taker"] >= 2
