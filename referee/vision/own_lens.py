"""A lens estimated from a board's own lines, where no camera file gives one, written as the
camera model a camera file holds (`CameraCalibration`: k1, k2, k3 and the principal point),
so the frame is undistorted with OpenCV's maps and the board found again where its lines are
straight.

The first estimate is the division model about the frame's centre that straightens the
found grid's lines (`lens_bend`). The lens is then fitted again to the board's inner lines
read to a fraction of a pixel in the frame undistorted through it (`read_lines`), so that
through it they lie on the lines of one grid (`fit_lens`: straight, and meeting and spaced as
a plane's lines are), its k and its centre, in both radial models (`lens_bend.Radial`): the
division model and OpenCV's polynomial k1. The model whose grid the lines fit better is kept
(`best_lens`): a real wide lens lies between the two, nearer the division model on the
photographs here, and a lens that bends as OpenCV's k1 alone bends is the polynomial, which
the division model misses by a few pixels at a board's corners.

The focal length is a guess (`FOCAL_WIDTHS` of the frame's width): one board's lines tell
how far the lens bends them, not the focal length, and the distortion coefficients are fitted
for that guess, so the frame undistorts the same whichever focal length is guessed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.calibration.files import CameraCalibration
from referee.calibration.undistort import Undistorter
from referee.vision.gridfit import normaliser, solve_lines
from referee.vision.lens_bend import DIVISION, LAMBDAS, POLYNOMIAL, Radial
from referee.vision.line_profiles import grid_segments, line_windows, measure
from referee.vision.pose import FloatArray, apply_homography

FOCAL_WIDTHS = 0.8     # the focal length guessed, in frame widths (Pi Camera Module 3: 0.73)
REACH = 1.05           # the radii fitted, in half diagonals (a little past the frame's corners)
SOURCE = "estimated from the board's lines (no camera file)"
BAND = 0.08            # squares either side of a grid line where its profile is read
FAINT = 0.3            # a line's stretch fainter than this share of the median one is not read
STARTS = LAMBDAS[LAMBDAS <= 0][::4]   # the ks a lens fit starts from: -0.5 to 0, steps of 0.1
OUTLIER = 3.0          # a point further off its line than this many times the median is left out
KEPT = 0.9             # the share of the points nearest their lines that a misfit counts
STEPS = 30             # Levenberg-Marquardt steps of a lens fit
OFF_CENTRE = 0.15      # half diagonals: a lens centre fitted further off the frame's is not kept


@dataclass(frozen=True)
class LineSamples:
    """Points on a board's inner lines where the frame shows them (about the frame's centre,
    in half diagonals), each on the line x = `index` of the board where `on_x`, else
    y = `index`."""

    points: FloatArray
    on_x: NDArray[np.bool_]
    index: FloatArray

    def pixels(self, width: int, height: int) -> FloatArray:
        """The points in the frame's pixels."""
        return np.asarray(self.points * (np.hypot(width, height) / 2) + [(width - 1) / 2, (height - 1) / 2],
                          np.float64)


@dataclass(frozen=True)
class LensFit:
    """A lens fitted to a board's lines, and how far (RMS, squares; the `KEPT` share of the
    points nearest their lines counting) the lines' points lie off the lines of one grid
    through it (`misfit`) and as the frame shows them (`misfit_seen`)."""

    lens: Radial
    misfit: float
    misfit_seen: float


def lens_for(lens: Radial, width: int, height: int) -> CameraCalibration:
    """The camera whose radial distortion (k1, k2, k3; no tangential) and principal point are
    those of `lens` (`lens_bend.Radial`): OpenCV's own model for the polynomial k1, fitted over
    the frame's radii for the division model."""
    half_diagonal = float(np.hypot(width, height) / 2)
    focal = FOCAL_WIDTHS * width
    if lens.model == POLYNOMIAL:
        k1, k2, k3 = lens.k * (focal / half_diagonal) ** 2, 0.0, 0.0
    else:
        reach = REACH + float(np.hypot(*lens.centre))
        k1, k2, k3 = _division_as_polynomial(lens.k, focal / half_diagonal, reach)
    cx = (width - 1) / 2 + lens.centre[0] * half_diagonal
    cy = (height - 1) / 2 + lens.centre[1] * half_diagonal
    return CameraCalibration((width, height), ((focal, 0.0, cx), (0.0, focal, cy), (0.0, 0.0, 1.0)),
                             (k1, k2, 0.0, 0.0, k3), None, SOURCE)


def _division_as_polynomial(k: float, focal: float, reach: float) -> tuple[float, float, float]:
    """OpenCV's k1, k2, k3 nearest the division model k (x_u = c + (x - c) / (1 + k r^2), r in
    half diagonals) over radii up to `reach`, for a focal length of `focal` half diagonals."""
    r_seen = np.linspace(0.02, reach, 64)
    r_flat = r_seen / (1 + k * r_seen**2)
    flat = r_flat / focal   # OpenCV's normalised radius
    # OpenCV: r_seen / r_flat = 1 + k1 r^2 + k2 r^4 + k3 r^6 (r normalised, undistorted)
    powers = np.stack([flat**2, flat**4, flat**6], axis=1)
    k1, k2, k3 = np.linalg.lstsq(powers, r_seen / r_flat - 1, rcond=None)[0]
    return float(k1), float(k2), float(k3)


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


def read_lines(frame_bgr: NDArray[np.uint8], view: Undistorter, lens: CameraCalibration, h: FloatArray,
               files: int, ranks: int) -> LineSamples:
    """The inner lines of the grid `h` (board -> the view `view` undistorted through `lens`)
    read there to a fraction of a pixel (one point a square: where the line's profile peaks
    within `BAND` of the grid, as the grid's own sub-pixel fit reads it) and put back where
    the frame shows them. The outer lines are left out: a board's edge, or the frame it is
    clipped into, runs beside them."""
    seg = grid_segments(files, ranks)
    profiles = measure(view(frame_bgr), h, seg, BAND, windows=line_windows(files, ranks))
    strength = np.nan_to_num(profiles.strength, nan=0.0)
    inner = (seg.index > 0) & (seg.index < np.where(seg.on_x, files, ranks)) & (strength > 0)
    typical = float(np.median(strength[inner])) if np.any(inner) else 0.0
    read = inner & (strength > FAINT * typical)
    if not np.any(read):
        return LineSamples(np.zeros((0, 2)), seg.on_x[read], seg.index[read])
    board = seg.base[read].mean(axis=1) + profiles.offset[read, None] * seg.normal[read]
    shown = view.distort_points(apply_homography(h, board), lens)
    width, height = lens.image_size
    centred = (shown - [(width - 1) / 2, (height - 1) / 2]) / float(np.hypot(width, height) / 2)
    return LineSamples(centred, seg.on_x[read], seg.index[read])


def best_lens(samples: LineSamples) -> LensFit | None:
    """Of the division model and OpenCV's polynomial k1, the lens through which the board's
    lines lie nearer the lines of one grid (`fit_lens`); None where too few lines are read."""
    fits = [fit for model in (DIVISION, POLYNOMIAL) if (fit := fit_lens(samples, model)) is not None]
    return min(fits, key=lambda fit: fit.misfit, default=None)


def fit_lens(samples: LineSamples, model: str) -> LensFit | None:
    """The lens of `model` through which the board's lines lie nearest the lines of one grid:
    k from the best of `STARTS` about the frame's centre, then k and the centre together
    (Levenberg-Marquardt), the points far off their lines there (`OUTLIER`: a die, a hand,
    a line misread) left out. The centre stays the frame's where it would move more than
    `OFF_CENTRE`, or where only two lines a direction are read (a 3x3 board's inner lines: a
    grid through them fits any four lines, and only their straightness tells the lens). None
    where fewer are read."""
    lines = min(len(np.unique(samples.index[samples.on_x])), len(np.unique(samples.index[~samples.on_x])))
    if lines < 2:
        return None
    start = min(STARTS, key=lambda k: _misfit(_grid_residuals(samples, Radial(float(k), model))))
    off = np.abs(_grid_residuals(samples, Radial(float(start), model)))
    kept = off <= OUTLIER * max(float(np.median(off)), 1e-6)

    def residuals(x: FloatArray) -> FloatArray:
        centre = (float(x[1]), float(x[2])) if len(x) == 3 else (0.0, 0.0)
        return _grid_residuals(samples, Radial(float(x[0]), model, centre))[kept]

    x = _least_squares(residuals, np.array([start, 0.0, 0.0])) if lines > 2 else None
    if x is None or np.hypot(x[1], x[2]) > OFF_CENTRE:
        x = np.append(_least_squares(residuals, np.array([start])), [0.0, 0.0])
    lens = Radial(float(x[0]), model, (float(x[1]), float(x[2])))
    seen = _misfit(_grid_residuals(samples, Radial(0.0)))
    return LensFit(lens, _misfit(_grid_residuals(samples, lens)), seen)


def grid_fit(points: FloatArray, samples: LineSamples) -> FloatArray | None:
    """The homography (board -> `points`: the samples' points, moved) whose lines the points
    lie nearest, each on its own line; None where it degenerates."""
    h = np.asarray(np.linalg.inv(normaliser(points)), np.float64)  # the first step algebraic
    for _ in range(2):   # then each step weighs the points by the last grid's depth there
        fitted = solve_lines(points, samples.on_x, samples.index, np.ones(len(points)), h)
        if fitted is None:
            return None
        h = fitted
    return h


def _grid_residuals(samples: LineSamples, lens: Radial) -> FloatArray:
    """How far (squares) each point, through `lens`, lies off its line of the grid fitted
    there."""
    straight = lens.straightened(samples.points)
    h = grid_fit(straight, samples)
    if h is None:
        return np.ones(len(samples.index))
    board = apply_homography(np.asarray(np.linalg.inv(h), np.float64), straight)
    return np.asarray(np.where(samples.on_x, board[:, 0], board[:, 1]) - samples.index, np.float64)


def _misfit(residuals: FloatArray) -> float:
    """The RMS of the `KEPT` share of the residuals nearest 0."""
    nearest = np.sort(residuals**2)[: max(1, int(KEPT * len(residuals)))]
    return float(np.sqrt(np.mean(nearest)))


def _least_squares(residuals: Callable[[FloatArray], FloatArray], x: FloatArray) -> FloatArray:
    """Levenberg-Marquardt from `x` on `residuals(x)` (a Jacobian of forward differences)."""
    r = residuals(x)
    cost, damping, eps = float(r @ r), 1e-3, 1e-6
    for _ in range(STEPS):
        jac = np.column_stack([(residuals(x + dx) - r) / eps for dx in np.eye(len(x)) * eps])
        a, g = jac.T @ jac, jac.T @ r
        while damping < 1e8:   # damped until a step lowers the cost
            step = np.linalg.solve(a + damping * np.diag(np.diag(a) + 1e-12), -g)
            moved = residuals(x + step)
            if float(moved @ moved) < cost:
                x, r, cost, damping = x + step, moved, float(moved @ moved), damping / 3
                break
            damping *= 4
        else:
            break
        if float(np.max(np.abs(step))) < 1e-7:
            break
    return x


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
