"""Benchmark: arena against hftbacktest and NautilusTrader on one raw Hyperliquid day.

Run from the repo root::

    python bench/peers.py                                   # arena alone (peers skipped)
    python bench/peers.py --peers-python /work/peers-venv/bin/python   # with the peers
    python bench/peers.py --hours 24 --peers-python PY      # the issue's full day
    python bench/peers.py --json                            # one JSON object on stdout

The peers are installed in a separate environment, never by this script::

    python3 -m venv peers-venv && peers-venv/bin/pip install hftbacktest==2.4.4 nautilus_trader

and run as subprocesses of that interpreter (``--peers-python``); a peer missing there is
skipped with one line saying so. Nothing here imports a peer into arena's process.

The day: one coin (BTC) of raw WebSocket messages, ``<receive ns> <message>`` a line,
gzipped: hftbacktest's collector format, which both ``arena import hftbacktest`` and
hftbacktest's own ``hyperliquid.convert`` read. The market is ``arena_tui.synth``'s (the
model of ``arena synth``), made as busy as the issue's BTC day: ``l2Book`` snapshots of 20
levels about every ``--book-ms`` (620, with the synth's own every 5 s: ~157k a day) and
``trades`` at ``--activity`` (1.5) times the synth's rate (~88k messages a day); no
``activeAssetCtx`` (hftbacktest's collector records books and trades).

The strategy, the same in all three (each written from its own framework's documentation):
a post-only touch quoter. At most every 2 s of data time, on a book (arena, Nautilus) or
any feed event (hftbacktest), it wants one bid at the best bid and one ask at the best
ask, 0.001 BTC each, post-only (ALO, GTX, ``post_only=True``); a quote off the touch is
cancelled and replaced; past 0.01 BTC of inventory it quotes only the side that reduces it.
arena's also sizes each quote under the season's cap headroom (the engine reserves the
notional at the larger of the limit and the mark until the order leaves), as the peers'
quoters stay inside what their venues accept, so none of its orders is refused.

Two variants (``--variants``): ``touch``, as above, and ``book``, with no 2-s gate: arena's
looks at every book of the day, the peers' are woken every 100 ms of data time
(hftbacktest ``elapse``, Nautilus a clock timer) and look each time. Each framework's
quoter counts its wake-ups, orders and cancels, and its fills, printed beside its time.

What is timed, in interleaved rounds (fresh processes for the end-to-end rows):

  arena e2e     ``arena import hftbacktest RAW --out DAY.jsonl.lz4`` then ``arena backtest
                touch.py DAY.jsonl.lz4 --out DIR --json``: two commands, as a user runs them
                (the report's verdict runs 100 random twins of the quoter: its control); and
                the backtest again with ``--twins 0``, like for like (the peers judge nothing);
  hft e2e       a fresh interpreter: ``hyperliquid.convert(RAW)`` then the quoter (numba,
                compiled in that run: the JIT is part of what a user waits for);
  nautilus e2e  a fresh interpreter: RAW parsed into ``QuoteTick``s (top of book) and
                ``TradeTick``s, a ``BacktestEngine`` (L1 book) run with the quoter;

and the in-process cores, data already loaded, no files written:

  arena core    ``Backtest(...).run([day])`` from the day's cache (``arena import`` wrote
                it, as hftbacktest's convert writes its arrays), no run log: the quoter, and
                a strategy with no hooks (the engine and runner alone);
  hft core      the compiled quoter on the converted arrays (JIT warm), and a loop that
                waits on every feed event and acts on none;
  nautilus core a new engine on the loaded ticks, run with the quoter, and with none.

The ratios against the issue's targets are printed (arena e2e >= 1.5x faster than hft
e2e, >= 5x faster than Nautilus e2e; arena's core quoter within 5x of hft's); nothing is
asserted. Fills are reported for each, as a check that the quoters do trade; the three
engines' fill rules differ (arena: a print strictly through the price; hftbacktest: its
queue model; Nautilus: its L1 fill model), so their fill counts are not expected to match.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
META = ROOT / "tests" / "data" / "meta_2023.json"  # BTC: asset 0, szDecimals 5
START_MS = 1_796_083_200_000  # 2026-12-01T00:00:00Z
PIP_LINE = "pip install hftbacktest==2.4.4 nautilus_trader"
PEERS = ("hftbacktest", "nautilus")
MODULE = {"hftbacktest": "hftbacktest", "nautilus": "nautilus_trader"}

# The quoter's parameters, shared by the three implementations.
QTY = "0.001"  # BTC per quote
MAX_POS = 0.01  # BTC of inventory before quoting only the reducing side
REQUOTE_MS = 2_000  # at most one look every 2 s of data time
TICK = 1.0  # BTC's price tick on Hyperliquid under $100,000 (5 significant figures)
LOT = 0.00001  # szDecimals 5

PEER_WAKE_MS = 100  # the every-book variant: the peers wake every 100 ms of data time
VARIANTS = ("touch", "book")  # at most every 2 s / on every book (peers: every 100 ms)


def touch_source(requote_ms: int) -> str:
    """The quoter for arena, looking at most every ``requote_ms`` (0: at every book)."""
    return f'''"""The post-only touch quoter of bench/peers.py, for arena."""

import json

from arena_tui.strategy import ALO, Book, Context, Strategy
from engine.units import lots_down, notional, tdiv

QTY_E8 = {round(float(QTY) * 1e8)}
MAX_POS_E8 = {round(MAX_POS * 1e8)}
REQUOTE_MS = {requote_ms}


class Touch(Strategy):
    def __init__(self) -> None:
        self.last = -REQUOTE_MS - 1
        self.counts = {{"wakeups": 0, "orders": 0, "cancels": 0}}

    def on_book(self, ctx: Context, book: Book) -> None:
        self.counts["wakeups"] += 1
        if ctx.t - self.last < REQUOTE_MS:
            return
        bid, ask = book.best_bid_e8, book.best_ask_e8
        if bid is None or ask is None:
            return
        self.last = ctx.t
        coin = book.coin
        pos = ctx.account.position(coin)
        for is_buy, px, allowed in ((True, bid, pos < MAX_POS_E8), (False, ask, pos > -MAX_POS_E8)):
            live = False
            for o in ctx.account.open_orders:
                if o.coin != coin or o.is_buy != is_buy or o.cancelling or ctx.cancel_sent(o.oid):
                    continue
                if allowed and not live and o.remaining_e8 > 0 and o.limit_px_e8 == px:
                    live = True
                else:
                    ctx.cancel(oid=o.oid)
                    self.counts["cancels"] += 1
            if allowed and not live and ctx.open_slots > 0:
                sz = self.size(ctx, coin, px)
                if sz > 0:
                    ctx.order(ctx.asset_of(coin), is_buy, px, sz, False, ALO)
                    self.counts["orders"] += 1

    def size(self, ctx: Context, coin: str, px: int) -> int:
        """QTY, or the whole lots under the cap's headroom (the engine reserves the notional
        at the larger of the limit and the mark), kept 1% under it; 0 if under the minimum."""
        market = ctx.market(coin)
        price = max(px, market.mark_e8 or px)
        room = lots_down(tdiv(tdiv(ctx.headroom_e6 * 99, 100) * 10**10, price), market.lot_e8)
        sz = min(QTY_E8, room)
        return sz if notional(px, sz) >= ctx.season.rules.min_order_value else 0

    def on_end(self, ctx: Context) -> None:
        print(json.dumps(self.counts))
'''


TOUCH = touch_source(REQUOTE_MS)
NOTHING = "from arena_tui.strategy import Strategy\n\n\nclass Nothing(Strategy):\n    pass\n"


def say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


# ---- the raw day -----------------------------------------------------------------------------


def raw_lines(hours: float, seed: int, book_ms: int, activity: float) -> Iterator[bytes]:
    """``<receive ns> <message>`` lines of one BTC day from ``arena_tui.synth``'s market:
    its ``l2Book`` and ``trades`` messages (what hftbacktest's collector subscribes to), and
    a book snapshot of its model about every ``book_ms`` besides its own every 5 s."""
    from random import Random

    from arena_tui.synth.feed import BOOK, CTX
    from arena_tui.synth.generate import Synth, choose_markets

    synth = Synth(choose_markets(["BTC"], None), seed, START_MS, activity=activity)
    feed = synth.feeds[0]
    rng = Random(f"bench-peers:{seed}")
    next_book = START_MS + rng.randrange(book_ms)
    end = START_MS + round(hours * 3_600_000)
    for t0, window in synth.windows():
        if t0 >= end:
            return
        items = [(t, kind, text) for t, _, kind, _, text in window if kind != CTX]
        while next_book < t0 + 1000:  # the books between the synth's 5-s ones
            items.append((next_book, BOOK, feed.book_line(next_book)))
            next_book += book_ms + rng.randrange(-50, 51)
        items.sort(key=lambda x: (x[0], x[1]))
        for t, _, text in items:
            if t >= end:
                return
            hl = text[text.index('"hl":') + 5 : -1]
            yield b"%d %s\n" % (t * 1_000_000 + rng.randrange(1_000_000), hl.encode())


def write_raw(path: Path, hours: float, seed: int, book_ms: int, activity: float) -> dict[str, int]:
    counts = {"lines": 0, "books": 0, "trades": 0, "bytes": 0}
    with gzip.open(path, "wb", compresslevel=1) as f:
        batch: list[bytes] = []
        for line in raw_lines(hours, seed, book_ms, activity):
            batch.append(line)
            counts["lines"] += 1
            counts["bytes"] += len(line)
            if b'"channel":"l2Book"' in line[:60]:
                counts["books"] += 1
            elif b'"channel":"trades"' in line[:60]:
                counts["trades"] += 1
            if len(batch) >= 4096:
                f.write(b"".join(batch))
                batch.clear()
        f.write(b"".join(batch))
    return counts


# ---- arena -----------------------------------------------------------------------------------


def arena_e2e(raw: Path, work: Path, variant: str = "touch") -> dict[str, Any]:
    """Import then backtest, two fresh processes, as a user runs them."""
    day, out = work / "day.jsonl.lz4", work / "run"
    day.unlink(missing_ok=True)
    shutil.rmtree(out, ignore_errors=True)
    arena = [sys.executable, "-m", "arena_tui.cli"]
    t0 = time.perf_counter()
    imp = [*arena, "import", "hftbacktest", str(raw), "--meta", str(META), "--out", str(day)]
    _check(subprocess.run(imp, cwd=ROOT, capture_output=True, text=True, check=False), "import")
    t1 = time.perf_counter()
    bt = [*arena, "backtest", str(work / f"{variant}.py"), str(day), "--out", str(out), "--json"]
    done = _check(subprocess.run(bt, cwd=ROOT, capture_output=True, text=True, check=False), "bt")
    t2 = time.perf_counter()
    counts = _said_counts(out / f"{variant}.log")
    # the same run without the verdict's twins (the peers judge nothing): like for like
    bare = [*bt[:-1], "--twins", "0", "--force", "--json"]
    _check(subprocess.run(bare, cwd=ROOT, capture_output=True, text=True, check=False), "bt")
    t3 = time.perf_counter()
    return {
        "s": t2 - t0,
        "import_s": t1 - t0,
        "run_s": t2 - t1,
        "bare_run_s": t3 - t2,
        "bare_s": t1 - t0 + t3 - t2,
        **counts,
        **_report(done.stdout),
    }


def _report(report_json: str) -> dict[str, Any]:
    """The quoter's orders reaching the engine, those refused and its fills, from
    ``arena backtest --json``'s report."""
    e = json.loads(report_json)["entries"][0]
    fills = e["fills"]
    refused = sum(e["rejections"].values())
    return {
        "fills": sum(fills.values()) if isinstance(fills, dict) else int(fills),
        "engine_orders": e["orders_accepted"] + refused,
        "refused": refused,
        "rejections": e["rejections"],
    }


def _said_counts(path: Path) -> dict[str, int]:
    """The counts the quoter printed at its end (its entry's log: ``<time> <line>``)."""
    try:
        last = path.read_text(encoding="utf-8").strip().splitlines()[-1]
    except (OSError, IndexError):
        return {}
    counts: dict[str, int] = json.loads(last.split(" ", 1)[1])
    return counts


def _check(done: subprocess.CompletedProcess[str], what: str) -> subprocess.CompletedProcess[str]:
    if done.returncode != 0:
        raise SystemExit(f"{what} failed: {done.stderr.strip()[-2000:]}")
    return done


def arena_core(day: Path, work: Path) -> Callable[[str], dict[str, Any]]:
    """The runner in this process, no run log, from the day's cache (written by ``arena
    import``, as hftbacktest's core reads the arrays its convert wrote): a variant
    (``touch``, ``book``) or ``nothing``."""
    from arena_tui.run.backtest import Backtest
    from arena_tui.run.build import entrants_for
    from arena_tui.run.config import RunConfig
    from arena_tui.run.stats import exit_value
    from arena_tui.season.file import resolve_season

    season = resolve_season([str(day)], None)

    def run(which: str) -> dict[str, Any]:
        config = RunConfig(cache=True)
        entrants = entrants_for(work / f"{which}.py", None)
        bt = Backtest(config, season, entrants, exit_value=exit_value, echo=False)
        t0 = time.perf_counter()
        res = bt.run([str(day)])
        s = time.perf_counter() - t0
        stats = res.entrants[0].stats
        refused = sum(stats.rejections.values())
        return {
            "s": s,
            "inputs": res.inputs,
            **getattr(entrants[0].strategy, "counts", {}),
            "engine_orders": stats.orders_accepted + refused,
            "refused": refused,
            "fills": len(stats.fills),
        }

    return run


# ---- hftbacktest (runs in the peers' interpreter) --------------------------------------------


def _hft_quoter(
    hbt: Any, qty: float, max_pos: float, requote_ns: int, wake_ns: int, gtx: int, limit: int
) -> tuple[int, int, int]:
    """The touch quoter, compiled by numba at run time (plain Python here): woken by every
    feed event (``wake_ns`` 0) or every ``wake_ns`` of data time; its wake-ups, orders and
    cancels."""
    last = -requote_ns - 1
    bid_id = 0
    ask_id = 0
    next_id = 1
    n = 0
    cancels = 0
    while True:
        if wake_ns > 0:
            if hbt.elapse(wake_ns) != 0:
                break
        else:
            r = hbt.wait_next_feed(False, 3_600_000_000_000)
            if r == 1:
                break
            if r != 2:
                continue
        n += 1
        now = hbt.current_timestamp
        if now - last < requote_ns:
            continue
        depth = hbt.depth(0)
        bid = depth.best_bid
        ask = depth.best_ask
        if not (bid > 0.0 and ask > bid):  # NaN when a side is empty
            continue
        last = now
        hbt.clear_inactive_orders(0)
        pos = hbt.position(0)
        orders = hbt.orders(0)
        live = False
        if bid_id != 0:
            o = orders.get(bid_id)
            if o is not None and o.cancellable:
                if pos < max_pos and o.price == bid:
                    live = True
                else:
                    hbt.cancel(0, bid_id, False)
                    cancels += 1
        if pos < max_pos and not live:
            hbt.submit_buy_order(0, next_id, bid, qty, gtx, limit, False)
            bid_id = next_id
            next_id += 1
        live = False
        if ask_id != 0:
            o = orders.get(ask_id)
            if o is not None and o.cancellable:
                if pos > -max_pos and o.price == ask:
                    live = True
                else:
                    hbt.cancel(0, ask_id, False)
                    cancels += 1
        if pos > -max_pos and not live:
            hbt.submit_sell_order(0, next_id, ask, qty, gtx, limit, False)
            ask_id = next_id
            next_id += 1
    return n, next_id - 1, cancels


def _hft_nothing(hbt: Any) -> int:
    n = 0
    while hbt.wait_next_feed(False, 3_600_000_000_000) != 1:
        n += 1
    return n


def hft_worker(raw: str, mode: str, rounds: int, variant: str = "touch") -> dict[str, Any]:
    hb: Any = importlib.import_module("hftbacktest")
    hl: Any = importlib.import_module("hftbacktest.data.utils.hyperliquid")
    numba: Any = importlib.import_module("numba")
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # convert prints its progress
        data = hl.convert(raw, tick_size=TICK, lot_size=LOT)
    convert_s = time.perf_counter() - t0
    quoter, nothing = numba.njit(_hft_quoter), numba.njit(_hft_nothing)
    requote, wake = (0, PEER_WAKE_MS * 1_000_000) if variant == "book" else (REQUOTE_MS, 0)

    def run(touch: bool) -> tuple[float, dict[str, int]]:
        t = time.perf_counter()
        asset = (
            hb.BacktestAsset()
            .data(data)
            .linear_asset(1.0)
            .constant_latency(10_000_000, 10_000_000)
            .risk_adverse_queue_model()
            .no_partial_fill_exchange()
            .trading_value_fee_model(0.00015, 0.00045)
            .tick_size(TICK)
            .lot_size(LOT)
        )
        hbt = hb.HashMapMarketDepthBacktest([asset])
        counts: dict[str, int] = {}
        if touch:
            n, orders, cancels = quoter(
                hbt, float(QTY), MAX_POS, requote * 1_000_000, wake, hb.GTX, hb.LIMIT
            )
            counts = {"wakeups": n, "orders": orders, "cancels": cancels}
        else:
            counts = {"wakeups": nothing(hbt)}
        counts["fills"] = int(hbt.state_values(0).num_trades)
        hbt.close()
        return time.perf_counter() - t, counts

    if mode == "e2e":
        run_s, counts = run(True)
        return {"convert_s": convert_s, "run_s": run_s, **counts}
    run(True)  # compile both
    run(False)
    touch, none = [], []
    counts = {}
    for _ in range(rounds):
        s, counts = run(True)
        touch.append(s)
        none.append(run(False)[0])
    return {"touch_s": touch, "nothing_s": none, **counts, "rows": len(data)}


# ---- NautilusTrader (runs in the peers' interpreter) -----------------------------------------


def nautilus_load(raw: str) -> tuple[Any, list[Any]]:
    """The raw day as Nautilus objects: an instrument, ``QuoteTick``s (top of each book) and
    ``TradeTick``s (each print), parsed with msgspec."""
    msgspec: Any = importlib.import_module("msgspec")
    idm: Any = importlib.import_module("nautilus_trader.model.identifiers")
    ins: Any = importlib.import_module("nautilus_trader.model.instruments")
    obj: Any = importlib.import_module("nautilus_trader.model.objects")
    dat: Any = importlib.import_module("nautilus_trader.model.data")
    enums: Any = importlib.import_module("nautilus_trader.model.enums")
    cur: Any = importlib.import_module("nautilus_trader.model.currencies")
    iid = idm.InstrumentId.from_str("BTC-USD-PERP.HYPERLIQUID")
    inst = ins.CryptoPerpetual(
        iid,
        idm.Symbol("BTC-USD-PERP"),
        cur.BTC,
        cur.USD,
        cur.USD,
        False,
        0,
        5,
        obj.Price.from_str("1"),
        obj.Quantity.from_str("0.00001"),
        0,
        0,
    )
    price, qty = obj.Price, obj.Quantity
    quote_tick, trade_tick, trade_id = dat.QuoteTick, dat.TradeTick, idm.TradeId
    buyer, seller = enums.AggressorSide.BUYER, enums.AggressorSide.SELLER
    decode = msgspec.json.decode
    out: list[Any] = []
    with gzip.open(raw, "rb") as f:
        for line in f:
            ns_text, _, msg = line.partition(b" ")
            ns = int(ns_text)
            doc = decode(msg)
            ch = doc.get("channel")
            if ch == "l2Book":
                bids, asks = doc["data"]["levels"]
                if not bids or not asks:
                    continue
                ts = doc["data"]["time"] * 1_000_000
                b, a = bids[0], asks[0]
                out.append(
                    quote_tick(
                        iid,
                        price(float(b["px"]), 0),
                        price(float(a["px"]), 0),
                        qty(float(b["sz"]), 5),
                        qty(float(a["sz"]), 5),
                        ts,
                        ns,
                    )
                )
            elif ch == "trades":
                for p in doc["data"]:
                    side = buyer if p["side"] == "B" else seller
                    out.append(
                        trade_tick(
                            iid,
                            price(float(p["px"]), 0),
                            qty(float(p["sz"]), 5),
                            side,
                            trade_id(str(p["tid"])),
                            p["time"] * 1_000_000,
                            ns,
                        )
                    )
    return inst, out


def nautilus_classes() -> tuple[Any, Any]:
    """The quoter and a do-nothing strategy, as Nautilus ``Strategy`` subclasses."""
    st: Any = importlib.import_module("nautilus_trader.trading.strategy")
    cfg: Any = importlib.import_module("nautilus_trader.config")
    enums: Any = importlib.import_module("nautilus_trader.model.enums")
    buy, sell, gtc = enums.OrderSide.BUY, enums.OrderSide.SELL, enums.TimeInForce.GTC

    class TouchConfig(cfg.StrategyConfig, frozen=True):  # type: ignore[misc,call-arg]
        instrument_id: str = "BTC-USD-PERP.HYPERLIQUID"
        quotes: bool = True
        requote_ms: int = REQUOTE_MS
        wake_ms: int = 0  # > 0: woken by a timer this often (from the first quote), not ticks

    class Touch(st.Strategy):  # type: ignore[misc]
        def __init__(self, config: Any) -> None:
            super().__init__(config)
            self.requote_ns = config.requote_ms * 1_000_000
            self.last = -self.requote_ns - 1
            self.quotes = config.quotes
            self.wake_ms = config.wake_ms
            self.timer = False
            self.bid: Any = None
            self.ask: Any = None
            self.counts = {"wakeups": 0, "orders": 0, "cancels": 0, "fills": 0}

        def on_start(self) -> None:
            self.iid = self.cache.instrument_ids()[0]
            self.instrument = self.cache.instrument(self.iid)
            self.qty = self.instrument.make_qty(float(QTY))
            self.subscribe_quote_ticks(self.iid)

        def on_quote_tick(self, tick: Any) -> None:
            if not self.quotes:
                return
            if self.wake_ms:
                if not self.timer:
                    self.timer = True
                    self.clock.set_timer(
                        "wake", timedelta(milliseconds=self.wake_ms), callback=self.on_wake
                    )
                return
            self.counts["wakeups"] += 1
            self.look(tick)

        def on_wake(self, event: Any) -> None:
            self.counts["wakeups"] += 1
            tick = self.cache.quote_tick(self.iid)
            if tick is not None:
                self.look(tick)

        def look(self, tick: Any) -> None:
            now = self.clock.timestamp_ns()
            if now - self.last < self.requote_ns:
                return
            self.last = now
            pos = float(self.portfolio.net_position(self.iid))
            self.bid = self._side(self.bid, buy, tick.bid_price, pos < MAX_POS)
            self.ask = self._side(self.ask, sell, tick.ask_price, pos > -MAX_POS)

        def _side(self, order: Any, side: Any, px: Any, allowed: bool) -> Any:
            if order is not None and order.is_open and not order.is_pending_cancel:
                if allowed and order.price == px:
                    return order
                self.cancel_order(order)
                self.counts["cancels"] += 1
            if not allowed:
                return None
            new = self.order_factory.limit(self.iid, side, self.qty, px, gtc, post_only=True)
            self.submit_order(new)
            self.counts["orders"] += 1
            return new

        def on_order_filled(self, event: Any) -> None:
            self.counts["fills"] += 1

    return Touch, TouchConfig


def nautilus_run(
    inst: Any, data: list[Any], quotes: bool, variant: str
) -> tuple[float, dict[str, int]]:
    be: Any = importlib.import_module("nautilus_trader.backtest.engine")
    cfg: Any = importlib.import_module("nautilus_trader.config")
    idm: Any = importlib.import_module("nautilus_trader.model.identifiers")
    obj: Any = importlib.import_module("nautilus_trader.model.objects")
    enums: Any = importlib.import_module("nautilus_trader.model.enums")
    cur: Any = importlib.import_module("nautilus_trader.model.currencies")
    touch, touch_config = nautilus_classes()
    t0 = time.perf_counter()
    engine = be.BacktestEngine(
        config=be.BacktestEngineConfig(
            trader_id=idm.TraderId("BENCH-001"),
            logging=cfg.LoggingConfig(log_level="ERROR", bypass_logging=True),
        )
    )
    engine.add_venue(
        venue=idm.Venue("HYPERLIQUID"),
        oms_type=enums.OmsType.NETTING,
        account_type=enums.AccountType.MARGIN,
        base_currency=cur.USD,
        starting_balances=[obj.Money(1_000_000, cur.USD)],
        book_type=enums.BookType.L1_MBP,
    )
    engine.add_instrument(inst)
    engine.add_data(data)
    if variant == "book":
        config = touch_config(quotes=quotes, requote_ms=0, wake_ms=PEER_WAKE_MS)
    else:
        config = touch_config(quotes=quotes)
    strategy = touch(config)
    engine.add_strategy(strategy)
    engine.run()
    s = time.perf_counter() - t0
    counts = dict(strategy.counts)
    engine.dispose()
    return s, counts


def nautilus_worker(raw: str, mode: str, rounds: int, variant: str = "touch") -> dict[str, Any]:
    t0 = time.perf_counter()
    inst, data = nautilus_load(raw)
    load_s = time.perf_counter() - t0
    if mode == "e2e":
        run_s, counts = nautilus_run(inst, data, True, variant)
        return {"load_s": load_s, "run_s": run_s, "events": len(data), **counts}
    touch, none = [], []
    counts = {}
    for _ in range(rounds):
        s, counts = nautilus_run(inst, data, True, variant)
        touch.append(s)
        none.append(nautilus_run(inst, data, False, variant)[0])
    return {"touch_s": touch, "nothing_s": none, "events": len(data), **counts}


WORKERS: dict[str, Callable[[str, str, int, str], dict[str, Any]]] = {
    "hftbacktest": hft_worker,
    "nautilus": nautilus_worker,
}


# ---- the parent: peers as subprocesses ---------------------------------------------------------


def peer_missing(python: str | None, peer: str) -> str | None:
    """None if ``peer`` can run under ``python``, else the line that says why not."""
    if python is None:
        return (
            f"{peer}: skipped (no --peers-python; make one: python3 -m venv V && V/bin/{PIP_LINE})"
        )
    code = (
        f"import importlib.util,sys; sys.exit(importlib.util.find_spec({MODULE[peer]!r}) is None)"
    )
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, check=False, timeout=60)
    except OSError as exc:
        return f"{peer}: skipped (cannot run {python}: {exc.strerror or exc})"
    if done.returncode != 0:
        return f"{peer}: skipped ({MODULE[peer]} is not installed in {python}; {PIP_LINE})"
    return None


def run_peer(
    python: str, peer: str, raw: Path, mode: str, rounds: int, variant: str = "touch"
) -> dict[str, Any]:
    cmd = [python, str(Path(__file__).resolve()), "--worker", peer, "--raw", str(raw)]
    cmd += ["--mode", mode, "--rounds", str(rounds), "--variant", variant]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{peer} ({mode}) failed: {done.stderr.strip()[-3000:]}")
    doc: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    doc["s"] = wall
    return doc


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from bench.replay import machine

    raw = work / "btc-raw.gz"
    say(f"raw BTC day: {args.hours:g} h, a book every ~{args.book_ms} ms, activity {args.activity}")
    t0 = time.perf_counter()
    counts = write_raw(raw, args.hours, args.seed, args.book_ms, args.activity)
    say(
        f"  {counts['lines']:,} lines ({counts['books']:,} books, {counts['trades']:,} trades "
        f"messages), {counts['bytes'] / 1e6:.0f} MB raw, in {time.perf_counter() - t0:.1f} s"
    )
    (work / "touch.py").write_text(TOUCH, encoding="utf-8")
    (work / "book.py").write_text(touch_source(0), encoding="utf-8")
    (work / "nothing.py").write_text(NOTHING, encoding="utf-8")
    skipped = {p: peer_missing(args.peers_python, p) for p in PEERS}
    for line in skipped.values():
        if line:
            say(line)
    peers = [p for p in PEERS if skipped[p] is None]
    variants = args.variants.split(",")
    e2e: dict[str, dict[str, list[dict[str, Any]]]] = {
        v: {f: [] for f in ("arena", *peers)} for v in variants
    }
    core: dict[str, dict[str, list[dict[str, Any]]]] = {
        v: {f: [] for f in ("arena", *peers)} for v in variants
    }
    day = work / "day.jsonl.lz4"
    for i in range(args.rounds):
        for v in variants:
            say(f"round {i + 1}/{args.rounds}: end to end, {v} quoter ...")
            e2e[v]["arena"].append(arena_e2e(raw, work, v))
            for p in peers:
                assert args.peers_python is not None
                e2e[v][p].append(run_peer(args.peers_python, p, raw, "e2e", 1, v))
    if not args.no_core:
        arena_run = arena_core(day, work)
        arena_run(variants[0])  # warm: imports, the strategy's module, the page cache
        for i in range(args.rounds):
            none = arena_run("nothing")
            for v in variants:
                say(f"round {i + 1}/{args.rounds}: in-process cores, {v} quoter ...")
                quoter = arena_run(v)
                core[v]["arena"].append({**quoter, "touch_s": quoter["s"], "nothing_s": none["s"]})
                for p in peers:
                    assert args.peers_python is not None
                    core[v][p].append(run_peer(args.peers_python, p, raw, "core", 1, v))
    return {
        "machine": machine(),
        "tree": _tree(),
        "day": {
            **counts,
            "hours": args.hours,
            "book_ms": args.book_ms,
            "activity": args.activity,
            "seed": args.seed,
        },
        "skipped": {p: why for p, why in skipped.items() if why},
        "e2e": e2e,
        "core": core,
        "summary": {v: summary(e2e[v], core[v]) for v in variants},
    }


def _tree() -> str | None:
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return None
    return f"{head}{' + uncommitted changes' if dirty else ''}" if head else None


def summary(
    e2e: dict[str, list[dict[str, Any]]], core: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    a = med([r["s"] for r in e2e["arena"]])
    out["arena_e2e_s"] = a
    bare = med([r["bare_s"] for r in e2e["arena"]])
    out["arena_e2e_bare_s"] = bare
    for p, key in (("hftbacktest", "hft"), ("nautilus", "nautilus")):
        if e2e.get(p):
            peer = med([r["s"] for r in e2e[p]])
            out[f"{key}_e2e_s"] = peer
            out[f"{key}_e2e_over_arena"] = peer / a
            out[f"{key}_e2e_over_arena_bare"] = peer / bare
    if core.get("arena"):
        out["arena_core_touch_s"] = med([r["touch_s"] for r in core["arena"]])
        out["arena_core_nothing_s"] = med([r["nothing_s"] for r in core["arena"]])
        for p, key in (("hftbacktest", "hft"), ("nautilus", "nautilus")):
            if core.get(p):
                out[f"{key}_core_touch_s"] = med([min(r["touch_s"]) for r in core[p]])
                out[f"{key}_core_nothing_s"] = med([min(r["nothing_s"]) for r in core[p]])
        if "hft_core_touch_s" in out:
            out["arena_core_over_hft"] = out["arena_core_touch_s"] / out["hft_core_touch_s"]
    return out


LABEL = {
    "touch": f"touch quoter (a look at most every {REQUOTE_MS // 1000} s)",
    "book": f"every-book quoter (peers woken every {PEER_WAKE_MS} ms)",
}
COUNTS = ("wakeups", "orders", "cancels", "fills")


def _cell(peer: str, rows_: dict[str, list[dict[str, Any]]], key: str) -> str:
    got = rows_.get(peer)
    if not got:
        return "skipped"
    vals = [r[key] if isinstance(r[key], float) else min(r[key]) for r in got]
    return f"{med(vals):.2f}"


def _times(variant: str, e2e: dict[str, Any], core: dict[str, Any]) -> list[str]:
    rows = [
        f"{LABEL[variant]}:",
        "",
        "| wall s (median) | arena | hftbacktest | NautilusTrader |",
        "|---|---:|---:|---:|",
    ]
    table = [
        ("import / convert / load", e2e, ("import_s", "convert_s", "load_s")),
        ("run (fresh process)", e2e, ("run_s", "run_s", "run_s")),
        ("**end to end**", e2e, ("s", "s", "s")),
        ("end to end, arena `--twins 0` (no verdict's control)", e2e, ("bare_s", "s", "s")),
    ]
    if core.get("arena"):
        table.append(("in-process core, no strategy", core, ("nothing_s",) * 3))
        table.append(("in-process core, the quoter", core, ("touch_s",) * 3))
    for label, series, keys in table:
        pairs = zip(("arena", *PEERS), keys, strict=True)
        cells = [_cell(peer, series, key) for peer, key in pairs]
        rows.append(f"| {label} | {' | '.join(cells)} |")
    return rows


def _counts(e2e: dict[str, list[dict[str, Any]]]) -> list[str]:
    """What each framework's quoter did, end to end (the last round): woken, orders sent,
    cancels sent, fills; arena's orders refused by the engine, and why."""
    rows = [
        "",
        "| what the quoter did (end to end) | wake-ups | orders | cancels | fills | refused |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for f, got in e2e.items():
        if not got:
            continue
        r = got[-1]
        cells = [f"{r[k]:,}" if isinstance(r.get(k), int) else "?" for k in COUNTS]
        refused = f"{r['refused']:,}" if "refused" in r else "n/a"
        rows.append(f"| {f} | {' | '.join(cells)} | {refused} |")
    return rows


def _verdicts(variant: str, s: dict[str, Any]) -> list[str]:
    rows = []
    if "hft_e2e_over_arena" in s:
        r = s["hft_e2e_over_arena"]
        rows.append(
            f"{variant}: arena end to end is {r:.2f}x faster than hftbacktest convert + run "
            f"(goal >= 2x: {'met' if r >= 2 else 'NOT met'}); "
            f"{s['hft_e2e_over_arena_bare']:.2f}x with --twins 0"
        )
    if "nautilus_e2e_over_arena" in s:
        r = s["nautilus_e2e_over_arena"]
        rows.append(
            f"{variant}: arena end to end is {r:.2f}x faster than NautilusTrader load + run "
            f"(goal >= 5x: {'met' if r >= 5 else 'NOT met'}); "
            f"{s['nautilus_e2e_over_arena_bare']:.2f}x with --twins 0"
        )
    if "arena_core_over_hft" in s:
        r = s["arena_core_over_hft"]
        rows.append(
            f"{variant}: arena's in-process quoter takes {r:.1f}x hftbacktest's "
            f"(goal <= 3x, must <= 5x: {'met' if r <= 3 else 'must met' if r <= 5 else 'NOT met'})"
        )
    return rows


def report(doc: dict[str, Any]) -> str:
    d, m = doc["day"], doc["machine"]
    rows = [
        f"# bench/peers.py: {d['hours']:g} h BTC raw day, {d['lines']:,} lines "
        f"({d['books']:,} books, {d['trades']:,} trades messages), {d['bytes'] / 1e6:.0f} MB raw",
        f"# {m['cpu']}, {m['cpus_usable']} usable cores, {m['python']}; "
        f"load average {m['loadavg']}; tree {doc['tree']}; engine {m.get('engine', '?')}",
    ]
    for v, e2e in doc["e2e"].items():
        rows += ["", *_times(v, e2e, doc["core"][v]), *_counts(e2e), ""]
        rows += _verdicts(v, doc["summary"][v])
    rows += ["", *doc["skipped"].values()]
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/peers.py",
        description="Time arena against hftbacktest and NautilusTrader on one raw BTC day "
        f"(the peers run under --peers-python; install them there with: {PIP_LINE}).",
    )
    p.add_argument(
        "--hours", type=float, default=3.0, help="hours of market (default 3; 24 = the issue's day)"
    )
    p.add_argument("--peers-python", help="the interpreter that has the peers installed")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--seed", type=int, default=7, help="the market's seed (default 7)")
    p.add_argument(
        "--book-ms", type=int, default=620, help="ms between l2Book snapshots (default 620)"
    )
    p.add_argument(
        "--activity", type=float, default=1.5, help="trading rate vs arena synth (default 1.5)"
    )
    p.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help="quoters, comma-separated: touch (a look at most every 2 s), book (arena: every "
        f"book; the peers: woken every {PEER_WAKE_MS} ms); default both",
    )
    p.add_argument("--no-core", action="store_true", help="only the end-to-end rows")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (raw day, log, run)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.add_argument("--worker", choices=PEERS, help=argparse.SUPPRESS)
    p.add_argument("--raw", help=argparse.SUPPRESS)
    p.add_argument("--mode", choices=("e2e", "core"), default="e2e", help=argparse.SUPPRESS)
    p.add_argument("--variant", choices=VARIANTS, default="touch", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if not 0 < args.hours <= 72:
        p.error("--hours must be in (0, 72]")
    if args.book_ms < 100:
        p.error("--book-ms must be at least 100")
    if not args.variants or not set(args.variants.split(",")) <= set(VARIANTS):
        p.error(f"--variants: a comma-separated choice of {', '.join(VARIANTS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:  # in the peers' interpreter: no arena import here
        doc = WORKERS[args.worker](args.raw, args.mode, args.rounds, args.variant)
        sys.stdout.write(json.dumps(doc) + "\n")
        return 0
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    if importlib.util.find_spec("arena_tui") is None:
        raise SystemExit(
            "arena is not importable here: run from the repo root with arena installed"
        )
    from bench.scratch import in_scratch  # (the peers' own Python runs the workers: no bench)

    return in_scratch(
        "arena-peers-", lambda w: run(args, w), report, as_json=args.json, keep=args.keep
    )


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
