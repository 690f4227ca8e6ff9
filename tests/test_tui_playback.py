"""Playback (pause, speed, seek, stop) with a fake clock: no real time passes.

The fake ``wait`` advances the fake clock by the timeout it is given (a timed wait that
nobody interrupts), or, for an untimed wait (paused), runs what the "viewer" does next, as
the UI thread would while the worker waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from arena_tui.tui.playback import SPEEDS, Playback, parse_speed, speed_label


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float | None] = []
        self.when_paused: list[Callable[[], None]] = []  # what the viewer does, in turn

    def clock(self) -> float:
        return self.now

    def wait(self, cond: threading.Condition, timeout: float | None) -> None:
        self.waits.append(timeout)
        if timeout is None:
            assert self.when_paused, "paused with nobody to resume"
            self.when_paused.pop(0)()
        else:
            self.now += timeout


def playback(speed: int | None, **kw: bool) -> tuple[Playback, FakeTime]:
    ft = FakeTime()
    return Playback(speed, clock=ft.clock, wait=ft.wait, **kw), ft


def test_ten_times_real_time_takes_a_tenth_of_the_simulated_span() -> None:
    pb, ft = playback(10)
    start = ft.now
    for t in range(0, 60_001, 500):  # 60 s of inputs, every 0.5 s
        assert pb.pace(t)
    assert ft.now - start == pytest.approx(6.0)


def test_max_speed_never_waits() -> None:
    pb, ft = playback(None)
    assert all(pb.pace(t) for t in range(0, 3_600_000, 1000))
    assert ft.waits == []


def test_speed_change_counts_from_the_input_it_happens_at() -> None:
    pb, ft = playback(1)
    start = ft.now
    for t in range(0, 10_001, 1000):
        pb.pace(t)
    assert ft.now - start == pytest.approx(10.0)
    pb.set_speed(60)
    mid = ft.now
    for t in range(10_000, 70_001, 1000):
        pb.pace(t)
    assert ft.now - mid == pytest.approx(1.0)


def test_a_slow_viewer_does_not_make_the_run_burst_to_catch_up() -> None:
    pb, ft = playback(1)
    pb.pace(0)
    ft.now += 30.0  # the machine stalled for 30 s
    pb.pace(1000)  # behind: counted again from here
    before = ft.now
    pb.pace(2000)
    assert ft.now - before == pytest.approx(1.0)


def test_paused_waits_until_resumed_and_shows_where_it_stands() -> None:
    pb, ft = playback(None, paused=True)
    shown: list[float | None] = []
    pb.on_wait = shown.append
    ft.when_paused.append(pb.resume)
    assert pb.pace(5)
    assert ft.waits == [None] and shown == [None]
    assert pb.pace(6) and ft.waits == [None]


def test_seek_runs_flat_out_then_pauses_before_the_input_after_a_fill() -> None:
    pb, ft = playback(1, paused=True)
    ft.when_paused.append(pb.seek)
    paced = []
    for t in range(0, 100_000, 1000):
        assert pb.pace(t)
        paced.append(t)
        if t == 40_000:
            pb.found()  # the input at 40 s caused a fill
            ft.when_paused.append(pb.resume)
            break
    assert pb.state().seeking
    assert pb.pace(41_000)  # waited here (paused), then resumed
    assert ft.waits == [None, None]  # no timed wait while seeking: max speed
    assert not pb.state().paused and not pb.state().seeking


def test_a_seek_for_one_entry_runs_past_the_others_events() -> None:
    pb, ft = playback(1, paused=True)
    ft.when_paused.append(lambda: pb.seek("maker"))
    for t in range(0, 10_000, 1000):
        assert pb.pace(t)
        pb.found("momentum" if t < 5_000 else "maker")  # another entry's fill, then its own
        if t == 5_000:
            break
    assert pb.state().seeking  # the others' fills went by
    ft.when_paused.append(pb.resume)
    assert pb.pace(6_000)  # its own: paused before the next input
    assert ft.waits == [None, None]


def test_found_outside_a_seek_changes_nothing() -> None:
    pb, ft = playback(None)
    pb.found()
    assert pb.pace(1) and ft.waits == []


def test_stop_ends_the_run_even_while_paused() -> None:
    pb, ft = playback(None, paused=True)
    ft.when_paused.append(pb.stop)
    assert not pb.pace(1)
    assert not pb.pace(2)


def test_faster_and_slower_step_through_the_speeds_and_stop_at_the_ends() -> None:
    pb, _ = playback(1)
    seen = []
    for _ in range(len(SPEEDS) + 2):
        seen.append(pb.state().speed)
        pb.faster()
    assert seen == [*SPEEDS, None, None]
    pb.slower()
    assert pb.state().speed == 600
    for _ in range(10):
        pb.slower()
    assert pb.state().speed == 1


@pytest.mark.parametrize(
    ("text", "speed"), [("1", 1), ("10x", 10), ("60", 60), ("600X", 600), ("max", None)]
)
def test_parse_speed(text: str, speed: int | None) -> None:
    assert parse_speed(text) == speed
    assert parse_speed(speed_label(speed)) == speed


@pytest.mark.parametrize("text", ["2", "fast", "", "0"])
def test_parse_speed_refuses_other_speeds(text: str) -> None:
    with pytest.raises(ValueError, match="one of 1, 10, 60, 600 or max"):
        parse_speed(text)


def test_a_real_thread_blocks_while_paused_and_is_released_by_stop() -> None:
    pb = Playback(None, paused=True)
    waiting = threading.Event()
    pb.on_wait = lambda _timeout: waiting.set()
    answer: list[bool] = []
    worker = threading.Thread(target=lambda: answer.append(pb.pace(1)))
    worker.start()
    assert waiting.wait(5)
    assert worker.is_alive()
    pb.stop()
    worker.join(5)
    assert answer == [False]
