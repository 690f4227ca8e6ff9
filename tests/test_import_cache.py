"""``arena import`` keeps the day cache from its own check of the lines, not a read back.

One source file's lines are the log's, in order, so the importer feeds them to the day
cache's writer as pass 1 checks them and commits it once the log is in place. The cache it
keeps must be the one a reader of the written log keeps (``logs.daykeep.keep_day``), byte
for byte: the lines, every column, the header; only the time it was built may differ. An
import that fails keeps nothing and leaves no temporary in the cache directory.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena_tui.commands import imports as imports_command
from arena_tui.logs import daycols, daywrite, importers, logcheck
from arena_tui.logs.daycache import CachedDay, has_day
from arena_tui.logs.dayformat import PRE, read_meta
from arena_tui.logs.daykeep import keep_day
from arena_tui.logs.daywrite import DayCacheWriter
from arena_tui.logs.importers import SourceError, import_files
from tests.clirun import ROOT

DATA = ROOT / "tests" / "data"
META = DATA / "meta_2023.json"
SOURCES = {
    "hftbacktest": DATA / "hftbacktest_collector_btc_20250126.gz",
    "hl-archive": DATA / "hl_archive_l2Book_BTC_20240101_12_first20.lz4",
}
NS = 1_737_918_843_000 * 10**6


def day_file(cache: Path) -> bytes:
    [path] = [p for p in cache.iterdir() if p.suffix == ".day"]
    return path.read_bytes()


def same_cache(a: bytes, b: bytes) -> None:
    *_, head_off, _ = PRE.unpack_from(a)
    assert a[PRE.size : head_off] == b[PRE.size : head_off]  # the lines and every column
    meta_a, meta_b = msgspec.structs.asdict(read_meta(a)), msgspec.structs.asdict(read_meta(b))
    meta_a.pop("built_ms")
    meta_b.pop("built_ms")
    assert meta_a == meta_b


def imported_and_read_back(
    src: Path, fmt: str, tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[bytes, bytes]:
    out = tmp / "day.jsonl.lz4"
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp / "imported"))
    import_files([str(src)], fmt, out=out, meta_file=META)
    imported = day_file(tmp / "imported")
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp / "read"))
    assert keep_day(out) is not None
    return imported, day_file(tmp / "read")


@pytest.mark.parametrize("fmt", sorted(SOURCES))
def test_the_imported_cache_is_the_one_a_reader_keeps(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    same_cache(*imported_and_read_back(SOURCES[fmt], fmt, tmp_path, monkeypatch))


@pytest.mark.parametrize("ext", [".jsonl", ".jsonl.gz", ".jsonl.lz4"])
@pytest.mark.parametrize("fmt", sorted(SOURCES))
def test_a_one_file_import_reads_its_source_once_and_writes_the_same_bytes(
    fmt: str, ext: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the day cache on, the log's body is written from the lines pass 1 checked
    (kept by the cache's writer), not from a second read of the source: the source is
    read once, and the log is the same bytes as the two-pass import's (the cache off),
    compressed too (the same pieces, cut small here so there are many)."""
    reads: list[str] = []
    records = importers.records

    def counted(path: str, *args: Any, **kwargs: Any) -> Any:
        reads.append(path)
        return records(path, *args, **kwargs)

    monkeypatch.setattr(importers, "records", counted)
    monkeypatch.setattr(importers, "BATCH", 200)
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    import_files([str(SOURCES[fmt])], fmt, out=tmp_path / f"once{ext}", meta_file=META)
    assert reads == [str(SOURCES[fmt])]
    monkeypatch.setenv("ARENA_CACHE", "0")
    import_files([str(SOURCES[fmt])], fmt, out=tmp_path / f"twice{ext}", meta_file=META)
    assert len(reads) == 3  # pass 1, then pass 2 reading the source again
    once, twice = (tmp_path / f"once{ext}").read_bytes(), (tmp_path / f"twice{ext}").read_bytes()
    assert once == twice and len(once) > 0


@pytest.mark.parametrize("fmt", sorted(SOURCES))
def test_an_import_reads_each_book_s_levels_once(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pass 1's check of a book reads its levels' numbers, and the day cache's columns take
    them as read: every read of levels (the check's, the columns') is counted, one a book.
    The cache is still the one a reader of the written log keeps (the test above)."""
    reads = [0]

    def counted(read: Any) -> Any:
        def wrapped(raw: bytes) -> Any:
            reads[0] += 1
            return read(raw)

        return wrapped

    for module in (logcheck, daycols):
        for name in ("fast_form", "levels_e8"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, counted(getattr(module, name)))
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    s = import_files([str(SOURCES[fmt])], fmt, out=tmp_path / "day.jsonl.lz4", meta_file=META)
    assert s.books > 10
    assert reads[0] == s.books
    assert day_file(tmp_path / "cache")  # and the cache was kept


def test_the_command_does_not_open_the_cache_it_just_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arena import`` of one file keeps the cache as it writes the log, and does not then
    open it whole to find it there (the checksums over every byte just written); when it
    could not keep one (here: the writer gave up), the command keeps it by reading the log."""
    loads: list[str] = []
    load = CachedDay._load

    def counted(self: CachedDay, *args: Any) -> None:
        loads.append(self.path)
        load(self, *args)

    monkeypatch.setattr(CachedDay, "_load", counted)
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "day.jsonl.lz4"
    s = imports_command._run("hftbacktest", [SOURCES["hftbacktest"]], META, None, out)
    assert s.cached and loads == []
    assert has_day(out, s.coins)
    monkeypatch.setattr(DayCacheWriter, "add", lambda self, *a: self.discard())  # (pass 1)
    again = tmp_path / "again.jsonl.lz4"
    s = imports_command._run("hftbacktest", [SOURCES["hftbacktest"]], META, None, again)
    assert not s.cached and has_day(again, s.coins)  # kept by reading the log back


def test_a_cache_that_fails_midway_leaves_the_import_to_its_two_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The day cache's writer gives up part way (no space, say): the log is written by
    reading the source again, the same bytes as with the cache off, and no cache is kept."""
    src = SOURCES["hftbacktest"]
    add_many = DayCacheWriter.add_many
    batches = [0]

    def full_disk(
        self: DayCacheWriter, raws: list[bytes], lines: list[Any], read: Any = None
    ) -> None:
        batches[0] += 1
        if batches[0] == 2:
            self.discard()  # what an OSError in add_many does
        add_many(self, raws, lines, read)

    monkeypatch.setattr(DayCacheWriter, "add_many", full_disk)
    monkeypatch.setattr(daywrite, "BATCH", 4)  # lines a batch: several batches
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    import_files([str(src)], "hftbacktest", out=tmp_path / "failed.jsonl.lz4", meta_file=META)
    assert batches[0] >= 2
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file()] == []
    monkeypatch.setenv("ARENA_CACHE", "0")
    import_files([str(src)], "hftbacktest", out=tmp_path / "plain.jsonl.lz4", meta_file=META)
    failed = (tmp_path / "failed.jsonl.lz4").read_bytes()
    assert failed == (tmp_path / "plain.jsonl.lz4").read_bytes()


def collector(path: Path, rows: list[tuple[int, str]]) -> Path:
    with gzip.open(path, "wt") as f:
        f.writelines(f"{ns} {msg}\n" for ns, msg in rows)
    return path


def book(t: int, levels: str) -> str:
    data = f'{{"coin":"BTC","time":{t},"levels":{levels}}}'
    return f'{{"channel":"l2Book","data":{data}}}'


def test_odd_books_held_times_and_other_channels_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = '[[{"px":"100.5","sz":"1","n":1}],[{"px":"101","sz":"2.25","n":2}]]'
    rows = [
        (NS, book(1, full)),
        (NS - 3_000_000, book(2, '[[{"n":1,"px":"99","sz":"3"}],[]]')),  # held: t raised
        (NS + 1, book(3, '[ [{"px": "100.0", "sz":"1", "n":1}], [] ]')),  # whitespace
        (NS + 2, book(4, '[[{"px":"99999999999999","sz":"1","n":1}],[]]')),  # past int64 as e8
        (NS + 3, book(5, '[[{"px":"1","sz":"1","n":1,"x":0}],[]]')),  # an extra key
        (NS + 4, '{"channel":"subscriptionResponse","data":{}}'),
        (
            NS + 5,
            '{"channel":"trades","data":[{"coin":"BTC","side":"B","px":"100.5","sz":"0.1",'
            '"time":5,"hash":"0x0","tid":7,"users":["0x1","0x2"]}]}',
        ),
    ]
    src = collector(tmp_path / "odd.gz", rows)
    same_cache(*imported_and_read_back(src, "hftbacktest", tmp_path, monkeypatch))


def test_a_failed_import_keeps_no_cache_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = collector(tmp_path / "bad.gz", [(NS, book(1, "[[],[]]")), (NS, book(2, '[["x"],[]]'))])
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(SourceError):
        import_files([str(src)], "hftbacktest", out=tmp_path / "out.jsonl", meta_file=META)
    assert [p for p in (tmp_path / "cache").iterdir() if p.is_file()] == []
    assert not (tmp_path / "out.jsonl").exists()
