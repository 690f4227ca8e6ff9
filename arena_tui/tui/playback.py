"""Playback of a run: pause, speed and seek, shared by the UI thread and the engine's worker.

Why this module exists: the engine runs in a worker thread as fast as it can, and the
viewer decides how fast simulated time passes. The worker calls :meth:`Playback.pace`
before each log input (the backtest runner's ``pace`` hook): at a speed it waits until the
wall clock catches up with the input's time; paused, it waits until resumed; seeking, it
runs flat out until :meth:`found` says a fill or a rejection happened (of the entry the
seek names, when it names one), then pauses. The UI
thread calls the other methods; one condition variable joins the two. The clock and the
wait are injected, so the pacing is tested without real time.

Pacing is wall time, not money: the one place here where floats belong.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

SPEEDS: tuple[int | None, ...] = (1, 10, 60, 600, None)  # None: as fast as the engine goes
LAG_S = 0.5  # further behind the clock than this: start counting again (no burst to catch up)

Waiter = Callable[[threading.Condition, float | None], None]


def _wait(cond: threading.Condition, timeout: float | None) -> None:
    cond.wait(timeout)


def speed_label(speed: int | None) -> str:
    return "max" if speed is None else f"{speed}x"


def parse_speed(text: str) -> int | None:
    """``1``, ``10x``, ``60``, ``600x`` or ``max``; ValueError for anything else."""
    word = text.strip().lower()
    if word == "max":
        return None
    word = word.removesuffix("x")
    if word.isdigit() and int(word) in SPEEDS:
        return int(word)
    raise ValueError(f"speed must be one of 1, 10, 60, 600 or max, not {text!r}")


@dataclass(frozen=True)
class State:
    """What playback is doing, as a snapshot reports it."""

    speed: int | None
    paused: bool
    seeking: bool


class Playback:
    """See the module docstring.

    ``on_wait(timeout)`` runs in the worker just before it waits (``None``: paused, until
    told otherwise), so the viewer can be shown exactly where the run stands.
    """

    def __init__(
        self,
        speed: int | None = 60,
        *,
        paused: bool = False,
        clock: Callable[[], float] = time.monotonic,
        wait: Waiter = _wait,
    ) -> None:
        self._cond = threading.Condition()
        self._clock = clock
        self._wait = wait
        self.speed = speed
        self.paused = paused
        self.seeking = False
        self.seek_entry: str | None = None  # a seek stops at this entry's events only
        self.stopped = False
        self._hit = False
        self._anchor: tuple[float, int] | None = None
        self._quick = False
        self.on_wait: Callable[[float | None], None] | None = None
        with self._cond:
            self._changed()

    # ---- the UI thread ---------------------------------------------------------------

    def state(self) -> State:
        with self._cond:
            return State(self.speed, self.paused, self.seeking)

    def toggle(self) -> None:
        with self._cond:
            self.paused = not self.paused
            self.seeking = False
            self._changed()

    def pause(self) -> None:
        with self._cond:
            self.paused = True
            self.seeking = False
            self._changed()

    def resume(self) -> None:
        with self._cond:
            self.paused = False
            self._changed()

    def set_speed(self, speed: int | None) -> None:
        with self._cond:
            self.speed = speed
            self._changed()

    def faster(self) -> None:
        self.set_speed(SPEEDS[min(SPEEDS.index(self.speed) + 1, len(SPEEDS) - 1)])

    def slower(self) -> None:
        self.set_speed(SPEEDS[max(SPEEDS.index(self.speed) - 1, 0)])

    def seek(self, entry: str | None = None) -> None:
        """Run flat out to the next fill or rejection (of ``entry``, if given), then pause."""
        with self._cond:
            self.seek_entry = entry
            self.seeking = True
            self.paused = False
            self._hit = False
            self._changed()

    def stop(self) -> None:
        """End the run at the next input (the runner then closes its log)."""
        with self._cond:
            self.stopped = True
            self._changed()

    def _changed(self) -> None:
        self._anchor = None  # a new speed (or a resume) counts from now
        self._quick = not self.paused and not self.stopped and (self.seeking or self.speed is None)
        self._cond.notify_all()

    # ---- the worker thread -----------------------------------------------------------

    def found(self, entry: str | None = None) -> None:
        """A fill or a rejection (of ``entry``) happened: a seek for it pauses before the next
        input."""
        if self.seeking and (self.seek_entry is None or entry == self.seek_entry):
            with self._cond:
                self._hit = True
                self._quick = False

    def pace(self, t: int) -> bool:
        """Called before the log input at ``t``; False ends the run."""
        if self._quick:
            return True
        with self._cond:
            while True:
                if self.stopped:
                    return False
                if self._hit:
                    self._hit = False
                    self.seeking = False
                    self.paused = True
                    self._changed()
                if self.paused:
                    self._block(None)
                    continue
                if self.seeking or self.speed is None:
                    return True
                delay = self._delay(t)
                if delay <= 0:
                    return True
                self._block(delay)

    def _delay(self, t: int) -> float:
        """Seconds until input ``t`` is due at the current speed (<= 0: now)."""
        assert self.speed is not None
        now = self._clock()
        if self._anchor is None:
            self._anchor = (now, t)
        wall0, t0 = self._anchor
        delay = wall0 + (t - t0) / (1000 * self.speed) - now
        if delay < -LAG_S:
            self._anchor = (now, t)
        return delay

    def _block(self, timeout: float | None) -> None:
        if self.on_wait is not None:
            self.on_wait(timeout)
        self._wait(self._cond, timeout)
