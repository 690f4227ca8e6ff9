"""What a strategy writes (``print``, ``sys.stderr.write``, a warning): taken off stdout.

Why this module exists: stdout belongs to the command (``--json`` prints one JSON
object there) and, in arena-tui, the terminal belongs to Textual, so a strategy's output
must never reach either as it is. :func:`routed` puts a :class:`Routed` stream in place of
``sys.stdout`` and ``sys.stderr`` for as long as a run (or a load) lasts; each write is
offered to ``take`` first, which claims it when it comes from the thread running the
strategy's code, and every other write goes to the stream it replaced, unchanged. So
arena-tui's worker thread can route a strategy's prints while the UI thread keeps the
real streams, and nothing is redirected process-wide behind another thread's back.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any, cast


class Routed:
    """A text stream that offers every write to ``take`` before passing it on."""

    def __init__(self, original: IO[str], take: Callable[[str], bool]) -> None:
        self.original = original
        self.take = take

    def write(self, text: str) -> int:
        if self.take(text):
            return len(text)
        return self.original.write(text)

    def flush(self) -> None:
        self.original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)  # encoding, isatty, fileno, ...


@contextmanager
def routed(take: Callable[[str], bool]) -> Iterator[tuple[IO[str], IO[str]]]:
    """``sys.stdout`` and ``sys.stderr`` routed through ``take`` inside the block; yields
    the streams they replaced. Put back at the end unless someone replaced them since."""
    stdout, stderr = sys.stdout, sys.stderr
    out = cast(IO[str], Routed(stdout, take))
    err = cast(IO[str], Routed(stderr, take))
    sys.stdout, sys.stderr = out, err
    try:
        yield stdout, stderr
    finally:
        if sys.stdout is out:
            sys.stdout = stdout
        if sys.stderr is err:
            sys.stderr = stderr


class Lines:
    """Writes cut into whole lines (a ``print`` is often two writes: text, then newline)."""

    def __init__(self) -> None:
        self.partial = ""

    def feed(self, text: str) -> list[str]:
        if "\n" not in text:
            self.partial += text
            return []
        *lines, self.partial = (self.partial + text).split("\n")
        return lines

    def rest(self) -> list[str]:
        """The last line, when it had no newline."""
        line, self.partial = self.partial, ""
        return [line] if line else []


@contextmanager
def load_output(name: str) -> Iterator[None]:
    """While a strategy file loads: what this thread writes goes to stderr, each line as
    ``[name] line`` (stdout stays the command's)."""
    thread = threading.get_ident()
    lines = Lines()
    err = sys.stderr

    def take(text: str) -> bool:
        if threading.get_ident() != thread:
            return False
        for line in lines.feed(text):
            err.write(f"[{name}] {line}\n")
        return True

    with routed(take):
        try:
            yield
        finally:
            for line in lines.rest():
                err.write(f"[{name}] {line}\n")
