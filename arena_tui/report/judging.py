"""How a run is to be judged (``Judging``), apart from the judging itself (``skill``,
``verdict``), so that a command's start can name it without importing the runner."""

from __future__ import annotations

from dataclasses import dataclass

from arena_tui.run.config import DEFAULT_TWINS


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
