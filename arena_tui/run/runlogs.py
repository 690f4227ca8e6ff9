"""Which run log a run writes, and its header: the runner's one choice about files.

Why this module exists: a run on the live feed writes a durable log (each line reaches the
OS before the engine applies it: ``logs.runlog.DurableRunLog``), a recorded run a full
(``RunLog``) or thin (``logs.thinlog.ThinRunLog``) one as its config says, and a run with
no directory (twins, sweep jobs, benches) writes none and gathers or hashes nothing
(:class:`NoRunLog`): no one could replay what was never written, so its ``log_sha256`` is
empty. The season file goes beside the log, so the directory replays alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from arena_tui.logs.runlog import DurableRunLog, RunLog
from arena_tui.logs.thinlog import ThinRunLog
from arena_tui.run.rundir import RUN_LOG
from arena_tui.season.file import log_header, write_season
from engine import Season


class NoRunLog(RunLog):
    """No run log: every line is dropped as it comes, nothing hashed, no file opened."""

    gathers = False  # nothing to hand it: a source need not even copy a line for it

    def __init__(self) -> None:
        self.path = None

    def write(self, raw: bytes) -> None:
        return None

    def own(self, raw: bytes) -> None:
        return None

    def close(self) -> None:
        return None


def open_run_log(
    season: Season,
    run_dir: Path | None,
    generator: str,
    sources: Sequence[str],
    entries: Sequence[str],
    *,
    feed: str | None,
    full: bool,
) -> RunLog | ThinRunLog:
    """The run log of a run in ``run_dir`` (None: no file), its header written.

    ``feed``: the live feed's URL, for a run on it (the header names it; the log is
    durable); ``full``: the market lines too (else a thin log: the own inputs and the
    sources' hashes)."""
    if run_dir is None and feed is None:
        return NoRunLog()
    header = log_header(season, generator)
    header.update(sources=[Path(s).name for s in sources], entries=list(entries))
    if feed is not None:
        header["feed"] = feed
    path = None if run_dir is None else run_dir / RUN_LOG
    log: RunLog | ThinRunLog
    if feed is not None:
        log = DurableRunLog(path, header)
    elif not full and path is not None:
        log = ThinRunLog(path, header)
    else:
        log = RunLog(path, header)
    if run_dir is not None:
        write_season(season, run_dir)
    return log
