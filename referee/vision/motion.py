"""How far the image round the board moved since the frame a pose was taken on.

Tracking refits the grid to its lines every frame, and the fit has fixed points of its own:
on a checker without printed lines beside a thick border line it walks a sixth of a square
out onto the border in three frames and then wobbles there by several pixels a frame,
though the camera has not moved (FlipFlop 3x3 game 760000, `benchmarks/replay.md`).
The board moves only as far as the image does, and that is measured
directly: the phase correlation of the board's neighbourhood against the frame the pose
was taken on (one FFT of a small grey patch)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.pose import BoardPose, board_box

PATCH_WIDTH = 192  # pixels across the patch compared: a shift is read to a fraction of one


@dataclass(frozen=True)
class Anchor:
    """A pose and the patch of its frame round the board it was taken on."""

    pose: BoardPose
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 in the frame
    scale: float  # patch pixels a frame pixel
    patch: NDArray[np.float32]
    window: NDArray[np.float32]


@dataclass(frozen=True)
class Shift:
    dx: float  # frame pixels
    dy: float
    response: float  # the correlation peak's share: near 1 for the same view moved, low for a changed one

    @property
    def length(self) -> float:
        return float(np.hypot(self.dx, self.dy))


def anchor(frame_bgr: NDArray[np.uint8], pose: BoardPose, margin: float = 0.5) -> Anchor | None:
    """The patch round `pose` (its grid and `margin` squares beyond) to measure later frames'
    moves against; None where too little of it is in the frame."""
    h, w = frame_bgr.shape[:2]
    box = board_box(pose, margin)
    if box is None:
        return None
    x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(w, box[2]), min(h, box[3])
    if x1 - x0 < 32 or y1 - y0 < 32:
        return None
    scale = min(1.0, PATCH_WIDTH / (x1 - x0))
    box = (x0, y0, x1, y1)
    patch = _patch(frame_bgr, box, scale)
    window = np.asarray(cv2.createHanningWindow((patch.shape[1], patch.shape[0]), cv2.CV_32F), np.float32)
    return Anchor(pose, box, scale, patch, window)


def shift_since(a: Anchor, frame_bgr: NDArray[np.uint8]) -> Shift:
    """How far the image in the anchor's box moved since its frame."""
    # (phaseCorrelate windows its first image in place: the anchor's patch is kept as taken)
    (dx, dy), response = cv2.phaseCorrelate(a.patch.copy(), _patch(frame_bgr, a.box, a.scale), a.window)
    return Shift(dx / a.scale, dy / a.scale, float(response))


def moved_by(pose: BoardPose, shift: Shift) -> BoardPose:
    """`pose` slid in the image by `shift`."""
    slide = np.array([[1.0, 0.0, shift.dx], [0.0, 1.0, shift.dy], [0.0, 0.0, 1.0]])
    return BoardPose.from_homography(slide @ pose.h, pose.files, pose.ranks)


def _patch(frame_bgr: NDArray[np.uint8], box: tuple[int, int, int, int], scale: float) -> NDArray[np.float32]:
    x0, y0, x1, y1 = box
    region = frame_bgr[y0:y1, x0:x1]
    grey = cv2.cvtColor(region, cv2.COLOR_BGR2GRAY) if region.ndim == 3 else region
    size = (max(8, round((x1 - x0) * scale)), max(8, round((y1 - y0) * scale)))
    return cv2.resize(grey, size, interpolation=cv2.INTER_AREA).astype(np.float32)
