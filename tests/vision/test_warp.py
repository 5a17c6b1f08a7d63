"""Top-down warp and per-square crops: geometry checked against drawn marks."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.vision.pose import BoardPose
from referee.vision.warp import (
    camera_over_board,
    square_crops,
    square_maps,
    square_quads,
    view_outside_frame,
    warp_board,
)
from tests.vision.scenes import make_camera

FILES, RANKS = 5, 6


def board_frame(mark: tuple[int, int], *, tilt: float = 30.0, seed: int = 3) -> tuple[np.ndarray, BoardPose]:
    """A plain board with a red disc in one square (file, rank), seen by a tilted camera."""
    px = 60
    tex = np.full((RANKS * px, FILES * px, 3), 220, np.uint8)
    for i in range(FILES + 1):
        cv2.line(tex, (i * px, 0), (i * px, RANKS * px), (40, 40, 40), 2)
    for j in range(RANKS + 1):
        cv2.line(tex, (0, j * px), (FILES * px, j * px), (40, 40, 40), 2)
    f, r = mark
    cv2.circle(tex, (int((f + 0.5) * px), int((RANKS - r - 0.5) * px)), px // 4, (0, 0, 255), -1)
    cam = make_camera(FILES, RANKS, 0.3, tilt_deg=tilt, rotation_deg=25.0, size=(1280, 720), fill=0.7,
                      rng=np.random.default_rng(seed))
    tex_to_board = np.array([[1 / px, 0, 0], [0, -1 / px, RANKS], [0, 0, 1.0]])
    frame = cv2.warpPerspective(tex, cam.homography @ tex_to_board, (1280, 720), borderValue=(60, 90, 60))
    return frame, BoardPose.from_homography(cam.homography, FILES, RANKS)


def redness(img: np.ndarray) -> float:
    b, g, r = (img[..., c].astype(float) for c in range(3))
    return float(np.mean((r > 150) & (g < 80) & (b < 80)))


def test_crop_of_c3_shows_the_mark_drawn_in_c3() -> None:
    frame, pose = board_frame((2, 2))
    crops = square_crops(frame, pose, FILES, RANKS, size=(48, 64))
    assert crops.shape == (FILES * RANKS, 64, 48, 3) and crops.dtype == np.uint8
    c3 = 2 * FILES + 2  # rules order: rank * files + file
    scores = [redness(c) for c in crops]
    assert int(np.argmax(scores)) == c3
    assert scores[c3] > 0.08
    assert sum(s > 0.01 for s in scores) <= 2  # at most a neighbour sees a sliver


def test_top_down_view_puts_a1_bottom_left() -> None:
    frame, pose = board_frame((0, 0))
    px = 40
    top = warp_board(frame, pose, px)
    assert top.shape == (RANKS * px, FILES * px, 3)
    a1 = top[(RANKS - 1) * px:, :px]
    assert redness(a1) > 0.1
    assert redness(top[: (RANKS - 1) * px]) < 0.001


def test_far_squares_get_taller_regions_that_lean_away_from_the_camera() -> None:
    _, pose = board_frame((0, 0), tilt=35.0)
    cam = camera_over_board(pose, (1280, 720))
    quads = square_quads(pose, (1280, 720))
    board = np.stack([pose.to_board(q) for q in quads])  # (S, 4, 2) board units
    length = np.linalg.norm(board[:, 0] - board[:, 3], axis=1)  # top-left to bottom-left
    rank, file = np.divmod(np.arange(FILES * RANKS), FILES)
    dist = np.hypot(file + 0.5 - cam.foot[0], rank + 0.5 - cam.foot[1])
    assert np.corrcoef(dist, length)[0, 1] > 0.95
    # the crop's top edge is further from the camera's foot than its bottom edge
    top_mid = board[:, :2].mean(axis=1)
    bottom_mid = board[:, 2:].mean(axis=1)
    foot = np.array(cam.foot)
    assert np.all(np.linalg.norm(top_mid - foot, axis=1) > np.linalg.norm(bottom_mid - foot, axis=1))


def test_camera_over_board_matches_the_drawing_camera() -> None:
    from tests.vision.scenes import make_scene

    s = make_scene(np.random.default_rng(5), 5, 6, tilt_deg=30.0, rotation_deg=10.0, hand=False)
    pose = BoardPose.from_homography(s.homography, 5, 6)
    est = camera_over_board(pose, (1280, 720))
    centre = -s.camera.r.T @ s.camera.t
    assert est.focal == pytest.approx(s.camera.k[0, 0], rel=0.05)
    assert est.height == pytest.approx(centre[2], rel=0.05)
    assert np.hypot(est.foot[0] - centre[0], est.foot[1] - centre[1]) < 0.05 * centre[2]


def test_crops_come_from_one_remap_grid_and_check_the_board_size() -> None:
    frame, pose = board_frame((1, 1))
    map_x, map_y = square_maps(pose, (1280, 720), size=(32, 40))
    assert map_x.shape == map_y.shape == (FILES * RANKS * 40, 32)
    with pytest.raises(ValueError):
        square_crops(frame, pose, RANKS, FILES)


def test_the_focal_length_is_taken_from_the_pose_only_where_the_view_tells_it() -> None:
    """Tilted 30 degrees the pose gives the focal length; seen from straight above a pixel's
    error swings it between half and twice the truth, so the default stands instead."""
    from tests.vision.scenes import make_scene

    for tilt, told in ((30.0, True), (2.0, False)):
        s = make_scene(np.random.default_rng(5), 5, 6, tilt_deg=tilt, rotation_deg=10.0, hand=False)
        pose = BoardPose.from_homography(s.homography, 5, 6)
        focal = camera_over_board(pose, (1280, 720), default_focal=0.9).focal
        if told:
            assert focal == pytest.approx(s.camera.k[0, 0], rel=0.05)
        else:
            assert focal == pytest.approx(0.9 * 1280)


def test_the_view_knows_which_of_its_pixels_lie_beyond_the_frame() -> None:
    frame, pose = board_frame((0, 0))
    half = np.ascontiguousarray(frame[:, :640])  # a camera that sees only the left half
    top = warp_board(half, pose, 12, margin=1)
    outside = view_outside_frame(pose, 12, (640, 720), margin=1)
    assert outside.shape == top.shape[:2] and 0 < outside.mean() < 1
    kernel = np.ones((3, 3), np.uint8)
    well_outside = cv2.erode(outside.astype(np.uint8), kernel).astype(bool)
    well_inside = cv2.erode((~outside).astype(np.uint8), kernel).astype(bool)
    assert (top[well_outside] == 0).all() and (top[well_inside].max(axis=1) > 0).all()
    assert not view_outside_frame(pose, 12, (1280, 720), margin=1).any()
