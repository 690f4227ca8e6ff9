"""A log read in large chunks, ahead in a thread (``logs.readahead``): the same bytes and
hash as the ``gzip`` and ``lz4.frame`` file objects give, in or out of the thread; an error
where they have one; no thread left behind however the reading stops."""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
import textwrap
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import lz4.frame
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.logs import readahead
from arena_tui.logs.logfile import LogError, LogReader, iter_raw_lines, open_binary
from arena_tui.logs.readahead import Chunks
from tests.build import T0

READ_ERRORS = (EOFError, OSError, RuntimeError, zlib.error)
FIXTURE = HealthCheck.function_scoped_fixture


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Pieces of a few hundred bytes, so that small files cross many of them."""
    monkeypatch.setattr(readahead, "RAW", 97)
    monkeypatch.setattr(readahead, "OUT", 301)
    monkeypatch.setattr(readahead, "GZIP_OUT", 301)
    yield
    assert not readers(), "a reader thread outlived its Chunks"


def readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "arena-log-read" and t.is_alive()]


def members(parts: list[bytes], suffix: str, pad: int = 0) -> bytes:
    """``parts`` as one gzip member or LZ4 frame each, one after another (``pad`` zero
    bytes after each gzip member: gzip reads them as padding)."""
    if suffix == ".gz":
        return b"".join(gzip.compress(p, mtime=0) + b"\0" * pad for p in parts)
    if suffix == ".lz4":
        return b"".join(lz4.frame.compress(p) for p in parts)
    return b"".join(parts)


def read_chunks(path: Path, ahead: bool) -> tuple[list[bytes], str]:
    hasher = hashlib.sha256()
    with Chunks(str(path), hasher.update, ahead=ahead) as chunks:
        got = list(chunks)
    return got, hasher.hexdigest()


@settings(max_examples=80, deadline=None, suppress_health_check=[FIXTURE])
@given(
    parts=st.lists(st.binary(max_size=3000), min_size=1, max_size=4),
    suffix=st.sampled_from(["", ".gz", ".lz4"]),
    pad=st.integers(0, 200),
    ahead=st.booleans(),
    raw=st.integers(1, 500),
    out=st.integers(1, 900),
)
def test_the_same_bytes_and_hash_as_the_file_objects(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    parts: list[bytes],
    suffix: str,
    pad: int,
    ahead: bool,
    raw: int,
    out: int,
) -> None:
    monkeypatch.setattr(readahead, "RAW", raw)
    monkeypatch.setattr(readahead, "OUT", out)
    monkeypatch.setattr(readahead, "GZIP_OUT", out)
    path = tmp_path / f"f.jsonl{suffix}"
    path.write_bytes(members(parts, suffix, pad))
    with open_binary(path) as f:
        want = f.read()
    assert want == b"".join(parts)
    got, sha = read_chunks(path, ahead)
    assert b"".join(got) == want
    assert sha == hashlib.sha256(want).hexdigest()
    assert all(0 < len(c) <= out for c in got)


@pytest.mark.parametrize("ahead", [False, True])
def test_an_empty_file(tmp_path: Path, ahead: bool) -> None:
    for suffix in ("", ".gz"):  # (gzip reads an empty file as empty)
        path = tmp_path / f"e.jsonl{suffix}"
        path.write_bytes(b"")
        with open_binary(path) as f:
            assert f.read() == b""
        assert read_chunks(path, ahead) == ([], hashlib.sha256().hexdigest())
    path = tmp_path / "e.jsonl.lz4"  # (lz4.frame does not: no frame at all)
    path.write_bytes(b"")
    with pytest.raises(EOFError), open_binary(path) as f:
        f.read()
    with pytest.raises(EOFError):
        read_chunks(path, ahead)


@settings(max_examples=60, deadline=None, suppress_health_check=[FIXTURE])
@given(
    suffix=st.sampled_from([".gz", ".lz4"]),
    data=st.data(),
    ahead=st.booleans(),
)
def test_a_cut_or_corrupt_file_is_an_error_where_the_file_object_has_one(
    tmp_path: Path, suffix: str, data: st.DataObject, ahead: bool
) -> None:
    """A cut file: an error after the bytes before the cut (never a wrong byte). A flipped
    byte: an error exactly when the file object has one (a corrupt deflate stream gives
    wrong bytes before its CRC fails, in both), else the same bytes."""
    content = b"".join(tick(T0 + i) + b"\n" for i in range(400))
    whole = members([content[:5000], content[5000:]], suffix)
    cut = data.draw(st.booleans(), "cut")
    if cut:
        broken = whole[: data.draw(st.integers(1, len(whole) - 1), "at")]
    else:
        at = data.draw(st.integers(0, len(whole) - 1), "flip")
        broken = whole[:at] + bytes([whole[at] ^ data.draw(st.integers(1, 255))]) + whole[at + 1 :]
    path = tmp_path / f"b.jsonl{suffix}"
    path.write_bytes(broken)
    try:
        with open_binary(path) as f:
            theirs: bytes | None = f.read()
    except READ_ERRORS:
        theirs = None
    got: list[bytes] = []
    why = ""
    try:
        with Chunks(str(path), lambda _: None, ahead=ahead) as chunks:
            got.extend(chunks)
    except READ_ERRORS as exc:
        why = str(exc) or type(exc).__name__
    if not why:
        assert b"".join(got) == theirs
        return
    # the one difference: a gzip header with a reserved flag bit set, which gzip's file
    # object ignores and zlib refuses, as RFC 1952 asks of a decompressor
    assert theirs is None or "unknown header flags set" in why, why
    assert not cut or content.startswith(b"".join(got))


def test_bytes_after_a_gzip_member_that_are_not_one_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl.gz"
    path.write_bytes(gzip.compress(b"a line\n") + b"\0\0junk")
    with pytest.raises(gzip.BadGzipFile), open_binary(path) as f:
        f.read()
    for ahead in (False, True):
        with pytest.raises(zlib.error):
            read_chunks(path, ahead)


def until_error(reader: LogReader) -> tuple[int, LogError]:
    """How many lines ``reader`` gave before its error, and the error."""
    got = 0
    try:
        for _ in reader:
            got += 1
    except LogError as exc:
        return got, exc
    raise AssertionError("read to the end without an error")


def tick(t: int) -> bytes:
    return b'{"t":%d,"arena":{"type":"tick"}}' % t


def big_log(path: Path, n: int = 3000) -> bytes:
    rows = [b'{"arena_log":1}'] + [tick(T0 + i) for i in range(n)]
    data = b"\n".join(rows) + b"\n"
    path.write_bytes(members([data[: len(data) // 2], data[len(data) // 2 :]], path.suffix))
    return data


@pytest.mark.parametrize("suffix", ["", ".gz", ".lz4"])
def test_a_reader_thread_reads_the_log_as_the_reader_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    path = tmp_path / f"log.jsonl{suffix}"
    data = big_log(path)
    monkeypatch.setattr(readahead, "MIN_BYTES", 1 << 60)
    alone = LogReader([str(path)])
    want = list(alone)
    monkeypatch.setattr(readahead, "MIN_BYTES", 0)
    seen: list[str] = []
    reader = LogReader([str(path)])
    for line in reader:
        if not seen:
            seen.extend(t.name for t in readers())
        assert line == want[reader.lineno - 2]
    assert seen == ["arena-log-read"]  # it was read ahead
    assert reader.sha256 == alone.sha256 == hashlib.sha256(data).hexdigest()
    assert reader.inputs == alone.inputs == 3000


def test_a_reader_stopped_early_stops_its_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readahead, "MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "_POLL_S", 30.0)  # (the thread is woken, not polled)
    path = tmp_path / "log.jsonl.lz4"
    big_log(path)
    reader = LogReader([str(path)])
    lines = iter(reader)
    assert next(lines).t == T0
    time.sleep(0.3)  # the thread fills its queue and waits to queue the next piece
    assert readers()
    t0 = time.monotonic()
    reader.close()
    assert not readers()
    assert time.monotonic() - t0 < 5


# A reader left unclosed (in a reference cycle: collected only as the interpreter shuts
# down) while its thread is inside a read of a buffered file, holding the file's lock.
_LEFT_OPEN = textwrap.dedent(
    """
    import io, sys, threading, time
    from arena_tui.logs import readahead
    from arena_tui.logs.logfile import LogReader

    readahead.MIN_BYTES = 0
    readahead.OUT = 4096  # (the first piece is one read; the thread is in the second)
    reading = threading.Event()

    class Slow(io.RawIOBase):
        def __init__(self, path):
            self.f = open(path, "rb", buffering=0)
            self.reads = 0
        def readable(self):
            return True
        def readinto(self, b):
            self.reads += 1
            if self.reads > 1:
                reading.set()
                time.sleep(1.0)
            return self.f.readinto(b)

    reader = LogReader([sys.argv[1]], opener=lambda p: io.BufferedReader(Slow(p), 64))
    lines = iter(reader)
    next(lines)
    assert reading.wait(5)
    cycle = [reader, lines]
    cycle.append(cycle)
    del reader, lines, cycle
    print("left", flush=True)
    """
)


def test_an_exit_with_a_reader_left_mid_read_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    big_log(path)
    script = tmp_path / "left.py"
    script.write_text(_LEFT_OPEN)
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, str(script), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )
    # before: "Fatal Python error: _enter_buffered_busy" and SIGABRT at the exit
    assert (done.returncode, done.stdout, done.stderr) == (0, "left\n", "")


def test_a_bad_line_read_ahead_is_its_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readahead, "MIN_BYTES", 0)
    rows = [b'{"arena_log":1}'] + [tick(T0 + i) for i in range(2000)]
    rows[1500] = b'{"t":"soon"}'
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n".join(rows) + b"\n"))
    got, error = until_error(LogReader([str(path)]))
    assert (error.path, error.lineno, got) == (str(path), 1501, 1499)
    assert not readers()


def test_a_file_cut_inside_a_member_read_ahead_is_a_log_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cut.jsonl.lz4"
    big_log(path)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) * 3 // 4])
    counts = []
    for least in (1 << 60, 0):  # read alone, then ahead
        monkeypatch.setattr(readahead, "MIN_BYTES", least)
        got, error = until_error(LogReader([str(path)]))
        assert "truncated or corrupt" in error.message
        counts.append((got, str(error)))
    assert counts[0] == counts[1]
    assert 1499 <= counts[0][0] < 3000  # the first frame's lines, and what the second gave


@pytest.mark.parametrize("suffix", ["", ".gz", ".lz4"])
def test_raw_lines_read_ahead_are_the_raw_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    """``iter_raw_lines(ahead=True)`` (a whole file: an import's, ``arena logs check``'s):
    the same lines, hash and torn tail as the reads through ``open_binary``."""
    monkeypatch.setattr(readahead, "MIN_BYTES", 0)
    path = tmp_path / f"raw.jsonl{suffix}"
    data = big_log(path)
    cut = members([data, b'{"t":1,"arena'], suffix)  # a torn tail after the last line
    path.write_bytes(cut)
    got = []
    for ahead in (False, True):
        hasher, tails = hashlib.sha256(), list[bytes]()
        lines = list(iter_raw_lines(path, hasher, tails.append, ahead=ahead))
        got.append((lines, hasher.hexdigest(), tails))
    assert got[0] == got[1]
    assert got[0][0] == data.split(b"\n")[:-1] and got[0][2] == [b'{"t":1,"arena']
    assert not readers()


def test_a_gzip_header_with_a_reserved_flag_set_is_refused(tmp_path: Path) -> None:
    """RFC 1952: a reserved FLG bit must be an error (gzip's file object ignores it)."""
    whole = bytearray(gzip.compress(tick(T0) + b"\n", mtime=0))
    whole[3] |= 0x20  # FLG: a reserved bit
    path = tmp_path / "flag.jsonl.gz"
    path.write_bytes(bytes(whole))
    for ahead in (False, True):
        with pytest.raises(zlib.error, match="unknown header flags set"):
            read_chunks(path, ahead)
