"""The stabiliser: decides, frame by frame and cheaply, when the board may be read.

It looks at a small top-down grey image of the board (with a margin around the grid, where
arms come in) cut into cells. While cells change between frames, hands or pieces are moving
and nothing is read. Once the board has been still for `settle_s` seconds (time, not frames:
the camera's frame rate varies) and looks different from the last reading, or anything
moved since it, one reading is asked for. A hand over the board belongs to an arm, and an
arm crosses the ring of cells around the grid: while a still frame differs from the last
reading in that ring, a hand is resting in view, and the board is read only if it stays so
for `occlusion_timeout_s` (so a piece put down beside the board does not hold the game up
for long)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np


class Stillness(enum.Enum):
    MOVING = "moving"
    SETTLING = "settling"
    OCCLUDED = "occluded"  # still, but too much differs from the last reading
    READ = "read now"
    STEADY = "steady"  # still and already read


@dataclass(frozen=True)
class StabiliserSettings:
    settle_s: float = 0.5
    motion_threshold: float = 6.0  # mean grey-level change of a cell between frames
    change_threshold: float = 9.0  # mean grey-level change of a cell since the last reading
    occlusion_timeout_s: float = 4.0
    cells: tuple[int, int] = (0, 0)  # (columns, rows) of cells; 0 = one per square + margin


def cell_means(gray: np.ndarray, columns: int, rows: int) -> np.ndarray:
    """Mean grey level of each cell of a `rows` x `columns` grid over `gray`, normalised by
    the whole image's mean so that a global change of light is not motion."""
    h, w = gray.shape
    trimmed = gray[: h - h % rows, : w - w % columns].astype(np.float32)
    means = trimmed.reshape(rows, trimmed.shape[0] // rows, columns, -1).mean(axis=(1, 3))
    return np.asarray(means * (128.0 / max(float(means.mean()), 1.0)))


class Stabiliser:
    def __init__(self, columns: int, rows: int, settings: StabiliserSettings | None = None) -> None:
        self.columns, self.rows = columns, rows
        self.settings = settings or StabiliserSettings()
        self._previous: np.ndarray | None = None
        self._reference: np.ndarray | None = None  # the cells at the last reading
        self._still_since: float | None = None
        self._stirred = False  # something moved since the last reading

    def update(self, board_gray: np.ndarray, time_s: float) -> Stillness:
        cells = cell_means(board_gray, self.columns, self.rows)
        previous, self._previous = self._previous, cells
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
        changed = np.abs(cells - self._reference) > s.change_threshold
        if not changed.any():
            # A hand came and went: what it did may be too small for the cells (a die
            # turned to another face), so the board is read once more.
            return Stillness.READ if self._stirred else Stillness.STEADY
        ring = np.concatenate([changed[0], changed[-1], changed[1:-1, 0], changed[1:-1, -1]])
        if ring.any() and still_for < s.occlusion_timeout_s:
            return Stillness.OCCLUDED
        return Stillness.READ

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
        self._reference = self._previous
        self._stirred = False

    def forget_reading(self) -> None:
        """Read again at the next steady moment (after a re-found board, say)."""
        self._reference = None
