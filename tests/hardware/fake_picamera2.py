"""A stand-in for the `picamera2` module that works the way picamera2 0.3.x does (read from
its `picamera2.py` and `job.py`), inserted in sys.modules by the tests.

What is modelled, because the referee's behaviour depends on it:

- Every capture is a *job* (a list of functions) appended to one queue by
  `dispatch_functions`; an event-loop thread (the NULL preview's, which `start()` runs as
  the referee starts the camera) executes the queue head first, one job at a time: a job
  whose function is not done yet (no frame has come) stays at the head and every job behind
  it waits.
- `wait(job, timeout=)` is `Future.result(timeout)`: it raises TimeoutError and leaves the
  job in the queue.
- `stop()` with the event loop running is one more job, dispatched with `wait=True` (no
  timeout): behind a capture that never finishes it waits for ever.
- `cancel_all_and_flush()` cancels every queued job and empties the queue.
- `close()` stops the event loop, then the camera directly.
- `configure` picks the sensor mode as picamera2 does: the mode closest to `sensor`'s
  `output_size` (else the raw stream's size, which defaults to the main stream's), scored
  on width, height, aspect ratio and bit depth; `camera_config["sensor"]` then says which.
  The modes are the Camera Module 3's (IMX708).

Frames arrive only while a job is queued (each pass of the event loop brings one), so the
frame numbers a test sees are exact. A camera that stops (`Script.stop_after`) sends nothing
more: its capture job never finishes. Waiting for such a job does not sleep for its whole
timeout: the fake knows nothing can come, moves the test's clock (`on_timeout`) and raises.

Frames are laid out the way libcamera lays them out: "RGB888" as B, G, R bytes, "BGR888" as
R, G, B, the X formats with a fourth byte, so the adapter's colour handling is really tested.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

RGB = tuple[int, int, int]
SENSOR = (4608, 2592)
# The IMX708's modes as picamera2 lists them: output size, frame rate, the sensor region.
IMX708_MODES: tuple[dict[str, Any], ...] = (
    {"format": "SRGGB10_CSI2P", "bit_depth": 10, "size": (1536, 864), "fps": 120.13,
     "crop_limits": (768, 432, 3072, 1728)},
    {"format": "SRGGB10_CSI2P", "bit_depth": 10, "size": (2304, 1296), "fps": 56.03,
     "crop_limits": (0, 0, 4608, 2592)},
    {"format": "SRGGB10_CSI2P", "bit_depth": 10, "size": (4608, 2592), "fps": 14.35,
     "crop_limits": (0, 0, 4608, 2592)},
)
# name → (min, max, default), as Picamera2.camera_controls gives them for the Camera Module 3
IMX708_CONTROLS: dict[str, tuple[Any, Any, Any]] = {
    "AfMode": (0, 2, 0), "AfRange": (0, 2, 0), "AfSpeed": (0, 1, 0), "LensPosition": (0.0, 15.0, 1.0),
    "AeFlickerMode": (0, 1, 0), "AeFlickerPeriod": (100, 1000000, None),
    "ExposureTime": (26, 220417486, 20000), "AnalogueGain": (1.12, 16.0, None),
    "FrameDurationLimits": (8333, 2147483647, None), "NoiseReductionMode": (0, 4, 0),
}


HANG_S = 10.0  # what takes longer than this in a test hangs


def finishes(work: Callable[[], object], within_s: float = HANG_S) -> list[BaseException]:
    """Run `work` on a daemon thread; fail the test if it has not ended within `within_s`
    (a hang fails instead of hanging the run). What it raised is returned."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:
            raised.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(within_s)
    assert not thread.is_alive(), f"still running after {within_s:g} s: it hangs"
    return raised


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


def score_mode(mode: dict[str, Any], bit_depth: int, output_size: tuple[int, int]) -> float:
    """How far a sensor mode is from the size and depth asked for (lower is nearer): larger
    modes cost a quarter of what smaller ones do, a different aspect ratio costs most."""
    def apart(desired: float, actual: float) -> float:
        gap = desired - actual
        return -gap / 4 if gap < 0 else gap * 2

    width, height = int(mode["size"][0]), int(mode["size"][1])
    return (apart(output_size[0], width) + apart(output_size[1], height)
            + 1500 * apart(output_size[0] / output_size[1], width / height)
            + 500 * abs(bit_depth - int(mode["bit_depth"])))


def scaler_crop(mode: dict[str, Any], size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The sensor region (full-resolution pixels) behind an output of `size` from `mode`:
    the mode's own region, cut to the output's aspect ratio about its centre."""
    x, y, width, height = mode["crop_limits"]
    if size[0] * height > size[1] * width:  # the output is wider: full width, less height
        new_height = round(width * size[1] / size[0])
        return x, y + (height - new_height) // 2, width, new_height
    new_width = round(height * size[0] / size[1])
    return x + (width - new_width) // 2, y, new_width, height


@dataclass
class Script:
    """What the fake camera does: the cameras present, and its faults."""

    cameras: int = 1
    model: str = "imx708"
    busy: bool = False  # the constructor fails as when another process holds the camera
    stop_after: int | None = None  # frames delivered before it stops (its captures never end)
    fail_after: int | None = None  # frames delivered before a capture job raises RuntimeError
    stale: frozenset[int] = frozenset()  # frame numbers delivered again with the old timestamp
    max_size: tuple[int, int] = (4608, 2592)
    stop_hangs: bool = False  # stopping the camera never returns (a driver stuck for good)
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
    """picamera2.job.Job: functions run in turn by the event loop, each returning (done,
    result); a Future carries the last result, or the exception one raised."""

    def __init__(self, functions: list[Callable[[], tuple[bool, Any]]],
                 camera_stopped: Callable[[], bool], script: Script, *,
                 wants_frame: bool = True) -> None:
        self._functions = functions
        self.wants_frame = wants_frame  # a capture (a stop needs no frame)
        self._future: Future[Any] = Future()
        self._future.set_running_or_notify_cancel()
        self._result: Any = None
        self._camera_stopped, self._script = camera_stopped, script

    def execute(self) -> bool:
        try:
            while self._functions:
                done, result = self._functions[0]()
                if not done:
                    break
                self._functions.pop(0)
            if not self._functions:
                self._result = result
        except Exception as error:
            self._future.set_exception(error)
            self._functions = []
        return not self._functions

    def signal(self) -> None:
        if not self._future.done():
            self._future.set_result(self._result)

    def get_result(self, timeout: float | None = None) -> Any:
        if timeout is None:
            return self._future.result()  # as picamera2: waits for ever if it never ends
        # A stopped sensor sends nothing more: the wait would end in TimeoutError; say so
        # without spending the seconds (a real wait for what can still come).
        real = min(timeout, 0.01) if self._camera_stopped() else timeout
        try:
            return self._future.result(timeout=real)
        except TimeoutError:
            self._script.on_timeout(timeout)
            raise

    def cancel(self) -> None:
        self._future.set_exception(CancelledError())


def make_module(script: Script) -> types.ModuleType:
    class Picamera2:
        @staticmethod
        def global_camera_info() -> list[dict[str, Any]]:
            return [{"Model": script.model, "Location": 2, "Rotation": 180, "Id": f"/base/cam{i}"}
                    for i in range(script.cameras)]

        def __init__(self, camera_num: int = 0, verbose_console: Any = None,
                     tuning: Any = None) -> None:
            script.log.append(f"open {camera_num}")
            if camera_num >= script.cameras or script.busy:
                raise RuntimeError("Camera __init__ sequence did not complete.")
            self.camera_config: dict[str, Any] | None = None
            self.camera_controls = dict(IMX708_CONTROLS)
            self.sensor_modes = [dict(mode) for mode in IMX708_MODES]
            self.sensor_resolution = SENSOR
            self.is_open = True
            self.started = False
            self.closed = False
            self.lock = threading.Lock()
            self._job_list: list[Job] = []
            self.completed_requests: list[CompletedRequest] = []
            self._max_queue_len = 1
            self._preview: threading.Thread | None = None
            self._event_loop_running = False
            self._wake = threading.Event()
            self._abort = threading.Event()
            self.sensor_stopped = False  # the ribbon is out: no frame will come again
            self._delivered = 0  # requests handed out, stale ones included
            self._frame = 0
            self._stamp = 1_000_000_000_000
            script.instances.append(self)

        # -- configuration ------------------------------------------------------------
        def create_video_configuration(self, main: dict[str, Any] | None = None,
                                       lores: dict[str, Any] | None = None,
                                       raw: dict[str, Any] | None = None, transform: Any = None,
                                       colour_space: Any = None, buffer_count: int = 6,
                                       controls: dict[str, Any] | None = None,
                                       display: str | None = "main", encode: str | None = "main",
                                       queue: bool = True, sensor: dict[str, Any] | None = None,
                                       use_case: str = "video") -> dict[str, Any]:
            main = {"format": "XBGR8888", "size": (1280, 720), "preserve_ar": True, **(main or {})}
            raw = {"format": "SRGGB10_CSI2P", "size": main["size"], **(raw or {})}
            return {"use_case": use_case, "main": main, "lores": lores, "raw": raw,
                    "buffer_count": buffer_count, "queue": queue,
                    "controls": {"NoiseReductionMode": 1, "FrameDurationLimits": (33333, 33333),
                                 **(controls or {})},
                    "sensor": sensor if sensor is not None else {},
                    "display": display, "encode": encode}

        def configure(self, camera_config: dict[str, Any]) -> None:
            size = tuple(camera_config["main"]["size"])
            if size[0] > script.max_size[0] or size[1] > script.max_size[1]:
                raise RuntimeError(f"Failed to configure: size {size}")
            sensor = camera_config.get("sensor") or {}
            bad = set(sensor) - {"output_size", "bit_depth"}
            if bad:
                raise RuntimeError(f"Unexpected keys {bad} in sensor configuration")
            for name in camera_config["controls"]:
                if name not in self.camera_controls and name != "FrameRate":
                    raise RuntimeError(f"Control {name} is not advertised by libcamera")
            output_size = tuple(sensor.get("output_size") or camera_config["raw"]["size"])
            bit_depth = int(sensor.get("bit_depth") or 10)
            mode = min(self.sensor_modes, key=lambda m: score_mode(m, bit_depth, output_size))
            self.mode = mode
            self.camera_config = {**camera_config, "sensor": {"output_size": mode["size"],
                                                              "bit_depth": mode["bit_depth"]}}
            self._max_queue_len = 1 if camera_config.get("queue", True) else 0
            script.log.append("configure")

        # -- running ------------------------------------------------------------------
        def start(self, config: Any = None, show_preview: bool | None = False) -> None:
            if config is not None:
                self.configure(config)
            if self.camera_config is None:
                raise RuntimeError("Camera has not been configured")
            if show_preview is not None and not self._event_loop_running:
                self._start_event_loop()  # the NULL preview's thread
            self.started = True
            script.log.append("start")

        def _start_event_loop(self) -> None:
            self._abort.clear()
            self._preview = threading.Thread(target=self._event_loop, name="fake-null-preview",
                                             daemon=True)
            self._event_loop_running = True
            self._preview.start()

        def _event_loop(self) -> None:
            while not self._abort.is_set():
                if self._wake.wait(0.2):
                    self._wake.clear()
                    if not self._abort.is_set():
                        self.process_requests()

        def _run_process_requests(self) -> None:
            self._wake.set()

        def process_requests(self) -> None:
            """One pass of the event loop: a new frame (when one comes), then the queued
            jobs, head first, until one is not done."""
            with self.lock:
                if self.started and any(job.wants_frame for job in self._job_list):
                    self._deliver()
                finished = []
                while self._job_list:
                    if self._job_list[0].execute():
                        finished.append(self._job_list.pop(0))
                    else:
                        break
                while len(self.completed_requests) > self._max_queue_len:
                    self.completed_requests.pop(0).release()
                more = (any(job.wants_frame for job in self._job_list) and self.started
                        and not self.sensor_stopped)
            for job in finished:
                job.signal()
            if more:
                self._run_process_requests()  # the next frame is on its way

        def _deliver(self) -> None:
            if self.sensor_stopped:
                return
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
            if script.stop_after is not None and self._frame >= script.stop_after:
                self.sensor_stopped = True  # this is its last frame
            controls = self.camera_config["controls"]
            manual = controls.get("AfMode", 0) == 0
            metadata = {"SensorTimestamp": stamp, "ExposureTime": 9984, "AnalogueGain": 2.0,
                        "FrameDuration": int(1e6 / fps),
                        "ScalerCrop": scaler_crop(self.mode, tuple(main["size"])),
                        "LensPosition": controls.get("LensPosition", 1.0) if manual else 2.25,
                        "AfState": 0 if manual else 2}
            rgb = scene_rgb(main["size"][0], main["size"][1], n)
            self.completed_requests.append(
                CompletedRequest(layout(rgb, main["format"]), metadata, script.log))

        def dispatch_functions(self, functions: list[Callable[[], tuple[bool, Any]]],
                               wait: bool | float | None, signal_function: Any = None,
                               immediate: bool = False, *, wants_frame: bool = True) -> Any:
            if wait is None:
                wait = signal_function is None
            timeout = None if wait is True else wait
            with self.lock:
                job = Job(functions, lambda: self.sensor_stopped, script, wants_frame=wants_frame)
                self._job_list.append(job)
                self._run_process_requests()
            return job.get_result(timeout=timeout) if wait is not False else job

        def wait(self, job: Job, timeout: float | None = None) -> Any:
            return job.get_result(timeout)

        def _wait_for_timestamp_(self, timestamp_ns: int | None) -> tuple[bool, Any]:
            return True, None

        def _capture_request_(self) -> tuple[bool, Any]:
            if script.fail_after is not None and self._frame > script.fail_after:
                raise RuntimeError("Device or resource busy: dequeue failed")
            if not self.completed_requests:
                return False, None
            return True, self.completed_requests.pop(0)

        def _capture_array_(self, name: str) -> tuple[bool, Any]:
            done, request = self._capture_request_()
            if not done:
                return False, None
            try:
                return True, request.make_array(name)
            finally:
                request.release()

        def capture_request(self, wait: bool | float | None = None, signal_function: Any = None,
                            flush: Any = None) -> Any:
            return self.dispatch_functions(
                [partial(self._wait_for_timestamp_, flush), self._capture_request_], wait,
                signal_function)

        def capture_array(self, name: str = "main", wait: Any = None,
                          signal_function: Any = None) -> Any:
            return self.dispatch_functions([partial(self._capture_array_, name)], wait,
                                           signal_function)

        def cancel_all_and_flush(self) -> None:
            with self.lock:
                for job in self._job_list:
                    job.cancel()
                self._job_list = []
            script.log.append("cancel_all_and_flush")

        def stop_(self) -> tuple[bool, Any]:
            if self.started:
                if script.stop_hangs:
                    threading.Event().wait()
                self.started = False
                while self.completed_requests:
                    self.completed_requests.pop(0).release()
                script.log.append("stop")
            return True, None

        def stop(self) -> None:
            if not self.started:
                return
            if self._preview is not None and self._event_loop_running:
                self.dispatch_functions([self.stop_], wait=True, immediate=True, wants_frame=False)
            else:
                self.stop_()

        def close(self) -> None:
            if self._preview is not None:  # stop_preview: the event loop ends first
                self._abort.set()
                self._wake.set()
                self._preview.join()
                self._preview, self._event_loop_running = None, False
            if not self.is_open:
                return
            self.stop()
            self.is_open = False
            self.closed = True
            script.log.append("close")

    module = types.ModuleType("picamera2")
    module.Picamera2 = Picamera2  # type: ignore[attr-defined]
    return module
