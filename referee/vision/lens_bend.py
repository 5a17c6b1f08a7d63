"""How far a found grid's lines bend in the frame: a lens that bends straight lines (a
wide-angle or fisheye lens, no camera file) curves a board's lines, which a grid of straight
lines cannot follow, so the grid slides a row where the curved outer rows fit a window a row
off better.

Each inner line of the found grid (or of a neighbour a square off it, where that reads
straighter: `measure_bend`) is read off the frame: at points along it, between its
crossings, the strongest gradient across it within 0.3 square. A one-parameter
division model about the frame's centre (x_u = c + (x - c) / (1 + k r^2), r in half
diagonals) is fitted so that those points lie on straight lines; the bend is how far the
fitted lens moves a line's middle off the chord through its ends, in squares (the largest
over the lines). One lens for the whole frame: a die or a hand on a line moves its points
one way on one line, not every line's middle away from the centre."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.gridfit import GreyImage
from referee.vision.pose import BoardPose, FloatArray, apply_homography

Gradient = NDArray[np.float32]
LAMBDAS = np.linspace(-0.5, 0.5, 41)   # division-model k tried (half diagonals)
PER_SQUARE = 3                          # points read a square along a line
REACH = 0.3                             # squares either side of the grid's line
SHIFTS = [(dx, dy) for dx in (0, -1, 1) for dy in (0, -1, 1)]  # squares: the grid and its neighbours
READ_SHARE = 0.95                       # a neighbour must read this share of the most points read
TRIM = 0.8                              # share of a line's points nearest it that count
DIVISION, POLYNOMIAL = "division", "polynomial"   # the lens models (`Radial`)
NEWTON_STEPS = 12                       # steps inverting the polynomial model (`shrink`)


@dataclass(frozen=True)
class Radial:
    """A radial lens, k below 0 a barrel lens, radii in half diagonals about `centre` (the
    frame's centre moved by it, half diagonals): the division model (a point seen at x lies
    at x / (1 + k |x|^2) straightened) or OpenCV's polynomial k1 (a point at u straightened
    is seen at u (1 + k |u|^2)). The two part where lines run far from the centre: a real
    wide lens lies between them, a lens bent through OpenCV's k1 alone is the polynomial."""

    k: float
    model: str = DIVISION
    centre: tuple[float, float] = (0.0, 0.0)

    def straightened(self, points: FloatArray) -> FloatArray:
        """Points seen (about the frame's centre, half diagonals) where the lens puts them
        straightened (about its own centre)."""
        p = points - np.asarray(self.centre)
        return np.asarray(p * shrink(np.sum(p * p, axis=-1), self.k, self.model)[..., None], np.float64)


def shrink(r2: FloatArray, k: float, model: str) -> FloatArray:
    """|u| / |x|: how the lens k of `model` scales points seen at squared radius `r2` as it
    straightens them."""
    if model == DIVISION:
        return np.asarray(1 / (1 + k * r2), np.float64)
    # the polynomial inverted, t = |u| with t (1 + k t^2) = r: Newton's steps from t = r close
    # in from one side (k t^3 + t - r is concave in t for a barrel lens, convex otherwise),
    # held short of the radius where a barrel lens folds back (no t for points beyond it)
    r = np.sqrt(r2)
    fold = 1 / np.sqrt(-3 * k) if k < 0 else np.inf
    t = r.copy()
    for _ in range(NEWTON_STEPS):
        t = np.minimum(t - (k * t**3 + t - r) / np.maximum(3 * k * t * t + 1, 1e-9), fold)
    return np.asarray(t / np.maximum(r, 1e-12), np.float64)


@dataclass(frozen=True)
class Bend:
    """The lens fitted to the found grid's lines: its k, how much straighter the lines read
    through it (RMS off straight, squares: as seen, through the lens), and how far it moves
    a line's middle off its chord (squares, the largest over the lines); `lines`, the points
    it was fitted to (padded with NaN, about the frame's centre, in half diagonals)."""

    k: float
    rms_seen: float
    rms_fitted: float
    bow: float
    lines: FloatArray = field(compare=False, repr=False, default_factory=lambda: np.zeros((0, 0, 2)))


def line_points(gx: Gradient, gy: Gradient, h: FloatArray, files: int, ranks: int) -> list[FloatArray]:
    """Image points of each inner line of the grid `h` (board -> image): the strongest
    gradient (`gx`, `gy`) across it within `REACH` squares of where the grid puts it, at
    `PER_SQUARE` points a square, clear of the crossings; lines with few such points left out."""
    out: list[FloatArray] = []
    for vertical, count, length in ((True, files, ranks), (False, ranks, files)):
        t = (np.arange(length * PER_SQUARE) + 0.5) / PER_SQUARE
        t = t[np.abs(t - np.rint(t)) > 0.12]
        out += [pts for pts in _read_lines(gx, gy, h, np.arange(1.0, count), t, vertical) if len(pts) >= 6]
    return out


def _read_lines(gx: Gradient, gy: Gradient, h: FloatArray, at: FloatArray, t: FloatArray,
                vertical: bool) -> list[FloatArray]:
    """The lines x = at (`vertical`) or y = at, each read at the points t along it."""
    offsets = np.linspace(-REACH, REACH, 13)
    aa, tt, oo = np.meshgrid(at, t, offsets, indexing="ij")
    board = np.stack([aa + oo, tt] if vertical else [tt, aa + oo], axis=-1)
    xy = apply_homography(h, board.reshape(-1, 2)).reshape(*aa.shape, 2)
    normal = xy[:, :, -1] - xy[:, :, 0]
    normal /= np.maximum(np.linalg.norm(normal, axis=-1, keepdims=True), 1e-9)
    maps = np.nan_to_num(xy, nan=-1.0).astype(np.float32).reshape(-1, len(offsets), 2)
    sx = cv2.remap(gx, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderValue=0.0).reshape(aa.shape)
    sy = cv2.remap(gy, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderValue=0.0).reshape(aa.shape)
    strength = np.abs(sx * normal[..., 0:1] + sy * normal[..., 1:2])
    best = np.argmax(strength, axis=-1)
    peak = np.take_along_axis(strength, best[..., None], axis=-1)[..., 0]
    # a peak at the reach's end is no line's; a faint one is the squares' texture
    keep = (best > 0) & (best < len(offsets) - 1) & (peak > 0.3 * np.median(peak, axis=1, keepdims=True))
    found = np.take_along_axis(xy, best[..., None, None], axis=2)[:, :, 0]
    return [np.asarray(found[i][keep[i]], dtype=np.float64) for i in range(len(at))]


def _padded(lines: list[FloatArray]) -> FloatArray:
    """(lines, longest, 2) with NaN after each line's points."""
    out = np.full((len(lines), max(len(p) for p in lines), 2), np.nan)
    for i, pts in enumerate(lines):
        out[i, : len(pts)] = pts
    return out


def _straightness(points: FloatArray, ks: FloatArray) -> FloatArray:
    """For each lens k: the sum over lines of the squared distances of their points (padded,
    frame centred, in half diagonals), through the lens, off their best line, the `TRIM`
    nearest of each line's points counting (a die or a piece's outline on a line moves a
    few far off), in the frame's scale (a lens that shrinks the whole board is no straighter
    for it)."""
    shrink = 1 / (1 + ks[:, None, None] * np.sum(points * points, axis=-1)[None])
    u = points[None] * shrink[..., None]
    u = u - np.nanmean(u, axis=2, keepdims=True)
    sxx, syy = np.nansum(u[..., 0] ** 2, axis=2), np.nansum(u[..., 1] ** 2, axis=2)
    sxy = np.nansum(u[..., 0] * u[..., 1], axis=2)
    theta = 0.5 * np.arctan2(2 * sxy, sxx - syy)   # the line's direction
    off = np.sort((u[..., 1] * np.cos(theta)[..., None] - u[..., 0] * np.sin(theta)[..., None]) ** 2, axis=2)
    counts = np.sum(np.isfinite(points[..., 0]), axis=1)
    kept = np.maximum(3, (TRIM * counts).astype(np.int64))
    trimmed = np.take_along_axis(np.nancumsum(off, axis=2), kept[None, :, None] - 1, axis=2)[..., 0]
    return np.asarray(np.sum(trimmed / np.nanmean(shrink, axis=2) ** 2, axis=1), dtype=np.float64)


def measure_bend(frame_grey: GreyImage, pose: BoardPose) -> Bend | None:
    """The lens that straightens the grid's lines (`Bend`), read off the grid or the one a
    square off it whose lines read straightest among those that read nearly as many points
    (`READ_SHARE`) as the best: a grid slid off a curved board crosses its lines, one slid
    off the board reads fewer; None where too few lines read."""
    gx = np.asarray(cv2.Sobel(frame_grey, cv2.CV_32F, 1, 0, ksize=3), dtype=np.float32)
    gy = np.asarray(cv2.Sobel(frame_grey, cv2.CV_32F, 0, 1, ksize=3), dtype=np.float32)
    height, width = frame_grey.shape[:2]
    centre = np.array([(width - 1) / 2, (height - 1) / 2])
    scale = float(np.hypot(width, height) / 2)
    read = []
    for dx, dy in SHIFTS:
        h = pose.h @ np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]])
        lines = line_points(gx, gy, h, pose.files, pose.ranks)
        if len(lines) >= 4:
            points = (_padded(lines) - centre) / scale
            rms = float(_straightness(points, np.zeros(1))[0]) / _count(points)
            read.append((rms, sum(len(p) for p in lines), points))
    if not read:
        return None
    most = max(r[1] for r in read)
    points = min((r for r in read if r[1] >= READ_SHARE * most), key=lambda r: r[0])[2]
    costs = _straightness(points, LAMBDAS)
    k = float(LAMBDAS[int(np.argmin(costs))])
    n, square = _count(points), _square_px(pose)
    rms_seen = float(np.sqrt(costs[len(LAMBDAS) // 2] / n)) * scale / square
    rms_fitted = float(np.sqrt(costs.min() / n)) * scale / square
    return Bend(k, rms_seen, rms_fitted, _bow(points, k) * scale / square, points)


def straightest_k(points: FloatArray) -> float:
    """The division model's k that straightens the lines `points` (padded, about the frame's
    centre, in half diagonals: `Bend.lines`) best, to a 40th of the steps of `LAMBDAS` (a
    step there moves a corner of the frame by a few pixels)."""
    k = float(LAMBDAS[int(np.argmin(_straightness(points, LAMBDAS)))])
    step = float(LAMBDAS[1] - LAMBDAS[0])
    ks = np.linspace(k - step, k + step, 81)
    return float(ks[int(np.argmin(_straightness(points, ks)))])


def _count(points: FloatArray) -> int:
    counts = np.sum(np.isfinite(points[..., 0]), axis=1)
    return int(np.sum(np.maximum(3, (TRIM * counts).astype(np.int64))))


def _bow(points: FloatArray, k: float) -> float:
    """How far the lens k moves a line's middle off the chord through its ends (half
    diagonals, the largest over the lines): the straight line through each line's ends as
    the lens would straighten them, bent back through it."""
    worst = 0.0
    for line in points:
        pts = line[np.isfinite(line[:, 0])]
        ends = pts[[0, -1]]
        u = ends / (1 + k * np.sum(ends * ends, axis=1, keepdims=True))
        bent = _distort(np.array([u[0], (u[0] + u[1]) / 2, u[1]]), k)
        chord = bent[2] - bent[0]
        normal = np.array([-chord[1], chord[0]]) / max(float(np.linalg.norm(chord)), 1e-12)
        worst = max(worst, abs(float((bent[1] - bent[0]) @ normal)))
    return worst


def _distort(u: FloatArray, k: float) -> FloatArray:
    """Points through the division model k the other way: d with d / (1 + k |d|^2) = u."""
    ru = np.linalg.norm(u, axis=1)
    # k ru rd^2 - rd + ru = 0: the root nearest ru
    with np.errstate(divide="ignore", invalid="ignore"):
        disc = np.sqrt(np.maximum(1 - 4 * k * ru * ru, 0.0))
        rd = np.where(np.abs(k * ru) > 1e-9, (1 - disc) / (2 * k * ru), ru)
        ratio = np.where(ru > 1e-12, rd / ru, 1.0)
    return np.asarray(u * ratio[:, None], dtype=np.float64)


def _square_px(pose: BoardPose) -> float:
    c = np.array(pose.corners)
    sides = np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)
    return float((sides[0] + sides[2]) / (2 * pose.files) + (sides[1] + sides[3]) / (2 * pose.ranks)) / 2
