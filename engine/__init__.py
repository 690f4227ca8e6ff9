"""arena's Season 0 engine: a pure, deterministic state machine (no clock, no I/O, no float).

``Engine(season).apply(line) -> list[event]`` is the whole interface for writing; a shell
reads the engine only through its read face (``Engine.account``, ``open_orders_of``,
``coin_state``, ``next_due``, ...) and the names below; ``Engine.snapshot()`` and
``Engine.restore(season, snap)`` carry its whole state out as plain values and back (a
host's checkpoints). The public modules are this package,
``engine.inputs`` and ``engine.events`` (the vocabulary of lines and events),
``engine.season`` and ``engine.units``; ``engine.core``, ``engine.state``,
``engine.orders``, ``engine.fills``, ``engine.scoring``, ``engine.book``, ``engine.snapshot``
and ``engine.ledger`` (what the rules see of the engine) are the engine's inside (a contract
keeps the shell out of them).

Which engine runs: the hot modules (``engine._loader.COMPILED_MODULES``) may be compiled by
Cython from these same sources when the package is installed (setup.py). ``ENGINE`` says
which runs and why; ``COMPILED`` is True when every one of them is the compiled extension.
``ARENA_ENGINE=pure`` runs the sources even when extensions exist (the reference: both give
the same events and state, tests/test_engines_agree.py), ``ARENA_ENGINE=compiled`` refuses
to import unless the extensions run. An extension built from another source than the one
beside it (an edit after ``pip install -e .``) is never run: the sources are, and ``ENGINE``
says so.
"""

# engine._loader comes first (isort keeps it there): importing it chooses which engine the
# imports below load.
from engine._loader import ENGINE, running_compiled
from engine.book import BookLevels
from engine.core import Engine
from engine.events import Reason
from engine.fills import PrintColumns, decode_levels
from engine.inputs import Header, Line, MalformedInput
from engine.orders import format_cloid, parse_cloid
from engine.scoring import Standing, ranking
from engine.season import Market, Rules, Season, backtest_season, rules_sha256
from engine.state import PENDING, RESTING, Account, AssetState, OpenOrder
from engine.units import tdiv

COMPILED = running_compiled()  # what was imported, checked against what was chosen

__all__ = [
    "COMPILED",
    "ENGINE",
    "PENDING",
    "RESTING",
    "Account",
    "AssetState",
    "BookLevels",
    "Engine",
    "Header",
    "Line",
    "MalformedInput",
    "Market",
    "OpenOrder",
    "PrintColumns",
    "Reason",
    "Rules",
    "Season",
    "Standing",
    "backtest_season",
    "decode_levels",
    "format_cloid",
    "parse_cloid",
    "ranking",
    "rules_sha256",
    "tdiv",
]
