"""The report of a run watched to its end: the files ``arena backtest --out`` writes, and
the verdict the Score tab shows.

Why this module exists: a run started in arena-tui (its start screen, or ``arena-tui LOG
--strategy X``) must end as ``arena backtest``'s does, or it is a run log nobody can find:
its directory gets report.json, fills.csv, fills.jsonl, equity.csv, chart.svg, the run
data and report.html beside the run log, and ``arena runs list`` shows it. So when such a
run reaches its end it is reported here with the report's own function
(``report.render.write_files``, which judges it, writes every file and indexes the run):
the Score tab's answers are report.json's, word for word. ``arena backtest --tui`` writes
its run's report itself once the screen is closed, so it is not reported here (the twins
would trade twice).

Judging takes the twins' pass, one more engine pass over the run's logs (seconds for a
day), so a :class:`Reporter` writes the report in a thread of its own, which neither the
screen nor the app stops: the viewer may go back to the start screen or quit meanwhile,
and arena-tui waits for it once the app is gone, saying so on stderr. A run that reached
its end always gets its report.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_tui.report.html import HTML_FILE
from arena_tui.report.render import write_files
from arena_tui.report.rundata import Collector
from arena_tui.report.skill import planned_twins
from arena_tui.report.verdict import Judging
from arena_tui.run.parts import BacktestResult
from arena_tui.util.errors import KNOWN
from arena_tui.util.human import plural


def judging_line(how: Judging, result: BacktestResult) -> str:
    """What the screen says while the run is judged and its report written: the twins the
    pass will really trade (``report.skill.planned_twins``: none for a strategy with no
    fills or no room to move, fewer than asked for one with many legs)."""
    n = planned_twins(result, how)
    if n > 0:
        return f"judging: trading {plural(n, 'random twin')}, then writing the report..."
    return "judging, then writing the report..."


@dataclass(frozen=True)
class Reported:
    """How the report went: the verdict (report.json's) and the run directory, or the one
    line saying why there is none."""

    verdict: dict[str, Any] | None
    out: Path | None
    error: str | None = None

    @property
    def page(self) -> Path | None:
        """report.html, when it was written (it needs plotly)."""
        if self.out is None or not (self.out / HTML_FILE).is_file():
            return None
        return self.out / HTML_FILE


def one_line(exc: BaseException) -> str:
    """An unexpected failure as one line (its type and first line), never a traceback."""
    line = next(iter(str(exc).splitlines()), "")
    return f"{type(exc).__name__}: {line}".rstrip(": ")


class Reporter:
    """Writes one run's report in a thread of its own (see the module docstring);
    ``listen`` hears how it went, once it has (at once if it already has)."""

    def __init__(
        self,
        result: BacktestResult,
        how: Judging,
        out: Path,
        collector: Collector | None,
        *,
        kind: str = "backtest",
    ) -> None:
        self.result = result
        self.how = how
        self.out = out
        self.collector = collector
        self.kind = kind
        self.outcome: Reported | None = None
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Reported], object]] = []

    def start(self) -> Reporter:
        # a daemon: arena-tui's command line waits for it (``wait``); a process killed
        # meanwhile leaves the run log, as any run cut short does
        threading.Thread(target=self.run, name="arena-tui report", daemon=True).start()
        return self

    def run(self) -> Reported:
        try:
            rundata = None if self.collector is None else self.collector.data()
            doc = write_files(
                self.result, self.out, judging=self.how, kind=self.kind, rundata=rundata
            )
            outcome = Reported(doc["verdict"], self.out)
        except KNOWN as exc:
            outcome = Reported(None, None, str(exc))
        except Exception as exc:  # any failure: one line on the screen, never a traceback
            outcome = Reported(None, None, one_line(exc))
        with self._lock:
            self.outcome = outcome
            listeners, self._listeners = self._listeners, []
        self.done.set()
        for listen in listeners:
            listen(outcome)
        return outcome

    def listen(self, listener: Callable[[Reported], object]) -> None:
        with self._lock:
            outcome = self.outcome
            if outcome is None:
                self._listeners.append(listener)
                return
        listener(outcome)
