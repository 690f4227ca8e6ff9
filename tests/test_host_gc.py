"""The garbage collector and the order path: its pauses on a dial, and the season's state
kept out of its full passes by ``arena host``'s own process.

A full pass stops the whole process while it scans every tracked object; a season's state
grows for weeks, so the pass would too. ``arena host`` moves what is held at its start and
at each checkpoint out of those passes (``host.session.settle``); ``arena_gc_pause_seconds``
shows what the collector still costs.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from arena_tui.cli import app
from arena_tui.host import server
from arena_tui.host.metrics import Dials
from arena_tui.host.plan import HostOptions
from arena_tui.host.session import Session, settle
from arena_tui.host.store import ScoreStore
from tests.test_host_checkpoint import LOG, SEASON, shut


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Whatever a test froze goes back to the collector (the test process is not a host)."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def pauses(dials: Dials) -> dict[tuple[str, str], float]:
    out = {}
    for family in text_string_to_metric_families(dials.scrape().decode()):
        if family.name == "arena_gc_pause_seconds":
            for s in family.samples:
                out[s.name, s.labels.get("generation", "") + s.labels.get("le", "")] = s.value
    return out


def test_every_full_pass_is_timed_on_the_dial() -> None:
    dials = Dials()
    before = pauses(dials)
    gc.collect(2)
    gc.collect(2)
    after = pauses(dials)
    count = "arena_gc_pause_seconds_count", "2"
    assert after[count] == before[count] + 2
    assert after["arena_gc_pause_seconds_sum", "2"] > before["arena_gc_pause_seconds_sum", "2"]
    assert after["arena_gc_pause_seconds_bucket", "2+Inf"] == after[count]
    buckets = [v for (name, key), v in after.items() if name.endswith("_bucket") and key[0] == "2"]
    assert buckets == sorted(buckets)  # cumulative


def test_settle_takes_what_is_alive_out_of_the_full_passes(unfrozen: None) -> None:
    held = [[i] for i in range(50_000)]  # tracked: scanned by every full pass
    assert gc.get_freeze_count() == 0
    settle()
    assert gc.get_freeze_count() >= len(held)
    gc.collect(2)
    assert all(gc.is_tracked(x) for x in held[:10])  # still objects, still freed by count
    del held


@pytest.mark.parametrize("freeze", [False, True])
def test_a_host_process_session_settles_after_its_start(
    tmp_path: Path, unfrozen: None, freeze: bool
) -> None:
    log = tmp_path / "season.jsonl"
    log.write_bytes(LOG)
    s = Session(SEASON, log, {}, ScoreStore(tmp_path / "s.db"), clock=lambda: 0, freeze_gc=freeze)
    s.open()
    try:
        assert (gc.get_freeze_count() > 0) is freeze
    finally:
        shut(s)


def test_arena_host_runs_its_session_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's own process is the host's: it asks for the settling (tests, which
    run hosts in their own process, do not)."""
    seen: list[HostOptions] = []

    class Stub:
        session = None

        def __init__(self, opts: HostOptions, **_: object) -> None:
            seen.append(opts)

        def run(self) -> None:
            return None

    monkeypatch.setattr(server, "Host", Stub)
    season = tmp_path / "season.json"
    season.write_text('{"id": "t", "start": 0, "end": 60000}')
    done = CliRunner().invoke(
        app, ["host", "--log", str(tmp_path / "s.jsonl"), "--season", str(season)]
    )
    assert seen and seen[0].freeze_gc is True, done.output
    assert HostOptions(log=tmp_path / "s.jsonl").freeze_gc is False
