"""What the day cache holds, and removing it: listing, pruning to the size cap.

Why this module exists: ``arena cache info`` and ``arena cache clear`` show and remove
cached days, and every commit prunes the cache to its cap (least recently used first);
this reads the cache directory as a whole. The format is ``logs.dayformat``'s.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from arena_tui.logs.dayformat import (
    CACHE_VERSION,
    MAGIC,
    META_DEC,
    PRE,
    STALE_PART_S,
    DayMeta,
    IndexEntry,
    cache_dir,
    cap_bytes,
    index_file,
    read_entry,
    resolved,
)


@dataclass
class DayInfo:
    """One ``.day`` file as ``arena cache info`` shows it (``meta`` None: damaged)."""

    file: Path
    bytes: int
    last_used_ns: int
    meta: DayMeta | None
    sources: list[IndexEntry]


def days(directory: Path | None = None) -> list[DayInfo]:
    """Every cached day in ``directory`` (default :func:`cache_dir`), least recently used
    first, with the index entries that point at it."""
    directory = cache_dir() if directory is None else directory
    by_sha: dict[str, list[IndexEntry]] = {}
    for _file, entry in index_entries(directory):
        by_sha.setdefault(entry.sha256, []).append(entry)
    out = []
    for file in _day_files(directory):
        try:
            st = file.stat()
        except OSError:
            continue
        out.append(
            DayInfo(file, st.st_size, st.st_mtime_ns, _peek(file), by_sha.get(file.stem, []))
        )
    out.sort(key=lambda d: (d.last_used_ns, d.file.name))
    return out


def _day_files(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.iterdir() if p.suffix == ".day")
    except OSError:
        return []


def index_entries(directory: Path) -> Iterator[tuple[Path, IndexEntry]]:
    try:
        files = sorted((directory / "index").glob("*.json"))
    except OSError:
        return
    for file in files:
        entry = read_entry(file)
        if entry is not None:
            yield file, entry


def _peek(file: Path) -> DayMeta | None:
    """A ``.day`` file's header without mapping or checking its sections' checksums."""
    try:
        with file.open("rb") as f:
            pre = f.read(PRE.size)
            if len(pre) < PRE.size:
                return None
            magic, version, _, head_off, head_len = PRE.unpack(pre)
            if magic != MAGIC or version != CACHE_VERSION or head_len > 1 << 26:
                return None
            f.seek(head_off)
            return META_DEC.decode(f.read(head_len))
    except (OSError, ValueError, msgspec.DecodeError):
        return None


def remove(day: DayInfo, directory: Path) -> None:
    """Delete a cached day and the index entries that point at it."""
    with contextlib.suppress(FileNotFoundError):
        day.file.unlink()
    for file, entry in index_entries(directory):
        if entry.sha256 == day.file.stem:
            with contextlib.suppress(FileNotFoundError):
                file.unlink()


def temp_files(directory: Path, older_than_s: float = 0) -> list[Path]:
    """Writers' temp files (``.*.part``) not written to for ``older_than_s`` seconds."""
    now = time.time()
    out = []
    for folder in (directory, directory / "index"):
        try:
            found = list(folder.glob(".*.part"))
        except OSError:
            continue
        for file in found:
            with contextlib.suppress(OSError):
                if now - file.stat().st_mtime >= older_than_s:
                    out.append(file)
    return out


def prune(directory: Path, keep: Path | None = None) -> None:
    """Keep the cache under the size cap: delete least recently used days (never ``keep``),
    index entries whose day is gone, and crashed writers' temp files."""
    for file in temp_files(directory, STALE_PART_S):
        with contextlib.suppress(OSError):
            file.unlink()
    present = {p.stem for p in _day_files(directory)}
    cap = cap_bytes()
    all_days = days(directory)
    total = sum(d.bytes for d in all_days)
    for day in all_days:
        if total <= cap:
            break
        if keep is not None and day.file == keep:
            continue
        remove(day, directory)
        present.discard(day.file.stem)
        total -= day.bytes
    for file, entry in index_entries(directory):
        if entry.sha256 not in present:
            with contextlib.suppress(OSError):
                file.unlink()


def entry_for(directory: Path, source: str | os.PathLike[str]) -> IndexEntry | None:
    """The index entry of ``source`` (by its resolved path), whether or not it still holds."""
    return read_entry(index_file(directory, resolved(source)))


def source_state(entry: IndexEntry) -> str:
    """``ok`` (the source is as cached), ``changed`` (its size or mtime differ: the cache
    is not used for it) or ``missing``."""
    try:
        st = os.stat(entry.path)
    except OSError:
        return "missing"
    return "ok" if (st.st_size, st.st_mtime_ns) == (entry.size, entry.mtime_ns) else "changed"


def write_entry(directory: Path, entry: IndexEntry) -> None:
    """Write an index entry atomically (temp file, rename)."""
    file = index_file(directory, entry.path)
    file.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".part", dir=file.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(msgspec.json.encode(entry))
        os.replace(tmp, file)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
