"""The progress line of a long sweep: trials asked, jobs done, the best so far, time left.

The driver updates a :class:`Progress` after each stored job and calls its ``report``;
:class:`Line` writes it on stderr when stderr is a terminal (a pipe or a file gets none).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from arena_tui.report.table import pct
from arena_tui.sweep.config import Config, split_days
from arena_tui.util.human import duration, plural


@dataclass
class Progress:
    """What the progress line shows; ``report`` is called after each stored job."""

    report: Callable[[Progress], None] = lambda p: None
    trials: int = 0  # asked so far
    total: int | None = None  # trials the search will ask, if known
    jobs_done: int = 0  # run now (not found in the store)
    jobs_reused: int = 0
    jobs_left: int = 0  # in the current batch
    best: tuple[str, int] | None = None
    started: float = field(default_factory=time.monotonic)


class Line:
    """The progress line on stderr (a terminal only): trials, best so far, time left."""

    def __init__(self, total_jobs: int | None) -> None:
        self.enabled = sys.stderr.isatty()
        self.total_jobs = total_jobs
        self.shown = False

    def text(self, p: Progress) -> str:
        elapsed = time.monotonic() - p.started
        text = f"sweep: {plural(p.trials, 'trial')} asked, {plural(p.jobs_done, 'job')} done"
        if p.best is not None:
            text += f", best {p.best[0]} {pct(p.best[1])}"
        if self.total_jobs and p.jobs_done:
            left = max(self.total_jobs - p.jobs_done - p.jobs_reused, 0)
            text += f", ~{duration(int(elapsed / p.jobs_done * left * 1000))} left"
        return text

    def __call__(self, p: Progress) -> None:
        if self.enabled:
            sys.stderr.write(f"\r{self.text(p)}\033[K")
            sys.stderr.flush()
            self.shown = True

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def expected_jobs(cfg: Config, trials: int | None) -> int | None:
    if trials is None:
        return None
    batches = math.ceil(trials / cfg.batch_size)
    return sum(batches * len(train) + len(held) for train, held in split_days(cfg))
