"""``arena fetch`` against moto's S3 server on loopback, ``arena data list`` and directories
of days for ``arena backtest``/``replay``.

The fixture (tests/s3fixture.py) holds two days x two coins in the archives' formats, built
from a synthetic market, with fills in two layouts on the transition day (``node_fills`` in
hour 0, ``node_fills`` and ``node_fills_by_block`` both in hour 1, as on 2025-07-27) and
only hours 0-1 present (the rest of each day is a gap). What a fetch writes is compared with
the market the objects were built from; every GET the server answers is counted.
"""

from __future__ import annotations

import gzip
import http.server
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lz4.frame
import pytest

from arena_tui.logs import catalog
from arena_tui.logs.daylog import DayLog
from arena_tui.logs.logcheck import check_logs
from arena_tui.record.archive import FillStats, decimal_text, prints_from_fills
from arena_tui.record.recorder import Recorder
from tests.clirun import ROOT, arena, arena_here, one_error_line, until
from tests.s3fixture import (
    ARCHIVE,
    KEYS,
    NODE,
    Market,
    book_object,
    ctx_object,
    day_ms,
    fills_of,
    lz4_bytes,
    moto_s3,
    node_trades_object,
    put_day,
    synth_day,
)

META = ROOT / "tests" / "data" / "meta_2023.json"
COLLECTOR = ROOT / "tests" / "data" / "hftbacktest_collector_btc_20250126.gz"
COINS = ["BTC", "ETH"]
GET = re.compile(r'"GET /([^?\s]+) HTTP')


class Server:
    def __init__(self, endpoint: str, s3: Any, days: dict[str, Market]) -> None:
        self.endpoint, self.s3, self.days = endpoint, s3, days
        self.gets: Counter[str] = Counter()

    def note(self, record: logging.LogRecord) -> None:
        m = GET.search(record.getMessage())
        if m:
            self.gets[m.group(1)] += 1


class _Counting(logging.Handler):
    def __init__(self, server: Server) -> None:
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        self.server.note(record)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with moto_s3() as (endpoint, s3):
        d1 = synth_day("20250727", [*COINS, "SOL"], [0, 1])
        put_day(
            s3,
            "20250727",
            d1,
            {0: ["node_fills"], 1: ["node_fills", "node_fills_by_block"]},
            [*COINS, "SOL"],
        )
        d2 = synth_day("20250728", COINS, [0, 1], seed=8)
        put_day(s3, "20250728", d2, {0: ["node_fills_by_block"], 1: ["node_fills_by_block"]}, COINS)
        # 07-29: ETH's books are missing altogether; 07-30: an hour's book is a truncated frame
        put_day(s3, "20250729", d1, {0: ["node_fills_by_block"]}, ["BTC"])
        put_day(s3, "20250730", d1, {0: ["node_fills_by_block"]}, COINS)
        whole = book_object(d1.books[("BTC", 0)])
        s3.put_object(
            Bucket=ARCHIVE,
            Key="market_data/20250730/0/l2Book/BTC.lz4",
            Body=whole[: len(whole) // 2],
        )
        # 07-31: BTC's hour-0 books and hour 1's fills are empty (0-byte) objects
        put_day(s3, "20250731", d1, {0: ["node_fills_by_block"], 1: ["node_fills_by_block"]}, COINS)
        s3.put_object(Bucket=ARCHIVE, Key="market_data/20250731/0/l2Book/BTC.lz4", Body=b"")
        s3.put_object(Bucket=NODE, Key="node_fills_by_block/hourly/20250731/1.lz4", Body=b"")
        srv = Server(endpoint, s3, {"20250727": d1, "20250728": d2})
        handler = _Counting(srv)
        log = logging.getLogger("werkzeug")
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        try:
            yield srv
        finally:
            log.removeHandler(handler)


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(KEYS, ARENA_DATA_DIR=str(tmp / "data"), ARENA_CACHE_DIR=str(tmp / "daycache"))
    env.update(
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE=str(tmp / "none"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp / "none"),
    )
    env.update(extra)
    return env


def fetch_args(srv: Server, first: str, last: str, *more: str) -> list[str]:
    return [
        "fetch",
        "--coins",
        ",".join(COINS),
        "--from",
        first,
        "--to",
        last,
        "--meta",
        str(META),
        "--endpoint-url",
        srv.endpoint,
        *more,
    ]


def read_log(path: Path) -> list[dict[str, Any]]:
    with lz4.frame.open(path, "rb") as f:
        return [json.loads(x) for x in f.read().split(b"\n")[:-1]]


def raw_hl(path: Path, channel: str) -> list[tuple[int, bytes]]:
    """(t, hl bytes) of a log's lines of ``channel``, as written."""
    with (lz4.frame.open if path.suffix == ".lz4" else open)(path, "rb") as f:
        data = f.read()
    out = []
    for line in data.split(b"\n")[1:-1]:
        if b'"hl":{"channel":"%s"' % channel.encode() in line:
            head, rest = line.split(b',"hl":', 1)
            out.append((int(head[5:]), rest[:-1]))
    return out


def history(tmp: Path) -> Path:
    return tmp / "data" / "history"


def in_here(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``arena(*args, env=env)`` in this process (in arena's directory, its environment
    exactly ``env`` meanwhile): no new interpreter importing the CLI. A real process still
    runs each command family here once (a fetch killed with -9, one on a terminal, one
    refused off a terminal, ``logs check``, ``backtest``, ``data list``)."""
    return arena_here(*args, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def fetched(server: Server, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, str]:
    tmp = tmp_path_factory.mktemp("fetched")
    before = sum(server.gets.values())
    done = in_here(
        *fetch_args(server, "2025-07-27", "2025-07-28", "--yes", "--json"), env=env_for(tmp)
    )
    assert done.returncode == 0, done.stderr
    assert sum(server.gets.values()) - before == 14  # 8 books, 2 CSVs, 4 fill hours (1 overlap)
    return tmp, json.loads(done.stdout), done.stderr


def test_fetch_two_days_is_the_market_it_was_built_from(
    server: Server, fetched: tuple[Path, Any, str]
) -> None:
    tmp, doc, _ = fetched
    lates = 0
    assert doc["plan"]["download_objects"] == 14 and doc["plan"]["cost_usd"] > 0
    assert [d["day"] for d in doc["days"]] == ["2025-07-27", "2025-07-28"]
    for day, m in server.days.items():
        path = history(tmp) / f"hl-{day[:4]}-{day[4:6]}-{day[6:]}.jsonl.lz4"
        lines = read_log(path)
        head = lines[0]
        assert head["source"] == "hl-s3" and [x["coin"] for x in head["markets"]] == COINS
        assert head["first_t"] == lines[1]["t"] and head["last_t"] == lines[-1]["t"]
        # books: the archive's messages byte for byte, at their receive ms
        want = sorted((t, raw) for (c, _), ls in m.books.items() if c in COINS for t, raw in ls)
        assert sorted(raw_hl(path, "l2Book")) == want
        # trades: one print per trade (not one per fill), the taker's side, the tid, users
        got = [
            p
            for x in lines[1:]
            if x.get("hl", {}).get("channel") == "trades"
            for p in x["hl"]["data"]
        ]
        built = [p for ps in m.prints.values() for p in ps if p["coin"] in COINS]
        key = lambda p: (p["time"], p["tid"])  # noqa: E731
        assert sorted(got, key=key) == sorted(built, key=key)
        # a message holds one coin's prints of one time, stamped with it; a print of the day
        # before (in this day's hour 0) at the day's start, one earlier than the print before
        # it (the next hour's object starts before the last one ends) raised: both "held"
        late = 0
        for x in lines[1:]:
            if x.get("hl", {}).get("channel") == "trades":
                (one,) = {(p["coin"], p["time"]) for p in x["hl"]["data"]}
                assert x["t"] >= one[1] and x["t"] - one[1] < 1000
                late += x["t"] != one[1]
        summary = next(d for d in doc["days"] if d["day"].replace("-", "") == day)
        assert late <= summary["held"]
        lates += late
        ctxs = [
            x["hl"]["data"]
            for x in lines[1:]
            if "hl" in x and x["hl"]["channel"] == "activeAssetCtx"
        ]
        assert len(ctxs) == sum(1 for _, c in m.ctxs if c["coin"] in COINS)
        assert all(re.fullmatch(r"-?\d+\.\d+", c["ctx"]["funding"]) for c in ctxs)
        gaps = [x["arena"] for x in lines[1:] if "arena" in x]
        assert sorted(g["what"] for g in gaps) == ["l2Book BTC", "l2Book ETH", "trades"]
        assert all(g["from"] == day_ms(day) + 2 * 3_600_000 for g in gaps)

    assert lates > 0  # the fixture has such prints (2025-07-27 00:00:00 and 01:00:00)
    check = arena("logs", "check", *sorted(map(str, history(tmp).glob("hl-*"))), "--json")
    assert check.returncode == 0, check.stdout + check.stderr
    report = json.loads(check.stdout)
    assert report["duplicate_prints"] == 0 and report["bad_lines"] == 0
    assert report["channels"]["arena:gap"] == 6
    assert {(f["header"]["kind"], f["header"]["source"]) for f in report["files"]} == {
        ("fetched", "hl-s3")
    }
    text = in_here("logs", "check", *sorted(map(str, history(tmp).glob("hl-*"))))
    assert text.stdout.count("recording hyperliquid (fetched from hl-s3)  BTC ETH") == 2


def test_backtest_a_directory_of_fetched_days_fills_the_maker(
    fetched: tuple[Path, Any, str],
) -> None:
    tmp, _, _ = fetched
    out = tmp / "run"
    done = in_here(
        "backtest",
        "strategies/maker.py",
        str(history(tmp)),
        "--from",
        "2025-07-27",
        "--to",
        "2025-07-28",
        "--coins",
        "BTC,ETH",
        "--vs",
        "baselines",
        "--twins",  # the fills are the point here, not the verdict: no twins' pass
        "0",
        "--out",
        str(out),
        "--json",
        env=env_for(tmp),
    )
    assert done.returncode == 0, done.stderr
    fills = [json.loads(x) for x in (out / "fills.jsonl").read_text().splitlines()]
    maker = [f for f in fills if f.get("entry") == "maker"]
    assert maker and all(f["liquidity"] == "maker" for f in maker), fills[:3]
    # the maker filled on prints rebuilt from the node's fills: their tids are the trades'
    assert all(f["quote"]["source"] == "print" and f["quote"]["tid"] for f in maker)
    # a day the directory lacks: one line naming it and the fetch that gets it
    done = arena(
        "backtest",
        "strategies/maker.py",
        str(history(tmp)),
        "--from",
        "2025-07-27",
        "--to",
        "2025-07-29",
        env=env_for(tmp),
    )
    line = one_error_line(done)
    assert "no log of 2025-07-29" in line and "arena fetch" in line


def test_data_list_shows_the_days_with_counts(
    fetched: tuple[Path, Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp, doc, _ = fetched
    done = arena("data", "list", "--json", env=env_for(tmp))
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert [(r["day"], r["coin"], r["kind"]) for r in rows] == [
        ("2025-07-27", "BTC", "fetched"),
        ("2025-07-27", "ETH", "fetched"),
        ("2025-07-28", "BTC", "fetched"),
        ("2025-07-28", "ETH", "fetched"),
    ]
    for d in doc["days"]:
        mine = [r for r in rows if r["day"] == d["day"]]
        assert sum(r["prints"] for r in mine) == d["prints"]
        assert sum(r["books"] for r in mine) == d["books"]
        assert all(r["books_coverage_pct"] == 8 and r["gaps"] == 3 for r in mine)  # 2 h of 24
    table = in_here("data", "list", env=env_for(tmp)).stdout
    assert "2025-07-28  ETH     fetched" in table
    # the counts are kept: a second listing reads no file that did not change
    monkeypatch.setattr(catalog, "count_file", lambda *a: pytest.fail("read again"))
    assert catalog.rows(catalog.scan(history(tmp))) == rows
    # --from/--to/--coins choose days of a directory: with files only, one clear error
    with pytest.raises(catalog.CatalogError, match="give DIR"):
        catalog.expand_logs(
            [ROOT / "recordings" / "sample-btc-20250126.jsonl"], "2025-01-26", None, None
        )


def test_a_rerun_downloads_nothing_and_a_new_coin_reuses_the_cache(
    server: Server, fetched: tuple[Path, Any, str]
) -> None:
    tmp, _, _ = fetched
    before = server.gets.copy()
    done = in_here(*fetch_args(server, "2025-07-27", "2025-07-28", "--json"), env=env_for(tmp))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["plan"]["done"] == ["2025-07-27", "2025-07-28"]
    assert server.gets == before  # nothing listed, nothing fetched
    # adding SOL to 07-27 rebuilds that day: only SOL's two book objects are downloaded
    done = in_here(
        "fetch",
        "--coins",
        "SOL",
        "--from",
        "2025-07-27",
        "--meta",
        str(META),
        "--endpoint-url",
        server.endpoint,
        "--yes",
        "--json",
        env=env_for(tmp),
    )
    assert done.returncode == 0, done.stderr
    new = server.gets - before
    assert sorted(new) == [f"{ARCHIVE}/market_data/20250727/{h}/l2Book/SOL.lz4" for h in (0, 1)]
    head = read_log(history(tmp) / "hl-2025-07-27.jsonl.lz4")[0]
    assert [m["coin"] for m in head["markets"]] == ["BTC", "ETH", "SOL"]


def test_resume_after_kill_fetches_nothing_twice(server: Server, tmp_path: Path) -> None:
    cache = tmp_path / "data" / "s3"
    before = server.gets.copy()
    args = [
        sys.executable,
        "-m",
        "arena_tui.cli",
        *fetch_args(server, "2025-07-27", "2025-07-28", "--yes"),
    ]
    proc = subprocess.Popen(
        args, cwd=ROOT, env=env_for(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        until(
            lambda: any(p.suffix == ".lz4" for p in cache.rglob("*.lz4")),
            "a first object",
            timeout=30,
        )
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(10)
    partial = {  # the keys of the objects being downloaded when killed (name.<etag>.ext.part)
        re.sub(r"\.[0-9a-f]{32}\.", ".", str(p.relative_to(cache))).removesuffix(".part")
        for p in cache.rglob("*.part")
    }
    days = list(history(tmp_path).glob("hl-*")) if history(tmp_path).exists() else []
    for day in days:  # a day is whole or absent
        assert check_logs([day]).ok
    first = server.gets - before
    done = in_here(*fetch_args(server, "2025-07-27", "2025-07-28", "--yes"), env=env_for(tmp_path))
    assert done.returncode == 0, done.stderr
    both = server.gets - before
    assert sum(both.values()) <= 14 + len(partial), (first, both)  # a .part resumes: one GET more
    assert all(n == 1 for k, n in both.items() if k not in partial), (partial, both)
    assert len(list(history(tmp_path).glob("hl-*.jsonl.lz4"))) == 2


def test_a_part_file_resumes_with_a_range(server: Server, tmp_path: Path) -> None:
    done = in_here(
        *fetch_args(server, "2025-07-28", "2025-07-28", "--dry-run", "--json"),
        env=env_for(tmp_path),
    )
    plan = json.loads(done.stdout)["plan"]
    total = plan["download_bytes"]
    assert plan["download_objects"] == 7 and not (tmp_path / "data" / "s3").exists()
    obj = server.s3.get_object(Bucket=ARCHIVE, Key="market_data/20250728/0/l2Book/BTC.lz4")
    body, etag = obj["Body"].read(), obj["ETag"].strip('"')
    part = tmp_path / "data" / "s3" / ARCHIVE / f"market_data/20250728/0/l2Book/BTC.{etag}.lz4.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(body[:1000])
    done = in_here(
        *fetch_args(server, "2025-07-28", "2025-07-28", "--yes", "--json"), env=env_for(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["downloaded"]["bytes"] == total - 1000
    assert part.with_suffix("").read_bytes() == body  # .part renamed to the object, whole


def test_no_download_without_yes_off_a_terminal(server: Server, tmp_path: Path) -> None:
    done = arena(*fetch_args(server, "2025-07-28", "2025-07-28"), env=env_for(tmp_path))
    assert "not downloading without --yes" in one_error_line(done)
    assert "transfer cost about $0.0002 at $0.09/GB" in done.stdout  # shown before refusing
    assert not (tmp_path / "data" / "s3").exists()


class _Refuse(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = (
            b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code>'
            b"<Message>The AWS Access Key Id you provided does not exist in our records."
            b"</Message></Error>"
        )
        self.send_response(403)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_errors_are_one_line_and_leave_no_partial_day(server: Server, tmp_path: Path) -> None:
    env = env_for(tmp_path)
    nokeys = {k: v for k, v in env.items() if k not in KEYS}
    line = one_error_line(in_here(*fetch_args(server, "2025-07-28", "2025-07-28"), env=nokeys))
    assert "no AWS credentials found" in line
    refuse = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
    threading.Thread(target=refuse.serve_forever, daemon=True).start()
    try:
        args = fetch_args(server, "2025-07-28", "2025-07-28")
        args[args.index(server.endpoint)] = f"http://127.0.0.1:{refuse.server_address[1]}"
        line = one_error_line(in_here(*args, env=env))
    finally:
        refuse.shutdown()
    assert "refused the credentials" in line and "InvalidAccessKeyId" in line
    line = one_error_line(
        in_here(*fetch_args(server, "2025-07-29", "2025-07-29", "--yes"), env=env)
    )
    assert "l2Book/ETH.lz4: no object for any hour of 2025-07-29" in line
    line = one_error_line(
        in_here(*fetch_args(server, "2025-07-30", "2025-07-30", "--yes"), env=env)
    )
    assert "s3://hyperliquid-archive/market_data/20250730/0/l2Book/BTC.lz4" in line
    assert "truncated or corrupt" in line
    assert not history(tmp_path).exists() or not list(history(tmp_path).iterdir())
    bad = list((tmp_path / "data" / "s3" / ARCHIVE).rglob("20250730/0/l2Book/BTC.*"))
    assert bad == []  # dropped from the cache: a re-run downloads it again


def here(monkeypatch: pytest.MonkeyPatch) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run(*args, **env)``: ``arena ARGS`` in this process (a second quicker than a new
    one), its environment exactly ``env`` meanwhile."""

    def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        with monkeypatch.context() as m:
            for k in os.environ:
                m.delenv(k)
            for k, v in env.items():
                m.setenv(k, v)
            return arena_here(*args)

    return run


EMPTY = [
    f"s3://{ARCHIVE}/market_data/20250731/0/l2Book/BTC.lz4",
    f"s3://{NODE}/node_fills_by_block/hourly/20250731/1.lz4",
]


def test_an_empty_object_is_a_missing_hour(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = fetch_args(server, "2025-07-31", "2025-07-31", "--yes", "--json")
    done = here(monkeypatch)(*args, **env_for(tmp_path))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["plan"]["empty"] == EMPTY
    assert "2 empty objects (0 bytes) for 2025-07-31" in done.stderr
    assert all(uri in done.stderr for uri in EMPTY)
    lines = read_log(history(tmp_path) / "hl-2025-07-31.jsonl.lz4")
    assert [m["coin"] for m in lines[0]["markets"]] == COINS
    hour = 3_600_000
    gaps = {(g["what"], g["from"] - day_ms("20250731")) for x in lines if (g := x.get("arena"))}
    # BTC's books from hour 0 (and from hour 2, where the fixture ends), ETH's from hour 2;
    # the fills from hour 1
    assert gaps == {
        ("l2Book BTC", 0),
        ("l2Book BTC", 2 * hour),
        ("l2Book ETH", 2 * hour),
        ("trades", hour),
    }
    assert not list((tmp_path / "data" / "s3").rglob("*.part"))


def test_endpoint_region_credentials_and_meta_errors_are_one_line(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = here(monkeypatch)
    env = env_for(tmp_path)
    base = fetch_args(server, "2025-07-28", "2025-07-28", "--dry-run")
    bad = list(base)
    bad[bad.index(server.endpoint)] = "notaurl"
    assert "--endpoint-url 'notaurl': not a URL" in one_error_line(run(*bad, **env))
    line = one_error_line(run(*base, "--region", "bad region", **env))
    assert "--region 'bad region': not a region name" in line
    # a dry run lists, and listing a requester-pays bucket needs credentials: said so
    nokeys = {k: v for k, v in env.items() if k not in KEYS}
    assert "--dry-run needs them too" in one_error_line(run(*base, **nokeys))
    # a dry run needs no meta (the listing is the plan); a fetch that writes days does, and
    # with meta out of reach it names the shipped season file that holds the markets
    # (the info endpoint is https: through a proxy where nothing listens; S3 is loopback)
    offline = dict(env, HTTPS_PROXY=f"http://127.0.0.1:{dead_port()}", NO_PROXY="127.0.0.1")
    no_meta = list(base)
    del no_meta[no_meta.index("--meta") : no_meta.index("--meta") + 2]
    done = run(*no_meta, "--json", **offline)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["plan"]["download_objects"] == 7
    no_meta.remove("--dry-run")
    line = one_error_line(run(*no_meta, "--yes", **offline))
    assert "cannot fetch meta" in line and "--meta " in line
    shipped = str(ROOT / "seasons" / "season0.toml")
    assert shipped in line
    # and that file does: its markets are meta's entries for its coins
    season = list(base)
    season[season.index(str(META))] = shipped
    assert run(*season, **offline).returncode == 0
    season[season.index("BTC,ETH")] = "BTC,DOGE"
    assert "not in meta's universe: DOGE" in one_error_line(run(*season, **offline))
    assert not (tmp_path / "data" / "s3").exists()


def dead_port() -> int:
    """A port on loopback where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_a_fetched_day_and_a_recorded_day_have_the_same_books(
    server: Server, tmp_path: Path
) -> None:
    """The collector's real capture of 2025-01-26 as the archive would hold it, fetched, and
    as ``arena record``'s recorder writes the same frames at the same receive times."""
    frames = [line.split(b" ", 1) for line in gzip.decompress(COLLECTOR.read_bytes()).splitlines()]
    books = [(int(ns) // 1_000_000, msg) for ns, msg in frames if b'"l2Book"' in msg]
    trades = [p for _, msg in frames if b'"trades"' in msg for p in json.loads(msg)["data"]]
    s3, day = server.s3, "20250126"
    hour = (books[0][0] - day_ms(day)) // 3_600_000
    s3.put_object(
        Bucket=ARCHIVE, Key=f"market_data/{day}/{hour}/l2Book/BTC.lz4", Body=book_object(books)
    )
    ctx = {
        "coin": "BTC",
        "ctx": {"funding": "0.0000125", "markPx": "105050.0", "oraclePx": "105040.0"},
    }
    s3.put_object(
        Bucket=ARCHIVE, Key=f"asset_ctxs/{day}.csv.lz4", Body=ctx_object([(books[0][0], ctx)])
    )
    unique = list({p["tid"]: p for p in trades}.values())
    s3.put_object(
        Bucket=NODE, Key=f"node_trades/hourly/{day}/{hour}.lz4", Body=node_trades_object(unique)
    )
    done = in_here(
        "fetch",
        "--coins",
        "BTC",
        "--from",
        "2025-01-26",
        "--meta",
        str(META),
        "--endpoint-url",
        server.endpoint,
        "--yes",
        env=env_for(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    fetched_day = history(tmp_path) / "hl-2025-01-26.jsonl.lz4"

    now = [0]
    header = {
        "arena_log": 1,
        "recording": "hyperliquid",
        "markets": [{"coin": "BTC", "asset": 0, "szDecimals": 5}],
    }
    rec = Recorder(DayLog(tmp_path / "rec", header, background=False), lambda: now[0])
    now[0] = int(frames[0][0]) // 1_000_000
    rec.start()
    rec.on_connected("wss://example")
    for ns, msg in frames:
        now[0] = int(ns) // 1_000_000
        rec.frame(msg)
    rec.close()
    recorded_day = next((tmp_path / "rec").glob("hl-2025-01-26.jsonl*"))
    assert raw_hl(fetched_day, "l2Book") == raw_hl(recorded_day, "l2Book")
    assert len(raw_hl(fetched_day, "l2Book")) == 46
    prints = [p for _, m in raw_hl(fetched_day, "trades") for p in json.loads(m)["data"]]
    assert sorted((p["time"], p["px"], p["sz"], p["side"]) for p in prints) == sorted(
        (p["time"], p["px"], p["sz"], p["side"]) for p in unique
    )


def test_fills_become_one_print_per_trade_and_numbers_stay_exact() -> None:
    p = {
        "coin": "BTC",
        "side": "A",
        "px": "105056.0",
        "sz": "0.00219",
        "time": 1,
        "tid": 9,
        "hash": "0xab",
        "users": ["0xbuyer", "0xseller"],
    }
    lines = [json.dumps(uf).encode() for uf in fills_of(p)]
    lines.append(json.dumps(["0xother", {**fills_of(p)[0][1], "tid": 10}]).encode())  # unpaired
    stats = FillStats()
    (one,) = prints_from_fills("node_fills", lines, frozenset({"BTC"}), "x", stats)
    assert one.doc() == p and stats.unpaired == 1 and stats.fills == 3
    assert decimal_text("1.250000e-05") == "0.00001250000"
    assert decimal_text("105050") == "105050" and decimal_text("") is None
    assert lz4_bytes(b"x")  # the fixture's frames are real LZ4 frames


def _on_a_terminal(args: list[str], env: dict[str, str], answer: bytes) -> tuple[int, str]:
    """Run ``arena`` on a pseudo-terminal, answer its prompt, and
    return its exit code and what the terminal showed."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena_tui.cli", *args],
        cwd=ROOT,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    shown = bytearray()
    answered = False
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal: it has exited
            break
        if not chunk:
            break
        shown += chunk
        if not answered and b"Download?" in shown:
            os.write(master, answer)
            answered = True
    os.close(master)
    return proc.wait(timeout=120), shown.decode(errors="replace")


def test_on_a_terminal_it_asks_first_and_a_no_downloads_nothing(
    server: Server, tmp_path: Path
) -> None:
    env = env_for(tmp_path)
    args = fetch_args(server, "2025-07-27", "2025-07-27")
    before = sum(server.gets.values())
    code, shown = _on_a_terminal(args, env, b"n\n")
    assert code == 1 and "fetch: nothing downloaded" in shown
    assert shown.index("$") < shown.index("Download?")  # the cost came before the question
    assert sum(server.gets.values()) == before and not list(history(tmp_path).glob("hl-*"))
    code, shown = _on_a_terminal(args, env, b"y\n")
    assert code == 0, shown
    assert [p.name for p in history(tmp_path).glob("hl-*")] == ["hl-2025-07-27.jsonl.lz4"]
    assert sum(server.gets.values()) > before
