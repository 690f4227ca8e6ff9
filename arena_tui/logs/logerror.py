"""``LogError``: a log that cannot be read, said in one line naming the file and line.

Its own module so that every module of ``logs`` can raise it without importing the reader
(``logfile`` re-exports it; ``daycache``, which ``logfile`` uses, raises it too). So is
:func:`no_header`, the one wording of a log with no complete line 1, whichever reader
finds it.
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


def no_header(path: str | os.PathLike[str], cut: int = 0) -> LogError:
    """A log with no complete line 1: empty, or ``cut`` bytes that end inside its header
    (a file cut short, or still being written: a line counts once its newline is written)."""
    if not cut:
        return LogError(path, 1, "empty log: no header line")
    return LogError(
        path,
        1,
        f"the file ends inside its header line ({cut} byte{'' if cut == 1 else 's'}, no "
        "newline): it was cut short or is still being written",
    )
