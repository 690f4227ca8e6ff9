"""The run's own record of its fills: their hash and count, every fill, and the notes of
the orders behind them; the first subscriber of every run, and what makes its result.

Why this module exists: ``fills_sha256`` is the run's contract with ``arena replay`` (the
hash of the fills file's lines, ``replay.fill_line``), and the notes (``run.quotes``) go
with the fills into the report; both are read off the stream like any other projection,
so the runner does not keep them itself.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from arena_tui.run.fillrows import FillRows
from arena_tui.run.parts import BacktestResult, Entrant
from arena_tui.run.quotes import OrderNotes
from arena_tui.run.replay import ReplayResult, fill_line, ranking_rows
from arena_tui.run.runlogs import NoRunLog
from arena_tui.run.stream import Run
from engine import Engine, Line
from engine import events as ev

if TYPE_CHECKING:
    from arena_tui.logs.runlog import RunLog
    from arena_tui.logs.thinlog import ThinRunLog


class Ledger:
    """Every fill of the run in order, their hash and count, and the orders' notes."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()
        self.count = 0
        self.fills = FillRows()  # flat (run.fillrows): each read back as an ev.Fill
        self.notes = OrderNotes()
        self.run: Run | None = None

    def bind(self, run: Run) -> None:
        self.run = run  # its ``applying``: the strategy input being applied, if any

    def observe(self, line: Line, raw: bytes, out: list[ev.AnyEvent]) -> None:
        if not out:
            return
        for event in out:
            if type(event) is ev.Fill:
                self.sha.update(fill_line(event))
                self.count += 1
                self.fills.append(event)
        if line.hl is not None:
            return
        msg = None if self.run is None else self.run.applying
        if msg is None:  # a line of the logs: an order there may carry a note
            self.notes.logged(raw, out)
        elif "note" in msg:  # the note belongs to the order the engine accepted
            self.notes.accepted(msg["entry"], msg["note"], out)

    def result(
        self,
        engine: Engine,
        log: RunLog | ThinRunLog,
        entrants: list[Entrant],
        inputs: int,
        own_inputs: int,
        dropped: int,
    ) -> BacktestResult:
        """What a pass that read ``inputs`` log inputs gives: what ``arena replay`` of its
        run log prints (the log closed), and what the strategies did. ``dropped``: inputs
        stamped after the last log input, never applied."""
        replay = ReplayResult(
            season=engine.season,
            log_sha256="" if isinstance(log, NoRunLog) else log.sha.hexdigest(),  # no log
            fills_sha256=self.sha.hexdigest(),
            end=engine.last_mark,
            final=engine.final,
            ranking=ranking_rows(engine),
            inputs=inputs + own_inputs,
            fills=self.count,
        )
        return BacktestResult(
            replay,
            entrants,
            log.path,
            inputs,
            own_inputs,
            dropped,
            fill_events=self.fills,
            notes=self.notes,
        )
