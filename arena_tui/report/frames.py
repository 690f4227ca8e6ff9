"""A run as DataFrames in a notebook: ``load_run(DIR)``.

Why this module exists: the shortest way from a run to an analysis is one call that
returns its tables as polars (or pandas) DataFrames, whether ``DIR`` is a Parquet export
(``arena export DIR --parquet OUT``) or a run directory itself (its ``rundata.msgpack``,
re-derived from the run log when missing). The tables and their columns are
``arena_tui.report.export``'s; docs/notebook.md walks through one.

    >>> from arena_tui.report.frames import load_run
    >>> run = load_run("runs/first")
    >>> run.fills.group_by("entry").agg(pl.col("venue_fee").sum())
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal

from arena_tui.report import rundata
from arena_tui.report.export import META_FILE, TABLES, ExportError, frame, meta, need_polars, tables

Backend = Literal["polars", "pandas"]


@dataclass
class RunFrames:
    """One run's tables (``export.TABLES``) as DataFrames, and ``meta`` (run.json's
    content: season, rules hash, entries and parameters, verdict)."""

    fills: Any
    orders: Any
    marks: Any
    coin_pnl: Any
    round_trips: Any
    funding: Any
    prices: Any
    meta: dict[str, Any]

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name} {len(getattr(self, name))}" for name in TABLES)
        return f"<run {self.meta.get('season')} entries {self.entries}: {sizes}>"

    @property
    def entries(self) -> list[str]:
        return [e["name"] for e in self.meta.get("entries", [])]


def load_run(
    path: str | Path, backend: Backend = "polars", *, data_dir: str | None = None
) -> RunFrames:
    """The run at ``path`` (a Parquet export or a run directory) as DataFrames of
    ``backend`` ("polars", or "pandas": needs pandas and pyarrow). ``data_dir``: for a run
    directory without its run data and a thin run log, where its sources may be."""
    if backend not in ("polars", "pandas"):
        raise ExportError(f'backend {backend!r}: "polars" or "pandas"')
    pl = need_polars()
    where = Path(path)
    if (where / "fills.parquet").is_file():
        frames = {name: pl.read_parquet(where / f"{name}.parquet") for name in TABLES}
        try:
            doc = json.loads((where / META_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = {}
    elif where.is_dir():
        data = rundata.load(where, data_dir=data_dir)
        frames = {name: frame(cols) for name, cols in tables(data).items()}
        doc = meta(data)
    else:
        raise ExportError(f"{where}: neither a run directory nor a Parquet export")
    if backend == "pandas":
        if find_spec("pandas") is None or find_spec("pyarrow") is None:
            raise ExportError(
                "backend='pandas' needs pandas and pyarrow: pip install 'arena[pandas]'"
            )
        frames = {name: df.to_pandas() for name, df in frames.items()}
    return RunFrames(**frames, meta=doc)
