"""How a run is to be judged (``Judging``, its block length ``parse_epoch``), apart from
the judging itself (``skill``, ``verdict``), so that a command's start can name and check
it without importing the runner or the statistics."""

from __future__ import annotations

import re
from dataclasses import dataclass

from arena_tui.run.config import DEFAULT_TWINS
from engine.units import DAY_MS, HOUR_MS, MINUTE_MS

UNIT_MS = {"m": MINUTE_MS, "h": HOUR_MS, "d": DAY_MS}
_EPOCH = re.compile(r"([1-9][0-9]{0,8})([mhd])")


def parse_epoch(text: str) -> int:
    """``30m``, ``2h``, ``1d`` -> block length in ms; anything else is one clear line."""
    m = _EPOCH.fullmatch(text.strip())
    if m is None:
        from arena_tui.run.parts import BacktestError  # (here: the runner's, and heavy)

        raise BacktestError(
            f"--epoch {text!r}: expected a positive whole number and a unit m, h or d "
            "(e.g. 30m, 2h, 1d), or auto"
        )
    return int(m.group(1)) * UNIT_MS[m.group(2)]


def check_epoch(text: str | None) -> None:
    """A bad ``--epoch`` fails before the run (``auto`` and None choose one for it)."""
    if text is not None and text != "auto":
        parse_epoch(text)


@dataclass(frozen=True)
class Judging:
    """How a run is judged: its block length (None: chosen for the run), the seed of the
    bootstraps and the twins, how many twins (0: none), and the logs they trade on (empty:
    none can be made, and ``no_twins`` says why)."""

    epoch: str | None = None
    seed: int = 0
    twins: int = DEFAULT_TWINS  # run.twins.TWINS (tests/test_run_config.py: the same)
    sources: tuple[str, ...] = ()
    latency_ms: int = 0
    no_twins: str = "the run's market data is not at hand"
    cache: bool = True  # the twins may read the days' caches (False: --no-cache)
