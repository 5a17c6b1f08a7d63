"""Geometry shared by finding and tracking: colour edge maps, how well the edges support a
predicted grid (orientation-aware), the line-constraint homography solver, and an ICP pull of
a coarse grid onto its edges."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.pose import FloatArray

GreyImage = NDArray[np.uint8]


def _auto_high(channel: GreyImage, min_high: float, percentile: float) -> float:
    """Canny's high threshold from the image itself: a percentile of a sampled L1 gradient
    magnitude (so dim, low-contrast boards such as dark wood still give edges)."""
    sample = channel[::4, ::4]
    gx = cv2.Sobel(sample, cv2.CV_16S, 1, 0)
    gy = cv2.Sobel(sample, cv2.CV_16S, 0, 1)
    mag = (np.abs(gx.astype(np.int32)) + np.abs(gy.astype(np.int32))).ravel()
    k = int(percentile / 100 * (mag.size - 1))
    return max(min_high, float(np.partition(mag, k)[k]))


def edge_map(image: NDArray[np.uint8], *, low_ratio: float, clahe_clip: float = 0.0,
             min_high: float = 40.0, percentile: float = 90.0) -> GreyImage:
    """Canny edges of a grey or BGR image (`channel_edges`), each channel's high threshold
    set from its own gradients subsampled 4x (`_auto_high`)."""
    return channel_edges(image, low_ratio=low_ratio, clahe_clip=clahe_clip,
                         high_of=lambda blurred: _auto_high(blurred, min_high, percentile))


def channel_edges(image: NDArray[np.uint8], *, low_ratio: float, clahe_clip: float,
                  high_of: Callable[[GreyImage], float]) -> GreyImage:
    """Canny edges of a grey or BGR image, each colour channel's edges joined (squares that
    differ in hue more than in brightness still give edges): each channel, after optional
    CLAHE, blurred and given the high threshold `high_of` reads off it."""
    channels = [image] if image.ndim == 2 else [image[..., c] for c in range(image.shape[2])]
    out: GreyImage | None = None
    for channel in channels:
        if clahe_clip > 0:
            clahe = cv2.createCLAHE(clipLimit=clahe_clip, tileGridSize=(8, 8))
            channel = np.asarray(clahe.apply(channel), dtype=np.uint8)
        blurred = np.asarray(cv2.GaussianBlur(channel, (5, 5), 0), dtype=np.uint8)
        high = high_of(blurred)
        edges = np.asarray(cv2.Canny(blurred, high * low_ratio, high), dtype=np.uint8)
        out = edges if out is None else np.asarray(cv2.bitwise_or(out, edges), dtype=np.uint8)
    assert out is not None
    return out


@dataclass(frozen=True)
class Support:
    """Fractions of samples along predicted lines that lie on an edge."""

    inner: FloatArray      # per grid line (files + 1 + ranks + 1), NaN where out of view
    mid: float             # lines half-way between grid lines: what chance alone gives
    outside: FloatArray    # the grid lines' extensions one square beyond each of the four sides
    visible: float         # fraction of grid-line samples inside the image
    outside_mid: FloatArray  # the half-way lines' extensions there: what the surroundings give

    @property
    def mean(self) -> float:
        return float(np.nanmean(self.inner)) if np.any(np.isfinite(self.inner)) else 0.0

    @property
    def contrast(self) -> float:
        return self.mean - self.mid

    @property
    def outside_ratio(self) -> float:
        # Texture beyond the grid (wood grain along one family, ruled paper) supports the
        # half-way lines' extensions as much as the grid lines'; a bigger grid only the latter.
        out = np.nan_to_num(self.outside, nan=0.0) - np.nan_to_num(self.outside_mid, nan=0.0)
        return float(max(out.max(), 0.0)) / max(self.mean, 1e-6)

    def reason(self, min_support: float, min_contrast: float, max_outside_ratio: float) -> str | None:
        """Why this is not the grid, or None when it is."""
        if self.visible < 0.75:
            return "the grid is mostly out of view"
        if self.mean < min_support:
            return f"grid lines only {self.mean:.0%} supported by edges"
        if self.contrast < min_contrast:
            return "edges everywhere (noise or texture), no grid stands out"
        if self.outside_ratio > max_outside_ratio:
            return "the grid continues beyond the wanted size (a bigger board?)"
        return None

    def score(self) -> float:
        return self.contrast - 0.5 * max(0.0, self.outside_ratio - 0.5)


@lru_cache(maxsize=64)
def _samples(files: int, ranks: int,
             per_square: int) -> tuple[FloatArray, NDArray[np.int64], int, int, FloatArray]:
    """Board points along the grid lines, the half-way lines, and the grid lines' extensions
    one square beyond each side, with a group index per point and the direction along its
    line: (points, group, n_grid_lines, n_half_way_lines, directions). A grid that really
    continues shows its lines' extensions; a board's edge or border line beyond the grid
    runs parallel to it and does not."""
    pts: list[FloatArray] = []
    owner: list[NDArray[np.int64]] = []
    dirs: list[FloatArray] = []
    group = 0

    def add(xs: FloatArray, ys: FloatArray, vertical: bool, new_group: bool = True) -> None:
        nonlocal group
        pts.append(np.column_stack([xs, ys]))
        owner.append(np.full(len(xs), group, dtype=np.int64))
        dirs.append(np.tile([0.0, 1.0] if vertical else [1.0, 0.0], (len(xs), 1)))
        if new_group:
            group += 1

    ty = (np.arange(per_square * ranks) + 0.5) / per_square
    tx = (np.arange(per_square * files) + 0.5) / per_square
    for i in range(files + 1):
        add(np.full_like(ty, i), ty, True)
    for j in range(ranks + 1):
        add(tx, np.full_like(tx, j), False)
    n_grid = group
    for i in range(files):
        add(np.full_like(ty, i + 0.5), ty, True)
    for j in range(ranks):
        add(tx, np.full_like(tx, j + 0.5), False)
    n_mid = group - n_grid
    stub = 0.2 + 0.7 * (np.arange(per_square) + 0.5) / per_square  # clear of the crossing
    for half in (0.0, 0.5):  # the grid lines' extensions, then the half-way lines'
        y_lines = np.arange(ranks + (0 if half else 1)) + half
        x_lines = np.arange(files + (0 if half else 1)) + half
        for sign, base in ((-1.0, 0.0), (1.0, float(files))):  # y-lines extended past x = 0 / files
            for j in y_lines:
                add(base + sign * stub, np.full_like(stub, j), False, new_group=j == y_lines[-1])
        for sign, base in ((-1.0, 0.0), (1.0, float(ranks))):  # x-lines extended past y = 0 / ranks
            for i in x_lines:
                add(np.full_like(stub, i), base + sign * stub, True, new_group=i == x_lines[-1])
    return np.vstack(pts), np.concatenate(owner), n_grid, n_mid, np.vstack(dirs)


def grid_support(near: NearestEdges, h: FloatArray, files: int, ranks: int, *,
                 tol_px: float, per_square: int, max_angle_deg: float = 20.0) -> Support:
    """Support of the grid `h` (board -> these pixels): a sample of a predicted line counts
    when an edge pixel lies within `tol_px` and its gradient is across the line."""
    pts, owner, n_inner, n_mid, along = _samples(files, ranks, per_square)
    mapped = pts @ h[:, :2].T + h[:, 2]
    ahead = (pts + 0.05 * along) @ h[:, :2].T + h[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        xy = mapped[:, :2] / mapped[:, 2:3]
        direction = ahead[:, :2] / ahead[:, 2:3] - xy
    rows, cols = near.dist.shape
    ok = (mapped[:, 2] > 0) & (ahead[:, 2] > 0) & np.all(np.isfinite(xy), axis=1)
    ok &= (xy[:, 0] >= 0) & (xy[:, 0] <= cols - 1) & (xy[:, 1] >= 0) & (xy[:, 1] <= rows - 1)
    hit = np.zeros(len(pts), dtype=np.float64)
    xi = np.rint(xy[ok, 0]).astype(np.int64)
    yi = np.rint(xy[ok, 1]).astype(np.int64)
    label = near.nearest[yi, xi]
    d = direction[ok]
    d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
    across = np.abs(np.sum(near.normals[label] * d, axis=1))  # |cos| of gradient vs line
    hit[ok] = (near.dist[yi, xi] <= tol_px) & (across <= np.sin(np.radians(max_angle_deg)))
    n_lines = int(owner.max()) + 1
    seen = np.bincount(owner, weights=ok.astype(np.float64), minlength=n_lines)
    hits = np.bincount(owner, weights=hit, minlength=n_lines)
    total = np.bincount(owner, minlength=n_lines).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(seen >= 0.3 * total, hits / seen, np.nan)
    inner = frac[:n_inner]
    mid_seen = seen[n_inner:n_inner + n_mid].sum()
    mid = float(hits[n_inner:n_inner + n_mid].sum() / mid_seen) if mid_seen else 1.0
    visible = float(seen[:n_inner].sum() / total[:n_inner].sum())
    beyond = frac[n_inner + n_mid:]
    return Support(inner, mid, beyond[:4], visible, beyond[4:])


def line_support(near: NearestEdges, h: FloatArray, positions: FloatArray, vertical: bool,
                 span: tuple[float, float], *, tol_px: float, samples: int = 40,
                 max_angle_deg: float = 20.0) -> FloatArray:
    """Support of each lattice line x = p (vertical) or y = p, sampled over `span` of the
    other coordinate; NaN for lines mostly out of view."""
    t = span[0] + (np.arange(samples) + 0.5) / samples * (span[1] - span[0])
    hit, ok = _line_hits(near, h, positions, t, vertical, tol_px, max_angle_deg)
    seen = ok.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(seen >= 0.3 * samples, hit.sum(axis=1) / seen, np.nan)


def band_support(near: NearestEdges, hs: FloatArray, files: int, ranks: int, *, tol_px: float,
                 per_cell: int = 3, max_angle_deg: float = 20.0) -> FloatArray:
    """(len(hs), 4): for each grid (board -> image), the support of its inner lines where they
    cross its first and last file and its first and last rank of squares (in that order);
    NaN where mostly out of view. A board's bare margin or the table taken for a row of
    squares has none of the crossing lines a row of squares has."""
    pts, vertical, band = _band_points(files, ranks, per_cell)
    step = np.where(vertical[:, None], np.array([[0.0, 0.05]]), np.array([[0.05, 0.0]]))
    homog = np.column_stack([pts, np.ones(len(pts))])
    ahead_h = np.column_stack([pts + step, np.ones(len(pts))])
    mapped = np.einsum("kij,nj->kni", hs, homog).reshape(-1, 3)
    ahead = np.einsum("kij,nj->kni", hs, ahead_h).reshape(-1, 3)
    hit, ok = edge_hits(near, mapped, ahead, tol_px, max_angle_deg)
    onehot = (band[:, None] == np.arange(4)[None, :]).astype(np.float64)
    hits = hit.reshape(len(hs), -1) @ onehot
    seen = ok.reshape(len(hs), -1).astype(np.float64) @ onehot
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(seen >= 0.5 * onehot.sum(axis=0), hits / seen, np.nan), dtype=np.float64)


@lru_cache(maxsize=32)
def _band_points(files: int, ranks: int,
                 per_cell: int) -> tuple[FloatArray, NDArray[np.bool_], NDArray[np.int64]]:
    """Board points of `band_support`: along each inner line within each outer band, whether
    the line is a file line (vertical), and the band's number."""
    t = (np.arange(per_cell) + 0.5) / per_cell
    pts: list[FloatArray] = []
    vertical: list[NDArray[np.bool_]] = []
    band: list[NDArray[np.int64]] = []
    for k, u0 in enumerate((0, files - 1)):   # the first and last file, crossed by rank lines
        uu, vv = np.meshgrid(u0 + t, np.arange(1, ranks, dtype=np.float64))
        pts.append(np.column_stack([uu.ravel(), vv.ravel()]))
        vertical.append(np.zeros(uu.size, dtype=np.bool_))
        band.append(np.full(uu.size, k, dtype=np.int64))
    for k, v0 in enumerate((0, ranks - 1)):   # the first and last rank, crossed by file lines
        uu, vv = np.meshgrid(np.arange(1, files, dtype=np.float64), v0 + t)
        pts.append(np.column_stack([uu.ravel(), vv.ravel()]))
        vertical.append(np.ones(uu.size, dtype=np.bool_))
        band.append(np.full(uu.size, 2 + k, dtype=np.int64))
    return np.vstack(pts), np.concatenate(vertical), np.concatenate(band)


def _line_hits(near: NearestEdges, h: FloatArray, positions: FloatArray, t: FloatArray, vertical: bool,
               tol_px: float, max_angle_deg: float) -> tuple[FloatArray, NDArray[np.bool_]]:
    """(len(positions), len(t)) hits and in-view flags of the points t along each lattice line."""
    pp, tt = np.meshgrid(positions, t, indexing="ij")
    pts = np.column_stack([pp.ravel(), tt.ravel()]) if vertical else np.column_stack([tt.ravel(), pp.ravel()])
    step = np.array([[0.0, 0.05]]) if vertical else np.array([[0.05, 0.0]])
    mapped = pts @ h[:, :2].T + h[:, 2]
    ahead = (pts + step) @ h[:, :2].T + h[:, 2]
    hit, ok = edge_hits(near, mapped, ahead, tol_px, max_angle_deg)
    return hit.reshape(pp.shape), ok.reshape(pp.shape)


def edge_hits(near: NearestEdges, mapped: FloatArray, ahead: FloatArray, tol_px: float,
              max_angle_deg: float) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Whether each point (homogeneous image rows `mapped`; `ahead`, a step along its line)
    has an edge within `tol_px` whose gradient is across the line, and whether it is in view."""
    with np.errstate(divide="ignore", invalid="ignore"):
        xy = mapped[:, :2] / mapped[:, 2:3]
        direction = ahead[:, :2] / ahead[:, 2:3] - xy
    rows, cols = near.dist.shape
    ok = (mapped[:, 2] > 0) & (ahead[:, 2] > 0) & np.all(np.isfinite(xy), axis=1)
    ok &= (xy[:, 0] >= 0) & (xy[:, 0] <= cols - 1) & (xy[:, 1] >= 0) & (xy[:, 1] <= rows - 1)
    hit = np.zeros(len(mapped))
    xi = np.rint(xy[ok, 0]).astype(np.int64)
    yi = np.rint(xy[ok, 1]).astype(np.int64)
    d = direction[ok]
    d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
    across = np.abs(np.sum(near.normals[near.nearest[yi, xi]] * d, axis=1))
    hit[ok] = (near.dist[yi, xi] <= tol_px) & (across <= np.sin(np.radians(max_angle_deg)))
    return hit, np.asarray(ok, dtype=np.bool_)


def normaliser(points: FloatArray) -> FloatArray:
    """Hartley's normalisation: centre the points, mean distance sqrt(2)."""
    centre = points.mean(axis=0)
    spread = float(np.sqrt(((points - centre) ** 2).sum(axis=1).mean())) or 1.0
    s = np.sqrt(2.0) / spread
    return np.array([[s, 0, -s * centre[0]], [0, s, -s * centre[1]], [0, 0, 1.0]])


def solve_lines(points: FloatArray, on_x: NDArray[np.bool_], index: FloatArray, weight: FloatArray,
                h: FloatArray) -> FloatArray | None:
    """One weighted least-squares step: the homography (board -> image) that puts each image
    point on its grid line, x = index where `on_x`, else y = index. Being on a line is linear
    in the inverse homography G: (g1 - i g3) . p = 0, so this is one 9x9 eigen-problem; rows
    are divided by g3 . p of the current `h` so residuals count in board units."""
    if len(points) < 8 or len(np.unique(index[on_x])) < 2 or len(np.unique(index[~on_x])) < 2:
        return None
    norm = normaliser(points)
    q = np.column_stack([points, np.ones(len(points))]) @ norm.T
    try:
        g = np.linalg.inv(h) @ np.linalg.inv(norm)
    except np.linalg.LinAlgError:
        return None
    w3 = q @ g[2]
    w3 = np.where(np.abs(w3) < 1e-12, 1e-12, w3)
    a = np.zeros((len(q), 9))
    a[on_x, 0:3] = q[on_x]
    a[~on_x, 3:6] = q[~on_x]
    a[:, 6:9] = -index[:, None] * q
    a *= (weight / w3)[:, None]
    _, vecs = np.linalg.eigh(a.T @ a)
    g_new = vecs[:, 0].reshape(3, 3) @ norm
    if not np.all(np.isfinite(g_new)):
        return None
    try:
        h_new = np.linalg.inv(g_new)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(h_new)) or abs(h_new[2, 2]) < 1e-12:
        return None
    return np.asarray(h_new / h_new[2, 2], dtype=np.float64)


def solve_rigid(points: FloatArray, on_x: NDArray[np.bool_], index: FloatArray, weight: FloatArray,
                h: FloatArray) -> FloatArray | None:
    """Like solve_lines, but only shifting, turning and scaling the board in its own plane:
    h @ S with S a similarity. Four unknowns instead of eight, so lines seen on one side of
    the board cannot bend the grid towards a hand's outline on the other."""
    if len(points) < 4 or not on_x.any() or on_x.all():
        return None
    uvw = np.column_stack([points, np.ones(len(points))]) @ np.linalg.inv(h).T
    u, v = uvw[:, 0] / uvw[:, 2], uvw[:, 1] / uvw[:, 2]
    # T = S^-1 = [[a, -b, c], [b, a, d]] puts (u, v) on its line: x = index or y = index
    zeros, ones = np.zeros(len(u)), np.ones(len(u))
    design = np.where(on_x[:, None], np.column_stack([u, -v, ones, zeros]),
                      np.column_stack([v, u, zeros, ones]))
    w = np.sqrt(weight)
    (a, b, c, d), *_ = np.linalg.lstsq(design * w[:, None], index * w, rcond=None)
    if not np.all(np.isfinite((a, b, c, d))) or a * a + b * b < 1e-12:
        return None
    moved = h @ np.linalg.inv(np.array([[a, -b, c], [b, a, d], [0.0, 0.0, 1.0]]))
    return np.asarray(moved / moved[2, 2], dtype=np.float64)


@lru_cache(maxsize=64)
def _line_samples(files: int, ranks: int, per_square: int,
                  gap: float) -> tuple[FloatArray, NDArray[np.bool_], FloatArray]:
    """Points along every grid line, `gap` squares clear of the crossings: (points, on_x, index)."""
    t = (np.arange(per_square) + 0.5) / per_square
    t = gap + t * (1 - 2 * gap)
    ty = (np.arange(ranks)[:, None] + t[None, :]).ravel()
    tx = (np.arange(files)[:, None] + t[None, :]).ravel()
    pts, on_x, index = [], [], []
    for i in range(files + 1):
        pts.append(np.column_stack([np.full_like(ty, i), ty]))
        on_x.append(np.ones(len(ty), bool))
        index.append(np.full(len(ty), float(i)))
    for j in range(ranks + 1):
        pts.append(np.column_stack([tx, np.full_like(tx, j)]))
        on_x.append(np.zeros(len(tx), bool))
        index.append(np.full(len(tx), float(j)))
    return np.vstack(pts), np.concatenate(on_x), np.concatenate(index)


@dataclass(frozen=True)
class NearestEdges:
    """For every pixel, the distance to the nearest edge pixel, which pixel that is, and
    the direction of the image gradient there (so a line is supported only by edges that
    run along it, not by the corners of a die or a hand's outline crossing it)."""

    dist: NDArray[np.float32]
    nearest: NDArray[np.int32]       # label image of cv2.distanceTransformWithLabels
    coords: FloatArray               # label k -> (x, y) of edge pixel k - 1 (row 0: none)
    normals: FloatArray              # label k -> unit gradient direction at that pixel

    @classmethod
    def of(cls, edges: GreyImage, image: NDArray[np.uint8]) -> NearestEdges:
        dist, labels = cv2.distanceTransformWithLabels(cv2.bitwise_not(edges), cv2.DIST_L2, 5,
                                                       labelType=cv2.DIST_LABEL_PIXEL)
        ys, xs = np.nonzero(edges)  # raster order, as the labels are numbered
        coords = np.vstack([[np.nan, np.nan], np.column_stack([xs, ys]).astype(np.float64)])
        blurred = cv2.GaussianBlur(image, (5, 5), 0)
        gx = cv2.Sobel(blurred, cv2.CV_32F, 1, 0)[ys, xs]
        gy = cv2.Sobel(blurred, cv2.CV_32F, 0, 1)[ys, xs]
        if gx.ndim == 2:  # colour: the channel with the strongest gradient at each pixel
            pick = np.argmax(gx * gx + gy * gy, axis=1)
            rows = np.arange(len(pick))
            gx, gy = gx[rows, pick], gy[rows, pick]
        g = np.column_stack([gx, gy]).astype(np.float64)
        g /= np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-9)
        normals = np.vstack([[0.0, 0.0], g])
        return cls(np.asarray(dist, dtype=np.float32), np.asarray(labels, dtype=np.int32), coords, normals)


def chamfer_fit(near: NearestEdges, h: FloatArray, files: int, ranks: int,
                radii_px: tuple[float, ...], *, iterations: int = 3, per_square: int = 8,
                max_angle_deg: float = 20.0) -> FloatArray | None:
    """Pull a coarse grid onto the edges: each sample point of a predicted line takes its
    nearest edge pixel (within the radius, running along the line) as a point of that line;
    refit; repeat with a shrinking radius (an ICP on lines). Dense texture barely matters,
    since a sample takes only its single nearest edge."""
    pts, on_x, index = _line_samples(files, ranks, per_square, 0.12)
    along = np.where(on_x[:, None], [[0.0, 0.05]], [[0.05, 0.0]])
    rows, cols = near.dist.shape
    limit = np.sin(np.radians(max_angle_deg))
    for radius in radii_px:
        for _ in range(iterations):
            mapped = pts @ h[:, :2].T + h[:, 2]
            ahead = (pts + along) @ h[:, :2].T + h[:, 2]
            xy = mapped[:, :2] / mapped[:, 2:3]
            direction = ahead[:, :2] / ahead[:, 2:3] - xy
            xi, yi = np.rint(xy[:, 0]), np.rint(xy[:, 1])
            ok = (mapped[:, 2] > 0) & (xi >= 0) & (xi < cols) & (yi >= 0) & (yi < rows)
            xi, yi = xi[ok].astype(np.int64), yi[ok].astype(np.int64)
            d = near.dist[yi, xi]
            label = near.nearest[yi, xi]
            unit = direction[ok] / np.maximum(np.linalg.norm(direction[ok], axis=1, keepdims=True), 1e-9)
            across = np.abs(np.sum(near.normals[label] * unit, axis=1)) <= limit
            close = (d <= radius) & across
            if close.sum() < 12:
                return None
            found = near.coords[label[close]]
            weight = (1.0 - (d[close] / (radius + 1.0)) ** 2) ** 2
            fitted = solve_lines(found, on_x[ok][close], index[ok][close], weight, h)
            if fitted is None:
                return None
            h = fitted
    return h
