"""How much each square changed between two frames of a still board.

A square whose middle looks as it did when the board last showed the position still holds
what it held then: a different signal from the classifier's, which reads each square afresh
and can hesitate where a neighbour's new piece shows at the edge of its crop."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from referee.vision.pose import BoardPose
from referee.vision.warp import warp_board

PX_PER_SQUARE = 24
MIDDLE = 0.6  # the share of a square's side looked at: its edges show the neighbours' pieces
LIGHT_MATCH = 1.25  # the two views' light is matched by at most this ratio either way


def square_changes(now_bgr: NDArray[np.uint8], before_bgr: NDArray[np.uint8],
                   pose: BoardPose) -> NDArray[np.float64]:
    """Per square (rules order), the mean of the largest channel difference over its
    middle, in grey levels, between two frames of the board at `pose`, their light matched
    by the ratio of their medians."""
    now = warp_board(now_bgr, pose, PX_PER_SQUARE).astype(np.float32)
    before = warp_board(before_bgr, pose, PX_PER_SQUARE).astype(np.float32)
    ratio = float(np.median(now) + 1) / float(np.median(before) + 1)
    before *= np.float32(np.clip(ratio, 1 / LIGHT_MATCH, LIGHT_MATCH))
    difference = np.abs(now - before).max(axis=2)
    edge = round(PX_PER_SQUARE * (1 - MIDDLE) / 2)
    cells = difference.reshape(pose.ranks, PX_PER_SQUARE, pose.files, PX_PER_SQUARE)
    middles = cells[:, edge:PX_PER_SQUARE - edge, :, edge:PX_PER_SQUARE - edge].mean(axis=(1, 3))
    return np.asarray(middles[::-1].ravel(), dtype=np.float64)  # the view has rank 1 at the bottom
