"""The first and last input times of logs, without reading them twice.

Why this module exists: a log with no season file is scored over the whole minutes between
its first and last input, so those two times are needed before the one pass that replays
it. They come from the file's head (its first input, a chunk away) and its end: a plain
file is read back from its end to its last complete line; a compressed one (which cannot
be read backwards) takes its header's ``last_t``, written by ``import`` and ``synth``, and
checked by the pass itself (``LogReader``). Only a compressed file with no ``last_t`` (an
older arena's, a recorder's closed day) is read through here, as before.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from arena_tui.logs.logerror import no_header
from arena_tui.logs.logfile import (
    CHUNK,
    LogError,
    header_claims,
    iter_raw_lines,
    line_t,
    open_binary,
    parse_header,
)
from arena_tui.logs.readahead import is_compressed


def is_plain(path: str | os.PathLike[str]) -> bool:
    return not is_compressed(path)


def _t(path: str, lineno: int | None, raw: bytes) -> int:
    t = line_t(raw)
    if t is None:
        raise LogError(path, lineno, '"t" missing or not an integer (or not valid JSON)')
    return t


def head(path: str) -> tuple[bytes, bytes | None]:
    """Line 1 (checked as a header) and the first input line (None: the file has none)."""
    try:
        with open_binary(path) as f:
            buf = b""
            while buf.count(b"\n") < 2:
                chunk = f.read(CHUNK)
                if not chunk:
                    break
                buf += chunk
    except FileNotFoundError:
        raise LogError(path, None, "no such file") from None
    except (EOFError, OSError, RuntimeError) as exc:
        raise LogError(path, None, f"cannot read (truncated or corrupt?): {exc}") from None
    lines = buf.split(b"\n")
    if len(lines) < 2:
        raise no_header(path, len(buf))
    parse_header(path, lines[0])
    return lines[0], (lines[1] if len(lines) > 2 else None)


def last_lines(path: str | os.PathLike[str], newlines: int) -> tuple[list[bytes], bool]:
    """The complete lines at the end of a plain file, read back from its end until
    ``newlines`` line ends are in hand (or the file's start), a torn tail dropped; and
    whether they begin at the file's first line (the header)."""
    with open(path, "rb") as f:
        end = f.seek(0, os.SEEK_END)
        pos, block = end, b""
        while pos > 0 and block.count(b"\n") < newlines:
            pos = max(0, pos - CHUNK)
            f.seek(pos)
            block = f.read(end - pos)
    lines = block.split(b"\n")
    lines.pop()  # a torn tail, or b"" after the final newline
    return (lines, True) if pos == 0 else (lines[1:], False)  # (lines[0]: cut in two)


def tail(path: str) -> bytes | None:
    """The last complete line of a plain file after its header (None: it has no input)."""
    lines, from_start = last_lines(path, 2)
    if from_start and len(lines) < 2:
        return None  # only the header is complete
    return lines[-1]


def _full_pass_last(path: str) -> int | None:
    """The last input's ``t`` of a file read to its end (a compressed file with no claim)."""
    last: tuple[int, bytes] | None = None
    for lineno, raw in enumerate(iter_raw_lines(path), start=1):
        if lineno > 1:
            last = (lineno, raw)
    return None if last is None else _t(path, *last)


def last_t(path: str, header: bytes) -> int | None:
    """``t`` of a file's last input (None if it has none), by the cheapest honest way."""
    if is_plain(path):
        raw = tail(path)
        if raw is None:
            return None
        t = line_t(raw)
        return t if t is not None else _full_pass_last(path)  # numbers the bad line
    claimed = header_claims(path, header)[1]
    if claimed is not None:
        return claimed  # checked against the file by the pass that replays it
    return _full_pass_last(path)


def input_bounds(paths: Sequence[str]) -> tuple[int, int] | None:
    """``t`` of the first and the last input across the logs, None if they hold none.

    Every header is checked; each file's head is read, and only the end of the last file
    holding inputs.
    """
    heads = [head(p) for p in paths]
    first: int | None = None
    for path, (_, raw) in zip(paths, heads, strict=True):
        if raw is not None:
            first = _t(path, 2, raw)
            break
    if first is None:
        return None
    for path, (header, raw) in reversed(list(zip(paths, heads, strict=True))):
        if raw is not None:
            last = last_t(path, header)
            if last is not None:
                return first, last
    return None
