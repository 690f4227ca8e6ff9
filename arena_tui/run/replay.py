"""Replaying a log: the engine over the log's inputs, into the contract's replay output.

The output (``--json``) is exactly the contract's "Replay output": keys in the contract's
order, no whitespace. The fills file is one JSON line per fill, sorted keys, no whitespace;
its SHA-256 is ``fills_sha256`` whether or not the file is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import IO, TYPE_CHECKING, Any, Literal

from arena_tui.logs.logfile import LogReader
from arena_tui.logs.thinlog import ThinReader, is_thin, open_logs
from arena_tui.run.quotes import OrderNotes, contract_fill, quote_line
from arena_tui.run.replayresult import ReplayResult as ReplayResult
from arena_tui.util.human import Progress
from arena_tui.util.jsonout import dumps
from engine import Engine, Line, MalformedInput, Season, Standing, ranking
from engine import events as ev

if TYPE_CHECKING:
    from arena_tui.run.warmreplay import WarmReplay

CacheUse = Literal["off", "read", "write"]  # what a replay does with the day cache


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
    cache: CacheUse = "off",
) -> ReplayResult:
    """Run the engine over the logs; raise LogError naming the file and line of a bad one.

    ``cache``: "read": replay from the logs' day caches when every one is a log (not thin)
    with a valid one (``run.warmreplay``: the same result to the last unit), else read the
    logs; "write": the same, and the logs read are cached (a first read is slower);
    "off": read the logs.

    ``notes``: gathers the note of every order line that has one (``run.quotes``), by the
    oid the engine accepted it under; ``quotes_out`` (``notes`` needed) gets a quotes
    line for every fill, in the fills file's order. A thin run log (alone) is merged
    with its sources (found beside it, at their recorded paths or under ``sources_dir``).
    """
    if quotes_out is not None and notes is None:
        notes = OrderNotes()
    eng = Engine(season)
    coins = [m.coin for m in season.markets]
    warm = None
    if cache != "off":
        from arena_tui.run.warmreplay import cached_days  # (it brings the day cache's code)

        warm = cached_days(paths, coins)
    reader: LogReader | ThinReader | WarmReplay
    lines: Iterable[Line]
    if warm is not None:
        reader, lines = warm, warm.inputs_for(eng, progress)
    elif cache == "write" and not any(map(is_thin, paths)):
        reader = lines = LogReader(paths, coins, cache=True)  # cached once read in full
    else:
        reader = lines = open_logs(paths, coins, sources_dir)
    fills_hash = hashlib.sha256()
    rows: dict[tuple[str, int], ev.ScoreRow] = {}
    fills = 0
    apply = eng.apply
    n = 0
    for line in lines:
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
        if not n & 0x3FFF and progress is not None and warm is None:
            progress.update(n, line.t)
    if progress is not None:
        progress.done()
    if isinstance(reader, LogReader):  # (a writer: every line was applied without error)
        for writer in reader.finished_writers:
            writer.commit(reopen=False)
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
        cached=warm is not None,
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
