"""Output paths the system refuses become one line naming the option and the path.

A missing directory, a directory where a file belongs, a file where a directory belongs, no
permission, a full disk: :func:`writing` turns the ``OSError`` into an :class:`OutputError`
(``--fills /no/dir/f.jsonl: cannot write: No such file or directory``), so no command
prints a traceback for a path it was given.

May import: ``arena_tui.util.errors`` only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena_tui.util.errors import ArenaError


class OutputError(ArenaError):
    """An output file or directory that cannot be written (one line)."""


def cannot_write(path: str | os.PathLike[str], exc: OSError, what: str = "") -> OutputError:
    """``[what ]path: cannot write: [culprit: ]reason`` for ``exc`` raised writing ``path``."""
    reason = exc.strerror or str(exc)
    where = f"{what} {path}" if what else str(path)
    culprit = exc.filename
    if not isinstance(culprit, str | os.PathLike) or os.fspath(culprit) == os.fspath(path):
        return OutputError(f"{where}: cannot write: {reason}")
    culprit = os.fspath(culprit)
    if isinstance(exc, FileExistsError) and Path(path).is_relative_to(culprit):
        reason = "Not a directory"  # a parent of ``path`` is a file (mkdir says "exists")
    return OutputError(f"{where}: cannot write: {culprit}: {reason}")


@contextmanager
def writing(path: str | os.PathLike[str], what: str = "") -> Iterator[None]:
    """Run the block that writes ``path`` (``what``: the option that named it, e.g.
    ``--out``); an ``OSError`` in it becomes one :class:`OutputError` line."""
    try:
        yield
    except OSError as exc:
        raise cannot_write(path, exc, what) from None
