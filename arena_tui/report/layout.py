"""How wide the printed report may be, and prose wrapped to it.

The report fits the terminal it is printed on: ``$COLUMNS``, else the terminal on stdout.
Piped or redirected it is never narrowed (a file gets every column); ``COLUMNS`` still
narrows it. Tables choose their columns to fit (``table``, ``verdict_text``, ``charts``);
prose is wrapped at the width between words, continuation lines indented.
"""

from __future__ import annotations

import shutil
import textwrap

MIN_WIDTH = 40  # a terminal narrower than this is laid out as this wide


def terminal_width() -> int | None:
    """The columns to fit, or ``None`` (no limit) when stdout is not a terminal."""
    cols = shutil.get_terminal_size((0, 0)).columns
    return max(cols, MIN_WIDTH) if cols > 0 else None


def wrap(text: str, width: int | None, indent: str = "  ") -> list[str]:
    """``text`` as lines of at most ``width``, broken between words; each continuation is
    indented as ``text`` is, plus ``indent``. A word longer than the width stays whole."""
    if width is None or len(text) <= width:
        return [text]
    lead = text[: len(text) - len(text.lstrip(" "))]
    lines = textwrap.wrap(
        text,
        width,
        subsequent_indent=lead + indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return lines or [text]
