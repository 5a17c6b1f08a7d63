"""The Raspberry Pi camera through picamera2 (imported lazily: it exists only on a Pi).

Configuration is plain data (`PiCameraConfig`). Each frame comes from `capture_request`,
so its `SensorTimestamp` is known: a request whose timestamp is not newer than the last one
is a stale frame exposed before we asked (picamera2 #426) and is skipped; `queue=False`
makes picamera2 keep no old frame for us in the first place. Colour order is fixed here:
libcamera names formats by word order, so "RGB888" arrives as B, G, R bytes, which is what
OpenCV wants; everything after this adapter is BGR.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

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


@dataclass(frozen=True)
class PiCameraConfig:
    """The main stream: `size` (width, height), a picamera2 `format`, `frame_rate` per second.

    1280 x 720 is scaled by the ISP from a full-field sensor mode (Camera Module 3); copying
    a larger frame into an array costs more than the referee gains (picamera2 #914)."""

    size: tuple[int, int] = (1280, 720)
    format: str = "RGB888"
    frame_rate: float = 30.0
    buffer_count: int = 4
    camera_num: int = 0
    timeout_s: float = 2.0  # no new frame for this long: the camera is lost

    def __post_init__(self) -> None:
        if self.format not in _TO_BGR:
            raise SourceError(f"Pi camera format {self.format!r} is not one of {', '.join(_TO_BGR)}")
        if self.buffer_count < 2:
            raise SourceError("the Pi camera needs buffer_count >= 2 (fresh frames, FIELD-NOTES)")

    def video_configuration(self, camera: Any) -> Any:
        """picamera2's configuration for this: one `main` stream, no queued old frame."""
        return camera.create_video_configuration(
            main={"size": tuple(self.size), "format": self.format},
            controls={"FrameRate": float(self.frame_rate)},
            buffer_count=self.buffer_count, queue=False)


def to_bgr(array: np.ndarray, pixel_format: str) -> np.ndarray:
    code = _TO_BGR[pixel_format]
    return array if code is None else cv2.cvtColor(array, code)


class PiCameraSource(BaseSource):
    def __init__(self, config: PiCameraConfig | None = None, *,
                 clock: Clock = time.monotonic) -> None:
        self.config = config if config is not None else PiCameraConfig()
        self._clock = clock
        self.description = f"Pi camera {self.config.camera_num}"
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

    def _next_request(self, index: int) -> tuple[np.ndarray, int | None]:
        try:
            job = self._camera.capture_request(wait=False)
            request = self._camera.wait(job, timeout=self.config.timeout_s)
        except TimeoutError:
            raise CameraLost(f"the Pi camera sent no frame for {self.config.timeout_s:g} s after "
                             f"frame {index}: check the ribbon cable") from None
        except (RuntimeError, OSError) as error:
            raise CameraLost(f"the Pi camera failed after frame {index}: {error}") from None
        try:
            stamp = request.get_metadata().get("SensorTimestamp")
            return request.make_array("main"), stamp
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

    def close(self) -> None:
        camera, self._camera = getattr(self, "_camera", None), None
        if camera is None:
            return
        for step in (camera.stop, camera.close):
            try:
                step()
            except Exception as error:  # a lost camera may fail to stop; still close it
                log.warning("Pi camera: %s", error)
