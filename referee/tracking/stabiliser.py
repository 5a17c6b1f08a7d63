"""The stabiliser: decides, frame by frame and cheaply, when the board may be read.

It looks at a small top-down grey image of the board (with a margin around the grid, where
arms come in) cut into cells. While cells change between frames, hands or pieces are moving
and nothing is read. Once the board has been still for `settle_s` seconds (time, not frames:
the camera's frame rate varies) and looks different from the last reading, or anything
moved since it, one reading is asked for. A hand over the board belongs to an arm, and an
arm comes from outside the view: while a still frame differs from the last reading in a
patch of pixels that reaches the view's edge (or the part of it beyond the camera's frame),
a hand is resting in view, and the board is read only if it stays so for
`occlusion_timeout_s`. A piece standing on an edge square may lean into the margin in the
image, but its patch stops short of the view's edge, so it does not hold the game up."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import cv2
import numpy as np


class Stillness(enum.Enum):
    MOVING = "moving"
    SETTLING = "settling"
    OCCLUDED = "occluded"  # still, but an arm reaches into the view
    READ = "read now"
    STEADY = "steady"  # still and already read


@dataclass(frozen=True)
class StabiliserSettings:
    settle_s: float = 0.5
    motion_threshold: float = 6.0  # mean grey-level change of a cell between frames
    change_threshold: float = 9.0  # mean grey-level change of a cell since the last reading
    occlusion_timeout_s: float = 4.0
    # An arm: pixels changed since the last reading by `arm_threshold` grey levels on average
    # over `patch_px` (beyond what a shift of the view by `shift_px`, tracking's jitter,
    # explains), at least `arm_px` of them together, touching the view's edge.
    arm_threshold: float = 6.0
    arm_px: int = 40
    shift_px: int = 2
    patch_px: int = 5
    cells: tuple[int, int] = (0, 0)  # (columns, rows) of cells; 0 = one per square + margin


def cell_means(gray: np.ndarray, columns: int, rows: int) -> np.ndarray:
    """Mean grey level of each cell of a `rows` x `columns` grid over `gray`, normalised by
    the whole image's mean so that a global change of light is not motion."""
    h, w = gray.shape
    trimmed = gray[: h - h % rows, : w - w % columns].astype(np.float32)
    means = trimmed.reshape(rows, trimmed.shape[0] // rows, columns, -1).mean(axis=(1, 3))
    return np.asarray(means * (128.0 / max(float(means.mean()), 1.0)))


def smoothed(gray: np.ndarray) -> np.ndarray:
    """`gray` lightly blurred (sensor noise) and normalised by its median (a change of light;
    the median, since a hand moves the mean)."""
    image = cv2.blur(gray.astype(np.float32), (3, 3))
    return np.asarray(image * (128.0 / max(float(np.median(image)), 1.0)))


def changed_pixels(now: np.ndarray, before: np.ndarray, threshold: float, *, shift_px: int,
                   patch_px: int) -> np.ndarray:
    """Pixels of `now` darker or lighter, on average over `patch_px` around them, by
    `threshold` than every pixel of `before` within `shift_px`: a view shifted by tracking's
    jitter shows its lines as no change."""
    window = np.ones((2 * shift_px + 1, 2 * shift_px + 1), np.uint8)
    darker = cv2.erode(before, window) - now
    lighter = now - cv2.dilate(before, window)
    # Averaged over small patches: a striped sleeve or a hand much like the table changes
    # few pixels strongly but a patch of them on the whole.
    change = cv2.blur(np.maximum(np.maximum(darker, lighter), 0), (patch_px, patch_px))
    return np.asarray(change > threshold)


def reaches_in(changed: np.ndarray, outside: np.ndarray | None, min_px: int,
               shift_px: int) -> bool:
    """Whether a patch of `changed` pixels of at least `min_px` touches the view's edge or the
    part of the view beyond the frame (`outside`): something came in from beyond the view."""
    edge = np.zeros(changed.shape, bool)
    edge[0, :] = edge[-1, :] = edge[:, 0] = edge[:, -1] = True
    if outside is not None and outside.any():
        # The frame's edge moves with the view: a band along it is neither change nor edge.
        band = np.ones((2 * shift_px + 1, 2 * shift_px + 1), np.uint8)
        blank = cv2.dilate(outside.astype(np.uint8), band).astype(bool)
        changed = changed & ~blank
        edge |= cv2.dilate(blank.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(changed.astype(np.uint8),
                                                           connectivity=8)
    touching = np.unique(labels[edge & changed])
    return bool((stats[touching[touching > 0], cv2.CC_STAT_AREA] >= min_px).any())


class Stabiliser:
    def __init__(self, columns: int, rows: int, settings: StabiliserSettings | None = None) -> None:
        self.columns, self.rows = columns, rows
        self.settings = settings or StabiliserSettings()
        self._previous: np.ndarray | None = None
        self._previous_view: np.ndarray | None = None  # `smoothed` of the last frame
        self._reference: np.ndarray | None = None  # the cells at the last reading
        self._reference_view: np.ndarray | None = None  # and its smoothed view
        self._still_since: float | None = None
        self._stirred = False  # something moved since the last reading

    def update(self, board_gray: np.ndarray, time_s: float, *,
               outside: np.ndarray | None = None) -> Stillness:
        """`outside`: the pixels of `board_gray` beyond the camera's frame, if any."""
        cells = cell_means(board_gray, self.columns, self.rows)
        previous, self._previous = self._previous, cells
        self._previous_view = smoothed(board_gray)
        s = self.settings
        if previous is None or np.abs(cells - previous).max() > s.motion_threshold:
            self._still_since = None
            self._stirred = previous is not None
            return Stillness.MOVING
        if self._still_since is None:
            self._still_since = time_s
        still_for = time_s - self._still_since
        if still_for < s.settle_s:
            return Stillness.SETTLING
        if self._reference is None:
            return Stillness.READ
        # A hand came and went: what it did may be too small for the cells (a die turned to
        # another face), so the board is read once more.
        if not self._stirred and not (np.abs(cells - self._reference) > s.change_threshold).any():
            return Stillness.STEADY
        if still_for < s.occlusion_timeout_s and self._arm_in_view(outside):
            return Stillness.OCCLUDED
        return Stillness.READ

    def _arm_in_view(self, outside: np.ndarray | None) -> bool:
        assert self._previous_view is not None and self._reference_view is not None
        s = self.settings
        changed = changed_pixels(self._previous_view, self._reference_view, s.arm_threshold,
                                 shift_px=s.shift_px, patch_px=s.patch_px)
        return reaches_in(changed, outside, s.arm_px, s.shift_px)

    def edge_changes(self) -> np.ndarray:
        """How much the cells along each edge of the view differ from the last reading:
        bottom, top, left, right (an arm reaching in crosses one of them)."""
        if self._previous is None or self._reference is None:
            return np.zeros(4)
        changed = np.abs(self._previous - self._reference)
        return np.array([changed[-1].mean(), changed[0].mean(), changed[:, 0].mean(),
                         changed[:, -1].mean()])

    def mark_read(self, board_gray: np.ndarray | None = None) -> None:
        """The caller has read the board as it is now: later frames are compared with it
        (or with `board_gray`, the same moment seen in another naming of the corners)."""
        if board_gray is not None:
            self._previous = cell_means(board_gray, self.columns, self.rows)
            self._previous_view = smoothed(board_gray)
        self._reference = self._previous
        self._reference_view = self._previous_view
        self._stirred = False

    def forget_reading(self) -> None:
        """Read again at the next steady moment (after a re-found board, say)."""
        self._reference = None
        self._reference_view = None
