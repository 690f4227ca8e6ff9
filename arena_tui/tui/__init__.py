"""arena-tui: watch a backtest run live (Textual).

Layout: ``cli`` (the ``arena-tui`` console script), ``app`` (the thin App, its factory, and
the watchers ``arena backtest --tui`` and ``arena paper --tui`` are handed), ``screens/`` (one
module per screen), ``widgets/`` (one module per panel), ``source`` (the worker that steps
the engine and posts immutable ``snapshot`` values), ``playback`` (pause, speed, seek),
``catalog`` (what the start screen offers), ``feedlink`` (a live run's feed link in the
header), ``spectator`` and ``spectated`` (watching a running host over HTTP),
``arena.tcss`` (all the styling). Nothing here is imported by ``arena backtest`` unless it
is asked for ``--tui``.

May import: the capabilities (``run``, ``report``, ``record``), the data rooms, ``wire``
(the API's bodies: a host's answers are read with the host's own Structs), ``engine``,
``util``; never ``commands`` (arena-tui builds its runs with ``run.build``) or ``host``
(a host is watched over HTTP only).
"""
