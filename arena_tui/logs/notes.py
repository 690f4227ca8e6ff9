"""An order's optional ``note``: the agent's words beside its order, never read by the engine.

Why this module exists: the contract keeps unknown fields of ``arena`` inputs and the
engine ignores them, so a note is carried in the log line of its order and nowhere in the
engine's inputs. Everything that shows notes (the host's views, a run's fills, the report)
reads them back from the logged line here, and everything that takes one (the strategy
API, the HTTP API) checks it here, so the two sides agree on what a note may be.

A note is one line of text: at most 280 characters, valid Unicode, and no control
character (C0: NUL, BEL, ESC, tab, newline, carriage return...; DEL; C1), so a note can
never drive a terminal it is printed on or split a row it is shown in. A log written before
that rule (or by another writer) may still hold such a note: ``note_in`` reads it back as it
is, so the log still replays, and whatever shows it neutralises it
(``arena_tui.util.text``).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

MAX_NOTE_CHARS = 280  # characters (code points), as a post on a social network counts them
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0 (tab and newline too), DEL and C1
# the same rule as a JSON Schema pattern (ECMA-262), for the HTTP API's OpenAPI document
NOTE_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"


class NoteError(ValueError):
    """A note that may not be logged: not a string, too long, not encodable as UTF-8, or
    holding a control character."""


def check_note(value: object) -> str | None:
    """``value`` as a note to log (None: no note); NoteError saying why it cannot be one."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise NoteError(f"note must be a string, not {type(value).__name__}")
    if len(value) > MAX_NOTE_CHARS:
        raise NoteError(f"note is {len(value)} characters; at most {MAX_NOTE_CHARS}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise NoteError("note is not valid Unicode (a lone surrogate)") from None
    bad = CONTROL.search(value)
    if bad is not None:
        raise NoteError(
            f"note has a control character (U+{ord(bad.group()):04X} at character "
            f"{bad.start() + 1}): a note is one line of text, no tab, newline or escape"
        )
    return value or None


class _Arena(msgspec.Struct):
    note: Any = None


class _Line(msgspec.Struct):
    arena: _Arena | None = None


_DECODE = msgspec.json.Decoder(_Line).decode


def note_in(line: bytes) -> str | None:
    """The note of one logged input line (a whole JSON object), or None.

    Tolerant by design: a line from another writer with a note that is not a string (or
    an unreadable line) has no note here, and stays a valid input for the engine.
    """
    if b'"note"' not in line:
        return None
    try:
        note = _DECODE(line).arena
    except msgspec.DecodeError:
        return None
    value = None if note is None else note.note
    return value if isinstance(value, str) and value else None
