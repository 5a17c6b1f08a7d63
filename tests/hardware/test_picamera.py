"""The picamera2 adapter against a fake `picamera2` module that mirrors the real API."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from referee.errors import CameraLost, SourceError
from referee.hardware.picamera import PiCameraConfig, PiCameraSource
from referee.hardware.sources import open_source
from tests.hardware.fake_picamera2 import Script, make_module, scene_rgb


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        self.now += 0.001  # every look at the clock takes a little time
        return self.now


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Script:
    script = Script()
    monkeypatch.setitem(sys.modules, "picamera2", make_module(script))
    return script


def expected_bgr(width: int, height: int, n: int) -> np.ndarray:
    return scene_rgb(width, height, n)[..., ::-1]


def test_configures_plain_data_and_delivers_bgr_frames_with_sensor_time(script: Script):
    config = PiCameraConfig(size=(64, 48), frame_rate=25.0)
    with PiCameraSource(config) as source:
        camera = script.instances[0]
        assert camera.camera_config["main"] == {"format": "RGB888", "size": (64, 48)}
        assert camera.camera_config["controls"]["FrameRate"] == 25.0
        assert camera.camera_config["buffer_count"] == 4 and camera.camera_config["queue"] is False
        frames = [frame for _, frame in zip(range(5), source, strict=False)]
    assert [frame.index for frame in frames] == [0, 1, 2, 3, 4]
    assert [frame.timestamp_s for frame in frames] == pytest.approx([0, 0.04, 0.08, 0.12, 0.16])
    for n, frame in enumerate(frames):
        assert frame.frame_bgr.shape == (48, 64, 3)
        np.testing.assert_array_equal(frame.frame_bgr, expected_bgr(64, 48, n))
        assert not frame.frame_bgr.flags.writeable
    # left half is red: in BGR order the last channel is the high one
    assert tuple(frames[0].frame_bgr[30, 5]) == (10, 30, 200)
    assert script.log[:3] == ["open 0", "configure", "start"]
    assert script.log[-2:] == ["stop", "close"] and camera.closed
    assert script.log.count("release") == 5  # every request's buffer went back


@pytest.mark.parametrize("pixel_format", ["RGB888", "BGR888", "XRGB8888", "XBGR8888"])
def test_every_format_arrives_in_bgr_order(script: Script, pixel_format: str):
    with PiCameraSource(PiCameraConfig(size=(32, 24), format=pixel_format)) as source:
        frame = next(iter(source))
    np.testing.assert_array_equal(frame.frame_bgr, expected_bgr(32, 24, 0))


def test_stale_frames_are_skipped_by_sensor_timestamp(script: Script):
    script.stale = frozenset({2, 3, 6})  # requests 2, 3 and 6 repeat an older exposure
    with PiCameraSource(PiCameraConfig(size=(32, 24))) as source:
        frames = [frame for _, frame in zip(range(5), source, strict=False)]
    stamps = [frame.timestamp_s for frame in frames]
    assert stamps == sorted(set(stamps))  # strictly increasing: no frame twice
    for n, frame in enumerate(frames):  # and they are frames 0..4 of the scene, in order
        np.testing.assert_array_equal(frame.frame_bgr, expected_bgr(32, 24, n))


def test_a_camera_that_repeats_one_frame_for_ever_is_lost(script: Script):
    script.stale = frozenset(range(1, 10_000))
    clock = Clock()
    with PiCameraSource(PiCameraConfig(size=(32, 24), timeout_s=2.0), clock=clock) as source:
        frames = iter(source)
        next(frames)
        with pytest.raises(CameraLost, match="repeats one frame"):
            next(frames)
    assert clock.now >= 102.0


def test_a_camera_that_stops_mid_game_raises_camera_lost_not_a_hang(script: Script):
    clock = Clock()
    script.stop_after = 3
    script.on_timeout = lambda seconds: setattr(clock, "now", clock.now + seconds)
    seen = []
    with pytest.raises(CameraLost, match=r"no frame for 2 s after frame 3.*ribbon"), \
            PiCameraSource(PiCameraConfig(size=(32, 24)), clock=clock) as source:
        seen.extend(frame.index for frame in source)
    assert seen == [0, 1, 2]
    assert script.instances[0].closed


def test_a_failing_request_raises_camera_lost(script: Script):
    script.fail_after = 2
    with pytest.raises(CameraLost, match="failed after frame 2: Device or resource busy"), \
            PiCameraSource(PiCameraConfig(size=(32, 24))) as source:
        for _ in source:
            pass
    assert script.instances[0].closed


def test_no_camera_connected(script: Script):
    script.cameras = 0
    with pytest.raises(SourceError, match=r"no Pi camera 0 found \(0 connected\).*ribbon"):
        PiCameraSource()
    assert script.log == []  # it did not even try to open one


def test_a_busy_camera(script: Script):
    script.busy = True
    with pytest.raises(SourceError, match=r"cannot open Pi camera 0: Camera __init__ .* another program"):
        PiCameraSource()


def test_a_size_the_camera_refuses_closes_it(script: Script):
    with pytest.raises(SourceError, match="cannot start Pi camera 0 at 9000x9000 RGB888"):
        PiCameraSource(PiCameraConfig(size=(9000, 9000)))
    assert script.instances[0].closed


def test_picamera2_missing_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import picamera2 → ImportError
    with pytest.raises(SourceError, match=r"needs picamera2.*apt install python3-picamera2"):
        PiCameraSource()


def test_bad_config_is_refused_before_the_camera_is_touched():
    with pytest.raises(SourceError, match="format 'YUV420'"):
        PiCameraConfig(format="YUV420")
    with pytest.raises(SourceError, match="buffer_count >= 2"):
        PiCameraConfig(buffer_count=1)


def test_open_source_pi_and_pi_n(script: Script):
    script.cameras = 2
    with open_source("pi:1") as source:
        assert source.description == "Pi camera 1"
    with open_source("pi") as source:
        frame = next(iter(source))
    assert frame.frame_bgr.shape == (720, 1280, 3)
    assert script.log.count("open 1") == 1 and script.log.count("open 0") == 1


@pytest.mark.hardware
def test_the_real_pi_camera_delivers_fresh_bgr_frames():
    with open_source("pi") as source:
        frames = [frame for _, frame in zip(range(10), source, strict=False)]
    assert all(frame.frame_bgr.shape == (720, 1280, 3) for frame in frames)
    gaps = np.diff([frame.timestamp_s for frame in frames])
    assert (gaps > 0).all() and gaps.mean() < 0.1
