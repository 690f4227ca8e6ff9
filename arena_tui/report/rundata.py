"""A run's data kept beside it, or derived again from its log: the run data file.

Why this module exists: report.html, ``arena export --parquet`` and the DataFrame loader
read one :class:`RunData` of a run (``report.runmodel``, gathered by
``report.collector.Collector`` in the run's own pass); :func:`save` keeps it beside the
run (``rundata.msgpack``) and :func:`load` reads it back, or re-derives it by replaying the
run's log (a thin one finds its sources as ``arena replay`` does) with the same collector
when the file is missing or older. The model's and the collector's names are importable
from here too, as they were when the three were one module.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.logs.thinlog import open_logs
from arena_tui.report.collector import Collector
from arena_tui.report.runmodel import (
    FORMAT,
    CoinInfo,
    CoinPnl,
    EntryInfo,
    EntryMark,
    FillRow,
    FundingRow,
    OrderRow,
    PerfFeeRow,
    PriceRow,
    RoundTrip,
    RunData,
)
from arena_tui.run.market import MarketView
from arena_tui.run.rundir import RUN_LOG
from arena_tui.run.stats import exit_value
from arena_tui.season.file import resolve_season
from arena_tui.util.errors import ArenaError
from engine import Engine, MalformedInput, Season
from engine.units import MINUTE_MS

__all__ = [
    "FORMAT",
    "MINUTE_MS",
    "RUNDATA_FILE",
    "CoinInfo",
    "CoinPnl",
    "Collector",
    "EntryInfo",
    "EntryMark",
    "FillRow",
    "FundingRow",
    "OrderRow",
    "PerfFeeRow",
    "PriceRow",
    "RoundTrip",
    "RunData",
    "RunDataError",
    "derive",
    "load",
    "replay_collect",
    "save",
]

RUNDATA_FILE = "rundata.msgpack"


class RunDataError(ArenaError):
    """A run directory whose data cannot be read or re-derived (one line)."""


# ---- the file -----------------------------------------------------------------------------

_ENC = msgspec.msgpack.Encoder()
_DEC = msgspec.msgpack.Decoder(RunData)


_CHUNK = 4096  # rows encoded at a time when a list is written row by row


def _array_header(n: int) -> bytes:
    """The MessagePack header of an array of ``n`` items (as msgspec writes it)."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


def _map_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x80 | n,))
    if n < 1 << 16:
        return b"\xde" + n.to_bytes(2, "big")
    return b"\xdf" + n.to_bytes(4, "big")


def encoded(data: RunData) -> Iterator[bytes]:
    """``data`` as MessagePack, in pieces: the bytes of ``msgspec.msgpack.encode(data)``,
    with each list field's rows encoded a chunk at a time (a run's marks are read from
    their flat store as they are written, never all made at once)."""
    fields = data.__struct_fields__
    yield _map_header(len(fields))
    for name in fields:
        yield _ENC.encode(name)
        value = getattr(data, name)
        if isinstance(value, list) or not isinstance(value, Sequence) or isinstance(value, str):
            yield _ENC.encode(value)
            continue
        n = len(value)
        yield _array_header(n)
        for i in range(0, n, _CHUNK):
            yield _ENC.encode(value[i : i + _CHUNK])[len(_array_header(min(_CHUNK, n - i))) :]


def save(data: RunData, run_dir: Path) -> Path:
    """``rundata.msgpack`` in ``run_dir`` (written piece by piece: ``encoded``); its path."""
    path = run_dir / RUNDATA_FILE
    with path.open("wb") as f:
        for piece in encoded(data):
            f.write(piece)
    return path


def load(run_dir: Path, *, data_dir: str | None = None) -> RunData:
    """The run's data: ``rundata.msgpack``, else re-derived from the run log (then saved
    when the directory is writable). ``data_dir``: where a thin run log's sources may be
    (as ``arena replay --data``)."""
    path = run_dir / RUNDATA_FILE
    if path.is_file():
        try:
            data = _DEC.decode(path.read_bytes())
        except (msgspec.DecodeError, msgspec.ValidationError):
            data = None  # an older or torn file: derived again below
        if data is not None and data.format == FORMAT:
            return data
    data = derive(run_dir, data_dir=data_dir)
    with contextlib.suppress(OSError):  # a read-only run directory: derived again next time
        save(data, run_dir)
    return data


def _report(run_dir: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def derive(
    run_dir: Path,
    *,
    data_dir: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunData:
    """Replay ``run_dir``'s run log with a :class:`Collector` (exit value from the books as
    the runner computes it); entries' files and parameters and the verdict from its
    report.json when there is one."""
    report = _report(run_dir)
    named_log = report.get("run_log") if report is not None else None
    log = run_dir / (named_log if isinstance(named_log, str) and named_log else RUN_LOG)
    if not log.is_file():
        raise RunDataError(f"{run_dir}: not a run directory (no run log {log.name})")
    season = resolve_season([str(log)], None)
    by_name: dict[str, dict[str, Any]] = {}
    if report is not None:
        by_name = {str(e.get("entry")): e for e in report.get("entries", []) if isinstance(e, dict)}
    return replay_collect(
        [str(log)],
        season,
        named=lambda n: EntryInfo(
            n, by_name.get(n, {}).get("strategy"), by_name.get(n, {}).get("params")
        ),
        verdict=None if report is None else report.get("verdict"),
        data_dir=data_dir,
        progress=progress,
    )


def replay_collect(
    paths: Sequence[str],
    season: Season,
    *,
    named: Callable[[str], EntryInfo] = EntryInfo,
    verdict: dict[str, Any] | None = None,
    data_dir: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunData:
    """A :class:`RunData` of logs replayed: every entry that registers, in the order they
    registered (a backtest's strategy first), described by ``named``."""
    eng = Engine(season, record_prints=True)
    markets = {m.coin: MarketView(eng, m.coin, m.asset, m.szDecimals) for m in season.markets}
    c = Collector(eng, exit_of=lambda entry: exit_value(eng, entry, markets))
    reader = open_logs(paths, [m.coin for m in season.markets], data_dir)
    for n, line in enumerate(reader, 1):
        try:
            out = eng.apply(line)
        except MalformedInput as exc:
            raise reader.error(str(exc)) from None
        c.observe(line, reader.raw, out)
        if progress is not None and not n & 0x3FFF:
            progress(n, line.t)
    data = c.data(verdict)
    data.entries = [named(e.name) for e in data.entries]
    return data
