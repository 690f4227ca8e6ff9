"""Published score rows against the rows the local replay recomputes, as of the same mark.

A published row says (entry, day, t): the entry's row for that UTC day as of the mark at
``t``. It agrees when the replay produced a row for the same (entry, day) at the same mark
and every field is equal (compared as :func:`score_row_doc` spells them). A row whose mark
the replay has not reached is "not yet in the log" (the caller reads more). Everything
else is a :class:`Difference`: a field that differs, a published row the replay never
produced at its mark, a (entry, day) the replay has rows for at marks the answer covers
but that is missing or older in it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import msgspec

from arena_tui.run.replay import score_row_doc
from arena_tui.util.human import utc_ms
from arena_tui.verify.logreplay import Key, LogReplay
from arena_tui.wire.api import ScoreRow

KEYS = ("day", "t", "entry")  # what names a published row: (entry, day) as of the mark t
# what a row says of them, by the names the API spells (``/v1/scores``' rows are ScoreRows)
FIELDS = tuple(f.encode_name for f in msgspec.structs.fields(ScoreRow) if f.encode_name not in KEYS)


def utc_date(day: int) -> str:
    return (dt.date(1970, 1, 1) + dt.timedelta(days=day)).isoformat()


@dataclass(frozen=True)
class Difference:
    """Where the published season and the replay part ways (``entry``/``day`` for a row)."""

    field: str
    published: Any
    recomputed: Any
    entry: str | None = None
    day: int | None = None
    why: str = ""

    def message(self) -> str:
        where = ""
        if self.entry is not None and self.day is not None:
            where = f"{self.entry} on {utc_date(self.day)} (day {self.day}): "
        text = f"{where}{self.field} published {_show(self.published)}, recomputed " + _show(
            self.recomputed
        )
        return f"{text} ({self.why})" if self.why else text

    def to_json(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "day": self.day,
            "date": None if self.day is None else utc_date(self.day),
            "field": self.field,
            "published": self.published,
            "recomputed": self.recomputed,
            "message": self.message(),
        }


def _show(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass
class Judgement:
    """One comparison: the first difference (or None), the rows that agreed, and the
    published rows (and a final season) the log read so far does not reach yet."""

    difference: Difference | None = None
    checked: int = 0
    pending: list[dict[str, Any]] = field(default_factory=list)
    final_pending: bool = False

    @property
    def waiting(self) -> bool:
        return self.difference is None and (bool(self.pending) or self.final_pending)

    def waiting_for(self) -> str:
        if self.pending:
            p = self.pending[0]
            return f"{p['entry']}'s row for {utc_date(p['day'])} as of {utc_ms(p['t'])}"
        return "the season's end (the scores say final)"


def floors(rows: list[dict[str, Any]]) -> tuple[dict[Key, int], int | None]:
    """Each published (entry, day)'s mark, and the latest mark of all of them."""
    marks = {(r["entry"], r["day"]): r["t"] for r in rows}
    return marks, max(marks.values(), default=None)


def judge(rows: list[dict[str, Any]], final: bool, replay: LogReplay) -> Judgement:
    """Compare every published row (in the order served) with the replay (see the module
    docstring); then look for rows the replay has that the answer should hold."""
    out = Judgement()
    last = replay.last_mark
    history = replay.history
    published: dict[Key, dict[str, Any]] = {}
    for p in rows:
        key = (p["entry"], p["day"])
        published[key] = p
        if last is None or p["t"] > last:
            out.pending.append(p)
            continue
        got = history.at(key, p["t"])
        if got is None:
            near = history.latest_by(key, last)
            why = "the replay has no row for it at that mark"
            recomputed = None if near is None else near.t
            out.difference = Difference("t", p["t"], recomputed, p["entry"], p["day"], why)
            return out
        mine = score_row_doc(got)
        for name in FIELDS:
            theirs = p.get(name)
            if theirs != mine[name] or type(theirs) is not type(mine[name]):
                out.difference = Difference(name, theirs, mine[name], p["entry"], p["day"])
                return out
        out.checked += 1
    _, covered = floors(rows)
    if final and replay.final and last is not None:
        covered = last  # a final answer is as of the season's last mark
    if covered is not None:
        for key in sorted(history.rows, key=lambda k: (k[1], k[0])):
            mine_row = history.latest_by(key, covered)
            if mine_row is None:
                continue
            theirs = published.get(key)
            if theirs is None:
                why = f"the published rows, as of {utc_ms(covered)}, have none for it"
                out.difference = Difference("t", None, mine_row.t, key[0], key[1], why)
                return out
            if theirs["t"] < mine_row.t:
                why = "the published row is older than a mark the rows are as of"
                t = theirs["t"]
                out.difference = Difference("t", t, mine_row.t, key[0], key[1], why)
                return out
    out.final_pending = final and not replay.final
    return out
