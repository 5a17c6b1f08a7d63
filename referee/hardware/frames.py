"""What every frame source gives: `Frame`s, through the `FrameSource` interface (`sources.py`
for files and OpenCV cameras, `picamera.py` for the Pi camera)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol

import cv2
import numpy as np

from referee.errors import SourceError
from referee.hardware.closing import Closing

Clock = Callable[[], float]


@dataclass(frozen=True, eq=False)
class Frame:
    """One picture: BGR uint8 H x W x 3 (read-only), its number from 0, and its time in
    seconds from the first frame (from the file's frame rate, or the camera's clock)."""

    frame_bgr: np.ndarray
    index: int
    timestamp_s: float


class FrameSource(Protocol):
    description: str

    def __iter__(self) -> Iterator[Frame]: ...

    def close(self) -> None: ...

    def __enter__(self) -> FrameSource: ...

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None: ...


class BaseSource(Closing):
    """Context management and iteration; subclasses yield raw BGR arrays from `_read`."""

    description = "frames"

    def close(self) -> None:
        """Release the file or camera; safe to call twice."""

    def __iter__(self) -> Iterator[Frame]:
        raise NotImplementedError


def make_frame(pixels: np.ndarray, index: int, timestamp_s: float, where: str) -> Frame:
    """Check a decoded picture and freeze it into a `Frame`."""
    if pixels.ndim == 2:
        pixels = cv2.cvtColor(pixels, cv2.COLOR_GRAY2BGR)
    elif pixels.ndim == 3 and pixels.shape[2] == 4:
        pixels = cv2.cvtColor(pixels, cv2.COLOR_BGRA2BGR)
    if pixels.ndim != 3 or pixels.shape[2] != 3 or pixels.dtype != np.uint8:
        raise SourceError(f"{where}: not an 8-bit colour picture (shape {pixels.shape}, "
                          f"{pixels.dtype})")
    pixels.flags.writeable = False
    return Frame(pixels, index, timestamp_s)
