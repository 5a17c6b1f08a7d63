"""Where the board lies in a frame: a homography from board units to image pixels.

Board units: one square = 1.0, origin at a1's outer corner, x along rank 1 (the files), y
along the a-file (the ranks). Seen from above, a1 at the bottom left, x points right and y
up, so a real view never mirrors: the image Jacobian has a negative determinant (image y
points down)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def apply_homography(h: FloatArray, points: FloatArray) -> FloatArray:
    """Map (N, 2) points through a 3x3 homography."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    mapped = pts @ h[:, :2].T + h[:, 2]
    return mapped[:, :2] / mapped[:, 2:3]


def _rotation(k: int, files: int, ranks: int) -> FloatArray:
    """Board-to-board map taking coordinates with a1 moved k quarter turns to the old ones."""
    k %= 4
    if k == 0:
        return np.eye(3)
    if k == 2:
        return np.array([[-1.0, 0.0, files], [0.0, -1.0, ranks], [0.0, 0.0, 1.0]])
    if k == 1:  # new a1 = old (files, 0); only square boards (files == ranks)
        return np.array([[0.0, -1.0, files], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    return np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, ranks], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class BoardPose:
    """A board of `files` x `ranks` squares in one frame.

    `homography` maps board units to image pixels (row-major 3x3, normalised so h[2][2] = 1);
    `corners` are the grid's four outer corners in image pixels: a1's, then along rank 1, then
    the far corner, then along the a-file: board (0,0), (files,0), (files,ranks), (0,ranks)."""

    files: int
    ranks: int
    homography: tuple[float, ...]
    corners: tuple[tuple[float, float], ...]

    @classmethod
    def from_homography(cls, h: FloatArray, files: int, ranks: int) -> BoardPose:
        h = np.asarray(h, dtype=np.float64)
        h = np.asarray(h / h[2, 2], dtype=np.float64)
        corners = apply_homography(h, board_corners(files, ranks))
        return cls(files, ranks, tuple(float(v) for v in h.ravel()),
                   tuple((float(x), float(y)) for x, y in corners))

    @property
    def h(self) -> FloatArray:
        return np.array(self.homography, dtype=np.float64).reshape(3, 3)

    @property
    def corners_array(self) -> FloatArray:
        return np.array(self.corners, dtype=np.float64)

    def to_image(self, board_points: FloatArray) -> FloatArray:
        return apply_homography(self.h, board_points)

    def to_board(self, image_points: FloatArray) -> FloatArray:
        return apply_homography(np.asarray(np.linalg.inv(self.h), dtype=np.float64), image_points)

    @property
    def diagonal(self) -> float:
        """The longer of the grid's two diagonals in the image (pixels)."""
        c = self.corners_array
        return float(max(np.linalg.norm(c[2] - c[0]), np.linalg.norm(c[3] - c[1])))

    def square_size_px(self) -> float:
        """Mean side of a square in the image (pixels)."""
        c = self.corners_array
        sides = np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)
        return float((sides[0] + sides[2]) / (2 * self.files) + (sides[1] + sides[3]) / (2 * self.ranks)) / 2

    def scaled(self, factor: float) -> BoardPose:
        """The same pose in an image resized by `factor`."""
        s = np.diag([factor, factor, 1.0])
        return BoardPose.from_homography(s @ self.h, self.files, self.ranks)

    def rotated(self, k: int) -> BoardPose:
        """The same board with a1 moved k quarter turns (counter-clockwise seen from above) to
        another corner. Boards that are not square allow only half turns (k even)."""
        if k % 2 and self.files != self.ranks:
            raise ValueError(f"a {self.files}x{self.ranks} board turns only by half turns")
        return BoardPose.from_homography(self.h @ _rotation(k, self.files, self.ranks),
                                         self.files, self.ranks)

    def squares_named_by(self, other: BoardPose) -> NDArray[np.intp]:
        """For each square as `other` names it (the same board with its corners named from
        another side, `rotated`), its index as this pose names it; rules order, rank by rank
        from a1."""
        rank, file = np.divmod(np.arange(other.files * other.ranks), other.files)
        centres = np.stack([file, rank], axis=1) + 0.5
        here = np.floor(apply_homography(np.linalg.inv(self.h) @ other.h, centres)).astype(np.intp)
        return np.asarray(here[:, 1] * self.files + here[:, 0], dtype=np.intp)

    def orientations(self) -> tuple[BoardPose, ...]:
        """Every way of naming the corners: 4 for a square board, 2 otherwise."""
        step = 1 if self.files == self.ranks else 2
        return tuple(self.rotated(k) for k in range(0, 4, step))

    def with_a1_near(self, point: tuple[float, float]) -> BoardPose:
        """The orientation whose a1 corner is nearest a given image point (a set-up that
        names White's side instead of reading it from the start position)."""
        target = np.array(point, dtype=np.float64)
        return min(self.orientations(), key=lambda p: float(np.linalg.norm(p.corners_array[0] - target)))


def board_corners(files: int, ranks: int) -> FloatArray:
    return np.array([[0.0, 0.0], [files, 0.0], [files, ranks], [0.0, ranks]])


def board_lattice(files: int, ranks: int) -> FloatArray:
    """Every intersection of the board's lines in board squares, rank-major from (0, 0)
    (index r * (files + 1) + f, as `FrameTruth.grid` holds them)."""
    return np.array([[f, r] for r in range(ranks + 1) for f in range(files + 1)], np.float64)


def grid_through(quad: NDArray[np.floating], files: int, ranks: int) -> FloatArray:
    """The homography (board squares to image pixels) that puts the board's corners (0, 0),
    (files, 0), (files, ranks), (0, ranks) at `quad`'s four points in turn."""
    corners = board_corners(files, ranks).astype(np.float32)
    h = cv2.getPerspectiveTransform(corners, np.asarray(quad, np.float32))
    return np.asarray(h, np.float64)


def board_box(pose: BoardPose, margin: float) -> tuple[int, int, int, int] | None:
    """The image box (x0, y0, x1, y1) of the board and `margin` squares around it; None
    where that reaches behind the camera."""
    corners = board_corners(pose.files, pose.ranks) + margin * np.array(
        [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    mapped = np.column_stack([corners, np.ones(4)]) @ pose.h.T
    if np.any(mapped[:, 2] <= 1e-9):
        return None
    xy = mapped[:, :2] / mapped[:, 2:3]
    x0, y0 = np.floor(xy.min(axis=0)).astype(int)
    x1, y1 = np.ceil(xy.max(axis=0)).astype(int) + 1
    return int(x0), int(y0), int(x1), int(y1)


def corner_error(found: BoardPose, truth_corners: FloatArray, *, any_orientation: bool = True) -> float:
    """Largest corner distance (pixels) between a pose and true corners (canonical order),
    taken over the pose's orientations when `any_orientation` (which side is White's is
    settled later, from the start position)."""
    truth = np.asarray(truth_corners, dtype=np.float64)
    poses = found.orientations() if any_orientation else (found,)
    return min(float(np.max(np.linalg.norm(p.corners_array - truth, axis=1))) for p in poses)


def camera_homography(board_points: FloatArray, image_points: FloatArray, image_size: tuple[int, int], *,
                      camera_matrix: FloatArray | None = None, focal_range: tuple[float, float] = (0.4, 2.0),
                      focal_steps: int = 40) -> FloatArray | None:
    """The homography (board squares to image pixels) of the flat board as a pinhole camera
    sees it, fitted to points of it seen at `image_points`: the camera `camera_matrix` where
    it is known (a calibrated lens, the frame undistorted), else one with square pixels, its
    principal point at the image centre, and of `focal_steps` focal lengths spaced evenly in
    ratio over `focal_range` x the image width the one whose pose (`cv2.solvePnP`) puts the
    points nearest. It has a freedom or two less than a homography through the same points
    (the board's squares stay square), which holds a grid fitted to the points on one side
    of a board, where a hand hides the rest, from tilting away at the far side. None where
    fewer than four points are given or no pose is found."""
    if len(board_points) < 4:
        return None
    board = np.column_stack([board_points, np.zeros(len(board_points))]).astype(np.float64)
    image = np.asarray(image_points, np.float64).reshape(-1, 2)
    best: tuple[float, FloatArray] | None = None
    for camera in _cameras(image_size, camera_matrix, focal_range, focal_steps):
        found, rotation, shift = cv2.solvePnP(board, image, camera, None, flags=cv2.SOLVEPNP_IPPE)
        if not found:
            continue
        rotation, shift = cv2.solvePnPRefineLM(board, image, camera, None, rotation, shift)
        projected, _ = cv2.projectPoints(board, rotation, shift, camera, None)
        residual = float(np.mean(np.sum((projected.reshape(-1, 2) - image) ** 2, axis=1)))
        if best is None or residual < best[0]:
            turn = cv2.Rodrigues(rotation)[0]
            best = (residual, camera @ np.column_stack([turn[:, 0], turn[:, 1], shift.ravel()]))
    return None if best is None else np.asarray(best[1] / best[1][2, 2], np.float64)


def _cameras(image_size: tuple[int, int], camera_matrix: FloatArray | None, focal_range: tuple[float, float],
             focal_steps: int) -> list[FloatArray]:
    """The camera matrices `camera_homography` tries: the one known, or the focal lengths scanned."""
    if camera_matrix is not None:
        return [np.asarray(camera_matrix, np.float64)]
    width, height = image_size
    return [np.array([[focal, 0.0, (width - 1) / 2], [0.0, focal, (height - 1) / 2], [0.0, 0.0, 1.0]])
            for focal in np.geomspace(focal_range[0] * width, focal_range[1] * width, focal_steps)]
