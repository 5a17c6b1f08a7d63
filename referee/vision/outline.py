"""A small board's grid from its outline: the board's edge against the table (or a border
line printed around the grid) is a quadrilateral of four long lines, concentric with the
grid at the same distance (the margin, in squares) on every side. A hand over the middle of
a 3x3 board hides most of its line ends, and dice and the hand's outline outnumber its grid
lines, but the outline's four sides often still show along most of their length: every
missed or refused development 3x3 frame but two had its four sides among the Hough lines.

`outline_quads` pairs two lines of each direction family into quadrilaterals whose four
sides are supported by edges along their length (read from one cumulative profile a line,
so that every pair of crossings on it costs one subtraction); `margin_grids` shrinks each
such outline by the margin whose grid lines the edge map supports best against the lines
half-way between them. `ring_agreement` reads how concentric the board's edge is round a
grid, and `edge_centred` moves a grid so that it is."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.gridfit import NearestEdges, edge_hits, line_support
from referee.vision.pose import FloatArray

RESOLUTION = 200   # outline positions (per unit of the outline) whose line support is read


@dataclass(frozen=True)
class _LineHits:
    """A line sampled every pixel across the image: the foot of its normal through the
    origin, its direction, the samples' positions along it from the foot, and the running
    counts of the samples an edge along it supports and of those in view."""
    foot: FloatArray
    direction: FloatArray
    t: FloatArray
    hits: FloatArray
    seen: FloatArray

    def at(self, points: FloatArray) -> FloatArray:
        """Positions along the line of `points` on it (n, 2); far off where not finite."""
        return np.asarray(np.nan_to_num((points - self.foot) @ self.direction, nan=1e9), dtype=np.float64)


def _cumulative_hits(near: NearestEdges, line: FloatArray, tol_px: float, max_angle_deg: float) -> _LineHits:
    """`_LineHits` of a line (a x + b y + c = 0, unit normal)."""
    normal = line[:2]
    direction = np.array([-normal[1], normal[0]])
    foot = -line[2] * normal
    rows, cols = near.dist.shape
    reach = float(np.hypot(rows, cols)) + abs(float(line[2]))
    t = np.arange(-reach, reach, 1.0)
    xy = foot[None, :] + t[:, None] * direction[None, :]
    ones = np.ones((len(t), 1))
    hit, ok = edge_hits(near, np.hstack([xy, ones]), np.hstack([xy + direction, ones]), tol_px,
                        max_angle_deg)
    return _LineHits(foot, direction, t, np.concatenate([[0.0], np.cumsum(hit)]),
                     np.concatenate([[0.0], np.cumsum(ok)]))


def _side_support(line: _LineHits, at: FloatArray) -> FloatArray:
    """(n, n): the share of the line between each two of its crossings `at` (positions along
    it) that edges support; 0 where less than half of that stretch is in view."""
    lo = np.searchsorted(line.t, np.minimum(at[:, None], at[None, :]))
    hi = np.searchsorted(line.t, np.maximum(at[:, None], at[None, :]))
    count = line.hits[hi] - line.hits[lo]
    view = line.seen[hi] - line.seen[lo]
    with np.errstate(all="ignore"):
        share = np.where(view >= 0.5 * (hi - lo), count / np.maximum(view, 1.0), 0.0)
    return np.asarray(np.nan_to_num(share), dtype=np.float64)


def outline_quads(fam_a: FloatArray, fam_b: FloatArray, near: NearestEdges, *, keep: int,
                  min_side: float, min_side_px: float, tol_px: float,
                  max_angle_deg: float) -> FloatArray:
    """(k, 4, 2): up to `keep` quadrilaterals of two lines of each family (homogeneous rows,
    unit normals), corners in order around, whose every side edges support on at least
    `min_side` of its length, the longest supported first; sides at least `min_side_px` long,
    opposite sides alike and not a sliver (a board tilted at most ~45 degrees), corners
    about in view."""
    na, nb = len(fam_a), len(fam_b)
    if na < 2 or nb < 2:
        return np.zeros((0, 4, 2))
    with np.errstate(all="ignore"):
        cross = np.cross(fam_a[:, None, :], fam_b[None, :, :])
        pts = cross[..., :2] / cross[..., 2:3]                         # (na, nb, 2)
    prof_a = [_cumulative_hits(near, line, tol_px, max_angle_deg) for line in fam_a]
    prof_b = [_cumulative_hits(near, line, tol_px, max_angle_deg) for line in fam_b]
    # side support of line a_i between its crossings with b_k and b_l (and the reverse)
    side_a = np.stack([_side_support(p, p.at(pts[i])) for i, p in enumerate(prof_a)])      # (na, nb, nb)
    side_b = np.stack([_side_support(p, p.at(pts[:, k])) for k, p in enumerate(prof_b)])   # (nb, na, na)
    ia, ja = np.triu_indices(na, 1)
    kb, lb = np.triu_indices(nb, 1)
    sides = np.stack([side_a[ia][:, kb, lb], side_a[ja][:, kb, lb],
                      side_b[kb][:, ia, ja].T, side_b[lb][:, ia, ja].T], axis=-1)
    corners = np.stack([pts[ia][:, kb], pts[ja][:, kb], pts[ja][:, lb], pts[ia][:, lb]], axis=2)
    rows, cols = near.dist.shape
    with np.errstate(all="ignore"):
        lengths = np.linalg.norm(corners - np.roll(corners, -1, axis=2), axis=-1)
        ratio_a = lengths[..., 0] / lengths[..., 2]
        ratio_b = lengths[..., 1] / lengths[..., 3]
        aspect = (lengths[..., 0] + lengths[..., 2]) / (lengths[..., 1] + lengths[..., 3])
        ok = sides.min(axis=-1) >= min_side
        ok &= np.all(np.isfinite(corners), axis=(2, 3)) & (lengths.min(axis=-1) >= min_side_px)
        ok &= (np.maximum(ratio_a, 1 / ratio_a) < 1.6) & (np.maximum(ratio_b, 1 / ratio_b) < 1.6)
        ok &= np.maximum(aspect, 1 / aspect) < 2.5
        ok &= np.all((corners[..., 0] > -0.1 * cols) & (corners[..., 0] < 1.1 * cols)
                     & (corners[..., 1] > -0.1 * rows) & (corners[..., 1] < 1.1 * rows), axis=-1)
    found = np.argwhere(ok)
    if len(found) == 0:
        return np.zeros((0, 4, 2))
    # the supported length: many small quadrilaterals (a die's, a square's) are supported all
    # round as well as the board's outline, which is the longest
    score = (sides * lengths).sum(axis=-1)[ok]
    best = found[np.argsort(-score, kind="stable")[:keep]]
    return np.asarray(corners[best[:, 0], best[:, 1]], dtype=np.float64)


def margin_grids(near: NearestEdges, quads: FloatArray, files: int, ranks: int, *,
                 margins: tuple[float, float], tol_px: float,
                 max_angle_deg: float) -> list[tuple[float, FloatArray]]:
    """(score, board -> image homography) for each outline: the grid inside it at the margin
    (squares, the same on every side, within `margins`) whose files x ranks grid lines edges
    support best, less the support of the lines half-way between them; best first."""
    unit = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    positions = np.linspace(0.0, 1.0, RESOLUTION + 1)
    ms = np.arange(margins[0], margins[1] + 1e-9, 0.01)
    out: list[tuple[float, FloatArray]] = []
    for quad in quads:
        h = np.asarray(cv2.getPerspectiveTransform(unit, quad.astype(np.float32)), dtype=np.float64)
        score = np.zeros(len(ms))
        for vertical, count in ((True, files), (False, ranks)):
            support = np.nan_to_num(line_support(near, h, positions, vertical, (0.15, 0.85), tol_px=tol_px,
                                                 samples=24, max_angle_deg=max_angle_deg))
            lines = (np.arange(count + 1)[None, :] + ms[:, None]) / (count + 2 * ms[:, None])
            halves = (np.arange(count)[None, :] + 0.5 + ms[:, None]) / (count + 2 * ms[:, None])
            score += (support[np.rint(lines * RESOLUTION).astype(np.int64)].mean(axis=1)
                      - support[np.rint(halves * RESOLUTION).astype(np.int64)].mean(axis=1)) / 2
        k = int(np.argmax(score))
        m = float(ms[k])
        # board (x, y) -> outline unit square: ((x + m) / (files + 2m), (y + m) / (ranks + 2m))
        shrink = np.array([[1 / (files + 2 * m), 0, m / (files + 2 * m)],
                           [0, 1 / (ranks + 2 * m), m / (ranks + 2 * m)], [0, 0, 1.0]])
        out.append((float(score[k]), h @ shrink))
    out.sort(key=lambda sh: -sh[0])
    return out


@dataclass(frozen=True)
class _SideSteps:
    """The colour steps read outwards from a grid's four sides (`_side_steps`)."""
    offsets: FloatArray              # (k,) squares beyond the outermost line, between samples
    steps: list[FloatArray]          # per side: (segments, k, channels) colour steps
    seen: list[NDArray[np.bool_]]    # per side: (segments,) stretches in view
    along: list[FloatArray]          # per side: (segments,) where each stretch lies along it


def _side_steps(image: NDArray[np.uint8], h: FloatArray, files: int, ranks: int, *,
                reach: tuple[float, float], segments: int, along: int, step: float) -> _SideSteps:
    """Each side of a grid (board -> image) cut into `segments` stretches and read outwards from
    `reach[0]` to `reach[1]` squares beyond its outermost line: the colour steps, averaged along
    each stretch. Sides 0 and 1 lie beyond the first and last file line (x = 0, x = files), 2
    and 3 beyond the first and last rank line; each stretch is clear of the corners by a tenth
    of a square."""
    offs = np.arange(reach[0], reach[1] + 1e-9, step)
    rows, cols = image.shape[:2]
    steps: list[FloatArray] = []
    seen: list[NDArray[np.bool_]] = []
    centres: list[FloatArray] = []
    for side, length in enumerate((ranks, ranks, files, files)):
        t = 0.1 + (np.arange(segments * along) + 0.5) / (segments * along) * (length - 0.2)
        tt, oo = np.meshgrid(t, offs, indexing="ij")
        across = -oo if side in (0, 2) else (files if side == 1 else ranks) + oo
        pts = np.stack([across, tt] if side < 2 else [tt, across], axis=-1)
        mapped = pts.reshape(-1, 2) @ h[:, :2].T + h[:, 2]
        with np.errstate(all="ignore"):
            xy = (mapped[:, :2] / mapped[:, 2:3]).astype(np.float32)
        inside = (mapped[:, 2] > 0) & (xy[:, 0] >= 0) & (xy[:, 0] <= cols - 1)
        inside &= (xy[:, 1] >= 0) & (xy[:, 1] <= rows - 1)
        xy = np.nan_to_num(xy).reshape(len(t), len(offs), 2)
        sampled = cv2.remap(image, xy[:, :, 0], xy[:, :, 1], cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_REPLICATE).astype(np.float64)
        if sampled.ndim == 2:
            sampled = sampled[:, :, None]
        steps.append(np.diff(sampled, axis=1).reshape(segments, along, len(offs) - 1, -1).mean(axis=1))
        seen.append(np.asarray(inside.reshape(segments, along * len(offs)).mean(axis=1) > 0.95))
        centres.append(t.reshape(segments, along).mean(axis=1))
    return _SideSteps(0.5 * (offs[:-1] + offs[1:]), steps, seen, centres)


def _peaks(sides: _SideSteps) -> tuple[FloatArray, FloatArray]:
    """The offset of each stretch in view's strongest colour step, and that step (channels)."""
    offsets: list[float] = []
    vectors: list[FloatArray] = []
    for steps, seen in zip(sides.steps, sides.seen, strict=True):
        strength = np.sqrt((steps ** 2).sum(axis=-1))                   # (segments, offsets)
        for row, vec, ok in zip(strength, steps, seen, strict=True):
            if ok:
                k = int(np.argmax(row))
                offsets.append(float(sides.offsets[k]))
                vectors.append(vec[k])
    return np.array(offsets), (np.array(vectors) if vectors else np.zeros((0, 1)))


def _consensus(found: FloatArray, reach: tuple[float, float], tol: float, step: float) -> tuple[float, int]:
    """The offset most of `found` lie within `tol` of (the first such), and how many do."""
    centres = np.arange(reach[0], reach[1], step / 2)
    counts = [int((np.abs(found - c) <= tol).sum()) for c in centres]
    k = int(np.argmax(counts))
    return float(centres[k]), counts[k]


def ring_agreement(image: NDArray[np.uint8], h: FloatArray, files: int, ranks: int, *,
                   reach: tuple[float, float] = (0.1, 1.3), tol: float = 0.02, segments: int = 6,
                   along: int = 4, step: float = 0.01) -> float:
    """How much a grid (board -> image) sits inside an outline at one margin on every side:
    each side, cut into `segments` stretches, is read outwards (`_side_steps`), and this is the
    share of all the stretches whose strongest step lies within `tol` squares of the offset
    most of them agree on (the board's edge, or a border line around the grid); 0 with fewer
    than 8 stretches in view. A grid fitted a little off, or onto the dice or a hand, puts
    the board's edge at a different offset side by side."""
    found, _ = _peaks(_side_steps(image, h, files, ranks, reach=reach, segments=segments, along=along,
                                  step=step))
    if len(found) < 8:
        return 0.0
    return _consensus(found, reach, tol, step)[1] / (4 * segments)


def edge_centred(image: NDArray[np.uint8], h: FloatArray, files: int, ranks: int, *,
                 window: float, min_stretches: int, reach: tuple[float, float] = (0.1, 1.3),
                 tol: float = 0.02, segments: int = 6, along: int = 4,
                 step: float = 0.01) -> FloatArray | None:
    """The grid (board -> image) moved so that the board's edge round it is concentric with it.
    On each side's stretches (`_side_steps`) the edge is the step, within `window` squares of
    the offset most stretches' strongest steps agree on, of their colour change's sign (so
    the two sides of a border line are not mixed), at least half the stretch's strongest and
    half the agreeing steps' typical one. A straight line through them a side (at least
    `min_stretches` stretches), and the four lines are taken as the outline at one margin
    all round, the mean of the four sides' (the edge tells the grid's shift, turn and
    perspective, not its scale). None where a side shows too little of the edge."""
    sides = _side_steps(image, h, files, ranks, reach=reach, segments=segments, along=along, step=step)
    found, vectors = _peaks(sides)
    if len(found) < 8:
        return None
    centre, _ = _consensus(found, reach, tol, step)
    agreeing = vectors[np.abs(found - centre) <= tol]
    sign = agreeing.sum(axis=0)
    sign /= max(float(np.linalg.norm(sign)), 1e-9)
    least = 0.5 * float(np.median(np.linalg.norm(agreeing, axis=1)))
    lines = [_edge_line(sides, k, sign, centre, window, least, min_stretches) for k in range(4)]
    if any(line is None for line in lines):
        return None
    return _concentric(h, files, ranks, [line for line in lines if line is not None])


def _edge_line(sides: _SideSteps, side: int, sign: FloatArray, centre: float, window: float,
               least: float, min_stretches: int) -> FloatArray | None:
    """(a, b): the board's edge beyond `side` at offset a + b t (t along the side), fitted to
    the stretches that show it (sub-sample peaks of the step of sign `sign` near `centre`, at
    least `least` and half the stretch's strongest step), once more without those 0.02
    squares and 2.5 median residuals off; None with fewer than `min_stretches`."""
    offs = sides.offsets
    signed = sides.steps[side] @ sign                                  # (segments, offsets)
    strongest = np.sqrt((sides.steps[side] ** 2).sum(axis=-1)).max(axis=1)
    near = np.abs(offs - centre) <= window
    ts: list[float] = []
    found: list[float] = []
    for row, top, ok, t in zip(signed, strongest, sides.seen[side], sides.along[side], strict=True):
        k = int(np.argmax(np.where(near, row, -np.inf)))
        if not ok or row[k] < max(0.5 * top, least):
            continue
        sub = 0.0
        if 0 < k < len(row) - 1 and row[k - 1] - 2 * row[k] + row[k + 1] < 0:
            sub = 0.5 * (row[k - 1] - row[k + 1]) / (row[k - 1] - 2 * row[k] + row[k + 1])
        ts.append(float(t))
        found.append(float(offs[k] + sub * (offs[1] - offs[0])))
    if len(ts) < min_stretches:
        return None
    design = np.column_stack([np.ones(len(ts)), ts])
    target = np.array(found)
    line = np.linalg.lstsq(design, target, rcond=None)[0]
    resid = np.abs(target - design @ line)
    keep = resid <= max(0.02, 2.5 * float(np.median(resid)))
    if keep.sum() >= min_stretches:
        line = np.linalg.lstsq(design[keep], target[keep], rcond=None)[0]
    return np.asarray(line, dtype=np.float64)


def _concentric(h: FloatArray, files: int, ranks: int, lines: list[FloatArray]) -> FloatArray:
    """`h` moved so that the four edge lines (`_edge_line`, in its board units) are the outline
    at one margin all round, the mean of their offsets at the sides' middles."""
    (a0, b0), (a1, b1), (a2, b2), (a3, b3) = lines
    # homogeneous board lines: x = -(a0 + b0 y), x = files + a1 + b1 y, y = -(a2 + b2 x), ...
    sides = [np.array([1.0, b0, a0]), np.array([1.0, -b1, -files - a1]),
             np.array([b2, 1.0, a2]), np.array([-b3, 1.0, -ranks - a3])]
    corners = []
    for one, two in ((0, 2), (1, 2), (1, 3), (0, 3)):
        p = np.cross(sides[one], sides[two])
        corners.append(p[:2] / p[2])
    margin = float(np.mean([a + b * (ranks if k < 2 else files) / 2
                            for k, (a, b) in enumerate(lines)]))
    outline = np.array([[-margin, -margin], [files + margin, -margin], [files + margin, ranks + margin],
                        [-margin, ranks + margin]], dtype=np.float32)
    move = np.asarray(cv2.getPerspectiveTransform(outline, np.array(corners, dtype=np.float32)),
                      dtype=np.float64)
    moved = h @ move
    return np.asarray(moved / moved[2, 2], dtype=np.float64)
