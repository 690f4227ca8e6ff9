"""Local worker processes: fresh interpreters that die with the process that made them.

Why this module exists: a sweep's jobs and a run's twins both fan work out to local
processes, and both need the same two things of them: nothing of the caller's state forked
into a worker (``forkserver``: each worker imports what it runs once), and no worker left
behind when the caller is killed with -9 (it would wait on its queue forever, holding a
core's worth of memory).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@contextmanager
def local_pool(
    n: int, preload: Sequence[str] = (), *, finish: bool = True
) -> Iterator[ProcessPoolExecutor]:
    """``n`` worker processes (``preload``: modules the fork server imports first), shut
    down when the block ends; on an error or Ctrl-C, calls not started are not started,
    and those running are waited for (``finish``) or left to end alone (their results
    unread; a worker whose caller has exited stops within a second)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))
    pool = ProcessPoolExecutor(
        n, mp_context=context, initializer=_die_with, initargs=(os.getpid(),)
    )
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=finish, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _die_with(parent: int) -> None:
    """In a worker: exit when the process that made it is gone."""

    def watch() -> None:
        while os.getppid() == parent or _alive(parent):
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="arena-worker-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
