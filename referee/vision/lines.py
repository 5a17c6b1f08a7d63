"""The straight lines of a board in a frame: a grey copy, Canny edges, Hough lines voted for
only by edge pixels whose gradient lies across them, split into two direction families (and
a third where a board's lines run in more than two directions in the image)."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import NoBoardError
from referee.vision.gridfit import (
    GreyImage,
    NearestEdges,
    channel_edges,
)
from referee.vision.pose import (
    FloatArray,
)
from referee.vision.settings import LocaliseSettings


def to_grey(frame: NDArray[np.generic]) -> GreyImage:
    """A uint8 grey image from a BGR, BGRA or grey frame; NoBoardError for anything else."""
    if not isinstance(frame, np.ndarray) or frame.size == 0:
        raise NoBoardError("no board: the frame is empty")
    if frame.dtype != np.uint8:
        raise NoBoardError(f"no board: frames must be 8-bit images, not {frame.dtype}")
    image = np.asarray(frame, dtype=np.uint8)
    if image.ndim == 2:
        return image
    if image.ndim == 3 and image.shape[2] == 3:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
    if image.ndim == 3 and image.shape[2] == 4:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY), dtype=np.uint8)
    raise NoBoardError(f"no board: a frame of shape {frame.shape} is not an image")


def board_edges(image: NDArray[np.uint8], *, low_ratio: float, percentile: float, cap_percentile: float,
                clahe_clip: float = 0.0, min_high: float = 40.0) -> GreyImage:
    """Canny edges of a grey or BGR image, each colour channel's edges joined (squares that
    differ in hue more than in brightness still give edges). Each channel's high threshold is
    the `percentile` of its gradient read off a copy subsampled 4x each way, or where that
    lies above nearly every gradient Canny itself thresholds (the L1 Sobel magnitude of the
    blurred channel at full resolution, read at every fourth pixel), the `cap_percentile` of
    Canny's (`_high_threshold`). The subsampled gradient spans four pixels a step and runs
    stronger than Canny's: on renders its 90th percentile sat at the 94th-98.5th of Canny's,
    on a real board filling a small frame at the 99.9th-100th, above nearly every edge Canny
    saw ("almost no edges")."""
    return channel_edges(image, low_ratio=low_ratio, clahe_clip=clahe_clip, high_of=lambda blurred: max(
        min_high, _high_threshold(blurred, percentile, cap_percentile)))


def _high_threshold(blurred: GreyImage, percentile: float, cap_percentile: float) -> float:
    """The `percentile` of the gradient of `blurred` subsampled 4x, unless that lies above the
    99th percentile of the gradient at full resolution (Canny would keep under 1% of the
    pixels as strong edges): then the `cap_percentile` of the full-resolution gradient."""
    coarse = _gradient_percentile(blurred[::4, ::4], percentile)
    if coarse <= _gradient_percentile(blurred, 99.0, every=4):
        return coarse
    return _gradient_percentile(blurred, cap_percentile, every=4)


def _gradient_percentile(channel: GreyImage, percentile: float, every: int = 1) -> float:
    """The `percentile` of the L1 Sobel gradient magnitude of `channel` (Canny's, at its
    resolution), read at every `every`-th pixel each way."""
    gx = cv2.Sobel(channel, cv2.CV_16S, 1, 0)[::every, ::every].astype(np.int32)
    gy = cv2.Sobel(channel, cv2.CV_16S, 0, 1)[::every, ::every].astype(np.int32)
    mag = (np.abs(gx) + np.abs(gy)).ravel()
    k = int(percentile / 100 * (mag.size - 1))
    return float(np.partition(mag, k)[k])


def _hough_all(edges: GreyImage, votes: int) -> FloatArray | None:
    found = cv2.HoughLines(edges, 1, np.pi / 180, votes)
    return None if found is None else np.asarray(found[:, 0, :2], dtype=np.float64)


def _hough_by_direction(edges: GreyImage, near: NearestEdges, votes: int,
                        bin_deg: float = 10.0, slack_deg: float = 12.0) -> FloatArray | None:
    """(rho, theta) rows, most votes first, each line voted for only by edge pixels whose
    gradient is within `slack_deg` of its normal."""
    ys, xs = np.nonzero(edges)  # raster order, as NearestEdges numbers its normals
    normal = near.normals[1:]
    angle = np.mod(np.arctan2(normal[:, 1], normal[:, 0]), np.pi)
    rows: list[FloatArray] = []
    step = np.radians(bin_deg)
    slack = np.radians(slack_deg)
    for lo in np.arange(0.0, np.pi, step):
        centre = lo + step / 2
        off = np.abs((angle - centre + np.pi / 2) % np.pi - np.pi / 2)
        pick = off < step / 2 + slack
        if pick.sum() < votes:
            continue
        mask = np.zeros_like(edges)
        mask[ys[pick], xs[pick]] = 255
        # theta in [0, pi): a normal near 0 or pi is one direction, found in the first bin
        found = cv2.HoughLinesWithAccumulator(mask, 1, np.pi / 180, votes, min_theta=float(lo),
                                              max_theta=float(min(lo + step, np.pi)))
        if found is not None:
            rows.append(np.asarray(found, dtype=np.float64).reshape(-1, 3))
    if not rows:
        return None
    allrows = np.vstack(rows)
    return allrows[np.argsort(-allrows[:, 2]), :2]


def hough_lines(edges: GreyImage, s: LocaliseSettings, near: NearestEdges | None = None) -> FloatArray:
    """Strongest distinct lines as (n, 3) homogeneous rows (cos t, sin t, -rho).

    With `near` (edge pixels' gradient directions), a line of direction t gets votes only
    from edge pixels whose gradient lies across it: the outlines and lettering of a row of
    pieces, or wood grain, no longer add up to a fan of lines through them that fills the
    line budget, while a grid line's pixels all agree."""
    votes = max(20, int(s.hough_votes * edges.shape[0]))
    found = _hough_by_direction(edges, near, votes) if near is not None else _hough_all(edges, votes)
    if found is None:
        return np.zeros((0, 3))
    kept: list[tuple[float, float]] = []
    tol_t = np.radians(s.nms_theta_deg)
    for rho, theta in found:
        close = False
        for r2, t2 in kept:
            dt = abs(theta - t2)
            same = dt < tol_t and abs(rho - r2) < s.nms_rho_px
            flipped = np.pi - dt < tol_t and abs(rho + r2) < s.nms_rho_px  # theta wraps at pi
            if same or flipped:
                close = True
            if close:
                break
        if not close:
            kept.append((float(rho), float(theta)))
            if len(kept) >= s.max_lines:
                break
    arr = np.array(kept)
    return np.column_stack([np.cos(arr[:, 1]), np.sin(arr[:, 1]), -arr[:, 0]])


def split_families(lines: FloatArray, spread_deg: float) -> tuple[FloatArray, FloatArray]:
    """The two dominant line directions (peaks of a doubled-angle histogram) and the lines
    within `spread_deg` of each."""
    if len(lines) < 4:
        return np.zeros((0, 3)), np.zeros((0, 3))
    theta = np.mod(np.arctan2(lines[:, 1], lines[:, 0]), np.pi)
    bins = 180
    hist = np.bincount((theta / np.pi * bins).astype(int) % bins, minlength=bins).astype(float)
    kernel = np.exp(-0.5 * (np.arange(-12, 13) / 4.0) ** 2)
    smooth = np.convolve(np.concatenate([hist[-12:], hist, hist[:12]]), kernel, mode="same")[12:-12]
    first = int(np.argmax(smooth))
    dist_bins = np.abs((np.arange(bins) - first + bins / 2) % bins - bins / 2)
    masked = np.where(dist_bins < 25, -1.0, smooth)
    second = int(np.argmax(masked))
    peaks = np.array([first, second]) * np.pi / bins

    def near(peak: float) -> NDArray[np.bool_]:
        d = np.abs((theta - peak + np.pi / 2) % np.pi - np.pi / 2)
        return np.asarray(d < np.radians(spread_deg), dtype=np.bool_)

    a, b = near(peaks[0]), near(peaks[1])
    da = np.abs((theta - peaks[0] + np.pi / 2) % np.pi - np.pi / 2)
    db = np.abs((theta - peaks[1] + np.pi / 2) % np.pi - np.pi / 2)
    a &= da <= db
    b &= db < da
    return lines[a], lines[b]


def third_family(lines: FloatArray, fam_a: FloatArray, fam_b: FloatArray, spread_deg: float) -> FloatArray:
    """The lines of the strongest direction left once `fam_a` and `fam_b` (split_families'
    two) are taken out: those within `spread_deg` of the peak of the rest's directions and
    further than that from both families' median directions."""
    def angle(rows: FloatArray) -> FloatArray:
        return np.asarray(np.mod(np.arctan2(rows[:, 1], rows[:, 0]), np.pi), dtype=np.float64)

    def apart(theta: FloatArray, peak: float | FloatArray) -> FloatArray:
        return np.asarray(np.abs((theta - peak + np.pi / 2) % np.pi - np.pi / 2), dtype=np.float64)

    if len(lines) == 0 or len(fam_a) == 0 or len(fam_b) == 0:
        return np.zeros((0, 3))
    theta = angle(lines)
    spread = np.radians(spread_deg)
    rest = np.ones(len(lines), dtype=bool)
    for fam in (fam_a, fam_b):
        # a family's median direction (angles doubled, so that 0 and pi are one direction)
        doubled = 2 * angle(fam)
        peak = float(np.mod(np.arctan2(np.sin(doubled).sum(), np.cos(doubled).sum()), 2 * np.pi) / 2)
        rest &= apart(theta, peak) >= spread
    if not rest.any():
        return np.zeros((0, 3))
    near = apart(theta[rest][:, None], theta[rest][None, :]) < np.radians(10.0)
    peak = float(theta[rest][int(np.argmax(near.sum(axis=0)))])
    return np.asarray(lines[rest][apart(theta[rest], peak) < spread], dtype=np.float64)


def sort_family(lines: FloatArray, centre: FloatArray) -> FloatArray:
    """Order lines of one family by where they cross a transversal through `centre`."""
    normal = lines[:, :2].copy()
    normal[normal @ normal[0] < 0] *= -1
    n = normal.mean(axis=0)
    n /= np.linalg.norm(n)
    num = -(lines[:, :2] @ centre + lines[:, 2])
    den = lines[:, :2] @ n
    t = num / np.where(np.abs(den) < 1e-9, 1e-9, den)
    return lines[np.argsort(t)]
