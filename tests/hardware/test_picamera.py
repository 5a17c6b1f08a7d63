"""The picamera2 adapter against a fake `picamera2` module that mirrors the real API."""

from __future__ import annotations

import re
import sys
import threading
import time
from concurrent.futures import CancelledError

import numpy as np
import pytest

from referee.calibration.defaults import FOCAL_MM, PIXEL_PITCH_MM
from referee.calibration.files import load_camera
from referee.cli import main
from referee.errors import CameraLost, SourceError
from referee.hardware.picamera import PiCameraConfig, PiCameraSource
from referee.hardware.sources import open_source
from referee.resources import calibration_dir
from tests.hardware.fake_picamera2 import (
    HANG_S,
    IMX708_CONTROLS,
    Script,
    finishes,
    make_module,
    scene_rgb,
)


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
        assert camera.camera_config["main"] == {"format": "RGB888", "size": (64, 48),
                                                "preserve_ar": True}
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
    assert script.log[-3:] == ["cancel_all_and_flush", "stop", "close"] and camera.closed
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


def test_the_fake_queues_jobs_as_picamera2_does(script: Script):
    """What the fixes below rely on: a capture that never ends blocks the jobs behind it,
    `stop()` among them, until `cancel_all_and_flush` clears the queue."""
    script.stop_after = 1
    with PiCameraSource(PiCameraConfig(size=(32, 24))) as source:
        camera = script.instances[0]
        next(iter(source))
        dead = camera.capture_request(wait=False)
        with pytest.raises(TimeoutError):
            camera.wait(dead, timeout=2.0)
        stopped: list[BaseException | None] = []

        def stop() -> None:
            try:
                camera.stop()
                stopped.append(None)
            except BaseException as error:
                stopped.append(error)

        stopper = threading.Thread(target=stop, daemon=True)
        stopper.start()
        stopper.join(0.3)
        assert stopper.is_alive() and camera.started  # stop() waits behind the dead capture
        camera.cancel_all_and_flush()  # every queued job is cancelled, the stop too
        stopper.join(HANG_S)
        assert not stopper.is_alive() and isinstance(stopped[0], CancelledError)
        with pytest.raises(CancelledError):
            dead.get_result()
        assert camera.started
        assert finishes(camera.stop) == [] and not camera.started  # nothing ahead of it now


def test_a_camera_that_stops_mid_game_raises_camera_lost_and_closes_without_a_hang(
        script: Script):
    """The capture that timed out is still queued in picamera2; stop() queued behind it
    would wait for ever. Closing cancels the queue first."""
    clock = Clock()
    script.stop_after = 2
    script.on_timeout = lambda seconds: setattr(clock, "now", clock.now + seconds)
    seen: list[int] = []

    def referee() -> None:
        with PiCameraSource(PiCameraConfig(size=(32, 24)), clock=clock) as source:
            seen.extend(frame.index for frame in source)

    raised = finishes(referee)
    assert len(raised) == 1 and isinstance(raised[0], CameraLost), raised
    assert re.search(r"no frame for 2 s after frame 2.*ribbon", str(raised[0]))
    assert clock.now >= 102.0  # the wait's 2 s, on the test's clock
    assert seen == [0, 1]
    assert script.log[-3:] == ["cancel_all_and_flush", "stop", "close"]
    assert script.instances[0].closed


def test_a_camera_that_cannot_even_stop_is_given_up_on(script: Script,
                                                       caplog: pytest.LogCaptureFixture):
    script.stop_hangs = True
    source = PiCameraSource(PiCameraConfig(size=(32, 24), close_timeout_s=0.2))
    next(iter(source))
    started = time.monotonic()
    assert finishes(source.close) == []
    assert time.monotonic() - started < 5.0
    assert "did not close within 0.2 s" in caplog.text
    source.close()  # and again: nothing more to do


@pytest.mark.parametrize(("size", "fps", "mode"), [
    ((1280, 720), 30.0, (2304, 1296)), ((640, 480), 30.0, (2304, 1296)),
    ((1920, 1080), 30.0, (2304, 1296)), ((2304, 1296), 30.0, (2304, 1296)),
    ((4608, 2592), 10.0, (4608, 2592)), ((3840, 2160), 10.0, (4608, 2592))])
def test_every_size_is_scaled_from_a_full_field_sensor_mode(script: Script, size, fps, mode):
    with PiCameraSource(PiCameraConfig(size=size, frame_rate=fps)):
        camera = script.instances[-1]
    assert camera.camera_config["sensor"] == {"output_size": mode, "bit_depth": 10}
    assert camera.mode["crop_limits"] == (0, 0, 4608, 2592)


def test_a_size_that_is_a_sensor_mode_gets_that_mode_unscaled(script: Script):
    with PiCameraSource(PiCameraConfig(size=(1536, 864))):
        camera = script.instances[-1]
    assert camera.camera_config["sensor"] == {"output_size": (1536, 864), "bit_depth": 10}
    assert camera.mode["crop_limits"] == (768, 432, 3072, 1728)  # the centre crop mode


def test_left_to_itself_picamera2_picks_the_cropped_mode_at_1280x720(script: Script):
    """Why `sensor=` is passed: picamera2 scores modes against the output size, and the
    1536x864 mode (a 3072x1728 centre crop) is nearest to 1280x720."""
    with PiCameraSource(PiCameraConfig(full_field=False)):
        camera = script.instances[0]
    assert camera.camera_config["sensor"]["output_size"] == (1536, 864)
    assert camera.mode["crop_limits"] == (768, 432, 3072, 1728)


def test_the_1280x720_defaults_match_the_mode_the_camera_is_set_to(script: Script):
    """The calibration defaults assume the field the camera really shows: fx is the lens's
    focal length in output pixels, for the sensor region behind the frame."""
    for width, height in ((1280, 720), (1920, 1080), (640, 480), (2304, 1296), (1536, 864)):
        with PiCameraSource(PiCameraConfig(size=(width, height))) as source:
            next(iter(source))
            _, _, crop_w, _ = source.metadata["ScalerCrop"]
        defaults = load_camera(calibration_dir() / f"pi-camera-module-3-{width}x{height}.yaml")
        fx = defaults.camera_matrix[0][0]
        assert fx == pytest.approx(FOCAL_MM / PIXEL_PITCH_MM * width / crop_w), (width, height)


def test_focus_and_flicker_controls(script: Script):
    with PiCameraSource(PiCameraConfig()):
        controls = script.instances[-1].camera_config["controls"]
    assert controls["AfMode"] == 2 and controls["AfRange"] == 0  # continuous autofocus
    assert controls["AeFlickerMode"] == 1 and controls["AeFlickerPeriod"] == 10000  # 50 Hz
    assert "LensPosition" not in controls
    with PiCameraSource(PiCameraConfig(focus_m=0.5, mains_hz=60)):
        controls = script.instances[-1].camera_config["controls"]
    assert controls["AfMode"] == 0 and controls["LensPosition"] == 2.0  # dioptres: 1 / 0.5 m
    assert controls["AeFlickerPeriod"] == 8333
    with PiCameraSource(PiCameraConfig(focus_m=0.01, mains_hz=None)):
        controls = script.instances[-1].camera_config["controls"]
    assert controls["LensPosition"] == 15.0 and "AeFlickerMode" not in controls  # the lens's limit
    with pytest.raises(SourceError, match="focus distance"):
        PiCameraConfig(focus_m=0.0)
    with pytest.raises(SourceError, match="50 or 60"):
        PiCameraConfig(mains_hz=55)


def test_a_camera_without_autofocus_gets_no_focus_controls(script: Script,
                                                           monkeypatch: pytest.MonkeyPatch):
    fixed = {k: v for k, v in IMX708_CONTROLS.items() if not k.startswith(("Af", "Lens"))}
    monkeypatch.setattr("tests.hardware.fake_picamera2.IMX708_CONTROLS", fixed)
    with PiCameraSource(PiCameraConfig()) as source:  # the fake refuses unknown controls
        next(iter(source))
        assert "focus: fixed lens (no autofocus)" in source.details()


def test_referee_camera_pi_reports_mode_field_of_view_focus_and_exposure(
        script: Script, capsys: pytest.CaptureFixture[str]):
    assert main(["camera", "--camera", "pi", "--frames", "3"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Pi camera 0: 3 frames of 1280x720, 30.0 fps, brightness 85/255",
        "  sensor mode 2304x1296 10-bit, the full field (4608x2592 sensor pixels), scaled to 1280x720",
        "  field of view 68.5 x 41.9 degrees (imx708, 4.74 mm lens, 4608x2592 sensor pixels in view)",
        "  focus: continuous autofocus, focused, lens at 2.25 dioptres (0.44 m)",
        "  exposure 10.0 ms, analogue gain 2.00, flicker avoidance for 50 Hz mains (10000 us periods)"]


@pytest.mark.hardware
def test_the_real_pi_camera_delivers_fresh_bgr_frames():
    with open_source("pi") as source:
        frames = [frame for _, frame in zip(range(10), source, strict=False)]
    assert all(frame.frame_bgr.shape == (720, 1280, 3) for frame in frames)
    gaps = np.diff([frame.timestamp_s for frame in frames])
    assert (gaps > 0).all() and gaps.mean() < 0.1
