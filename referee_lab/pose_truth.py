"""How far a pose the referee found lies from a render's truth: its corners (as a share of the
grid's diagonal) and its squares' crops (in squares, where the true camera shows each square's
top at a die's height), through a lens where the frame was undistorted first."""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from referee.app.calibrated import FrameLens
from referee.errors import NoBoardError
from referee.vision.board_finder import find_board
from referee.vision.pose import BoardPose
from referee.vision.warp import top_face_quads
from referee_lab.renders import DIE_HEIGHT
from referee_lab.synth.truth import FrameTruth


def errors(frame: np.ndarray, truth: FrameTruth, lens: FrameLens | None
           ) -> tuple[float, float] | None:
    """(corner error / diagonal, median crop error in squares), or None: no board found."""
    seen = frame if lens is None else lens.undistort(frame, None)
    try:
        pose = find_board(seen, truth.files, truth.ranks)
    except NoBoardError:
        return None
    size = (frame.shape[1], frame.shape[0])
    matrix = None if lens is None else lens.camera_matrix
    to_raw: Callable[[np.ndarray], np.ndarray] = (lambda p: p) if lens is None else lens.to_raw
    corners = np.array(truth.corners, np.float64)
    diagonal = float(np.linalg.norm(corners[2] - corners[0]))
    side = diagonal / np.hypot(truth.files, truth.ranks)
    best: tuple[float, float] | None = None
    for turned in pose.orientations():  # which side is White's is settled later
        found = to_raw(turned.corners_array)
        corner = float(np.linalg.norm(found - corners, axis=1).max()) / diagonal
        crop = crop_error(turned, size, matrix, to_raw, truth) / side
        if best is None or corner < best[0]:
            best = (corner, crop)
    return best


def crop_error(pose: BoardPose, size: tuple[int, int], matrix: np.ndarray | None,
               to_raw: Callable[[np.ndarray], np.ndarray], truth: FrameTruth) -> float:
    """Mean distance (pixels) of the squares' crop corners from where the true camera shows
    those corners at a die's height (the same sides of the crops: rules order, a1 first)."""
    quads = top_face_quads(pose, size, height=DIE_HEIGHT, camera_matrix=matrix)
    found = to_raw(quads.reshape(-1, 2))
    return float(np.linalg.norm(found - true_tops(truth), axis=1).mean())


def true_tops(truth: FrameTruth) -> np.ndarray:
    """Each square's outline DIE_HEIGHT squares above the board, as the rendering camera
    (with its lens) shows it: world millimetres, a1's corner at the origin."""
    s, files, ranks = truth.square_mm, truth.files, truth.ranks
    rank, file = np.divmod(np.arange(files * ranks), files)
    offsets = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float64)  # as top_face_quads
    corners = (np.stack([file, rank], axis=1)[:, None, :] + offsets[None]).reshape(-1, 2)
    world = np.column_stack([corners * s, np.full(len(corners), DIE_HEIGHT * s)])
    cam = truth.camera
    image, _ = cv2.projectPoints(world, np.array(cam.rvec), np.array(cam.tvec),
                                 np.array(cam.K), np.array(cam.dist))
    return np.asarray(image, np.float64).reshape(-1, 2)
