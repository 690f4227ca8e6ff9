"""The hosted log as far as it has been read, replayed here as it arrives.

Bytes come in pieces (a ``Range`` answer streamed); each complete line is checked and
applied at once, as ``arena replay`` would: line 1 is the header (its season and rules
must be the season file's), every other line decodes with :func:`decode_line`, its ``t``
never goes back, and it is applied to the one :class:`Engine` kept across rounds. The
complete lines are hashed (``log_sha256``, as ``arena replay`` of the same bytes says) and
written to the kept copy, if any. The score rows the engine emits are remembered by
(entry, day) and mark, but only those a published row may still be compared with
(:class:`RowHistory`), so a long season does not hold every mark of every entry.
"""

from __future__ import annotations

import hashlib
from typing import IO

from arena_tui.logs.logfile import BadLine, LogError, decode_line, parse_header
from engine import Engine, MalformedInput, Season
from engine import events as ev
from engine.inputs import Header

Key = tuple[str, int]  # (entry, day)


class HeaderMismatch(Exception):
    """The log's header names other rules, another season or window than the season file."""

    def __init__(self, field: str, logged: object, season_file: object) -> None:
        super().__init__(field)
        self.field = field
        self.logged = logged
        self.season_file = season_file


class RowHistory:
    """Recomputed score rows by (entry, day) and mark ``t``, pruned to what can still be
    asked: a published row of (entry, day) at mark ``f`` (its floor) is only ever followed
    by rows at marks >= ``f``; a row at a mark the published answer covers but has no row
    for is a difference, and only the latest such row is kept to name it."""

    def __init__(self) -> None:
        self.rows: dict[Key, dict[int, ev.ScoreRow]] = {}
        self.floors: dict[Key, int] = {}
        self.covered: int | None = None  # the latest mark the published rows are as of

    def expect(self, floors: dict[Key, int], covered: int | None) -> None:
        """A new published answer: its rows' marks, and the latest of them."""
        self.floors = floors
        self.covered = covered
        for key, by_t in self.rows.items():
            floor = floors.get(key)
            if floor is not None:
                for t in [t for t in by_t if t < floor]:
                    del by_t[t]

    def add(self, r: ev.ScoreRow) -> None:
        key = (r.entry, r.day)
        floor = self.floors.get(key)
        if floor is not None and r.t < floor:
            return
        if floor is None and self.covered is not None and r.t <= self.covered:
            self.rows[key] = {r.t: r}  # unpublished where it should be: keep the latest
            return
        self.rows.setdefault(key, {})[r.t] = r

    def at(self, key: Key, t: int) -> ev.ScoreRow | None:
        return self.rows.get(key, {}).get(t)

    def latest_by(self, key: Key, t: int) -> ev.ScoreRow | None:
        """The row of ``key`` at the latest mark at or before ``t``, if one is held."""
        marks = [m for m in self.rows.get(key, {}) if m <= t]
        return self.rows[key][max(marks)] if marks else None


class LogReplay:
    """The log read so far (see the module docstring). ``label`` names it in errors (the
    URL it came from); ``copy`` receives its complete lines (``--keep``)."""

    def __init__(self, season: Season, label: str, copy: IO[bytes] | None = None) -> None:
        self.season = season
        self.label = label
        self.copy = copy
        self.engine = Engine(season)
        self.coins = frozenset(m.coin for m in season.markets)
        self.history = RowHistory()
        self.header: Header | None = None
        self.received = 0  # bytes read from the host (the next Range starts here)
        self.complete = 0  # bytes of complete lines applied and hashed
        self.lineno = 0
        self.inputs = 0
        self._rest = b""
        self._prev_t: int | None = None
        self._hash = hashlib.sha256()

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    @property
    def last_mark(self) -> int | None:
        return self.engine.last_mark

    @property
    def final(self) -> bool:
        return self.engine.final

    def may_be_header(self) -> bool:
        """Whether the bytes held short of line 1 may still become a log's header (a JSON
        object): a web page, say, cannot."""
        return self._rest.lstrip()[:1] in (b"", b"{")

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the log; apply every line they complete."""
        if not data:
            return
        self.received += len(data)
        buf = self._rest + data
        cut = buf.rfind(b"\n") + 1
        self._rest = buf[cut:]
        if not cut:
            return
        whole = buf[:cut]
        for raw in whole.split(b"\n")[:-1]:
            self._line(raw)
        self._hash.update(whole)
        self.complete += cut
        if self.copy is not None:
            self.copy.write(whole)

    def _line(self, raw: bytes) -> None:
        self.lineno += 1
        if self.lineno == 1:
            self.header = parse_header(self.label, raw)
            self._check_header(self.header)
            return
        try:
            line = decode_line(raw, self.coins)
        except BadLine as bad:
            raise LogError(self.label, self.lineno, str(bad)) from None
        if self._prev_t is not None and line.t < self._prev_t:
            raise LogError(
                self.label,
                self.lineno,
                f"t {line.t} is lower than the line before ({self._prev_t})",
            )
        self._prev_t = line.t
        try:
            out = self.engine.apply(line)
        except MalformedInput as exc:
            raise LogError(self.label, self.lineno, str(exc)) from None
        self.inputs += 1
        for e in out:
            if type(e) is ev.ScoreRow:
                self.history.add(e)

    def _check_header(self, h: Header) -> None:
        s = self.season
        if h.rules_sha256 is not None and h.rules_sha256 != s.rules_sha256:
            raise HeaderMismatch("rules_sha256", h.rules_sha256, s.rules_sha256)
        if h.season is not None and h.season != s.id:
            raise HeaderMismatch("season", h.season, s.id)
        if h.start is not None and (h.start, h.end) != (s.start, s.end):
            raise HeaderMismatch("window", f"{h.start} -> {h.end}", f"{s.start} -> {s.end}")
