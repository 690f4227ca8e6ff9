"""The thin run log's SHA-256 computed in a second thread is the SHA-256 of its bytes."""

from __future__ import annotations

import hashlib
import mmap

from hypothesis import given
from hypothesis import strategies as st

from arena_tui.util.hashbehind import HashBehind


class Small(HashBehind):
    PIECE = 7  # many pieces, and parts larger than a piece, from short inputs


@given(st.lists(st.tuples(st.binary(max_size=40), st.booleans()), max_size=30))
def test_pieces_in_any_sizes_hash_as_one(chunks: list[tuple[bytes, bool]]) -> None:
    for cls in (HashBehind, Small):
        behind = cls()
        for data, as_view in chunks:
            behind.update(memoryview(data) if as_view else data)
        want = hashlib.sha256(b"".join(data for data, _ in chunks)).hexdigest()
        assert behind.hexdigest() == want


def test_a_view_of_a_mapping_may_close_once_handed_over() -> None:
    # the run log hands over views of a day's mapping: the mapping closes before the digest
    with mmap.mmap(-1, 3 * Small.PIECE + 2) as mm:
        mm.write(bytes(range(3 * Small.PIECE + 2)))
        behind = Small()
        behind.update(memoryview(mm)[1:])
        data = bytes(mm[1:])
    assert behind.hexdigest() == hashlib.sha256(data).hexdigest()
