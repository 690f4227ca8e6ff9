"""``arena synth``: a deterministic, Hyperliquid-shaped synthetic recording.

Why it exists: a newcomer should be able to backtest right after installing, with no feed to
record and no archive to download. This writes a version-1 recording (header
``"recording": "synthetic"``, then market data only: ``l2Book``, ``trades``,
``activeAssetCtx`` messages as Hyperliquid's WebSocket sends them) for any coins, hours and
seed. The same arguments give the same bytes: each coin draws from its own
``random.Random`` seeded from (seed, coin), nothing depends on dict or set order or the
clock, and the arithmetic is platform-exact (``exact``). A shorter run is a prefix of a
longer one, and a coin's data does not depend on which other coins are generated.

The model lives in ``market`` (price), ``book`` (book), ``feed`` (messages)
and ``coins`` (the built-in coins); ``--model walk`` swaps ``market``'s price for ``walk``'s
edge-free martingale (with ``--signal``, a planted drift the oracle announces), and its
header says so under ``"synth"``. bench/genlog.py builds its benchmark log on
:class:`Synth` too.
"""

from __future__ import annotations

import datetime as dt
import gzip
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import IO, Any

import lz4.frame
import msgspec

from arena_tui.synth.coins import BUILTIN, Profile, profile_for
from arena_tui.synth.feed import BOOK, CTX, TRADES, CoinFeed, Item, Users
from arena_tui.synth.walk import LEAD, MAX_SIGNAL_BPS, MEAN_HOLD_S, MODELS, WALK_MODEL, Model
from engine.season import Market
from engine.units import HOUR_MS

SYNTH_VERSION = 1  # bump when the same arguments would give other bytes (any --model)
MAX_HOURS = 24 * 31
DEFAULT_START = "2026-12-01T00:00:00Z"
NOTE = (
    "Synthetic market data from a seeded random model shaped like Hyperliquid's WebSocket "
    "feed (book every ~5 s, trades, asset contexts). Not real prices: for trying strategies "
    "and tools, not for judging them."
)


class SynthError(Exception):
    """Arguments ``arena synth`` cannot work with (one line)."""


def parse_start(text: str) -> int:
    """``2026-12-01T00:00:00Z``, ``2026-12-01`` (UTC midnight) or an offset time -> ms."""
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise SynthError(
            f"--start {text!r}: not a time; use ISO 8601, e.g. 2026-12-01T00:00:00Z"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    ms = (when - epoch) // dt.timedelta(milliseconds=1)
    if ms <= 0:
        raise SynthError(f"--start {text!r}: must be after 1970")
    return ms


def iso(ms: int) -> str:
    when = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)
    return when.strftime("%Y-%m-%dT%H:%M:%S") + (f".{ms % 1000:03d}Z" if ms % 1000 else "Z")


def choose_markets(coins: Sequence[str], meta: Sequence[Market] | None) -> list[Market]:
    """The markets of ``coins``, by asset index: from ``meta`` when given, else the table."""
    if meta is not None:
        by_coin = {m.coin: m for m in meta}
        missing = [c for c in coins if c not in by_coin]
        if missing:
            raise SynthError(f"not in --meta's universe: {', '.join(missing)} (names are exact)")
        chosen = [by_coin[c] for c in coins]
    else:
        unknown = [c for c in coins if c not in BUILTIN]
        if unknown:
            raise SynthError(
                f"unknown coin {', '.join(unknown)}: built in are {', '.join(BUILTIN)}; "
                "for others give --meta FILE (a saved Hyperliquid meta answer)"
            )
        chosen = [BUILTIN[c][0] for c in coins]
    return sorted(chosen, key=lambda m: m.asset)


@dataclass
class Stats:
    """What a run wrote (the header not counted in ``lines``)."""

    lines: int = 0
    bytes: int = 0
    first_t: int | None = None
    last_t: int | None = None
    by_coin: dict[str, dict[str, int]] = field(default_factory=dict)

    def total(self, what: str) -> int:
        return sum(c[what] for c in self.by_coin.values())

    def count(self, coin: str, kind: int, prints: int) -> None:
        c = self.by_coin[coin]
        c[KINDS[kind]] += 1
        c["prints"] += prints


KINDS = {TRADES: "trades", BOOK: "books", CTX: "ctxs"}


class Synth:
    """The merged market data of several coins, a second at a time.

    ``activity`` scales every coin's trading rate (bench/genlog.py uses a busier market);
    ``model``: which market (``walk.Model``; None: the default, ``regimes``).
    """

    def __init__(
        self,
        markets: Sequence[Market],
        seed: int,
        start_ms: int,
        profiles: Sequence[Profile] | None = None,
        activity: float = 1.0,
        model: Model | None = None,
    ) -> None:
        self.markets = list(markets)
        self.start_ms = start_ms
        users = Users(Random(f"arena-synth:{seed}:users"))
        chosen = profiles if profiles is not None else [profile_for(m) for m in markets]
        self.feeds = [
            CoinFeed(m, p, seed, start_ms, users, activity, model)
            for m, p in zip(self.markets, chosen, strict=True)
        ]
        self.by_coin = {f.coin: f for f in self.feeds}

    def windows(self) -> Iterator[tuple[int, list[Item]]]:
        """Forever: (second start, that second's lines of every coin, in time order).

        A line is ``(t, coin's position in markets, kind, prints, text)``; lines of one
        instant keep the coins' order.
        """
        t0 = self.start_ms
        while True:
            out: list[Item] = []
            for i, feed in enumerate(self.feeds):
                feed.second(t0, out, i)
            out.sort(key=lambda x: (x[0], x[1]))
            yield t0, out
            t0 += 1000

    def items(self, end_ms: int) -> Iterator[Item]:
        """Every line with ``t < end_ms``, in order."""
        for t0, window in self.windows():
            if t0 >= end_ms:
                return
            for item in window:
                if item[0] >= end_ms:
                    return
                yield item


def choose_model(name: str, signal_bps: float | None) -> Model:
    """``--model`` and ``--signal`` checked: a :class:`Model`, or a one-line SynthError."""
    if name not in MODELS:
        raise SynthError(f"--model {name!r}: give {' or '.join(MODELS)}")
    if signal_bps is not None:
        if name != WALK_MODEL:
            raise SynthError(
                f"--signal plants a drift in the walk only: give --model {WALK_MODEL} with it"
            )
        if not 0 <= signal_bps <= MAX_SIGNAL_BPS:  # NaN fails both
            raise SynthError(
                f"--signal {signal_bps!r}: give 0 to {number_text(MAX_SIGNAL_BPS)} (bps an hour)"
            )
    return Model(name, signal_bps)


def number_text(x: float) -> str:
    """``40`` for 40.0, ``2.5`` for 2.5: as the command line would take it back."""
    return str(int(x)) if float(x).is_integer() else repr(x)


def model_fields(model: Model) -> dict[str, Any]:
    """What the header says of a model other than the default (the default: nothing, so
    its header, and so its bytes, are what they were before there were models)."""
    if model.is_default:
        return {}
    doc: dict[str, Any] = {"model": model.name}
    if model.signal_bps is not None:
        doc["signal_bps_per_hour"] = signal_value(model)
        doc["signal_lead"] = LEAD
        doc["signal_mean_hold_s"] = MEAN_HOLD_S
    return doc


def signal_value(model: Model) -> int | float | None:
    """``--signal`` as the header and ``--json`` write it: 40, not 40.0 (None: no signal)."""
    bps = model.signal_bps
    return None if bps is None else int(bps) if float(bps).is_integer() else bps


def model_args(model: Model) -> str:
    """The command line's words for ``model`` ("" for the default)."""
    if model.is_default:
        return ""
    words = f" --model {model.name}"
    if model.signal_bps is not None:
        words += f" --signal {number_text(model.signal_bps)}"
    return words


def header(
    markets: Sequence[Market],
    seed: int,
    start_ms: int,
    hours: float,
    span: tuple[int, int] | None = None,
    model: Model | None = None,
) -> bytes:
    """The recording's header; ``span``: its first and last input times, when known."""
    model = model or Model()
    command = (
        f"arena synth --coins {','.join(m.coin for m in markets)} --hours {hours_text(hours)} "
        f"--seed {seed} --start {iso(start_ms)}{model_args(model)}"
    )
    # The generator's own fields sit under "synth", clear of any header field the format
    # may define later (the reader ignores unknown fields).
    doc: dict[str, Any] = {
        "arena_log": 1,
        "recording": "synthetic",
        "generator": "arena synth",
        "note": NOTE,
        "synth": {
            "version": SYNTH_VERSION,
            "seed": seed,
            "start": iso(start_ms),
            "hours": int(hours) if float(hours).is_integer() else hours,
            "command": command,
            **model_fields(model),
        },
        "markets": [msgspec.to_builtins(m) for m in markets],
    }
    if span is not None:
        doc["first_t"], doc["last_t"] = span
    return msgspec.json.encode(doc)


def hours_text(hours: float) -> str:
    return number_text(hours)


def end_of(start_ms: int, hours: float) -> int:
    if not 0 < hours <= MAX_HOURS:
        raise SynthError(f"--hours {hours_text(hours)}: give more than 0 and at most {MAX_HOURS}")
    return start_ms + round(hours * HOUR_MS)


def write(
    f: IO[bytes],
    markets: Sequence[Market],
    seed: int,
    start_ms: int,
    hours: float,
    progress: Callable[[int, int], None] | None = None,
    model: Model | None = None,
) -> Stats:
    """Write the whole recording to ``f`` (uncompressed bytes); return what was written."""
    end = end_of(start_ms, hours)
    synth = Synth(markets, seed, start_ms, model=model)
    fields = ("books", "trades", "prints", "ctxs")
    stats = Stats(by_coin={m.coin: dict.fromkeys(fields, 0) for m in markets})
    head = header(markets, seed, start_ms, hours, model=model) + b"\n"
    f.write(head)
    stats.bytes = len(head)
    coins = [m.coin for m in markets]
    batch: list[str] = []
    for t, order, kind, prints, line in synth.items(end):
        stats.count(coins[order], kind, prints)
        if stats.first_t is None:
            stats.first_t = t
        stats.last_t = t
        batch.append(line)
        if len(batch) >= 4096:
            _flush(f, batch, stats, progress)
    _flush(f, batch, stats, progress)
    return stats


def _flush(
    f: IO[bytes], batch: list[str], stats: Stats, progress: Callable[[int, int], None] | None
) -> None:
    if not batch:
        return
    data = ("\n".join(batch) + "\n").encode()
    f.write(data)
    stats.bytes += len(data)
    stats.lines += len(batch)
    batch.clear()
    if progress is not None and stats.last_t is not None:
        progress(stats.lines, stats.last_t)


def _compressed(raw: IO[bytes], name: str) -> IO[bytes]:
    if name.endswith(".gz"):  # no name, no mtime: same bytes every run; LZ4: checksummed
        return gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0)  # type: ignore[return-value]
    if name.endswith(".lz4"):
        return lz4.frame.LZ4FrameFile(raw, "wb", content_checksum=True)  # type: ignore[no-any-return]
    return raw


def write_file(
    out: Path,
    markets: Sequence[Market],
    seed: int,
    start_ms: int,
    hours: float,
    *,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
    model: Model | None = None,
) -> Stats:
    """Write ``out`` (compressed by extension) whole or not at all: a temp file, renamed."""
    end_of(start_ms, hours)
    if out.exists() and not force:
        raise SynthError(f"{out}: already exists (give --force to overwrite it)")
    if out.is_dir():
        raise SynthError(f"{out}: is a directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.partial")
    body = out.with_name(f".{out.name}.{os.getpid()}.body")
    try:
        # The lines go to a plain file first: the header then says the first and last
        # input times (``first_t``, ``last_t``), known only at the end, so that readers
        # never read the file twice to find them.
        with open(body, "w+b") as lines, open(tmp, "wb") as raw:
            stats = write(lines, markets, seed, start_ms, hours, progress, model)
            lines.seek(0)
            old = len(lines.readline())
            span = None if stats.first_t is None else (stats.first_t, stats.last_t or 0)
            head = header(markets, seed, start_ms, hours, span, model) + b"\n"
            stats.bytes += len(head) - old
            f = _compressed(raw, out.name)
            f.write(head)
            while chunk := lines.read(1 << 20):
                f.write(chunk)
            if f is not raw:
                f.close()
            raw.flush()
            os.fsync(raw.fileno())
        if out.exists() and not force:
            raise SynthError(f"{out}: appeared while writing; not overwritten")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
        body.unlink(missing_ok=True)
    return stats
