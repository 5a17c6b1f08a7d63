"""A camera lost mid-game is signalled, reopened and carried on from; a camera that stays
gone ends with one clear error; black frames are signalled. No real sleeps: the clock jumps."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.errors import CameraLost, SourceError
from referee.hardware.cues import Cue
from referee.hardware.frames import Frame
from referee.hardware.picamera import PiCameraConfig, PiCameraSource
from referee.hardware.signals import TerminalSignals
from referee.hardware.sources import open_source
from referee.hardware.watch import watched_frames
from referee.rules.core import Color
from tests.hardware.fake_picamera2 import Script, finishes, make_module


class LoggedSignals(TerminalSignals):
    """Terminal signals that also write each cue into the fake camera's log, so that the
    order of cues and camera calls can be checked."""

    def __init__(self, log: list[str], stream: io.StringIO) -> None:
        super().__init__(stream)
        self._log = log

    def show(self, cue: Cue, now: float, *, player: Color | None = None) -> None:
        self._log.append(f"cue {cue.name}")
        super().show(cue, now, player=player)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Script:
    script = Script()
    monkeypatch.setitem(sys.modules, "picamera2", make_module(script))
    return script


def test_a_lost_camera_is_signalled_reopened_and_the_frames_carry_on(script: Script):
    clock = Clock()
    script.stop_after = 4  # each camera opened delivers 4 frames, then goes silent
    script.on_timeout = clock.sleep
    out = io.StringIO()
    frames = watched_frames(lambda: PiCameraSource(PiCameraConfig(size=(32, 24)), clock=clock),
                            TerminalSignals(out), clock=clock, sleep=clock.sleep, retry_s=3.0)
    seen: list[Frame] = []
    assert finishes(lambda: seen.extend(frame for _, frame in zip(range(10), frames,
                                                                  strict=False))) == []
    frames.close()
    assert [frame.index for frame in seen] == list(range(10))
    stamps = [frame.timestamp_s for frame in seen]
    assert stamps == sorted(stamps) and len(set(stamps)) == 10
    assert out.getvalue().splitlines() == ["[red] camera lost", "[ok] camera back"] * 2
    assert len(script.instances) == 3 and all(camera.closed for camera in script.instances)


def test_a_camera_that_stays_gone_ends_with_one_clear_error(script: Script):
    clock = Clock()
    script.stop_after = 2

    def unplugged(seconds: float) -> None:
        clock.sleep(seconds)
        script.cameras = 0  # and it does not come back

    script.on_timeout = unplugged
    out = io.StringIO()
    frames = watched_frames(lambda: PiCameraSource(PiCameraConfig(size=(32, 24)), clock=clock),
                            TerminalSignals(out), clock=clock, sleep=clock.sleep, retry_s=5.0,
                            give_up_s=60.0)
    raised = finishes(lambda: list(frames))
    assert len(raised) == 1 and isinstance(raised[0], CameraLost), raised
    assert re.search(r"no frame for 2 s after frame 2.*still gone after 60 s "
                     r"\(no Pi camera 0 found", str(raised[0]))
    assert out.getvalue().splitlines() == ["[red] camera lost"]
    assert 60.0 <= clock.now <= 70.0  # it tried every 5 s for a minute, without sleeping here


def test_the_alarm_sounds_before_the_lost_camera_is_touched(script: Script):
    """The players hear of a lost camera first; only then is it closed (which cancels its
    dead capture so that stopping it cannot hang), and opened again."""
    clock = Clock()
    script.stop_after = 2
    script.on_timeout = clock.sleep
    frames = watched_frames(lambda: PiCameraSource(PiCameraConfig(size=(32, 24)), clock=clock),
                            LoggedSignals(script.log, io.StringIO()), clock=clock,
                            sleep=clock.sleep, retry_s=1.0)
    seen: list[int] = []
    assert finishes(lambda: seen.extend(frame.index for _, frame in zip(range(3), frames,
                                                                        strict=False))) == []
    frames.close()
    assert seen == [0, 1, 2]
    calls = [entry for entry in script.log if entry != "release"]
    assert calls == ["open 0", "configure", "start",
                     "cue CAMERA_LOST", "cancel_all_and_flush", "stop", "close",
                     "open 0", "configure", "start", "cue CAMERA_BACK",
                     "cancel_all_and_flush", "stop", "close"]


def test_a_camera_missing_at_the_start_fails_at_once(script: Script):
    script.cameras = 0
    with pytest.raises(SourceError, match="no Pi camera 0 found"):
        next(watched_frames(lambda: PiCameraSource(), TerminalSignals(io.StringIO())))


def test_footage_ends_normally_and_black_frames_are_signalled(tmp_path: Path):
    bright = np.full((60, 80, 3), 128, np.uint8)
    for n in range(90):  # 30 bright, 40 black (1.3 s at 30 fps), 20 bright
        cv2.imwrite(str(tmp_path / f"{n:03d}.png"), bright if n < 30 or n >= 70 else bright * 0)
    out = io.StringIO()
    frames = list(watched_frames(lambda: open_source(tmp_path), TerminalSignals(out)))
    # Black for a second (frames 30-59, a hand over the lens would be as short) the frames
    # still go to the referee; from then until the picture is back they are held back.
    assert [frame.index for frame in frames] == list(range(60)) + list(range(70, 90))
    assert out.getvalue().splitlines() == ["[red] camera sees nothing: black frames", "[ok] camera back"]


def test_a_camera_missing_at_the_start_is_waited_for_with_back_off(script: Script):
    clock = Clock()
    script.cameras = 0
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.sleep(seconds)
        if len(sleeps) == 4:
            script.cameras = 1  # plugged in

    out = io.StringIO()
    frames = watched_frames(lambda: PiCameraSource(PiCameraConfig(size=(32, 24)), clock=clock),
                            TerminalSignals(out), clock=clock, sleep=sleep, wait_at_start=True,
                            retry_s=1.0, max_retry_s=4.0, give_up_s=100.0)
    first = next(frames)
    frames.close()
    assert sleeps == [1.0, 2.0, 4.0, 4.0] and first.index == 0
    assert out.getvalue().splitlines() == ["[red] camera lost", "[ok] camera back"]


def test_the_wait_for_a_missing_camera_ends_on_time(script: Script):
    clock = Clock()
    script.cameras = 0
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.sleep(seconds)

    with pytest.raises(CameraLost, match=r"^no Pi camera 0 found .*; still gone after 50 s$"):
        list(watched_frames(lambda: PiCameraSource(clock=clock), TerminalSignals(io.StringIO()),
                            clock=clock, sleep=sleep, wait_at_start=True, retry_s=1.0,
                            max_retry_s=16.0, give_up_s=50.0))
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 16.0, 16.0, 3.0] and clock.now == 50.0
