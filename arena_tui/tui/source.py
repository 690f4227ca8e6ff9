"""The data source of the run screen: one backtest, stepped in a worker thread.

Why this module exists: the engine must run at its own pace, off the UI thread, and the UI
must see it only through immutable snapshots. :class:`BacktestSource` builds (or is handed)
a :class:`~arena_tui.run.backtest.Backtest` and runs it with two hooks: ``pace``, called before
each log input, which counts it, posts a snapshot when one is due (a few a second, wall
time) and lets :class:`~arena_tui.tui.playback.Playback` hold the run; and ``on_event``,
which queues every fill, rejection, cancel and close of the run's entries for the next
:class:`~arena_tui.tui.messages.Happened` message (never coalesced), each with its coin (a
rejected order's from the request the engine refused: ``Backtest.applying``). The run is
the same ``arena backtest`` run, run log included: watching it changes nothing it computes.

A live source (``arena paper``'s run on the feed) runs in real time and never waits: its
``pace`` only posts snapshots, and pausing freezes the view (one snapshot, then none until
resumed; the events are kept for then) while the run goes on consuming the feed.

A source started in arena-tui (its start screen, ``arena-tui LOG --strategy X``) carries
how its verdict is judged when the run reaches its end (``judging``: as ``arena backtest``
judges it, the twins trading on the same logs), gathers the run data report.html is drawn
from as the run goes (``report.rundata.Collector``), and once the run has reached its end
writes the run's report into its directory (``tui.judge.Reporter``: report.json,
report.html and the rest, as ``arena backtest --out`` does, then ``arena runs list``
shows it). One handed in by ``arena backtest --tui`` or ``arena paper --tui`` carries
none: that command judges the run and writes the report once the screen is closed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message

from arena_tui.report.rundata import Collector
from arena_tui.report.verdict import Judging
from arena_tui.run.backtest import Backtest
from arena_tui.run.build import build_backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.parts import BacktestResult
from arena_tui.run.twins import TWINS
from arena_tui.season.file import SeasonError
from arena_tui.tui.capture import Capture, take
from arena_tui.tui.judge import Reporter
from arena_tui.tui.messages import Happened, Outcome, RunEnded, SnapshotPosted
from arena_tui.tui.playback import Playback
from arena_tui.util.errors import KNOWN

if TYPE_CHECKING:
    from arena_tui.run.live import LiveFeed

INTERVAL_S = 0.1  # snapshots at most this often while the run plays at a speed
FLAT_OUT_S = 0.25  # and at max speed, where drawing would slow the engine (one GIL)
Post = Callable[[Message], object]
Pace = Callable[[int], bool]
Runner = Callable[[Pace], BacktestResult]  # one pass of a prepared run, paced


def watched_run(
    logs: Sequence[str | Path],
    strategy: str | Path,
    vs: str | None = None,
    season: str | Path | None = None,
    out: str | Path | None = None,
    **more: Any,
) -> RunConfig:
    """The config of a backtest as arena-tui runs it (its start screen, ``arena-tui LOG
    --strategy X``): a self-contained run log, no day cache (a watched run is paced, and
    may stop anywhere); ``more``: other fields of the config (latency_ms, seed...)."""
    return RunConfig(
        strategy=str(strategy),
        logs=tuple(str(p) for p in logs),
        vs=vs,
        season=None if season is None else str(season),
        out=None if out is None else str(out),
        run_log="full",
        cache=False,
        **more,
    )


def log_paths(config: RunConfig) -> list[str]:
    """The logs ``config``'s run reads, as the runner names them."""
    return list(config.logs)


def judging_of(config: RunConfig) -> Judging:
    """How ``arena backtest`` judges ``config``'s run by default: blocks chosen for the
    run, its seed, ``TWINS`` twins trading on its logs with its latency."""
    return Judging(
        epoch=None,
        seed=config.seed,
        twins=TWINS,
        sources=tuple(log_paths(config)),
        latency_ms=config.latency_ms,
    )


def prepare(config: RunConfig) -> tuple[Backtest, list[str]]:
    """The backtest ``arena backtest`` would run for ``config``, writing its run log (and
    the config); never with the day cache (a watched run is paced, and may stop anywhere)."""
    paths = log_paths(config)
    if not paths:
        raise SeasonError("choose at least one recording")
    bt, _ = build_backtest(
        config.replace(cache=False),
        subscribers=(Collector(), Capture()),  # report.html's run data, if judged; the screen's
        echo=False,  # the terminal is Textual's: what a strategy prints goes to the Activity tab
    )
    return bt, paths


def _collector(bt: Backtest) -> Collector | None:
    """The collector a run prepared here was given (``prepare``, ``of_paper``), if any."""
    return next((s for s in bt.subscribers if isinstance(s, Collector)), None)


def capture_of(bt: Backtest) -> Capture:
    """The capture a watched run was built with (``prepare``, ``of_paper``, or the command
    that handed it over: ``arena backtest --tui``)."""
    for s in bt.subscribers:
        if isinstance(s, Capture):
            return s
    raise AssertionError("a watched run is built with a tui.capture.Capture subscriber")


class _Watch:
    """The pace of one run and what it posts (worker thread only); what it shows is taken
    by the run's :class:`~arena_tui.tui.capture.Capture` as the run goes."""

    def __init__(
        self, bt: Backtest, playback: Playback, post: Post, clock: Callable[[], float]
    ) -> None:
        self.bt = bt
        self.playback = playback
        self.post = post
        self.clock = clock
        self.capture = capture_of(bt)
        self.applied = 0
        self.seq = 0
        self.next_post = 0.0
        self.shown_waiting: tuple[int, int] | None = None  # (inputs, seq) last shown paused
        playback.on_wait = self.on_wait

    def _found(self) -> None:
        """Tell the playback which entries traded since it last looked ("next fill")."""
        found = self.capture.found
        for entry in found:
            self.playback.found(entry)
        found.clear()

    def pace(self, t: int) -> bool:
        if self.capture.found:
            self._found()
        if self.clock() >= self.next_post:
            self.show(waiting=False)
        if not self.playback.pace(t):
            return False
        self.applied += 1
        return True

    def on_wait(self, timeout: float | None) -> None:
        if timeout is None:  # paused: show exactly where the run stands, once
            if self.shown_waiting != (self.applied, self.seq):
                self.show(waiting=True)
                self.shown_waiting = (self.applied, self.seq)
        elif timeout >= INTERVAL_S or self.clock() >= self.next_post:
            self.show(waiting=False)

    def show(self, *, waiting: bool) -> None:
        capture = self.capture
        if capture.pending:
            self.post(Happened(tuple(capture.pending)))
            capture.pending = []
        self.seq += 1
        snap = take(
            self.bt,
            seq=self.seq,
            inputs=self.applied,
            waiting=waiting,
            funding=capture.funding,
            history=capture.history,
        )
        self.post(SnapshotPosted(snap))
        state = self.playback.state()
        flat_out = state.speed is None or state.seeking
        self.next_post = self.clock() + (FLAT_OUT_S if flat_out else INTERVAL_S)


class _LiveWatch(_Watch):
    """The hooks of a live run: it never waits; a pause freezes the view, not the run."""

    frozen = False

    def pace(self, t: int) -> bool:
        playback = self.playback
        if self.capture.found:
            self._found()
        if playback.stopped:
            return False
        if playback.paused:
            if not self.frozen:
                self.frozen = True
                self.show(waiting=True)  # what the frozen view shows
        elif self.frozen or self.clock() >= self.next_post:
            self.frozen = False
            self.show(waiting=False)
        self.applied += 1
        return True


def _on_logs(bt: Backtest, logs: Sequence[str]) -> Runner:
    return lambda pace: bt.run(logs, pace=pace)


def _on_feed(bt: Backtest, feed: LiveFeed) -> Runner:
    return lambda pace: bt.run_live(feed, pace=pace)


class BacktestSource:
    """One run to watch; ``run`` is the worker's body (see the module docstring).

    ``make`` prepares the run (in the worker: it may read files or fetch ``meta``) and
    returns the runner and how to make its pass; ``live``: a run on the live feed, whose
    :class:`~arena_tui.run.live.LiveFeed` is ``feed`` once made (the screen reads its link).
    ``judging``: how the run is judged at its end (None: not here, see the module
    docstring; a live run's is set once made, its twins trading on its run log); the run
    is then reported by ``reporter``, once it has reached its end.
    """

    def __init__(
        self,
        make: Callable[[], tuple[Backtest, Runner]],
        *,
        title: str,
        live: bool = False,
        clock: Callable[[], float] = time.monotonic,
        judging: Judging | None = None,
    ) -> None:
        self._make = make
        self.title = title
        self.live = live
        self.clock = clock
        self.judging = judging
        self.result: BacktestResult | None = None
        self.outcome: Outcome | None = None
        self.started = False
        self.done = threading.Event()  # the worker has finished (run log closed)
        self.feed: LiveFeed | None = None
        self.reporter: Reporter | None = None  # writing the report, once the end is reached

    @classmethod
    def of_spec(cls, config: RunConfig) -> BacktestSource:
        """A backtest of ``config``, prepared in the worker."""
        vs = f" vs {config.vs}" if config.vs else ""
        logs = ", ".join(Path(p).name for p in config.logs)

        def make() -> tuple[Backtest, Runner]:
            bt, paths = prepare(config)
            return bt, _on_logs(bt, paths)

        title = f"{config.strategy_path().name}{vs} on {logs}"
        return cls(make, title=title, judging=judging_of(config))

    @classmethod
    def of_backtest(
        cls,
        bt: Backtest,
        logs: Sequence[str],
        *,
        title: str,
        judging: Judging | None = None,
    ) -> BacktestSource:
        """A run already built; ``judging``: None for ``arena backtest --tui`` (it reports
        after the screen), how to judge it for ``arena-tui LOG --strategy X``."""
        return cls(lambda: (bt, _on_logs(bt, logs)), title=title, judging=judging)

    @classmethod
    def of_paper(cls, config: RunConfig) -> BacktestSource:
        """``arena paper`` for ``config`` (a paper run's), prepared in the worker."""
        from arena_tui.run.paper import prepare_paper

        def make() -> tuple[Backtest, Runner]:
            bt, feed = prepare_paper(config, subscribers=(Collector(), Capture()), echo=False)
            source.feed = feed
            # the run log is the recording of the feed: the twins trade on it (arena paper)
            logged = () if bt.log.path is None else (str(bt.log.path),)
            source.judging = Judging(None, config.seed, TWINS, logged, config.latency_ms)
            return bt, _on_feed(bt, feed)

        vs = f" vs {config.vs}" if config.vs else ""
        coins = ",".join(config.live_part().coins) or "the season's coins"
        title = f"{config.strategy_path().name}{vs} live on {coins}"
        judging = Judging(None, config.seed, TWINS, (), config.latency_ms)  # logs: once made
        source = cls(make, title=title, live=True, judging=judging)
        return source

    @classmethod
    def of_feed(cls, bt: Backtest, feed: LiveFeed, *, title: str) -> BacktestSource:
        source = cls(lambda: (bt, _on_feed(bt, feed)), title=title, live=True)
        source.feed = feed
        return source

    def playback(self, speed: int | None, paused: bool) -> Playback:
        """How the run starts playing; a live run is real time, and starts shown."""
        return Playback(1) if self.live else Playback(speed, paused=paused)

    def run(self, playback: Playback, post: Post) -> Outcome:
        """Prepare the run and make its pass, posting snapshots and events; how it ended."""
        self.started = True
        try:
            try:
                bt, go = self._make()
            except KNOWN as exc:
                return self._end(post, Outcome(False, False, str(exc), 0, None, prepared=False))
            # the run data report.html is drawn from, for a run reported at its end
            collector = None if self.judging is None else _collector(bt)
            watch = (_LiveWatch if self.live else _Watch)(bt, playback, post, self.clock)
            error = None
            try:
                self.result = go(watch.pace)
            except KNOWN as exc:
                error = str(exc)
            watch.show(waiting=False)
            outcome = Outcome(bt.engine.over, playback.stopped, error, watch.applied, bt.log.path)
            how, result, log = self.judging, self.result, bt.log.path
            ended = error is None and not outcome.stopped and result is not None
            if ended and how is not None and result is not None and log is not None:
                kind = "paper" if self.live else "backtest"
                self.reporter = Reporter(result, how, log.parent, collector, kind=kind).start()
            return self._end(post, outcome)
        finally:
            self.done.set()

    def _end(self, post: Post, outcome: Outcome) -> Outcome:
        self.outcome = outcome
        post(RunEnded(outcome))
        return outcome
