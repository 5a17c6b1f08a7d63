"""Lattices from two families of lines: hypotheses from pairs of neighbouring lines (the
unit square of a lattice), the line crossings that fall on each counted, the best refitted,
the window of the board's size chosen among its positions (bands of bare margin lose), and
the canonical pose (seen from above, rank 1 nearest the bottom of the image)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from referee.vision.gridfit import (
    NearestEdges,
    band_support,
    line_support,
    normaliser,
)
from referee.vision.line_profiles import (
    small_board,
)
from referee.vision.pose import (
    BoardPose,
    FloatArray,
    apply_homography,
)
from referee.vision.settings import LocaliseSettings


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
class Lattice:
    h: FloatArray               # lattice units -> work pixels
    labels: NDArray[np.int64]   # (n, 2) integer lattice coordinates of inlier crossings


def lattice_hypotheses(fam_a: FloatArray, fam_b: FloatArray, image_shape: tuple[int, ...],
                       s: LocaliseSettings) -> list[Lattice]:
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
    out: list[Lattice] = []
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


def _refit_lattice(h: FloatArray, homog: FloatArray, tol: float) -> Lattice | None:
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
    return Lattice(h, labels)


def lattice_windows(lattice: Lattice, near: NearestEdges, files: int, ranks: int,
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
        if s.out_of_view > 0 and not small_board(files, ranks):
            starts_u, starts_v = us[1:len(sum_u) + 1], vs[1:len(sum_v) + 1]
            scores[~windows_in_view(lattice.h, starts_u, starts_v, (fw, rw), near.dist.shape,
                                    s.out_of_view)] = -np.inf
        flat = scores.ravel()
        best: list[tuple[float, FloatArray]] = []
        for k in np.argsort(-flat, kind="stable")[:keep]:
            if not np.isfinite(flat[k]):
                break
            a, b = divmod(int(k), len(sum_v))
            u0, v0 = us[a + 1], vs[b + 1]
            t = (np.array([[0.0, 1.0, u0], [1.0, 0.0, v0], [0, 0, 1.0]]) if transposed
                 else np.array([[1.0, 0.0, u0], [0.0, 1.0, v0], [0, 0, 1.0]]))
            best.append((float(flat[k]), t))
        found += best
    found.sort(key=lambda st: -st[0])
    # with the band loss on, the best few more each way round, for `banded_windows` to cut
    return found if keep > s.windows_per_lattice else found[: s.windows_per_lattice]


def windows_in_view(h: FloatArray, starts_u: FloatArray, starts_v: FloatArray, size: tuple[int, int],
                    shape: tuple[int, ...], out_of_view: float) -> NDArray[np.bool_]:
    """(len(starts_u), len(starts_v)): whether the window of `size` squares from each pair of
    starts on lattice `h` (lattice units -> pixels of an image of `shape`) has every corner
    within `out_of_view` of its mean square side beyond the image. A board is looked for in
    full view (`board_finder.in_full_view` refuses the rest): a window running out of the
    frame is held by nothing there, and beside a board near the frame's edge it could win
    over the board's own, whose line beyond the board (the board's edge) costs it. Not asked
    on 3x3 boards, whose own search (nudged fits, the wide search) starts from such windows
    too (a 3x3 board under a hand, test seed 80093, was lost without them)."""
    u = starts_u[:, None, None] + np.array([0, size[0], size[0], 0])[None, None, :]
    v = starts_v[None, :, None] + np.array([0, 0, size[1], size[1]])[None, None, :]
    u, v = np.broadcast_arrays(u, v)
    with np.errstate(all="ignore"):
        pts = apply_homography(h, np.column_stack([u.ravel(), v.ravel()])).reshape(*u.shape, 2)
        sides = np.linalg.norm(pts - np.roll(pts, -1, axis=2), axis=3)
        square = ((sides[..., 0] + sides[..., 2]) / size[0] + (sides[..., 1] + sides[..., 3]) / size[1]) / 4
        slack = out_of_view * square[..., None] + 0.5
        height, width = shape[:2]
        inside = ((pts[..., 0] >= -slack) & (pts[..., 0] <= width - 1 + slack)
                  & (pts[..., 1] >= -slack) & (pts[..., 1] <= height - 1 + slack))
    return np.asarray(inside.all(axis=2), dtype=np.bool_)


SIDES = ("on the left", "at the top", "on the right", "at the bottom")


def out_sides(h: FloatArray, files: int, ranks: int, shape: tuple[int, ...],
              out_of_view: float) -> tuple[str, ...]:
    """The sides of an image of `shape` that a corner of the grid `h` (board -> pixels) lies
    more than `out_of_view` of its mean square side beyond, as `SIDES` names them; none where
    `out_of_view` is 0 (the check off)."""
    if out_of_view <= 0:
        return ()
    with np.errstate(all="ignore"):
        corners = apply_homography(h, np.array([[0.0, 0.0], [files, 0.0], [files, ranks], [0.0, ranks]]))
        sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
        square = ((sides[0] + sides[2]) / files + (sides[1] + sides[3]) / ranks) / 4
        height, width = shape[:2]
        beyond = np.stack([-corners[:, 0], -corners[:, 1], corners[:, 0] - (width - 1),
                           corners[:, 1] - (height - 1)])
        past = np.nan_to_num(beyond.max(axis=1) - 0.5, nan=np.inf) > out_of_view * square
    return tuple(side for side, out in zip(SIDES, past, strict=True) if out)


def _bands_on(files: int, ranks: int, s: LocaliseSettings) -> bool:
    """Whether windows lose for bare outer bands (`band_floor`): not on 3x3 boards, which have
    their own search."""
    return s.band_floor > 0 and not small_board(files, ranks)


def banded_windows(near: NearestEdges, found: list[tuple[Lattice, list[tuple[float, FloatArray]]]],
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


def banded(near: NearestEdges, hs: list[FloatArray], files: int, ranks: int,
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
