"""Running strategies through the engine: the one pass over a log or a live feed
(``backtest``, with its entrants, sources and result in ``parts``), the strategy API
(``strategy``, ``market``, with its order fields checked at the call in ``fields``) and its
loader (``loader``, with a strategy's declared parameters in ``params``), what is done
around each hook call (``hooks``: its time budget, how it ends; ``output``: where its prints
go), what each entry gathers (``stats``, with exit-value equity), replay of a log into the
contract's output (``replay``), each fill with its quote and its order's note (``quotes``),
a report's parts rebuilt from a log alone (``rebuild``, for ``arena replay --out``), live
paper runs (``live``, ``paper``, ``paperstatus``), a run's directory (``rundir``), and
``build``: the one place a run is built from options, used by the CLI and the TUI alike.

May import: ``record`` (a paper run records the feed it trades on), ``season``, ``logs``,
``engine``, ``util``; not ``report``, ``synth`` or any entry point.
"""
