"""Frame sources: one interface over a video file, a folder of images, an OpenCV camera (USB)
and the Pi camera (`picamera.py`).

    with open_source("pi" | "0" | "game.mp4" | "frames/") as source:
        for frame in source:
            ...frame.frame_bgr, frame.index, frame.timestamp_s...

Footage (a video file or a folder of images) may start `start_s` seconds in, and may be
played at its own frame rate (`speed`, `PacedSource`) as a camera would deliver it: that is
how `referee live` runs from a file.

Every frame leaves its source as BGR (colour order is fixed in each adapter) in a read-only
array. A source that cannot be opened raises `SourceError` with one clear line; a camera that
stops delivering mid-game raises `CameraLost` (a `SourceError`) instead of hanging.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from referee.errors import CameraLost, SourceError
from referee.hardware.frames import BaseSource, Clock, Frame, FrameSource, make_frame
from referee.stderr import quiet_stderr

if TYPE_CHECKING:
    from referee.hardware.picamera import PiCameraConfig

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})
# Mean level (0–255) below which a frame counts as black: a lens cap, the lights off, a
# dead sensor. A dim room still reads 30+; a capped lens reads 0–5.
DARK_LEVEL = 12.0


# OpenCV's own log levels (`cv::utils::logging::LogLevel`): the same numbers in 4.x and 5.x.
OPENCV_LOG_ERROR = 2


def _opencv_log_level() -> tuple[Callable[[], int], Callable[[int], Any]] | None:
    """OpenCV's get and set of its log level: `cv2.utils.logging` in OpenCV 5, `cv2.getLogLevel`
    and `cv2.setLogLevel` in 4.x (the 4.11 a Raspberry Pi gets has no `cv2.utils.logging`);
    None where this build has neither."""
    logging_module = getattr(getattr(cv2, "utils", None), "logging", None)
    for where in (logging_module, cv2):
        get, put = getattr(where, "getLogLevel", None), getattr(where, "setLogLevel", None)
        if callable(get) and callable(put):
            return get, put
    return None


@contextlib.contextmanager
def quiet_opencv() -> Iterator[None]:
    """Silence OpenCV's and FFmpeg's own messages while opening: our `SourceError` says it in
    one line. FFmpeg's level is read when OpenCV first uses it; a user's own setting wins."""
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")  # AV_LOG_QUIET
    level_api = _opencv_log_level()
    if level_api is None:
        yield
        return
    get, put = level_api
    level = get()
    put(OPENCV_LOG_ERROR)
    try:
        yield
    finally:
        put(level)


def read_image_quietly(path: str | Path) -> np.ndarray | None:
    """`cv2.imread` in colour, without the decoder's own messages; None where it cannot."""
    with quiet_stderr():
        return cv2.imread(str(path), cv2.IMREAD_COLOR)


def first_frame_at(start_s: float, fps: float, where: object) -> int:
    """The first frame at or after `start_s` seconds into footage of `fps` frames a second."""
    if not (math.isfinite(start_s) and start_s >= 0):
        raise SourceError(f"{where}: the start must be 0 s or later, not {start_s}")
    return math.ceil(start_s * fps - 1e-6)


class VideoFileSource(BaseSource):
    """A video file read with OpenCV; timestamps come from the file's frame rate, counted
    from the file's first frame even when reading starts `start_s` seconds in.

    A file that is missing, empty, not a video or holds no frames (or none from `start_s` on)
    fails on opening; a file whose frames stop before its header's count (truncated) yields
    what it has, then raises `SourceError`."""

    def __init__(self, path: str | Path, *, start_s: float = 0.0) -> None:
        self.path = Path(path)
        self.description = f"video {self.path}"
        if not self.path.exists():
            raise SourceError(f"{self.path}: no such video file")
        if not self.path.is_file():
            raise SourceError(f"{self.path}: not a file")
        if self.path.stat().st_size == 0:
            raise SourceError(f"{self.path}: the file is empty")
        with quiet_opencv():
            self._capture: Any = cv2.VideoCapture(str(self.path))
        if not self._capture.isOpened():
            raise SourceError(f"{self.path}: cannot open it as a video (not a video, truncated, "
                              "or a codec OpenCV lacks)")
        fps = float(self._capture.get(cv2.CAP_PROP_FPS))
        if not (math.isfinite(fps) and 0 < fps <= 1000):
            log.warning("%s: no usable frame rate (%s); assuming 30 fps", self.path, fps)
            fps = 30.0
        self.fps = fps
        self.frame_count = max(0, int(self._capture.get(cv2.CAP_PROP_FRAME_COUNT)))
        # Frames are decoded up to the start rather than sought: seeking H.264 lands on a
        # keyframe, and the start must be the same frame every time.
        self.start_index = first_frame_at(start_s, fps, self.path)
        ok = all(self._capture.grab() for _ in range(self.start_index))
        ok, first = self._capture.read() if ok else (False, None)
        if not ok:
            self.close()
            if self.start_index:
                raise SourceError(f"{self.path}: the video ends before {start_s:g} s")
            if self.frame_count:  # its index promises frames its data does not hold
                raise SourceError(f"{self.path}: the video ends after 0 of its "
                                  f"{self.frame_count} frames (the file is truncated or damaged)")
            raise SourceError(f"{self.path}: the video holds no frames it can decode")
        self._first: np.ndarray | None = first

    def __iter__(self) -> Iterator[Frame]:
        if self._first is None:
            raise SourceError(f"{self.path}: a video file can be read once only")
        pixels, self._first = self._first, None
        index = self.start_index
        while True:
            yield make_frame(pixels, index, index / self.fps, f"{self.path} frame {index}")
            index += 1
            ok, pixels = self._capture.read()
            if not ok:
                break
        # Container counts can be estimates: allow a little slack before calling it truncated.
        if self.frame_count and index < self.frame_count - max(2, self.frame_count // 50):
            raise SourceError(f"{self.path}: the video ends after {index} of its {self.frame_count} "
                              "frames (the file is truncated or damaged)")

    def close(self) -> None:
        self._capture.release()


def _natural_key(path: Path) -> tuple[Any, ...]:
    return tuple(int(part) if part.isdigit() else part.lower()
                 for part in re.split(r"(\d+)", path.name))


class ImageFolderSource(BaseSource):
    """The images of a folder in natural order (frame2 before frame10), `fps` apart, from
    the first at or after `start_s`."""

    def __init__(self, folder: str | Path, *, fps: float = 30.0, start_s: float = 0.0) -> None:
        self.folder = Path(folder)
        self.description = f"images in {self.folder}"
        if not self.folder.is_dir():
            raise SourceError(f"{self.folder}: no such folder")
        if not (math.isfinite(fps) and fps > 0):
            raise SourceError(f"frame rate must be a positive number, not {fps}")
        self.fps = fps
        self.paths = sorted((path for path in self.folder.iterdir()
                             if path.suffix.lower() in IMAGE_SUFFIXES and path.is_file()),
                            key=_natural_key)
        if not self.paths:
            raise SourceError(f"{self.folder}: no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        self.start_index = first_frame_at(start_s, fps, self.folder)
        if self.start_index >= len(self.paths):
            raise SourceError(f"{self.folder}: its {len(self.paths)} images end before {start_s:g} s")

    def __iter__(self) -> Iterator[Frame]:
        for index, path in enumerate(self.paths[self.start_index:], start=self.start_index):
            pixels = read_image_quietly(path)
            if pixels is None:
                raise SourceError(f"{path}: not a readable image")
            yield make_frame(pixels, index, index / self.fps, str(path))


class OpenCVDeviceSource(BaseSource):
    """A camera OpenCV can open (a USB camera: `/dev/videoN` or its index).

    A read that fails `max_failures` times in a row, or no frame for `timeout_s`, means the
    camera is gone: `CameraLost`. `capture_factory` stands in for `cv2.VideoCapture` in tests."""

    def __init__(self, device: int | str = 0, *, size: tuple[int, int] | None = (1280, 720),
                 fps: float | None = 30.0, timeout_s: float = 2.0, max_failures: int = 5,
                 clock: Clock = time.monotonic,
                 capture_factory: Callable[[int | str], Any] | None = None) -> None:
        self.device, self.timeout_s, self.max_failures, self._clock = (
            device, timeout_s, max_failures, clock)
        self.description = f"camera {device}"
        with quiet_opencv():
            self._capture = (capture_factory or cv2.VideoCapture)(device)
        if not self._capture.isOpened():
            self._capture.release()
            raise SourceError(f"no camera at {self._name()}: is it plugged in, and not in use "
                              "by another program?")
        if size is not None:
            self._capture.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
            self._capture.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
        if fps is not None:
            self._capture.set(cv2.CAP_PROP_FPS, fps)

    def _name(self) -> str:
        return f"/dev/video{self.device}" if isinstance(self.device, int) else str(self.device)

    def __iter__(self) -> Iterator[Frame]:
        start = self._clock()
        last_frame, failures, index = start, 0, 0
        while True:
            try:
                ok, pixels = self._capture.read()
            except cv2.error as error:
                ok, pixels = False, None
                log.warning("camera %s: %s", self.device, error)
            now = self._clock()
            if not ok or pixels is None:
                failures += 1
                if failures >= self.max_failures or now - last_frame >= self.timeout_s:
                    raise CameraLost(f"camera {self._name()} stopped delivering frames after "
                                     f"frame {index} ({failures} failed reads): unplugged?")
                continue
            failures, last_frame = 0, now
            yield make_frame(pixels, index, now - start, f"camera {self.device}")
            index += 1

    def close(self) -> None:
        self._capture.release()


class PacedSource(BaseSource):
    """Footage delivered as a camera would: each frame no earlier than its time after the
    first (divided by `speed`: 2 plays twice as fast). A late frame is never skipped, so a
    file gives the same frames however busy the machine; a slow one lags behind instead."""

    def __init__(self, source: FrameSource, *, speed: float = 1.0, clock: Clock = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not (math.isfinite(speed) and speed > 0):
            raise SourceError(f"the playing speed must be a positive number, not {speed}")
        self.source, self.speed, self._clock, self._sleep = source, speed, clock, sleep
        self.description = f"{source.description} at {speed:g}x"

    def __iter__(self) -> Iterator[Frame]:
        first: tuple[float, float] | None = None  # (wall clock, footage time) of the first frame
        for frame in self.source:
            if first is None:
                first = (self._clock(), frame.timestamp_s)
            else:
                due = first[0] + (frame.timestamp_s - first[1]) / self.speed
                if (wait := due - self._clock()) > 0:
                    self._sleep(wait)
            yield frame

    def close(self) -> None:
        self.source.close()


def is_camera(spec: str | Path) -> bool:
    """Whether `spec` names a camera (`pi`, `pi:N`, `N`, `/dev/videoN`) rather than footage."""
    text = str(spec)
    return bool(re.fullmatch(r"pi(?::\d+)?|\d+", text)) or text.startswith("/dev/video")


def open_source(spec: str | Path, *, fps: float = 30.0, clock: Clock = time.monotonic,
                start_s: float = 0.0, speed: float = 0.0,
                pi: PiCameraConfig | None = None) -> FrameSource:
    """`"pi"` or `"pi:N"`: the Pi camera (N-th, set up as `pi` says, else the defaults);
    `"0"`, `"1"`, `/dev/video0`: an OpenCV camera; a folder: its images, `fps` apart; any
    other path: a video file. Footage starts `start_s` seconds in and, with a `speed`, is
    paced at that many times its frame rate (0: as fast as it is read)."""
    text = str(spec)
    if (start_s or speed) and is_camera(text):
        raise SourceError(f"camera {text}: a start time and a playing speed are for footage only")
    if not is_camera(text):
        footage = _open_footage(Path(text), fps=fps, start_s=start_s)
        if not speed:
            return footage
        try:
            return PacedSource(footage, speed=speed, clock=clock)
        except SourceError:
            footage.close()
            raise
    if match := re.fullmatch(r"pi(?::(\d+))?", text):
        from referee.hardware.picamera import PiCameraConfig, PiCameraSource

        number = int(match.group(1) or 0)
        config = replace(pi, camera_num=number) if pi is not None else PiCameraConfig(camera_num=number)
        return PiCameraSource(config, clock=clock)
    if text.isdigit():
        return OpenCVDeviceSource(int(text), clock=clock)
    return OpenCVDeviceSource(text, clock=clock)


def _open_footage(path: Path, *, fps: float, start_s: float) -> FrameSource:
    if path.is_dir():
        return ImageFolderSource(path, fps=fps, start_s=start_s)
    return VideoFileSource(path, start_s=start_s)


def frame_level(frame_bgr: np.ndarray) -> float:
    """Mean brightness 0–255 from every 8th pixel of every 8th row: ~1/64 of the work."""
    return float(frame_bgr[::8, ::8].mean())


class Picture(enum.Enum):
    OK = "picture"
    DARK = "black frames"


class PictureWatch:
    """Reports when a source turns black (lens cap, lights off) for `after_s`, and when it
    recovers; single dark frames (a hand over the lens) are not reported."""

    def __init__(self, *, level: float = DARK_LEVEL, after_s: float = 1.0) -> None:
        self.level, self.after_s = level, after_s
        self.state = Picture.OK
        self._dark_since: float | None = None

    def update(self, frame: Frame) -> Picture | None:
        """The new state if this frame changes it, else None."""
        if frame_level(frame.frame_bgr) >= self.level:
            self._dark_since = None
            if self.state is Picture.DARK:
                self.state = Picture.OK
                return self.state
            return None
        if self._dark_since is None:
            self._dark_since = frame.timestamp_s
        if self.state is Picture.OK and frame.timestamp_s - self._dark_since >= self.after_s:
            self.state = Picture.DARK
            log.warning("frame %d: the picture has been black for %.1f s", frame.index,
                        frame.timestamp_s - self._dark_since)
            return self.state
        return None
