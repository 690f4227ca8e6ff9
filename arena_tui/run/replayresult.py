"""What a replay gives: the contract's replay object, and what people read beside it.

A module of its own so that what a backtest's result holds (``run.parts``) does not bring
the replay itself (``run.replay``), which reads logs and day caches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine import Season
from engine import events as ev


@dataclass
class ReplayResult:
    season: Season
    log_sha256: str
    fills_sha256: str
    end: int | None
    final: bool
    ranking: list[dict[str, Any]]
    inputs: int
    fills: int
    score_rows: dict[tuple[str, int], ev.ScoreRow] = field(default_factory=dict)
    cached: bool = False  # replayed from the logs' day caches (not part of the output)

    def to_json(self) -> dict[str, Any]:
        """The contract's replay object, keys in the contract's order."""
        return {
            "season": self.season.id,
            "rules_sha256": self.season.rules_sha256,
            "log_sha256": self.log_sha256,
            "end": self.end,
            "final": self.final,
            "fills_sha256": self.fills_sha256,
            "ranking": self.ranking,
        }
