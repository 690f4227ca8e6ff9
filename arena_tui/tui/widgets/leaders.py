"""The leaderboard of the run's entries, in the engine's ranking order (as of the last mark).

Ranked entries first (S descending, then lower MDD, then earlier registration), then the
ones not eligible yet, unranked, exactly as ``arena backtest`` ranks them. Row keys are
places, so the rows stay put and their contents move when the order changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from arena_tui.tui.fmt import pct, usd
from arena_tui.tui.snapshot import Leader
from arena_tui.tui.widgets.table import Cell, Col, KeyedTable


class LeaderTable(KeyedTable):
    COLUMNS = (
        Col("rank", "rank", 5),
        Col("entry", "entry", 17, right=False),
        Col("s", "S", 9),
        Col("r", "R", 9),
        Col("mdd", "MDD", 8),
        Col("equity", "equity $", 12),
        Col("days", "fill days", 10),
        Col("eligible", "eligible", 9, right=False),
    )

    def show(self, leaders: Sequence[Leader], watched: str) -> None:
        rows: dict[str, list[Cell]] = {}
        for place, r in enumerate(leaders):
            style = "bold" if r.entry == watched else ""
            rows[str(place)] = [
                "-" if r.rank is None else str(r.rank),
                Text(r.entry, style=style),
                Text(pct(r.score), style=style),
                pct(r.ret),
                pct(r.mdd),
                usd(r.equity),
                str(r.fill_days),
                "yes" if r.eligible else "no",
            ]
        self.sync(rows)
