"""Replaying a log: the engine over the log's inputs, into the contract's replay output.

The output (``--json``) is exactly the contract's "Replay output": keys in the contract's
order, no whitespace. The fills file is one JSON line per fill, sorted keys, no whitespace;
its SHA-256 is ``fills_sha256`` whether or not the file is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from arena_tui.logs.thinlog import open_logs
from arena_tui.run.quotes import OrderNotes, contract_fill, quote_line
from arena_tui.util.human import Progress
from arena_tui.util.jsonout import dumps
from engine import Engine, MalformedInput, Season, Standing, ranking
from engine import events as ev


@dataclass
class ReplayResult:
    season: Season
    log_sha256: str
    fills_sha256: str
    end: int | None
    final: bool
    ranking: list[dict[str, Any]]
    inputs: int
    fills: int
    score_rows: dict[tuple[str, int], ev.ScoreRow] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The contract's replay object, keys in the contract's order."""
        return {
            "season": self.season.id,
            "rules_sha256": self.season.rules_sha256,
            "log_sha256": self.log_sha256,
            "end": self.end,
            "final": self.final,
            "fills_sha256": self.fills_sha256,
            "ranking": self.ranking,
        }


def fill_line(f: ev.Fill) -> bytes:
    """One line of the fills file, as the contract spells it."""
    return (dumps(contract_fill(f), sort_keys=True) + "\n").encode("utf-8")


def score_row_doc(r: ev.ScoreRow) -> dict[str, Any]:
    """A daily score row as people and programs read it: ``arena replay --scores``, the
    host's ``/v1/scores`` and ``arena verify`` all spell it so."""
    return {
        "day": r.day,
        "t": r.t,
        "entry": r.entry,
        "rank": r.rank,
        "equity": r.equity,
        "return": r.ret,
        "mdd": r.mdd,
        "score": r.score,
        "eligible": r.eligible,
        "fill_days": r.fill_days,
        "active_share": r.active_share,
    }


def standing_row(rank: int | None, s: Standing) -> dict[str, Any]:
    """One row of the ranking: an entry's standing at ``rank``, as the contract spells it."""
    return {
        "rank": rank,
        "entry": s.entry,
        "score": s.score,
        "return": s.ret,
        "mdd": s.mdd,
        "equity": s.equity,
        "eligible": s.eligible,
        "fill_days": s.fill_days,
        "active_marks": s.active_marks,
        "marks": s.marks,
    }


def ranking_rows(eng: Engine) -> list[dict[str, Any]]:
    return [standing_row(rank, s) for rank, s in ranking(eng.standings())]


def replay(
    paths: Sequence[str],
    season: Season,
    *,
    fills_out: IO[bytes] | None = None,
    on_event: Callable[[ev.AnyEvent], None] | None = None,
    progress: Progress | None = None,
    keep_score_rows: bool = False,
    notes: OrderNotes | None = None,
    quotes_out: IO[bytes] | None = None,
    sources_dir: str | None = None,
) -> ReplayResult:
    """Run the engine over the logs; raise LogError naming the file and line of a bad one.

    ``notes``: gathers the note of every order line that has one (``run.quotes``), by the
    oid the engine accepted it under; ``quotes_out`` (``notes`` needed) gets a quotes
    line for every fill, in the fills file's order. A thin run log (alone) is merged
    with its sources (found beside it, at their recorded paths or under ``sources_dir``).
    """
    if quotes_out is not None and notes is None:
        notes = OrderNotes()
    eng = Engine(season)
    reader = open_logs(paths, [m.coin for m in season.markets], sources_dir)
    fills_hash = hashlib.sha256()
    rows: dict[tuple[str, int], ev.ScoreRow] = {}
    fills = 0
    apply = eng.apply
    n = 0
    for line in reader:
        try:
            out = apply(line)
        except MalformedInput as exc:
            raise reader.error(str(exc)) from None
        if out:
            if notes is not None and line.hl is None:
                notes.logged(reader.raw, out)
            for e in out:
                if type(e) is ev.Fill:
                    data = fill_line(e)
                    fills_hash.update(data)
                    fills += 1
                    if fills_out is not None:
                        fills_out.write(data)
                    if quotes_out is not None and notes is not None:
                        quotes_out.write(quote_line(e, notes.of(e)))
                elif keep_score_rows and type(e) is ev.ScoreRow:
                    rows[(e.entry, e.day)] = e
                if on_event is not None:
                    on_event(e)
        n += 1  # noqa: SIM113 - cheaper than enumerate's tuples on this loop
        if not n & 0x3FFF and progress is not None:
            progress.update(n, line.t)
    if progress is not None:
        progress.done()
    return ReplayResult(
        season=season,
        log_sha256=reader.sha256,
        fills_sha256=fills_hash.hexdigest(),
        end=eng.last_mark,
        final=eng.final,
        ranking=ranking_rows(eng),
        inputs=reader.inputs,
        fills=fills,
        score_rows=rows,
    )


def check_only(
    paths: Sequence[str], season: Season, sources_dir: str | None = None
) -> ReplayResult:
    """Read and check every line (and hash the logs) when there is nothing to score.

    For logs with no season that span no whole minute: no mark can happen, so the result
    has no ``end``, is not final, and ranks nobody; a bad line is still an error.
    """
    reader = open_logs(paths, [m.coin for m in season.markets], sources_dir)
    for _ in reader:
        pass
    return ReplayResult(
        season=season,
        log_sha256=reader.sha256,
        fills_sha256=hashlib.sha256().hexdigest(),
        end=None,
        final=False,
        ranking=[],
        inputs=reader.inputs,
        fills=0,
    )
