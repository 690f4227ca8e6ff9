"""Stalls of the host's event loop: how late it runs, and what it was doing when it stopped.

Why this module exists: everything the host does for the traders (orders, the feed, the log's
group commit) runs on one event loop, so anything that holds that loop (a long computation,
a C call that keeps the interpreter's lock, the garbage collector, the machine itself) delays
every order at once. ``LoopWatch`` wakes every ``TICK_S`` and measures how late it woke: the
``arena_loop_lag_seconds`` histogram on ``/metrics`` and the count of stalls over
``--stall-trace``. With ``--stall-trace MS`` a watchdog thread is given a deadline before
each sleep: if the loop has not woken ``MS`` after it should have, the watchdog writes every
thread's stack to the trace file (``sys._current_frames``, in faulthandler's format), again
every ``tick + MS`` while the stall lasts, so a stall is caught while it happens. When the
loop wakes again the watch appends one line saying how long the stall lasted and when, so
each stack in the file is followed by its stall's length.

A stall inside one long C call keeps the interpreter's lock, so no Python thread can look
at the stack until the call returns: the watchdog then writes it at once, and the frame that
made the call is still the innermost (measured). For a stall that does not end (a hang in C)
Python's ``faulthandler`` is armed ``C_FALLBACK_S`` (1 s) after each deadline; the watchdog
cancels it whenever it runs first. faulthandler's C thread reads the other threads' frames
without the lock, which crashes the process if one of them runs Python meanwhile (measured:
a dump every 0.5 ms beside one thread calling functions segfaults within seconds). It fires
only when the watchdog could not run for a second past a deadline: a hang, a C call that
long, or a process stopped or starved of CPU that long (then it races the threads waking:
the one case left where it could crash). faulthandler's timer is one per process: only one
``LoopWatch`` with a trace runs at a time.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO

TICK_S = 0.1  # how often the watch wakes (arming the watchdog: ~0.07 ms a wake)
C_FALLBACK_S = 1.0  # the watchdog held off the lock this long past a deadline: faulthandler
MAX_FRAMES = 100  # a stack's innermost frames written (faulthandler's limit too)
TRACE_SUFFIX = ".stalls"  # the trace file beside the log: ``season.jsonl.stalls``
MAIN_MARK = "# the loop's thread: 0x"  # written at the start: whose stack is the loop's
STALL_MARK = "# stall: the loop woke "  # written when the loop runs again
_HEX = re.compile(r"[0-9a-fA-F]+")
_STALL_LINE = re.compile(
    re.escape(STALL_MARK) + r"(\d+) ms late; it ran (\d+) ms of the \d+, the process (\d+); "
    r"at \S+ \(([0-9.]+)\)$"
)


def trace_path(log: Path) -> Path:
    return log.with_name(log.name + TRACE_SUFFIX)


class LoopWatch:
    """Wakes every ``tick_s`` and hands each wake's lateness (seconds) to its observers."""

    def __init__(
        self,
        trace: Path | None = None,
        trace_after_ms: int = 250,
        tick_s: float = TICK_S,
        fallback_s: float = C_FALLBACK_S,
    ) -> None:
        """``trace``: the file the stacks of stalls longer than ``trace_after_ms`` go to
        (None: no trace; the lateness is measured either way); ``fallback_s``: when
        faulthandler writes them instead, the watchdog not having run since the deadline."""
        self.trace = trace
        self.fallback_s = fallback_s
        self.after_s = trace_after_ms / 1000
        self.tick_s = tick_s
        self.stalls = 0  # wakes later than ``trace_after_ms``
        self.worst = 0.0
        self._file: IO[bytes] | None = None
        self._observers: list[Callable[[float], object]] = []

    def observe(self, observer: Callable[[float], object]) -> None:
        """Call ``observer(seconds)`` with each wake's lateness (the metrics' histogram)."""
        self._observers.append(observer)

    async def run(self) -> None:
        clock = time.perf_counter
        dog: Watchdog | None = None
        if self.trace is not None:
            self._file = open(self.trace, "ab")  # noqa: SIM115 (closed in finally)
            self._say(f"{MAIN_MARK}{threading.get_ident():x}\n")
            every = self.tick_s + self.after_s
            dog = Watchdog(self._file.fileno(), every, self.fallback_s).start()
        try:
            while True:
                due, ran, all_ran = clock() + self.tick_s, time.thread_time(), time.process_time()
                if dog is not None:
                    dog.arm(due + self.after_s)
                await asyncio.sleep(self.tick_s)
                if dog is not None:
                    dog.disarm()  # (whatever it wrote of this stall is in before its line)
                late = max(0.0, clock() - due)
                self._seen(late, time.thread_time() - ran, time.process_time() - all_ran)
        finally:
            if dog is not None:
                dog.stop()
            if self._file is not None:
                self._file.close()
                self._file = None

    def _seen(self, late: float, ran: float = 0.0, process_ran: float = 0.0) -> None:
        """``late``: seconds the wake came after its time; ``ran``: CPU seconds the loop's
        thread had meanwhile, ``process_ran`` the whole process's (all its threads). The
        loop's thread near the stall's length: its own work held it; far less while the
        process ran: another thread held the interpreter's lock; both far less: the
        process was waiting for a CPU (the machine's other load)."""
        for observer in self._observers:
            observer(late)
        self.worst = max(self.worst, late)
        if late > self.after_s:
            self.stalls += 1
            if self._file is not None:
                wall = time.time()
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(wall))
                took = (self.tick_s + late) * 1000
                self._say(
                    f"{STALL_MARK}{late * 1000:.0f} ms late; it ran {ran * 1000:.0f} ms of "
                    f"the {took:.0f}, the process {process_ran * 1000:.0f}; at {stamp} "
                    f"({wall:.3f})\n"
                )

    def _say(self, text: str) -> None:
        assert self._file is not None
        os.write(self._file.fileno(), text.encode())  # (faulthandler writes the fd too)


class Watchdog:
    """The thread that writes every thread's stack when the loop misses its deadline.

    ``arm(deadline)`` before each sleep (``time.perf_counter`` seconds), ``disarm()`` on
    waking. A deadline passed while armed is a stall: the stacks go to ``fd`` at once, then
    every ``every`` seconds until the loop disarms. Each arm also sets faulthandler to dump
    ``fallback_s`` after the deadline, for a stall that keeps the interpreter's lock (the
    watchdog cannot run then); the watchdog cancels it whenever it runs first."""

    def __init__(self, fd: int, every: float, fallback_s: float = C_FALLBACK_S) -> None:
        self.fd, self.every, self.fallback_s = fd, every, fallback_s
        self._cv = threading.Condition()
        self._deadline: float | None = None
        self._idle = False  # waiting with no deadline (only then does an arm wake it)
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="arena-stall-watchdog", daemon=True)

    def start(self) -> Watchdog:
        self._thread.start()
        return self

    def arm(self, deadline: float) -> None:
        with self._cv:
            self._deadline = deadline
            self._fallback(deadline)
            if self._idle:  # (else it finds this later deadline waking for the earlier one)
                self._cv.notify()

    def disarm(self) -> None:
        with self._cv:  # (waits for a dump under way: it belongs to the stall just over)
            self._deadline = None

    def stop(self) -> None:
        with self._cv:
            self._stopped = True
            self._cv.notify()
        self._thread.join()
        faulthandler.cancel_dump_traceback_later()

    def _fallback(self, deadline: float) -> None:
        after = max(0.001, deadline + self.fallback_s - time.perf_counter())
        faulthandler.dump_traceback_later(after, repeat=True, file=self.fd)

    def _run(self) -> None:
        with self._cv:
            while not self._stopped:
                deadline, now = self._deadline, time.perf_counter()
                if deadline is None or now < deadline:
                    self._idle = deadline is None
                    self._cv.wait(None if deadline is None else deadline - now)
                    self._idle = False
                    continue
                faulthandler.cancel_dump_traceback_later()  # this thread runs: no C stall
                os.write(self.fd, stacks_text(threading.get_ident()).encode(errors="replace"))
                self._deadline = time.perf_counter() + self.every
                self._fallback(self._deadline)


def stacks_text(skip: int) -> str:
    """Every thread's stack but ``skip``'s, innermost frame first, as faulthandler writes
    them (``Thread 0x...`` then one ``  File "...", line N in f`` per frame)."""
    rows: list[str] = []
    for ident, frame in sys._current_frames().items():
        if ident == skip:
            continue
        rows.append(f"Thread 0x{ident:016x} (most recent call first):")
        f: FrameType | None = frame
        for _ in range(MAX_FRAMES):
            if f is None:
                break
            code = f.f_code
            rows.append(f'  File "{code.co_filename}", line {f.f_lineno} in {code.co_name}')
            f = f.f_back
        rows.append("")
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
class Stall:
    """One stall a trace file holds: how late the loop woke, when (Unix seconds, the wall
    clock), how much of the time the loop's thread ran, and its stacks caught during it
    (one each ``tick + MS`` it lasted; none if it ended before the first was written),
    innermost frame first, each frame as ``dir/file.py:line (function)``."""

    ms: float
    ended: float
    stacks: tuple[tuple[str, ...], ...]
    ran_ms: float  # CPU the loop's thread had from the sleep's start to the late wake
    process_ran_ms: float  # and the whole process (every thread)

    @property
    def waiting_for(self) -> str:
        """What held the loop by the CPU times: ``work`` (the loop's own code ran most of
        the stall), ``lock`` (another thread of the process ran: it held the interpreter's
        lock) or ``cpu`` (the process hardly ran: the machine's other load)."""
        took = self.ms + TICK_S * 1000
        if self.ran_ms >= took / 2:
            return "work"
        return "lock" if self.process_ran_ms - self.ran_ms >= took / 2 else "cpu"

    @property
    def stack(self) -> tuple[str, ...]:
        """The first stack caught (empty if none)."""
        return self.stacks[0] if self.stacks else ()


def read_trace(path: Path) -> list[Stall]:
    """The stalls written to a trace file, oldest first. The file may be read while it
    is written: a line cut at its end is passed over (a stall counts once its own mark
    line is whole)."""
    out: list[Stall] = []
    main = -1
    stacks: list[tuple[str, ...]] = []
    stack: list[str] = []
    taking = False
    for raw in path.read_text(errors="replace").splitlines():
        if raw.startswith(MAIN_MARK):
            m = _HEX.match(raw, len(MAIN_MARK))
            main = int(m.group(), 16) if m else main
        elif raw.startswith(("Thread 0x", "Current thread 0x")):
            m = _HEX.match(raw, raw.index("0x") + 2)
            taking = m is not None and int(m.group(), 16) == main
            if taking:
                stack = []
                stacks.append(())
        elif raw.startswith(STALL_MARK):
            m = _STALL_LINE.match(raw)
            if m is not None:
                ms, ran, both, ended = (float(x) for x in m.group(1, 2, 3, 4))
                out.append(Stall(ms, ended, tuple(stacks), ran, both))
            stacks, taking = [], False
        elif taking and raw.startswith("  File "):
            stack.append(_frame(raw))
            stacks[-1] = tuple(stack)
    return out


def _frame(row: str) -> str:
    """``  File "/x/host/session.py", line 12 in _flush`` -> ``host/session.py:12 (_flush)``."""
    body = row.strip()[len("File ") :]
    name, _, rest = body.partition(", line ")
    line, _, func = rest.partition(" in ")
    path = Path(name.strip(chr(34)))
    return f"{path.parent.name}/{path.name}:{line} ({func})"
