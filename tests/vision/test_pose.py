"""`pose.camera_homography`: the board's grid as a pinhole camera sees it, fitted to points."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.vision.pose import apply_homography, board_corners, board_lattice, camera_homography

SIZE = (1280, 720)


def _camera_grid(focal: float, tilt_deg: float, turn_deg: float) -> np.ndarray:
    """The homography (board squares to pixels) of a 3x3 board seen by a camera with its
    principal point at the frame's centre, tilted and turned about the board's middle."""
    camera = np.array([[focal, 0, (SIZE[0] - 1) / 2], [0, focal, (SIZE[1] - 1) / 2], [0, 0, 1.0]])
    tilt = cv2.Rodrigues(np.radians([tilt_deg, 0.0, 0.0]))[0]
    rotation = tilt @ cv2.Rodrigues(np.radians([0.0, 0.0, turn_deg]))[0]
    shift = np.array([0.0, 0.0, 9.0]) - rotation @ np.array([1.5, 1.5, 0.0])
    h = camera @ np.column_stack([rotation[:, 0], rotation[:, 1], shift])
    return np.asarray(h / h[2, 2], np.float64)


@pytest.mark.parametrize("focal, tilt, turn", [(0.77 * SIZE[0], 35.0, 20.0), (1.2 * SIZE[0], 25.0, -50.0),
                                               (0.45 * SIZE[0], 10.0, 5.0)])
def test_the_camera_grid_through_exact_points_is_the_camera_s(focal: float, tilt: float, turn: float) -> None:
    truth = _camera_grid(focal, tilt, turn)
    points = board_lattice(3, 3)
    fitted = camera_homography(points, apply_homography(truth, points), SIZE)
    assert fitted is not None
    corners = board_corners(3, 3)
    # the focal length is scanned in steps of 4%, the pose then fits the points themselves
    assert np.abs(apply_homography(fitted, corners) - apply_homography(truth, corners)).max() < 1.0


def test_points_along_two_sides_place_the_far_corner_better_than_a_homography_through_them() -> None:
    truth = _camera_grid(0.8 * SIZE[0], 35.0, 30.0)
    near = board_lattice(3, 3)[[0, 1, 2, 3, 4, 8, 12]]  # rank 1 and the a-file: a hand over the rest
    far = board_corners(3, 3)
    rng = np.random.default_rng(7)
    free_off, camera_off = [], []
    for _ in range(40):  # marks a pixel off, at random
        seen = apply_homography(truth, near) + rng.normal(0.0, 1.0, (len(near), 2))
        free, _ = cv2.findHomography(near, seen, 0)
        camera = camera_homography(near, seen, SIZE)
        assert camera is not None
        for fitted, offs in ((free, free_off), (camera, camera_off)):
            off = apply_homography(fitted, far) - apply_homography(truth, far)
            offs.append(np.linalg.norm(off, axis=1).max())
    assert np.mean(camera_off) < 0.75 * np.mean(free_off)


def test_a_known_camera_is_used_as_it_is() -> None:
    # a calibrated lens whose principal point lies 4% off the frame's centre
    camera = np.array([[0.9 * SIZE[0], 0, 0.54 * SIZE[0]], [0, 0.9 * SIZE[0], 0.46 * SIZE[1]], [0, 0, 1.0]])
    tilt = cv2.Rodrigues(np.radians([30.0, 0.0, 0.0]))[0]
    shift = np.array([0.0, 0.0, 9.0]) - tilt @ np.array([1.5, 1.5, 0.0])
    truth = camera @ np.column_stack([tilt[:, 0], tilt[:, 1], shift])
    points = board_lattice(3, 3)[:8]
    seen = apply_homography(truth, points)
    corners = board_corners(3, 3)
    known = camera_homography(points, seen, SIZE, camera_matrix=camera)
    assert known is not None
    assert np.abs(apply_homography(known, corners) - apply_homography(truth, corners)).max() < 1e-3


def test_fewer_than_four_points_fit_no_camera_grid() -> None:
    points = board_lattice(3, 3)[:3]
    assert camera_homography(points, points * 50.0, SIZE) is None
