"""The heartbeat's schedule on a fake clock (no sleeping): a line every TICK_SECONDS (1.5 s) in
a step's first QUICK_TICKS_FOR (30 s), then every SLOW_TICK_SECONDS (15 s)."""

from __future__ import annotations

import pytest

from recoeval_tracking import _heartbeat
from recoeval_tracking._heartbeat import beat, next_wait


class FakeClock:
    """``wait(seconds)`` moves the clock on by ``seconds``; stopped once it reaches ``end``."""

    def __init__(self, end: float) -> None:
        self.now = 100.0
        self.end = 100.0 + end
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def wait(self, seconds: float) -> bool:
        self.waits.append(seconds)
        if self.now + seconds > self.end:
            return True  # stopped before the next line
        self.now += seconds
        return False


def _run(end: float) -> tuple[list[float], list[str], FakeClock]:
    fake = FakeClock(end)
    lines: list[str] = []
    times: list[float] = []

    def say(text: str) -> None:
        lines.append(text)
        times.append(fake.now - 100.0)

    beat("drawing", say, fake.wait, fake.clock, 100.0)
    return times, lines, fake


def test_constants_are_the_documented_schedule():
    assert (_heartbeat.TICK_SECONDS, _heartbeat.QUICK_TICKS_FOR) == (1.5, 30.0)
    assert _heartbeat.SLOW_TICK_SECONDS == 15.0


def test_lines_every_tick_for_30_s_then_every_15_s():
    times, lines, fake = _run(91.0)
    quick = [1.5 * i for i in range(1, 21)]  # 1.5, 3.0, ..., 30.0
    assert times == pytest.approx(quick + [45.0, 60.0, 75.0, 90.0])
    assert lines[0] == "... still drawing (2 s)"  # 1.5 s, rounded
    assert lines[19] == "... still drawing (30 s)"
    assert lines[-1] == "... still drawing (90 s)"
    # the waits asked: 1.5 s while under 30 s, 15 s from then on (the last one stopped)
    assert fake.waits == pytest.approx([1.5] * 20 + [15.0] * 5)


def test_a_step_shorter_than_a_tick_says_nothing():
    times, lines, fake = _run(1.0)
    assert lines == [] and fake.waits == [1.5]


@pytest.mark.parametrize(
    ("elapsed", "expected"), [(0.0, 1.5), (29.9, 1.5), (30.0, 15.0), (600.0, 15.0)]
)
def test_next_wait_slows_down_after_30_s(elapsed, expected):
    assert next_wait(elapsed) == expected


def test_heartbeat_runs_the_loop_and_stops_with_the_block():
    seen: list[str] = []
    with _heartbeat.heartbeat("testing", seen.append):
        pass
    assert seen == []  # stopped before its first tick
