"""A fetched UTC day: the three channels' downloaded objects merged into one version-1 log.

Why this module exists: a backtest of several coins reads one file per day in sequence, so
each day's books (every coin), asset contexts and trades are merged by time into one file,
``hl-YYYY-MM-DD.jsonl.lz4``, the name ``arena record`` gives its days. It is written whole
or not at all: the inputs go to a temporary file, the log (header with ``first_t`` and
``last_t``, then the inputs, LZ4) to a hidden temporary file beside the day, fsynced and
renamed over it. A failure (a corrupt object, a line the log would refuse) leaves the day
as it was.

- ``t``: a book's receive time as the archive stamped it (ms, truncated); a context's and a
  print's exchange time. Each channel's times are made non-decreasing (a time lower than
  the one before is raised to it, counted as ``held``), then the channels are merged (ties:
  gaps, books, contexts, trades). An input before the day's start (a print of 23:59:59.9
  in the next day's hour-0 object) gets ``t`` = the day's start (``held``); one past the
  day's end is dropped (``outside``): a day never ends after the next one starts.
- Gaps: each run of hours the archive has no object for (a coin's books, or the trades)
  becomes one ``gap`` input, ``from`` the first missing hour's start, ``to`` the end of the
  run (at most the day's last ms), at ``t = to``; reason ``missing``, and ``what`` names the
  channel (an arena input's unknown fields are ignored by every reader).
"""

from __future__ import annotations

import datetime as dt
import heapq
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import lz4.frame
import msgspec

from arena_tui.logs.dayfiles import LZ4_LEVEL, fsync_dir
from arena_tui.logs.logcheck import check_line
from arena_tui.logs.logfile import LOG_VERSION, BadLine, LogError, iter_raw_lines
from arena_tui.logs.writer import compressed_writer
from arena_tui.record.archive import (
    ArchiveError,
    FillStats,
    book_records,
    ctx_records,
    prints_from_fills,
    prints_from_node_trades,
    trades_messages,
)
from arena_tui.record.fetch import DayPlan, Obj
from arena_tui.util.outputs import writing
from engine import Market
from engine.inputs import Trades
from engine.units import DAY_MS, HOUR_MS

FETCH_VERSION = 1
SOURCE = "hl-s3"
_EPOCH = dt.date(1970, 1, 1)
# merge ranks: at one t a gap comes first (as the recorder writes it), then books, ctxs, trades
GAP, BOOK, CTX, TRADES = range(4)
Rec = tuple[int, int, bytes]  # (t, rank, line)


def day_name(day: dt.date) -> str:
    return f"hl-{day.isoformat()}.jsonl.lz4"


def day_start_ms(day: dt.date) -> int:
    return (day - _EPOCH).days * DAY_MS


@dataclass
class DaySummary:
    day: str
    path: str = ""
    coins: list[str] = field(default_factory=list)
    inputs: int = 0
    books: int = 0
    trades: int = 0
    prints: int = 0
    ctxs: int = 0
    gaps: int = 0
    held: int = 0
    outside: int = 0
    unpaired_fills: int = 0
    first_t: int | None = None
    last_t: int | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _lines(path: Path, where: str) -> Iterator[bytes]:
    """An LZ4 object's lines; a truncated or corrupt frame is an ``ArchiveError``."""
    try:
        with lz4.frame.open(path, "rb") as f:
            yield from f
    except (RuntimeError, OSError, EOFError) as exc:
        raise ArchiveError(
            f"{where}: truncated or corrupt LZ4 object ({exc}); it was removed from the "
            "download cache: run the fetch again, and if it fails again the archive's copy "
            "is damaged"
        ) from None


def _raise_held(recs: Iterable[tuple[int, bytes]], rank: int, s: DaySummary) -> Iterator[Rec]:
    prev = -(1 << 62)
    for t, msg in recs:
        if t < prev:
            s.held += 1
            t = prev
        prev = t
        yield t, rank, msg


def _hour_runs(hours: Iterable[int]) -> list[tuple[int, int]]:
    """Missing hours as runs ``[first, last + 1)``."""
    missing = sorted(set(range(24)) - set(hours))
    runs: list[tuple[int, int]] = []
    for h in missing:
        if runs and runs[-1][1] == h:
            runs[-1] = (runs[-1][0], h + 1)
        else:
            runs.append((h, h + 1))
    return runs


def gap_records(plan: DayPlan) -> list[Rec]:
    start = day_start_ms(plan.day)
    recs: list[Rec] = []
    channels: list[tuple[str, Iterable[int]]] = [
        (f"l2Book {c}", plan.books.get(c, {}).keys()) for c in plan.coins
    ]
    channels.append(("trades", plan.fills.keys()))
    if plan.ctx is None:
        channels.append(("activeAssetCtx", []))
    for what, hours in channels:
        for h0, h1 in _hour_runs(hours):
            to = min(start + h1 * HOUR_MS, start + DAY_MS - 1)
            gap = {"type": "gap", "from": start + h0 * HOUR_MS, "to": to, "reason": "missing"}
            gap["what"] = what
            recs.append((to, GAP, msgspec.json.encode(gap)))
    recs.sort(key=lambda r: r[0])
    return recs


class _Source:
    """The cached objects of a day and the failures they raise, named by S3 URI."""

    def __init__(self, cache: Path, coins: Sequence[str], s: DaySummary) -> None:
        self.cache = cache
        self.coins = frozenset(coins)
        self.s = s

    def lines(self, o: Obj) -> Iterator[bytes]:
        path = o.cached(self.cache)
        try:
            yield from _lines(path, o.uri)
        except ArchiveError:
            path.unlink(missing_ok=True)
            raise

    def books(self, hours: dict[int, Obj]) -> Iterator[tuple[int, bytes]]:
        for h in sorted(hours):
            yield from book_records(self.lines(hours[h]), hours[h].uri)

    def ctxs(self, o: Obj) -> Iterator[tuple[int, bytes]]:
        path = o.cached(self.cache)
        try:
            with lz4.frame.open(path, "rb") as f:
                yield from ctx_records(f, self.coins, o.uri)
        except (RuntimeError, OSError, EOFError, UnicodeDecodeError) as exc:
            path.unlink(missing_ok=True)
            raise ArchiveError(f"{o.uri}: truncated or corrupt LZ4 object ({exc})") from None

    def trades(self, fills: dict[int, tuple[str, Obj]]) -> Iterator[tuple[int, bytes]]:
        stats = FillStats()
        for h in sorted(fills):
            layout, o = fills[h]
            if layout == "node_trades":
                prints = prints_from_node_trades(self.lines(o), self.coins, o.uri, stats)
            else:
                prints = prints_from_fills(layout, self.lines(o), self.coins, o.uri, stats)
            self.s.unpaired_fills = stats.unpaired
            yield from trades_messages(prints)


def day_records(plan: DayPlan, cache: Path, s: DaySummary) -> Iterator[Rec]:
    """The day's inputs, merged by t (see the module docstring)."""
    src = _Source(cache, plan.coins, s)
    streams: list[Iterator[Rec]] = [iter(gap_records(plan))]
    streams += [_raise_held(src.books(plan.books[c]), BOOK, s) for c in plan.coins]
    if plan.ctx is not None:
        streams.append(_raise_held(src.ctxs(plan.ctx), CTX, s))
    streams.append(_raise_held(src.trades(plan.fills), TRADES, s))
    start = day_start_ms(plan.day)
    for t, rank, msg in heapq.merge(*streams, key=lambda r: (r[0], r[1])):
        if t < start:  # e.g. a print of 23:59:59.9 in the next day's hour-0 fills
            s.held += 1
            t = start
        elif t >= start + DAY_MS:
            s.outside += 1
            continue
        yield t, rank, msg


def header(plan: DayPlan, markets: Sequence[Market], s: DaySummary) -> dict[str, Any]:
    d = plan.compact
    fills: dict[str, list[int]] = {}
    for h, (layout, _) in sorted(plan.fills.items()):
        fills.setdefault(layout, []).append(h)
    missing = {c: [h for h in range(24) if h not in plan.books.get(c, {})] for c in plan.coins}
    return {
        "arena_log": LOG_VERSION,
        "recording": "hyperliquid",
        "source": SOURCE,
        "generator": "arena fetch",
        "markets": msgspec.to_builtins(list(markets)),
        "first_t": s.first_t,
        "last_t": s.last_t,
        "fetched": {
            "version": FETCH_VERSION,
            "day": plan.day.isoformat(),
            "coins": list(plan.coins),
            "l2Book": {
                "from": f"s3://hyperliquid-archive/market_data/{d}/<hour>/l2Book/<coin>.lz4",
                "missing_hours": {c: h for c, h in missing.items() if h},
            },
            "activeAssetCtx": {"from": plan.ctx.uri if plan.ctx else None},
            "trades": {
                "from": f"s3://hl-mainnet-node-data/<layout>/hourly/{d}/<hour>.lz4",
                "layouts": fills,
                "rebuilt": "one print per trade: the two fills of a tid, side = the taker's",
            },
        },
    }


def write_day(plan: DayPlan, markets: Sequence[Market], cache: Path, out_dir: Path) -> DaySummary:
    """Assemble ``plan``'s day into ``out_dir/hl-YYYY-MM-DD.jsonl.lz4``, atomically."""
    out = out_dir / day_name(plan.day)
    s = DaySummary(plan.day.isoformat(), str(out), list(plan.coins))
    with writing(out_dir, "--out"):
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_dir, prefix=".fetch-body-") as body:
            _write_body(plan, cache, s, body)
            if s.inputs == 0:
                raise ArchiveError(f"{plan.day}: the objects hold no data for these coins")
            body.seek(0)
            tmp = out.with_name(f".{out.name}.{os.getpid()}.part")
            try:
                with tmp.open("wb") as raw:
                    z = compressed_writer(raw, out.name, lz4_level=LZ4_LEVEL)
                    z.write(msgspec.json.encode(header(plan, markets, s)) + b"\n")
                    while chunk := body.read(1 << 20):
                        z.write(chunk)
                    z.close()
                    raw.flush()
                    os.fsync(raw.fileno())
                os.replace(tmp, out)
            finally:
                tmp.unlink(missing_ok=True)
        fsync_dir(out_dir)
    return s


def _write_body(plan: DayPlan, cache: Path, s: DaySummary, body: IO[bytes]) -> None:
    batch: list[bytes] = []
    for t, rank, msg in day_records(plan, cache, s):
        if rank == GAP:
            line = b'{"t":%d,"arena":%s}' % (t, msg)
            s.gaps += 1
        else:
            line = b'{"t":%d,"hl":%s}' % (t, msg)
        try:
            checked = check_line(line)
        except (BadLine, LogError) as exc:
            raise ArchiveError(f"{plan.day}: a line the log would refuse: {exc}") from None
        if rank == BOOK:
            s.books += 1
        elif rank == CTX:
            s.ctxs += 1
        elif rank == TRADES:
            s.trades += 1
            s.prints += len(checked.hl.data) if isinstance(checked.hl, Trades) else 0
        s.inputs += 1
        s.first_t = t if s.first_t is None else s.first_t
        s.last_t = t
        batch.append(line)
        if len(batch) >= 4096:
            body.write(b"\n".join(batch) + b"\n")
            batch = []
    if batch:
        body.write(b"\n".join(batch) + b"\n")


def fetched_coins(path: Path) -> list[str] | None:
    """The coins an existing fetched day holds; None if there is no such file. A file there
    that ``arena fetch`` did not write is refused: it is never replaced."""
    if not path.exists():
        return None
    try:
        first = next(iter(iter_raw_lines(path)), b"")
        doc = msgspec.json.decode(first)
    except (LogError, msgspec.DecodeError, StopIteration):
        doc = None
    if not isinstance(doc, dict) or doc.get("source") != SOURCE:
        raise ArchiveError(
            f"{path}: not a day written by arena fetch; it is never replaced (move it, or "
            "choose another --out)"
        )
    return [m["coin"] for m in doc.get("markets", []) if isinstance(m, dict) and "coin" in m]
