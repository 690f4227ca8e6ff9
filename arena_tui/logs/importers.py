"""Importing Hyperliquid market data captured by others into version-1 logs.

Why this module exists: months of real market data already exist, in Hyperliquid's own
archive (``l2Book`` objects: ``{"time": "<ISO receive time>", "ver_num": 1, "raw": <message>}``
per line) and in hftbacktest's collector files (``<receive ns> <message>`` per line). Both
carry the WebSocket message verbatim with its receive time, which is what a log line is.
The importer keeps each message's bytes as they are (sliced out, never re-encoded), sets
``t`` = receive time in ms (truncated), merges several files by receive time (stable: ties
keep file order, then line order) and writes the header a recorder would: the coins found
in the data, as ``meta`` lists them.

Two streaming passes, so memory stays flat however large the input: the first checks every
line (as ``arena logs check`` would) and counts; the second merges and writes. Nothing is
written when a line is bad or a coin is unknown, and the output appears under its name only
once complete (written beside it, fsynced, then linked into place).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import heapq
import os
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import IO, Any

import msgspec

from arena_tui.logs.dayformat import cache_enabled
from arena_tui.logs.logcheck import check_and_read, check_line
from arena_tui.logs.logfile import LOG_VERSION, BadLine, LogError, iter_raw_lines
from arena_tui.logs.meta import INFO_URL, MetaError, get_markets, select
from arena_tui.logs.writer import compressed_writer
from arena_tui.util.outputs import writing
from arena_tui.util.paths import recordings_dir
from engine import Market
from engine.inputs import AssetCtx, Book, Line, Trades
from engine.units import NS_PER_MS

BATCH = 1 << 20
Record = tuple[int, int, bytes]  # (receive ns, line number, message bytes)
Progress = Callable[[int, int], None]
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|\+00:00)?")


class SourceError(LogError):
    """An input file that cannot be imported: one line naming the file and line."""


class _ArchiveLine(msgspec.Struct):
    time: str
    ver_num: int
    raw: msgspec.Raw


_ARCHIVE = msgspec.json.Decoder(_ArchiveLine)


def iso_ns(text: str) -> int:
    """``2024-01-01T12:00:01.138942031`` (UTC, with or without Z) -> ns since the epoch."""
    m = _ISO.fullmatch(text)
    if m is None:
        raise ValueError(f"not an ISO UTC time: {text!r}")
    y, mo, d, h, mi, s, frac, _ = m.groups()
    when = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=dt.UTC)
    seconds = (when - _EPOCH) // dt.timedelta(seconds=1)
    return seconds * 1_000_000_000 + int((frac or "").ljust(9, "0"))


def parse_archive(path: str, line: bytes, lineno: int) -> tuple[int, bytes]:
    try:
        rec = _ARCHIVE.decode(line)
    except msgspec.DecodeError as exc:
        raise SourceError(
            path, lineno, f'not an archive line {{"time","ver_num","raw"}}: {exc}'
        ) from None
    if rec.ver_num != 1:
        raise SourceError(path, lineno, f"ver_num {rec.ver_num}: this importer reads ver_num 1")
    try:
        ns = iso_ns(rec.time)
    except ValueError as exc:
        raise SourceError(path, lineno, f'"time": {exc}') from None
    return ns, bytes(rec.raw)


def parse_hftbacktest(path: str, line: bytes, lineno: int) -> tuple[int, bytes]:
    ns, _, msg = line.partition(b" ")
    if not ns.isdigit() or not msg.strip():
        raise SourceError(path, lineno, 'want "<receive time ns> <JSON message>"')
    return int(ns), msg.strip()


FORMATS: dict[str, Callable[[str, bytes, int], tuple[int, bytes]]] = {
    "hl-archive": parse_archive,
    "hftbacktest": parse_hftbacktest,
}


def log_line(ns: int, msg: bytes) -> bytes:
    return b'{"t":%d,"hl":%s}' % (ns // NS_PER_MS, msg)


def records(
    path: str, fmt: str, notes: list[str] | None = None, *, ahead: bool = False
) -> Iterator[Record]:
    """A source file's messages in file order. A torn final line that does not parse is
    skipped (with a note); one that does (just a missing newline) is kept. ``ahead``: the
    file is read ahead in a thread (one file read at a time, not a merge of many)."""
    parse = FORMATS[fmt]
    tails: list[bytes] = []
    lineno = 0
    lines = iter_raw_lines(path, torn=tails.append, ahead=ahead)
    for lineno, line in enumerate(lines, start=1):
        if line.strip():
            ns, msg = parse(path, line, lineno)
            yield ns, lineno, msg
    if tails:
        try:
            ns, msg = parse(path, tails[0], lineno + 1)
            check_line(log_line(ns, msg))
        except (LogError, BadLine):
            if notes is not None:
                notes.append(f"{path}:{lineno + 1}: skipped a torn final line (no newline)")
            return
        yield ns, lineno + 1, msg


def in_order(recs: Iterator[Record], held: list[int] | None = None) -> Iterator[Record]:
    """Receive times never going back: an earlier one is raised to the one before it."""
    prev = -(1 << 63)
    for ns, lineno, msg in recs:
        if ns < prev:
            if held is not None:
                held[0] += 1
            ns = prev
        prev = ns
        yield ns, lineno, msg


@dataclass
class Summary:
    fmt: str
    files: list[str]
    inputs: int = 0
    books: int = 0
    trades: int = 0
    prints: int = 0
    ctxs: int = 0
    other: int = 0  # other channels (subscriptionResponse, pong, bbo, ...): kept, ignored
    held: int = 0  # lines whose receive time went back in their file (raised to the one before)
    first_t: int | None = None
    last_t: int | None = None
    coins: dict[str, None] = field(default_factory=dict)  # in order of first appearance
    notes: list[str] = field(default_factory=list)
    markets: list[Market] = field(default_factory=list)
    out: str = ""
    cached: bool = False  # the log's day cache was kept, every coin checked, as it was written

    def to_json(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "source": self.fmt,
            "files": self.files,
            "markets": msgspec.to_builtins(self.markets),
            "inputs": self.inputs,
            "books": self.books,
            "trades": self.trades,
            "prints": self.prints,
            "ctxs": self.ctxs,
            "other": self.other,
            "first_t": self.first_t,
            "last_t": self.last_t,
            "held": self.held,
            "notes": self.notes,
        }


def _check_only(raw: bytes) -> tuple[Line, None]:
    return check_line(raw), None


def scan(
    paths: Sequence[str],
    fmt: str,
    progress: Progress | None = None,
    keep: Callable[[bytes, Line, Any], None] | None = None,
) -> Summary:
    """Pass 1: check every line of every file and count what the log will hold; ``keep``
    (one file only): each line as the log will hold it, as the reader decodes it, and what
    the check read of a book's levels (``logcheck.check_and_read``)."""
    s = Summary(fmt, list(paths))
    first = last = None
    # for a cache being written, a book's levels are read once: the check's read is kept
    check = check_and_read if keep is not None else _check_only
    for path in paths:
        held = [0]
        for ns, lineno, msg in in_order(records(path, fmt, s.notes, ahead=True), held):
            if not msg.startswith(b"{"):
                raise SourceError(path, lineno, "the message is not a JSON object")
            raw = log_line(ns, msg)
            try:
                line, read = check(raw)
            except BadLine as exc:
                raise SourceError(path, lineno, str(exc)) from None
            if keep is not None:
                keep(raw, line, read)
            hl = line.hl
            if type(hl) is Book:
                s.books += 1
                s.coins[hl.data.coin] = None
            elif type(hl) is Trades:
                s.trades += 1
                s.prints += len(hl.data)
                s.coins.update(dict.fromkeys(trade.coin for trade in hl.data))
            elif type(hl) is AssetCtx:
                s.coins[hl.data.coin] = None
                s.ctxs += 1
            else:
                s.other += 1
            s.inputs += 1
            first = ns if first is None else min(first, ns)
            last = ns if last is None else max(last, ns)
            if progress is not None and not s.inputs & 0x3FFF:
                progress(s.inputs, ns // NS_PER_MS)
        s.held += held[0]
    if first is None or last is None:
        raise SourceError(paths[0] if len(paths) == 1 else ", ".join(paths), None, "no messages")
    s.first_t, s.last_t = first // NS_PER_MS, last // NS_PER_MS
    return s


def default_out(s: Summary) -> Path:
    """``<data dir>/recordings/<source>-<coins>-<first minute, UTC>.jsonl.lz4``: beside what
    ``arena record`` and ``arena synth`` write, never into a checkout's ``recordings/``.
    LZ4 (fast mode, content checksum on): gzip's compression was 41% of an import."""
    coins = [re.sub(r"[^A-Za-z0-9]", "_", c) for c in s.coins]
    name = "-".join(coins[:4]) + (f"-and-{len(coins) - 4}-more" if len(coins) > 4 else "")
    assert s.first_t is not None
    stamp = (_EPOCH + dt.timedelta(milliseconds=s.first_t)).strftime("%Y%m%dT%H%MZ")
    return recordings_dir() / f"{s.fmt}-{name}-{stamp}.jsonl.lz4"


def header_line(s: Summary) -> bytes:
    """The log's first line: the coins' markets and the inputs' span, known from pass 1 (so
    no reader needs a second pass for them)."""
    header = {"arena_log": LOG_VERSION, "recording": "hyperliquid", "source": s.fmt}
    header["markets"] = msgspec.to_builtins(s.markets)
    header.update(first_t=s.first_t, last_t=s.last_t)
    return msgspec.json.encode(header)


def write_log(
    s: Summary,
    out: Path,
    progress: Progress | None = None,
    body: tuple[int, Iterator[bytes]] | None = None,
) -> str:
    """Pass 2: merge the files by receive time into ``out`` (which must not exist); or,
    given ``body`` (how many lines, and their bytes as pass 1 made them: one file's, kept
    by its day cache's writer), write those after the header without reading the sources
    again, and return the SHA-256 of the log's uncompressed bytes (for its day cache; ""
    when merged: that log's cache is kept by reading it)."""
    _refuse_existing(out)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.partial")
    with writing(out):  # the inputs' read errors are LogErrors already
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(tmp, "xb") as raw:
                f = compressed_writer(raw, out.name)
                head = header_line(s) + b"\n"
                f.write(head)
                if body is None:
                    n = _write_body(f, _merged(s), progress)
                else:
                    n, pieces = body
                    text = hashlib.sha256(head)
                    # each piece hashed in a thread while it is compressed here: both let go
                    # of the interpreter's lock, so the hash costs no time on two cores
                    with ThreadPoolExecutor(1, "arena-log-hash") as hasher:
                        for piece in pieces:
                            hashed = hasher.submit(text.update, piece)
                            f.write(piece)
                            hashed.result()
                if f is not raw:
                    f.close()  # ends the gzip member / LZ4 frame; leaves raw open
                raw.flush()
                os.fsync(raw.fileno())
            if n != s.inputs:
                raise LogError(out, None, "the input files changed while importing; not written")
            _link_into_place(tmp, out)
        finally:
            tmp.unlink(missing_ok=True)
    s.out = str(out)
    return "" if body is None else text.hexdigest()


def _merged(s: Summary) -> Iterator[Record]:
    """The files' records merged by receive time (each file's never going back)."""
    return heapq.merge(*(in_order(records(p, s.fmt)) for p in s.files), key=itemgetter(0))


def _write_body(f: IO[bytes], merged: Iterator[Record], progress: Progress | None) -> int:
    batch: list[bytes] = []
    size = n = 0
    for ns, _, msg in merged:
        line = log_line(ns, msg)
        batch.append(line)
        size += len(line) + 1
        n += 1
        if size >= BATCH:
            f.write(b"\n".join(batch) + b"\n")
            batch, size = [], 0
            if progress is not None:
                progress(n, ns // NS_PER_MS)
    if batch:
        f.write(b"\n".join(batch) + b"\n")
    return n


def _link_into_place(tmp: Path, out: Path) -> None:
    try:
        os.link(tmp, out)  # fails if out appeared meanwhile: never overwrites
    except FileExistsError:
        raise LogError(out, None, "already exists; refusing to overwrite it") from None
    except OSError:  # a file system without hard links
        if out.exists():
            raise LogError(out, None, "already exists; refusing to overwrite it") from None
        os.replace(tmp, out)


def import_files(
    paths: Sequence[str],
    fmt: str,
    *,
    out: Path | None = None,
    meta_file: str | Path | None = None,
    info_url: str = INFO_URL,
    progress: Progress | None = None,
) -> Summary:
    """Check ``paths``, look their coins up in ``meta``, and write them as one log.

    Meta is read (or fetched) first, so an unreachable or malformed one fails at once.

    One file's lines are the log's in the same order, so the day cache (``logs.daycache``)
    is built from them as pass 1 checks them, the log's body is written from the lines it
    kept (``DayCacheWriter.written``: the source is not read twice), and the cache is kept
    once the log is in place. Several files are merged by time in a second pass: their
    log's cache is kept by reading it (``logs.daykeep``)."""
    if out is not None:
        _refuse_existing(out)
    # meta first: an unreachable or bad meta is said before the files are read, not after
    universe = get_markets(meta_file, info_url)
    writer = None
    if len(paths) == 1 and cache_enabled():
        from arena_tui.logs.daycache import has_day
        from arena_tui.logs.daywrite import DayCacheWriter  # brings numpy: here, not on top

        writer = DayCacheWriter("", b"", written=False)
    try:
        s = scan(paths, fmt, progress, writer.add if writer is not None and writer.active else None)
        if not s.coins:
            raise SourceError(", ".join(paths), None, "no market data (l2Book, trades) to import")
        try:
            chosen = select(universe, list(s.coins))
        except MetaError as exc:
            raise MetaError(f"the data's coins: {exc}; is meta from the data's time?") from None
        s.markets = sorted(chosen, key=lambda m: m.asset)
        target = default_out(s) if out is None else out
        _refuse_existing(target)
        # one file: its lines as pass 1 checked them, from the day cache being written
        # (the log is then exactly what was checked, and the source is not read again)
        body = writer.written(BATCH) if writer is not None else None
        text_sha256 = write_log(s, target, progress, body)
    except BaseException:
        if writer is not None:
            writer.discard()
        raise
    if writer is not None and writer.active:
        writer.bind(s.out, header_line(s))
        writer.text_sha256 = text_sha256
        writer.commit(reopen=False)
        s.cached = has_day(s.out, s.coins)  # (its header read: not opened whole again)
    return s


def _refuse_existing(out: Path) -> None:
    if out.exists():
        raise LogError(out, None, "already exists; refusing to overwrite it (choose another --out)")
