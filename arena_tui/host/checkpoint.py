"""Checkpoints: the host's state at a point of its log, so a restart replays only the rest.

Why this module exists: a restart used to replay the whole log, which for a four-week
season is minutes. Every ``--checkpoint-every`` of log time the host writes, beside the
log, everything a full replay of the log so far would have built: the engine's snapshot
(``Engine.snapshot``), the views the API answers from (score rows, marks, fills, notes,
latest books) and each entry's recent request times (the rate limit). A checkpoint is
named by the log offset it stands for and the SHA-256 of the log's first OFFSET bytes; a
restart takes the newest whose prefix hash is the log's on disk and replays only the bytes
after it. Anything else (torn, garbled, another season or rules, another format, a prefix
that differs) is ignored with one line and removed; then the whole log is replayed, as
before. A checkpoint is never the truth: ``arena replay`` and ``arena verify`` read only the
log.

Checking a checkpoint's prefix is one pass over the log (about 1.3 GB/s of CPU here), so
a restart that waited for it would grow with the season. ``--checkpoint-check quick`` (the
default) checks at the start only what catches a log replaced, restored or cut: its size,
and the SHA-256 of its first and last ``prefix.WINDOW`` bytes before the offset (kept in the
checkpoint); the whole prefix is hashed behind, in a thread (``prefix.Behind``), while the
host takes orders. If it differs, the host stops with one line and removes this log's
checkpoints, so the next start replays the whole log; no checkpoint is written until the
check is done, so an unchecked state never lands in one. ``full`` checks the whole prefix
before the first order, as a start without checkpoints replays the whole log.

File: ``MAGIC``, then frames (a 4-byte big-endian length and a msgpack body each, the first
a ``Meta``), then the SHA-256 of everything before it (32 bytes). msgpack holds data only,
never code. Written to a temporary name, fsynced, renamed, the directory fsynced.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import msgspec

from arena_tui.host.prefix import Behind, PrefixHashes, Unusable, ends
from arena_tui.host.views import Marks, Views
from arena_tui.logs.dayfiles import fsync_dir
from engine import Engine, Season
from engine import events as ev
from engine.inputs import BookData

FORMAT = 2  # 2: the head and tail hashes of the quick check
MAGIC = b"arena-checkpoint\n"
KEEP = 3  # the newest checkpoints kept; older ones are removed after each write
CHUNK_ITEMS = 1024  # fills or notes per frame: the loop runs other tasks between frames
# bytes written between two flushes to disk of a checkpoint being written: one fsync of the
# whole file at the end held the log's own fsync (the order path's) behind it, 35-44 ms for
# 127 MB on this machine's disk; flushed every 2 MB, at most 9-12 ms
SYNC_EVERY = 2 << 20
_SYNC = getattr(os, "fdatasync", os.fsync)  # (the data is what matters: not on macOS)
CHECKS = ("quick", "full")
_LEN = struct.Struct(">I")


class Meta(msgspec.Struct, tag="meta", tag_field="f"):
    format: int
    season: str
    rules_sha256: str
    offset: int  # the log's first ``offset`` bytes: its header and ``inputs`` whole lines
    log_sha256: str
    inputs: int
    last_t: int | None
    head_sha256: str  # of the log's first min(offset, WINDOW) bytes
    tail_sha256: str  # of its last min(offset, WINDOW) bytes before offset
    byteorder: str = sys.byteorder  # of the marks' int64 columns


class EngineFrame(msgspec.Struct, tag="engine", tag_field="f"):
    snap: dict[str, Any]


class SessionFrame(msgspec.Struct, tag="session", tag_field="f"):
    requests: list[tuple[str, list[int]]]  # each entry's latest order and cancel times


class RowsFrame(msgspec.Struct, tag="rows", tag_field="f"):
    rows: list[ev.ScoreRow]  # in the views' order
    latest: list[tuple[str, int]]  # (entry, day) of each entry's latest row, in order
    books: list[tuple[int, str, int, bytes]]  # (t, coin, time, levels), in order


class MarksFrame(msgspec.Struct, tag="marks", tag_field="f"):
    entry: str
    columns: list[bytes]  # t, equity, peak, drawdown, mdd (int64, Meta.byteorder), active


class FillsFrame(msgspec.Struct, tag="fills", tag_field="f"):
    entry: str
    fills: list[ev.Fill]


class NotesFrame(msgspec.Struct, tag="notes", tag_field="f"):
    entries: list[str]  # three columns: the note of (entries[i], oids[i]) is notes[i]
    oids: list[int]
    notes: list[str]


Frame = Meta | EngineFrame | SessionFrame | RowsFrame | MarksFrame | FillsFrame | NotesFrame
_ENCODE = msgspec.msgpack.Encoder().encode
_FRAME = msgspec.msgpack.Decoder(Frame)
_META = msgspec.msgpack.Decoder(Meta)


@dataclass
class Capture:
    """The host's state at one point of its log, copied on the loop (cheap: append-only
    lists are kept with their length, and encoded later a frame at a time)."""

    meta: Meta
    engine: dict[str, Any]
    requests: list[tuple[str, list[int]]]
    rows: RowsFrame
    marks: list[tuple[str, Marks, int]]
    fills: list[tuple[str, list[ev.Fill], int]]
    notes: dict[tuple[str, int], str]


@dataclass
class Restored:
    """A checkpoint read back: the state at ``meta.offset``, and the log's hash there."""

    meta: Meta
    engine: Engine
    views: Views
    requests: dict[str, list[int]]
    hasher: Any = field(repr=False)


def capture(meta: Meta, engine: Engine, views: Views, requests: dict[str, Any]) -> Capture:
    notes = views.notes.by_order.copy()  # (one object: no work for the garbage collector)
    rows = RowsFrame(
        rows=list(views.rows.values()),
        latest=[(entry, row.day) for entry, row in views.latest.items()],
        books=[(t, coin, data.time, bytes(data.levels)) for coin, (t, data) in views.books.items()],
    )
    return Capture(
        meta=meta,
        engine=engine.snapshot(),
        requests=[(entry, list(times)) for entry, times in requests.items()],
        rows=rows,
        marks=[(entry, m, len(m)) for entry, m in views.marks.items()],
        fills=[(entry, fills, len(fills)) for entry, fills in views.fills.items()],
        notes=notes,
    )


def frames(cap: Capture) -> Iterator[bytes]:
    """The capture's frames, encoded one at a time (length-prefixed)."""
    bodies: Iterator[Any] = _frame_objects(cap)
    for obj in bodies:
        body = _ENCODE(obj)
        yield _LEN.pack(len(body)) + body


def _frame_objects(cap: Capture) -> Iterator[Any]:
    yield cap.meta
    yield EngineFrame(cap.engine)
    yield SessionFrame(cap.requests)
    yield cap.rows
    for entry, m, n in cap.marks:
        cols = [bytes(col[:n]) for col in (m.t, m.equity, m.peak, m.drawdown, m.mdd)]
        yield MarksFrame(entry, [*cols, bytes(m.active[:n])])
    for entry, fills, n in cap.fills:
        for i in range(0, n, CHUNK_ITEMS):
            yield FillsFrame(entry, fills[i : min(i + CHUNK_ITEMS, n)])
    keys, notes = iter(cap.notes), iter(cap.notes.values())
    for _ in range(0, len(cap.notes), CHUNK_ITEMS):
        frame = NotesFrame([], [], list(islice(notes, CHUNK_ITEMS)))
        for entry, oid in islice(keys, CHUNK_ITEMS):
            frame.entries.append(entry)
            frame.oids.append(oid)
        yield frame


def restore_views(views: Views, engine: Engine, found: list[Frame]) -> dict[str, list[int]]:
    """Fill a fresh ``views`` from decoded frames; return the session's request times."""
    requests: dict[str, list[int]] = {}
    for name in engine.entries():
        acct = engine.account(name)
        assert acct is not None
        views.keys.add(name, acct.key_sha256)
    for frame in found:
        if type(frame) is SessionFrame:
            requests = dict(frame.requests)
        elif type(frame) is RowsFrame:
            views.rows = {(r.entry, r.day): r for r in frame.rows}
            views.latest = {entry: views.rows[(entry, day)] for entry, day in frame.latest}
            views.books = {
                coin: (t, BookData(coin=coin, time=time, levels=msgspec.Raw(levels)))
                for t, coin, time, levels in frame.books
            }
        elif type(frame) is MarksFrame:
            m = views.marks[frame.entry] = Marks()
            if len(frame.columns) != 6:
                raise Unusable("its marks have the wrong columns")
            cols = (m.t, m.equity, m.peak, m.drawdown, m.mdd)
            for col, raw in zip(cols, frame.columns[:5], strict=True):
                col.frombytes(raw)
            m.active = bytearray(frame.columns[5])
            if len({len(m.t), len(m.equity), len(m.mdd), len(m.active)}) != 1:
                raise Unusable("its marks' columns differ in length")
        elif type(frame) is FillsFrame:
            views.fills.setdefault(frame.entry, []).extend(frame.fills)
            views.fill_times.setdefault(frame.entry, []).extend(f.t for f in frame.fills)
        elif type(frame) is NotesFrame:
            if not len(frame.entries) == len(frame.oids) == len(frame.notes):
                raise Unusable("its notes' columns differ in length")
            by_order = views.notes.by_order
            for entry, oid, note in zip(frame.entries, frame.oids, frame.notes, strict=True):
                by_order[(entry, oid)] = note
    return requests


# ---- files ---------------------------------------------------------------------------


class Checkpoints:
    """The checkpoints of one log: where they are, which to trust, writing new ones."""

    def __init__(
        self, log: Path, every_ms: int, note: Callable[[str], None], *, check: str = "quick"
    ) -> None:
        if check not in CHECKS:
            raise ValueError(f"check: one of {', '.join(CHECKS)}")
        self.log = log
        self.every_ms = every_ms
        self.note = note
        self.check = check
        self.dir = log.parent
        self._name = re.compile(re.escape(log.name) + r"\.([0-9]{16})\.([0-9a-f]{64})\.ckpt")
        self._tmp_prefix = f".{log.name}.ckpt-tmp-"
        self.written = 0

    def path_for(self, offset: int, sha256: str) -> Path:
        return self.dir / f"{self.log.name}.{offset:016d}.{sha256}.ckpt"

    def listed(self, *, tidy: bool = True) -> list[tuple[int, str, Path]]:
        """(offset, prefix sha256, path) of every checkpoint file, newest (largest) first;
        ``tidy``: remove the temporary files of writes cut short (only the lock's holder)."""
        found = []
        for entry in os.scandir(self.dir):
            m = self._name.fullmatch(entry.name)
            if m is not None:
                found.append((int(m.group(1)), m.group(2), Path(entry.path)))
            elif tidy and entry.name.startswith(self._tmp_prefix):
                _remove(Path(entry.path))  # a write cut short (the host holds the lock)
        return sorted(found, reverse=True)

    def load_read_only(self, season: Season, upto: int) -> Restored | None:
        """For a follower of a log another process writes (``host.follower``): the newest
        checkpoint at or before byte ``upto`` whose quick check passes; nothing is removed
        or written (the host owns these files, and checks the whole prefix itself)."""
        for offset, sha, path in self.listed(tidy=False):
            if offset > upto:
                continue
            try:
                restored = self._quick(path, season, offset, sha)
            except (Unusable, OSError) as exc:  # (pruned by the host meanwhile, say)
                self.note(f"checkpoint {path.name} not used: {exc}")
                continue
            return restored
        return None

    # ---- reading -----------------------------------------------------------------------

    def load(self, season: Season) -> Restored | None:
        """The newest checkpoint that matches the log (module docstring: quick or full);
        None (said) when none."""
        found = self.listed()
        if not found:
            return None
        size = self.log.stat().st_size
        usable = []
        for offset, sha, path in found:
            if offset > size:
                self._drop(path, f"it stands for {offset} bytes, the log has {size}")
            else:
                usable.append((offset, sha, path))
        if not usable:
            return None
        if self.check == "quick":
            return self._load_quick(season, usable)
        hashing = PrefixHashes(self.log, sorted({offset for offset, _, _ in usable}))
        hashing.start()
        try:
            for offset, sha, path in usable:
                try:
                    restored = read(path, season)  # decoded while the log is hashed
                except Unusable as exc:
                    self._drop(path, str(exc))
                    continue
                try:
                    hasher = hashing.at(offset)
                except Unusable as exc:
                    self.note(f"checkpoint {path.name} ignored: {exc}")
                    continue
                if hasher.hexdigest() != sha or restored.meta.log_sha256 != sha:
                    self._drop(path, "the log's first bytes are not the ones it was made from")
                    continue
                if restored.meta.offset != offset:
                    self._drop(path, "its name and its contents disagree")
                    continue
                restored.hasher = hasher
                self.note(f"checkpoint {path.name}: starting from byte {offset:,} of the log")
                return restored
        finally:
            hashing.stop()
        return None

    def _quick(self, path: Path, season: Season, offset: int, sha: str) -> Restored:
        """The checkpoint at ``path`` (named for ``offset`` and ``sha``), read, with the quick
        check of the log's size and first and last MiB; Unusable says why not."""
        restored = read(path, season)
        meta = restored.meta
        if meta.offset != offset or meta.log_sha256 != sha:
            raise Unusable("its name and its contents disagree")
        if ends(self.log, offset) != (meta.head_sha256, meta.tail_sha256):
            raise Unusable("the log's first bytes are not the ones it was made from")
        return restored

    def _load_quick(self, season: Season, usable: list[tuple[int, str, Path]]) -> Restored | None:
        for offset, sha, path in usable:
            try:
                restored = self._quick(path, season, offset, sha)
            except Unusable as exc:
                self._drop(path, str(exc))
                continue
            except OSError as exc:
                self.note(f"checkpoint {path.name} ignored: cannot read the log: {exc}")
                continue
            restored.hasher = Behind(self.log, offset, sha, path.name)
            self.note(
                f"checkpoint {path.name}: starting from byte {offset:,} of the log (its "
                "size, first and last MiB checked; the rest of its prefix is checked behind)"
            )
            return restored
        return None

    def remove_all(self) -> None:
        """Every checkpoint of this log (its prefix was found altered)."""
        for _, _, path in self.listed():
            _remove(path)

    def _drop(self, path: Path, why: str) -> None:
        self.note(f"checkpoint {path.name} ignored and removed: {why}")
        _remove(path)

    # ---- writing -----------------------------------------------------------------------

    async def write(self, cap: Capture) -> Path:
        """Encode ``cap`` a frame at a time on the loop (other tasks run between frames),
        then write, fsync and rename it in a thread; prune older checkpoints."""
        await asyncio.to_thread(self.fill_ends, cap.meta)
        parts = []
        for part in frames(cap):
            parts.append(part)
            await asyncio.sleep(0)
        return await asyncio.to_thread(self.store, cap.meta, parts)

    def write_now(self, cap: Capture) -> Path:
        self.fill_ends(cap.meta)
        return self.store(cap.meta, list(frames(cap)))

    def fill_ends(self, meta: Meta) -> None:
        """The quick check's hashes of the log's prefix ends, into ``meta`` (before its
        frame is encoded)."""
        meta.head_sha256, meta.tail_sha256 = ends(self.log, meta.offset)

    def store(self, meta: Meta, parts: list[bytes]) -> Path:
        final = self.path_for(meta.offset, meta.log_sha256)
        tmp = self.dir / f"{self._tmp_prefix}{os.getpid()}-{threading.get_ident()}"
        digest = hashlib.sha256(MAGIC)
        with open(tmp, "wb") as f:
            f.write(MAGIC)
            unsynced = 0
            for part in parts:
                digest.update(part)
                view = memoryview(part)
                for at in range(0, len(view), SYNC_EVERY):
                    piece = view[at : at + SYNC_EVERY]
                    f.write(piece)
                    unsynced += len(piece)
                    if unsynced >= SYNC_EVERY:  # a little at a time: the log's fsync waits less
                        f.flush()
                        _SYNC(f.fileno())
                        unsynced = 0
            f.write(digest.digest())
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        fsync_dir(self.dir)
        self.written += 1
        for _, _, older in self.listed()[KEEP:]:
            _remove(older)
        return final


def read(path: Path, season: Season) -> Restored:
    """Decode and check one checkpoint file; Unusable says why it cannot be used."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Unusable(f"cannot read it: {exc}") from None
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 32:
        raise Unusable("not a checkpoint (or cut short)")
    body, digest = memoryview(data)[:-32], data[-32:]
    if hashlib.sha256(body).digest() != digest:
        raise Unusable("torn or garbled (its checksum does not match)")
    found: list[Frame] = []
    at = len(MAGIC)
    end = len(body)
    try:
        while at < end:
            (n,) = _LEN.unpack_from(body, at)
            found.append(_FRAME.decode(body[at + 4 : at + 4 + n]))
            at += 4 + n
    except (msgspec.DecodeError, struct.error) as exc:
        raise Unusable(f"cannot be decoded: {exc}") from None
    meta = found[0] if found else None
    if type(meta) is not Meta or meta.format != FORMAT:
        raise Unusable(f"of another format (this host reads format {FORMAT})")
    if meta.byteorder != sys.byteorder:
        raise Unusable(f"written on a {meta.byteorder}-endian machine")
    if meta.season != season.id or meta.rules_sha256 != season.rules_sha256:
        raise Unusable(f"of another season or rules ({meta.season}, {meta.rules_sha256[:12]})")
    engines = [f for f in found if type(f) is EngineFrame]
    if len(engines) != 1:
        raise Unusable("it holds no engine state")
    try:
        engine = Engine.restore(season, engines[0].snap)
        views = Views(engine)
        requests = restore_views(views, engine, found)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise Unusable(f"its state does not fit this season: {exc}") from None
    return Restored(meta, engine, views, requests, hasher=None)


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)
