"""The public views as bytes, encoded once per change instead of once per request.

Why this module exists: every public read is answered on the event loop the orders
share, and a season's views are large: an entry's 5,000 minute marks are half a megabyte
of JSON, 5 ms to build and encode each time. Readers ask again and again while little
changes, so each answer here is kept as the bytes :mod:`arena_tui.host.answers` would
give (``tests/test_host_readers.py`` compares them), and rebuilt only from what changed:

- an entry's marks and fills only grow (the log is append-only): each is encoded once,
  the first time any answer needs it, and an answer is their slice joined in a frame;
- ``GET /v1/entries`` is kept until the views' ``version`` moves (a mark, a fill, a score
  row, a registration);
- ``GET /v1/scores`` per day asked (a few kept), until the store's version or SQLite's
  ``data_version`` moves (a write by another process is served too, as before).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from arena_tui.host import answers
from arena_tui.host.store import ScoreStore
from arena_tui.host.views import Views
from arena_tui.season.file import PAPER
from engine import Engine, Season

_ENCODE = msgspec.json.Encoder().encode
SCORE_DAYS_KEPT = 8  # distinct ?day= answers kept at once


def _frame(head: bytes, items: list[bytes], more: bool) -> bytes:
    tail = b'],"more":true}' if more else b'],"more":false}'
    return head + b",".join(items) + tail


class Encoded:
    """The bytes of the public answers over one session's views (module docstring)."""

    def __init__(
        self, engine: Engine, views: Views, season: Season, store: ScoreStore | None
    ) -> None:
        self.engine = engine
        self.views = views
        self.season = season
        self.store = store
        self._marks: dict[str, list[bytes]] = {}
        self._fills: dict[str, list[bytes]] = {}
        self._entries: tuple[int, bytes] | None = None
        self._scores: dict[int | None, bytes] = {}
        self._scores_key: tuple[int, int, bool] | None = None

    @staticmethod
    def _grow(done: list[bytes], total: int, encode: Callable[[int], bytes]) -> list[bytes]:
        for i in range(len(done), total):
            done.append(encode(i))
        return done

    def equity(self, entry: str, since: int) -> bytes:
        """``answers.equity(views, entry, since)``, encoded."""
        marks = self.views.marks.get(entry)
        if marks is None:
            return _ENCODE(answers.equity(self.views, entry, since))
        done = self._marks.setdefault(entry, [])
        self._grow(done, len(marks), lambda i: _ENCODE(answers.mark_out(marks, i)))
        first = marks.first_at(since)
        last = min(len(marks), first + answers.MAX_MARKS)
        head = b'{"entry":' + _ENCODE(entry) + b',"marks":['
        return _frame(head, done[first:last], last < len(marks))

    def fills(self, entry: str, since: int) -> bytes:
        """``answers.fills(views, entry, since)``, encoded."""
        mine = self.views.fills.get(entry, [])
        done = self._fills.setdefault(entry, [])
        note_of = self.views.note_of
        self._grow(
            done, len(mine), lambda i: _ENCODE(answers.fill(mine[i], i + 1, note_of(mine[i])))
        )
        first, last = answers.fills_span(self.views, entry, since)
        return _frame(b'{"fills":[', done[first:last], last < len(mine))

    def entries(self) -> bytes:
        """``answers.entries(engine, views, season)``, encoded."""
        version = self.views.version
        if self._entries is None or self._entries[0] != version:
            doc = answers.entries(self.engine, self.views, self.season)
            self._entries = (version, _ENCODE(doc))
        return self._entries[1]

    def scores(self, day: int | None) -> bytes:
        """``GET /v1/scores``' body: the store's rows (of ``day``), the paper label."""
        store = self.store
        assert store is not None  # (a lockstep run answers its scores itself)
        key = (store.version, store.data_version(), self.engine.over)
        if key != self._scores_key:
            self._scores.clear()
            self._scores_key = key
        body = self._scores.get(day)
        if body is None:
            doc: dict[str, Any] = {"season": self.season.id, "paper": PAPER}
            doc |= {"final": self.engine.over, "rows": store.rows(day)}
            body = _ENCODE(doc)
            if len(self._scores) >= SCORE_DAYS_KEPT:
                self._scores.pop(next(iter(self._scores)))
            self._scores[day] = body
        return body
