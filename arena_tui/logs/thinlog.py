"""Thin run logs: a backtest's own inputs and where its market data is, not the data itself.

Why this module exists: a backtest's full run log copies every market line of its sources
(194 MB for a 24 h, 3-coin day) although those lines are already on disk. A thin run log
holds the full log's header, the sources (name, path, size, SHA-256) and the run's own
inputs (registrations, orders, cancels), each with the number of source inputs merged
before it; :class:`ThinReader` finds the sources, checks them and merges them back into
exactly the full log's lines, hashing those bytes as it goes, so ``log_sha256``, the
fills and the ranking of both forms of one run are the same. docs/log-format.md ("Thin
run logs") is the format.

Why one module: the writer and the reader are the two halves of one format (the line
prefixes, the end line, the merge order); apart, each would have to restate the other.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import msgspec

from arena_tui.logs.logerror import no_header
from arena_tui.logs.logfile import (
    CHUNK,
    BadLine,
    LogError,
    LogReader,
    decode_line,
    first_line,
    iter_raw_lines,
    line_t,
    open_binary,
    parse_header,
)
from arena_tui.util.hashbehind import HashBehind
from engine.inputs import Header, Line

THIN = b'{"arena_run":'  # how line 1 of a thin run log starts
THIN_VERSION = 1
_ENC = msgspec.json.Encoder()


class Source(msgspec.Struct):
    """One source log as the end line records it."""

    name: str
    path: str
    size: int | None = None
    sha256: str | None = None
    inputs: int = 0  # how many of its inputs the run merged
    first_t: int | None = None  # the first and last of them
    last_t: int | None = None


class _Head(msgspec.Struct):
    arena_run: int
    header: msgspec.Raw
    sources: list[Source]


class _EndBody(msgspec.Struct):
    inputs: int
    sources: list[Source]


class _End(msgspec.Struct):
    end: _EndBody


class _At(msgspec.Struct):
    at: int


_HEAD = msgspec.json.Decoder(_Head)
_END = msgspec.json.Decoder(_End)
_AT = msgspec.json.Decoder(_At)


def is_thin(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a thin run log (a file whose line 1 says ``arena_run``; one
    compressed afterwards, ``run.jsonl.gz``, is read as the plain one)."""
    try:
        with open_binary(path) as f:
            return f.read(len(THIN)) == THIN
    except (EOFError, OSError, RuntimeError, zlib.error):
        return False  # unreadable: the reader says why


def read_any_header(path: str | os.PathLike[str]) -> Header:
    """Line 1 of a log checked as a header; for a thin run log, the full log's header."""
    raw = first_line(path)  # a file cut inside line 1 is one error, thin or not
    if is_thin(path):
        return parse_header(path, bytes(_head(path, raw).header))
    return parse_header(path, raw)


def _head(path: str | os.PathLike[str], raw: bytes) -> _Head:
    try:
        head = _HEAD.decode(raw)
    except msgspec.DecodeError as exc:
        raise LogError(path, 1, f"bad thin run log header: {exc}") from None
    if head.arena_run != THIN_VERSION:
        raise LogError(path, 1, f"unsupported thin run log version {head.arena_run} (this reads 1)")
    return head


# ---- writing ----------------------------------------------------------------------------


class _Tap:
    """A source file's raw bytes as its reader reads them (under a decompressor): each byte
    is counted and hashed once, so the backtest still reads every source once."""

    def __init__(self, path: str) -> None:
        self.f = open(path, "rb")  # noqa: SIM115 - closed by ThinRunLog.close
        self.sha = hashlib.sha256()
        self.size = 0

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.sha.update(data)
        self.size += len(data)
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:  # the reader is done with it; the rest is hashed at the end
        pass

    def __enter__(self) -> _Tap:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def finish(self) -> None:
        """Hash what the reader did not read (a run that stopped early), then close."""
        while self.read(CHUNK):
            pass
        self.f.close()


class _Known:
    """A source read from the day cache: its size and hash as the cache recorded them."""

    def __init__(self, size: int, sha256: str) -> None:
        self.size = size
        self.sha = _Digest(sha256)

    def finish(self) -> None:
        pass


class _Digest:
    def __init__(self, hexdigest: str) -> None:
        self._hex = hexdigest

    def hexdigest(self) -> str:
        return self._hex


class ThinRunLog:
    """A backtest's thin run log; the same calls as ``runlog.RunLog`` plus ``reading``.

    ``write`` takes a market line (not written: counted and hashed as the full log's
    line), ``own`` a strategy's input (written at once with the count of market lines
    before it). ``sha`` is the hash of the equivalent full log.
    """

    gathers = True  # its market lines are counted and hashed
    pending: Callable[[], None] | None = None  # as ``runlog.RunLog``'s

    BATCH = 4096

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self.sha = HashBehind()
        self.inputs = 0
        self._head = _ENC.encode({"arena_log": 1, **header})
        self._lines: list[bytes] = [self._head]
        self._sources: list[Source] = []
        self._taps: list[_Tap | _Known] = []
        self._first = False  # the next market line is its source's first
        self._last: bytes | int = b""  # the last market line written, or its t
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f: IO[bytes] = path.open("wb")
        self._closed = False

    def reading(self, paths: Sequence[str]) -> Any:
        """Line 1, naming ``paths``; the opener a ``LogReader`` reads them through."""
        self._sources = [Source(Path(p).name, str(Path(p).resolve())) for p in paths]
        head = _ENC.encode([{"name": s.name, "path": s.path} for s in self._sources])
        self._f.write(b'{"arena_run":1,"header":' + self._head + b',"sources":' + head + b"}\n")
        return self._open

    def _open(self, path: str) -> IO[bytes]:
        self._done_source()
        tap = _Tap(path)
        self._taps.append(tap)
        self._first = True
        return tap  # type: ignore[return-value]  # (the reader decompresses what it reads)

    def known(self, path: str, size: int, sha256: str) -> None:
        """The next source is read from the day cache, not through ``reading``'s opener:
        its size and SHA-256 on disk are already known (``logs.daycache``)."""
        self._done_source()
        self._taps.append(_Known(size, sha256))
        self._first = True

    def _done_source(self) -> None:
        """The source being read is done: its count and last input time."""
        if not self._taps:
            return
        src = self._sources[len(self._taps) - 1]
        src.inputs = self.inputs - sum(s.inputs for s in self._sources[: len(self._taps) - 1])
        if src.inputs:
            last = self._last
            src.last_t = last if isinstance(last, int) else line_t(last)

    def write(self, raw: bytes) -> None:
        """A market line: only counted and hashed."""
        if self._first:
            self._first = False
            self._sources[len(self._taps) - 1].first_t = line_t(raw)
        self._last = raw
        self.inputs += 1
        lines = self._lines
        lines.append(raw)
        if len(lines) >= self.BATCH:
            self._drain()

    def lines(self, span: memoryview, n: int, first_t: int, last_t: int) -> None:
        """``n`` market lines at once (``runlog.RunLog.lines``): counted and hashed."""
        if self._first:
            self._first = False
            self._sources[len(self._taps) - 1].first_t = first_t
        self._last = last_t
        self.inputs += n
        self._drain()
        self.sha.update(span)

    def own(self, raw: bytes) -> None:
        """A strategy's input: written now, after the count of market lines before it."""
        if self.pending is not None:
            self.pending()
        self._f.write(b'{"at":%d,' % self.inputs + raw[1:] + b"\n")
        self._lines.append(raw)

    def _drain(self) -> None:
        if not self._lines:
            return
        self._lines.append(b"")
        self.sha.update(b"\n".join(self._lines))
        self._lines = []

    def close(self) -> None:
        """Hash the rest of every source and write the end line; fsynced."""
        if self._closed:
            return
        self._closed = True
        if self.pending is not None:
            self.pending()
        if self._lines:
            self._drain()
        self._done_source()
        for i, src in enumerate(self._sources):
            try:
                if i < len(self._taps):
                    tap = self._taps[i]
                    tap.finish()
                    src.size, src.sha256 = tap.size, tap.sha.hexdigest()
                else:
                    src.size, src.sha256 = file_sha256(src.path)
            except OSError:
                pass  # no size or hash: a replay refuses it
        end = {"end": {"inputs": self.inputs, "sources": self._sources}}
        self._f.write(_ENC.encode(end) + b"\n")
        self._f.flush()
        os.fsync(self._f.fileno())
        self._f.close()


def file_sha256(path: str | os.PathLike[str]) -> tuple[int, str]:
    """A file's size and the SHA-256 of its bytes on disk."""
    sha = hashlib.sha256()
    size = 0
    with open(path, "rb") as f:
        while data := f.read(CHUNK):
            sha.update(data)
            size += len(data)
    return size, sha.hexdigest()


# ---- reading ----------------------------------------------------------------------------


class _Own(msgspec.Struct):
    at: int
    raw: bytes  # the full log's line
    line: Line
    lineno: int  # in the thin log


class ThinRun:
    """A thin run log, read and checked; its sources found (``find_sources``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        head: _Head | None = None
        end: _EndBody | None = None
        own: list[_Own] = []
        lineno = 0
        cut: list[bytes] = []
        for lineno, raw in enumerate(iter_raw_lines(self.path, torn=cut.append), start=1):
            if lineno == 1:
                head = _head(self.path, raw)
                self.header = bytes(head.header)
                parse_header(self.path, self.header)
                continue
            if end is not None:
                raise LogError(self.path, lineno, "a line after the end line")
            if raw.startswith(b'{"end":'):
                try:
                    end = _END.decode(raw).end
                except msgspec.DecodeError as exc:
                    raise LogError(self.path, lineno, f"bad end line: {exc}") from None
                continue
            own.append(self._own(raw, lineno, own[-1].at if own else 0))
        if head is None:
            raise no_header(self.path, len(cut[0]) if cut else 0)
        if end is None:
            raise LogError(
                self.path,
                None,
                "a thin run log with no end line (the backtest did not finish writing it: "
                "killed?): its sources are not recorded; run the backtest again",
            )
        if own and own[-1].at > end.inputs:
            raise LogError(self.path, own[-1].lineno, f'"at" is past the run\'s {end.inputs}')
        self.own = own
        self.inputs = end.inputs
        self.sources = end.sources

    def _own(self, raw: bytes, lineno: int, prev_at: int) -> _Own:
        try:
            at = _AT.decode(raw).at
        except msgspec.DecodeError as exc:
            raise LogError(
                self.path, lineno, f'bad own input (want {{"at":N,...}}): {exc}'
            ) from None
        comma = raw.find(b",")
        if not raw.startswith(b'{"at":%d,' % at) or at < prev_at:
            raise LogError(self.path, lineno, '"at" must come first and never decrease')
        full = b"{" + raw[comma + 1 :]
        try:
            line = decode_line(full)
        except BadLine as exc:
            raise LogError(self.path, lineno, str(exc)) from None
        return _Own(at, full, line, lineno)

    def find_sources(self, data: str | os.PathLike[str] | None = None) -> list[str]:
        """Each source's file: beside the run log, at its recorded path, or under ``data``
        (any file there with its size and SHA-256); checked by size and SHA-256."""
        return [self._find(s, None if data is None else Path(data)) for s in self.sources]

    def _find(self, src: Source, data: Path | None) -> str:
        if src.size is None or src.sha256 is None:
            raise LogError(self.path, None, f"source {src.name}: no size or SHA-256 recorded")
        here = Path(self.path).parent / src.name
        places = [here, Path(src.path)] + ([data / src.name] if data is not None else [])
        other: tuple[Path, str] | None = None
        for place in dict.fromkeys(places):
            if not place.is_file():
                continue
            sha = file_sha256(place)[1] if place.stat().st_size == src.size else ""
            if sha == src.sha256:
                return str(place)
            if other is None:
                got = f"SHA-256 {sha}" if sha else f"{place.stat().st_size} bytes"
                want = f"SHA-256 {src.sha256}" if sha else f"{src.size} bytes"
                other = (place, f"{got}, the run log recorded {want}")
        if data is not None and data.is_dir():
            for place in sorted(data.rglob("*")):
                same = place.is_file() and place.stat().st_size == src.size
                if same and file_sha256(place)[1] == src.sha256:
                    return str(place)
        if other is not None:
            raise LogError(
                self.path,
                None,
                f"source {src.name}: {other[0]} has {other[1]}: not the file the backtest "
                "read (pass --data DIR holding the original)",
            )
        where = f"beside the run log ({here}), at its recorded path ({src.path})"
        if data is not None:
            where += f" or under {data}"
        raise LogError(
            self.path,
            None,
            f"source {src.name} (SHA-256 {src.sha256}, {src.size} bytes) not found {where}: "
            "pass --data DIR, a directory holding it",
        )

    def raw_lines(self, data: str | os.PathLike[str] | None = None) -> Iterator[bytes]:
        """The full log's lines (header first), merged from the sources; for checkers."""
        yield self.header
        own, total = self.own, self.inputs
        k, n = 0, 0
        for path in self.find_sources(data):
            for i, raw in enumerate(iter_raw_lines(path)):
                if i == 0:
                    continue
                while k < len(own) and own[k].at == n:
                    yield own[k].raw
                    k += 1
                if n == total:
                    break
                yield raw
                n += 1
            if n == total:
                break
        if n < total:
            raise LogError(self.path, None, f"the sources hold {n} inputs, the run merged {total}")
        yield from (o.raw for o in own[k:])


class ThinReader:
    """A thin run log merged with its sources: the same use as ``LogReader`` (iterate the
    lines; ``raw``, ``error``, ``sha256``, ``inputs``), giving the full log's lines."""

    BATCH = 4096

    def __init__(
        self,
        path: str | os.PathLike[str],
        coins: Sequence[str] | None = None,
        data: str | os.PathLike[str] | None = None,
    ) -> None:
        self.run = ThinRun(path)
        self.source = LogReader(self.run.find_sources(data), coins, hashed=False)
        self.raw = b""
        self.inputs = 0
        self._hasher = hashlib.sha256()
        self._lines: list[bytes] = [self.run.header]
        self._own_lineno: int | None = None  # the thin log's line being merged, if own

    @property
    def sha256(self) -> str:
        if self._lines:
            self._lines.append(b"")
            self._hasher.update(b"\n".join(self._lines))
            self._lines = []
        return self._hasher.hexdigest()

    def error(self, message: str) -> LogError:
        if self._own_lineno is not None:
            return LogError(self.run.path, self._own_lineno, message)
        return self.source.error(message)

    def __iter__(self) -> Iterator[Line]:
        own, total, source = self.run.own, self.run.inputs, self.source
        k, n = 0, 0
        next_at = min(own[0].at, total) if own else total
        lines = self._lines
        prev_t = -(1 << 63)
        try:
            for line in source:
                if n == next_at:
                    while k < len(own) and own[k].at == n:
                        o = own[k]
                        k += 1
                        yield self._own(o, prev_t)
                        prev_t = o.line.t
                    if n == total:
                        break
                    if line.t < prev_t:
                        raise self.source.error(
                            f"t {line.t} is lower than the line before ({prev_t})"
                        )
                    self._own_lineno = None
                    next_at = min(own[k].at, total) if k < len(own) else total
                raw = self.raw = source.raw
                lines.append(raw)
                if len(lines) >= self.BATCH:
                    self._hasher.update(b"\n".join(lines) + b"\n")
                    lines.clear()
                self.inputs += 1
                prev_t = line.t
                n += 1
                yield line
        finally:
            source.close()  # (the merge may stop before the sources end: their reader stops now)
        if n < total:
            raise LogError(
                self.run.path, None, f"the sources hold {n} inputs, the run merged {total}"
            )
        for o in own[k:]:
            yield self._own(o, prev_t)
            prev_t = o.line.t

    def _own(self, o: _Own, prev_t: int) -> Line:
        self._own_lineno = o.lineno
        if o.line.t < prev_t:
            raise self.error(f"t {o.line.t} is lower than the line before ({prev_t})")
        self.raw = o.raw
        self._lines.append(o.raw)
        self.inputs += 1
        return o.line


def open_logs(
    paths: Sequence[str],
    coins: Sequence[str] | None = None,
    data: str | os.PathLike[str] | None = None,
) -> LogReader | ThinReader:
    """The reader for ``paths``: a thin run log (alone) merged with its sources, or logs."""
    thin = [p for p in paths if is_thin(p)]
    if not thin:
        return LogReader(paths, coins)
    if len(paths) > 1:
        raise LogError(thin[0], None, "a thin run log is replayed alone (it names its sources)")
    return ThinReader(paths[0], coins, data)


def market_logs(paths: Sequence[str], data: str | os.PathLike[str] | None = None) -> list[str]:
    """The logs holding ``paths``' market data: a thin run log's sources (found as
    ``ThinRun.find_sources`` finds them), else ``paths`` themselves."""
    if len(paths) == 1 and is_thin(paths[0]):
        return ThinRun(paths[0]).find_sources(data)
    return list(paths)
