"""Text from a run made safe for where it goes: a terminal (``printable``) or a spreadsheet
(``csv_cell``).

Why this module exists: an entry's words (an order's note, a name, a verdict's text in a
report.json someone edited) reach the terminal in the printed report, ``arena runs`` and
arena-tui, and reach spreadsheets through the CSVs a run writes. Notes are checked when
they are sent (``logs.notes`` refuses control characters), but a log or a run directory
written before that rule, or by someone else, may still hold anything, and reading it must
not fail: so whatever shows such text neutralises it here, and the logs keep it as it was.

- ``printable``: no control character (C0, DEL, C1: every escape sequence starts with one,
  and BEL, NUL, CR and backspace rewrite or sound without one) and no bidi embedding,
  override or isolate (they reorder what follows them on the line). Removed, not replaced,
  so the rest reads as it was written.
- ``csv_cell``: ``printable``, then OWASP's rule against CSV injection: a cell that begins
  with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by a spreadsheet as a
  formula (``=cmd|' /C calc'!A0``), so it gets a leading apostrophe (``'=cmd...``), which
  spreadsheets show as text. A plain decimal number (``-0.472752``: a maker's rebate, a
  loss) is not a formula and stays a number.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import IO

# C0 and C1 control characters and DEL, and the bidi controls that reorder what follows
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")  # OWASP: what starts a formula
_PREFIXES = frozenset(FORMULA_PREFIXES)
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def printable(text: str) -> str:
    """``text`` without control characters: safe to print to a terminal."""
    return CONTROL.sub("", text)


def csv_cell(value: object) -> object:
    """``value`` as a CSV cell a spreadsheet cannot run: text printable and, if it would
    begin a formula, behind an apostrophe; numbers (and plain decimal text) as they are."""
    if not isinstance(value, str):
        return value
    text = value if value.isprintable() else printable(value)  # (isprintable: fast, in C)
    if text.startswith(FORMULA_PREFIXES) and _NUMBER.fullmatch(text) is None:
        return "'" + text
    return text


def csv_row(cells: Iterable[object]) -> list[object]:
    """Every cell of a row through ``csv_cell``. A cell that is not text, or is printable
    text that begins no formula, is kept without a call (a long run's fills.csv has
    millions of cells)."""
    out = list(cells)
    for i, c in enumerate(out):
        if type(c) is str and c and (c[0] in _PREFIXES or not c.isprintable()):
            out[i] = csv_cell(c)
    return out


class CsvWriter:
    """``csv.writer`` with every cell through ``csv_cell``: every CSV arena writes (a run's
    fills.csv and equity.csv) is written with it, whatever its columns."""

    def __init__(self, f: IO[str]) -> None:
        self._w = csv.writer(f)

    def writerow(self, cells: Iterable[object]) -> None:
        self._w.writerow(csv_row(cells))


def printable_doc(doc: object) -> object:
    """``doc`` (decoded JSON) with every string in it, keys too, ``printable``: for what a
    remote server sent before any of it is shown (arena-tui's spectator)."""
    if isinstance(doc, str):
        return printable(doc)
    if isinstance(doc, list):
        return [printable_doc(x) for x in doc]
    if isinstance(doc, dict):
        return {printable(str(k)): printable_doc(v) for k, v in doc.items()}
    return doc
