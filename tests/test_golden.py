"""Golden files: committed logs and their expected replay output, byte for byte.

Each golden log is also replayed through the contract's reference model
(``tests/reference.py``, no engine code), whose fills and ranking must be the golden files':
a golden file regenerated from a buggy engine fails here.

To regenerate after a change you have checked by hand (and explained in the commit):
``ARENA_REGEN_GOLDEN=1 python -m pytest tests/test_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena_tui.logs.logfile import LogReader
from arena_tui.season.file import resolve_season
from engine.events import Fill, MinuteMark
from tests.reference import E8, Reference, tdiv

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
CASES = {
    # name: (logs, season file or None = the one the log names)
    "sample-btc-20250126": (["recordings/sample-btc-20250126.jsonl"], None),
    "sample-partial": (["tests/golden/sample-partial.jsonl.lz4"], None),
    "multiday": (["tests/golden/multiday.jsonl.gz"], "tests/golden/multiday.toml"),
}
REGEN = os.environ.get("ARENA_REGEN_GOLDEN") == "1"


def run_replay(name: str, fills: Path, env: dict[str, str] | None = None) -> bytes:
    logs, season = CASES[name]
    cmd = [sys.executable, "-m", "arena_tui.cli", "replay", *logs, "--json", "--fills", str(fills)]
    if season:
        cmd += ["--season", season]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, env=env, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


@pytest.mark.parametrize("name", sorted(CASES))
def test_replay_matches_golden_bytes(name: str, tmp_path: Path) -> None:
    fills = tmp_path / "fills.jsonl"
    out = run_replay(name, fills)
    want_json = GOLDEN / f"{name}.replay.json"
    want_fills = GOLDEN / f"{name}.fills.jsonl"
    if REGEN:
        want_json.write_bytes(out)
        want_fills.write_bytes(fills.read_bytes())
    assert out == want_json.read_bytes()
    assert fills.read_bytes() == want_fills.read_bytes()
    doc = json.loads(out)
    assert doc["fills_sha256"] == hashlib.sha256(fills.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_sha256_is_the_uncompressed_bytes(name: str) -> None:
    from arena_tui.logs.logfile import open_binary

    logs, _ = CASES[name]
    h = hashlib.sha256()
    for log in logs:
        with open_binary(ROOT / log) as f:
            h.update(f.read())
    doc = json.loads((GOLDEN / f"{name}.replay.json").read_bytes())
    assert doc["log_sha256"] == h.hexdigest()


def reference_run(name: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The fills and the replay summary (end, final, ranking) the reference model gives for
    a golden case, each in the contract's output form."""
    logs, season_path = CASES[name]
    paths = [str(ROOT / log) for log in logs]
    season = resolve_season(paths, None if season_path is None else ROOT / season_path)
    ref = Reference(season)
    fills: list[dict[str, Any]] = []
    end = None
    for line in LogReader(paths, hashed=False):
        for e in ref.apply(line):
            if isinstance(e, MinuteMark):
                end = e.t
            elif isinstance(e, Fill):
                fills.append(
                    {
                        "t": e.t,
                        "entry": e.entry,
                        "oid": e.oid,
                        "cloid": f"0x{e.cloid:032x}" if e.cloid else None,
                        "asset": e.asset,
                        "isBuy": e.is_buy,
                        "px": e.px,
                        "sz": e.sz,
                        "liquidity": "taker" if e.taker else "maker",
                        "venue_fee": e.venue_fee,
                        "exec_fee": e.exec_fee,
                    }
                )
    rules, e0 = season.rules, season.rules.starting_equity
    rows = []
    for a in ref.accounts.values():
        ret = tdiv((a.last_equity - e0) * E8, e0)
        score = ret - tdiv(a.mdd * rules.lambda_num, rules.lambda_den)
        eligible = (
            len(a.fill_days) >= rules.min_fill_days
            and a.marks > 0
            and a.active_marks * 100 >= a.marks * rules.min_active_pct
        )
        row = {
            "entry": a.name,
            "score": score,
            "return": ret,
            "mdd": a.mdd,
            "equity": a.last_equity,
            "eligible": eligible,
            "fill_days": len(a.fill_days),
            "active_marks": a.active_marks,
            "marks": a.marks,
        }
        rows.append(((not eligible, -score, a.mdd, a.idx), row))
    ranking = [r for _, r in sorted(rows, key=lambda x: x[0])]
    for rank, r in enumerate(ranking, 1):
        r["rank"] = rank if r["eligible"] else None
    return fills, {"end": end, "final": ref.over, "ranking": ranking}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_reference_model_gives_the_golden_fills_and_ranking(name: str) -> None:
    """The golden files agree with a second reading of the contract, not only with the
    engine that wrote them (so ARENA_REGEN_GOLDEN cannot bake an engine bug in)."""
    fills, summary = reference_run(name)
    golden = json.loads((GOLDEN / f"{name}.replay.json").read_bytes())
    written = (GOLDEN / f"{name}.fills.jsonl").read_bytes()
    assert [json.loads(x) for x in written.splitlines()] == fills
    text = "".join(json.dumps(f, sort_keys=True, separators=(",", ":")) + "\n" for f in fills)
    assert golden["fills_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert {k: golden[k] for k in summary} == summary
    assert len(fills) > 3 and len(summary["ranking"]) >= 3  # not vacuous


def test_same_json_under_any_hash_seed(tmp_path: Path) -> None:
    outs = set()
    for seed in ("0", "1", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.add(run_replay("multiday", tmp_path / f"f{seed}.jsonl", env))
        outs.add(run_replay("sample-btc-20250126", tmp_path / f"g{seed}.jsonl", env))
    assert len(outs) == 2


def test_sample_fills_by_hand() -> None:
    """The sample's four fills, each computed from the real capture and the contract."""
    fills = [
        json.loads(x) for x in (GOLDEN / "sample-btc-20250126.fills.jsonl").read_text().splitlines()
    ]
    got = [
        (
            f["entry"],
            f["oid"],
            f["isBuy"],
            f["px"],
            f["sz"],
            f["liquidity"],
            f["venue_fee"],
            f["exec_fee"],
            f["t"],
        )
        for f in fills
    ]
    assert got == [
        # alice GTC buy 0.01 @ limit 105060, received 19:14:04.000: activates on the first
        # fresh book at/after 19:14:06.000 (received .031, exchange time 05.645: 386 ms old).
        # Best ask 105056.0 x 6.34472: 25% = 1.58618 >= 0.01, so all 0.01 fills there.
        # n = 105056 * 0.01 = $1050.56 = 1050560000 e6; taker 4.5 bps: 1050560000*45/1e5 =
        # 472752; execution 2 bps: 1050560000*20/1e5 = 210112.
        ("alice", 1, True, 10505600000000, 1000000, "taker", 472752, 210112, 1737918846031),
        # carol GTC sell 0.001 @ 105040, received 19:14:08: first book at/after :10.000 is
        # received :10.346; best bid 105055.0 x 3.03623 (25% = 0.7590575 -> 0.75905 in lots);
        # n = $105.055 = 105055000: venue 47274.75 -> 47274, exec 21011.
        ("carol", 5, False, 10505500000000, 100000, "taker", 47274, 21011, 1737918850346),
        # bob ALO buy 0.005 @ 105054 rests (ask 105056). The sweep at 19:14:25.696 prints
        # 105055 (not through), 105054 (a touch: nothing), then 105053 x 0.1428 (through):
        # 25% = 0.0357 >= 0.005, filled at his own 105054 as maker.
        # n = $525.27 = 525270000: maker 1.5 bps = 78790.5 -> 78790; exec 105054.
        ("bob", 2, True, 10505400000000, 500000, "maker", 78790, 105054, 1737918866058),
        # alice reduce-only IOC sell 0.02 @ 105000 received :27 activates on the book received
        # :29.246: best bid 105050 x 1.12931 (25% = 0.28232 in lots) clamped to her 0.01
        # position; the next level's clamp is zero; the IOC closes with the rest.
        # n = $1050.50 = 1050500000: venue 472725, exec 210100.
        ("alice", 6, False, 10505000000000, 1000000, "taker", 472725, 210100, 1737918869246),
    ]


def test_sample_ranking_by_hand() -> None:
    doc = json.loads((GOLDEN / "sample-btc-20250126.replay.json").read_bytes())
    rows = {r["entry"]: r for r in doc["ranking"]}
    # alice bought 0.01 at 105056 and sold it at 105050: -$0.06 = -60000 e6; her fees are
    # 472752 + 210112 + 472725 + 210100 = 1365689: equity = 1e10 - 1425689, and she is flat,
    # so no performance fee (below the fee high-water mark) and no funding (no ctx).
    assert rows["alice"]["equity"] == 10_000_000_000 - 60_000 - 1_365_689
    # R = tdiv(-1425689 * 1e8, 1e10) = -14256 (truncated toward zero from -14256.89).
    assert rows["alice"]["return"] == -14256
    assert rows["alice"]["eligible"] is False  # flat at both marks: 0 of 2 active
    assert (rows["alice"]["active_marks"], rows["alice"]["marks"]) == (0, 2)
    assert [r["entry"] for r in doc["ranking"]] == ["carol", "bob", "dave", "alice"]
    assert [r["rank"] for r in doc["ranking"]] == [1, 2, None, None]
    assert doc["final"] is True and doc["end"] == 1737918960000
    partial = json.loads((GOLDEN / "sample-partial.replay.json").read_bytes())
    assert partial["final"] is False and partial["end"] == 1737918900000
