"""Season files: loading, checking and choosing the season a log is replayed under
(``file``: also the header a run log starts with), and writing a new one (``new``).

May import: ``logs`` (a season is found from log headers), ``engine``, ``util``.
"""
