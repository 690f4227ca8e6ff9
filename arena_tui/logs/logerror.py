"""``LogError``: a log that cannot be read, said in one line naming the file and line.

Its own module so that every module of ``logs`` can raise it without importing the reader
(``logfile`` re-exports it; ``daycache``, which ``logfile`` uses, raises it too).
"""

from __future__ import annotations

import os

from arena_tui.util.errors import ArenaError


class LogError(ArenaError):
    """A log that cannot be read: one line, naming the file and line where known."""

    def __init__(self, path: str | os.PathLike[str], lineno: int | None, message: str) -> None:
        self.path = str(path)
        self.lineno = lineno
        self.message = message
        where = f"{self.path}:{lineno}" if lineno else self.path
        super().__init__(f"{where}: {message}")
