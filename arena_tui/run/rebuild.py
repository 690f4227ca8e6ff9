"""A run's result rebuilt from a log alone, for ``arena replay LOG --out DIR``.

Why this module exists: the report (``arena_tui.report.render``) renders a
:class:`BacktestResult`: entrants with the figures their engine events add up to. A log
(a backtest's run log, a hosted season's input log) holds everything those figures come
from, so ``arena replay`` rebuilds them from the events of its pass: an entrant per
registration, in the order registered (a backtest registers its strategy first, so the
verdict compares the same entries), each with its :class:`EntryStats`, every fill in
order, and the notes of its orders (``run.quotes``). There is no strategy file (the
report names none) and no exit value (it needs the runner's books).
"""

from __future__ import annotations

from pathlib import Path

from arena_tui.run.parts import BacktestResult, Entrant
from arena_tui.run.quotes import OrderNotes
from arena_tui.run.replay import ReplayResult
from arena_tui.run.strategy import Strategy
from engine import events as ev

NO_FILE = Path()  # an entrant rebuilt from a log: ``path.name`` is empty, no strategy file


class Rebuilt:
    """Give ``on_event`` to ``run.replay.replay`` (and ``notes`` too); then ``result``."""

    def __init__(self) -> None:
        self.entrants: dict[str, Entrant] = {}
        self.fills: list[ev.Fill] = []
        self.notes = OrderNotes()
        self._nobody = Strategy()

    def on_event(self, e: ev.AnyEvent) -> None:
        kind = type(e)
        if kind is ev.Registered:
            name = e.entry  # type: ignore[union-attr]
            self.entrants[name] = Entrant(name, self._nobody, NO_FILE)
            return
        entry = getattr(e, "entry", None)
        if entry is None:
            return
        if kind is ev.Fill:
            self.fills.append(e)  # type: ignore[arg-type]
        who = self.entrants.get(entry)
        if who is None:
            return
        if kind is ev.MinuteMark:
            who.stats.mark(e, None)  # type: ignore[arg-type]
        else:
            who.stats.event(e)

    def result(self, replay: ReplayResult, run_log: Path | None) -> BacktestResult:
        """The run as the report sees it; ``inputs`` counts every input of the logs (a log
        does not say which were a strategy's), none dropped."""
        return BacktestResult(
            replay,
            list(self.entrants.values()),
            run_log,
            replay.inputs,
            0,
            0,
            fill_events=self.fills,
            notes=self.notes,
        )
