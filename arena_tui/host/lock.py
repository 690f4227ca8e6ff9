"""One writer per log: an exclusive ``flock`` on ``<log>.lock`` for as long as it writes.

``arena host`` holds it while it runs; ``arena register`` takes it to append to a log no
server is running on, and when it cannot (a server holds it) it asks that server through
its control socket instead. The lock is ``util.pidlock``'s: the kernel drops it when the
process dies, ``kill -9`` included, so a crashed server never leaves a log locked.
"""

from __future__ import annotations

from pathlib import Path

from arena_tui.host.errors import HostError
from arena_tui.util.pidlock import PidLock


class LockHeld(HostError):
    """Another process writes this log (one line naming it)."""


def lock_path(log: Path) -> Path:
    return log.with_name(log.name + ".lock")


class LogLock(PidLock):
    def __init__(self, log: Path) -> None:
        # a write error names the log's directory: one line
        super().__init__(lock_path(log), named=log, what="--log", mode=0o600)

    def refused(self, pid: str) -> Exception:
        return LockHeld(
            f"{self.path.with_suffix('')} is in use by another arena host or register "
            f"(pid {pid}); stop it first or choose another --log"
        )

    def try_acquire(self) -> bool:
        try:
            self.acquire()
        except LockHeld:
            return False
        return True
