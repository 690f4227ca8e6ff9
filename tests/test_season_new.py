"""``arena season new``: a season file from meta, in season0.toml's format, that loads back.

Meta is the real 2023 answer in tests/data/meta_2023.json (see tests/data/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena_tui.season.file import SeasonError, load_season
from arena_tui.season.new import parse_time, season_toml
from engine import Market, Rules
from tests.clirun import ROOT, arena, arena_here, one_error_line

META = ROOT / "tests" / "data" / "meta_2023.json"
START, END = "2026-12-07T00:00:00Z", "2027-01-04T00:00:00Z"
START_MS, END_MS = 1_796_601_600_000, 1_799_020_800_000


def test_writes_meta_indexes_and_sz_decimals(tmp_path: Path) -> None:
    done = arena(
        "season", "new", "s1", "--coins", "SOL,BTC,LINK", "--start", START, "--end", END,
        "--meta", str(META), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    path = tmp_path / "seasons" / "s1.toml"
    s = load_season(path)
    universe = json.loads(META.read_bytes())["universe"]
    want = [
        Market(coin=c, asset=i, szDecimals=u["szDecimals"])
        for c in ("SOL", "BTC", "LINK")
        for i, u in enumerate(universe)
        if u["name"] == c
    ]
    assert (
        list(s.markets)
        == want
        == [
            Market("SOL", 5, 2),
            Market("BTC", 0, 5),
            Market("LINK", 18, 1),
        ]
    )
    assert (s.id, s.start, s.end, s.rules) == ("s1", START_MS, END_MS, Rules())
    assert done.stdout.splitlines()[-1] == f"rules_sha256 {s.rules_sha256}"
    shown = json.loads(arena("season", "show", str(path), "--json").stdout)
    assert shown["rules_sha256"] == s.rules_sha256
    # Round trip: the loaded season written again gives the same text.
    assert season_toml(s, None, str(META)) == path.read_text()


def test_season0_coins_give_season0_rules_sha256(tmp_path: Path) -> None:
    # A universe listing Season 0's coins where mainnet lists them (HYPE at 159).
    names = {0: ("BTC", 5), 1: ("ETH", 4), 5: ("SOL", 2), 159: ("HYPE", 2)}
    universe = [
        {"name": names.get(i, (f"C{i}", 1))[0], "szDecimals": names.get(i, ("", 1))[1]}
        for i in range(160)
    ]
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"universe": universe}))
    out = tmp_path / "mine.toml"
    done = arena_here(
        "season", "new", "season0", "--coins", "BTC,ETH,SOL,HYPE", "--meta", str(meta),
        "--start", START, "--end", str(END_MS), "--out", str(out), "--json", cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    season0 = load_season(ROOT / "seasons" / "season0.toml")
    assert load_season(out) == season0
    assert json.loads(done.stdout)["rules_sha256"] == season0.rules_sha256

    # The same format as season0.toml: the same rules lines, comments aside.
    def values(path: Path) -> list[str]:
        rules = path.read_text().split("[rules]")[1]
        return [line.split("#")[0].rstrip() for line in rules.splitlines()]

    assert values(out) == values(ROOT / "seasons" / "season0.toml")


def test_refuses_to_overwrite_unless_force(tmp_path: Path) -> None:
    out = tmp_path / "s.toml"
    out.write_text("keep")
    args = ["season", "new", "s", "--coins", "BTC", "--start", START, "--end", END]
    args += ["--meta", str(META), "--out", str(out)]
    msg = one_error_line(arena_here(*args, cwd=ROOT))
    assert f"{out} already exists; pass --force" in msg and out.read_text() == "keep"
    done = arena_here(*args, "--force", "--description", 'BTC "only"', cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert load_season(out).markets == (Market("BTC", 0, 5),)
    assert 'description = "BTC \\"only\\""' in out.read_text()


@pytest.mark.parametrize(
    ("start", "end", "coins", "needle"),
    [
        ("2026-12-07T00:00:30Z", END, "BTC", "--start 2026-12-07T00:00:30Z: not on a minute"),
        (START, "1799020800001", "BTC", "--end 1799020800001: not on a minute boundary"),
        (START, START, "BTC", "--end must be after --start"),
        ("2026-12-07T00:00:00", END, "BTC", "give the time zone (Z for UTC)"),
        ("next monday", END, "BTC", "not an ISO time or integer ms"),
        (START, END, "BTC,HYPE", "not in meta's universe: HYPE"),
        (START, END, " , ", "--coins: name at least one coin"),
    ],
)
def test_bad_arguments_are_one_line_and_write_nothing(
    tmp_path: Path, start: str, end: str, coins: str, needle: str
) -> None:
    args = ["season", "new", "x", "--coins", coins, "--start", start, "--end", end]
    msg = one_error_line(arena_here(*args, "--meta", str(META), cwd=tmp_path))
    assert needle in msg, msg
    assert list(tmp_path.iterdir()) == []


def test_bad_id_and_two_meta_sources(tmp_path: Path) -> None:
    args = ["--coins", "BTC", "--start", START, "--end", END, "--meta", str(META)]
    msg = one_error_line(arena_here("season", "new", "a/b", *args, cwd=tmp_path))
    assert "season id 'a/b' must be 1-64 of [A-Za-z0-9_.-]" in msg
    both = [*args, "--info-url", "http://127.0.0.1:9"]
    msg = one_error_line(arena_here("season", "new", "x", *both, cwd=tmp_path))
    assert "not both" in msg
    assert list(tmp_path.iterdir()) == []


def test_times_iso_or_ms() -> None:
    assert parse_time(START, "--start") == START_MS == parse_time(str(START_MS), "--start")
    assert parse_time("2026-12-07T01:00:00+01:00", "--start") == START_MS
    with pytest.raises(SeasonError, match="minute boundary"):
        parse_time("2026-12-07T00:00:00.001Z", "--start")
