"""Write the README's screenshot of arena-tui: an SVG export from Textual, headless.

    python -m arena_tui.tui.screenshot docs/tui.svg

The maker baseline against the other baselines on the shipped synthetic day
(``recordings/synth-3coins-20261201.jsonl.gz``), paused three hours in, 100x30.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from arena_tui.tui.app import make_app
from arena_tui.tui.playback import Playback
from arena_tui.tui.screens.run import RunScreen
from arena_tui.tui.source import BacktestSource, watched_run
from engine.units import HOUR_MS

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "recordings" / "synth-3coins-20261201.jsonl.gz"
STRATEGY = ROOT / "strategies" / "maker.py"
PAUSE_AT = 1_796_083_200_000 + 3 * HOUR_MS  # 2026-12-01 03:00 UTC
SIZE = (100, 30)


class PauseAt(Playback):
    """Playback that pauses itself when the clock reaches ``at``."""

    def __init__(self, at: int) -> None:
        super().__init__(None)
        self.at = at

    def pace(self, t: int) -> bool:
        if t >= self.at and not self.paused and self.at:
            self.at = 0
            self.pause()
        return super().pace(t)


async def shoot(out: Path, run_dir: Path) -> None:
    spec = watched_run((LOG,), STRATEGY, "baselines", out=run_dir)
    app = make_app(source=BacktestSource.of_spec(spec), playback=PauseAt(PAUSE_AT))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await asyncio.wait_for(screen.settled.wait(), 120)
        await pilot.pause()
        app.save_screenshot(filename=out.name, path=str(out.parent))
        await pilot.press("q")


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/tui.svg")
    with tempfile.TemporaryDirectory(prefix="arena-shot-") as tmp:
        asyncio.run(shoot(out, Path(tmp)))
    sys.stderr.write(f"wrote {out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
