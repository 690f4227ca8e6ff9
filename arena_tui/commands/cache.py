"""``arena cache``: the day cache (``logs.daycache``): what is in it, and clearing it."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena_tui.util.errors import fail
from arena_tui.util.human import plural, utc_ms
from arena_tui.util.jsonout import dumps
from arena_tui.util.options import JsonOpt

if TYPE_CHECKING:
    from arena_tui.logs import daycache

TURN_OFF = "ARENA_CACHE=0 in the environment, or arena backtest --no-cache"

app = typer.Typer(
    help="The day cache: each recorded log a backtest has read in full, kept uncompressed "
    "and indexed so later backtests and sweeps of it skip decompressing and decoding it. "
    "It lives in $ARENA_CACHE_DIR, else the user cache directory (~/.cache/arena/days on "
    "Linux); one .day file per log content (about the log's uncompressed size), used only "
    "while the log's size and mtime are unchanged. $ARENA_CACHE_MAX_GB caps it (default "
    f"20; least recently used days go first). Turn it off with {TURN_OFF}.",
    no_args_is_help=True,
)

_AGE = re.compile(r"([0-9]{1,9})([smhdw])")
_AGE_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_age(text: str) -> int:
    """``30m``, ``12h``, ``7d``, ``2w`` -> seconds; anything else is one clear line."""
    m = _AGE.fullmatch(text.strip())
    if m is None:
        fail(
            f"--older-than {text!r}: expected a whole number and a unit s, m, h, d or w "
            "(e.g. 12h, 7d, 2w)"
        )
    return int(m.group(1)) * _AGE_S[m.group(2)]


def size_text(n: int) -> str:
    """``512 B``, ``2.6 MB``, ``1.2 GB`` (powers of 1000, as ``arena synth`` says them)."""
    if n < 1000:
        return f"{n} B"
    for power, unit in ((4, "TB"), (3, "GB"), (2, "MB"), (1, "kB")):
        if n >= 1000**power:
            return f"{n / 1000**power:.1f} {unit}"
    return f"{n} B"  # pragma: no cover


def _age_text(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 120:
        return f"{s} s ago"
    if s < 7200:
        return f"{s // 60} min ago"
    if s < 172_800:
        return f"{s // 3600} h ago"
    return f"{s // 86_400} d ago"


def _cap_doc() -> dict[str, Any]:
    from arena_tui.logs import daycache

    cap = daycache.max_bytes()
    return {
        "max_bytes": daycache.cap_bytes(),
        "max_gb_env": os.environ.get(daycache.MAX_GB_ENV),
        "max_gb_env_valid": cap is not None,
    }


def _day_doc(day: daycache.DayInfo) -> dict[str, Any]:
    from arena_tui.logs import daycache

    meta = day.meta
    doc: dict[str, Any] = {
        "file": str(day.file),
        "sha256": day.file.stem,
        "bytes": day.bytes,
        "last_used_ms": day.last_used_ns // 1_000_000,
        "damaged": meta is None,
        "sources": [{"path": e.path, "state": daycache.source_state(e)} for e in day.sources],
    }
    if meta is not None:
        doc |= {
            "source_bytes": meta.size,
            "inputs": meta.n,
            "first_t": meta.first_t,
            "last_t": meta.last_t,
            "coins": meta.coins,
            "checked": meta.checked,
            "built_ms": meta.built_ms,
        }
    return doc


def _day_lines(day: daycache.DayInfo, now: float) -> list[str]:
    from arena_tui.logs import daycache

    meta = day.meta
    used = _age_text(now - day.last_used_ns / 1e9)
    if meta is None:
        return [f"  {day.file.name}  {size_text(day.bytes)}  damaged (the next run removes it)"]
    span = f"{utc_ms(meta.first_t)} -> {utc_ms(meta.last_t)} UTC"
    out = [
        f"  {size_text(day.bytes):>9} cache  {plural(meta.n, 'input')}  {span}  "
        f"checked {' '.join(sorted(meta.checked)) or '-'}  used {used}"
    ]
    sources = day.sources or []
    for e in sources:
        state = daycache.source_state(e)
        note = "" if state == "ok" else f"  ({state} since: not used for it)"
        out.append(f"      {e.path}  {size_text(e.size)}{note}")
    if not sources:
        out.append("      (no source points at it any more)")
    return out


@app.command("info")
def info(as_json: JsonOpt = False) -> None:
    """Show where the day cache is, whether it is on, and each cached day.

    Per day: the source log(s) and their size, the cache file's size, inputs,
    first and last time (UTC), the coins whose market data was checked in full
    when it was built (a season of other coins reads the log itself), and when
    it was last used. A source marked [bold]changed[/] or [bold]missing[/] no
    longer matches: its cache is not used (and [bold]arena cache clear[/]
    removes it like any other).

    The cache is written by the first [bold]arena backtest[/] that reads a log
    cleanly to its end, and read by later ones of the same bytes. Turn it off
    with ARENA_CACHE=0 in the environment, or [bold]arena backtest --no-cache[/].

    Example: [cyan]arena cache info --json[/]
    """
    from arena_tui.logs import daycache  # here, not at the top: it brings numpy

    directory = daycache.cache_dir()
    found = daycache.days(directory)
    total = sum(d.bytes for d in found)
    enabled = daycache.cache_enabled()
    if as_json:
        doc = {
            "dir": str(directory),
            "enabled": enabled,
            **_cap_doc(),
            "bytes": total,
            "days": [_day_doc(d) for d in reversed(found)],
        }
        typer.echo(dumps(doc))
        return
    state = "on" if enabled else f"off ({daycache.CACHE_ENV}={os.environ.get(daycache.CACHE_ENV)})"
    if not found:
        typer.echo(f"day cache {directory}: empty (the cache is {state})")
        return
    cap = _cap_doc()
    bad = "" if cap["max_gb_env_valid"] else f"; {daycache.MAX_GB_ENV} is not a number"
    out = [f"day cache {directory} (the cache is {state}; cap {size_text(cap['max_bytes'])}{bad})"]
    now = time.time()
    for day in reversed(found):  # most recently used first
        out += _day_lines(day, now)
    out.append(f"{plural(len(found), 'cached day')}, {size_text(total)}")
    typer.echo("\n".join(out))


@app.command("clear")
def clear(
    sources: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="SOURCE",
            help="Only the cache of these logs (as given to arena backtest). Default: all.",
            show_default=False,
        ),
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option(
            "--older-than",
            metavar="AGE",
            help="Only days not used for AGE: a whole number and s, m, h, d or w (7d, 12h).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove cached days: all of them, or those of SOURCE... and/or unused for AGE.

    Only the cache goes; the logs themselves are never touched. A later backtest
    of a cleared log reads the log (and caches it again). With no SOURCE and no
    --older-than, also removes index entries and leftover temp files of writers
    that died (unchanged for 10 minutes).

    Examples: [cyan]arena cache clear --older-than 7d[/]
              [cyan]arena cache clear recordings/hl-2026-12-01.jsonl.gz --dry-run[/]
    """
    from arena_tui.logs import daycache  # here, not at the top: it brings numpy

    age_s = None if older_than is None else parse_age(older_than)
    directory = daycache.cache_dir()
    found = daycache.days(directory)
    chosen = found
    if sources:
        want: set[str] = set()
        missing = []
        for src in sources:
            entry = daycache.entry_for(directory, src)
            if entry is None:
                missing.append(str(src))
            else:
                want.add(entry.sha256)
        if missing:
            fail(f"not in the day cache: {', '.join(missing)} (arena cache info lists what is)")
        chosen = [d for d in chosen if d.file.stem in want]
    if age_s is not None:
        cutoff_ns = time.time_ns() - age_s * 1_000_000_000
        chosen = [d for d in chosen if d.last_used_ns < cutoff_ns]
    everything = not sources and age_s is None
    temps = daycache.temp_files(directory, 600) if everything else []
    freed = sum(d.bytes for d in chosen)
    if not dry_run:
        for day in chosen:
            daycache.remove(day, directory)
        for file in temps:
            file.unlink(missing_ok=True)
        if everything:
            for file, _entry in daycache.index_entries(directory):
                file.unlink(missing_ok=True)
    if as_json:
        doc = {
            "dir": str(directory),
            "dry_run": dry_run,
            "removed": [_day_doc(d) for d in chosen],
            "bytes": freed,
            "temp_files": [str(p) for p in temps],
            "left": len(found) - len(chosen),
        }
        typer.echo(dumps(doc))
        return
    verb = "would remove" if dry_run else "removed"
    if not chosen and not temps:
        if not found:
            typer.echo(f"nothing to remove: the day cache {directory} is empty")
        elif age_s is not None:
            typer.echo(
                f"nothing to remove: {plural(len(found), 'cached day')} in {directory}, "
                f"all used within {older_than}"
            )
        else:
            typer.echo(f"nothing to remove: no cached day of those logs in {directory}")
        return
    out = [
        f"{verb} {plural(len(chosen), 'cached day')}, {size_text(freed)} "
        f"from {directory}; {plural(len(found) - len(chosen), 'day')} left"
    ]
    for day in chosen:
        names = ", ".join(e.path for e in day.sources) or day.file.name
        out.append(f"  {size_text(day.bytes):>9}  {names}")
    if temps:
        out.append(f"  and {plural(len(temps), 'leftover temp file')}")
    typer.echo("\n".join(out))
