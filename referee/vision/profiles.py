"""Sub-pixel grid lines from intensity profiles across them.

Each grid line is cut into one segment per square (clear of the crossings). Across each
segment the image is sampled (one cv2.remap for the whole grid, all colour channels), the
absolute derivative of the profile is averaged along the segment and smoothed, and its peak
is where the line is: the centre of a printed line (its two edges merge under the
smoothing) or the step between two checker squares (whose polarity alternates, which the
absolute value ignores). Averaging along a segment beats wood grain and noise; segments
under a hand or a die show no clear peak and get no weight. The homography is then fitted
to the found line points (gridfit.solve_lines), and the same profiles say how well a pose
is supported, which is all tracking needs."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.gridfit import solve_lines
from referee.vision.pose import FloatArray


@dataclass(frozen=True)
class Segments:
    base: FloatArray            # (n, along, 2) board points on the line
    normal: FloatArray          # (n, 2) board direction across the line
    on_x: NDArray[np.bool_]     # (n,) the line is x = index (else y = index)
    index: FloatArray           # (n,) the line's position
    kind: NDArray[np.int8]      # (n,) 0 grid line, 1 half-way line, 2 grid line extended outside
    side: NDArray[np.int8]      # (n,) for kind 2: which side of the grid (0..3), else -1


@lru_cache(maxsize=64)
def segments(files: int, ranks: int, along: int = 6, gap: float = 0.15) -> Segments:
    t = gap + (np.arange(along) + 0.5) / along * (1 - 2 * gap)
    base, normal, on_x, index, kind, side = [], [], [], [], [], []

    def add(pos: float, vertical: bool, length: int, k: int, start: int = 0, beyond: int = -1) -> None:
        for sq in range(start, start + length):
            s = sq + t
            fixed = np.full_like(s, pos)
            pts = np.column_stack([fixed, s]) if vertical else np.column_stack([s, fixed])
            base.append(pts)
            normal.append([1.0, 0.0] if vertical else [0.0, 1.0])
            on_x.append(vertical)
            index.append(pos)
            kind.append(k)
            side.append(beyond)

    for i in range(files + 1):
        add(float(i), True, ranks, 0)
    for j in range(ranks + 1):
        add(float(j), False, files, 0)
    for i in range(files):
        add(i + 0.5, True, ranks, 1)
    for j in range(ranks):
        add(j + 0.5, False, files, 1)
    # the grid lines' extensions one square beyond each side: a grid that continues shows
    # them; a board edge or border line beyond the grid runs parallel and does not
    for beyond, start in ((0, -1), (1, files)):
        for j in range(ranks + 1):
            add(float(j), False, 1, 2, start, beyond)
    for beyond, start in ((2, -1), (3, ranks)):
        for i in range(files + 1):
            add(float(i), True, 1, 2, start, beyond)
    return Segments(np.array(base), np.array(normal), np.array(on_x), np.array(index),
                    np.array(kind, np.int8), np.array(side, np.int8))


@dataclass(frozen=True)
class Profiles:
    offset: FloatArray          # (n,) where the line is, across the segment (squares)
    strength: FloatArray        # (n,) peak height above the profile's median (NaN: out of view)


def measure(image: NDArray[np.uint8], h: FloatArray, seg: Segments, band: float, *,
            step: float = 0.01, smooth: float = 0.015, peak_ratio: float = 0.25) -> Profiles:
    """Sample every segment's profile across +-band squares and find its peak."""
    n_off = 2 * int(np.ceil(band / step)) + 1
    offs = np.linspace(-band, band, n_off)
    pts = seg.base[:, :, None, :] + offs[None, None, :, None] * seg.normal[:, None, None, :]
    flat = pts.reshape(-1, 2)
    mapped = flat @ h[:, :2].T + h[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        xy = (mapped[:, :2] / mapped[:, 2:3]).astype(np.float32)
    rows, cols = image.shape[:2]
    inside = (mapped[:, 2] > 0) & (xy[:, 0] >= 0) & (xy[:, 0] <= cols - 1)
    inside &= (xy[:, 1] >= 0) & (xy[:, 1] <= rows - 1)
    n, along = seg.base.shape[:2]
    shape = (n * along, n_off)
    sampled = cv2.remap(image, xy[:, 0].reshape(shape), xy[:, 1].reshape(shape), cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    if sampled.ndim == 3:
        sampled = sampled.sum(axis=2)
    deriv = np.abs(np.diff(sampled, axis=1)).reshape(n, along, n_off - 1).mean(axis=1)
    sigma = smooth / step
    taps = np.arange(-int(np.ceil(2 * sigma)), int(np.ceil(2 * sigma)) + 1)
    kernel = np.exp(-0.5 * (taps / sigma) ** 2)
    kernel /= kernel.sum()
    padded = np.pad(deriv, ((0, 0), (len(taps) // 2, len(taps) // 2)), mode="edge")
    sm = sum(kernel[k] * padded[:, k:k + deriv.shape[1]] for k in range(len(taps)))
    sm = sm - np.median(sm, axis=1, keepdims=True)
    np.maximum(sm, 0, out=sm)
    # Self-convolution peaks at twice the centre of symmetry: a printed line's two edges
    # and a checker step's single edge both give their centre.
    length = sm.shape[1]
    spec = np.fft.rfft(sm, 2 * length, axis=1)
    conv = np.fft.irfft(spec * spec, 2 * length, axis=1)[:, : 2 * length - 1]
    # Of the clear peaks (local maxima at least half the highest), the one nearest the
    # predicted line: a die's edge or a shadow may be stronger but lies further off.
    local = np.zeros_like(conv, dtype=bool)
    local[:, 1:-1] = (conv[:, 1:-1] >= conv[:, :-2]) & (conv[:, 1:-1] >= conv[:, 2:])
    local &= conv >= peak_ratio * conv.max(axis=1, keepdims=True)
    centre_index = length - 1 + (-(offs[0] + offs[1]) / step)  # conv index of offset 0
    distance = np.where(local, np.abs(np.arange(conv.shape[1])[None, :] - centre_index), np.inf)
    peak = np.where(np.isfinite(distance.min(axis=1)), np.argmin(distance, axis=1), np.argmax(conv, axis=1))
    rows_i = np.arange(n)
    left = conv[rows_i, np.maximum(peak - 1, 0)]
    mid = conv[rows_i, peak]
    right = conv[rows_i, np.minimum(peak + 1, conv.shape[1] - 1)]
    denom = left - 2 * mid + right
    safe = np.where(np.abs(denom) > 1e-9, denom, -1.0)
    frac = np.clip(np.where(np.abs(denom) > 1e-9, 0.5 * (left - right) / safe, 0.0), -0.5, 0.5)
    first = 0.5 * (offs[0] + offs[1])  # position of the first derivative sample
    offset = first + (peak + frac) * step / 2
    centre = np.clip(np.rint((offset - first) / step).astype(np.int64), 0, length - 1)
    strength = sm[rows_i, centre] + 0.5 * sm.max(axis=1)
    seen = inside.reshape(n, along * n_off).mean(axis=1) > 0.9
    return Profiles(offset, np.where(seen, strength, np.nan))


def fit_profiles(image: NDArray[np.uint8], h: FloatArray, files: int, ranks: int,
                 bands: tuple[float, ...], *, iterations: int = 2, along: int = 6,
                 step: float = 0.01, robust_rounds: int = 2, peak_ratio: float = 0.25) -> FloatArray | None:
    """Refine `h` (board -> image) to the grid lines' profile peaks, band by band."""
    seg = segments(files, ranks, along)
    grid = seg.kind == 0
    sub = Segments(seg.base[grid], seg.normal[grid], seg.on_x[grid], seg.index[grid], seg.kind[grid],
                   seg.side[grid])
    mid_t = sub.base.mean(axis=1)
    for band in bands:
        for _ in range(iterations):
            prof = measure(image, h, sub, band, step=step, peak_ratio=peak_ratio)
            strength = np.nan_to_num(prof.strength, nan=0.0)
            typical = float(np.median(strength[strength > 0])) if np.any(strength > 0) else 0.0
            good = strength > 0.3 * typical
            if good.sum() < 8:
                return None
            board_pts = mid_t[good] + prof.offset[good, None] * sub.normal[good]
            mapped = board_pts @ h[:, :2].T + h[:, 2]
            image_pts = mapped[:, :2] / mapped[:, 2:3]
            # A die or shadow edge inside the band can out-shine the line: cap the strength,
            # then refit with Tukey's biweight on the residuals of a first fit, so segments
            # that disagree with the rest drop out.
            on_x, index = sub.on_x[good], sub.index[good]
            weight = np.minimum(strength[good] / typical, 1.0)
            # the outermost lines often run beside a board's border line or edge: trust less
            outer = (index == 0) | (index == np.where(on_x, files, ranks))
            weight = np.where(outer, 0.25 * weight, weight)
            r0 = prof.offset[good] / band
            tukey0 = (1 - np.minimum(np.abs(r0), 1.0) ** 2) ** 2
            fitted = solve_lines(image_pts, on_x, index, weight * tukey0, h)
            for _ in range(robust_rounds):
                if fitted is None:
                    return None
                resid = _residuals(fitted, image_pts, on_x, index)
                scale = max(4.5 * float(np.median(np.abs(resid))), 0.015)
                tukey = (1 - np.minimum(np.abs(resid) / scale, 1.0) ** 2) ** 2
                fitted = solve_lines(image_pts, on_x, index, weight * tukey, h)
            if fitted is None:
                return None
            h = fitted
    return h


def _residuals(h: FloatArray, pts: FloatArray, on_x: NDArray[np.bool_], index: FloatArray) -> FloatArray:
    """Board-unit distance of each image point from its grid line under `h`."""
    uvw = np.column_stack([pts, np.ones(len(pts))]) @ np.linalg.inv(h).T
    uv = uvw[:, :2] / uvw[:, 2:3]
    return np.asarray(np.where(on_x, uv[:, 0], uv[:, 1]) - index, dtype=np.float64)


@dataclass(frozen=True)
class ProfileSupport:
    grid: float      # fraction of grid segments with a clear line near where predicted
    mid: float       # same for half-way lines (chance)
    outside: float   # largest fraction over the four sides' line extensions one square out

    def score(self) -> float:
        return self.grid - self.mid - max(0.0, self.outside - 0.5 * self.grid)

    def reason(self, min_support: float, min_contrast: float, max_outside_ratio: float) -> str | None:
        """Why this is not the grid, or None when it is."""
        if self.grid < min_support:
            return f"only {self.grid:.0%} of the grid's lines show"
        if self.grid - self.mid < min_contrast:
            return "lines everywhere (texture or noise), no grid stands out"
        if self.outside > max_outside_ratio * self.grid:
            return "the grid continues beyond the wanted size (a bigger board?)"
        return None


def profile_support(image: NDArray[np.uint8], h: FloatArray, files: int, ranks: int, *,
                    band: float = 0.12, near: float = 0.03, strong: float = 0.5, along: int = 6,
                    step: float = 0.01, peak_ratio: float = 0.25) -> ProfileSupport:
    """How well a pose is supported: a segment counts when its profile peak lies within
    `near` squares of the predicted line and is at least `strong` x the median grid peak."""
    seg = segments(files, ranks, along)
    prof = measure(image, h, seg, band, step=step, peak_ratio=peak_ratio)
    s = prof.strength
    grid_s = s[seg.kind == 0]
    ref = float(np.nanmedian(grid_s)) if np.any(np.isfinite(grid_s)) else 0.0
    if not np.isfinite(ref) or ref <= 0:
        return ProfileSupport(0.0, 0.0, 0.0)
    mid_s = s[seg.kind == 1]
    floor = float(np.nanmedian(mid_s)) if np.any(np.isfinite(mid_s)) else 0.0
    # a line must stand out from the square's own texture: well above the typical peak
    # found half-way between lines, where no line runs
    threshold = max(strong * ref, 2.0 * floor)
    hit = (np.abs(prof.offset) < near) & (np.nan_to_num(s, nan=0.0) > threshold)
    hit_f = hit.astype(np.float64)
    valid = np.isfinite(s)

    def frac(mask: NDArray[np.bool_]) -> float:
        m = mask & valid
        return float(hit_f[m].mean()) if m.any() else 0.0

    outside = max(frac((seg.kind == 2) & (seg.side == k)) for k in range(4))
    return ProfileSupport(frac(seg.kind == 0), frac(seg.kind == 1), outside)
