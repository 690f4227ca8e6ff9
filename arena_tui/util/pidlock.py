"""An exclusive ``flock`` on a file holding the holder's pid: one process at a time.

Why this module exists: ``arena host`` (one writer per log, ``host.lock``) and ``arena
sweep`` (one sweep per directory, ``sweep.directory``) need the same lock, and a lock is
easy to get subtly wrong twice. The kernel drops it when its process dies, ``kill -9``
included, so a crashed holder never leaves anything locked; the descriptor is not inherited
by children (Python opens files non-inheritable). The file holds the holder's pid for the
refusal's message and is left in place when released (removing it would race with the next
taker).

May import: ``util`` only.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from arena_tui.util.outputs import writing


class PidLock:
    """``with lock:`` the file is this process's until the block (or the process) ends.

    Another process holding it: :meth:`refused` (a subclass says what it is), given the
    holder's pid as its file says (``?`` when unreadable). ``named`` and ``what``: the path
    and option a write error names (``util.outputs.writing``); ``mode``: the file's
    permissions when it is made."""

    def __init__(
        self,
        path: Path,
        *,
        named: Path | None = None,
        what: str = "",
        mode: int = 0o644,
    ) -> None:
        self.path = path
        self.named = named if named is not None else path
        self.what = what
        self.mode = mode
        self._fd: int | None = None

    def refused(self, pid: str) -> Exception:
        """The error when process ``pid`` holds the lock (subclasses say what it is)."""
        return RuntimeError(f"{self.path}: locked by pid {pid}")

    def acquire(self) -> None:
        """Take the lock, or raise :meth:`refused` naming the holder's pid."""
        with writing(self.named, self.what):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, self.mode)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise self.refused(holder) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> PidLock:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
