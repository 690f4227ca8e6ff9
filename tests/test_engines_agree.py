"""Both engines, one behaviour: the compiled engine and its Python sources agree, byte for byte.

setup.py compiles the engine's hot modules with Cython from the same ``engine/*.py`` that
run uncompiled (``ARENA_ENGINE=pure``, engine/_loader.py). This suite runs in whichever the
install built (CI: the compiled one, checked below), and here also under the sources:

- the golden replays, their fills files and a backtest's run directory (run log, fills,
  equity, report.json), each made by ``arena`` under both engines and compared as bytes;
- a Hypothesis property: random logs (registrations, orders, cancels, books, prints, asset
  contexts, ticks; prices and sizes up to far past 64 bits) applied by this process's engine
  and by a worker running the sources (tests/enginediff.py), every event and the final
  state compared as bytes;
- the engine's own property and rule tests (the Hypothesis state machine, the rules, the
  book checks) run again in a pytest subprocess under the sources.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from tests import build, enginediff
from tests.test_golden import CASES, GOLDEN, run_replay

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ["pure", "compiled"] if engine.COMPILED else ["pure"]
PROPERTY_TESTS = [
    "tests/test_engine_stateful.py",
    "tests/test_book_levels.py",
    "tests/test_rules_fills.py",
    "tests/test_rules_lifecycle.py",
    "tests/test_rules_money.py",
    "tests/test_rules_orders.py",
    "tests/test_quiet_prints.py",
]


def env_for(which: str) -> dict[str, str]:
    return {**os.environ, "ARENA_ENGINE": which}


def test_ci_runs_the_compiled_engine() -> None:
    # CI installs with the README's commands on a machine with a C compiler: the compiled
    # engine must be what it tests (elsewhere the install may have fallen back, and said so)
    if os.environ.get("CI"):
        assert engine.COMPILED, engine.ENGINE
    assert engine.ENGINE.startswith("compiled" if engine.COMPILED else "pure Python")


def test_the_pure_engine_is_the_sources_whatever_is_built() -> None:
    code = "import engine, engine.core as c; print(engine.COMPILED, c.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env_for("pure"),
        capture_output=True,
        text=True,
        check=True,
    )
    compiled, path = done.stdout.split()
    assert compiled == "False" and path.endswith("core.py")


@pytest.mark.parametrize("which", ENGINES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_engine_replays_the_goldens_byte_for_byte(
    name: str, which: str, tmp_path: Path
) -> None:
    fills = tmp_path / "fills.jsonl"
    assert (
        run_replay(name, fills, env=env_for(which)) == (GOLDEN / f"{name}.replay.json").read_bytes()
    )
    assert fills.read_bytes() == (GOLDEN / f"{name}.fills.jsonl").read_bytes()


RUN_FILES = ("run.jsonl", "fills.csv", "equity.csv", "report.json")


def backtest_files(which: str, out: Path) -> dict[str, bytes]:
    cmd = [
        sys.executable,
        "-m",
        "arena_tui.cli",
        "backtest",
        "strategies/momentum.py",
        "recordings/synth-3coins-20261201.jsonl.gz",
        "--vs",
        "baselines",
        "--full-log",
        "--no-cache",
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, cwd=ROOT, env=env_for(which), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    found = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
    assert set(RUN_FILES) <= set(found), sorted(found)
    return found


@pytest.mark.skipif(not engine.COMPILED, reason=f"one engine only: {engine.ENGINE}")
def test_a_backtest_writes_the_same_run_under_both_engines(tmp_path: Path) -> None:
    pure = backtest_files("pure", tmp_path / "pure")
    compiled = backtest_files("compiled", tmp_path / "compiled")
    for name in RUN_FILES:
        assert pure[name] == compiled[name], name
    fills = msgspec.json.decode(pure["report.json"])["entries"]
    assert any(e["fills"] for e in fills), "the comparison needs a run that trades"


# ---- random logs, this process's engine against the sources in a worker --------------------

SEASON = build.season(start=build.T0, end=build.T0 + 4 * build.MIN, markets=(build.BTC, build.SOL))
SEASON_JSON = msgspec.json.encode(SEASON)


class Worker:
    """``python -m tests.enginediff`` under the sources, kept for the whole module."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.enginediff"],
            cwd=ROOT,
            env=env_for("pure"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        self.stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        self.engine = self.stdout.readline().decode().strip()

    def run(self, lines: list[bytes]) -> bytes:
        self.stdin.write(SEASON_JSON + b"\n" + b"".join(raw + b"\n" for raw in lines) + b"\n")
        self.stdin.flush()
        return self.stdout.readline().rstrip(b"\n")

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def worker() -> Iterator[Worker]:
    w = Worker()
    assert w.engine.startswith("pure Python"), w.engine
    yield w
    w.close()


ENTRIES = st.sampled_from(["a", "a", "b", "Bad Name"])
COINS = st.sampled_from(["BTC", "BTC", "SOL", "DOGE"])
# prices and sizes in e8: mostly orders that are accepted and fill, now and then far past
# what 64 bits hold
BIG = st.integers(min_value=1, max_value=10**30)
PX = st.integers(0, 9).flatmap(
    lambda k: BIG if k == 0 else st.integers(99_950, 100_050).map(lambda d: d * build.E8)
)
SZ = st.integers(0, 9).flatmap(
    lambda k: BIG if k == 0 else st.integers(10, 1_000).map(lambda n: n * 1_000)
)
GOOD_PX = st.integers(9_995_000, 10_005_000).map(lambda c: f"{c // 100}.{c % 100:02d}")
GOOD_SZ = st.integers(1, 10**6).map(lambda c: f"{c // 10**4}.{c % 10**4:04d}")
ODD = st.one_of(
    st.integers(-(10**25), 10**25).map(str),
    st.sampled_from(["-0.0001", "1e5", "12.", " 5", "0.000000001", "0.0000125"]),
)
PX_DEC = st.integers(0, 40).flatmap(lambda k: ODD if k == 0 else GOOD_PX)
SZ_DEC = st.integers(0, 40).flatmap(lambda k: ODD if k == 0 else GOOD_SZ)


def level(px: str, sz: str, n: int) -> dict[str, Any]:
    return {"px": px, "sz": sz, "n": n}


@st.composite
def rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    t = build.T0 - 30_000
    out: list[dict[str, Any]] = [build.register(t, "a"), build.register(t, "b")]
    for _ in range(draw(st.integers(1, 60))):
        t += draw(st.sampled_from([0, 1, 500, 2_000, 2_000, 7_000, 30_000]))
        kind = draw(
            st.sampled_from(
                [
                    "book",
                    "book",
                    "trades",
                    "trades",
                    "ctx",
                    "order",
                    "order",
                    "order",
                    "cancel",
                    "tick",
                ]
            )
        )
        coin = draw(COINS)
        if kind == "book":
            sides = draw(
                st.lists(
                    st.lists(st.tuples(PX_DEC, SZ_DEC, st.integers(0, 9)), max_size=3),
                    min_size=2,
                    max_size=2,
                )
            )
            row = build.book(t, coin, time=t - draw(st.sampled_from([0, 5_000, 20_000])))
            row["hl"]["data"]["levels"] = [[level(*lv) for lv in side] for side in sides]
        elif kind == "trades":
            prints = draw(
                st.lists(
                    st.tuples(COINS, PX_DEC, SZ_DEC, st.integers(0, 3), st.integers(0, 5)),
                    min_size=1,
                    max_size=3,
                )
            )
            row = build.trades(t, *[(c, px, sz, t - dt, tid) for c, px, sz, dt, tid in prints])
        elif kind == "ctx":
            row = build.ctx(t, coin, mark=draw(PX_DEC), oracle=draw(PX_DEC), funding=draw(SZ_DEC))
        elif kind == "order":
            row = {
                "t": t,
                "arena": {
                    "type": "order",
                    "entry": draw(ENTRIES),
                    "asset": draw(st.sampled_from([0, 0, 0, 0, 0, 0, 5, 7])),
                    "isBuy": draw(st.booleans()),
                    "limitPx": draw(PX),
                    "sz": draw(SZ),
                    "reduceOnly": draw(st.booleans()),
                    "encodedTif": draw(st.sampled_from([1, 1, 2, 2, 2, 3, 4])),
                    "cloid": draw(st.sampled_from([None, "0x1", "0xab", "0xZZ"])),
                },
            }
        elif kind == "cancel":
            oid = draw(st.one_of(st.none(), st.integers(1, 8)))
            row = build.cancel(
                t, draw(ENTRIES), oid=oid, cloid=draw(st.sampled_from([None, "0x1"]))
            )
        elif kind == "register":
            row = build.register(t, draw(ENTRIES))
        else:
            row = build.tick(t)
        out.append(row)
    return out


@pytest.mark.skipif(not engine.COMPILED, reason=f"one engine only: {engine.ENGINE}")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows())
def test_random_logs_give_the_same_events_and_state(
    worker: Worker, log: list[dict[str, Any]]
) -> None:
    lines = [msgspec.json.encode(row) for row in log]
    here = enginediff.run_case(SEASON_JSON, lines)
    assert here == worker.run(lines)


def test_the_comparison_sees_a_difference(worker: Worker) -> None:
    # the check can fail: the same log under another season's rules does not compare equal
    log = [build.register(build.T0, "a"), build.tick(build.T0 + 2 * build.MIN)]
    lines = [msgspec.json.encode(row) for row in log]
    other = msgspec.json.encode(
        build.season(start=build.T0, end=build.T0 + 4 * build.MIN, markets=(build.BTC,))
    )
    assert enginediff.run_case(other, lines) != worker.run(lines)
    assert enginediff.run_case(SEASON_JSON, lines) == worker.run(lines)


# ---- the engine's own properties, again under the sources -----------------------------------


@pytest.mark.skipif(not engine.COMPILED, reason="this process already runs the sources")
def test_the_engine_properties_hold_under_the_sources() -> None:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist"]
    done = subprocess.run(
        [*cmd, *PROPERTY_TESTS],
        cwd=ROOT,
        env=env_for("pure"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ passed in .*", summary), summary


# ---- the compiled book check is the expressions' check --------------------------------------

NUMBER_TEXT = st.text(alphabet="0123456789-.e ", min_size=0, max_size=6)
N_TEXT = st.one_of(
    st.integers(-(10**19), 10**19).map(str), st.sampled_from(["01", "-", "1.0", "", "1e3"])
)


@st.composite
def book_bytes(draw: st.DrawFn) -> bytes:
    """A book's levels in the fast form or near it: odd numbers, either key order, mixed
    orders, and one byte changed, added or dropped now and then."""
    sides = []
    for _ in range(2):
        levels = []
        for _ in range(draw(st.integers(0, 3))):
            px, sz, n = draw(NUMBER_TEXT), draw(NUMBER_TEXT), draw(N_TEXT)
            if draw(st.booleans()):
                levels.append(f'{{"px":"{px}","sz":"{sz}","n":{n}}}')
            else:
                levels.append(f'{{"n":{n},"px":"{px}","sz":"{sz}"}}')
        sides.append("[" + ",".join(levels) + "]")
    raw = ("[" + ",".join(sides) + "]").encode()
    if raw and draw(st.integers(0, 3)) == 0:
        i = draw(st.integers(0, len(raw) - 1))
        byte = bytes([draw(st.sampled_from(b'[]{},:"0 -.'))])
        raw = draw(
            st.sampled_from(
                [raw[:i] + raw[i + 1 :], raw[:i] + byte + raw[i:], raw[:i] + byte + raw[i + 1 :]]
            )
        )
    return raw


@settings(max_examples=400, deadline=None)
@given(book_bytes())
def test_the_book_scanner_accepts_what_the_expressions_accept(raw: bytes) -> None:
    from engine import book

    assert book.scan_fast_form(raw) == book.match_fast_form(raw), raw


def test_the_book_scanner_is_what_the_compiled_engine_checks_with() -> None:
    from engine import book

    good = b'[[{"px":"1.5","sz":"2","n":1}],[{"px":"1.6","sz":"2","n":-0}]]'
    assert book.scan_fast_form(good) and book.match_fast_form(good)
    assert not book.scan_fast_form(good.replace(b'"2"', b'"2."', 1))
    assert book.fast_form is (book.scan_fast_form if engine.COMPILED else book.match_fast_form)


@settings(max_examples=400, deadline=None)
@given(book_bytes())
def test_the_top_levels_scanned_are_the_full_decodes_first_levels(raw: bytes) -> None:
    # the compiled engine reads a book's top (an activation, a mid) by the byte scanner;
    # whatever it finds is the full decode's first level of each side, and a book in the
    # fast form is always found
    from engine import book

    found = book.scan_tops(raw)
    try:
        bids, asks = book.decode_levels(raw)
    except (msgspec.DecodeError, engine.MalformedInput):  # not a book: never applied
        assert not book.match_fast_form(raw)
        return
    full = (bids[0] if bids else None, asks[0] if asks else None)
    assert book.decode_tops(raw) == full
    assert book.find_tops(raw) == full
    if book.match_fast_form(raw):
        assert found == full
    else:
        assert found is None or found == full


def test_the_compiled_engine_reads_a_books_top_by_the_scanner() -> None:
    from engine import book
    from engine.inputs import Level

    raw = b'[[{"n":3,"px":"1.5","sz":"2"},{"n":1,"px":"1.4","sz":"2"}],[]]'
    assert book.scan_tops(raw) == (Level(px="1.5", sz="2", n=3), None)
    assert book.scan_tops(b'[[],[{"px":"2","sz":"1","n":0,"x":1}]]') is None  # another form
    assert book.tops_of is (book.find_tops if engine.COMPILED else book.decode_tops)
