"""An order's note: checked the same way by every door, read back from its logged line."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_tui.logs.logfile import decode_line
from arena_tui.logs.notes import MAX_NOTE_CHARS, NoteError, check_note, note_in

ORDER = {"type": "order", "entry": "alice", "asset": 0, "isBuy": True, "limitPx": 10**12}
ORDER |= {"sz": 10**5, "reduceOnly": False, "encodedTif": 2}


def line(**arena: object) -> bytes:
    return msgspec.json.encode({"t": 1, "arena": {**ORDER, **arena}})


# any text a note may be: no control character (Cc: C0, DEL, C1), no lone surrogate (Cs)
NOTE_TEXT = st.text(st.characters(exclude_categories=("Cc", "Cs")), max_size=MAX_NOTE_CHARS)


@given(NOTE_TEXT)
def test_any_short_text_round_trips_through_its_logged_line(text: str) -> None:
    raw = line(note=check_note(text))
    assert note_in(raw) == (text or None)
    assert decode_line(raw) == decode_line(line())  # the engine sees the same order


def test_a_note_one_character_too_long_is_refused_and_says_the_limit() -> None:
    assert check_note("é" * MAX_NOTE_CHARS) == "é" * MAX_NOTE_CHARS  # characters, not bytes
    with pytest.raises(NoteError, match=f"{MAX_NOTE_CHARS + 1} characters; at most 280"):
        check_note("x" * (MAX_NOTE_CHARS + 1))
    with pytest.raises(NoteError, match="must be a string, not int"):
        check_note(7)
    with pytest.raises(NoteError, match="lone surrogate"):
        check_note("half a pair \ud800")


@pytest.mark.parametrize("bad", [5, None, ["a"], {"x": 1}, ""])
def test_a_note_another_writer_got_wrong_is_no_note_and_the_line_still_decodes(bad: object) -> None:
    raw = line(note=bad)
    assert note_in(raw) is None
    assert decode_line(raw) == decode_line(line())


def test_a_note_word_elsewhere_in_the_line_is_not_a_note() -> None:
    raw = msgspec.json.encode({"t": 1, "hl": {"channel": "trades", "data": [{"note": "x"}]}})
    assert note_in(raw) is None
    assert note_in(line(cloid="0x1")) is None
