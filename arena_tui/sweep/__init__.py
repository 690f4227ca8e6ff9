"""``arena sweep``: many variants of a strategy over many days, judged out of sample.

The pieces: ``jobs`` (one job: K variants and the control over one day in one engine pass,
the day's SHA-256 checked where it runs; plain msgspec structs in and out), ``execute``
(where jobs run: in the driver, local worker processes or a Dask cluster, all one
``concurrent.futures.Executor``), ``store`` (the sweep directory's SQLite database: the
configuration, the trials and each finished job, committed at once, so a resumed sweep
recomputes nothing), ``directory`` (where the store lives: made, locked while a sweep
runs in it, the sweep's identity saved before its days are read), ``space`` (parameter
spaces and the searches), ``luck`` (the training/held-out split and the reality check),
``driver`` (the flow), ``output`` and ``plot`` (the table, the plots, the JSON). See
docs/sweep.md.

May import: ``report``, ``run``, ``season``, ``logs``, ``util``, ``engine``; never
``host``, ``verify``, ``commands`` or ``tui``.
"""

from __future__ import annotations

from arena_tui.util.errors import ArenaError


class SweepError(ArenaError):
    """A sweep that cannot run as asked: a bad split, space, day file or cluster."""
