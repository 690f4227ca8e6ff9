"""A run as tables for the ecosystem: column dicts, then Parquet files (``arena export``).

Why this module exists: a quant opens a run in polars, pandas, DuckDB or Spark, not in
arena. The run data (``rundata``) becomes seven tables (fills, orders with their
lifecycle, minute marks, per-coin PnL, round trips, funding, prices), each with coin
names and UTC timestamps (``Datetime(ms, UTC)``, exact to the engine's millisecond), and
every amount twice: exact, as the engine's integer with its unit in the name
(``px_e8``, ``fee_e6``), and as a float for people (``px`` in USD, ``sz`` in coins,
``equity`` in USD, ratios as fractions). Sums of the integer columns equal report.json's
to the unit. ``run.json`` beside the tables holds what is not a table: the season, the
rules' hash, the entries with their files and parameters, the verdict.

The columns are built here as plain Python lists (``tables``): only writing Parquet and
making DataFrames (``frames``) needs polars, an optional dependency (``arena[frames]``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena_tui.report.rundata import RunData
from arena_tui.util.errors import ArenaError

if TYPE_CHECKING:
    import polars

TABLES = ("fills", "orders", "marks", "coin_pnl", "round_trips", "funding", "prices")
META_FILE = "run.json"
TIF = {1: "Alo", 2: "Gtc", 3: "Ioc"}
INSTALL = "pip install 'arena[frames]' (or 'arena[pandas]' for pandas DataFrames too)"

# the integer columns and their scale: each gets a float twin without the suffix
_E6 = "_e6"
_E8 = "_e8"


class ExportError(ArenaError):
    """An export that cannot be done as asked (one line)."""


def need_polars() -> Any:
    """The polars module, or one clear line saying how to get it."""
    try:
        import polars
    except ImportError:
        raise ExportError(f"Parquet and DataFrames need polars: {INSTALL}") from None
    return polars


Columns = dict[str, list[Any]]


def _cols(names: list[str], rows: list[tuple[Any, ...]]) -> Columns:
    if not rows:
        return {n: [] for n in names}
    return {n: list(col) for n, col in zip(names, zip(*rows, strict=True), strict=True)}


def tables(data: RunData) -> dict[str, Columns]:
    """Every table as columns of Python values (times in ms; see ``TIME_COLUMNS``)."""
    fills = _cols(
        [
            "time", "entry", "coin", "side", "liquidity", "px_e8", "sz_e8", "notional_e6",
            "venue_fee_e6", "exec_fee_e6", "oid", "cloid", "note", "quote_source",
            "quote_time", "quote_level", "quote_tid", "quote_px_e8", "quote_sz_e8",
        ],
        [
            (
                f.t, f.entry, f.coin, "buy" if f.is_buy else "sell",
                "taker" if f.taker else "maker", f.px, f.sz, f.px * f.sz // 10**10,
                f.venue_fee, f.exec_fee, f.oid, f.cloid, f.note, f.quote_source,
                f.quote_time, f.quote_level, f.quote_tid, f.quote_px, f.quote_sz,
            )
            for f in data.fills
        ],
    )  # fmt: skip
    orders = _cols(
        [
            "received", "entry", "oid", "cloid", "coin", "side", "limit_px_e8", "sz_e8",
            "tif", "reduce_only", "status", "reject_reason", "reserve_e6", "activates_at",
            "activated", "cancel_requested", "closed", "close_reason", "filled_e8", "note",
        ],
        [
            (
                o.received_t, o.entry, o.oid, o.cloid, o.coin, "buy" if o.is_buy else "sell",
                o.limit_px, o.sz, TIF.get(o.tif, str(o.tif)), o.reduce_only, o.status,
                o.reject_reason, o.reserve, o.activates_at, o.activated_t, o.cancel_t,
                o.closed_t, o.close_reason, o.filled, o.note,
            )
            for o in data.orders
        ],
    )  # fmt: skip
    marks = _cols(
        [
            "time", "entry", "equity_e6", "exit_equity_e6", "peak_e6", "drawdown_e8",
            "mdd_e8", "cap_used_e6", "cap_e6", "open_orders", "active",
        ],
        [
            (
                m.t, m.entry, m.equity, m.exit_equity, m.peak, m.drawdown, m.mdd, m.cap_used,
                m.cap, m.open_orders, m.active,
            )
            for m in data.marks
        ],
    )  # fmt: skip
    coin_pnl = _cols(
        [
            "entry", "coin", "fills", "volume_e6", "venue_fees_e6", "exec_fees_e6",
            "funding_e6", "position_e8", "pnl_e6",
        ],
        [
            (
                c.entry, c.coin, c.fills, c.volume, c.venue_fees, c.exec_fees, c.funding,
                c.position, c.pnl,
            )
            for c in data.coin_pnl
        ],
    )  # fmt: skip
    trips = _cols(
        [
            "entry", "coin", "side", "opened", "closed", "qty_e8", "avg_entry_px_e8",
            "avg_exit_px_e8", "fees_e6", "pnl_e6", "fills",
        ],
        [
            (
                r.entry, r.coin, r.side, r.opened_t, r.closed_t, r.qty, r.avg_entry_px,
                r.avg_exit_px, r.fees, r.pnl, r.fills,
            )
            for r in data.round_trips
        ],
    )  # fmt: skip
    funding = _cols(
        ["time", "entry", "coin", "payment_e6"],
        [(r.t, r.entry, r.coin, r.payment) for r in data.funding],
    )
    prices = _cols(
        ["time", "coin", "mid_e8", "mark_e8", "high_e8", "low_e8", "last_e8", "prints"],
        [(p.t, p.coin, p.mid, p.mark, p.high, p.low, p.last, p.prints) for p in data.prices],
    )
    return {
        "fills": fills,
        "orders": orders,
        "marks": marks,
        "coin_pnl": coin_pnl,
        "round_trips": trips,
        "funding": funding,
        "prices": prices,
    }


TIME_COLUMNS = {
    "time", "quote_time", "received", "activates_at", "activated", "cancel_requested",
    "closed", "opened",
}  # fmt: skip


def meta(data: RunData) -> dict[str, Any]:
    """run.json: what is not a table."""
    return {
        "format": 1,
        "season": data.season,
        "rules_sha256": data.rules_sha256,
        "start": data.start,
        "end": data.end,
        "starting_equity_e6": data.starting_equity,
        "position_cap_pct": data.position_cap_pct,
        "drawdown_limit_pct": data.drawdown_limit_pct,
        "max_open_orders": data.max_open_orders,
        "entries": [
            {"name": e.name, "strategy": e.strategy, "params": e.params} for e in data.entries
        ],
        "coins": [
            {"coin": c.coin, "asset": c.asset, "sz_decimals": c.sz_decimals} for c in data.coins
        ],
        "perf_fees": [
            {"entry": p.entry, "t": p.t, "fee_e6": p.fee, "equity_e6": p.equity}
            for p in data.perf_fees
        ],
        "verdict": data.verdict,
    }


def frame(cols: Columns) -> polars.DataFrame:
    """One table as a polars DataFrame: times as UTC datetimes, integer columns kept, each
    with its float twin (``px_e8`` -> ``px``; an e8 ratio -> a fraction)."""
    need_polars()
    import polars as pl

    schema: dict[str, Any] = {}
    for name in cols:
        if name in TIME_COLUMNS or name.endswith((_E6, _E8)) or name in (
            "oid", "quote_level", "quote_tid", "fills", "open_orders", "prints",
        ):  # fmt: skip
            schema[name] = pl.Int64
    df = pl.DataFrame(cols, schema_overrides=schema, strict=False)
    exprs = []
    for name in cols:
        if name in TIME_COLUMNS:
            exprs.append(pl.col(name).cast(pl.Datetime("ms", "UTC")))
        elif name.endswith((_E6, _E8)):
            scale = 1e6 if name.endswith(_E6) else 1e8
            exprs.append(pl.col(name))
            exprs.append((pl.col(name) / scale).alias(name[:-3]))
        else:
            exprs.append(pl.col(name))
    df = df.select(exprs)
    if "opened" in cols and "closed" in cols:  # a round trip's holding time
        df = df.with_columns((pl.col("closed") - pl.col("opened")).alias("holding"))
    return df


def write_parquet(data: RunData, out: Path) -> list[Path]:
    """Every table as ``OUT/<table>.parquet`` and ``OUT/run.json``; the files written."""
    need_polars()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, cols in tables(data).items():
        path = out / f"{name}.parquet"
        frame(cols).write_parquet(path)
        written.append(path)
    path = out / META_FILE
    path.write_text(json.dumps(meta(data), separators=(",", ":")) + "\n", encoding="utf-8")
    written.append(path)
    return written
