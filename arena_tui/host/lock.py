"""One writer per log: an exclusive ``flock`` on ``<log>.lock`` for as long as it writes.

``arena host`` holds it while it runs; ``arena register`` takes it to append to a log no
server is running on, and when it cannot (a server holds it) it asks that server through
its control socket instead. The kernel drops the lock when the process dies, ``kill -9``
included, so a crashed server never leaves a log locked. The file holds the holder's pid
for the error message; it is left in place (removing it would race with the next taker).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from arena_tui.host.errors import HostError
from arena_tui.util.outputs import writing


class LockHeld(HostError):
    """Another process writes this log (one line naming it)."""


def lock_path(log: Path) -> Path:
    return log.with_name(log.name + ".lock")


class LogLock:
    def __init__(self, log: Path) -> None:
        self.path = lock_path(log)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise LockHeld naming the holder's pid."""
        with writing(self.path.with_suffix(""), "--log"):  # the log's directory: one line
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise LockHeld(
                f"{self.path.with_suffix('')} is in use by another arena host or register "
                f"(pid {holder}); stop it first or choose another --log"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd

    def try_acquire(self) -> bool:
        try:
            self.acquire()
        except LockHeld:
            return False
        return True

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> LogLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
