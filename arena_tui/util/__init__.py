"""Small helpers every room may use: known errors as one line (``errors``), an output path
the system refuses as one line (``outputs``), times, counts and the progress line for
people (``human``), compact JSON (``jsonout``), the data directory (``paths``), the
options several commands share (``options``), and text from a run made safe for a
terminal or a spreadsheet (``text``).

May import: nothing else of arena_tui, and not ``engine``.
"""
