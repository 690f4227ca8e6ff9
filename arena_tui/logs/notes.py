"""An order's optional ``note``: the agent's words beside its order, never read by the engine.

Why this module exists: the contract keeps unknown fields of ``arena`` inputs and the
engine ignores them, so a note is carried in the log line of its order and nowhere in the
engine's inputs. Everything that shows notes (the host's views, a run's fills, the report)
reads them back from the logged line here, and everything that takes one (the strategy
API, the HTTP API) checks it here, so the two sides agree on what a note may be.
"""

from __future__ import annotations

from typing import Any

import msgspec

MAX_NOTE_CHARS = 280  # characters (code points), as a post on a social network counts them


class NoteError(ValueError):
    """A note that may not be logged: not a string, too long, or not encodable as UTF-8."""


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
