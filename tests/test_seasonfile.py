"""Season files on disk and choosing the season a log is replayed under.

Contract: /work/shared/design/season0-engine.md, "Season file" and the last paragraph of
"Replay output" (the backtest defaults). The expected rules and hash are built here from the
contract's text, independently of ``engine.season``.
"""

from __future__ import annotations

import calendar
import copy
import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena_tui.logs.logfile import LogError
from arena_tui.season.file import (
    EmptyWindow,
    SeasonError,
    input_bounds,
    load_season,
    log_markets,
    resolve_season,
)
from engine import Header, Market, Rules, Season, rules_sha256

REPO = Path(__file__).resolve().parents[1]
SEASON0 = REPO / "seasons" / "season0.toml"
SAMPLE_SEASON = REPO / "seasons" / "sample-btc-20250126.toml"
SAMPLE_LOG = REPO / "recordings" / "sample-btc-20250126.jsonl"

MIN = 60_000
DAY = 86_400_000

# The contract's "Season file" table, copied literally.
CONTRACT_RULES: dict[str, Any] = {
    "starting_equity": 10000000000,
    "position_cap_pct": 12,
    "drawdown_limit_pct": 15,
    "max_open_orders": 8,
    "order_lifetime_ms": 3600000,
    "performance_fee_pct": 10,
    "performance_fee_period_ms": 604800000,
    "execution_fee_dbps": 20,
    "taker_fee_dbps": 45,
    "maker_fee_dbps": 15,
    "activation_delay_ms": 2000,
    "stale_book_ms": 10000,
    "take_fraction_pct": 25,
    "print_fraction_pct": 25,
    "deplete_book": False,
    "mark_interval_ms": 60000,
    "funding_interval_ms": 3600000,
    "lambda_num": 1,
    "lambda_den": 1,
    "min_fill_days": 10,
    "min_active_pct": 20,
    "min_order_value": 10000000,
    "rate_limit_requests": 20,
    "rate_limit_window_ms": 10000,
}
SEASON0_MARKETS: list[dict[str, Any]] = [
    {"coin": "BTC", "asset": 0, "szDecimals": 5},
    {"coin": "ETH", "asset": 1, "szDecimals": 4},
    {"coin": "SOL", "asset": 5, "szDecimals": 2},
    {"coin": "HYPE", "asset": 159, "szDecimals": 2},
]


def contract_hash(markets: list[dict[str, Any]], rules: dict[str, Any]) -> str:
    """The contract's rules_sha256, computed from plain dicts."""
    doc = {"markets": sorted(markets, key=lambda m: m["asset"]), "rules": rules}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


SEASON0_SHA256 = contract_hash(SEASON0_MARKETS, CONTRACT_RULES)


def utc_ms(year: int, month: int, day: int) -> int:
    return calendar.timegm(dt.date(year, month, day).timetuple()) * 1000


SEASON0_START = utc_ms(2026, 12, 7)
SEASON0_END = utc_ms(2027, 1, 4)


def as_builtins(season: Season) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(season)
    return out


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return str(v)


def season_toml(
    *,
    id_line: str | None = 'id = "season0"',
    start: str = "2026-12-07T00:00:00Z",
    end: str = "2027-01-04T00:00:00Z",
    markets: list[dict[str, Any]] | None = None,
    rules: dict[str, Any] | None = None,
    extra: str = "",
) -> str:
    parts = [id_line or "", f"start = {start}", f"end = {end}", extra]
    for m in SEASON0_MARKETS if markets is None else markets:
        parts.append("[[markets]]")
        parts += [f"{k} = {toml_value(v)}" for k, v in m.items()]
    parts.append("[rules]")
    parts += [
        f"{k} = {toml_value(v)}" for k, v in (CONTRACT_RULES if rules is None else rules).items()
    ]
    return "\n".join(parts) + "\n"


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def season_error(path: Path) -> str:
    with pytest.raises(SeasonError) as info:
        load_season(path)
    return str(info.value)


def write_log(path: Path, header: dict[str, Any], ts: list[int], tail: bytes = b"") -> Path:
    lines = [json.dumps(header)] + [
        json.dumps({"t": t, "arena": {"type": "tick"}}, separators=(",", ":")) for t in ts
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(x + "\n" for x in lines).encode() + tail)
    return path


REC_HEADER: dict[str, Any] = {
    "arena_log": 1,
    "recording": "hyperliquid",
    "markets": [SEASON0_MARKETS[1], SEASON0_MARKETS[0]],
}


# ---- seasons/season0.toml --------------------------------------------------------------


def test_season0_file_holds_the_contract_rules_and_markets() -> None:
    s = load_season(SEASON0)
    assert s.id == "season0"
    assert msgspec.to_builtins(s.rules) == CONTRACT_RULES
    assert sorted(msgspec.to_builtins(s.rules)) == sorted(CONTRACT_RULES)  # no extra rule
    assert [msgspec.to_builtins(m) for m in s.markets] == SEASON0_MARKETS
    assert s.rules == Rules()  # the engine's defaults are Season 0 too


def test_season0_window_is_28_days_on_minute_boundaries() -> None:
    s = load_season(SEASON0)
    assert (s.start, s.end) == (SEASON0_START, SEASON0_END)
    assert s.start % MIN == 0 and s.end % MIN == 0
    assert (s.end - s.start) // MIN == 40_320  # "a 28-day season has exactly 40,320 marks"


def test_season0_rules_sha256_is_the_contract_hash() -> None:
    # pinned, so that a change to this test's own copy of the table is noticed too
    assert SEASON0_SHA256 == "822b57585741ea6efd59f9052434822aca309c902a4e3f826aac5da15164f71f"
    s = load_season(SEASON0)
    assert s.rules_sha256 == SEASON0_SHA256
    assert rules_sha256(s.markets, s.rules) == SEASON0_SHA256


def test_hash_text_is_sorted_keys_no_whitespace_and_deplete_book_is_a_bool() -> None:
    text = json.dumps(
        {"markets": SEASON0_MARKETS, "rules": CONTRACT_RULES},
        sort_keys=True,
        separators=(",", ":"),
    )
    assert '"deplete_book":false' in text
    assert text.startswith('{"markets":[{"asset":0,"coin":"BTC","szDecimals":5},')
    assert hashlib.sha256(text.encode()).hexdigest() == load_season(SEASON0).rules_sha256


def test_sample_season_hash_matches_its_recording_header() -> None:
    s = load_season(SAMPLE_SEASON)
    assert msgspec.to_builtins(s.rules) == {**CONTRACT_RULES, "min_fill_days": 1}
    header = json.loads(SAMPLE_LOG.read_bytes().split(b"\n", 1)[0])
    want = contract_hash([SEASON0_MARKETS[0]], {**CONTRACT_RULES, "min_fill_days": 1})
    assert s.rules_sha256 == want == header["rules_sha256"]


# ---- what the hash covers ----------------------------------------------------------------


def test_id_and_window_do_not_change_the_hash(tmp_path: Path) -> None:
    text = season_toml(
        id_line='id = "season0-moved"', start="2030-01-01T00:00:00Z", end="2030-01-02T00:00:00Z"
    )
    s = load_season(write(tmp_path, text))
    assert (s.id, s.start, s.end) == ("season0-moved", utc_ms(2030, 1, 1), utc_ms(2030, 1, 2))
    assert s.rules_sha256 == SEASON0_SHA256


def test_market_order_in_the_file_does_not_change_the_hash(tmp_path: Path) -> None:
    shuffled = [SEASON0_MARKETS[i] for i in (3, 1, 0, 2)]
    s = load_season(write(tmp_path, season_toml(markets=shuffled)))
    assert s.rules_sha256 == SEASON0_SHA256


def test_rules_left_out_take_season0_values(tmp_path: Path) -> None:
    s = load_season(write(tmp_path, season_toml(rules={})))
    assert msgspec.to_builtins(s.rules) == CONTRACT_RULES
    assert s.rules_sha256 == SEASON0_SHA256


@pytest.mark.parametrize("rule", [k for k in CONTRACT_RULES if k != "deplete_book"])
def test_any_rule_change_changes_the_hash(tmp_path: Path, rule: str) -> None:
    changed = {**CONTRACT_RULES, rule: CONTRACT_RULES[rule] + 1}
    s = load_season(write(tmp_path, season_toml(rules=changed)))
    assert getattr(s.rules, rule) == CONTRACT_RULES[rule] + 1
    assert s.rules_sha256 != SEASON0_SHA256
    assert s.rules_sha256 == contract_hash(SEASON0_MARKETS, changed)


def test_deplete_book_is_in_the_hash() -> None:
    s = load_season(SEASON0)
    flipped = msgspec.structs.replace(s.rules, deplete_book=True)
    assert rules_sha256(s.markets, flipped) == contract_hash(
        SEASON0_MARKETS, {**CONTRACT_RULES, "deplete_book": True}
    )
    assert rules_sha256(s.markets, flipped) != SEASON0_SHA256


def _markets_with(i: int, **change: Any) -> list[dict[str, Any]]:
    out = copy.deepcopy(SEASON0_MARKETS)
    out[i].update(change)
    return out


@pytest.mark.parametrize(
    "markets",
    [
        _markets_with(0, coin="XBT"),
        _markets_with(2, asset=6),
        _markets_with(3, szDecimals=3),
        SEASON0_MARKETS[:3],
        [*SEASON0_MARKETS, {"coin": "DOGE", "asset": 173, "szDecimals": 0}],
    ],
    ids=["coin", "asset", "szDecimals", "market-removed", "market-added"],
)
def test_any_market_change_changes_the_hash(tmp_path: Path, markets: list[dict[str, Any]]) -> None:
    s = load_season(write(tmp_path, season_toml(markets=markets)))
    assert s.rules_sha256 != SEASON0_SHA256
    assert s.rules_sha256 == contract_hash(markets, CONTRACT_RULES)


# ---- JSON and datetimes ------------------------------------------------------------------


def test_the_same_season_as_json_loads_identically(tmp_path: Path) -> None:
    toml_season = load_season(SEASON0)
    doc = {
        "id": "season0",
        "start": "2026-12-07T00:00:00Z",
        "end": "2027-01-04T00:00:00Z",
        "markets": SEASON0_MARKETS,
        "rules": CONTRACT_RULES,
    }
    as_json = load_season(write(tmp_path, json.dumps(doc), "season0.json"))
    assert as_json == toml_season
    assert as_json.rules_sha256 == SEASON0_SHA256
    doc_ms = {**doc, "start": SEASON0_START, "end": SEASON0_END}
    assert load_season(write(tmp_path, json.dumps(doc_ms), "ms.json")) == toml_season


def test_integer_ms_and_offset_datetimes_mean_the_same_instant(tmp_path: Path) -> None:
    base = load_season(SEASON0)
    ms = load_season(write(tmp_path, season_toml(start=str(SEASON0_START), end=str(SEASON0_END))))
    off = load_season(
        write(
            tmp_path,
            season_toml(start="2026-12-07T01:00:00+01:00", end="2027-01-03T19:00:00-05:00"),
        )
    )
    assert as_builtins(ms) == as_builtins(base)
    assert (off.start, off.end) == (SEASON0_START, SEASON0_END)


# ---- bad season files --------------------------------------------------------------------


def test_unknown_rule_key_is_an_error(tmp_path: Path) -> None:
    rules = {**CONTRACT_RULES, "taker_fee_bps": 45}
    p = write(tmp_path, season_toml(rules=rules))
    msg = season_error(p)
    assert "taker_fee_bps" in msg and str(p) in msg


def test_unknown_top_level_key_is_an_error(tmp_path: Path) -> None:
    p = write(tmp_path, season_toml(extra='strat = "x"'))
    assert "strat" in season_error(p)


def test_missing_id_is_an_error(tmp_path: Path) -> None:
    p = write(tmp_path, season_toml(id_line=None))
    msg = season_error(p)
    assert "id" in msg and str(p) in msg


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2026-12-07T00:00:30Z", "2027-01-04T00:00:00Z"),
        ("2026-12-07T00:00:00Z", "2027-01-04T00:00:00.001Z"),
        (str(SEASON0_START + 1), str(SEASON0_END)),
    ],
    ids=["start-30s", "end-1ms", "start-int-ms"],
)
def test_window_off_minute_boundaries_is_an_error(tmp_path: Path, start: str, end: str) -> None:
    msg = season_error(write(tmp_path, season_toml(start=start, end=end)))
    assert "minute" in msg


@pytest.mark.parametrize("end", ["2026-12-06T00:00:00Z", "2026-12-07T00:00:00Z"])
def test_end_not_after_start_is_an_error(tmp_path: Path, end: str) -> None:
    msg = season_error(write(tmp_path, season_toml(end=end)))
    assert "end" in msg and "start" in msg


def test_deplete_book_true_is_an_error(tmp_path: Path) -> None:
    msg = season_error(write(tmp_path, season_toml(rules={"deplete_book": True})))
    assert "deplete_book" in msg


def test_duplicate_coin_is_an_error(tmp_path: Path) -> None:
    markets = [*SEASON0_MARKETS, {"coin": "BTC", "asset": 200, "szDecimals": 5}]
    msg = season_error(write(tmp_path, season_toml(markets=markets)))
    assert "BTC" in msg


def test_duplicate_asset_is_an_error(tmp_path: Path) -> None:
    markets = [*SEASON0_MARKETS, {"coin": "XBT", "asset": 5, "szDecimals": 5}]
    msg = season_error(write(tmp_path, season_toml(markets=markets)))
    assert "5" in msg and "asset" in msg


@pytest.mark.parametrize("which", ["start", "end"])
def test_naive_datetime_is_an_error(tmp_path: Path, which: str) -> None:
    if which == "start":
        text = season_toml(start="2026-12-07T00:00:00")
    else:
        text = season_toml(end="2027-01-04T00:00:00")
    msg = season_error(write(tmp_path, text))
    assert which in msg and ("zone" in msg or "UTC" in msg)


def test_naive_datetime_string_in_json_is_an_error(tmp_path: Path) -> None:
    doc = {
        "id": "s",
        "start": "2026-12-07T00:00:00",
        "end": SEASON0_END,
        "markets": SEASON0_MARKETS,
    }
    msg = season_error(write(tmp_path, json.dumps(doc), "s.json"))
    assert "start" in msg and ("zone" in msg or "UTC" in msg)


@pytest.mark.parametrize(
    ("rule", "value"),
    [("taker_fee_dbps", 4.5), ("max_open_orders", '"8"'), ("max_open_orders", "true")],
)
def test_a_rule_of_the_wrong_type_is_an_error(tmp_path: Path, rule: str, value: Any) -> None:
    text = season_toml(rules={}).replace("[rules]", f"[rules]\n{rule} = {value}")
    assert rule in season_error(write(tmp_path, text))


def test_unreadable_or_invalid_files_are_season_errors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    assert str(missing) in season_error(missing)
    assert "TOML" in season_error(write(tmp_path, "id = \n", "bad.toml"))
    assert "JSON" in season_error(write(tmp_path, "{", "bad.json"))


# ---- resolve_season: refusing other rules ----------------------------------------------


def test_resolve_refuses_a_log_started_under_other_rules(tmp_path: Path) -> None:
    other = "ab" * 32
    log = write_log(
        tmp_path / "l.jsonl", {"arena_log": 1, "season": "season0", "rules_sha256": other}, [1]
    )
    with pytest.raises(SeasonError) as info:
        resolve_season([str(log)], SEASON0)
    msg = str(info.value)
    assert other in msg and SEASON0_SHA256 in msg


def test_resolve_refuses_when_any_of_several_logs_has_other_rules(tmp_path: Path) -> None:
    good = {"arena_log": 1, "season": "season0", "rules_sha256": SEASON0_SHA256}
    a = write_log(tmp_path / "a.jsonl", good, [1])
    b = write_log(tmp_path / "b.jsonl", {**good, "rules_sha256": "cd" * 32}, [2])
    with pytest.raises(SeasonError) as info:
        resolve_season([str(a), str(b)], SEASON0)
    assert "cd" * 32 in str(info.value) and SEASON0_SHA256 in str(info.value)


def test_resolve_accepts_matching_rules_whatever_the_id(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "l.jsonl",
        {"arena_log": 1, "season": "season0", "rules_sha256": SEASON0_SHA256},
        [1],
    )
    moved = write(
        tmp_path,
        season_toml(
            id_line='id = "renamed"', start="2030-01-01T00:00:00Z", end="2030-02-01T00:00:00Z"
        ),
    )
    assert resolve_season([str(log)], moved).id == "renamed"
    assert resolve_season([str(log)], SEASON0) == load_season(SEASON0)


# ---- resolve_season: a log naming its season ----------------------------------------------


def test_named_season_is_found_in_seasons_from_the_repo_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(
        tmp_path / "logs" / "l.jsonl",
        {"arena_log": 1, "season": "season0", "rules_sha256": SEASON0_SHA256},
        [SEASON0_START - MIN],
    )
    monkeypatch.chdir(REPO)
    s = resolve_season([str(log)], None)
    assert s == load_season(SEASON0)
    assert s.rules_sha256 == SEASON0_SHA256


def test_named_season_found_but_its_hash_differs_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(
        tmp_path / "l.jsonl", {"arena_log": 1, "season": "season0", "rules_sha256": "00" * 32}, [1]
    )
    monkeypatch.chdir(REPO)
    with pytest.raises(SeasonError) as info:
        resolve_season([str(log)], None)
    assert "00" * 32 in str(info.value) and SEASON0_SHA256 in str(info.value)


def test_named_season_not_found_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "logs" / "l.jsonl", {"arena_log": 1, "season": "season9"}, [1])
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SeasonError) as info:
        resolve_season([str(log)], None)
    assert "season9" in str(info.value)


def test_named_season_is_found_beside_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "run" / "l.jsonl", {"arena_log": 1, "season": "mine"}, [1])
    write(
        tmp_path / "run",
        season_toml(id_line='id = "mine"', rules={"min_fill_days": 3}),
        "mine.toml",
    )
    monkeypatch.chdir(tmp_path)
    s = resolve_season([str(log)], None)
    assert (s.id, s.rules.min_fill_days) == ("mine", 3)


def test_sample_recording_resolves_to_its_season(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    s = resolve_season([str(SAMPLE_LOG.relative_to(REPO))], None)
    assert s == load_season(SAMPLE_SEASON)


# ---- resolve_season: backtest defaults -------------------------------------------------


T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("first", "last", "start", "end"),
    [
        (T0, T0 + 10 * MIN, T0, T0 + 10 * MIN),  # exactly on boundaries
        (T0 + 1, T0 + 10 * MIN - 1, T0 + MIN, T0 + 9 * MIN),  # just off them
        (T0 - 1, T0 + 10 * MIN + 1, T0, T0 + 10 * MIN),
        (T0 + 59_999, T0 + 2 * MIN + 59_999, T0 + MIN, T0 + 2 * MIN),
    ],
    ids=["on-boundary", "just-inside", "just-outside", "late-in-minute"],
)
def test_backtest_defaults_from_a_recording(
    tmp_path: Path, first: int, last: int, start: int, end: int
) -> None:
    log = write_log(tmp_path / "rec.jsonl", REC_HEADER, [first, first + 5, last])
    s = resolve_season([str(log)], None)
    assert (s.start, s.end) == (start, end)
    assert msgspec.to_builtins(s.rules) == CONTRACT_RULES
    assert [msgspec.to_builtins(m) for m in s.markets] == SEASON0_MARKETS[:2]  # sorted by asset
    assert s.rules_sha256 == contract_hash(SEASON0_MARKETS[:2], CONTRACT_RULES)


def test_backtest_defaults_over_several_logs(tmp_path: Path) -> None:
    """First input of the first file, last of the last; markets are the headers' union."""
    a = write_log(tmp_path / "a.jsonl", REC_HEADER, [T0 + 7, T0 + MIN])
    b_header = {**REC_HEADER, "markets": [SEASON0_MARKETS[3], SEASON0_MARKETS[0]]}
    b = write_log(tmp_path / "b.jsonl", b_header, [T0 + 3 * MIN, T0 + 4 * MIN + 5])
    c = write_log(tmp_path / "c.jsonl", REC_HEADER, [])  # header only: no inputs
    s = resolve_season([str(a), str(b), str(c)], None)
    assert (s.start, s.end) == (T0 + MIN, T0 + 4 * MIN)
    assert [m.coin for m in s.markets] == ["BTC", "ETH", "HYPE"]
    assert input_bounds([str(a), str(b), str(c)]) == (T0 + 7, T0 + 4 * MIN + 5)


def test_backtest_bounds_ignore_a_torn_tail(tmp_path: Path) -> None:
    torn = b'{"t":%d,"arena":{"type":"tick"}}' % (T0 + 60 * MIN)  # no \n: not an input
    log = write_log(tmp_path / "rec.jsonl", REC_HEADER, [T0 + 1, T0 + 5 * MIN + 1], tail=torn)
    s = resolve_season([str(log)], None)
    assert (s.start, s.end) == (T0 + MIN, T0 + 5 * MIN)


def test_backtest_counts_lines_of_other_channels_as_inputs(tmp_path: Path) -> None:
    log = tmp_path / "rec.jsonl"
    log.write_text(
        json.dumps(REC_HEADER)
        + "\n"
        + json.dumps({"t": T0 - 1, "hl": {"channel": "subscriptionResponse", "data": {}}})
        + "\n"
        + json.dumps({"t": T0 + 3 * MIN, "hl": {"channel": "pong"}})
        + "\n"
    )
    s = resolve_season([str(log)], None)
    assert (s.start, s.end) == (T0, T0 + 3 * MIN)


def test_a_log_spanning_no_whole_minute_has_an_empty_default_window(tmp_path: Path) -> None:
    """start = the boundary after the first input, end = the one before the last: start > end."""
    log = write_log(tmp_path / "rec.jsonl", REC_HEADER, [T0 + 1, T0 + MIN - 1])
    with pytest.raises(EmptyWindow) as info:
        resolve_season([str(log)], None)
    assert (info.value.season.start, info.value.season.end) == (T0 + MIN, T0)
    assert info.value.season.rules_sha256 == contract_hash(SEASON0_MARKETS[:2], CONTRACT_RULES)


def test_backtest_refuses_logs_without_markets_or_inputs(tmp_path: Path) -> None:
    bare = write_log(tmp_path / "bare.jsonl", {"arena_log": 1}, [T0, T0 + 5 * MIN])
    with pytest.raises(SeasonError):
        resolve_season([str(bare)], None)
    empty = write_log(tmp_path / "empty.jsonl", REC_HEADER, [])
    with pytest.raises(SeasonError):
        resolve_season([str(empty)], None)


def test_backtest_bounds_reject_a_bad_t_with_file_and_line(tmp_path: Path) -> None:
    log = tmp_path / "rec.jsonl"
    log.write_text(json.dumps(REC_HEADER) + '\n{"t":1.5}\n{"t":2}\n')
    with pytest.raises(LogError) as info:
        resolve_season([str(log)], None)
    assert f"{log}:2" in str(info.value)


def test_input_bounds_checks_each_header(tmp_path: Path) -> None:
    a = write_log(tmp_path / "a.jsonl", REC_HEADER, [T0])
    b = write_log(tmp_path / "b.jsonl", {"arena_log": 2}, [T0 + 5 * MIN])
    with pytest.raises(LogError) as info:
        input_bounds([str(a), str(b)])
    assert f"{b}:1" in str(info.value)


def test_log_markets_refuses_a_coin_that_changes_asset(tmp_path: Path) -> None:
    h1 = Header(arena_log=1, markets=[Market("BTC", 0, 5)])
    h2 = Header(arena_log=1, markets=[Market("BTC", 0, 4)])
    with pytest.raises(SeasonError):
        log_markets([h1, h2], ["a", "b"])
    h3 = Header(arena_log=1, markets=[Market("XBT", 0, 5)])
    with pytest.raises(SeasonError):
        log_markets([h1, h3], ["a", "b"])
    assert log_markets([h1, h1], ["a", "b"]) == (Market("BTC", 0, 5),)
