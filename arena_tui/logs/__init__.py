"""The version-1 log: reading (``logfile``) and appending (``writer``) it, a run's own log
(``runlog``), checking (``logcheck``), importing other formats (``importers``), the
recorder's daily files (``daylog``, ``dayfiles``), and Hyperliquid's ``meta`` (which
markets and asset numbers a log names), and the catalog of a directory's days
(``catalog``: ``arena data list``, DIR --from --to --coins). See docs/log-format.md.

May import: ``engine`` and ``util`` only.
"""
