"""arena's Season 0 engine: a pure, deterministic state machine (no clock, no I/O, no float).

``Engine(season).apply(line) -> list[event]`` is the whole interface; see ``engine.core``.
"""

from engine.core import Engine
from engine.events import Reason
from engine.inputs import Header, Line, MalformedInput
from engine.season import Market, Rules, Season, backtest_season, rules_sha256
from engine.units import tdiv

__all__ = [
    "Engine",
    "Header",
    "Line",
    "MalformedInput",
    "Market",
    "Reason",
    "Rules",
    "Season",
    "backtest_season",
    "rules_sha256",
    "tdiv",
]
