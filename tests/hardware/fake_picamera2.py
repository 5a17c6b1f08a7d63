"""A stand-in for the `picamera2` module with the real API's names and signatures
(Picamera2.global_camera_info, Picamera2(camera_num), create_video_configuration, configure,
start, capture_request(wait=False) → job, wait(job, timeout), capture_array, CompletedRequest
.get_metadata / .make_array / .release, stop, close), inserted in sys.modules by the tests.

It delivers frames the way libcamera lays them out: "RGB888" as B, G, R bytes, "BGR888" as
R, G, B, the X formats with a fourth byte, so the adapter's colour handling is really tested.
Faults are scripted: no camera, a busy camera, stale frames, a camera that stops or fails."""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

RGB = tuple[int, int, int]


def scene_rgb(width: int, height: int, n: int) -> np.ndarray:
    """Frame n of the test scene in true RGB: a red left half, a blue right half, and a green
    square whose x position is n (so frames can be told apart)."""
    image = np.zeros((height, width, 3), np.uint8)
    image[:, : width // 2] = (200, 30, 10)
    image[:, width // 2:] = (10, 40, 220)
    image[4:12, n % (width - 8): n % (width - 8) + 8] = (20, 230, 40)
    return image


def layout(rgb: np.ndarray, pixel_format: str) -> np.ndarray:
    """The bytes picamera2 hands back for `pixel_format` (libcamera's word-order names)."""
    alpha = np.full((*rgb.shape[:2], 1), 255, np.uint8)
    if pixel_format == "RGB888":
        return rgb[..., ::-1].copy()
    if pixel_format == "BGR888":
        return rgb.copy()
    if pixel_format == "XRGB8888":
        return np.concatenate([rgb[..., ::-1], alpha], axis=2)
    if pixel_format == "XBGR8888":
        return np.concatenate([rgb, alpha], axis=2)
    raise RuntimeError(f"fake: unsupported format {pixel_format}")


@dataclass
class Script:
    """What the fake camera does: the cameras present, and its faults."""

    cameras: int = 1
    busy: bool = False  # the constructor fails as when another process holds the camera
    stop_after: int | None = None  # frames delivered before it stops (wait times out)
    fail_after: int | None = None  # frames delivered before a request raises RuntimeError
    stale: frozenset[int] = frozenset()  # frame numbers delivered again with the old timestamp
    max_size: tuple[int, int] = (4608, 2592)
    on_timeout: Callable[[float], None] = lambda seconds: None  # advance a fake clock
    log: list[str] = field(default_factory=list)
    instances: list[Any] = field(default_factory=list)


class CompletedRequest:
    def __init__(self, array: np.ndarray, metadata: dict[str, Any], log: list[str]) -> None:
        self._array, self._metadata, self._log = array, metadata, log
        self.released = False

    def get_metadata(self) -> dict[str, Any]:
        return dict(self._metadata)

    def make_array(self, name: str) -> np.ndarray:
        if name != "main":
            raise KeyError(name)
        return self._array.copy()

    def release(self) -> None:
        self.released = True
        self._log.append("release")


class Job:
    def __init__(self, result: Callable[[float | None], CompletedRequest]) -> None:
        self._result = result

    def get_result(self, timeout: float | None = None) -> CompletedRequest:
        return self._result(timeout)


def make_module(script: Script) -> types.ModuleType:
    class Picamera2:
        @staticmethod
        def global_camera_info() -> list[dict[str, Any]]:
            return [{"Model": "imx708", "Location": 2, "Rotation": 180, "Id": f"/base/cam{i}"}
                    for i in range(script.cameras)]

        def __init__(self, camera_num: int = 0, verbose_console: Any = None,
                     tuning: Any = None) -> None:
            script.log.append(f"open {camera_num}")
            if camera_num >= script.cameras or script.busy:
                raise RuntimeError("Camera __init__ sequence did not complete.")
            self.camera_config: dict[str, Any] | None = None
            self.started = False
            self.closed = False
            self._delivered = 0  # requests handed out, stale ones included
            self._frame = 0
            self._stamp = 1_000_000_000_000
            script.instances.append(self)

        def create_video_configuration(self, main: dict[str, Any] | None = None,
                                       lores: dict[str, Any] | None = None, raw: Any = None,
                                       transform: Any = None, colour_space: Any = None,
                                       buffer_count: int = 6, controls: dict[str, Any] | None = None,
                                       display: str | None = "main", encode: str | None = "main",
                                       queue: bool = True, sensor: Any = None,
                                       use_case: str = "video") -> dict[str, Any]:
            main = {"format": "XBGR8888", "size": (1280, 720), **(main or {})}
            return {"use_case": use_case, "main": main, "lores": lores, "raw": raw,
                    "buffer_count": buffer_count, "queue": queue,
                    "controls": {"FrameDurationLimits": (33333, 33333), **(controls or {})},
                    "display": display, "encode": encode}

        def configure(self, camera_config: dict[str, Any]) -> None:
            size = tuple(camera_config["main"]["size"])
            if size[0] > script.max_size[0] or size[1] > script.max_size[1]:
                raise RuntimeError(f"Failed to configure: size {size}")
            self.camera_config = camera_config
            script.log.append("configure")

        def start(self, config: Any = None, show_preview: bool | None = False) -> None:
            if self.camera_config is None:
                raise RuntimeError("Camera has not been configured")
            self.started = True
            script.log.append("start")

        def _complete(self, timeout: float | None) -> CompletedRequest:
            if not self.started:
                raise RuntimeError("Camera not started")
            if script.fail_after is not None and self._frame >= script.fail_after:
                raise RuntimeError("Device or resource busy: dequeue failed")
            if script.stop_after is not None and self._frame >= script.stop_after:
                script.on_timeout(timeout or 0.0)
                raise TimeoutError()  # what concurrent.futures raises when the job never ends
            assert self.camera_config is not None
            main = self.camera_config["main"]
            fps = self.camera_config["controls"].get("FrameRate", 30.0)
            if self._delivered in script.stale:  # the same exposure handed out again
                n, stamp = self._frame - 1, self._stamp
            else:
                self._stamp += int(1e9 / fps)
                n, stamp = self._frame, self._stamp
                self._frame += 1
            self._delivered += 1
            rgb = scene_rgb(main["size"][0], main["size"][1], n)
            return CompletedRequest(layout(rgb, main["format"]),
                                    {"SensorTimestamp": stamp, "ExposureTime": 10000}, script.log)

        def capture_request(self, wait: bool | float | None = None, signal_function: Any = None,
                            flush: Any = None) -> Any:
            job = Job(self._complete)
            return job if wait is False else job.get_result(None if wait in (None, True) else wait)

        def wait(self, job: Job, timeout: float | None = None) -> CompletedRequest:
            return job.get_result(timeout)

        def capture_array(self, name: str = "main", wait: Any = None, signal_function: Any = None) -> Any:
            request = self._complete(None)
            try:
                return request.make_array(name)
            finally:
                request.release()

        def stop(self) -> None:
            self.started = False
            script.log.append("stop")

        def close(self) -> None:
            self.closed = True
            script.log.append("close")

    module = types.ModuleType("picamera2")
    module.Picamera2 = Picamera2  # type: ignore[attr-defined]
    return module
