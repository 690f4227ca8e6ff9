"""The leaderboard of the run's entries, in the engine's ranking order (as of the last mark).

Ranked entries first (S descending, then lower MDD, then earlier registration), then the
ones not eligible yet, unranked, exactly as ``arena backtest`` ranks them. Row keys are
places, so the rows stay put and their contents move when the order changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from arena_tui.tui.fmt import ratio_pct, usd
from arena_tui.tui.snapshot import Leader
from arena_tui.tui.widgets.table import Cell, Col, KeyedTable


class LeaderTable(KeyedTable):
    # 79 columns; S, R and MDD with every digit (``ratio_pct``: -12.345678%) and a gap
    COLUMNS = (
        Col("rank", "rank", 4),
        Col("entry", "entry", 15, right=False),
        Col("s", "S", 12),
        Col("r", "R", 12),
        Col("mdd", "MDD", 11),
        Col("equity", "equity $", 10),
        Col("days", "days", 6),
        Col("eligible", "eligible", 9, right=False),
    )

    def show(self, leaders: Sequence[Leader], watched: str) -> None:
        rows: dict[str, list[Cell]] = {}
        for place, r in enumerate(leaders):
            style = "bold" if r.entry == watched else ""
            rows[str(place)] = [
                "-" if r.rank is None else str(r.rank),
                Text(r.entry, style=style),
                Text(ratio_pct(r.score), style=style),
                ratio_pct(r.ret),
                ratio_pct(r.mdd),
                usd(r.equity),
                str(r.fill_days),
                "yes" if r.eligible else "no",
            ]
        self.sync(rows)
