"""A lens estimated from a board's own lines, where no camera file gives one: the division
model that straightens the found grid's lines (`lens_bend`) written as the camera model a
camera file holds (`CameraCalibration`: k1, k2, k3 about the frame's centre), so the frame is
undistorted with OpenCV's maps and the board found again where its lines are straight.

The focal length is a guess (`FOCAL_WIDTHS` of the frame's width): one board's lines tell
how far the lens bends them, not the focal length, and the distortion coefficients are fitted
for that guess, so the frame undistorts the same whichever focal length is guessed."""

from __future__ import annotations

import cv2
import numpy as np

from referee.calibration.files import CameraCalibration
from referee.calibration.undistort import Undistorter
from referee.vision.lens_bend import Bend, about_centre, in_pixels, straightest_k
from referee.vision.pose import FloatArray

FOCAL_WIDTHS = 0.8     # the focal length guessed, in frame widths (Pi Camera Module 3: 0.73)
REACH = 1.05           # the radii fitted, in half diagonals (a little past the frame's corners)
SOURCE = "estimated from the board's lines (no camera file)"


def lens_for(k: float, width: int, height: int) -> CameraCalibration:
    """The camera whose radial distortion (k1, k2, k3; no tangential) matches the division
    model k (x_u = c + (x - c) / (1 + k r^2), r in half diagonals) over the frame, about its
    centre."""
    half_diagonal = float(np.hypot(width, height) / 2)
    focal = FOCAL_WIDTHS * width
    r_seen = np.linspace(0.02, REACH, 64)
    r_flat = r_seen / (1 + k * r_seen**2)
    flat = r_flat * half_diagonal / focal   # OpenCV's normalised radius
    # OpenCV: r_seen / r_flat = 1 + k1 r^2 + k2 r^4 + k3 r^6 (r normalised, undistorted)
    powers = np.stack([flat**2, flat**4, flat**6], axis=1)
    k1, k2, k3 = np.linalg.lstsq(powers, r_seen / r_flat - 1, rcond=None)[0]
    cx, cy = (width - 1) / 2, (height - 1) / 2
    return CameraCalibration((width, height), ((focal, 0.0, cx), (0.0, focal, cy), (0.0, 0.0, 1.0)),
                             (float(k1), float(k2), 0.0, 0.0, float(k3)), None, SOURCE)


def around_board(lens: CameraCalibration, corners: FloatArray, margin: float) -> Undistorter:
    """Maps undistorting the frame through `lens` into a view that holds the board (its
    `corners` as the frame shows them) and `margin` of its size round it, at no more than the
    frame's own scale at its centre: the whole frame kept (alpha 1) shrinks a board near the
    centre of a strong lens's frame to half its size."""
    size = lens.image_size
    flat = to_pinhole(corners, lens) - lens.K[:2, 2]
    lo, hi = flat.min(axis=0), flat.max(axis=0)
    span = (hi - lo) * (1 + 2 * margin)
    zoom = min(1.0, (size[0] - 1) / span[0], (size[1] - 1) / span[1])
    focal = lens.K[0, 0] * zoom
    centre = np.array([(size[0] - 1) / 2, (size[1] - 1) / 2]) - zoom * (lo + hi) / 2
    new = np.array([[focal, 0.0, centre[0]], [0.0, focal, centre[1]], [0.0, 0.0, 1.0]])
    map1, map2 = cv2.initUndistortRectifyMap(lens.K, lens.dist, None, new, size, cv2.CV_16SC2)
    return Undistorter(size, new, map1, map2, (0, 0, *size))


def refitted(lens: CameraCalibration, flat: Undistorter, straight: Bend) -> CameraCalibration:
    """The lens fitted again to the board's lines read in the view `flat` undistorted through
    `lens` (`straight`), put back where the frame shows them: read along the grid found
    where they are nearly straight, they are read more fully and truly than along the first
    grid, a row off a strongly bent board's."""
    width, height = lens.image_size
    lines = [flat.distort_points(line, lens) for line in in_pixels(straight.lines, width, height)]
    return lens_for(straightest_k(about_centre(lines, width, height)), width, height)


def to_pinhole(points: FloatArray, lens: CameraCalibration) -> FloatArray:
    """Points where the frame shows them -> where a pinhole camera of the lens's matrix would."""
    pts = np.asarray(points, np.float64).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-10)  # a strong lens needs > 5
    iterate = getattr(cv2, "undistortPointsIter", None)  # OpenCV 4; 5 takes the criteria in undistortPoints
    if iterate is not None:
        return np.asarray(iterate(pts, lens.K, lens.dist, None, lens.K, criteria), np.float64).reshape(-1, 2)
    return np.asarray(cv2.undistortPoints(pts, lens.K, lens.dist, None, None, lens.K, criteria),
                      np.float64).reshape(-1, 2)


def from_pinhole(points: FloatArray, lens: CameraCalibration) -> FloatArray:
    """`to_pinhole` undone: where the frame shows the points."""
    rays = cv2.undistortPoints(np.asarray(points, np.float64).reshape(-1, 1, 2), lens.K, None).reshape(-1, 2)
    shown, _ = cv2.projectPoints(np.column_stack([rays, np.ones(len(rays))]), np.zeros(3), np.zeros(3),
                                 lens.K, lens.dist)
    return np.asarray(shown, np.float64).reshape(-1, 2)
