"""Known failures become one line on stderr and an exit code, never a traceback.

The line is ``util.text.printable``: an error may quote what a file, a log or a server
held (a name, a field), and none of that may drive the terminal.

May import: ``util.text`` only, nothing else of arena_tui (every room raises
:class:`ArenaError`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

from arena_tui.util.text import printable


class ArenaError(Exception):
    """A failure the user can act on, said in one line: a bad file, log, season, strategy or
    run. Each room's own error derives from it (``LogError``, ``SeasonError``,
    ``MetaError``, ``StrategyError``, ``BacktestError``), so entry points catch this one
    class without importing the rooms that raise it. ``exit_code``: the status it exits
    with (1; a Ctrl-C that stopped a strategy's hook exits 130, as any Ctrl-C)."""

    exit_code = 1


KNOWN = (ArenaError,)
EXIT_ERROR = 1


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    sys.stderr.write(f"arena: error: {printable(message)}\n")
    raise SystemExit(code)


def run_cli(command: Callable[[], object], prog: str) -> None:
    """Run a console script: known failures, Ctrl-C and a closed pipe end it cleanly.

    So does a file the system refused (an ``OSError`` naming a path) that no command turned
    into its own error: one line naming the path, never a traceback.
    """
    try:
        command()
    except KNOWN as exc:
        fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        raise SystemExit(130) from None
    except BrokenPipeError:  # e.g. piped into head
        raise SystemExit(0) from None
    except OSError as exc:
        if exc.filename is None:
            raise
        fail(f"{exc.filename}: {exc.strerror or exc}")
