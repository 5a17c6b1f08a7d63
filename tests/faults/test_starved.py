"""A starved CPU: when the referee reads fewer frames a second than it needs (another program
hogging the processor), it says so once, and once more when it keeps up again. The record
stays exact (benchmarks/faults.md measures a starved run)."""

from __future__ import annotations

from referee.app.live import PaceWatch
from tests.footage_camera import FakeClock


def test_the_referee_says_when_it_cannot_keep_up_and_when_it_can_again() -> None:
    clock, lines = FakeClock(), list[str]()
    pace = PaceWatch(lines.append, clock, min_fps=5.0, window_s=10.0)
    for fps, seconds in ((30, 20), (3, 30), (30, 15)):
        for _ in range(fps * seconds):
            clock.sleep(1 / fps)
            pace.frame()
    assert lines == [
        "the referee cannot keep up: 3.0 frames a second read (fewer than 5): moves are read "
        "late, from fewer pictures; is another program using the processor?",
        "the referee keeps up again: 30.0 frames a second"]
