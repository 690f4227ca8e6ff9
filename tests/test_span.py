"""A log's first and last input times without a second pass (issue 13, item 3).

A compressed log's end comes from its header's ``last_t`` (``import`` and ``synth`` write
it), a plain log's from reading back from its end; only a compressed log with no claim is
read through. A header's claim is checked by the pass that replays the log: a false one
is one error naming the file, never another window.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import lz4.frame
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arena_tui.logs.logfile as logfile
from arena_tui.logs.logcheck import check_logs
from arena_tui.logs.logfile import LogError, LogReader
from arena_tui.run.backtest import Backtest
from arena_tui.run.config import RunConfig
from arena_tui.run.parts import Entrant
from arena_tui.season.file import SeasonError, input_bounds, resolve_season
from arena_tui.strategy import Strategy
from tests.build import MIN, T0
from tests.clirun import arena, arena_here

ROOT = Path(__file__).resolve().parent.parent
MARKETS = [{"coin": "BTC", "asset": 0, "szDecimals": 5}]
PAD = "x" * 400  # an ignored field: a few thousand lines make a file of several MB


def book_line(t: int) -> bytes:
    levels = [[{"px": "100.0", "sz": "1.0", "n": 1}], [{"px": "101.0", "sz": "1.0", "n": 1}]]
    msg = {"channel": "l2Book", "data": {"coin": "BTC", "time": t, "levels": levels}}
    return json.dumps({"t": t, "hl": msg, "pad": PAD}, separators=(",", ":")).encode()


def write(path: Path, times: list[int], claims: dict[str, Any] | None = None) -> Path:
    header = {"arena_log": 1, "recording": "hyperliquid", "markets": MARKETS, **(claims or {})}
    data = b"\n".join([json.dumps(header).encode(), *map(book_line, times)]) + b"\n"
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    elif path.name.endswith(".lz4"):
        data = lz4.frame.compress(data)
    path.write_bytes(data)
    return path


def claims_of(times: list[int]) -> dict[str, int]:
    return {"first_t": times[0], "last_t": times[-1]}


class Counting:
    """Every byte any log reader decompresses, through ``open_binary`` wherever imported."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = 0
        real = logfile.open_binary

        def counted(path: Any, *args: Any) -> IO[bytes]:
            f = real(path, *args)
            outer = self

            class Wrapped:
                def __enter__(self) -> Wrapped:
                    return self

                def __exit__(self, *exc: object) -> None:
                    f.close()

                def read(self, n: int = -1) -> bytes:
                    data = f.read(n)
                    outer.read += len(data)
                    return data

                def readline(self) -> bytes:
                    data = f.readline()
                    outer.read += len(data)
                    return data

                def close(self) -> None:
                    f.close()

            return Wrapped()  # type: ignore[return-value]

        monkeypatch.setattr(logfile, "open_binary", counted)
        for name in ("arena_tui.logs.span", "arena_tui.season.file"):
            module = sys.modules.get(name)
            if module is not None and hasattr(module, "open_binary"):
                monkeypatch.setattr(module, "open_binary", counted)


def many(n: int = 12_000) -> list[int]:
    """Inputs a few hundred ms apart over about an hour: a file of several MB."""
    return [T0 + 13 + i * 307 for i in range(n)]


@pytest.mark.parametrize("suffix", [".gz", ".lz4"])
def test_a_compressed_log_with_claims_is_not_read_through(
    tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    times = many()
    log = write(tmp_path / f"day.jsonl{suffix}", times, claims_of(times))
    size = len(b"".join(map(book_line, times)))
    assert size > 4 * logfile.CHUNK
    counting = Counting(monkeypatch)
    season = resolve_season([str(log)], None)
    assert counting.read <= 2 * logfile.CHUNK  # its head, never its body
    assert (season.start, season.end) == (T0 + MIN, (times[-1] // MIN) * MIN)


def test_a_plain_log_is_read_from_its_head_and_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    times = many()
    log = write(tmp_path / "day.jsonl", times)  # no claims: the tail says
    with log.open("ab") as f:
        f.write(book_line(times[-1] + 99_999)[:50])  # a torn tail: not an input
    counting = Counting(monkeypatch)
    assert input_bounds([str(log)]) == (times[0], times[-1])
    assert counting.read <= 2 * logfile.CHUNK


def test_an_old_compressed_log_without_claims_still_works(tmp_path: Path) -> None:
    times = many(50)
    log = write(tmp_path / "old.jsonl.gz", times)
    assert input_bounds([str(log)]) == (times[0], times[-1])


def replay(*args: str, real_process: bool = False) -> subprocess.CompletedProcess[str]:
    """``arena replay ARGS`` in this process, or in a real one (the console entry point)."""
    return arena("replay", *args) if real_process else arena_here("replay", *args, cwd=ROOT)


@pytest.mark.parametrize(
    ("claims", "says"),
    [
        ({"last_t": T0 + 5 * MIN}, "last_t"),  # too early: would shorten the window
        ({"last_t": T0 + 20 * MIN}, "last_t"),  # too late: would lengthen it
        ({"first_t": T0 + 1}, "first_t"),
    ],
)
def test_a_header_whose_claims_are_false_is_one_error_naming_the_file(
    tmp_path: Path, claims: dict[str, int], says: str
) -> None:
    times = [T0 + 13 + i * 1000 for i in range(11 * 60)]  # 11 minutes
    log = write(tmp_path / "liar.jsonl.gz", times, claims)
    done = replay(str(log), "--json", real_process=True)
    assert done.returncode == 1 and done.stdout == ""
    err = done.stderr.strip()
    assert err.startswith(f"arena: error: {log}") and says in err and "\n" not in err
    report = check_logs([str(log)])
    assert not report.ok and says in json.dumps(report.to_json()["file_errors"])
    truthful = write(tmp_path / "true.jsonl.gz", times, claims_of(times))
    assert replay(str(truthful), "--json").returncode == 0
    assert check_logs([str(truthful)]).ok


class Idle(Strategy):
    pass


def test_a_backtest_stopping_at_a_window_from_a_false_last_t_is_caught(tmp_path: Path) -> None:
    times = [T0 + 13 + i * 1000 for i in range(11 * 60)]
    log = write(tmp_path / "liar.jsonl.lz4", times, {"last_t": T0 + 5 * MIN + 30_000})
    season = resolve_season([str(log)], None)  # the claim is all it reads: 5 minutes
    assert season.end == T0 + 5 * MIN
    bt = Backtest(RunConfig(cache=False), season, [Entrant("idle", Idle(), tmp_path)])
    with pytest.raises(LogError, match=r"liar.jsonl.lz4.*later than the header's last_t"):
        bt.run([str(log)])


def test_a_claim_that_is_not_an_integer_is_a_bad_header(tmp_path: Path) -> None:
    log = write(tmp_path / "bad.jsonl.gz", [T0 + 1, T0 + 2 * MIN], {"last_t": "soon"})
    with pytest.raises(LogError, match=r"bad.jsonl.gz:1: bad header"):
        list(LogReader([str(log)]))
    with pytest.raises(LogError, match=r"bad.jsonl.gz:1: bad header"):
        input_bounds([str(log)])


def test_no_inputs_anywhere_is_one_error(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", [])
    b = write(tmp_path / "b.jsonl.gz", [])
    with pytest.raises(SeasonError, match="hold no inputs"):
        input_bounds([str(a), str(b)])


def full_pass(paths: list[str]) -> tuple[int, int] | None:
    """The bounds the old way: every line of every file."""
    ts = [line.t for line in LogReader(paths)]
    return (ts[0], ts[-1]) if ts else None


@st.composite
def logs(draw: st.DrawFn) -> list[tuple[str, list[int], bool, bool]]:
    """Files (suffix, input times, with claims, with a torn tail), t never decreasing."""
    out = []
    t = T0 + draw(st.integers(0, 10**6))
    for _ in range(draw(st.integers(1, 4))):
        times = []
        for _ in range(draw(st.integers(0, 6))):
            t += draw(st.integers(0, 50_000))
            times.append(t)
        suffix = draw(st.sampled_from([".jsonl", ".jsonl.gz", ".jsonl.lz4"]))
        out.append((suffix, times, draw(st.booleans()), draw(st.booleans())))
    return out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(files=logs())
def test_bounds_are_the_full_passs_whatever_the_files(
    tmp_path_factory: pytest.TempPathFactory, files: list[tuple[str, list[int], bool, bool]]
) -> None:
    d = tmp_path_factory.mktemp("span")
    paths = []
    for i, (suffix, times, claimed, torn) in enumerate(files):
        path = d / f"{i}{suffix}"
        write(path, times, claims_of(times) if claimed and times else None)
        if torn and suffix == ".jsonl":
            with path.open("ab") as f:
                f.write(b'{"t":%d,"arena":{"type":"ti' % (T0 + 10**9))
        paths.append(str(path))
    want = full_pass(paths)
    if want is None:
        with pytest.raises(SeasonError):
            input_bounds(paths)
    else:
        assert input_bounds(paths) == want


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.lz4"])
def test_arena_backtest_with_its_thin_run_log_checks_the_claim_and_replays(
    tmp_path: Path, suffix: str
) -> None:
    """The claim is checked while the sources are still open: the thin run log hashes the
    rest of each source and closes it when the run ends (a read after that crashed)."""
    times = [T0 + 13 + i * 1000 for i in range(11 * 60)]
    strategy = tmp_path / "idle.py"
    strategy.write_text(
        "from arena_tui.strategy import Strategy\n\n\nclass Idle(Strategy):\n    pass\n"
    )

    def backtest(log: Path, out: Path) -> subprocess.CompletedProcess[str]:
        return arena("backtest", str(strategy), str(log), "--out", str(out), "--json")

    truthful = write(tmp_path / f"true{suffix}", times, claims_of(times))
    done = backtest(truthful, tmp_path / "a")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    again = replay(str(tmp_path / "a" / "run.jsonl"), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["log_sha256"] == json.loads(done.stdout)["replay"]["log_sha256"]
    liar = write(tmp_path / f"liar{suffix}", times, {"last_t": T0 + 5 * MIN + 30_000})
    # without the day cache the reader reads on a little past the season's end; writing
    # the cache reads the file to its end: either way the false claim is one error
    for extra, said in (
        (["--no-cache"], "later than the header's last_t"),
        ([], f"the header's last_t says {T0 + 5 * MIN + 30_000}, but its last input has t"),
    ):
        out = tmp_path / f"b{len(extra)}"
        args = ("backtest", str(strategy), str(liar), "--out", str(out), "--json", *extra)
        done = arena_here(*args, cwd=ROOT)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        errors = [x for x in done.stderr.splitlines() if x.startswith("arena: error: ")]
        assert len(errors) == 1 and f"liar{suffix}" in errors[0], done.stderr
        assert said in errors[0]
