"""The version-1 log on disk, read: a lazy reader, headers, one line decoded or refused.

A log is JSON Lines (plain, ``.gz`` or ``.lz4`` by extension), a header on line 1 of every
file, one input a line after it. The reader decodes each line in one msgspec pass into
``engine.inputs.Line`` with a book's levels left as raw bytes; it stops at the first bad
line (not UTF-8 anywhere in it, skimmed parts included, or not the schema) with one error
naming the file and line; a final line without its ``\\n`` (a torn write) is ignored.
Appending is ``arena_tui.logs.writer``. See docs/log-format.md.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

import lz4.frame
import msgspec

from arena_tui.logs.logerror import LogError as LogError  # re-exported: its home before
from arena_tui.logs.logerror import no_header
from arena_tui.logs.readahead import Chunks, worth_it
from engine.inputs import KNOWN_ARENA_TYPES, KNOWN_CHANNELS, Header, Line

if TYPE_CHECKING:
    from arena_tui.logs.daycache import DayCacheWriter

LOG_VERSION = 1
CHUNK = 1 << 20
# a tick as the host and the live feed write it (a day cache's scan knows this form: run.dayscan)
TICK_LINE = b'{"t":%d,"arena":{"type":"tick"}}'

_LINE = msgspec.json.Decoder(Line)
_HEADER = msgspec.json.Decoder(Header)


class _Claims(msgspec.Struct):
    """A header's optional ``first_t`` and ``last_t``: its file's first and last input times."""

    first_t: int | None = None
    last_t: int | None = None


class _T(msgspec.Struct):
    t: int | None = None


_CLAIMS = msgspec.json.Decoder(_Claims)
_T_ONLY = msgspec.json.Decoder(_T)


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a log for reading, decompressing by extension (.gz, .lz4)."""
    name = str(path)
    if name.endswith(".gz"):
        return gzip.open(name, "rb")  # type: ignore[return-value]
    if name.endswith(".lz4"):
        return lz4.frame.open(name, "rb")  # type: ignore[no-any-return]
    return open(name, "rb")


def iter_raw_lines(
    path: str | os.PathLike[str],
    hasher: Any = None,
    torn: Callable[[bytes], None] | None = None,
    *,
    ahead: bool = False,
) -> Iterator[bytes]:
    """Complete lines of a file (without ``\\n``); a torn final line is dropped.

    Every decompressed byte, torn tail included, is fed to ``hasher`` if given; a torn tail
    is passed to ``torn`` if given (for a checker that reports it). A truncated or corrupt
    compressed stream raises LogError. ``ahead``: a whole file's lines wanted (not its
    first few): a large one is read ahead in a second thread (``logs.readahead``).
    """
    update = _ignore if hasher is None else hasher.update
    name = str(path)
    try:
        with Chunks(name, update, ahead=worth_it(name)) if ahead else _Reads(name, update) as got:
            rest = b""
            for chunk in got:
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                yield from lines
            if rest and torn is not None:
                torn(rest)
    except FileNotFoundError:
        raise LogError(path, None, "no such file") from None
    except (EOFError, OSError, RuntimeError, zlib.error) as exc:
        raise LogError(path, None, f"cannot read (truncated or corrupt?): {exc}") from None


class _Reads:
    """A file's uncompressed bytes a ``CHUNK`` at a time through ``open_binary`` (whose
    small reads suit a reader that wants only the first lines), each fed to ``update``."""

    def __init__(self, path: str, update: Callable[[bytes], object]) -> None:
        self._f = open_binary(path)
        self._update = update

    def __enter__(self) -> _Reads:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()

    def __iter__(self) -> Iterator[bytes]:
        read, update = self._f.read, self._update
        while chunk := read(CHUNK):
            update(chunk)
            yield chunk


def first_line(path: str | os.PathLike[str]) -> bytes:
    """Line 1 of a log file, unchecked; a file with no complete line 1 (empty, or cut inside
    it) is one LogError saying which."""
    cut: list[bytes] = []
    for raw in iter_raw_lines(path, torn=cut.append):
        return raw
    raise no_header(path, len(cut[0]) if cut else 0)


def read_header(path: str | os.PathLike[str]) -> Header:
    """Line 1 of a log file, checked."""
    return parse_header(path, first_line(path))


def parse_header(path: str | os.PathLike[str], raw: bytes) -> Header:
    why = not_utf8(raw)
    if why is not None:
        raise LogError(path, 1, f"bad header: {why}")
    if raw.startswith(b'{"arena_run":'):  # logs.thinlog: no market data of its own
        raise LogError(
            path,
            1,
            "a thin run log (arena backtest's): it holds no market data; replay it with "
            "arena replay, or use the logs it names (or a run written with --full-log)",
        )
    try:
        header = _HEADER.decode(raw)
    except msgspec.DecodeError as exc:
        raise LogError(path, 1, f'bad header (want {{"arena_log":1,...}}): {exc}') from None
    if header.arena_log != LOG_VERSION:
        raise LogError(path, 1, f"unsupported log version {header.arena_log} (this reads 1)")
    return header


def header_claims(path: str | os.PathLike[str], raw: bytes) -> tuple[int | None, int | None]:
    """The header's claimed ``first_t`` and ``last_t`` (None where it makes none).

    A claim is what a writer that knew it said (``import``, ``synth``): readers use
    ``last_t`` instead of reading a compressed file to its end, and ``LogReader`` checks
    both as it reads, so a false claim is an error naming the file, never another result.
    """
    try:
        claims = _CLAIMS.decode(raw)
    except msgspec.DecodeError as exc:
        raise LogError(path, 1, f"bad header: {exc}") from None
    return claims.first_t, claims.last_t


def line_t(raw: bytes) -> int | None:
    """A line's ``t`` if it has an integer one, else None (the reader says what is wrong)."""
    try:
        return _T_ONLY.decode(raw).t
    except msgspec.DecodeError:
        return None


def _ignore(_: bytes) -> None:
    pass


class LogReader:
    """Iterate the inputs of one or more log files, in order, checking as the contract says.

    ``coins``: the season's coins; market data for other coins is only checked for ``t``.
    After iteration, ``sha256`` is the hash of all files' uncompressed bytes, in order
    (unless ``hashed=False``: a backtest hashes its own run log instead). While iterating,
    ``path`` and ``lineno`` say where the last line came from, ``raw`` holds its bytes.

    A header's ``first_t`` and ``last_t`` claims are checked against the file's inputs:
    a false one is a LogError naming the file (``finish`` after a pass that stopped early).

    ``cache=True`` (and the day cache not turned off): every file is also written to a
    ``logs.daycache.DayCacheWriter`` as it is read; a file read cleanly to its end leaves
    its writer in ``finished_writers`` for the caller to ``commit`` once the engine applied
    every line without error (else ``discard``); a file not read to its end keeps nothing.
    """

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]],
        coins: Iterable[str] | None = None,
        *,
        hashed: bool = True,
        opener: Callable[[str], IO[bytes]] | None = None,
        cache: bool = False,
        ahead: bool = True,
    ) -> None:
        """``opener``: how a file is opened (default ``open(path, "rb")``): it gives the
        file's bytes as on disk, which the reader decompresses by the file's extension; a
        backtest writing a thin run log hashes each source's bytes on disk through it as
        they are read.
        ``ahead``: a file of a few MiB or more on disk is read, decompressed and hashed
        ahead in a second thread (``logs.readahead``); False for an opener that reads a
        little of a large file."""
        self.paths = [str(p) for p in paths]
        self._opener = opener
        self.coins = None if coins is None else frozenset(coins)
        self.path = ""
        self.lineno = 0
        self.inputs = 0
        self.raw = b""
        self._hasher = hashlib.sha256()
        self._hashed = hashed
        self._lines: Iterator[Line] | None = None
        self._want_last: int | None = None  # the current file's header's last_t claim
        self._cache = cache
        self._ahead = ahead
        self.finished_writers: list[DayCacheWriter] = []

    @property
    def sha256(self) -> str:
        return self._hasher.hexdigest()

    def error(self, message: str) -> LogError:
        return LogError(self.path, self.lineno, message)

    def __iter__(self) -> Iterator[Line]:
        self._lines = self._iter()
        return self._lines

    def finish(self, end: int) -> None:
        """After a pass that stopped early at ``end`` (a season's end): if the current
        file's header claims a ``last_t`` less than two minutes later (a window taken from
        that claim), read on to the end of the file, stopping at the first input later than
        the claim, so a false claim cannot pass unseen; little is left to read then."""
        want, lines, path = self._want_last, self._lines, self.path
        if want is None or lines is None or want - end >= 120_000:
            return
        for line in lines:
            if self.path != path:
                return  # the file ended and its claim was checked there
            if line.t > want:
                raise LogError(
                    path, self.lineno, f"t {line.t} is later than the header's last_t {want}"
                )

    def rest(self) -> Iterator[Line]:
        """The inputs not yet read, to the end of the last file (after a pass that stopped
        early: a file being cached must be read, and checked, to its end)."""
        return iter(()) if self._lines is None else self._lines

    def close(self) -> None:
        """Stop reading: a file not read to its end is not cached."""
        if self._lines is not None:
            self._lines.close()  # type: ignore[attr-defined]

    def _iter(self) -> Iterator[Line]:
        """Every file's inputs, in order. The hot loop: keep it flat (no nested generators)."""
        decode = _LINE.decode
        update = self._hasher.update if self._hashed else _ignore
        prev_t = -(1 << 63)
        writer: DayCacheWriter | None = None
        keep: Callable[[Line], None] | None = None  # collects a chunk's lines for ``writer``
        kept: list[Line] = []
        for k, path in enumerate(self.paths):
            self.path = path
            self.lineno = n = 0
            want_first = self._want_last = None
            try:
                ahead = self._ahead and worth_it(path)
                with Chunks(path, update, ahead=ahead, opener=self._opener) as chunks:
                    rest = b""
                    for chunk in chunks:
                        buf = rest + chunk
                        lines = buf.split(b"\n")
                        rest = lines.pop()
                        if n == 0 and lines:
                            self.lineno = n = 1
                            parse_header(path, lines[0])
                            want_first, self._want_last = header_claims(path, lines[0])
                            if self._cache:
                                # here: the day cache brings numpy, and most readers of a
                                # log (every command's start included) never write one
                                from arena_tui.logs.daycache import DayCacheWriter

                                writer = DayCacheWriter(path, lines[0], self.coins)
                                writer = writer if writer.active else None
                            del lines[0]
                        # UTF-8 (the format's encoding) is checked a chunk at a time: nearly
                        # every chunk is ASCII, and then no line needs a look of its own
                        bad = None if buf.isascii() else _first_not_utf8(lines)
                        if bad is not None:
                            del lines[bad[0] :]
                        if want_first is not None and lines:
                            self._check_first(path, n + 1, lines[0], want_first)
                            want_first = None
                        if writer is not None:
                            kept = []
                            keep = kept.append
                        for raw in lines:
                            n += 1
                            self.lineno = n
                            self.raw = raw  # the line's bytes, for a backtest's run log
                            try:
                                line = decode(raw)
                            except msgspec.DecodeError as exc:
                                line = self._slow(raw, exc)
                            if line.t < prev_t:
                                raise self.error(
                                    f"t {line.t} is lower than the line before ({prev_t})"
                                )
                            prev_t = line.t
                            if keep is not None:
                                keep(line)
                            yield line
                        self.inputs += len(lines)
                        if writer is not None:
                            writer.add_many(lines, kept)
                        if bad is not None:  # after the good lines before it, as the decoder
                            self.lineno = n + 1
                            raise self.error(bad[1])
            except BaseException as exc:  # stopped early, or a bad line: nothing is cached
                if writer is not None:
                    writer.discard()
                    writer = keep = None
                if isinstance(exc, FileNotFoundError):
                    raise LogError(path, None, "no such file") from None
                if isinstance(exc, (EOFError, OSError, RuntimeError, zlib.error)):
                    raise LogError(
                        path, None, f"cannot read (truncated or corrupt?): {exc}"
                    ) from None
                raise
            if n == 0:
                raise no_header(path, len(rest))
            try:
                self._check_last(path, prev_t if n > 1 else None, want_first)
            except LogError:
                if writer is not None:
                    writer.discard()
                raise
            if writer is not None:  # read to its end, every line checked
                if self._hashed and k == 0:  # the hash holds this file's bytes alone
                    writer.text_sha256 = self._hasher.copy().hexdigest()
                self.finished_writers.append(writer)
                writer = keep = None

    def _check_first(self, path: str, lineno: int, raw: bytes, want: int) -> None:
        t = line_t(raw)
        if t is not None and t != want:  # a line with no integer t: the decoder says so
            raise LogError(path, lineno, f"t {t}, but the header's first_t says {want}")

    def _check_last(self, path: str, last: int | None, want_first: int | None) -> None:
        want = self._want_last
        self._want_last = None
        if want is not None and last != want:
            found = "it has no inputs" if last is None else f"its last input has t {last}"
            raise LogError(path, None, f"the header's last_t says {want}, but {found}")
        if want_first is not None:  # claimed, and no input came to check it against
            raise LogError(
                path, None, f"the header's first_t says {want_first}, but it has no inputs"
            )

    def _slow(self, raw: bytes, exc: msgspec.DecodeError) -> Line:
        """A line the typed decoder refused: an ignorable input, or one clear error."""
        try:
            return refused_line(raw, exc, self.coins)
        except BadLine as bad:
            raise self.error(str(bad)) from None


class BadLine(ValueError):
    """Why one line is bad, without the file and line (the caller knows those)."""


def not_utf8(raw: bytes) -> str | None:
    """Why ``raw`` is not UTF-8, or None. The typed decoder cannot be trusted with this: it
    skims what it skips (a book's levels, fields and keys it does not know) unchecked."""
    if raw.isascii():
        return None
    try:
        raw.decode()
    except UnicodeDecodeError as exc:
        return f"not valid UTF-8 (byte {exc.start + 1} of the line is 0x{raw[exc.start]:02x})"
    return None


def _first_not_utf8(lines: list[bytes]) -> tuple[int, str] | None:
    """The index of the first line of ``lines`` that is not UTF-8, and why; or None."""
    for i, raw in enumerate(lines):
        why = not_utf8(raw)
        if why is not None:
            return i, why
    return None


def decode_line(raw: bytes, coins: frozenset[str] | None = None) -> Line:
    """One input line as LogReader decodes it (``t`` order aside); BadLine if it is bad.

    For checkers and importers that judge lines one at a time; LogReader inlines this.
    """
    why = not_utf8(raw)
    if why is not None:
        raise BadLine(why)
    try:
        return _LINE.decode(raw)
    except msgspec.DecodeError as exc:
        return refused_line(raw, exc, coins)


def refused_line(raw: bytes, exc: msgspec.DecodeError, coins: frozenset[str] | None) -> Line:
    """A line the typed decoder refused: an ignorable input, or BadLine saying why."""
    try:
        obj = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise BadLine("not valid JSON") from None
    if not isinstance(obj, dict):
        raise BadLine("not a JSON object")
    if "t" not in obj:
        raise BadLine('no "t"')
    t = obj["t"]
    if type(t) is not int:
        raise BadLine(f'"t" must be an integer, got {type(t).__name__} {t!r}')
    hl, arena = obj.get("hl"), obj.get("arena")
    if hl is not None and arena is not None:
        raise BadLine('a line holds "hl" or "arena", not both')
    if hl is not None and _concerns(hl, coins):
        raise BadLine(f"bad {hl.get('channel')} message: {exc}")
    if isinstance(arena, dict) and arena.get("type") in KNOWN_ARENA_TYPES:
        raise BadLine(f"bad arena {arena['type']}: {exc}")
    if arena is not None and not isinstance(arena, dict):
        raise BadLine('"arena" must be an object')
    return Line(t=t)  # another channel, another arena type, or another coin: ignored


def _concerns(hl: Any, coins: frozenset[str] | None) -> bool:
    """Whether a refused ``hl`` message is known market data for one of ``coins`` (None: all)."""
    if not isinstance(hl, dict):
        return True
    if hl.get("channel") not in KNOWN_CHANNELS:
        return False
    data = hl.get("data")
    if coins is None:
        return True
    if isinstance(data, dict):
        return data.get("coin") in coins or not isinstance(data.get("coin"), str)
    if isinstance(data, list):
        return any(not isinstance(d, dict) or d.get("coin") in coins for d in data)
    return True
