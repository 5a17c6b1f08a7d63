"""Find a board's grid in a frame without markers, and track it from frame to frame.

find_board: edges (Canny per colour channel) -> Hough lines, each voted for only by edge
pixels whose gradient lies across it -> two direction families -> hypotheses from pairs of
neighbouring lines of each family (the unit square of a lattice) -> count the line crossings
that fall on that lattice -> refit, pick the window of the wanted size (on boards bigger than
3x3, one whose outer row or column of squares no inner line crosses, a bare margin or the
table taken for a row, loses) -> score on the edge map's distance transform: grid lines
supported, half-way lines not, the grid lines' extensions one square outside not beyond
what texture there gives (so a bigger board, the
board's own edge or the table's edges do not pass) -> ICP pull onto the edges -> sub-pixel
fit to the lines' profiles at full resolution (profiles.py), confirmed there; on 3x3 boards
fitted from nudged starts too, keeping the fit whose inner lines meet its outer lines (and,
where the lines are printed, whose lines show a printed line where it puts them), and last
moved to sit centred in the board's edge round it where that edge clearly agrees more. A 3x3
board's grid is also fitted from the four corners a small network guesses on the whole frame
(`corner_net`), and that grid kept where the search refuses and its printed lines confirm it,
or where the board's edge sits round it at one margin at least as well as round the search's.
On 5x5 and 5x6 boards a second network, trained on them too (`corner_net_big`), guesses the
corners; that grid, fitted to its lines and confirmed by them as the search's grids are, is
kept where the search refuses, or where the board's edge sits round it at least as well
(`_net_fit_big`, `_with_big_net`). Last, a grid reader (`corner_grid`, grid_reader.py) marks
every intersection of the board's lines in a view rectified by the grid found, a 3x3 window at
a time: the grid is kept where its intersections are marked on it, or else the one best marked
of the other grids found and the grids fitted to the marks from each (`_with_grid_reader`,
`_with_grid_reader_big`).

track: the same profile fit started from the previous pose on a crop around the board, in
whatever naming of the corners the caller uses; None when the board has moved too far, so
the caller runs find_board again."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError, NoBoardError
from referee.vision.corner_net import CornerNet
from referee.vision.grid_reader import GridReader
from referee.vision.gridfit import (
    GreyImage,
    NearestEdges,
    Support,
    band_support,
    chamfer_fit,
    edge_map,
    grid_support,
    line_support,
    normaliser,
)
from referee.vision.line_profiles import (
    ProfileSupport,
    checker_steps,
    fit_profiles,
    line_ends,
    line_polarity,
    line_ridges,
    profile_support,
    ridge_polarity,
    ridge_score,
    small_board,
)
from referee.vision.outline import edge_centred, margin_grids, outline_quads, ring_agreement
from referee.vision.pose import (
    BoardPose,
    FloatArray,
    apply_homography,
    board_corners,
    camera_homography,
    corner_error,
    grid_through,
)
from referee.vision.settings import LocaliseSettings, TrackSettings, default_settings

log = logging.getLogger(__name__)


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


# ---------------------------------------------------------------- lines and families


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


# ---------------------------------------------------------------- hypotheses


def _unit_square_homographies(quads: FloatArray) -> FloatArray:
    """(M, 3, 3) homographies taking (0,0),(1,0),(1,1),(0,1) to each quad (M, 4, 2)."""
    x0, x1, x2, x3 = (quads[:, i, 0] for i in range(4))
    y0, y1, y2, y3 = (quads[:, i, 1] for i in range(4))
    sx, sy = x0 - x1 + x2 - x3, y0 - y1 + y2 - y3
    dx1, dx2, dy1, dy2 = x1 - x2, x3 - x2, y1 - y2, y3 - y2
    den = dx1 * dy2 - dx2 * dy1
    den = np.where(np.abs(den) < 1e-9, 1e-9, den)
    g = (sx * dy2 - dx2 * sy) / den
    hh = (dx1 * sy - sx * dy1) / den
    out = np.empty((len(quads), 3, 3))
    out[:, 0] = np.stack([x1 - x0 + g * x1, x3 - x0 + hh * x3, x0], axis=1)
    out[:, 1] = np.stack([y1 - y0 + g * y1, y3 - y0 + hh * y3, y0], axis=1)
    out[:, 2] = np.stack([g, hh, np.ones_like(g)], axis=1)
    return out


@dataclass(frozen=True)
class _Lattice:
    h: FloatArray               # lattice units -> work pixels
    labels: NDArray[np.int64]   # (n, 2) integer lattice coordinates of inlier crossings


def lattice_hypotheses(fam_a: FloatArray, fam_b: FloatArray, image_shape: tuple[int, ...],
                       s: LocaliseSettings) -> list[_Lattice]:
    """Lattices from pairs of near lines of each family, best supported by crossings first."""
    rows, cols = image_shape[:2]
    crossings = np.cross(fam_a[:, None, :], fam_b[None, :, :]).reshape(-1, 3)
    with np.errstate(divide="ignore", invalid="ignore"):
        pts = crossings[:, :2] / crossings[:, 2:3]
    keep = np.all(np.isfinite(pts), axis=1)
    keep &= (pts[:, 0] > -0.25 * cols) & (pts[:, 0] < 1.25 * cols)
    keep &= (pts[:, 1] > -0.25 * rows) & (pts[:, 1] < 1.25 * rows)
    pts = pts[keep]
    if len(pts) < 9:
        return []
    na, nb = len(fam_a), len(fam_b)
    cross_ab = np.full((na, nb, 2), np.nan)
    cross_ab.reshape(-1, 2)[keep] = pts
    pairs_a = [(i, i + d) for d in range(1, s.max_pair_gap + 1) for i in range(na - d)]
    pairs_b = [(k, k + d) for d in range(1, s.max_pair_gap + 1) for k in range(nb - d)]
    if not pairs_a or not pairs_b:
        return []
    pa = np.array(pairs_a)
    pb = np.array(pairs_b)
    ia = np.repeat(pa, len(pb), axis=0)
    ib = np.tile(pb, (len(pa), 1))
    quads = np.stack([cross_ab[ia[:, 0], ib[:, 0]], cross_ab[ia[:, 1], ib[:, 0]],
                      cross_ab[ia[:, 1], ib[:, 1]], cross_ab[ia[:, 0], ib[:, 1]]], axis=1)
    ok = np.all(np.isfinite(quads.reshape(len(quads), -1)), axis=1)
    sides = np.linalg.norm(quads - np.roll(quads, -1, axis=1), axis=2)
    ok &= sides.min(axis=1) >= s.min_square_px
    ok &= sides.max(axis=1) <= 0.5 * max(rows, cols)
    # one square of a board tilted at most ~45 degrees: opposite sides alike, not a sliver
    with np.errstate(all="ignore"):
        ratio_a = sides[:, 0] / sides[:, 2]
        ratio_b = sides[:, 1] / sides[:, 3]
        aspect = (sides[:, 0] + sides[:, 2]) / (sides[:, 1] + sides[:, 3])
    ok &= (np.maximum(ratio_a, 1 / ratio_a) < 1.6) & (np.maximum(ratio_b, 1 / ratio_b) < 1.6)
    ok &= np.maximum(aspect, 1 / aspect) < 2.5
    quads = quads[ok]
    if len(quads) == 0:
        return []
    hs = _unit_square_homographies(quads)
    # Invertible, every one (a batched inv raises on any singular matrix): three collinear
    # corners of a quad of two lines of each family would make one side of length 0, and
    # every side left is at least min_square_px.
    with np.errstate(all="ignore"):
        inv = np.asarray(np.linalg.inv(hs), dtype=np.float64)
    homog = np.column_stack([pts, np.ones(len(pts))])
    counts = _lattice_counts(inv, homog, s.inlier_tol, s.lattice_reach)
    order = np.argsort(-counts)[: 20 * s.max_lattices]
    order = order[counts[order] >= 6]
    cells = quads[order]
    skip = np.zeros(len(order), dtype=bool)
    seen: set[bytes] = set()
    out: list[_Lattice] = []
    # First the best-supported lattices as they come (the same lattice refitted from another
    # of its squares can differ, and sometimes that one is right); then, for variety, more
    # lattices none of whose squares belongs to one already found.
    extra = s.max_lattices // 2
    for k, m in enumerate(order):
        if skip[k]:
            continue
        lattice = _refit_lattice(hs[m], homog, s.inlier_tol)
        if lattice is None:
            continue
        key = lattice.labels.tobytes() + np.rint(lattice.h[:2, 2] / 4).tobytes()
        if key in seen:
            continue
        seen.add(key)
        out.append(lattice)
        if len(out) >= s.max_lattices:
            # from here on, skip the squares of every lattice found so far
            for lat in out if len(out) == s.max_lattices else out[-1:]:
                skip[k + 1:] |= _cells_of(cells[k + 1:], lat.h, s.inlier_tol)
        if len(out) >= s.max_lattices + extra:
            break
    return out


def _inverse(h: FloatArray) -> FloatArray | None:
    """`h`'s inverse; None for a singular lattice (one refitted onto crossings along a line)."""
    try:
        return np.asarray(np.linalg.inv(h), dtype=np.float64)
    except np.linalg.LinAlgError:
        return None


def _cells_of(quads: FloatArray, h: FloatArray, tol: float) -> NDArray[np.bool_]:
    """Which quads (m, 4, 2) of image points are the corners of one unit cell of lattice `h`."""
    back = _inverse(h)
    if back is None:
        return np.zeros(len(quads), dtype=np.bool_)
    with np.errstate(all="ignore"):
        uv = apply_homography(back, quads.reshape(-1, 2)).reshape(quads.shape)
        on = np.all(np.abs(uv - np.rint(uv)) <= tol, axis=(1, 2))
    cell = np.rint(np.nan_to_num(uv))
    steps = np.abs(np.roll(cell, -1, axis=1) - cell).sum(axis=2)
    return np.asarray(on & np.all(steps == 1, axis=1), dtype=np.bool_)


def _lattice_counts(inv: FloatArray, homog: FloatArray, tol: float, reach: float = 20.0,
                    chunk: int = 1024) -> NDArray[np.int64]:
    """For each lattice (image -> lattice map), how many crossings fall within `tol` of one of
    its points (within `reach` squares of its origin: a small board's lattice counted only
    near itself is not outvoted by clutter that happens to fall on it further off). float32
    and one matrix product a chunk: this runs on thousands of lattices times hundreds of
    crossings."""
    counts = np.zeros(len(inv), dtype=np.int64)
    pts_t = homog.T.astype(np.float32)
    flat = inv.astype(np.float32)
    for start in range(0, len(inv), chunk):
        part = flat[start:start + chunk]
        uvw = (part.reshape(-1, 3) @ pts_t).reshape(len(part), 3, -1)
        with np.errstate(all="ignore"):
            r = 1.0 / uvw[:, 2]
            u = uvw[:, 0] * r
            v = uvw[:, 1] * r
            near = (np.abs(u - np.rint(u)) < tol) & (np.abs(v - np.rint(v)) < tol)
            near &= (np.abs(u) < reach) & (np.abs(v) < reach)
        counts[start:start + chunk] = near.sum(axis=1)
    return counts


def _dlt(src: FloatArray, dst: FloatArray) -> FloatArray | None:
    """Least-squares homography src -> dst (normalised DLT; what cv2.findHomography's
    method 0 starts from, without its slower iterative polish, which a lattice refit
    repeated hundreds of times a frame does not need)."""
    ns, nd = normaliser(src), normaliser(dst)
    a = np.column_stack([src, np.ones(len(src))]) @ ns.T
    b = np.column_stack([dst, np.ones(len(dst))]) @ nd.T
    zero = np.zeros_like(a)
    rows = np.vstack([np.hstack([a, zero, -b[:, :1] * a]), np.hstack([zero, a, -b[:, 1:2] * a])])
    _, vecs = np.linalg.eigh(rows.T @ rows)
    h = np.linalg.inv(nd) @ vecs[:, 0].reshape(3, 3) @ ns
    if not np.all(np.isfinite(h)) or abs(h[2, 2]) < 1e-12:
        return None
    return np.asarray(h / h[2, 2], dtype=np.float64)


def _refit_lattice(h: FloatArray, homog: FloatArray, tol: float) -> _Lattice | None:
    """Least-squares homography through every crossing that falls on the lattice, twice."""
    for _ in range(2):
        back = _inverse(h)
        if back is None:
            return None
        with np.errstate(all="ignore"):
            uvw = homog @ back.T
            uv = uvw[:, :2] / uvw[:, 2:3]
        near = np.all(np.abs(uv - np.rint(uv)) < tol, axis=1) & np.all(np.abs(uv) < 20, axis=1)
        if near.sum() < 6:
            return None
        labels = np.rint(uv[near]).astype(np.int64)
        labels -= labels.min(axis=0)
        if len(np.unique(labels[:, 0])) < 2 or len(np.unique(labels[:, 1])) < 2:
            return None
        fitted = _dlt(labels.astype(np.float64), homog[near, :2])
        if fitted is None:
            return None
        h = fitted
    return _Lattice(h, labels)


def lattice_windows(lattice: _Lattice, near: NearestEdges, files: int, ranks: int,
                    s: LocaliseSettings) -> list[tuple[float, FloatArray]]:
    """(score, board -> lattice map) for the best windows of files x ranks squares, either
    way round. Each lattice line's support is read from the edge map (so lines Hough missed,
    under a hand or a row of dice, still count); a window scores the mean support of its
    lines less the support of the lines just outside it (a bigger grid, not this one)."""
    lab = lattice.labels
    lo, hi = lab.min(axis=0), lab.max(axis=0)
    reach = max(files, ranks) + 1
    us = np.arange(lo[0] - reach, hi[0] + reach + 1, dtype=np.float64)
    vs = np.arange(lo[1] - reach, hi[1] + reach + 1, dtype=np.float64)
    su = np.nan_to_num(line_support(near, lattice.h, us, True, (float(lo[1]), float(hi[1])),
                                    tol_px=s.support_tol_px, max_angle_deg=s.support_angle_deg))
    sv = np.nan_to_num(line_support(near, lattice.h, vs, False, (float(lo[0]), float(hi[0])),
                                    tol_px=s.support_tol_px, max_angle_deg=s.support_angle_deg))
    keep = s.windows_per_lattice * (2 if _bands_on(files, ranks, s) else 1)
    found: list[tuple[float, FloatArray]] = []
    for fw, rw, transposed in ((files, ranks, False), (ranks, files, True)):
        if transposed and files == ranks:
            break
        sum_u, out_u = _window_sums(su, fw)
        sum_v, out_v = _window_sums(sv, rw)
        if len(sum_u) == 0 or len(sum_v) == 0:
            continue
        scores = ((sum_u[:, None] + sum_v[None, :]) / (fw + rw + 2)
                  - 0.5 * np.maximum(out_u[:, None], out_v[None, :]))
        flat = scores.ravel()
        best: list[tuple[float, FloatArray]] = []
        for k in np.argsort(-flat, kind="stable")[:keep]:
            a, b = divmod(int(k), len(sum_v))
            u0, v0 = us[a + 1], vs[b + 1]
            t = (np.array([[0.0, 1.0, u0], [1.0, 0.0, v0], [0, 0, 1.0]]) if transposed
                 else np.array([[1.0, 0.0, u0], [0.0, 1.0, v0], [0, 0, 1.0]]))
            best.append((float(flat[k]), t))
        found += best
    found.sort(key=lambda st: -st[0])
    # with the band loss on, the best few more each way round, for `_banded_windows` to cut
    return found if keep > s.windows_per_lattice else found[: s.windows_per_lattice]


def _bands_on(files: int, ranks: int, s: LocaliseSettings) -> bool:
    """Whether windows lose for bare outer bands (`band_floor`): not on 3x3 boards, which have
    their own search."""
    return s.band_floor > 0 and not small_board(files, ranks)


def _banded_windows(near: NearestEdges, found: list[tuple[_Lattice, list[tuple[float, FloatArray]]]],
                    files: int, ranks: int, s: LocaliseSettings) -> list[tuple[float, FloatArray]]:
    """(score, board -> work map): each lattice's best `windows_per_lattice` windows, their
    scores less `_band_loss` when on (each lattice's windows then come twice as many, so
    that the loss can lift one from outside the plain best: the board's under a hand). The
    losses of every lattice's windows in one call: a call a lattice cost as much again."""
    out: list[tuple[float, FloatArray]] = []
    if not _bands_on(files, ranks, s):
        for lattice, windows in found:
            out += [(score, lattice.h @ t) for score, t in windows]
        return out
    hs = [lattice.h @ t for lattice, windows in found for _, t in windows]
    lost = iter(_band_loss(near, np.stack(hs), files, ranks, s)) if hs else iter(())
    k = 0
    for _, windows in found:
        scored = [(score - float(next(lost)), hs[k + j]) for j, (score, _) in enumerate(windows)]
        k += len(windows)
        scored.sort(key=lambda sh: -sh[0])
        out += scored[: s.windows_per_lattice]
    return out


def _band_loss(near: NearestEdges, hs: FloatArray, files: int, ranks: int, s: LocaliseSettings,
               per_cell: int = 3) -> FloatArray:
    """What each grid (board -> work pixels) loses for an outer file or rank of squares that
    its inner lines cross on less than `band_floor` of it (`band_support`): a board's bare
    margin or the table taken for a row of squares (`band_weight` times the shortfall)."""
    bands = band_support(near, hs, files, ranks, tol_px=s.support_tol_px, per_cell=per_cell,
                         max_angle_deg=s.support_angle_deg)
    with np.errstate(all="ignore"):
        least = np.nanmin(np.where(np.isfinite(bands), bands, np.inf), axis=1)
    least = np.where(np.isfinite(least), least, s.band_floor)   # no band in view: no loss
    return np.asarray(s.band_weight * np.maximum(0.0, s.band_floor - least), dtype=np.float64)


def _banded(near: NearestEdges, hs: list[FloatArray], files: int, ranks: int,
            s: LocaliseSettings, per_cell: int = 3) -> FloatArray:
    """`_band_loss` of each grid; 0 when off and on 3x3 boards (their own search)."""
    if not _bands_on(files, ranks, s) or not hs:
        return np.zeros(len(hs))
    return _band_loss(near, np.stack(hs), files, ranks, s, per_cell)


def _window_sums(support: FloatArray, width: int) -> tuple[FloatArray, FloatArray]:
    """For each window of width + 1 lines starting at index 1, 2, ... (a line left on each
    side): the sum of its lines' support and the larger support of the two lines beside it."""
    n = len(support) - width - 2
    if n <= 0:
        return np.zeros(0), np.zeros(0)
    csum = np.concatenate([[0.0], np.cumsum(support)])
    starts = np.arange(1, n + 1)
    sums = csum[starts + width + 1] - csum[starts]
    beside = np.maximum(support[starts - 1], support[starts + width + 1])
    return sums, beside


# ---------------------------------------------------------------- orientation


def canonical(h: FloatArray, files: int, ranks: int) -> BoardPose:
    """The pose seen from above (never mirrored), a1 at the corner that puts rank 1 nearest
    the bottom of the image: a fixed choice; which side is White's is settled later."""
    centre = np.array([[files / 2, ranks / 2], [files / 2 + 1, ranks / 2], [files / 2, ranks / 2 + 1]])
    img = apply_homography(h, centre)
    jac = np.column_stack([img[1] - img[0], img[2] - img[0]])
    if np.linalg.det(jac) > 0:  # mirrored: count ranks from the other side
        h = h @ np.array([[1.0, 0, 0], [0, -1.0, ranks], [0, 0, 1.0]])
    pose = BoardPose.from_homography(h, files, ranks)

    def upness(p: BoardPose) -> float:
        pts = p.to_image(centre)
        return float(pts[2, 1] - pts[0, 1])  # image y of "up a rank": most negative wins

    return min(pose.orientations(), key=upness)


# ---------------------------------------------------------------- finding


def _work_copy(grey: NDArray[np.uint8], width: int) -> tuple[NDArray[np.uint8], float]:
    scale = min(1.0, width / grey.shape[1])
    if scale == 1.0:
        return grey, 1.0
    size = (round(grey.shape[1] * scale), round(grey.shape[0] * scale))
    return np.asarray(cv2.resize(grey, size, interpolation=cv2.INTER_AREA), dtype=np.uint8), scale


def _to_frame(h_work: FloatArray, scale: float) -> FloatArray:
    """A board -> work-pixel homography as board -> frame pixels (pixel centres aligned)."""
    if scale == 1.0:
        return h_work
    back = np.array([[1 / scale, 0, 0.5 / scale - 0.5], [0, 1 / scale, 0.5 / scale - 0.5], [0, 0, 1.0]])
    return back @ h_work


def _from_frame(h: FloatArray, scale: float) -> FloatArray:
    if scale == 1.0:
        return h
    fwd = np.array([[scale, 0, 0.5 * scale - 0.5], [0, scale, 0.5 * scale - 0.5], [0, 0, 1.0]])
    return fwd @ h


def _roi(h: FloatArray, files: int, ranks: int, margin: float,
         shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    outline = board_corners(files, ranks) + np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * margin
    pts = apply_homography(h, outline)
    x0, y0 = np.floor(pts.min(axis=0)).astype(int)
    x1, y1 = np.ceil(pts.max(axis=0)).astype(int)
    return max(0, x0), max(0, y0), min(shape[1], x1 + 1), min(shape[0], y1 + 1)


def refine(frame: NDArray[np.uint8], h: FloatArray, files: int, ranks: int,
           s: LocaliseSettings) -> FloatArray:
    """Sub-pixel fit of `h` (board -> frame) to the lines' intensity profiles at full
    resolution; the coarse grid stays when the fit fails or jumps."""
    outer = s.refine_outer_small if small_board(files, ranks) else s.refine_outer
    fitted = fit_profiles(frame, h, files, ranks, s.refine_bands, outer=outer,
                          max_pair=s.refine_max_pair or None, outer_shift=s.refine_outer_shift,
                          ridges=s.refine_ridges)
    if fitted is None or _moved(h, fitted, files, ranks) > 0.5:
        return h
    return fitted


def find_board(frame_bgr: NDArray[np.uint8], files: int, ranks: int, *,
               settings: LocaliseSettings | None = None,
               camera_matrix: FloatArray | None = None) -> BoardPose:
    """The grid of a `files` x `ranks` board in a frame, to sub-pixel accuracy; the camera's
    intrinsics (`camera_matrix`, the frame undistorted), where known, hold the last fit of a
    board under a hand (`_settled`).

    Raises NoBoardError when no such grid is in view (blank, black or noisy frames, a board
    of another size, a board mostly hidden): it never guesses."""
    if files < 1 or ranks < 1:
        raise ValueError(f"a board needs at least one file and one rank, not {files}x{ranks}")
    s = settings or default_settings().localise
    # On clutter the search meets degenerate grids (corners at infinity): the comparisons
    # reject their inf and nan, which are no fault to warn a player about.
    with np.errstate(all="ignore"):
        if not small_board(files, ranks):
            if not s.corner_net_big:
                return _find_big(frame_bgr, files, ranks, s)
            searched_big = _outcome(lambda: _find_big(frame_bgr, files, ranks, s))
            guess = _big_guess(frame_bgr, files, ranks, s)
            net_fit = _net_fit_big(frame_bgr, guess, files, ranks, s)
            chosen_big = _outcome(lambda: _with_big_net(frame_bgr, searched_big, net_fit, s))
            if not (s.corner_grid and s.corner_grid_big and corner_network(s.corner_net_big).trained_on(
                    files, ranks)):
                return _answer(chosen_big)
            return _with_grid_reader_big(frame_bgr, chosen_big, net_fit, guess, files, ranks, s,
                                         camera_matrix=camera_matrix)
        searched = _outcome(lambda: _searched_small(frame_bgr, files, ranks, s))
        if not s.corner_net:
            return _answer(searched)
        quad = _guessed_quad(corner_network(s.corner_net), frame_bgr)
        chosen = _outcome(lambda: _with_corner_net(
            frame_bgr, searched, _net_fit(frame_bgr, quad, files, ranks, s), s))
        if not s.corner_refiner:
            return _answer(chosen)
        refined = _refined(frame_bgr, quad, files, ranks, s)
        if s.corner_grid and grid_reader(s).net.trained_on(files, ranks):
            return _with_grid_reader(frame_bgr, chosen, refined, files, ranks, s, camera_matrix=camera_matrix)
        return _with_refiner(chosen, refined, s)


def _outcome(find: Callable[[], BoardPose]) -> BoardPose | NoBoardError:
    """A step's grid, or its refusal kept as a value: a later step may still find the board."""
    try:
        return find()
    except NoBoardError as exc:
        return exc


def _answer(found: BoardPose | NoBoardError) -> BoardPose:
    """The grid found, or the refusal raised."""
    if isinstance(found, NoBoardError):
        raise found
    return found


def _searched_small(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings) -> BoardPose:
    """A 3x3 board's grid from the line searches, polished and centred in the board's edge."""
    pose = _find_small(frame_bgr, files, ranks, s) if s.wide_below_ends > 0 else _find_twice(
        frame_bgr, files, ranks, s)
    return _finished_small(frame_bgr, pose, s)


def _finished_small(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> BoardPose:
    pose = _polish_checker(frame_bgr, pose, s) if s.checker_bands else pose
    return _centre_on_edge(frame_bgr, pose, s) if s.edge_centre_rise else pose


@lru_cache(maxsize=4)
def corner_network(name: str) -> CornerNet:
    """The corner network `models/<name>.onnx`, loaded and checked once a process (a
    `ModelError` when it is missing, corrupt or does not match its card)."""
    return CornerNet.load(name)


def _net_fit(frame_bgr: NDArray[np.uint8], quad: NDArray[np.float32] | None, files: int, ranks: int,
             s: LocaliseSettings) -> BoardPose | None:
    """The grid the corner network (`corner_net`) puts the board's outer corners at (`quad`,
    `_guessed_quad`), fitted from there as the line search's first grid is (`_best_reached`:
    nudged starts, the fit whose inner lines best meet its outer ones), polished and
    centred; None where the network saw no four corners or the fit meets too few line ends."""
    if quad is None:
        return None
    h = grid_through(quad, files, ranks)
    try:
        fitted = _best_reached(_colour(frame_bgr), [h], files, ranks, s, reach=s.corner_net_reach)
    except NoBoardError:
        return None
    return _finished_small(frame_bgr, canonical(fitted, files, ranks), s)


def _guessed_quad(net: CornerNet, frame_bgr: NDArray[np.uint8]) -> NDArray[np.float32] | None:
    """The board's outer corners as `net` guesses them, a convex quadrilateral in frame
    pixels; None where it sees no four corners or they make no convex quadrilateral."""
    guess = net.guess(frame_bgr)
    if guess is None:
        return None
    quad = np.asarray(cv2.convexHull(guess.points.astype(np.float32)), np.float32).reshape(-1, 2)
    return quad if len(quad) == 4 else None


def _with_net(frame_bgr: NDArray[np.uint8], searched: BoardPose | NoBoardError,
              net: BoardPose | None, s: LocaliseSettings,
              trusted: Callable[[NDArray[np.uint8], BoardPose], bool]) -> BoardPose:
    """The line search's grid or a corner network's: where the search found none, the
    network's if `trusted` (colour frame, grid) takes it; where both found one and they differ
    by `corner_net_apart` squares or more, the one round which the board's edge shows at one
    margin more (`ring_agreement`; the network's on a tie); the search's otherwise. The search
    locks onto a border line, a die's edge or a hand's, or takes a grid a rank off under a
    hand, where the fit started from the network's corners holds the board's own lines,
    concentric with its edge."""
    colour = _colour(frame_bgr)
    if isinstance(searched, NoBoardError):
        if net is not None and trusted(colour, net):
            return net
        raise searched
    files, ranks = searched.files, searched.ranks
    if net is None or _moved(searched.h, net.h, files, ranks) < s.corner_net_apart:
        return searched
    ring_net, ring_searched = (ring_agreement(colour, pose.h, files, ranks) for pose in (net, searched))
    return net if ring_net >= ring_searched else searched


def _with_corner_net(frame_bgr: NDArray[np.uint8], searched: BoardPose | NoBoardError,
                     net: BoardPose | None, s: LocaliseSettings) -> BoardPose:
    """A 3x3 board's grid (`_with_net`): a refused search's place taken by the network's grid
    if its printed lines confirm it (`_confirmed`). Read off the development frames ("Session
    15" in benchmarks/localise_accuracy.md): of 360, 309 within 1% by the search alone, 329
    so; asking the network's grid to meet its line ends as well as the search's too (the
    first rule tried), 324."""
    return _with_net(frame_bgr, searched, net, s, lambda colour, pose: _confirmed(colour, pose, s))


def _refined(frame_bgr: NDArray[np.uint8], quad: NDArray[np.float32] | None, files: int, ranks: int,
             s: LocaliseSettings) -> tuple[BoardPose, float] | None:
    """The board's corners as the refiner (`corner_refiner`) reads them in views rectified
    by the corner network's guess (`quad`) and turned (`corner_refiner_turns`), each round
    from the last one's corners, with the least corner heat at the last round; None where
    the network saw no four corners. A network's grid, not fitted to the lines: where the
    line fits have failed it, under a hand or a square off, the refiner has read the board
    whole."""
    refiner = corner_network(s.corner_refiner)
    if quad is None or not refiner.trained_on(files, ranks):
        return None
    turns = s.corner_refiner_turns if files == ranks else min(s.corner_refiner_turns, 2)
    corners: NDArray[np.floating] = quad
    for _ in range(s.corner_refiner_rounds):
        guess = refiner.refine(frame_bgr, corners, turns)
        corners = guess.points
    return canonical(grid_through(corners, files, ranks), files, ranks), float(guess.heat.min())


def _with_refiner(chosen: BoardPose | NoBoardError, refined: tuple[BoardPose, float] | None,
                  s: LocaliseSettings) -> BoardPose:
    """A 3x3 board's answer (`_with_corner_net`'s grid, or its refusal) or the refiner's
    corners (`_refined`, with their least heat): the refiner's where the finder refused and
    every corner's heat reaches `corner_refiner_heat`, or where one of its corners lies
    `corner_refiner_apart` of the diagonal or more from the answer's (the line fits have then
    locked onto a hand's edge or the board's border a square off) and every heat reaches
    `corner_refiner_overrule_heat`: overruling a grid asks more of the refiner than answering
    a refusal. Where they lie `corner_refiner_far` or more apart, the answer is worth no more
    than a refusal (on the development frames every such answer was wrong) and the refiner's
    grid is taken as for one. Read off the development frames ("Session 18", "Session 20" and
    "Session 21" in benchmarks/localise_accuracy.md)."""
    if refined is None:
        return _answer(chosen)
    pose, heat = refined
    if isinstance(chosen, NoBoardError):
        return pose if heat >= s.corner_refiner_heat else _answer(chosen)
    apart = corner_error(pose, chosen.corners_array) / chosen.diagonal
    if apart >= s.corner_refiner_far:
        return pose if heat >= s.corner_refiner_heat else chosen
    return pose if heat >= s.corner_refiner_overrule_heat and apart >= s.corner_refiner_apart else chosen


@lru_cache(maxsize=4)
def _grid_reader(name: str, turns: int, rounds: int, heat: float, near_px: float) -> GridReader:
    try:
        return GridReader(corner_network(name), heat, near_px, turns, rounds)
    except ValueError as error:
        raise ModelError(str(error)) from None


def grid_reader(s: LocaliseSettings) -> GridReader:
    """The grid reader (`corner_grid`) as the settings take its marks, loaded once a process."""
    return _grid_reader(s.corner_grid, s.corner_grid_turns, s.corner_grid_rounds, s.corner_grid_heat,
                        s.corner_grid_near_px)


def _with_grid_reader(frame_bgr: NDArray[np.uint8], chosen: BoardPose | NoBoardError,
                      refined: tuple[BoardPose, float] | None, files: int, ranks: int,
                      s: LocaliseSettings, *, camera_matrix: FloatArray | None = None) -> BoardPose:
    """A 3x3 board's grid, the best seen (`_best_seen`) of the finder's answer
    (`_with_corner_net`'s), the refiner's (`_refined`) and the grids fitted to the reader's
    marks from each. The line fits are precise where they hold, the refiner reads a board
    under a hand whole, and the marks tell them apart and fit the grid the hand leaves in
    view. Read off the development frames ("Session 22" in benchmarks/localise_accuracy.md)."""
    reader = grid_reader(s)
    starts = [pose.corners_array for pose in (chosen, refined and refined[0]) if isinstance(pose, BoardPose)]
    fits = [fit for fit in (reader.fit(frame_bgr, start) for start in starts) if fit is not None]
    grids = [grid_through(quad, files, ranks) for quad in [*starts, *fits]]
    best = _best_seen(frame_bgr, grids, files, ranks, s)
    if best is not None:
        return _settled(frame_bgr, best, s, camera_matrix=camera_matrix)
    if isinstance(chosen, NoBoardError):
        raise chosen
    raise NoBoardError(f"only few of the grid's intersections show where it puts them (less than "
                       f"{s.corner_grid_seen:.0%}): something over the board?")


def _settled(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings, *,
             camera_matrix: FloatArray | None = None) -> BoardPose:
    """A grid the reader chose fitted again, as a camera sees a flat board (`camera_homography`:
    `camera_matrix` where known, else a focal length scanned), through the intersections
    whose marks stay put when the guess moves (`GridReader.settled_marks`,
    `corner_grid_settle`); as it is where fewer than `corner_grid_settle_share` of the
    board's intersections (and four) do, since a fit through a few on one side guesses the
    far side. Under a hand the reader marks the hidden intersections where the grid it was
    given puts them, which holds every fit near its start; the intersections in view, with
    the board's squares kept square, place the hidden corner. Read off the development
    frames ("Session 24" in benchmarks/localise_accuracy.md)."""
    if s.corner_grid_settle <= 0:
        return pose
    board, image = grid_reader(s).settled_marks(frame_bgr, pose.h, pose.files, pose.ranks,
                                                s.corner_grid_settle, s.corner_grid_settle_spread)
    if len(board) < max(4, math.ceil(s.corner_grid_settle_share * (pose.files + 1) * (pose.ranks + 1))):
        return pose
    h = camera_homography(board, image, (frame_bgr.shape[1], frame_bgr.shape[0]), camera_matrix=camera_matrix)
    return pose if h is None else canonical(h, pose.files, pose.ranks)


def _with_grid_reader_big(frame_bgr: NDArray[np.uint8], chosen: BoardPose | NoBoardError,
                          net_fit: BoardPose | None, guess: NDArray[np.float32] | None,
                          files: int, ranks: int, s: LocaliseSettings, *,
                          camera_matrix: FloatArray | None = None) -> BoardPose:
    """A 5x5 or 5x6 board's grid (the sizes the bigger boards' network knows, the only ones
    measured): the finder's answer (`_with_big_net`'s) where the grid reader sees it
    (`corner_grid_seen` of its intersections marked on it, read a 3x3 window at a time) with
    its marks within `corner_grid_big_keep_px` (median); else the best seen (`_best_seen`) of
    that answer, the network's fit (`_net_fit_big`), on a square board the network's guess
    (a 5x6 board's guess may lay the files either way, and the marks cannot tell: most
    intersections lie alike), the grids fitted to the reader's marks from each and those fits
    fitted to the lines' profiles (`refine`), these last three only where their lines do not
    run on beyond them (`_lines_run_on`); where it sees none, the finder's answer or refusal
    (a board style the reader never saw, as the tests' drawn checkers, is marked little).
    Under a hand a line fit can take a rank off or lock onto the hand's edge, where the marks
    still show the grid. The best seen is fitted again through the marks that stay put
    (`_settled`); a kept answer is not, since the line fits are the more precise. Read off
    the development frames ("Session 23" and "Session 24" in
    benchmarks/localise_accuracy.md)."""
    reader = grid_reader(s)
    colour = _colour(frame_bgr)
    if isinstance(chosen, BoardPose):
        support = reader.support(colour, chosen.h, files, ranks)
        if support.share() >= s.corner_grid_seen and support.median_px <= s.corner_grid_big_keep_px:
            return chosen
    confirmed = [pose.h for pose in (chosen, net_fit) if isinstance(pose, BoardPose)]
    guessed = [grid_through(guess, files, ranks)] if guess is not None and files == ranks else []
    fits = [fit for fit in (reader.fit_board(colour, h, files, ranks) for h in [*confirmed, *guessed])
            if fit is not None]
    polished = [refine(colour, fit, files, ranks, s) for fit in fits]
    held = [h for h in [*guessed, *fits, *polished] if not _lines_run_on(colour, h, files, ranks, s)]
    best = _best_seen(colour, [*confirmed, *held], files, ranks, s)
    return _answer(chosen) if best is None else _settled(colour, best, s, camera_matrix=camera_matrix)


def _lines_run_on(colour: NDArray[np.uint8], h: FloatArray, files: int, ranks: int,
                  s: LocaliseSettings) -> bool:
    """Whether a grid's lines run on one square beyond it about as strongly as they show
    (`max_outside_ratio`): a window of a bigger board, which the grid reader marks as well as
    a board's own grid."""
    support = profile_support(colour, h, files, ranks)
    return support.outside > s.max_outside_ratio * support.grid


def _best_seen(frame_bgr: NDArray[np.uint8], grids: list[FloatArray], files: int, ranks: int,
               s: LocaliseSettings) -> BoardPose | None:
    """Of the grids (board squares to frame pixels) the grid reader sees (`corner_grid_seen`
    of their intersections marked on them), the one whose marks lie nearest (their median
    distance); None where it sees none."""
    reader = grid_reader(s)
    best: tuple[float, FloatArray] | None = None
    for h in grids:
        support = reader.support(frame_bgr, h, files, ranks)
        if support.share() >= s.corner_grid_seen and (best is None or support.median_px < best[0]):
            best = (support.median_px, h)
    return None if best is None else canonical(best[1], files, ranks)


def _big_guess(frame_bgr: NDArray[np.uint8], files: int, ranks: int,
               s: LocaliseSettings) -> NDArray[np.float32] | None:
    """The corners the bigger boards' network (`corner_net_big`) guesses (`_guessed_quad`);
    None where it sees no four corners or was not trained on this board's size (its card's
    `boards`)."""
    colour = _colour(frame_bgr)  # NoBoardError for what is no image (the search's refusal)
    net = corner_network(s.corner_net_big)
    return _guessed_quad(net, colour) if net.trained_on(files, ranks) else None


def _net_fit_big(frame_bgr: NDArray[np.uint8], quad: NDArray[np.float32] | None, files: int, ranks: int,
                 s: LocaliseSettings) -> BoardPose | None:
    """A bigger board's grid from the corners the bigger boards' network (`corner_net_big`)
    guesses: the grid through them, with each of the two ways of laying the board's files
    along the guessed quadrilateral (a 5x6 board's sides differ; the guess names no corner),
    fitted to the lines' profiles (`refine`) and the fit whose lines best show (the profile
    support's grid less half-way lines) fitted once more; None where the network guessed
    none (`quad`, `_big_guess`) or the fit is not confirmed as `_first_confirmed` confirms the
    search's grids (its profiles pass, it is not adrift). A fit from a guess within 2% of the
    diagonal (90% of held-out bigger-board frames, 75% under a hand) lands on the board's own
    lines, whatever hides the rest of them."""
    if quad is None:
        return None
    colour = _colour(frame_bgr)
    best: tuple[float, FloatArray] | None = None
    for roll in (0, 1) if files != ranks else (0,):
        h = grid_through(np.roll(quad, roll, axis=0), files, ranks)
        fitted = refine(colour, h, files, ranks, s)
        support = profile_support(colour, fitted, files, ranks)
        if best is None or support.grid - support.mid > best[0]:
            best = (support.grid - support.mid, fitted)
    assert best is not None
    fitted = refine(colour, best[1], files, ranks, s)
    support = profile_support(colour, fitted, files, ranks)
    if support.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is not None or _adrift(
            colour, fitted, files, ranks, s):
        return None
    return canonical(fitted, files, ranks)


def _with_big_net(frame_bgr: NDArray[np.uint8], searched: BoardPose | NoBoardError,
                  net: BoardPose | None, s: LocaliseSettings) -> BoardPose:
    """A 5x5 or 5x6 board's grid (`_with_net`, the network's from `_net_fit_big`): a refused
    search's place taken by the network's grid if at least `corner_net_big_ends` of its inner
    lines meet its outer lines (`line_ends`; on the development frames the network's grids
    within 1% there met 0.6-0.9, the one 9% off under a hand 0.06). Read off the development
    frames ("Session 17" in benchmarks/localise_accuracy.md)."""
    return _with_net(frame_bgr, searched, net, s, lambda colour, pose: line_ends(
        colour, pose.h, pose.files, pose.ranks) >= s.corner_net_big_ends)


def _centre_on_edge(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> BoardPose:
    """A 3x3 grid, once chosen, moved so that the board's edge round it lies at one margin on
    every side (`outline.edge_centred`), if that puts the edge at one margin on at least
    `edge_centre_rise` more of its sides' stretches (`ring_agreement`) and moves no corner
    more than `edge_centre_max_move` squares. The grid's fit to its own lines can settle a
    few hundredths of a square off, turned or sheared (faint lines, an outer line on a
    die's edge); the board's edge, four long straight steps, tells that shift, turn and
    perspective, while the grid keeps its size. Round a right grid the edge is concentric
    already, so the move is small and the ring does not rise. A thick board's side face,
    seen on the side towards the camera, puts the outline further out there (0.07 square on
    development 80000+ 1): past `edge_centre_window` that side shows no edge, and nothing
    moves."""
    frame = _colour(frame_bgr)
    files, ranks = pose.files, pose.ranks
    moved = edge_centred(frame, pose.h, files, ranks, window=s.edge_centre_window,
                         min_stretches=s.edge_centre_stretches)
    if moved is None or _moved(pose.h, moved, files, ranks) > s.edge_centre_max_move:
        return pose
    before = ring_agreement(frame, pose.h, files, ranks)
    if ring_agreement(frame, moved, files, ranks) < before + s.edge_centre_rise:
        return pose
    return canonical(moved, files, ranks)


def _polish_checker(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> BoardPose:
    """On a 3x3 checker without lines, the chosen grid fitted once more, each line read as
    the colour step of the sign the squares beside it give it (`checker_steps`; bands
    `checker_bands`). The plain fit reads a line as any symmetric structure near it, and
    on a checker a die's edge or a border beside the outermost line is one: its fixed
    points lie 1-8% off in one frame of seven (from the true pose, 54 of 75 development
    checkers held within 1%, 64 with the steps). As a last fit only: every start fitted
    this way picks worse among the fits (more hands' edges reached). Boards with printed
    lines, even faint ones (`checker_max_dark`), and checkers whose squares' tones do not
    tell a phase keep their grid."""
    frame = _colour(frame_bgr)
    files, ranks = pose.files, pose.ranks
    # faint dark printed lines (too faint for line_polarity) are no steps: the step's edge
    # is the line's edge, half a line's width off its centre (outer lines onto the cells)
    ridges = line_ridges(frame, pose.h, files, ranks, 0.15)
    if ridges is None or ridges[0] > s.checker_max_dark or ridge_polarity(ridges) != 0:
        return pose
    steps = checker_steps(frame, pose.h, files, ranks, 0.15)
    if steps is None:
        return pose
    outer = (s.refine_outer_small[-1],) * len(s.checker_bands)
    fitted = fit_profiles(frame, pose.h, files, ranks, s.checker_bands, outer=outer,
                          outer_shift=s.refine_outer_shift, steps=steps)
    if fitted is None or _moved(pose.h, fitted, files, ranks) > 0.5:
        return pose
    return canonical(fitted, files, ranks)


def _find_small(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings) -> BoardPose:
    """A 3x3 board's four lines a family have a die's two edges (and its side faces') in each
    gap between them, and a hand can hide one or two: the lattices made from neighbouring
    lines are then the dice's, and the board's own, counted over twenty squares around, is
    outvoted by clutter. So when the grid found meets few of its line ends (or none is
    found), search once more pairing lines further apart in order and counting crossings
    only near each lattice's square, and keep that grid if it meets as many line ends as the
    first was asked to (`wide_below_ends`), or, where the first search found nothing, if
    its printed lines confirm it (`_confirmed`). A grid kept though it meets few line ends
    is refused when its lines run on beyond it (`few_ends_max_outside`) or the board's edge
    does not surround it (`_ringed`); the board's outline is then looked for."""
    first: BoardPose | None = None
    missed: NoBoardError | None = None
    try:
        first = _find_twice(frame_bgr, files, ranks, s)
    except NoBoardError as exc:
        missed = exc
    if first is not None and _line_ends(frame_bgr, first) >= s.wide_below_ends:
        return first
    wide = replace(s, max_pair_gap=s.wide_pair_gap, lattice_reach=s.wide_reach)
    try:
        second = _find_twice(frame_bgr, files, ranks, wide)
        # kept only if it meets its line ends as well as the first grid was asked to: the
        # wide search's grids that meet fewer are as often a hand's or the dice's as the board's
        if _line_ends(frame_bgr, second) >= s.wide_below_ends:
            return second
        # ... or, where the first search found nothing (a hand over much of the board hides
        # line ends), if its printed lines confirm it
        if first is None and s.wide_confirm_ridge > 0 and _confirmed(_colour(frame_bgr), second, s):
            return second
        # ... or, where both grids meet few line ends, if the board's edge shows at one margin
        # round it clearly more than round the first's
        if first is not None and s.wide_ring_margin > 0 and _ring_beats(frame_bgr, second, first, s):
            return second
    except NoBoardError:
        pass
    if first is not None and not _runs_on(_colour(frame_bgr), first, s) and _ringed(frame_bgr, first, s):
        return first
    # about to refuse: the board's outline may still show where its grid does not
    outlined = _find_outline(frame_bgr, files, ranks, s) if s.outline_quads else None
    if outlined is not None:
        return outlined
    if first is None:
        assert missed is not None
        raise missed
    raise NoBoardError("no board: the grid found meets few of its line ends, and its lines run "
                       "on beyond it or the board's edge does not surround it (a bigger grid, a "
                       "ruled sheet, or something over the board?)")


def _find_outline(frame_bgr: NDArray[np.uint8], files: int, ranks: int,
                  s: LocaliseSettings) -> BoardPose | None:
    """A 3x3 board's grid found from its outline (`outline.outline_quads`, `margin_grids`): the
    best `outline_candidates` grids refined, the first kept that meets `outline_min_ends` of
    its line ends (more than `min_line_ends` asks of grids that the grid lines themselves
    found) or whose hidden ends the board's edge and its printed lines make up for
    (`_ends_hidden`), whose lines show and do not run on beyond it (`profile_support`,
    `_runs_on`), and round which the board's edge shows at one margin (`ring_agreement`,
    `outline_min_ring`); None when none does. Asked
    only where the grid searches would refuse the frame: on the development frames a hand
    over the board's middle (or dice along its lines) hid the grid's line ends, while the
    board's edge, or a border line around the grid, still showed on all four sides."""
    colour = _colour(frame_bgr)
    work, scale = _work_copy(colour, s.work_width)
    edges = edge_map(work, low_ratio=s.canny_low_ratio, clahe_clip=s.clahe_clip,
                     percentile=s.canny_percentile)
    near = NearestEdges.of(edges, work)
    fam_a, fam_b = split_families(hough_lines(edges, s, near), s.family_spread_deg)
    quads = outline_quads(fam_a, fam_b, near, keep=s.outline_quads, min_side=s.outline_min_side,
                          min_side_px=files * s.min_square_px, tol_px=s.support_tol_px,
                          max_angle_deg=s.support_angle_deg)
    grids = margin_grids(near, quads, files, ranks, margins=s.outline_margins, tol_px=s.support_tol_px,
                         max_angle_deg=s.support_angle_deg)
    for _, h in grids[: s.outline_candidates]:
        fitted = refine(colour, _to_frame(h, scale), files, ranks, s)
        pose = BoardPose.from_homography(fitted, files, ranks)
        if pose.square_size_px() * scale < s.min_square_px:
            continue
        support = profile_support(colour, fitted, files, ranks)
        if (support.outside > s.few_ends_max_outside   # its lines run on (`_runs_on`)
                or support.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is not None):
            continue
        few_ends = line_ends(colour, fitted, files, ranks) < s.outline_min_ends
        if few_ends and not s.outline_confirm_ring:
            continue
        ring = ring_agreement(colour, fitted, files, ranks) if s.outline_min_ring or few_ends else 1.0
        if ring < s.outline_min_ring or (few_ends and not _ends_hidden(colour, pose, ring, s)):
            continue
        return canonical(fitted, files, ranks)
    return None


def _ends_hidden(colour: NDArray[np.uint8], pose: BoardPose, ring: float, s: LocaliseSettings) -> bool:
    """Whether an outline's grid that meets fewer than `outline_min_ends` of its line ends is
    the board's all the same: the ends are hidden (a hand, or dice on the lines), while the
    board's edge shows round it on at least `outline_confirm_ring` of its sides' stretches
    and its lines are printed lines centred where it puts them (`_confirmed`)."""
    return bool(s.outline_confirm_ring) and ring >= s.outline_confirm_ring and _confirmed(colour, pose, s)


def _ring_beats(frame_bgr: NDArray[np.uint8], second: BoardPose, first: BoardPose,
                s: LocaliseSettings) -> bool:
    """Whether the wide search's grid, where it and the first search's both meet few line ends
    (a hand hides them), is the board's rather than the first's: the board's edge shows at
    one margin round it (`ring_agreement`) on at least `outline_min_ring` of the side
    stretches and on `wide_ring_margin` more than round the first, and its lines do not run
    on (`_runs_on`). The first search's grid under a hand is often the dice's or the hand's
    edges a few percent off, which turn against the board's edge (development 80000+ 42:
    0.38 against the wide grid's 0.92)."""
    colour = _colour(frame_bgr)
    ring = ring_agreement(colour, second.h, second.files, second.ranks)
    if ring < max(s.outline_min_ring, ring_agreement(colour, first.h, first.files, first.ranks)
                  + s.wide_ring_margin):
        return False
    return not _runs_on(colour, second, s)


def _ringed(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> bool:
    """Whether a 3x3 grid that meets few of its line ends has the board's edge round it at one
    margin on at least `few_ends_min_ring` of its sides' stretches (`ring_agreement`). The
    grids kept so that fell on the dice, a hand or the table read 0.12-0.29 on the
    development frames, the board's own 0.33 and more ("Session 12 (3)")."""
    return not s.few_ends_min_ring or ring_agreement(
        _colour(frame_bgr), pose.h, pose.files, pose.ranks) >= s.few_ends_min_ring


def _runs_on(frame: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> bool:
    """Whether a 3x3 grid's lines, extended one square out, show on more than
    `few_ends_max_outside` of any side: a grid on part of a bigger pattern (a ruled sheet,
    the dice's edges) or one a square off. Asked only of grids meeting few line ends: on
    the development frames every such grid within 1% showed on at most a quarter of a side,
    while grids 5-50% off showed on a third to a half."""
    return profile_support(frame, pose.h, pose.files, pose.ranks).outside > s.few_ends_max_outside


def _confirmed(frame: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> bool:
    """Whether a 3x3 grid that meets few line ends (a hand over the board hides them) is
    still the board's: its lines do not run on beyond it (`_runs_on`), and they are printed
    lines centred where it puts them on at least `wide_confirm_ridge` of them (`ridge_score`;
    a hand's or a die's edges are no printed lines). Checkers without lines are not
    confirmed: the squares' alternating tones (`checker_steps`) held under the development
    frames' wrong grids with a hand as well."""
    files, ranks = pose.files, pose.ranks
    if _runs_on(frame, pose, s):
        return False
    polarity = ridge_polarity(line_ridges(frame, pose.h, files, ranks, 0.15))
    if polarity == 0:
        return False
    return ridge_score(frame, pose.h, files, ranks, polarity) >= s.wide_confirm_ridge * (files + ranks + 2)


def _line_ends(frame_bgr: NDArray[np.uint8], pose: BoardPose) -> float:
    """line_ends on the frame as _find reads it."""
    return line_ends(_colour(frame_bgr), pose.h, pose.files, pose.ranks)


def _colour(frame_bgr: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The frame as the fits read it: itself in colour, else grey (NoBoardError for a frame
    that is neither, see `to_grey`). A 3x3 frame passes here up to four times: a colour
    frame is not converted to grey only to be thrown away."""
    if (isinstance(frame_bgr, np.ndarray) and frame_bgr.dtype == np.uint8 and frame_bgr.size
            and frame_bgr.ndim == 3 and frame_bgr.shape[2] == 3):
        return frame_bgr
    return to_grey(frame_bgr)


def _find_twice(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings) -> BoardPose:
    """_find, and when it finds no board, once more at a finer edge threshold."""
    try:
        return _find(frame_bgr, files, ranks, s)
    except NoBoardError as first:
        if not s.retry_canny_percentile:
            raise
        # Faint printed lines beside strong edges (dice, the board's own edge) can fall under
        # an edge threshold set by the image's strongest edges: look once more, finer.
        try:
            return _find(frame_bgr, files, ranks, replace(s, canny_percentile=s.retry_canny_percentile))
        except NoBoardError:
            raise first from None


def _find_big(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings) -> BoardPose:
    """A board bigger than 3x3: `_find_twice`, and where it refuses, the same search at each
    Canny threshold on lattices pairing the third line direction with each of the two families
    (`third_family_big`). The two families are the two strongest directions; where the lines
    of the pieces, a hand or the table's grain make a direction within 25-45 degrees of the
    board's first stronger than its second, the board's second direction is left out, though
    every one of its lines was found. Only where both searches refuse, so that no grid found
    now changes and frames found at the first try pay nothing."""
    try:
        return _find_twice(frame_bgr, files, ranks, s)
    except NoBoardError as first:
        if not s.third_family_big:
            raise
        for percentile in dict.fromkeys((s.canny_percentile, s.retry_canny_percentile or s.canny_percentile)):
            try:
                return _find(frame_bgr, files, ranks, replace(s, canny_percentile=percentile), third=True)
            except NoBoardError:
                pass
        raise first from None


def _find(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings,
          third: bool = False) -> BoardPose:
    """The grid of lattices from the two line families (with `third`, from the third
    direction paired with each of them instead: `_find_big`)."""
    colour = _colour(frame_bgr)
    work, scale = _work_copy(colour, s.work_width)
    edges = edge_map(work, low_ratio=s.canny_low_ratio, clahe_clip=s.clahe_clip,
                     percentile=s.canny_percentile)
    if np.count_nonzero(edges) < 2 * (files + ranks) * s.min_square_px:
        raise NoBoardError("no board: the frame has almost no edges (blank or dark)")
    near = NearestEdges.of(edges, work)
    lines = hough_lines(edges, s, near)
    fam_a, fam_b = split_families(lines, s.family_spread_deg)
    if len(fam_a) < 2 or len(fam_b) < 2:
        raise NoBoardError("no board: no two families of straight lines in view")
    centre = np.array([work.shape[1] / 2, work.shape[0] / 2])
    pairs = [(fam_a, fam_b)]
    if third:
        fam_c = third_family(lines, fam_a, fam_b, s.family_spread_deg)
        if len(fam_c) < max(2, s.third_family_big):
            raise NoBoardError("no board: no third direction of straight lines in view")
        pairs = [(fam_a, fam_c), (fam_b, fam_c)]
    elif small_board(files, ranks) and s.third_family_lines:
        # a ruled sheet or other clutter beside a small board can outnumber one of the
        # board's two directions: the board's is then the third
        fam_c = third_family(lines, fam_a, fam_b, s.family_spread_deg)
        if len(fam_c) >= s.third_family_lines:
            pairs += [(fam_a, fam_c), (fam_b, fam_c)]
    found: list[tuple[_Lattice, list[tuple[float, FloatArray]]]] = []
    for one, two in pairs:
        for lattice in lattice_hypotheses(sort_family(one, centre), sort_family(two, centre), work.shape, s):
            found.append((lattice, lattice_windows(lattice, near, files, ranks, s)))
    windows = _banded_windows(near, found, files, ranks, s)
    windows.sort(key=lambda sh: -sh[0])
    scored: list[tuple[float, FloatArray]] = []
    top = [h for _, h in windows[: 3 * s.chamfer_candidates]]
    for h, lost in zip(top, _banded(near, top, files, ranks, s), strict=True):
        sup = _support(near, h, files, ranks, s)
        scored.append((sup.score() - lost if sup.visible >= 0.75 else -1.0, h))
    if not scored:
        raise NoBoardError(f"no board: no {files}x{ranks} grid of lines in view")
    scored.sort(key=lambda sh: -sh[0])
    passing: list[tuple[float, FloatArray]] = []                 # the grids that pass
    closest: tuple[float, FloatArray, Support] | None = None   # the best of all (to say why not)
    tried: list[FloatArray] = []
    for _, h in scored[: s.chamfer_candidates]:
        pulled = chamfer_fit(near, h, files, ranks, s.chamfer_radii_px)
        if pulled is None or _moved(h, pulled, files, ranks) > 0.5:
            pulled = h
        # the grid and its four one-square shifts: a hand over an outer row or a board's
        # border line can make the first guess one square off
        for dx, dy in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
            shifted = pulled @ np.array([[1.0, 0, dx], [0, 1.0, dy], [0, 0, 1.0]])
            if any(_moved(shifted, other, files, ranks) < 0.3 for other in tried):
                continue
            tried.append(shifted)
            sup = _support(near, shifted, files, ranks, s)
            score = sup.score() if sup.visible >= 0.75 else -1.0
            if closest is None or score > closest[0]:
                closest = (score, shifted, sup)
            if sup.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is None:
                passing.append((score, shifted))
    if not passing:
        assert closest is not None
        why = closest[2].reason(s.min_support, s.min_contrast, s.max_outside_ratio)
        raise NoBoardError(f"no board: {why or 'no grid of that size'}")
    lost = _banded(near, [h for _, h in passing], files, ranks, s)
    passing = [(score - float(k), h) for (score, h), k in zip(passing, lost, strict=True)]
    passing.sort(key=lambda sh: -sh[0])
    if BoardPose.from_homography(passing[0][1], files, ranks).square_size_px() < s.min_square_px:
        raise NoBoardError("no board: the grid's squares are too small to read")
    grids = [_to_frame(h, scale) for _, h in passing]
    if small_board(files, ranks) and s.small_nudges:
        return canonical(_best_reached(colour, grids, files, ranks, s), files, ranks)
    return canonical(_first_confirmed(colour, grids, files, ranks, s, near, scale), files, ranks)


def _first_confirmed(frame: NDArray[np.uint8], grids: list[FloatArray], files: int, ranks: int,
                     s: LocaliseSettings, near: NearestEdges | None = None, scale: float = 1.0) -> FloatArray:
    """The best grid by edge support (at the work size) that, refined, its full-resolution
    line profiles confirm, trying the next best few in turn: at the work size a grid a
    square off (onto a board's margin, its labels or its border) can score as well as the
    true one, while at full resolution the lines it would continue into show. The best one
    refined when none is confirmed, unless (`refuse_unconfirmed`) its own lines show and tell
    against it (lines everywhere, or running on beyond it) or an outer file or rank of it is
    bare (`_band_loss`: the table or the margin taken for squares): the grids that pass only
    because a hand or faint lines hide what would refuse them are kept, the others are
    guesses, mostly 30% or more off where they were measured ("Session 12 (2)"). With
    `near` (the work copy's edges, `scale` to it), a grid after the first is confirmed only if
    its outer files and ranks are crossed by its inner lines no worse than the first's
    (`_band_loss`): past a best grid a hand hides part of, the next is often the window a
    row off onto the bare margin, whose lines at full resolution show as well."""
    first: tuple[FloatArray, float, ProfileSupport] | None = None
    for k, h in enumerate(grids[: s.confirm_candidates]):
        fitted = refine(frame, h, files, ranks, s)
        # 8 samples a square: 3 (the window search's) can tie a hand's grid with the board's
        loss = 0.0 if near is None else float(
            _banded(near, [_from_frame(fitted, scale)], files, ranks, s, per_cell=8)[0])
        support = profile_support(frame, fitted, files, ranks)
        if first is None:
            first = (fitted, loss, support)
        if support.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is None and (
                k == 0 or loss <= first[1]) and not _adrift(frame, fitted, files, ranks, s):
            return fitted
    assert first is not None
    fitted, loss, support = first
    if _adrift(frame, fitted, files, ranks, s):
        raise NoBoardError("no board: the grid's lines stop nowhere and no board edge runs round it")
    if s.refuse_unconfirmed and (loss > 0 or support.grid >= s.min_support):
        raise NoBoardError(f"no board: {support.reason(s.min_support, s.min_contrast, s.max_outside_ratio)}")
    return fitted


def _adrift(frame: NDArray[np.uint8], h: FloatArray, files: int, ranks: int, s: LocaliseSettings) -> bool:
    """Whether a grid of a board bigger than 3x3 is held by nothing of the board's: fewer
    than `adrift_ends` of its inner lines meet its outer lines (`line_ends`) and the board's
    edge shows at one margin round it on fewer than `adrift_ring` of its sides' stretches
    (`ring_agreement`). Such grids, confirmed by their profiles, were a hand's, the table's
    grain or a window rows off onto the margin (30-118% off on the development frames,
    "Session 13"); the board's own grids show one or the other, even under a hand."""
    if not s.adrift_ends or line_ends(frame, h, files, ranks) >= s.adrift_ends:
        return False
    return ring_agreement(frame, h, files, ranks) < s.adrift_ring


def _best_reached(frame: NDArray[np.uint8], grids: list[FloatArray], files: int, ranks: int,
                  s: LocaliseSettings, reach: float = float("inf")) -> FloatArray:
    """On a 3x3 board the coarse grid can be 0.1-0.3 square off at a corner (turned or
    sheared a little), and the fit started there locks an outermost line onto a border line
    or a cell's own frame, while started nearer it finds the grid. So the best grid is fitted
    from itself and from nudges of it (each family shifted, spaced and turned a little either
    way), the next best grids from themselves, and the fit kept whose inner lines best meet
    its outermost lines and stop there (`line_ends`); among those about as good, the one that
    most starts reached (where the lines are printed, the one whose lines most show a printed
    line where it puts them, if clearly so: `_ridge_judge`). NoBoardError when even the best
    meets fewer than `min_line_ends`:
    on the benchmark's 3x3 frames every grid found within 1% met at least that, while most
    grids found far off (a hand over the board, a ruled note sheet) met less."""
    starts = [*_nudged(grids[0], files, ranks, s.small_nudges), *grids[1:s.confirm_candidates]]
    fitted = [refine(frame, h, files, ranks, s) for h in starts]
    # a fit that ran off further than `reach` squares from the first grid is dropped
    fitted = [h for h in fitted if _moved(grids[0], h, files, ranks) <= reach] or [grids[0]]
    ends = [line_ends(frame, h, files, ranks) for h in fitted]
    if max(ends) < s.min_line_ends:
        raise NoBoardError(f"no board: only {max(ends):.0%} of the grid's inner lines meet its "
                           "outer lines (something over the board?)")
    good = [k for k, e in enumerate(ends) if e >= max(ends) - s.ends_slack]

    def reached(k: int) -> int:
        return sum(_moved(fitted[k], other, files, ranks) < s.same_fit_squares for other in fitted)

    pick = max(good, key=lambda k: (reached(k), ends[k], -k))
    if s.tie_ring_margin > 0:
        pick = _ring_tiebreak(frame, fitted, [k for k in good if reached(k) == reached(pick)], pick,
                              files, ranks, s)
    return fitted[_ridge_judge(frame, fitted, good, pick, files, ranks, s) if s.ridge_margin > 0 else pick]


def _ring_tiebreak(frame: NDArray[np.uint8], fitted: list[FloatArray], tied: list[int], pick: int,
                   files: int, ranks: int, s: LocaliseSettings) -> int:
    """Among distinct fits that as many starts reached (at least two: fixed points the fit
    is drawn to, not a start it stopped at) and that meet their line ends about as well, the
    one round which the board's edge shows at one margin (`ring_agreement`) by
    `tie_ring_margin` more than round the pick; the pick otherwise. A fit a few hundredths
    of a square off turns or shifts one side against the board's edge, the true one keeps it
    at one margin all round (development 80000+ 32: 0.75 against 0.50)."""
    rivals = [k for k in tied if _moved(fitted[k], fitted[pick], files, ranks) >= s.same_fit_squares]
    if not rivals or sum(_moved(fitted[pick], o, files, ranks) < s.same_fit_squares for o in fitted) < 2:
        return pick
    rings = {k: ring_agreement(frame, fitted[k], files, ranks) for k in [pick, *rivals]}
    best = max(rivals, key=lambda k: (rings[k], -k))
    return best if rings[best] >= rings[pick] + s.tie_ring_margin else pick


def _ridge_judge(frame: NDArray[np.uint8], fitted: list[FloatArray], good: list[int], pick: int,
                 files: int, ranks: int, s: LocaliseSettings) -> int:
    """On a 3x3 board whose lines are printed (darker or lighter than both their sides), the
    fit among those meeting their line ends about as well whose lines most show a printed
    line where it puts them (`ridge_score`), if it beats the pick by `ridge_margin`; the pick
    otherwise. Fits a few hundredths of a square off (an outer line on a cell's inset frame
    or beside a border line) meet their line ends as well as the true grid and can be reached
    by more starts, but miss the printed lines' centres. On a checker without lines no fit
    has ridges to show, and the pick stands."""
    polarity = line_polarity(frame, fitted[pick], files, ranks, 0.15)
    if polarity == 0:
        return pick
    scores = {k: ridge_score(frame, fitted[k], files, ranks, polarity) for k in good}
    best = max(good, key=lambda k: (scores[k], -k))
    return best if scores[best] > (1 + s.ridge_margin) * scores[pick] else pick


def _nudged(h: FloatArray, files: int, ranks: int, nudges: tuple[float, ...]) -> list[FloatArray]:
    """`h` and, for each family of lines on its own, `h` with them shifted by `nudges[0]`
    squares, spaced `nudges[1]` wider or closer, and turned by `nudges[2]` (squares across
    per square along), each either way."""
    shift, spacing, turn = nudges
    out = [h]
    for axis, count, other in ((0, files, ranks), (1, ranks, files)):
        for sign in (-1.0, 1.0):
            moves = [np.eye(3) for _ in range(3)]
            moves[0][axis, 2] = sign * shift
            moves[1][axis, axis] += sign * spacing
            moves[1][axis, 2] = -sign * spacing * count / 2   # about the board's middle
            moves[2][axis, 1 - axis] = sign * turn
            moves[2][axis, 2] = -sign * turn * other / 2
            out += [h @ m for m in moves]
    return out


def _support(near: NearestEdges, h: FloatArray, files: int, ranks: int, s: LocaliseSettings) -> Support:
    return grid_support(near, h, files, ranks, tol_px=s.support_tol_px, per_square=s.samples_per_square,
                        max_angle_deg=s.support_angle_deg)


def _moved(h0: FloatArray, h1: FloatArray, files: int, ranks: int) -> float:
    """Largest corner displacement between two poses, in squares; infinite where either
    sends a corner to infinity (a degenerate grid, met on frames of clutter)."""
    with np.errstate(all="ignore"):
        c0 = apply_homography(h0, board_corners(files, ranks))
        c1 = apply_homography(h1, board_corners(files, ranks))
        side = np.linalg.norm(c0 - np.roll(c0, -1, axis=0), axis=1).mean() / ((files + ranks) / 2)
        moved = float(np.max(np.linalg.norm(c1 - c0, axis=1)) / max(side, 1e-9))
    return moved if np.isfinite(moved) else float("inf")


# ---------------------------------------------------------------- tracking


def track(frame_bgr: NDArray[np.uint8], previous: BoardPose, *,
          settings: TrackSettings | None = None) -> BoardPose | None:
    """The board's pose in this frame, following `previous` by a small move; None when it
    cannot follow (moved too far, hidden, or gone): run find_board again.

    The grid lines' profiles are sampled around the previous pose (one remap of a few
    thousand points, no edge map), and the pose moved rigidly in the board's plane (slid,
    turned, or the camera nudged a few pixels) to their peaks, band by band: only that,
    so a hand's outline over part of the grid is outvoted by the lines elsewhere instead of
    bending the grid towards it. The result is kept only if its lines show and the lines
    one square outside do not (a grid that slipped by a square would fail that). The
    corners keep their names, whichever corner `previous` calls a1."""
    return _follow(frame_bgr, previous, settings or default_settings().track, rigid=True)


def refit(frame_bgr: NDArray[np.uint8], pose: BoardPose, *,
           settings: TrackSettings | None = None) -> BoardPose:
    """The pose refitted in full, perspective too, on a frame where the board is still and
    nothing covers it; `pose` itself where that fit is not supported. Tracking keeps the
    view's perspective as it was found, so this is what follows a camera tilted a little,
    and it sets the crops of a reading exactly where the squares are."""
    s = settings or default_settings().track
    # Once a reading, so it can afford the careful schedule: more bands, more iterations.
    careful = replace(s, bands=s.refit_bands, iterations=s.refit_iterations)
    fitted = _follow(frame_bgr, pose, careful, rigid=False)
    return pose if fitted is None else fitted


def _follow(frame_bgr: NDArray[np.uint8], previous: BoardPose, s: TrackSettings, *,
            rigid: bool) -> BoardPose | None:
    if not isinstance(frame_bgr, np.ndarray) or frame_bgr.ndim not in (2, 3) or frame_bgr.size == 0:
        return None
    # The fit is not exactly symmetric under renaming the corners (the profiles' sampling
    # grid, argmax ties, rounding), so it always runs in one naming fixed by the image, and
    # the result goes back to the caller's naming.
    turns = upright_turns(previous)
    followed = _fit_near(frame_bgr, previous.rotated(turns), s, rigid=rigid)
    return None if followed is None else followed.rotated(-turns)


def upright_turns(pose: BoardPose) -> int:
    """The quarter turns that bring a pose to the naming `canonical` gives: a1 at the corner
    that puts rank 1 nearest the bottom of the image."""
    files, ranks = pose.files, pose.ranks
    centre = np.array([[files / 2, ranks / 2], [files / 2, ranks / 2 + 1]])
    step = 1 if files == ranks else 2

    def upness(k: int) -> float:
        pts = pose.rotated(k).to_image(centre)
        return float(pts[1, 1] - pts[0, 1])

    return min(range(0, 4, step), key=upness)


def _fit_near(frame_bgr: NDArray[np.uint8], previous: BoardPose, s: TrackSettings, *,
              rigid: bool) -> BoardPose | None:
    files, ranks = previous.files, previous.ranks
    # the region the board can have moved within (colour kept: some boards' lines differ
    # from the squares in hue more than in brightness)
    x0, y0, x1, y1 = _roi(previous.h, files, ranks, 1.0 + s.bands[0], frame_bgr.shape)
    if x1 - x0 < 16 or y1 - y0 < 16:
        return None
    grey = frame_bgr[y0:y1, x0:x1]
    shift = np.array([[1.0, 0, -x0], [0, 1.0, -y0], [0, 0, 1.0]])
    start = shift @ previous.h
    h = fit_profiles(grey, start, files, ranks, s.bands, iterations=s.iterations, along=s.along,
                     step=s.step, robust_rounds=1, rigid=rigid)
    if h is None:
        return None
    support = profile_support(grey, h, files, ranks, band=0.08, along=s.along, step=s.step)
    if support.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is not None:
        return None
    h = np.linalg.inv(shift) @ h
    if _moved(previous.h, h, files, ranks) > s.max_move:
        return None
    return BoardPose.from_homography(h, files, ranks)
