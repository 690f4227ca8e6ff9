"""The verdict of a run watched to its end: the answers ``arena backtest`` prints for it.

Why this module exists: a run started in arena-tui (its start screen, or ``arena-tui LOG
--strategy X``) writes its run log and no report, yet the builder watching it to the end
wants the same three answers and floor the terminal report would give. So the run screen
judges it here when it ends, with the report's own document (``report.render.report_doc``
after ``report.verdict.measure_twins``): the same texts, word for word, as report.json and
the terminal. ``arena backtest --tui`` judges its run itself once the screen is closed,
so the screen does not (the twins' pass would run twice).

The twins' pass is one more engine pass over the run's logs (seconds for a day), so the
screen runs this in a worker thread; the viewer may leave meanwhile (quit, or back to the
start screen), and the pass then stops at its next progress update (``Stopped``), so no
thread outlives the app by more than a moment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena_tui.report.render import report_doc
from arena_tui.report.verdict import Judging, measure_twins
from arena_tui.run.parts import BacktestResult
from arena_tui.util.human import plural


class Stopped(Exception):
    """The viewer left while the twins traded: nobody is waiting for the verdict."""


class _Until:
    """The twins' pass's progress line, which only asks whether to go on."""

    def __init__(self, stopped: Callable[[], bool]) -> None:
        self.stopped = stopped

    def update(self, inputs: int, t: int) -> None:
        if self.stopped():
            raise Stopped

    def done(self) -> None:
        pass


def judging_line(how: Judging) -> str:
    """What the screen says while the verdict is judged."""
    if how.twins > 0 and how.sources:
        return f"judging: trading {plural(how.twins, 'random twin')}..."
    return "judging..."


def judge(
    result: BacktestResult, how: Judging, stopped: Callable[[], bool] = lambda: False
) -> dict[str, Any]:
    """report.json's "verdict" for ``result`` judged as ``how`` says (``Stopped`` when
    ``stopped()`` turns true during the twins' pass)."""
    twins = measure_twins(result, how, _Until(stopped))
    verdict: dict[str, Any] = report_doc(result, judging=how, twins=twins)["verdict"]
    return verdict
