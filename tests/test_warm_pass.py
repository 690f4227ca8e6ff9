"""A backtest read from the day cache is the same backtest, to the byte.

The warm pass (``Backtest._warm_loop``) holds back books and asset contexts nobody can read
before the next input that is applied, and skips other coins' market data. These tests run
strategies that act at random (seeded) with every kind of order, cancels and latency, over
a synthetic day, three ways: without the cache, building it (the cold pass with the tee),
and from it; every result, event, mark and run-log byte must agree.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena_tui.logs import daycache
from arena_tui.logs.daykeep import keep_day
from arena_tui.report.collector import Collector
from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.fields import StrategyError
from arena_tui.run.market import AssetContext, Book, Trade
from arena_tui.run.parts import BacktestResult, Entrant
from arena_tui.run.runlogs import NoRunLog
from arena_tui.run.stats import exit_value
from arena_tui.season.file import resolve_season
from arena_tui.strategy import ALO, GTC, IOC, Context, Strategy
from engine import Season
from engine import events as ev
from tests.clirun import arena, arena_here

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__)


class Jumpy(Strategy):
    """Acts at random on prints: GTC, IOC or ALO orders at or near the touch, cancels."""

    def __init__(self, every: int = 40) -> None:
        self.every = every

    def on_trades(self, ctx: Context, trades: list[Trade]) -> None:
        coin = trades[0].coin
        roll = ctx.rng.randrange(self.every)
        if roll == 0 and ctx.open_slots > 1:
            book = ctx.market(coin).book
            if book is None or book.best_bid_e8 is None or book.best_ask_e8 is None:
                return
            is_buy = ctx.rng.random() < 0.5
            near = book.best_bid_e8 if is_buy else book.best_ask_e8
            px = ctx.grid_e8(coin, near, is_buy)
            sz = ctx.sz_e8(coin, "0.01") if coin == "BTC" else ctx.sz_e8(coin, "0.2")
            tif = (GTC, IOC, ALO)[ctx.rng.randrange(3)]
            ctx.order(ctx.asset_of(coin), is_buy, px, sz, False, tif)
        elif roll == 1 and ctx.orders_on(coin):
            ctx.cancel_all(coin)


class JumpyEvents(Jumpy):
    """The same, and it reads the market on its own events and marks."""

    def __init__(self) -> None:
        super().__init__(25)
        self.seen: list[tuple[int, str, int | None]] = []

    def on_event(self, ctx: Context, event: ev.AnyEvent) -> None:
        book = ctx.market(ctx.coins[0]).book
        self.seen.append((ctx.t, type(event).__name__, book.best_bid_e8 if book else None))

    def on_mark(self, ctx: Context, mark: ev.MinuteMark) -> None:
        for coin in ctx.coins:
            book = ctx.market(coin).book
            self.seen.append((ctx.t, coin, None if book is None else book.best_ask_e8))


class Watcher(Jumpy):
    """Hooks books and contexts too: nothing may be held for it."""

    def __init__(self) -> None:
        super().__init__(60)
        self.books = 0
        self.ctxs: list[tuple[int, int | None]] = []

    def on_book(self, ctx: Context, book: Book) -> None:
        self.books += 1

    def on_asset_ctx(self, ctx: Context, asset_ctx: AssetContext) -> None:
        self.ctxs.append((ctx.t, asset_ctx.mark_e8))


class Minutely(Strategy):
    """Acts only on its minute marks (no print, book or context hook): a resting GTC at
    the touch on one coin, a cancel, or an IOC through it, at random. It reads every
    coin's market on its own events (a fill of a resting order comes with a print)."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str, int | None, int | None]] = []

    def on_event(self, ctx: Context, event: ev.AnyEvent) -> None:
        for coin in ctx.coins:
            book = ctx.market(coin).book
            bid = None if book is None else book.best_bid_e8
            self.seen.append((ctx.t, type(event).__name__, bid, ctx.market(coin).mark_e8))

    def on_mark(self, ctx: Context, mark: ev.MinuteMark) -> None:
        coin = ctx.coins[ctx.rng.randrange(len(ctx.coins))]
        roll = ctx.rng.randrange(4)
        if roll == 0 and ctx.orders_on(coin):
            ctx.cancel_all(coin)
            return
        book = ctx.market(coin).book
        if book is None or book.best_bid_e8 is None or book.best_ask_e8 is None:
            return
        if ctx.open_slots < 2:
            return
        is_buy = ctx.rng.random() < 0.5
        sz = ctx.sz_e8(coin, "0.01") if coin == "BTC" else ctx.sz_e8(coin, "0.2")
        if roll == 1:  # through the touch: fills at once
            far = book.best_ask_e8 if is_buy else book.best_bid_e8
            ctx.order(ctx.asset_of(coin), is_buy, ctx.grid_e8(coin, far, is_buy), sz, False, IOC)
        else:  # at the touch: rests, fills on a later print
            near = book.best_bid_e8 if is_buy else book.best_ask_e8
            ctx.order(ctx.asset_of(coin), is_buy, ctx.grid_e8(coin, near, is_buy), sz, False, GTC)


class Reader(Strategy):
    """Hooks books, not prints: every few books it reads its coin's recent prints (the
    views the warm pass fills from the runs of prints it applies at once) and quotes at
    the touch, so prints fill its resting orders."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, str, int, list[tuple[int, int, int, int, bool]]]] = []

    def on_book(self, ctx: Context, book: Book) -> None:
        if ctx.rng.randrange(7):
            return
        prints = ctx.market(book.coin).prints
        last = [(p.t, p.time, p.tid, p.px_e8, p.is_buy) for p in list(prints)[-3:]]
        self.seen.append((ctx.t, book.coin, len(prints), last))
        bid, ask = book.best_bid_e8, book.best_ask_e8
        if bid is None or ask is None or ctx.open_slots < 2:
            return
        if ctx.orders_on(book.coin) and ctx.rng.randrange(2):
            ctx.cancel_all(book.coin)
            return
        is_buy = ctx.rng.random() < 0.5
        sz = ctx.sz_e8(book.coin, "0.01") if book.coin == "BTC" else ctx.sz_e8(book.coin, "0.2")
        px = ctx.grid_e8(book.coin, bid if is_buy else ask, is_buy)
        ctx.order(ctx.asset_of(book.coin), is_buy, px, sz, False, GTC)


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("warm") / "day.jsonl.gz"
    args = ["synth", "--coins", "BTC,ETH,SOL", "--hours", "2", "--seed", "11", "--out", str(out)]
    done = arena_here(*args, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return out


def entrants(kind: str) -> list[Entrant]:
    if kind == "minutely":
        return [Entrant("minutely", Minutely(), HERE)]
    if kind == "reader":
        return [Entrant("reader", Reader(), HERE), Entrant("minutely", Minutely(), HERE)]
    if kind == "jumpy":
        return [Entrant("jumpy", Jumpy(), HERE), Entrant("events", JumpyEvents(), HERE)]
    return [Entrant("watcher", Watcher(), HERE), Entrant("jumpy", Jumpy(), HERE)]


def run_once(
    day: Path, tmp: Path, kind: str, season: Season, *, cache: bool, thin: bool, latency: int
) -> tuple[BacktestResult, bytes, list[Any]]:
    tmp.mkdir(parents=True, exist_ok=True)
    es = entrants(kind)
    config = RunConfig(latency_ms=latency, seed=3, run_log="thin" if thin else "full", cache=cache)
    collector = Collector()  # the report's run data: its minutes' prints too
    bt = Backtest(config, season, es, run_dir=tmp, exit_value=exit_value, subscribers=[collector])
    result = bt.run([str(day)])
    data = collector.data()
    seen: list[Any] = [msgspec.to_builtins(data.prices), sorted(collector.print_rows.items())]
    seen += [getattr(e.strategy, "seen", None) for e in es]
    seen += [getattr(e.strategy, "ctxs", None) for e in es]
    seen += [getattr(e.strategy, "books", None) for e in es]
    return result, (tmp / "run.jsonl").read_bytes(), seen


def summary(result: BacktestResult) -> dict[str, Any]:
    return {
        "replay": msgspec.to_builtins(result.replay.ranking),
        "log_sha256": result.replay.log_sha256,
        "fills_sha256": result.replay.fills_sha256,
        "end": result.replay.end,
        "final": result.replay.final,
        "inputs": result.inputs,
        "own": result.own_inputs,
        "dropped": result.dropped,
        "fills": [msgspec.to_builtins(f) for f in result.fill_events],
        "marks": {e.name: [vars(m) for m in e.stats.marks] for e in result.entrants},
    }


@pytest.mark.parametrize(
    ("kind", "thin", "latency", "coins"),
    [
        ("jumpy", True, 0, None),
        ("jumpy", False, 250, ("BTC", "SOL")),
        ("watcher", True, 40, None),
        ("minutely", True, 0, None),
        ("minutely", False, 1500, ("ETH", "SOL")),
        ("reader", True, 0, None),
        ("reader", False, 300, ("BTC", "ETH")),
    ],
)
def test_a_warm_backtest_is_the_cold_one_to_the_byte(
    day: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    thin: bool,
    latency: int,
    coins: tuple[str, ...] | None,
) -> None:
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    season = resolve_season([str(day)], None)
    if coins is not None:  # the other coin's market data is skipped, never applied
        season = msgspec.structs.replace(
            season, markets=[m for m in season.markets if m.coin in coins]
        )
    args = {"kind": kind, "season": season, "thin": thin, "latency": latency}
    plain = run_once(day, tmp_path / "plain", cache=False, **args)  # type: ignore[arg-type]
    assert daycache.open_day(day, [m.coin for m in season.markets]) is None
    building = run_once(day, tmp_path / "build", cache=True, **args)  # type: ignore[arg-type]
    cached = daycache.open_day(day, [m.coin for m in season.markets])
    assert cached is not None, "the cold pass wrote no cache"
    cached.close()
    warm = run_once(day, tmp_path / "warm", cache=True, **args)  # type: ignore[arg-type]
    want = summary(plain[0])
    assert want["fills"], "the strategies never traded: the test shows nothing"
    assert summary(building[0]) == want
    assert summary(warm[0]) == want
    assert building[1] == plain[1]
    assert warm[1] == plain[1]
    assert building[2] == plain[2]
    assert warm[2] == plain[2]


def test_the_warm_pass_holds_back_what_nobody_reads(
    day: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a speed test: the warm pass must actually apply fewer inputs than it reads, for
    a strategy that hooks no market data (for one hooking every print, little can wait)."""
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    season = resolve_season([str(day)], None)
    applied: list[int] = []

    class Counting(Backtest):
        def _apply(self, line: Any) -> list[ev.AnyEvent]:
            applied.append(line.t)
            return super()._apply(line)

    for _ in range(2):  # build, then warm
        applied.clear()
        bt = Counting(RunConfig(cache=True), season, entrants("minutely"))
        result = bt.run([str(day)])
        assert result.fill_events, "no fills: the test shows nothing"
    assert len(applied) < result.inputs * 0.6, (len(applied), result.inputs)


def test_without_a_run_log_no_line_is_handed_over_at_all(
    day: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing done for nobody: a pass with no run log (twins, sweep jobs, the benches)
    neither copies out nor hands over a single line, held or applied, and is the same run."""
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    season = resolve_season([str(day)], None)
    first = Backtest(RunConfig(cache=True), season, entrants("minutely")).run([str(day)])

    def handed(self: NoRunLog, raw: bytes) -> None:
        raise AssertionError("a line was handed to no run log")

    monkeypatch.setattr(NoRunLog, "write", handed)
    warm = Backtest(RunConfig(cache=True), season, entrants("minutely")).run([str(day)])
    assert summary(warm) == summary(first) and warm.fill_events


def test_without_a_run_log_no_market_line_is_read(
    day: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm pass with no run log and no subscriber reads no market line's bytes from the
    day: not for the books it yields to hooks, nor for the ledger of a line's events (it
    reads an arena input's only, for its note); and is the same run."""
    from arena_tui.logs.dayread import CachedDay
    from arena_tui.run.ledger import Ledger

    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    season = resolve_season([str(day)], None)
    first = Backtest(RunConfig(cache=True), season, entrants("reader")).run([str(day)])
    reads: list[int] = []
    ledgered: list[bytes] = []
    books: list[int] = []
    raw_of, observe = CachedDay.raw, Ledger.observe

    def raw(self: CachedDay, i: int) -> bytes:
        reads.append(i)
        return raw_of(self, i)

    def ledger_observe(self: Ledger, line: Any, raw: bytes, out: list[ev.AnyEvent]) -> None:
        if self.run is not None and self.run.applying is None:
            assert line.hl is not None  # (the day has market lines only)
            ledgered.append(raw)  # a market line with events: its bytes are not read
        observe(self, line, raw, out)

    class Counting(Reader):
        def on_book(self, ctx: Context, book: Book) -> None:
            books.append(ctx.t)
            super().on_book(ctx, book)

    monkeypatch.setattr(CachedDay, "raw", raw)
    monkeypatch.setattr(Ledger, "observe", ledger_observe)
    both = [Entrant("reader", Counting(), HERE), Entrant("minutely", Minutely(), HERE)]
    warm = Backtest(RunConfig(cache=True), season, both).run([str(day)])
    assert summary(warm) == summary(first) and warm.fill_events
    assert len(books) > 1000 and len(ledgered) > 100
    assert reads == [] and set(ledgered) == {b""}


def test_arena_backtest_writes_the_same_run_directory_with_and_without_the_cache(
    day: Path, tmp_path: Path
) -> None:
    """Through the command: --no-cache, then the run that builds the cache, then a warm
    one; every file of the three run directories is the same, byte for byte. The first
    runs in a new process, the other two in this one (no new interpreter importing the CLI
    and the verdict's statistics)."""
    env = {**os.environ, "ARENA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("ARENA_CACHE", None)
    outs = []
    for name, extra in (("none", ["--no-cache"]), ("build", []), ("warm", [])):
        out = tmp_path / name
        args = [
            "backtest", "strategies/momentum.py", str(day), "--vs", "strategies/control_random.py",
            "--out", str(out), "--json", *extra,
        ]  # fmt: skip
        done = arena(*args, env=env) if name == "none" else arena_here(*args, cwd=ROOT, env=env)
        assert done.returncode == 0, done.stderr
        outs.append((out, done.stdout))
        cached = list((tmp_path / "cache").glob("*.day"))
        assert (name == "none") == (not cached), (name, cached)
    files = sorted(p.name for p in outs[0][0].iterdir())
    assert "run.jsonl" in files and "report.json" in files
    for out, stdout in outs[1:]:
        assert sorted(p.name for p in out.iterdir()) == files
        for name in files:
            assert (out / name).read_bytes() == (outs[0][0] / name).read_bytes(), name
        assert stdout == outs[0][1]


class FailsLater(Jumpy):
    """Trades like Jumpy, then raises in its ``when`` hook after ``after`` calls of it."""

    def __init__(self, when: str, after: int) -> None:
        super().__init__(30)
        self.when, self.after, self.calls = when, after, 0

    def _tick(self, hook: str) -> None:
        if hook == self.when:
            self.calls += 1
            if self.calls > self.after:
                raise RuntimeError(f"failed in {hook}")

    def on_trades(self, ctx: Context, trades: list[Trade]) -> None:
        self._tick("on_trades")
        super().on_trades(ctx, trades)

    def on_mark(self, ctx: Context, mark: ev.MinuteMark) -> None:
        self._tick("on_mark")


@pytest.mark.parametrize(
    ("when", "after", "thin"),
    [("on_trades", 900, True), ("on_mark", 40, True), ("on_trades", 2500, False)],
)
def test_a_run_cut_short_keeps_the_same_run_log_warm_or_cold(
    day: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str, after: int, thin: bool
) -> None:
    """The warm pass hands the run log whole runs of the cache's lines, lazily (before a
    strategy's input, at a day's end, when the pass stops): a run that a strategy ends
    part way keeps exactly the lines the cold pass kept, and the same own inputs."""
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    season = resolve_season([str(day)], None)
    logs: list[bytes] = []
    for cache in (False, True):  # cold; warm (a run that fails builds no cache: kept first)
        if cache:
            kept = keep_day(day)
            assert kept is not None
            kept.close()
        out = tmp_path / f"run{len(logs)}"
        es = [Entrant("quiet", Minutely(), HERE), Entrant("late", FailsLater(when, after), HERE)]
        config = RunConfig(seed=5, run_log="thin" if thin else "full", cache=cache)
        with pytest.raises(StrategyError, match=f"failed in {when}"):
            Backtest(config, season, es, run_dir=out).run([str(day)])
        logs.append((out / "run.jsonl").read_bytes())
    assert logs[1] == logs[0]
    assert logs[0].count(b'"type":"order"') > 3  # it traded before it failed


def test_two_days_from_their_caches_make_the_run_log_of_the_cold_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Day after day: each day's lines are handed over before the next day's source is
    named (a thin log counts each source's inputs, first and last t)."""
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    days = []
    for start in ("2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z"):
        out = tmp_path / f"day-{start[11:13]}.jsonl"
        args = ["synth", "--coins", "BTC,ETH", "--hours", "1", "--seed", "4", "--start", start]
        done = arena_here(*args, "--out", str(out), cwd=ROOT)
        assert done.returncode == 0, done.stderr
        days.append(str(out))
    season = resolve_season(days, None)
    runs: list[tuple[dict[str, Any], bytes]] = []
    for cache, thin in ((False, True), (True, True), (True, True), (True, False), (False, False)):
        out = tmp_path / f"run{len(runs)}"
        config = RunConfig(seed=9, latency_ms=120, run_log="thin" if thin else "full", cache=cache)
        result = Backtest(config, season, entrants("jumpy"), run_dir=out).run(days)
        runs.append((summary(result), (out / "run.jsonl").read_bytes()))
    assert runs[0][0]["fills"], "no fills: the test shows nothing"
    assert runs[1] == runs[0] and runs[2] == runs[0]  # thin: cold, building, warm
    assert runs[3] == runs[4]  # full: warm, cold
    assert runs[3][0]["log_sha256"] == runs[0][0]["log_sha256"]


def without_contexts(src: Path, out: Path) -> Path:
    """``src`` with no asset context (as hftbacktest's collector records a day: books and
    trades only) and every fifth book one-sided (its asks, or its bids, gone): the marks
    come from the books' mids, which only two-sided books set."""
    data = src.read_bytes()
    lines = (gzip.decompress(data) if src.suffix == ".gz" else data).splitlines()
    kept: list[bytes] = []
    books = 0
    for raw in lines[1:]:
        doc = json.loads(raw)
        hl = doc.get("hl") or {}
        if hl.get("channel") == "activeAssetCtx":
            continue
        if hl.get("channel") == "l2Book":
            books += 1
            if books % 5 == 0:
                hl["data"]["levels"][books % 2] = []
            raw = json.dumps(doc, separators=(",", ":")).encode()
        kept.append(raw)
    head = json.loads(lines[0])
    head["first_t"], head["last_t"] = json.loads(kept[0])["t"], json.loads(kept[-1])["t"]
    out.write_bytes(b"\n".join([json.dumps(head).encode(), *kept]) + b"\n")
    return out


@pytest.mark.parametrize("kind", ["minutely", "jumpy"])
def test_a_day_without_contexts_holds_its_books_and_keeps_the_marks(
    day: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """With no context mark, a coin's mark is its last two-sided book's mid: the warm pass
    still holds books nobody reads (the last one, and the last two-sided one before
    later one-sided ones), and every mark, fill and run-log byte is the cold pass's."""
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    bare = without_contexts(day, tmp_path / "bare.jsonl")
    season = resolve_season([str(bare)], None)
    books: list[int] = []

    class Counting(Backtest):
        def _apply(self, line: Any) -> list[ev.AnyEvent]:
            if line.hl is not None and type(line.hl).__name__ == "Book":
                books.append(line.t)
            return super()._apply(line)

    runs: list[tuple[dict[str, Any], bytes, int]] = []
    for cache in (False, True, True):  # cold, building, warm
        books.clear()
        out = tmp_path / f"run{len(runs)}"
        config = RunConfig(seed=2, latency_ms=60, cache=cache)
        bt = Counting(config, season, entrants(kind), run_dir=out, exit_value=exit_value)
        result = bt.run([str(bare)])
        runs.append((summary(result), (out / "run.jsonl").read_bytes(), len(books)))
    assert runs[0][0]["fills"], "no fills: the test shows nothing"
    assert runs[1][:2] == runs[0][:2] and runs[2][:2] == runs[0][:2]
    assert runs[2][2] < runs[0][2] / 2, (runs[2][2], runs[0][2])  # most books held


def test_a_subscriber_is_given_a_market_line_s_bytes_unless_it_says_it_reads_none(
    day: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subscriber is given every line's bytes as logged (cut from the day's cache on a
    warm pass), unless it says ``market_bytes = False``: then a market line's are b"" (and
    none is cut out while every subscriber says so); a strategy's input's always are."""
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARENA_CACHE", raising=False)
    season = resolve_season([str(day)], None)
    Backtest(RunConfig(cache=True), season, entrants("minutely")).run([str(day)])  # cached

    class Hears:
        market_bytes = True

        def __init__(self) -> None:
            self.market: list[bytes] = []
            self.own: list[bytes] = []

        def observe(self, line: Any, raw: bytes, out: list[ev.AnyEvent]) -> None:
            (self.market if line.hl is not None else self.own).append(raw)

    class Deaf(Hears):
        market_bytes = False

    def run(*subscribers: Hears) -> None:
        bt = Backtest(RunConfig(cache=True), season, entrants("minutely"), subscribers=subscribers)
        bt.run([str(day)])

    hears, deaf = Hears(), Deaf()
    run(hears, deaf)  # one reads them: both are given them
    assert len(hears.market) > 1000 and hears.market == deaf.market
    assert all(json.loads(raw)["t"] for raw in hears.market[:: len(hears.market) // 50])
    deaf_alone = Deaf()
    run(deaf_alone)
    assert len(deaf_alone.market) == len(hears.market) and set(deaf_alone.market) == {b""}
    assert deaf_alone.own == hears.own and all(b'"arena"' in raw for raw in hears.own)
