"""``arena logs check``: read logs fully, keep going past damage, and summarise them.

Why this module exists: replay stops at the first bad line and, for speed, leaves a book's
levels (and the decimals of coins outside the season) unparsed until it needs them. Before
a season is scored from a log, after a recorder crashed, or after data was imported, one
wants every problem at once and a picture of the data: inputs per channel and coin, how
often books came and how stale they were, where the feed was lost, how many prints were
resent. Lines are judged by the reader's own decoder (``logfile.decode_line``) and the
engine's parsers, so a line passing here is one replay accepts, whatever the season.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from arena_tui.logs.catalog import kind_of
from arena_tui.logs.levelscan import fast_form, levels_e8
from arena_tui.logs.logerror import no_header
from arena_tui.logs.logfile import (
    BadLine,
    LogError,
    decode_line,
    header_claims,
    iter_raw_lines,
    parse_header,
)
from arena_tui.logs.thinlog import ThinRun, is_thin
from arena_tui.util.human import plural
from engine import Line, MalformedInput, decode_levels, parse_cloid
from engine.inputs import AssetCtx, Book, BookData, Cancel, Gap, Header, Order, Trades
from engine.season import SEASON0_RULES
from engine.units import E8_MEMO, parse_e8, parse_fraction

SHOW_MAX = 20  # bad lines listed with file:line and reason; all of them are counted
STALE_BOOK_MS = SEASON0_RULES.stale_book_ms
PROGRESS_EVERY = 1 << 14


def _decimal(text: str, where: str, parse: Callable[[str], Any] = parse_e8) -> None:
    try:
        parse(text)
    except ValueError as exc:
        raise BadLine(f"{where}: {exc}") from None


def _check_levels(book: BookData, read: Callable[[bytes], Any] = fast_form) -> Any:
    """A book's levels checked in full; ``read``'s answer when they are in the fast form
    (``fast_form``: True; ``levels_e8``: their numbers), else None."""
    got = read(bytes(book.levels))
    if got:  # Hyperliquid's own form: nothing in it can fail
        return got
    try:
        sides = decode_levels(book)
    except MalformedInput as exc:
        raise BadLine(str(exc)) from None
    memo = E8_MEMO  # strings already parsed are good: skip them (most prices repeat)
    for i, side in enumerate(sides):
        for j, level in enumerate(side):
            if level.px not in memo:
                _decimal(level.px, f"l2Book levels[{i}][{j}].px")
            if level.sz not in memo:
                _decimal(level.sz, f"l2Book levels[{i}][{j}].sz")


def check_line(raw: bytes) -> Line:
    """One input line checked in full (every coin, levels, decimals, cloids); else BadLine."""
    return _checked(raw, fast_form)[0]


def check_and_read(raw: bytes) -> tuple[Line, Any]:
    """``check_line``, and for a book in the fast form its levels' numbers as they were read
    to check them (``levels_e8``'s answer; else None): a day cache's columns take them as
    they are (``DayCacheWriter.add``) instead of reading the levels a second time."""
    return _checked(raw, levels_e8)


def _checked(raw: bytes, read: Callable[[bytes], Any]) -> tuple[Line, Any]:
    got = None
    line = decode_line(raw)
    hl, arena = line.hl, line.arena
    if hl is not None and arena is not None:
        raise BadLine('a line holds "hl" or "arena", not both')
    if type(hl) is Book:
        got = _check_levels(hl.data, read) or None
    elif type(hl) is Trades:
        for i, trade in enumerate(hl.data):
            _decimal(trade.px, f"trades data[{i}].px")
            _decimal(trade.sz, f"trades data[{i}].sz")
    elif type(hl) is AssetCtx:
        ctx = hl.data.ctx
        for name in ("markPx", "oraclePx", "funding"):
            text = getattr(ctx, name)
            if text is not None:
                parse = parse_fraction if name == "funding" else parse_e8
                _decimal(text, f"activeAssetCtx ctx.{name}", parse)
    elif isinstance(arena, Order | Cancel):
        try:
            parse_cloid(arena.cloid)
        except MalformedInput as exc:
            kind = "order" if isinstance(arena, Order) else "cancel"
            raise BadLine(f"bad arena {kind}: {exc}") from None
    return line, got


def channel_of(line: Line, raw: bytes) -> str:
    """What a line is: its ``hl`` channel, ``arena:<type>``, or ``(t only)``."""
    if line.hl is not None:
        return line.hl.__struct_config__.tag  # type: ignore[return-value]
    if line.arena is not None:
        return f"arena:{line.arena.__struct_config__.tag}"
    obj = msgspec.json.decode(raw)  # an ignored input: decode_line found it valid JSON
    hl, arena = obj.get("hl"), obj.get("arena")
    if isinstance(hl, dict):
        return str(hl.get("channel", "(hl without channel)"))
    if isinstance(arena, dict):
        return f"arena:{arena.get('type')}"
    return "(t only)"


def median_low(hist: Counter[int]) -> int | None:
    """The lower median of the values a histogram counts."""
    n = sum(hist.values())
    if n == 0:
        return None
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if seen > (n - 1) // 2:
            return value
    raise AssertionError("unreachable")


@dataclass
class CoinStats:
    books: int = 0
    trades: int = 0  # trades messages holding a print of this coin
    prints: int = 0
    ctxs: int = 0
    stale_books: int = 0
    book_age_max_ms: int | None = None
    duplicate_prints: int = 0
    book_gaps: Counter[int] = field(default_factory=Counter)  # receive-time gap -> count
    last_book_t: int | None = None
    last_print_time: int | None = None
    last_print_tids: set[int] = field(default_factory=set)  # membership only

    def to_json(self) -> dict[str, Any]:
        return {
            "books": self.books,
            "trades": self.trades,
            "prints": self.prints,
            "ctxs": self.ctxs,
            "book_gap_median_ms": median_low(self.book_gaps),
            "book_gap_max_ms": max(self.book_gaps, default=None),
            "stale_books": self.stale_books,
            "book_age_max_ms": self.book_age_max_ms,
            "duplicate_prints": self.duplicate_prints,
        }


@dataclass
class Report:
    """Everything ``arena logs check`` found; ``ok`` is False if any damage was found."""

    files: list[dict[str, Any]] = field(default_factory=list)
    inputs: int = 0  # good input lines
    first_t: int | None = None
    last_t: int | None = None
    channels: Counter[str] = field(default_factory=Counter)
    coins: dict[str, CoinStats] = field(default_factory=dict)
    gaps: int = 0
    gap_total_ms: int = 0
    longest_gap: dict[str, Any] | None = None
    bad_lines: int = 0
    shown: list[dict[str, Any]] = field(default_factory=list)
    file_errors: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.bad_lines == 0 and not self.file_errors

    def bad(self, path: str, lineno: int, reason: str) -> None:
        self.bad_lines += 1
        if len(self.shown) < SHOW_MAX:
            self.shown.append({"file": path, "line": lineno, "reason": reason})

    def coin(self, name: str) -> CoinStats:
        stats = self.coins.get(name)
        if stats is None:
            stats = self.coins[name] = CoinStats()
        return stats

    def add(self, line: Line, raw: bytes, path: str, lineno: int) -> None:
        """Count one good input."""
        t = line.t
        self.inputs += 1
        if self.first_t is None:
            self.first_t = t
        self.last_t = t
        self.channels[channel_of(line, raw)] += 1
        hl = line.hl
        if type(hl) is Book:
            self._book(hl.data, t)
        elif type(hl) is Trades:
            for coin in dict.fromkeys(trade.coin for trade in hl.data):
                self.coin(coin).trades += 1
            for trade in hl.data:
                self._print(self.coin(trade.coin), trade.time, trade.tid)
        elif type(hl) is AssetCtx:
            self.coin(hl.data.coin).ctxs += 1
        elif type(line.arena) is Gap:
            self._gap(line.arena, path, lineno)

    def _book(self, book: BookData, t: int) -> None:
        s = self.coin(book.coin)
        s.books += 1
        age = t - book.time
        if age > STALE_BOOK_MS:
            s.stale_books += 1
        if s.book_age_max_ms is None or age > s.book_age_max_ms:
            s.book_age_max_ms = age
        if s.last_book_t is not None:
            s.book_gaps[t - s.last_book_t] += 1
        s.last_book_t = t

    @staticmethod
    def _print(s: CoinStats, time: int, tid: int) -> None:
        """The contract's duplicate-print rule, as the engine applies it."""
        s.prints += 1
        last = s.last_print_time
        if last is None or time > last:
            s.last_print_time = time
            s.last_print_tids = {tid}
        elif time == last and tid not in s.last_print_tids:
            s.last_print_tids.add(tid)
        else:
            s.duplicate_prints += 1

    def _gap(self, gap: Gap, path: str, lineno: int) -> None:
        ms = max(0, gap.to - gap.from_)
        self.gaps += 1
        self.gap_total_ms += ms
        if self.longest_gap is None or ms > self.longest_gap["ms"]:
            self.longest_gap = {
                "from": gap.from_,
                "to": gap.to,
                "ms": ms,
                "reason": gap.reason,
                "file": path,
                "line": lineno,
            }

    def to_json(self) -> dict[str, Any]:
        coins = {c: s.to_json() for c, s in self.coins.items()}
        return {
            "ok": self.ok,
            "files": self.files,
            "inputs": self.inputs,
            "first_t": self.first_t,
            "last_t": self.last_t,
            "channels": dict(self.channels),
            "coins": coins,
            "stale_book_ms": STALE_BOOK_MS,
            "stale_books": sum(s.stale_books for s in self.coins.values()),
            "duplicate_prints": sum(s.duplicate_prints for s in self.coins.values()),
            "gaps": {
                "count": self.gaps,
                "total_ms": self.gap_total_ms,
                "longest": self.longest_gap,
            },
            "bad_lines": self.bad_lines,
            "shown": self.shown,
            "file_errors": self.file_errors,
            "notes": self.notes,
        }


def _header_json(header: Header, raw: bytes) -> dict[str, Any]:
    """The header's engine fields, and where the file's data came from: its ``source``
    (an importer's format, ``hl-s3`` for a fetched day) and the catalog's ``kind``."""
    doc: dict[str, Any] = msgspec.to_builtins(header)
    out = {k: v for k, v in doc.items() if v is not None}
    whole = msgspec.json.decode(raw)  # parse_header has read it: a JSON object
    if isinstance(whole.get("source"), str):
        out["source"] = whole["source"]
    out["kind"] = kind_of(whole)
    return out


def _check_claims(
    report: Report, path: str, claims: tuple[int | None, int | None], seen: list[int]
) -> None:
    """A header's ``first_t``/``last_t`` must be the file's first and last input times."""
    found: list[int | None] = [*seen] if seen else [None, None]
    for key, claim, got in zip(("first_t", "last_t"), claims, found, strict=True):
        if claim is not None and claim != got:
            what = "no inputs" if got is None else f"{got}"
            report.file_errors.append(
                {"file": path, "reason": f"the header's {key} says {claim}, the file: {what}"}
            )


def _raw_lines(
    path: str, tails: list[bytes], data: str | os.PathLike[str] | None
) -> Iterator[bytes]:
    """A file's lines; a thin run log's are its full log's (merged from its sources, found
    beside it, where they were or under ``data``; line numbers are the full log's)."""
    if is_thin(path):
        return ThinRun(path).raw_lines(data)
    return iter_raw_lines(path, torn=tails.append, ahead=True)  # (a whole file, one at a time)


def check_logs(
    paths: Sequence[str | os.PathLike[str]],
    progress: Callable[[int, int], None] | None = None,
    data: str | os.PathLike[str] | None = None,
) -> Report:
    """Check every line of every file, in order (``t`` must not decrease across files);
    ``data``: where a thin run log's sources may be found too."""
    report = Report()
    prev_t: int | None = None
    n = 0
    for p in paths:
        path = str(p)
        info: dict[str, Any] = {"path": path, "lines": 0, "header": None, "torn_tail": False}
        report.files.append(info)
        tails: list[bytes] = []
        lineno = 0
        claims: tuple[int | None, int | None] = (None, None)
        seen: list[int] = []  # the file's first and last t
        try:
            for lineno, raw in enumerate(_raw_lines(path, tails, data), start=1):
                if lineno == 1:
                    try:
                        info["header"] = _header_json(parse_header(path, raw), raw)
                        claims = header_claims(path, raw)
                    except LogError as exc:
                        report.bad(path, 1, f"{exc.message}; the rest of the file is not checked")
                        break
                    continue
                try:
                    line = check_line(raw)
                except BadLine as exc:
                    report.bad(path, lineno, str(exc))
                    continue
                if prev_t is not None and line.t < prev_t:
                    report.bad(path, lineno, f"t {line.t} is lower than the line before ({prev_t})")
                else:
                    report.add(line, raw, path, lineno)
                prev_t = line.t
                seen[1:] = [line.t] if seen else [line.t, line.t]
                n += 1
                if progress is not None and not n % PROGRESS_EVERY:
                    progress(n, line.t)
        except LogError as exc:
            where = f" after line {lineno}" if lineno else ""
            report.file_errors.append({"file": path, "reason": exc.message + where})
        info["lines"] = lineno
        _check_claims(report, path, claims, seen)
        if tails:
            info["torn_tail"] = True
            torn = plural(len(tails[0]), "byte")
            note = f"final line has no trailing newline ({torn}): a torn write"
            report.notes.append({"file": path, "line": lineno + 1, "note": note + ", ignored"})
        if lineno == 0 and not any(e["file"] == path for e in report.file_errors):
            why = no_header(path, len(tails[0]) if tails else 0).message
            report.file_errors.append({"file": path, "reason": why})
    return report
