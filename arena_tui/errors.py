"""Known failures become one line on stderr and an exit code, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

from arena_tui.backtest import BacktestError
from arena_tui.loader import StrategyError
from arena_tui.logfile import LogError
from arena_tui.meta import MetaError
from arena_tui.seasonfile import SeasonError

KNOWN = (LogError, SeasonError, MetaError, StrategyError, BacktestError)
EXIT_ERROR = 1


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    sys.stderr.write(f"arena: error: {message}\n")
    raise SystemExit(code)


def run_cli(command: Callable[[], object], prog: str) -> None:
    """Run a console script: known failures, Ctrl-C and a closed pipe end it cleanly."""
    try:
        command()
    except KNOWN as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        raise SystemExit(130) from None
    except BrokenPipeError:  # e.g. piped into head
        raise SystemExit(0) from None
