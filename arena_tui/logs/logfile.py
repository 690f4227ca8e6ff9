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
from typing import IO, Any

import lz4.frame
import msgspec

from arena_tui.util.errors import ArenaError
from engine.inputs import KNOWN_ARENA_TYPES, KNOWN_CHANNELS, Header, Line

LOG_VERSION = 1
CHUNK = 1 << 20

_LINE = msgspec.json.Decoder(Line)
_HEADER = msgspec.json.Decoder(Header)


class LogError(ArenaError):
    """A log that cannot be read: one line, naming the file and line where known."""

    def __init__(self, path: str | os.PathLike[str], lineno: int | None, message: str) -> None:
        self.path = str(path)
        self.lineno = lineno
        self.message = message
        where = f"{self.path}:{lineno}" if lineno else self.path
        super().__init__(f"{where}: {message}")


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
) -> Iterator[bytes]:
    """Complete lines of a file (without ``\\n``); a torn final line is dropped.

    Every decompressed byte, torn tail included, is fed to ``hasher`` if given; a torn tail
    is passed to ``torn`` if given (for a checker that reports it). A truncated or corrupt
    compressed stream raises LogError.
    """
    try:
        with open_binary(path) as f:
            rest = b""
            while True:
                chunk = f.read(CHUNK)
                if not chunk:
                    break
                if hasher is not None:
                    hasher.update(chunk)
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                yield from lines
            if rest and torn is not None:
                torn(rest)
    except FileNotFoundError:
        raise LogError(path, None, "no such file") from None
    except (EOFError, OSError, RuntimeError, zlib.error) as exc:
        raise LogError(path, None, f"cannot read (truncated or corrupt?): {exc}") from None


def read_header(path: str | os.PathLike[str]) -> Header:
    """Line 1 of a log file, checked."""
    for raw in iter_raw_lines(path):
        return parse_header(path, raw)
    raise LogError(path, 1, "empty log: no header line")


def parse_header(path: str | os.PathLike[str], raw: bytes) -> Header:
    why = not_utf8(raw)
    if why is not None:
        raise LogError(path, 1, f"bad header: {why}")
    try:
        header = _HEADER.decode(raw)
    except msgspec.DecodeError as exc:
        raise LogError(path, 1, f'bad header (want {{"arena_log":1,...}}): {exc}') from None
    if header.arena_log != LOG_VERSION:
        raise LogError(path, 1, f"unsupported log version {header.arena_log} (this reads 1)")
    return header


def _ignore(_: bytes) -> None:
    pass


class LogReader:
    """Iterate the inputs of one or more log files, in order, checking as the contract says.

    ``coins``: the season's coins; market data for other coins is only checked for ``t``.
    After iteration, ``sha256`` is the hash of all files' uncompressed bytes, in order
    (unless ``hashed=False``: a backtest hashes its own run log instead). While iterating,
    ``path`` and ``lineno`` say where the last line came from, ``raw`` holds its bytes.
    """

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]],
        coins: Iterable[str] | None = None,
        *,
        hashed: bool = True,
    ) -> None:
        self.paths = [str(p) for p in paths]
        self.coins = None if coins is None else frozenset(coins)
        self.path = ""
        self.lineno = 0
        self.inputs = 0
        self.raw = b""
        self._hasher = hashlib.sha256()
        self._hashed = hashed

    @property
    def sha256(self) -> str:
        return self._hasher.hexdigest()

    def error(self, message: str) -> LogError:
        return LogError(self.path, self.lineno, message)

    def __iter__(self) -> Iterator[Line]:
        """Every file's inputs, in order. The hot loop: keep it flat (no nested generators)."""
        decode = _LINE.decode
        update = self._hasher.update if self._hashed else _ignore
        prev_t = -(1 << 63)
        for path in self.paths:
            self.path = path
            self.lineno = n = 0
            try:
                with open_binary(path) as f:
                    rest = b""
                    while chunk := f.read(CHUNK):
                        update(chunk)
                        buf = rest + chunk
                        lines = buf.split(b"\n")
                        rest = lines.pop()
                        if n == 0 and lines:
                            self.lineno = n = 1
                            parse_header(path, lines[0])
                            del lines[0]
                        # UTF-8 (the format's encoding) is checked a chunk at a time: nearly
                        # every chunk is ASCII, and then no line needs a look of its own
                        bad = None if buf.isascii() else _first_not_utf8(lines)
                        if bad is not None:
                            del lines[bad[0] :]
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
                            yield line
                        self.inputs += len(lines)
                        if bad is not None:  # after the good lines before it, as the decoder
                            self.lineno = n + 1
                            raise self.error(bad[1])
            except (EOFError, OSError, RuntimeError, zlib.error) as exc:
                if isinstance(exc, FileNotFoundError):
                    raise LogError(path, None, "no such file") from None
                raise LogError(path, None, f"cannot read (truncated or corrupt?): {exc}") from None
            if n == 0:
                raise LogError(path, 1, "empty log: no header line")

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
