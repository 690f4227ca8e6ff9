"""What a run is shown as: the report's files (``render``) and ranked table (``table``,
with why an entry is unranked from ``eligibility``, fitted to the terminal by ``layout``),
the verdict against the random control (``verdict``, as text in ``verdict_text``), and
the charts (``charts`` for the terminal, ``chartsvg`` for chart.svg, ``html`` for
report.html, drawn in the browser from ``htmldata``'s JSON). It renders what the
runner gathered and computes no result of its own.

May import: ``run`` (a run's result), ``season``, ``logs``, ``engine``, ``util``.
"""
