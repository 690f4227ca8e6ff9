"""Around a strategy's hooks: where their output goes, how long they may run, how they end.

Why this module exists: a hook is someone else's code running inside the run, and nothing
it does may break the run or its log. The runner (``Backtest._call``) marks which hook of
which entry is running in a :class:`Guard`, three stores a call; around the whole pass
``Guard.running`` sets up the rest, so a call costs nothing more:

- **Output.** What a hook writes to ``sys.stdout`` or ``sys.stderr`` (``print``, a
  warning) is taken off both (see ``arena_tui.run.output``: only the runner's thread, only
  while a hook runs) and said, line by line, three ways: into ``<run dir>/<entry>.log``
  (each line after the simulated time it was written at), to the command's stderr as
  ``[entry] line`` (``echo``; arena-tui turns it off), and to ``on_said`` (arena-tui's
  Activity tab). Stdout stays the command's, so ``--json`` stays pure JSON.
- **Time.** A watchdog thread looks at the mark a few times a second; a call still running
  after ``timeout_s`` is stopped with :class:`HookTimeout`, raised into the runner's thread
  (by SIGALRM in the main thread, so a blocking ``time.sleep`` is cut short too; else with
  ``PyThreadState_SetAsyncExc``, as in arena-tui's worker thread, where it lands at the
  hook's next Python line). Its message names where the hook was: the line of the
  strategy file, read from the runner's frames when it fired. A hook that catches it and
  returns still stops the run; one that catches it and goes on is stopped again.
- **Endings.** Any exception out of a hook, a ``BaseException`` too (``SystemExit``, a
  ``KeyboardInterrupt`` it raised), becomes one :class:`StrategyError` line naming the
  file, the line, the hook and the entry: exit 1, the run log so far kept. A real Ctrl-C
  while a hook runs (the SIGINT handler is wrapped to tell it apart) is :class:`Interrupted`,
  the same line, exit 130 like any Ctrl-C.
"""

from __future__ import annotations

import ctypes
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

from arena_tui.run.fields import RefusedCall, StrategyError, line_in
from arena_tui.run.loader import failure, located
from arena_tui.run.output import Lines, routed
from arena_tui.util.human import iso_ms

if TYPE_CHECKING:
    from arena_tui.run.parts import Entrant

DEFAULT_TIMEOUT_S = 10.0
CLEAR_LINE = "\r\033[K"  # a progress line may be on the terminal's last line


class HookTimeout(BaseException):
    """Raised into the runner's thread in a hook that ran past its time budget (a
    BaseException, so a strategy's ``except Exception`` does not swallow it)."""


class Interrupted(StrategyError):
    """Ctrl-C while a hook was running: one line naming it, and exit 130."""

    exit_code = 130


@dataclass(frozen=True)
class Said:
    """One line a strategy wrote while a hook ran, at the simulated time ``t``."""

    t: int
    entry: str
    text: str


class Guard:
    """The running hook of one run, and what is done around it (module docstring)."""

    def __init__(self, out_dir: Path | None, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.out_dir = out_dir
        self.timeout_s = timeout_s  # <= 0: no limit
        self.echo = True
        self.on_said: Callable[[Said], None] | None = None
        # the mark, set by the runner around each call
        self.entrant: Entrant | None = None
        self.hook = ""
        self.calls = 0
        # the pass
        self.thread: int | None = None
        self.stuck: str | None = None  # the timeout's line, once it fired (the run stops)
        self._fired = -1  # the call it fired at
        self._ctrl_c: BaseException | None = None
        self._lines: dict[str, tuple[Lines, list[int]]] = {}  # name -> (lines, [last t])
        self._files: dict[str, IO[str]] = {}
        self._err: IO[str] = sys.stderr
        self._clear = ""

    # ---- around a pass ---------------------------------------------------------------

    @contextmanager
    def running(self, entrants: Iterable[Entrant]) -> Iterator[None]:
        """Output routed, the watchdog on, Ctrl-C told apart, for the block (the pass)."""
        self.thread = threading.get_ident()
        main = threading.current_thread() is threading.main_thread()
        if self.out_dir is not None:
            for e in entrants:  # an earlier run's output is not this one's
                (self.out_dir / f"{e.name}.log").unlink(missing_ok=True)
        with ExitStack() as stack:
            stack.callback(self._close)
            _, self._err = stack.enter_context(routed(self._take))
            self._clear = CLEAR_LINE if _isatty(self._err) else ""
            if main:
                stack.callback(self._note_ctrl_c())
            if self.timeout_s > 0:
                stack.callback(self._watchdog(main))
            yield

    def _close(self) -> None:
        for name, (lines, last) in self._lines.items():
            for line in lines.rest():
                self._say(name, last[0], line)
        for f in self._files.values():
            f.close()
        self._files.clear()
        self.thread = None

    def _note_ctrl_c(self) -> Callable[[], object]:
        """Wrap the SIGINT handler to remember the KeyboardInterrupt it raises; the undo."""
        old = signal.getsignal(signal.SIGINT)
        if not callable(old):
            return lambda: None
        previous = old

        def handler(signum: int, frame: FrameType | None) -> Any:
            try:
                return previous(signum, frame)
            except KeyboardInterrupt as exc:
                self._ctrl_c = exc
                raise

        signal.signal(signal.SIGINT, handler)
        return lambda: signal.signal(signal.SIGINT, old)

    # ---- output ----------------------------------------------------------------------

    def _take(self, text: str) -> bool:
        e = self.entrant
        if e is None or threading.get_ident() != self.thread:
            return False
        kept = self._lines.get(e.name)
        if kept is None:
            kept = self._lines[e.name] = (Lines(), [0])
        t = kept[1][0] = e.ctx.t if e.ctx is not None else 0
        for line in kept[0].feed(text):
            self._say(e.name, t, line)
        return True

    def _say(self, name: str, t: int, line: str) -> None:
        if self.out_dir is not None:
            f = self._files.get(name)
            if f is None:
                path = self.out_dir / f"{name}.log"
                f = self._files[name] = path.open("w", encoding="utf-8", errors="replace")
            f.write(f"{iso_ms(t)} {line}\n")
        if self.echo:
            self._err.write(f"{self._clear}[{name}] {line}\n")
        if self.on_said is not None:
            self.on_said(Said(t, name, line))

    # ---- time ------------------------------------------------------------------------

    def _watchdog(self, main: bool) -> Callable[[], None]:
        """Start the watchdog thread; returns what stops it."""
        thread = self.thread
        assert thread is not None
        kill: Callable[[], None]
        undo: Callable[[], object] = lambda: None  # noqa: E731
        if main and signal.getsignal(signal.SIGALRM) == signal.SIG_DFL:

            def alarm(signum: int, frame: FrameType | None) -> None:
                if self.entrant is not None and self.calls == self._fired:
                    raise HookTimeout

            signal.signal(signal.SIGALRM, alarm)
            undo = lambda: signal.signal(signal.SIGALRM, signal.SIG_DFL)  # noqa: E731
            kill = lambda: signal.pthread_kill(thread, signal.SIGALRM)  # noqa: E731
        else:
            exc = ctypes.py_object(HookTimeout)
            kill = lambda: ctypes.pythonapi.PyThreadState_SetAsyncExc(  # noqa: E731
                ctypes.c_ulong(thread), exc
            )
        done = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(done, kill), daemon=True)
        watcher.start()

        def stop() -> None:
            done.set()
            with suppress(HookTimeout):  # fired as the hook returned: the pass is over anyway
                watcher.join()
            if self._fired >= 0 and not main:  # a fired exception not yet delivered
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), None)
            undo()

        return stop

    def _watch(self, done: threading.Event, kill: Callable[[], None]) -> None:
        """Poll the mark; stop a call that is still the same after ``timeout_s``."""
        poll = min(0.25, max(self.timeout_s / 8, 0.005))
        seen, since = -1, 0.0
        while not done.wait(poll):
            e, calls = self.entrant, self.calls
            if e is None:
                seen = -1
                continue
            now = time.monotonic()
            if calls != seen:
                seen, since = calls, now
            elif now - since >= self.timeout_s:
                if calls != self._fired:
                    self.stuck = self._where(e)
                self._fired = calls
                kill()
                since = now - self.timeout_s + poll * 4  # again, if the hook swallowed it

    def _where(self, e: Entrant) -> str:
        """The timeout's line: where in the strategy file the runner's thread is."""
        line = line_in(sys._current_frames().get(self.thread or 0), e.path)
        where = str(e.path) if line is None else f"{e.path}:{line}"
        return (
            f"{where}: timed out: {self.hook} still running after {self.timeout_s:g} s "
            f"(--hook-timeout; 0 turns the limit off) (in {self.hook}, entry {e.name})"
        )

    # ---- endings ---------------------------------------------------------------------

    def failed(self, e: Entrant, hook: str, exc: BaseException) -> StrategyError:
        """The one line for what ended a hook."""
        when = f"in {hook}, entry {e.name}"
        if isinstance(exc, HookTimeout):
            return StrategyError(self.stuck or f"{e.path}: timed out ({when})")
        if exc is self._ctrl_c:
            return Interrupted(f"{located(e.path, exc)}: interrupted by Ctrl-C ({when})")
        if isinstance(exc, RefusedCall):  # it names its line already
            return StrategyError(f"{exc} ({when})")
        return StrategyError(failure(e.path, exc, when))


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
