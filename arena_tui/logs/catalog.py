"""What market data a directory holds: per coin and UTC day, and which files a run needs.

Why this module exists: history piles up (``arena fetch``, ``arena record``, imports, synth)
and a builder asks two questions of it: what do I have (``arena data list``), and which
files are "BTC and ETH from the 1st to the 7th" (``arena backtest DIR --from --to
--coins``). Both are answered here.

- ``scan(dir)``: every log (``*.jsonl``, ``.jsonl.gz``, ``.jsonl.lz4``) is read once: its
  header says where it came from (``recorded``: ``arena record``; ``fetched``: ``arena
  fetch``; ``imported``: ``arena import``; ``synthetic``: ``arena synth``), a counting pass
  gives per coin and UTC day the books, prints and contexts, the minutes holding each (the
  coverage: minutes with data / 1,440), and the gap inputs. The counts are kept in
  ``.arena-catalog.json`` in the directory, keyed by name, size and mtime (ns), so a second
  listing reads only what changed (a directory that cannot be written is scanned each time).
- ``select_days(dir, first, last, coins)``: the day files of the range, in order; a day no
  file covers is one error naming it and saying ``arena fetch`` can get it. Files named as
  the recorder and ``arena fetch`` name days (``hl-YYYY-MM-DD.jsonl[.lz4|.gz]``) are chosen
  by name and header alone, others from the catalog.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.logs.dayfiles import day_of
from arena_tui.logs.logfile import BadLine, LogError, decode_line, iter_raw_lines
from arena_tui.util.errors import ArenaError
from arena_tui.util.paths import shipped
from engine.inputs import AssetCtx, Book, Gap, Trades
from engine.units import MINUTE_MS

INDEX = ".arena-catalog.json"
INDEX_VERSION = 1
DAY_MINUTES = 1440


class CatalogError(ArenaError):
    """A selection of days the directory cannot give (one line)."""


def is_log(p: Path) -> bool:
    return (
        p.is_file()
        and not p.name.startswith(".")
        and p.name.endswith((".jsonl", ".jsonl.gz", ".jsonl.lz4"))
    )


def kind_of(header: dict[str, Any]) -> str:
    """Where a file's data came from, by its header."""
    source = header.get("source")
    if header.get("recording") == "synthetic":
        return "synthetic"
    if source == "hl-s3":
        return "fetched"
    if source is not None:
        return "imported"
    if "recording" in header:
        return "recorded"
    return "run" if "season" in header else "unknown"


@dataclass
class FileEntry:
    """One log's header facts and its counts per (day, coin)."""

    name: str
    size: int
    mtime_ns: int
    kind: str
    coins: list[str]
    days: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # day->coin->counts
    gaps: dict[str, dict[str, int]] = field(default_factory=dict)  # day -> {count, ms}
    error: str | None = None


_COUNTS = ("books", "trades", "prints", "ctxs", "book_minutes", "trade_minutes", "ctx_minutes")


def count_file(path: Path, st: os.stat_result) -> FileEntry:
    entry = FileEntry(path.name, st.st_size, st.st_mtime_ns, "unknown", [])
    minutes: dict[tuple[str, str, str], set[int]] = {}
    spans: dict[str, list[tuple[int, int]]] = {}

    def bump(t: int, coin: str, what: str, n: int = 1) -> None:
        day = day_of(t)
        c = entry.days.setdefault(day, {}).setdefault(coin, dict.fromkeys(_COUNTS, 0))
        c[what] += n
        minutes.setdefault((day, coin, what), set()).add(t // MINUTE_MS % DAY_MINUTES)

    try:
        lines = iter_raw_lines(path)
        head = msgspec.json.decode(next(iter(lines), b"{}"))
        header = head if isinstance(head, dict) else {}
        entry.kind = kind_of(header)
        entry.coins = [m.get("coin", "?") for m in header.get("markets") or []]
        for raw in lines:
            line = decode_line(raw)
            hl = line.hl
            if type(hl) is Book:
                bump(line.t, hl.data.coin, "books")
            elif type(hl) is Trades and hl.data:
                bump(line.t, hl.data[0].coin, "trades")
                bump(line.t, hl.data[0].coin, "prints", len(hl.data))
            elif type(hl) is AssetCtx:
                bump(line.t, hl.data.coin, "ctxs")
            elif type(line.arena) is Gap:
                g = entry.gaps.setdefault(day_of(line.t), {"count": 0, "ms": 0})
                g["count"] += 1
                spans.setdefault(day_of(line.t), []).append((line.arena.from_, line.arena.to))
    except (LogError, BadLine, msgspec.DecodeError) as exc:
        entry.error = str(exc)
    for day, pairs in spans.items():  # the time any gap covers, overlaps counted once
        end = -(1 << 62)
        for lo, hi in sorted(pairs):
            lo = max(lo, end)
            if hi > lo:
                entry.gaps[day]["ms"] += hi - lo
            end = max(end, hi)
    for (day, coin, what), mins in minutes.items():
        key = {"books": "book_minutes", "prints": "trade_minutes", "ctxs": "ctx_minutes"}.get(what)
        if key is not None:
            entry.days[day][coin][key] = len(mins)
    return entry


def scan(directory: Path, progress: Callable[[str], None] | None = None) -> list[FileEntry]:
    """Every log in ``directory`` (not its subdirectories), from the index when unchanged."""
    index_path = directory / INDEX
    try:
        doc = json.loads(index_path.read_text(encoding="utf-8"))
        old = doc.get("files", {}) if doc.get("version") == INDEX_VERSION else {}
    except (OSError, ValueError):
        old = {}
    entries: list[FileEntry] = []
    changed = False
    for p in sorted(directory.iterdir()):
        if not is_log(p):
            continue
        st = p.stat()
        cached = old.get(p.name)
        if cached and cached["size"] == st.st_size and cached["mtime_ns"] == st.st_mtime_ns:
            entries.append(FileEntry(**cached))
            continue
        if progress is not None:
            progress(p.name)
        entries.append(count_file(p, st))
        changed = True
    if changed or len(entries) != len(old):
        files = {e.name: e.__dict__ for e in entries}
        tmp = index_path.with_name(f"{INDEX}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps({"version": INDEX_VERSION, "files": files}), "utf-8")
            os.replace(tmp, index_path)
        except OSError:
            tmp.unlink(missing_ok=True)  # a read-only directory: no index, scanned each time
    return entries


def rows(entries: Sequence[FileEntry]) -> list[dict[str, Any]]:
    """One row per (UTC day, coin, file), ordered by day, coin and file."""
    out: list[dict[str, Any]] = []
    for e in entries:
        for day, by_coin in e.days.items():
            gaps = e.gaps.get(day, {"count": 0, "ms": 0})
            for coin, c in by_coin.items():
                out.append(
                    {
                        "day": day,
                        "coin": coin,
                        "file": e.name,
                        "kind": e.kind,
                        "books": c["books"],
                        "trades": c["trades"],
                        "prints": c["prints"],
                        "ctxs": c["ctxs"],
                        "books_coverage_pct": c["book_minutes"] * 100 // DAY_MINUTES,
                        "trades_coverage_pct": c["trade_minutes"] * 100 // DAY_MINUTES,
                        "ctxs_coverage_pct": c["ctx_minutes"] * 100 // DAY_MINUTES,
                        "gaps": gaps["count"],
                        "gap_ms": gaps["ms"],
                    }
                )
    out.sort(key=lambda r: (r["day"], r["coin"], r["file"]))
    return out


# ---- choosing the files of a range of days -----------------------------------------------


def _named_day(p: Path) -> str | None:
    """``hl-2025-10-01.jsonl.lz4`` -> ``2025-10-01``."""
    name = p.name
    if not name.startswith("hl-") or ".jsonl" not in name:
        return None
    day = name[3 : name.index(".jsonl")]
    try:
        dt.date.fromisoformat(day)
    except ValueError:
        return None
    return day


def _header_coins(p: Path) -> list[str]:
    try:
        head = msgspec.json.decode(next(iter(iter_raw_lines(p)), b"{}"))
    except (LogError, msgspec.DecodeError):
        return []
    markets = head.get("markets") if isinstance(head, dict) else None
    return [m.get("coin", "") for m in markets or [] if isinstance(m, dict)]


def select_days(
    directory: Path,
    first: dt.date | None,
    last: dt.date | None,
    coins: Sequence[str] | None,
) -> list[Path]:
    """The files holding each UTC day of ``first..last`` (every day held when None) for
    ``coins`` (any when None), one per day, in day order."""
    if not directory.is_dir():
        raise CatalogError(f"{directory}: not a directory")
    by_day: dict[str, list[Path]] = {}
    others: list[Path] = []
    for p in sorted(directory.iterdir()):
        if not is_log(p):
            continue
        day = _named_day(p)
        if day is None:
            others.append(p)
        else:
            by_day.setdefault(day, []).append(p)
    if others:
        for e in scan(directory):
            if e.name in {p.name for p in others} and e.error is None:
                for day in e.days:
                    by_day.setdefault(day, []).append(directory / e.name)
    held = sorted(by_day)
    if first is None and last is None:
        wanted = held
    else:
        lo = first or (dt.date.fromisoformat(held[0]) if held else dt.date.today())
        hi = last or (dt.date.fromisoformat(held[-1]) if held else lo)
        if hi < lo:
            raise CatalogError(f"--to {hi} is before --from {lo}")
        wanted = [(lo + dt.timedelta(days=i)).isoformat() for i in range((hi - lo).days + 1)]
    chosen: list[Path] = []
    need = set(coins or [])
    for day in wanted:
        fits = [p for p in by_day.get(day, []) if need <= set(_header_coins(p))]
        if not fits:
            what = ",".join(coins) if coins else "any coin"
            hint = f"arena fetch --coins {what} --from {day} --to {day} --out {directory}"
            if not coins:
                hint = f"arena fetch --coins BTC --from {day} --to {day} --out {directory}"
            raise CatalogError(f"{directory}: no log of {day} for {what}; {hint} can get it")
        pick = _prefer_closed(fits)
        if pick not in chosen:
            chosen.append(pick)
    if not chosen:
        raise CatalogError(f"{directory}: no logs (*.jsonl, *.jsonl.gz, *.jsonl.lz4) in it")
    return chosen


def _prefer_closed(paths: list[Path]) -> Path:
    """A day held twice by the recorder (plain and compressed mid-close): the plain file is
    the complete one until the compressed one replaces it; otherwise the first."""
    plain = [p for p in paths if p.name.endswith(".jsonl")]
    return plain[0] if plain and len(paths) > 1 else paths[0]


def parse_day(text: str | None, what: str) -> dt.date | None:
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise CatalogError(f"{what} {text!r}: not a day; use YYYY-MM-DD (UTC)") from None


def _here_or_shipped(path: Path) -> Path:
    """``path``, or arena's shipped copy of it (said on stderr) when it is not here."""
    copy = shipped(path)
    if copy is None:
        return path
    sys.stderr.write(f"arena: {path}: not in this directory; reading arena's own: {copy}\n")
    return copy


def expand_logs(
    paths: Sequence[Path], first: str | None, last: str | None, coins: str | None
) -> list[Path]:
    """LOG arguments with each directory replaced by its day files (``--from``, ``--to``,
    ``--coins`` choose them); files stay as given. The options without a directory are an
    error: they choose days of a directory."""
    lo, hi = parse_day(first, "--from"), parse_day(last, "--to")
    wanted = [c.strip() for c in coins.split(",") if c.strip()] if coins else None
    paths = [_here_or_shipped(p) for p in paths]
    if not any(p.is_dir() for p in paths):
        if lo or hi or wanted:
            raise CatalogError("--from, --to and --coins choose the days of a directory: give DIR")
        return list(paths)
    out: list[Path] = []
    for p in paths:
        out += select_days(p, lo, hi, wanted) if p.is_dir() else [p]
    return out
