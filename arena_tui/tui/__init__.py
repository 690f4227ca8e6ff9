"""arena-tui: watch a backtest run live (Textual).

Layout: ``app`` (the thin App, its factory and the console script), ``screens/`` (one
module per screen), ``widgets/`` (one module per panel), ``source`` (the worker that steps
the engine and posts immutable ``snapshot`` values), ``playback`` (pause, speed, seek),
``catalog`` (what the start screen offers), ``arena.tcss`` (all the styling). Nothing here
is imported by ``arena backtest`` unless it is asked for ``--tui``.
"""
