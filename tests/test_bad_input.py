"""Bad data, bad output paths and a used ``--out`` each get one clear line (issue 11, 7-9).

7. A log is UTF-8 JSON Lines: a line that is not UTF-8 anywhere (in a book's levels, which
   the reader skims, in a field or a key it skips, in the header) is refused naming the file
   and line, by ``arena replay``, ``arena logs check`` (which goes on), ``arena host`` and
   ``arena register``; a flipped byte in a ``.lz4`` file too. Valid non-ASCII passes.
8. An output path the system refuses (a missing directory, a file where a directory
   belongs, no permission) is one ``arena: error:`` line naming the option and the path.
9. ``arena backtest``, ``arena paper`` and arena-tui refuse an ``--out`` holding a run
   unless ``--force``, which deletes that run's files (and only a run's files) first.
"""

from __future__ import annotations

import gzip
import json
import select
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import lz4.frame
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_tui.logs.logcheck import check_logs
from arena_tui.logs.logfile import BadLine, LogError, LogReader, decode_line, read_header
from arena_tui.run.build import run_dir
from arena_tui.run.paper import paper_config, prepare_paper
from arena_tui.run.parts import BacktestError
from arena_tui.tui.source import prepare, watched_run
from arena_tui.util.errors import run_cli
from engine import Line
from tests.build import T0, book, chunked, tick, trades
from tests.clirun import ROOT, arena, arena_here, one_error_line, until
from tests.fakehl import FakeHL
from tests.hostkit import season_file
from tests.paperkit import running_season, write_taker

SAMPLE = ROOT / "recordings/sample-btc-20250126.jsonl"
MOMENTUM = ROOT / "strategies/momentum.py"
META = ROOT / "tests/data/meta_2023.json"
HFT = ROOT / "tests/data/hftbacktest_collector_btc_20250126.gz"
BTC = {"coin": "BTC", "asset": 0, "szDecimals": 5}
HEADER = {"arena_log": 1, "recording": "synthetic", "markets": [BTC]}
SUFFIXES = ("", ".gz", ".lz4")
ARENA_TUI = "from arena_tui.tui.cli import main; main()"
# byte sequences that are not UTF-8: a stray continuation byte, a bad lead byte, an
# overlong "/", an encoded surrogate, a code point above U+10FFFF, a cut-off "€"
NOT_UTF8 = (b"\x80", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82")


# ---- helpers ---------------------------------------------------------------------------


def enc(row: Any) -> bytes:
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False).encode()


def put(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path``, compressed as its extension says."""
    if path.name.endswith(".gz"):
        data = gzip.compress(data)
    elif path.name.endswith(".lz4"):
        data = lz4.frame.compress(data)
    path.write_bytes(data)
    return path


def log_bytes(rows: list[bytes]) -> bytes:
    return b"".join(r + b"\n" for r in [enc(HEADER), *rows])


def good_rows() -> list[bytes]:
    """Line 2 on: a book, a trade, a gap whose reason is non-ASCII (valid), a tick."""
    gap = {"t": T0 + 2, "arena": {"type": "gap", "from": T0, "to": T0 + 2, "reason": "café ☕"}}
    return [
        enc(book(T0, "BTC", bids=[("100.0", "1.0")], asks=[("101.0", "1.0")])),
        enc(trades(T0 + 1, ("BTC", "100.5", "0.1", T0, 1))),
        enc(gap),
        enc(tick(T0 + 3)),
    ]


def read_until_refused(path: Path) -> tuple[list[Line], LogError]:
    """The inputs read before the reader refused ``path``, and its error."""
    got: list[Line] = []
    reader = iter(LogReader([str(path)], coins=["BTC"]))
    try:
        while True:
            got.append(next(reader))
    except LogError as err:
        return got, err
    except StopIteration:
        raise AssertionError(f"{path}: read whole, {len(got)} inputs, nothing refused") from None


def corrupt(data: bytes, marker: bytes, old: bytes, new: bytes) -> tuple[bytes, int]:
    """``data`` with ``old`` replaced by ``new`` in the first line holding ``marker``; the
    line's number (the header is line 1)."""
    lines = data.split(b"\n")
    i = next(n for n, line in enumerate(lines) if n and marker in line and old in line)
    lines[i] = lines[i].replace(old, new, 1)
    return b"\n".join(lines), i + 1


def bad_sample(tmp: Path, marker: bytes, old: bytes, new: bytes, name: str) -> tuple[Path, int]:
    data, lineno = corrupt(SAMPLE.read_bytes(), marker, old, new)
    path = tmp / name
    path.write_bytes(data)
    return path, lineno


def flipped_lz4(data: bytes) -> tuple[bytes, int]:
    """``data`` LZ4-compressed with one bit of the compressed stream flipped so that it
    still decompresses to as many bytes and lines, one of them changed; that line's number."""
    packed = lz4.frame.compress(data, content_checksum=False)
    for pos in range(len(packed) // 2, len(packed)):
        flipped = bytearray(packed)
        flipped[pos] ^= 0x80
        try:
            out = lz4.frame.decompress(bytes(flipped))
        except RuntimeError:
            continue
        if len(out) != len(data) or out.count(b"\n") != data.count(b"\n") or out == data:
            continue
        first = next(i for i, (a, b) in enumerate(zip(out, data, strict=True)) if a != b)
        if out[: first + 1].count(b"\n") != data[: first + 1].count(b"\n"):
            continue  # a newline moved: lines merge or split
        lineno = data.count(b"\n", 0, first) + 1
        if lineno > 1:
            return bytes(flipped), lineno
    raise AssertionError("no flip of this stream decompresses to a changed line")


# ---- 7: the reader refuses a line that is not UTF-8 -------------------------------------

SPOTS = {  # where the bad bytes go: (row index in good_rows, what they replace)
    "a book's levels (skimmed)": (0, b'"100.0"', b'"10{}0.0"'),
    "a trade's hash (skipped)": (1, b'"hash":"0x0"', b'"hash":"0x{}0"'),
    "a key name (skipped)": (1, b'"users"', b'"us{}ers"'),
    "a gap's reason (decoded)": (2, "café".encode(), b"caf{}"),
}


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("spot", SPOTS)
def test_the_reader_refuses_a_line_not_utf8_naming_the_file_and_line(
    tmp_path: Path, spot: str, suffix: str
) -> None:
    index, old, new = SPOTS[spot]
    for bad in NOT_UTF8:
        rows = good_rows()
        rows[index] = rows[index].replace(old, new.replace(b"{}", bad), 1)
        assert rows[index] != good_rows()[index]
        path = put(tmp_path / f"log{NOT_UTF8.index(bad)}.jsonl{suffix}", log_bytes(rows))
        got, err = read_until_refused(path)
        assert (err.path, err.lineno) == (str(path), index + 2)
        assert "not valid UTF-8" in err.message
        assert len(got) == index  # every line before it was read
        with pytest.raises(BadLine, match="not valid UTF-8"):
            decode_line(rows[index])


def test_a_header_not_utf8_is_refused_on_line_1(tmp_path: Path) -> None:
    header = enc({**HEADER, "recording": "synthétique"}).replace("é".encode(), b"\xe9")
    path = tmp_path / "log.jsonl"
    path.write_bytes(header + b"\n" + b"".join(r + b"\n" for r in good_rows()))
    for read in (read_header, lambda p: list(LogReader([str(p)]))):
        with pytest.raises(LogError) as info:
            read(path)
        assert info.value.lineno == 1 and "not valid UTF-8" in info.value.message


text = st.text(st.characters(codec="utf-8"), max_size=12)  # no lone surrogates


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    reasons=st.lists(text, min_size=1, max_size=8),
    chunk=st.integers(1, 300),
    bad=st.none() | st.tuples(st.integers(0, 7), st.sampled_from(NOT_UTF8)),
)
def test_utf8_is_checked_whatever_the_chunks(
    tmp_path: Path, reasons: list[str], chunk: int, bad: tuple[int, bytes] | None
) -> None:
    """Valid non-ASCII reads back intact however the file is cut into chunks (a character
    split between two); bytes that are not UTF-8 are refused at their own line."""
    rows = [
        enc({"t": T0 + i, "arena": {"type": "gap", "from": T0, "to": T0 + i, "reason": r}})
        for i, r in enumerate(reasons)
    ]
    if bad is not None:  # in a field the reader skips
        at = bad[0] % len(rows)
        rows[at] = rows[at].replace(b'"reason":', b'"note":"' + bad[1] + b'","reason":', 1)
    path = tmp_path / "chunks.jsonl"
    path.write_bytes(log_bytes(rows))
    with chunked(chunk, ahead=False):
        if bad is None:
            got = list(LogReader([str(path)]))
            assert [line.arena.reason for line in got] == reasons  # type: ignore[union-attr]
        else:
            before, err = read_until_refused(path)
            assert err.lineno == at + 2 and len(before) == at
            assert "not valid UTF-8" in err.message


def test_logs_check_reports_each_line_not_utf8_and_goes_on(tmp_path: Path) -> None:
    rows = good_rows()
    rows[0] = rows[0].replace(b'"100.0"', b'"10\xff0.0"')  # the levels
    rows[1] = rows[1].replace(b'"hash":"0x0"', b'"hash":"0x\xfe"')  # a field it skips
    path = put(tmp_path / "log.jsonl", log_bytes(rows))
    report = check_logs([str(path)])
    assert report.bad_lines == 2 and not report.ok
    assert [(s["line"], s["reason"][:20]) for s in report.shown] == [
        (2, "not valid UTF-8 (byt"),
        (3, "not valid UTF-8 (byt"),
    ]
    assert report.inputs == 2  # the gap and the tick after them were read and counted


def test_arena_replay_and_logs_check_refuse_a_book_level_not_utf8(tmp_path: Path) -> None:
    path, n = bad_sample(tmp_path, b'"l2Book"', b'"105055.0"', b'"10505\xff.0"', "levels.jsonl")
    done = arena("replay", str(path))
    assert one_error_line(done) == (
        f"arena: error: {path}:{n}: not valid UTF-8 (byte 95 of the line is 0xff)"
    )
    assert done.returncode == 1
    checked = arena("logs", "check", str(path))
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert f"{path}:{n}: not valid UTF-8" in checked.stdout
    assert "bad lines: 1" in checked.stdout  # reported, and the check went on


def test_arena_replay_refuses_bytes_not_utf8_in_a_field_it_skips(tmp_path: Path) -> None:
    path, n = bad_sample(tmp_path, b'"trades"', b'"hash":"0x', b'"hash":"0x\xc3(', "hash.jsonl")
    done = arena_here("replay", str(path), "--json", cwd=ROOT)
    assert one_error_line(done).startswith(f"arena: error: {path}:{n}: not valid UTF-8")
    assert done.stdout == ""


def test_arena_replay_refuses_a_flipped_byte_in_an_lz4_log(tmp_path: Path) -> None:
    data, n = flipped_lz4(SAMPLE.read_bytes())
    path = tmp_path / "flipped.jsonl.lz4"
    path.write_bytes(data)
    season = ROOT / "seasons/sample-btc-20250126.toml"
    done = arena_here("replay", str(path), "--season", str(season), cwd=ROOT)
    assert one_error_line(done).startswith(f"arena: error: {path}:{n}: ")
    assert done.returncode == 1


def start_host(args: list[str]) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "arena_tui.cli", "host", "--port", "0", "--json", *args]
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_arena_host_and_register_refuse_a_log_line_not_utf8(tmp_path: Path) -> None:
    season = season_file(tmp_path / "season.json", markets=[BTC])
    log = tmp_path / "host" / "season.jsonl"
    args = ["--season", str(season), "--log", str(log), "--replay", str(SAMPLE), "--speed", "600"]
    proc = start_host(args)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready and proc.stdout.readline(), "the host did not start"
        until(lambda: b'"l2Book"' in log.read_bytes(), "the host to log a book")
        proc.terminate()
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    done = arena("register", "alice", "--log", str(log))
    assert done.returncode == 0, done.stderr
    good = log.read_bytes()
    assert b'"l2Book"' in good and b'"register"' in good

    data, n = corrupt(good, b'"l2Book"', b'"px":"', b'"px":"\xff')
    log.write_bytes(data)
    restarted = start_host([*args, "--checkpoint-every", "off"])  # (they no longer match)
    out, err = restarted.communicate(timeout=60)
    failed = subprocess.CompletedProcess(restarted.args, restarted.returncode, out, err)
    assert one_error_line(failed).startswith(f"arena: error: {log}:{n}: not valid UTF-8")
    assert failed.returncode == 1 and out == ""

    data, n = corrupt(good, b'"register"', b'"entry"', b'"en\xfftry":1,"entry"')
    log.write_bytes(data)
    done = arena("register", "bob", "--log", str(log))
    assert one_error_line(done).startswith(f"arena: error: {log}:{n}: not valid UTF-8")


# ---- 8: an output path that cannot be written ------------------------------------------


@pytest.mark.parametrize("option", ["--fills", "--scores"])
def test_arena_replay_names_an_output_it_cannot_write(tmp_path: Path, option: str) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    for path, reason in [
        (tmp_path / "missing" / "dir" / "out.jsonl", "No such file or directory"),
        (afile / "out.jsonl", "Not a directory"),
    ]:
        done = arena_here("replay", str(SAMPLE), option, str(path), cwd=ROOT)
        assert one_error_line(done) == f"arena: error: {option} {path}: cannot write: {reason}"
        assert done.returncode == 1 and done.stdout == ""


def test_arena_replay_never_writes_its_output_over_a_log_it_reads(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    shutil.copy(SAMPLE, log)
    done = arena_here("replay", str(log), "--fills", str(log), cwd=ROOT)
    assert "is a log being replayed" in one_error_line(done)
    assert log.read_bytes() == SAMPLE.read_bytes()


def under_a_file(tmp: Path, name: str) -> Path:
    afile = tmp / "afile"
    afile.write_text("")
    return afile / name


def test_every_command_names_an_output_under_a_file(tmp_path: Path) -> None:
    """A path whose parent is a file: one line naming the path, exit 1, no traceback."""
    bad = str(under_a_file(tmp_path, "x"))
    commands = [
        ["backtest", str(MOMENTUM), str(SAMPLE), "--out", bad],
        ["paper", str(MOMENTUM), "--coins", "BTC", "--meta", str(META), "--out", bad],
        ["synth", "--hours", "0.01", "--out", bad + ".jsonl"],
        ["import", "hftbacktest", str(HFT), "--meta", str(META), "--out", bad + ".jsonl"],
        [
            *("season", "new", "s1", "--coins", "BTC", "--meta", str(META)),
            *("--start", "2030-01-01T00:00Z", "--end", "2030-01-02T00:00Z", "--out", bad + ".toml"),
        ],
    ]
    for args in commands:
        done = arena(*args)
        line = one_error_line(done)
        assert done.returncode == 1, args
        assert f"{bad}" in line and "cannot write" in line and "Not a directory" in line, line


def test_arena_host_and_record_name_a_path_under_a_file(tmp_path: Path) -> None:
    bad = under_a_file(tmp_path, "x")
    season = season_file(tmp_path / "season.json", markets=[BTC])
    host = arena("host", "--log", f"{bad}.jsonl", "--season", str(season), "--port", "0")
    assert one_error_line(host) == (
        f"arena: error: --log {bad}.jsonl: cannot write: {bad.parent}: Not a directory"
    )
    with FakeHL() as srv:
        rec = arena(
            "record", "--coins", "BTC", "--out", str(bad), "--info-url", srv.info_url,
            "--ws-url", srv.ws_url,
        )  # fmt: skip
    assert one_error_line(rec) == f"arena: error: --out {bad}: cannot write: Not a directory"


def test_cannot_write_says_what_the_system_said() -> None:
    from arena_tui.util.outputs import OutputError, cannot_write, writing  # new in issue 11

    denied = PermissionError(13, "Permission denied", "/srv/out.csv")
    assert str(cannot_write("/srv/out.csv", denied, "--fills")) == (
        "--fills /srv/out.csv: cannot write: Permission denied"
    )
    parent = FileExistsError(17, "File exists", "/srv/afile")
    assert str(cannot_write(Path("/srv/afile/x"), parent)) == (
        "/srv/afile/x: cannot write: /srv/afile: Not a directory"
    )
    with pytest.raises(OutputError) as info, writing("d", "--out"):
        raise OSError(28, "No space left on device")
    assert str(info.value) == "--out d: cannot write: No space left on device"


def test_an_oserror_naming_a_file_that_no_command_caught_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def command() -> None:
        raise PermissionError(13, "Permission denied", "/srv/x")

    with pytest.raises(SystemExit) as exited:
        run_cli(command, "arena")
    assert exited.value.code == 1
    assert capsys.readouterr().err == "arena: error: /srv/x: Permission denied\n"


# ---- 9: an --out holding a run ---------------------------------------------------------


def files_of(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_arena_backtest_refuses_an_out_holding_a_run_unless_force(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["backtest", str(MOMENTUM), str(SAMPLE), "--out", str(out), "--json"]
    first = arena_here(*args, cwd=ROOT)
    assert first.returncode == 0, first.stderr
    before = files_of(out)
    assert {"run.jsonl", "ranking.json", "report.json"} <= set(before)

    again = arena_here(*args, cwd=ROOT)
    assert one_error_line(again) == (
        f"arena: error: --out {out} already holds a run (run.jsonl): give --force to replace "
        "it, or choose another --out"
    )
    assert files_of(out) == before  # untouched

    (out / "old-season.json").write_text("{}")  # files an earlier run left, of a run's kinds
    (out / "alice.log").write_text("old\n")
    forced = arena_here(*args, "--force", cwd=ROOT)
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout) == json.loads(first.stdout)
    assert set(files_of(out)) == set(before)  # the new run's files, nothing of the old
    replayed = arena_here("replay", str(out / "run.jsonl"), "--json", cwd=ROOT)
    assert json.loads(replayed.stdout) == json.loads((out / "ranking.json").read_text())

    for command in ("backtest", "paper"):
        help_text = " ".join(
            arena_here(command, "--help", cwd=ROOT).stdout.replace("│", " ").split()
        )
        assert "one holding a run already is refused unless --force" in help_text
        assert "Replace the run already in --out: its files are deleted first" in help_text


def test_force_deletes_only_a_runs_files(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.jsonl").write_text("old\n")
    (out / "notes.md").write_text("mine\n")
    with pytest.raises(BacktestError, match=r"holds notes\.md, which is not a run's file"):
        run_dir(out, MOMENTUM, force=True)
    assert sorted(p.name for p in out.iterdir()) == ["notes.md", "run.jsonl"]
    (out / "notes.md").unlink()
    (out / "sub").mkdir()
    with pytest.raises(BacktestError, match="holds sub, which is not a run's file"):
        run_dir(out, MOMENTUM, force=True)
    (out / "sub").rmdir()
    assert run_dir(out, MOMENTUM, force=True) == out and list(out.iterdir()) == []


def test_a_default_run_directory_is_always_new(tmp_path: Path) -> None:
    base = tmp_path / "runs" / "momentum-20260101-000000"
    with mock.patch("arena_tui.run.build.default_out", return_value=base):
        made = [run_dir(None, MOMENTUM) for _ in range(3)]
    assert made == [base, base.with_name(base.name + "-2"), base.with_name(base.name + "-3")]
    assert all(d.is_dir() for d in made)


def test_arena_paper_refuses_a_used_out_unless_force(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.jsonl").write_text("an earlier live run\n")
    (out / "old.json").write_text("{}")
    season = running_season(tmp_path / "season.json")
    spec = paper_config(write_taker(tmp_path / "taker.py"), season=season, out=out)
    with pytest.raises(BacktestError, match="already holds a run"):
        prepare_paper(spec)
    assert (out / "run.jsonl").read_text() == "an earlier live run\n"
    bt, _ = prepare_paper(paper_config(spec.strategy_path(), season=season, out=out, force=True))
    bt.log.close()
    assert not (out / "old.json").exists()
    assert (out / "run.jsonl").read_bytes().startswith(b'{"arena_log":1')


def test_arena_tui_refuses_a_used_out_unless_force(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.jsonl").write_text("old\n")
    with pytest.raises(BacktestError, match="already holds a run"):
        prepare(watched_run((SAMPLE,), MOMENTUM, out=out))
    assert (out / "run.jsonl").read_text() == "old\n"
    bt, _ = prepare(watched_run((SAMPLE,), MOMENTUM, out=out, force=True))
    bt.log.close()
    assert (out / "run.jsonl").read_bytes().startswith(b'{"arena_log":1')

    (out / "run.jsonl").write_text("old\n")
    for args in ([str(SAMPLE), "--strategy", str(MOMENTUM)], []):  # a run at once; the start screen
        done = subprocess.run(
            [sys.executable, "-c", ARENA_TUI, *args, "--out", str(out)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert "already holds a run" in one_error_line(done)
        assert (out / "run.jsonl").read_text() == "old\n"


def test_an_arena_tui_session_puts_its_later_runs_beside_out(tmp_path: Path) -> None:
    from arena_tui.run.rundir import session_dir  # new in issue 11

    out = tmp_path / "run"
    assert session_dir(out) == out  # the session's first run
    out.mkdir()
    (out / "run.jsonl").write_text("the session's first run\n")
    assert session_dir(out) == tmp_path / "run-2"
    (tmp_path / "run-2").mkdir()
    assert session_dir(out) == tmp_path / "run-3"
    assert (out / "run.jsonl").read_text() == "the session's first run\n"
