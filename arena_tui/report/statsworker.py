"""The verdict's statistics in a second interpreter, its imports made while the pass runs.

Why this module exists: ``report.stats`` calls ``arch``, which brings numpy, scipy and
pandas: 1.2-2 s of imports, a tenth to a quarter of a day's backtest, spent after the pass
with the machine's other core idle. A backtest long enough to be judged starts this worker
first (:func:`start`): a child interpreter imports them on the other core while the engine
runs, and ``stats.mean_interval`` is then computed there. It is the same function on the
same libraries, so the same numbers, bit for bit (floats cross as pickles). A worker that
cannot start, dies, fails a call or does not answer within ``PATIENCE_S`` costs nothing but
the time: the call is made here.

The child reads ``(name, args)`` pickles on stdin and answers ``(ok, value)`` on stdout; it
ignores SIGINT (the parent decides) and ends at EOF. At exit the parent closes its stdin and
kills it (it may still be importing: nobody waits for that).
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

# what the child runs: imports first (the point of it), then one call per request
CHILD = """
import os, pickle, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
out = os.fdopen(os.dup(1), "wb")  # the answers; anything a library prints goes to stderr
os.dup2(2, 1)
from arena_tui.report import stats
stats.warm()
inp = sys.stdin.buffer
while True:
    try:
        name, args = pickle.load(inp)
    except EOFError:
        break
    try:
        answer = (True, stats.WORKER_CALLS[name](*args))
    except Exception as exc:
        answer = (False, repr(exc))
    pickle.dump(answer, out)
    out.flush()
"""

PATIENCE_S = 120.0  # an answer not come by then: the worker is killed, the call made here
_lock = threading.Lock()
_worker: Worker | None = None
_at_exit = False


class Failed(Exception):
    """The worker could not answer: the caller computes it itself."""


class Worker:
    """One child interpreter with the statistics imported; calls are taken one at a time."""

    def __init__(self) -> None:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # (where this arena_tui is)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.lock = threading.Lock()
        self.broken = False
        self.patience_s = PATIENCE_S

    def call(self, name: str, *args: Any) -> Any:
        """``stats.WORKER_CALLS[name](*args)`` in the child; Failed if it cannot answer."""
        proc = self.proc
        with self.lock:
            if self.broken or proc.stdin is None or proc.stdout is None:
                raise Failed(name)
            try:
                pickle.dump((name, args), proc.stdin)
                proc.stdin.flush()
                if not select.select([proc.stdout], [], [], self.patience_s)[0]:
                    proc.kill()  # wedged (its imports take 1-2 s, a call well under one)
                    raise OSError("no answer")
                ok, value = pickle.load(proc.stdout)
            except (OSError, EOFError, pickle.UnpicklingError, ValueError):
                self.broken = True
                raise Failed(name) from None
        if not ok:
            raise Failed(f"{name}: {value}")
        return value

    def stop(self) -> None:
        """End the child now (closing its stdin ends it when it is idle; it may still be
        importing, and nobody waits for that)."""
        proc = self.proc
        self.broken = True
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def start() -> None:
    """Start the worker (once a process; it then serves every later call). Set
    ``ARENA_STATS_WORKER=0`` to compute everything in process."""
    global _worker, _at_exit
    if os.environ.get("ARENA_STATS_WORKER", "1") == "0":
        return
    with _lock:
        if _worker is not None and not _worker.broken:
            return
        try:
            _worker = Worker()
        except OSError:
            _worker = None
            return
        if not _at_exit:
            atexit.register(stop)
            _at_exit = True


def running() -> Worker | None:
    """The worker, when one was started and still answers."""
    w = _worker
    return None if w is None or w.broken else w


def stop() -> None:
    global _worker
    with _lock:
        w, _worker = _worker, None
    if w is not None:
        w.stop()
