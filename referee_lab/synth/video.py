"""Writing footage: H.264 for .mp4 through the ffmpeg binary that the `imageio-ffmpeg` wheel
ships, Motion JPEG for .avi through OpenCV.

Why not OpenCV for .mp4: its pip wheels encode only MPEG-4 part 2 ('mp4v'), whose quality
cannot be set, and the renderer's sensor noise changes every pixel of every frame: 1280x720
footage came to about 4 MB a second. libx264 at CRF 30 codes the scene and lets the noise
go, as a real camera's own encoder does: 25 to 70 kB a second (benchmarks/footage_size.md).
OpenCV's wheels do decode H.264, so the referee reads the files back frame for frame."""

from __future__ import annotations

import contextlib
import logging
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from referee.errors import OutputError, RenderError

log = logging.getLogger(__name__)
VIDEO_SUFFIXES = (".mp4", ".avi")


@dataclass(frozen=True)
class Encoding:
    """H.264 settings: CRF (lower is better and bigger), x264 preset, encoder threads (fixed,
    so that the same frames give the same bytes on any machine)."""

    crf: int = 30
    preset: str = "fast"
    threads: int = 2


class VideoWriter(Protocol):
    def write(self, frame_bgr: npt.NDArray[np.uint8]) -> None: ...

    def close(self) -> None: ...


class OpenCVWriter:
    """cv2.VideoWriter with a fixed four-character code."""

    def __init__(self, path: Path, codec: str, fps: float, size: tuple[int, int]) -> None:
        self._writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*codec), fps, size)
        if not self._writer.isOpened():
            raise OutputError(f"{path}: OpenCV cannot write {codec} video here")

    def write(self, frame_bgr: npt.NDArray[np.uint8]) -> None:
        self._writer.write(frame_bgr)

    def close(self) -> None:
        self._writer.release()


class FFmpegWriter:
    """Raw BGR frames piped into ffmpeg, encoded as H.264 (yuv420p) in an MP4 whose index
    sits at the front."""

    def __init__(self, path: Path, exe: str, fps: float, size: tuple[int, int],
                 encoding: Encoding) -> None:
        width, height = size
        if width % 2 or height % 2:
            raise RenderError(f"{path}: H.264 footage needs an even width and height, "
                              f"not {width}x{height}")
        command = [exe, "-nostdin", "-y", "-loglevel", "error",
                   "-f", "rawvideo", "-pix_fmt", "bgr24", "-s", f"{width}x{height}",
                   "-r", f"{fps:g}", "-i", "-", "-an",
                   "-c:v", "libx264", "-preset", encoding.preset, "-crf", str(encoding.crf),
                   "-threads", str(encoding.threads), "-pix_fmt", "yuv420p",
                   "-movflags", "+faststart", "-map_metadata", "-1",
                   "-fflags", "+bitexact", "-flags:v", "+bitexact", str(path)]
        self.path = path
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
        self._stdin: IO[bytes] = self._process.stdin  # type: ignore[assignment]

    def write(self, frame_bgr: npt.NDArray[np.uint8]) -> None:
        try:
            self._stdin.write(np.ascontiguousarray(frame_bgr).tobytes())
        except BrokenPipeError:
            self.close()  # raises with ffmpeg's own words
            raise OutputError(f"{self.path}: ffmpeg stopped reading frames") from None

    def close(self) -> None:
        if self._stdin.closed:
            return
        with contextlib.suppress(BrokenPipeError):  # ffmpeg died: its message follows
            self._stdin.close()
        stderr = self._process.stderr
        message = stderr.read().decode(errors="replace").strip() if stderr else ""
        if self._process.wait() != 0:
            last = message.splitlines()[-1] if message else "no message"
            raise OutputError(f"{self.path}: ffmpeg could not write the video ({last})")


def ffmpeg_exe() -> str | None:
    """The ffmpeg binary of the imageio-ffmpeg wheel, or None without it."""
    try:
        import imageio_ffmpeg
    except ImportError:
        return None
    try:
        return str(imageio_ffmpeg.get_ffmpeg_exe())
    except RuntimeError:
        return None


def open_video(path: Path, fps: float, size: tuple[int, int],
               encoding: Encoding | None = None) -> VideoWriter:
    """A writer for `path`: H.264 for .mp4 (OpenCV's 'mp4v', many times bigger, with a
    warning when imageio-ffmpeg is missing), Motion JPEG for .avi."""
    suffix = path.suffix.lower()
    if suffix not in VIDEO_SUFFIXES:
        raise RenderError(f"{path}: footage must be .mp4 or .avi")
    if path.parent and not path.parent.exists():
        raise OutputError(f"{path}: its folder does not exist")
    try:
        path.touch()
    except OSError as error:
        raise OutputError(f"{path}: cannot be written ({error.strerror})") from None
    if suffix == ".avi":
        return OpenCVWriter(path, "MJPG", fps, size)
    exe = ffmpeg_exe()
    if exe is None:
        log.warning("imageio-ffmpeg is not installed: writing %s with OpenCV's mp4v, which "
                    "is many times bigger (pip install imageio-ffmpeg)", path)
        return OpenCVWriter(path, "mp4v", fps, size)
    return FFmpegWriter(path, exe, fps, size, encoding or Encoding())
