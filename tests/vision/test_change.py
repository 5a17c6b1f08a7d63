"""Which squares of a still board changed between two frames (`vision.change`)."""

from __future__ import annotations

import cv2
import numpy as np

from referee.vision.change import square_changes
from referee.vision.pose import BoardPose


def test_only_the_square_whose_middle_changed_shows_a_change_whatever_the_light() -> None:
    rng = np.random.default_rng(3)
    before = cv2.GaussianBlur(rng.integers(40, 200, (480, 640, 3), dtype=np.uint8), (0, 0), 2)
    h = np.array([[40.0, 4.0, 150.0], [-3.0, -38.0, 420.0], [1e-5, 2e-5, 1.0]])
    pose = BoardPose.from_homography(h, 7, 7)
    now = np.clip(before.astype(np.float32) * 1.15, 0, 255).astype(np.uint8)  # brighter light
    c2 = pose.to_image(np.array([[2.5, 1.5]]))[0]  # the middle of c2 (file 2, rank 1)
    cv2.circle(now, (round(c2[0]), round(c2[1])), 10, (250, 250, 250), -1)
    neighbour = pose.to_image(np.array([[3.02, 1.5]]))[0]  # a new piece's edge on d2's edge
    cv2.circle(now, (round(neighbour[0]), round(neighbour[1])), 3, (0, 0, 0), -1)
    changes = square_changes(now, before, pose)
    assert changes.shape == (49,)
    assert int(np.argmax(changes)) == 1 * 7 + 2 and changes[9] > 60
    assert np.delete(changes, 9).max() < 8, "d2's edge lies outside its middle"
