"""The Raspberry Pi camera through picamera2 (imported lazily: it exists only on a Pi).

Configuration is plain data (`PiCameraConfig`). Each frame comes from `capture_request`,
so its `SensorTimestamp` is known: a request whose timestamp is not newer than the last one
is a stale frame exposed before we asked (picamera2 #426) and is skipped; `queue=False`
makes picamera2 keep no old frame for us in the first place. Colour order is fixed here:
libcamera names formats by word order, so "RGB888" arrives as B, G, R bytes, which is what
OpenCV wants; everything after this adapter is BGR.

The set-up a board needs: the *full-field* sensor mode (left to itself picamera2 picks the
mode nearest the output size, for 1280x720 on the Camera Module 3 the 1536x864 centre crop,
a third of the width lost), scaled by the ISP to the output size; the lens focused
(continuous autofocus, or fixed at the board's distance); exposure kept to whole periods of
the mains lights' flicker.

A lost camera must never hang the referee. picamera2 runs every capture as a job in one
queue, executed by its event loop one at a time; a capture that times out stays at the head
of that queue, and `stop()`, itself a job, would wait behind it for ever. So closing first
cancels every queued job (`cancel_all_and_flush`, picamera2 0.3.20), and the whole close
runs on a helper thread that is given up on after `close_timeout_s`.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from referee.calibration.defaults import FOCAL_MM, PIXEL_PITCH_MM
from referee.errors import CameraLost, SourceError
from referee.hardware.frames import BaseSource, Clock, Frame, make_frame

log = logging.getLogger(__name__)

# format → the OpenCV conversion to B, G, R bytes (None: already so). cvtColor is ~10x faster
# than numpy slicing plus a contiguous copy at 1280 x 720 (benchmarks/hardware_speed.md).
_TO_BGR: dict[str, int | None] = {
    "RGB888": None,  # bytes B, G, R
    "BGR888": cv2.COLOR_RGB2BGR,  # bytes R, G, B
    "XRGB8888": cv2.COLOR_BGRA2BGR,  # bytes B, G, R, X
    "XBGR8888": cv2.COLOR_RGBA2BGR,  # bytes R, G, B, X
}
# libcamera's enumerations (control_ids_core.yaml), as picamera2 takes them
AF_MANUAL, AF_CONTINUOUS = 0, 2
AF_RANGE_NORMAL = 0
FLICKER_MANUAL = 1
AF_STATES = {0: "idle", 1: "scanning", 2: "focused", 3: "failed"}
# Camera Module 3 lenses by sensor model: focal length in mm (the IMX708's pixels are 1.4 um)
LENS_MM = {"imx708": FOCAL_MM, "imx708_noir": FOCAL_MM, "imx708_wide": 2.75,
           "imx708_wide_noir": 2.75}


@dataclass(frozen=True)
class PiCameraConfig:
    """The main stream: `size` (width, height), a picamera2 `format`, `frame_rate` per second.

    `full_field`: ask for the sensor mode `full_field_mode` chooses (for 1280x720 on the
    Camera Module 3, the whole sensor binned to 2304x1296, which the ISP scales); the
    calibration defaults (`referee/calibration/defaults.py`) assume it. `focus_m`: None
    for continuous autofocus, or the lens fixed at that distance (the board's). `mains_hz`:
    the mains frequency whose lights flicker (50 or 60; None: no flicker avoidance)."""

    size: tuple[int, int] = (1280, 720)
    format: str = "RGB888"
    frame_rate: float = 30.0
    buffer_count: int = 4
    camera_num: int = 0
    timeout_s: float = 2.0  # no new frame for this long: the camera is lost
    full_field: bool = True
    focus_m: float | None = None
    mains_hz: int | None = 50
    close_timeout_s: float = 5.0  # a camera that cannot be closed in this time is left to itself

    def __post_init__(self) -> None:
        if self.format not in _TO_BGR:
            raise SourceError(f"Pi camera format {self.format!r} is not one of {', '.join(_TO_BGR)}")
        if self.buffer_count < 2:
            raise SourceError("the Pi camera needs buffer_count >= 2 (one buffer fills while "
                              "another is read)")
        if self.focus_m is not None and not (math.isfinite(self.focus_m) and self.focus_m > 0):
            raise SourceError(f"the Pi camera's focus distance must be a positive number of "
                              f"metres, not {self.focus_m}")
        if self.mains_hz not in (None, 50, 60):
            raise SourceError(f"mains frequency {self.mains_hz} Hz: 50 or 60 (or none)")

    def sensor_mode(self, modes: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
        """The full-field mode for this size and rate (see `full_field_mode`); None when
        `full_field` is off or the camera lists no raw modes (picamera2 then chooses)."""
        return full_field_mode(modes, self.size, self.frame_rate) if self.full_field else None

    def controls(self, available: dict[str, Any]) -> dict[str, Any]:
        """The controls to start with, of those the camera has (a camera without autofocus
        has no `AfMode`, and picamera2 refuses a control it does not advertise)."""
        controls: dict[str, Any] = {"FrameRate": float(self.frame_rate)}
        if "AfMode" in available:
            if self.focus_m is None:
                controls.update(AfMode=AF_CONTINUOUS, AfRange=AF_RANGE_NORMAL)
            else:
                controls.update(AfMode=AF_MANUAL, LensPosition=self.lens_position(available))
        if self.mains_hz is not None and "AeFlickerMode" in available:
            controls.update(AeFlickerMode=FLICKER_MANUAL, AeFlickerPeriod=self.flicker_period_us)
        return controls

    def lens_position(self, available: dict[str, Any]) -> float:
        """`LensPosition` for `focus_m`: dioptres (1 / metres), within the lens's range."""
        assert self.focus_m is not None
        low, high = (float(x) for x in available.get("LensPosition", (0.0, 32.0, None))[:2])
        return min(max(1.0 / self.focus_m, low), high)

    @property
    def flicker_period_us(self) -> int:
        """Lights on mains of f Hz flicker at 2f: exposures of whole 1 / 2f periods."""
        return round(1e6 / (2 * (self.mains_hz or 50)))

    def video_configuration(self, camera: Any) -> Any:
        """picamera2's configuration for this: one `main` stream, no queued old frame, the
        full-field sensor mode, focus and flicker controls."""
        options: dict[str, Any] = {}
        mode = self.sensor_mode(getattr(camera, "sensor_modes", None) or ())
        if mode is not None:
            options["sensor"] = {"output_size": tuple(mode["size"]), "bit_depth": mode["bit_depth"]}
        return camera.create_video_configuration(
            main={"size": tuple(self.size), "format": self.format},
            controls=self.controls(getattr(camera, "camera_controls", None) or {}),
            buffer_count=self.buffer_count, queue=False, **options)


def full_field_mode(modes: Sequence[dict[str, Any]], size: tuple[int, int],
                    frame_rate: float) -> dict[str, Any] | None:
    """The sensor mode for an output of `size` at `frame_rate`: a mode of that very size
    (unscaled: the Camera Module 3's 1536x864 is its centre crop, 2304x1296 the full field
    binned), else of the modes that show the most of the sensor (`crop_limits`) the smallest
    that is at least `size` and fast enough, the deepest first; if none is, the largest of
    them. None when no mode says what it shows (picamera2 then chooses)."""
    raw = [mode for mode in modes if "size" in mode and "crop_limits" in mode and "bit_depth" in mode]

    def fast_enough(mode: dict[str, Any]) -> bool:
        return float(mode.get("fps", math.inf)) >= frame_rate - 0.5

    exact = [mode for mode in raw if tuple(mode["size"]) == tuple(size) and fast_enough(mode)]
    if exact:
        return max(exact, key=lambda m: int(m["bit_depth"]))
    if not raw:
        return None

    def shown(mode: dict[str, Any]) -> int:
        return int(mode["crop_limits"][2]) * int(mode["crop_limits"][3])

    widest = max(shown(mode) for mode in raw)
    full = [mode for mode in raw if shown(mode) == widest]
    fits = [mode for mode in full
            if mode["size"][0] >= size[0] and mode["size"][1] >= size[1] and fast_enough(mode)]
    if fits:
        return min(fits, key=lambda m: (m["size"][0] * m["size"][1], -m["bit_depth"]))
    return max(full, key=lambda m: (m["size"][0] * m["size"][1], m["bit_depth"]))


def to_bgr(array: np.ndarray, pixel_format: str) -> np.ndarray:
    code = _TO_BGR[pixel_format]
    return array if code is None else cv2.cvtColor(array, code)


class PiCameraSource(BaseSource):
    def __init__(self, config: PiCameraConfig | None = None, *,
                 clock: Clock = time.monotonic) -> None:
        self.config = config if config is not None else PiCameraConfig()
        self._clock = clock
        self.description = f"Pi camera {self.config.camera_num}"
        self.metadata: dict[str, Any] = {}  # the last frame's
        try:
            from picamera2 import Picamera2
        except ImportError as error:
            raise SourceError(f"the Pi camera needs picamera2 ({error}): on Raspberry Pi OS run "
                              "hardware/setup-pi.sh (apt install python3-picamera2)") from None
        number = self.config.camera_num
        found = Picamera2.global_camera_info()
        if len(found) <= number:
            raise SourceError(f"no Pi camera {number} found ({len(found)} connected): check the "
                              "ribbon cable, then `rpicam-hello --list-cameras`")
        self.model = str(found[number].get("Model", "unknown"))
        try:
            self._camera: Any = Picamera2(number)
        except (RuntimeError, IndexError, OSError) as error:
            raise SourceError(f"cannot open Pi camera {number}: {error} (is another program "
                              "using it?)") from None
        try:
            self._camera.configure(self.config.video_configuration(self._camera))
            self._camera.start()
        except Exception as error:
            self.close()
            raise SourceError(f"cannot start Pi camera {number} at {self.config.size[0]}x"
                              f"{self.config.size[1]} {self.config.format}: {error}") from None
        self.camera_config: dict[str, Any] = dict(self._camera.camera_config or {})
        self.modes: list[dict[str, Any]] = list(getattr(self._camera, "sensor_modes", None) or ())
        self.controls = dict(self.camera_config.get("controls") or {})

    def _next_request(self, index: int) -> tuple[np.ndarray, int | None]:
        try:
            job = self._camera.capture_request(wait=False)
            request = self._camera.wait(job, timeout=self.config.timeout_s)
        except TimeoutError:
            # The capture job is still queued in picamera2: `close` cancels it.
            raise CameraLost(f"the Pi camera sent no frame for {self.config.timeout_s:g} s after "
                             f"frame {index}: check the ribbon cable") from None
        except (RuntimeError, OSError, CancelledError) as error:
            raise CameraLost(f"the Pi camera failed after frame {index}: "
                             f"{error or type(error).__name__}") from None
        try:
            self.metadata = dict(request.get_metadata())
            return request.make_array("main"), self.metadata.get("SensorTimestamp")
        finally:
            request.release()  # the buffer goes back to the camera at once

    def __iter__(self) -> Iterator[Frame]:
        start = self._clock()
        first_stamp: int | None = None
        last_stamp: int | None = None
        last_fresh = start
        index = 0
        while True:
            array, stamp = self._next_request(index)
            now = self._clock()
            if stamp is not None and last_stamp is not None and stamp <= last_stamp:
                if now - last_fresh >= self.config.timeout_s:
                    raise CameraLost(f"the Pi camera repeats one frame since frame {index}")
                log.debug("stale frame (SensorTimestamp %s <= %s) skipped", stamp, last_stamp)
                continue
            last_fresh = now
            if stamp is not None:
                first_stamp = stamp if first_stamp is None else first_stamp
                last_stamp = stamp
                timestamp_s = (stamp - first_stamp) / 1e9
            else:
                timestamp_s = now - start
            yield make_frame(to_bgr(array, self.config.format), index, timestamp_s,
                             f"Pi camera frame {index}")
            index += 1

    def details(self) -> list[str]:
        """What `referee camera` reports beyond the frames: the sensor mode and field of
        view, the focus, the exposure (from the last frame's metadata)."""
        return camera_details(self.model, self.camera_config, self.modes, self.controls,
                              self.metadata, self.config)

    def close(self) -> None:
        camera, self._camera = getattr(self, "_camera", None), None
        if camera is None:
            return
        closed = threading.Event()

        def shut_down() -> None:
            try:
                _shut_down(camera)
            finally:
                closed.set()

        threading.Thread(target=shut_down, name="picamera-close", daemon=True).start()
        if not closed.wait(self.config.close_timeout_s):
            log.error("the Pi camera did not close within %g s: it is left to itself (a fresh "
                      "start of the referee opens it again)", self.config.close_timeout_s)


def _shut_down(camera: Any) -> None:
    """Cancel what is queued (a capture that never ended would hold `stop` back for ever),
    then stop and close; each step is tried even if one before it failed."""
    steps: list[Callable[[], Any]] = []
    cancel = getattr(camera, "cancel_all_and_flush", None)
    if cancel is not None:
        steps.append(cancel)
    else:
        log.warning("this picamera2 has no cancel_all_and_flush (0.3.20 and later have it): "
                    "a lost camera may not stop")
    for step in (*steps, camera.stop, camera.close):
        try:
            step()
        except Exception as error:  # a lost camera may fail to stop; still close it
            log.warning("Pi camera: %s", error or type(error).__name__)


def camera_details(model: str, camera_config: dict[str, Any], modes: Sequence[dict[str, Any]],
                   controls: dict[str, Any], metadata: dict[str, Any],
                   config: PiCameraConfig) -> list[str]:
    """Lines saying how the camera is set up and what its last frame was taken with."""
    width, height = camera_config.get("main", {}).get("size", config.size)
    sensor = camera_config.get("sensor") or {}
    mode_size = tuple(sensor.get("output_size") or ())
    mode = next((m for m in modes if tuple(m.get("size", ())) == mode_size), None)
    crop = metadata.get("ScalerCrop") or (mode or {}).get("crop_limits")
    lines = []
    if mode_size:
        depth = sensor.get("bit_depth")
        shows = ""
        if mode is not None and "crop_limits" in mode:
            _, _, crop_w, crop_h = mode["crop_limits"]
            widest = max(int(m["crop_limits"][2]) * int(m["crop_limits"][3])
                         for m in modes if "crop_limits" in m)
            field = "the full field" if crop_w * crop_h == widest else "a centre crop"
            shows = f", {field} ({crop_w}x{crop_h} sensor pixels)"
        lines.append(f"sensor mode {mode_size[0]}x{mode_size[1]}"
                     f"{f' {depth}-bit' if depth else ''}{shows}, scaled to {width}x{height}")
    focal = LENS_MM.get(model)
    if crop is not None and focal is not None:
        _, _, crop_w, crop_h = crop
        fov = [math.degrees(2 * math.atan(extent * PIXEL_PITCH_MM / 2 / focal))
               for extent in (crop_w, crop_h)]
        lines.append(f"field of view {fov[0]:.1f} x {fov[1]:.1f} degrees ({model}, "
                     f"{focal:g} mm lens, {crop_w}x{crop_h} sensor pixels in view)")
    elif crop is not None:
        lines.append(f"{crop[2]}x{crop[3]} sensor pixels in view ({model}: lens unknown)")
    lines.append(_focus_line(controls, metadata))
    lines.append(_exposure_line(controls, metadata))
    return lines


def _focus_line(controls: dict[str, Any], metadata: dict[str, Any]) -> str:
    if "AfMode" not in controls:
        return "focus: fixed lens (no autofocus)"
    lens = metadata.get("LensPosition", controls.get("LensPosition"))
    at = ""
    if lens is not None:
        at = f"lens at {float(lens):.2f} dioptres" + (
            f" ({1 / float(lens):.2f} m)" if float(lens) > 0 else " (infinity)")
    if int(controls["AfMode"]) == AF_CONTINUOUS:
        state = AF_STATES.get(int(metadata.get("AfState", -1)), "")
        return f"focus: continuous autofocus{', ' + state if state else ''}{', ' + at if at else ''}"
    return f"focus: fixed, {at or 'lens position unknown'}"


def _exposure_line(controls: dict[str, Any], metadata: dict[str, Any]) -> str:
    if "ExposureTime" in metadata:
        parts = [f"exposure {float(metadata['ExposureTime']) / 1000:.1f} ms"]
    else:
        parts = ["exposure not reported"]
    if "AnalogueGain" in metadata:
        parts.append(f"analogue gain {float(metadata['AnalogueGain']):.2f}")
    if controls.get("AeFlickerMode") == FLICKER_MANUAL and controls.get("AeFlickerPeriod"):
        period = int(controls["AeFlickerPeriod"])
        parts.append(f"flicker avoidance for {round(1e6 / period / 2)} Hz mains "
                     f"({period} us periods)")
    else:
        parts.append("no flicker avoidance")
    return ", ".join(parts)
