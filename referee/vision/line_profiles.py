"""Sub-pixel grid lines from intensity profiles across them.

Each grid line is cut into one segment per square (clear of the crossings). Across each
segment the image is sampled (one cv2.remap for the whole grid, all colour channels) and the
absolute derivative of the profile averaged along the segment; a segment's profile is read
together with its neighbours on the same line (so both edges of a printed line show even
where the cells on one side alternate dark and light), smoothed, and its edge heights
evened out. The centre of symmetry of what remains (the peak of its self-convolution) is
where the line is: the centre of a printed line or the step between two checker squares
(whose polarity alternates, which the absolute value ignores). Of the candidates, a
Gaussian prior around the predicted line picks the strongest near it. Where the inner lines
are printed lines (darker, or lighter, than both their sides: `line_polarity`), a line is
instead a fall followed by a rise (or the reverse) and nothing else: the light gap between
the outermost line and a border line beside it is symmetric too. Averaging along a
line beats wood grain and noise; segments under a hand or a die show no clear peak and get
no weight. The homography is then fitted to the found line points (gridfit.solve_lines)
with Tukey's biweight, band by band (the last band must still hold a thick line's two
edges), and the same profiles say how well a pose is supported, which is all tracking
needs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.calibration.undistort import Frame, LensImage
from referee.vision.gridfit import solve_lines, solve_rigid
from referee.vision.pose import FloatArray

EDGE_GAMMA = 0.4    # edge heights are compressed to this power before the self-convolution
PRIOR_WIDTH = 0.5   # sd of the prior around the predicted line, as a share of the band
OUTER_WEIGHT = 0.5  # weight of the outermost lines in the last (narrowest) band
EARLY_OUTER_WEIGHT = 0.25  # ... in the wider bands before it
SMALL_OUTER_WEIGHT = 0.5  # ... and in every band on 3x3 boards
RIDGE_REACH = 0.12  # widest printed line (squares) whose two edges pair up, with a taper beyond
RIDGE_CLEAR = 2.0   # inner lines are printed lines when their median ridge score passes this
RIDGE_RATIO = 2.0   # ... and this many times the opposite polarity's
CHECKER_NOISE = 4.0  # a checker's squares differ by this many times a derivative sample's noise


def small_board(files: int, ranks: int) -> bool:
    """A board with at most two inner lines a family (3x3), which alone leave the homography
    barely determined: its outermost lines must weigh in, and border lines beside them mislead."""
    return min(files, ranks) <= 3


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


@lru_cache(maxsize=64)
def end_segments(files: int, ranks: int, near: float = 0.04, far: float = 0.22,
                 along: int = 4) -> Segments:
    """Short stretches of every inner grid line next to each outermost line it meets: from
    `near` to `far` squares inside the grid (kind 0) and as far outside it (kind 2)."""
    t = near + (np.arange(along) + 0.5) / along * (far - near)
    base, normal, on_x, index, kind = [], [], [], [], []
    for vertical, inner, end in ((True, files, ranks), (False, ranks, files)):
        for i in range(1, inner):
            for edge, inward in ((0.0, 1.0), (float(end), -1.0)):
                for k, sign in ((0, inward), (2, -inward)):
                    along_line = edge + sign * t
                    fixed = np.full_like(along_line, float(i))
                    base.append(np.column_stack([fixed, along_line] if vertical else [along_line, fixed]))
                    normal.append([1.0, 0.0] if vertical else [0.0, 1.0])
                    on_x.append(vertical)
                    index.append(float(i))
                    kind.append(k)
    n = len(index)
    return Segments(np.array(base), np.array(normal), np.array(on_x), np.array(index),
                    np.array(kind, np.int8), np.full(n, -1, np.int8))


@lru_cache(maxsize=64)
def grid_segments(files: int, ranks: int, along: int = 6) -> Segments:
    seg = segments(files, ranks, along)
    grid = seg.kind == 0
    return Segments(seg.base[grid], seg.normal[grid], seg.on_x[grid], seg.index[grid], seg.kind[grid],
                    seg.side[grid])


@lru_cache(maxsize=64)
def line_windows(files: int, ranks: int, along: int = 6) -> NDArray[np.int64]:
    """(n, 3) rows of `grid_segments`: each segment with its neighbours on the same line (at a
    line's end, the end segment twice). Cells of two colours along a line (a checker, or
    cells inset from a printed line) make the line's edge towards a dark cell faint and
    towards a light cell strong: one square's profile shows a single edge, not the line's
    centre, while neighbours together show both edges."""
    seg = grid_segments(files, ranks, along)
    n = len(seg.index)
    same = (seg.on_x[1:] == seg.on_x[:-1]) & (seg.index[1:] == seg.index[:-1])
    k = np.arange(n)
    before = np.where(np.concatenate([[False], same]), k - 1, k)
    after = np.where(np.concatenate([same, [False]]), k + 1, k)
    return np.column_stack([before, k, after]).astype(np.int64)


@lru_cache(maxsize=64)
def support_windows(files: int, ranks: int, along: int = 6) -> NDArray[np.int64]:
    """`line_windows` for the grid lines' segments (which `segments` lists first), every
    other segment alone."""
    grid = line_windows(files, ranks, along)
    rest = np.arange(len(grid), len(segments(files, ranks, along).index))
    return np.vstack([grid, np.repeat(rest[:, None], 3, axis=1)]).astype(np.int64)


@dataclass(frozen=True)
class Profiles:
    offset: FloatArray          # (n,) where the line is, across the segment (squares)
    strength: FloatArray        # (n,) peak height above the profile's median (NaN: out of view)


def measure(image: Frame, h: FloatArray, seg: Segments, band: float, *,
            step: float = 0.01, smooth: float = 0.015,
            windows: NDArray[np.int64] | None = None, max_pair: float | None = None,
            polarity: int = 0, steps: FloatArray | None = None) -> Profiles:
    """Sample every segment's profile across +-band squares and find its peak; with
    `windows`, the peak of each window's segments' profiles together (one row per window);
    with `max_pair`, only edges about that far apart (squares) or closer pair up as a line
    (see _paired); with `polarity` -1 (+1), only a line darker (lighter) than both its
    sides counts: a falling edge followed by a rising one (see _ridges; `max_pair` does not
    apply); with `steps` (one +-1 or 0 per segment), a segment with a sign is instead read
    as a single colour step of that sign across it (see checker_steps), one without as
    above."""
    offs, signed, seen = _sample(image, h, seg, band, step)
    if windows is not None:
        seen = np.asarray(seen[windows].all(axis=1), dtype=np.bool_)
    if steps is None or not np.any(steps != 0):
        return _symmetric(offs, signed, seen, windows, band, step, smooth, max_pair, polarity)
    sign = steps if windows is None else steps[windows[:, 1]]
    # rows without a sign are read as above: only then is that work done
    plain = (_symmetric(offs, signed, seen, windows, band, step, smooth, max_pair, polarity)
             if np.any(sign == 0) else None)
    return _step_profiles(offs, signed, seen, sign, windows, steps, step, smooth, band, plain)


def _symmetric(offs: FloatArray, signed: FloatArray, seen: NDArray[np.bool_],
               windows: NDArray[np.int64] | None, band: float, step: float, smooth: float,
               max_pair: float | None, polarity: int) -> Profiles:
    """`measure` without `steps`: each row's strongest symmetric structure (a printed line's
    two edges, or a step's one), or with `polarity` its strongest ridge, weighed by the prior."""
    deriv = _by_window(np.abs(signed).mean(axis=1), windows)
    sm = _smoothed(deriv, smooth / step)
    sm = sm - np.median(sm, axis=1, keepdims=True)
    np.maximum(sm, 0, out=sm)
    # Self-convolution peaks at twice the centre of symmetry: a printed line's two edges
    # and a checker step's single edge both give their centre.
    length = sm.shape[1]
    if polarity:
        conv = _ridges(_smoothed(_by_window(signed.mean(axis=1), windows), smooth / step), polarity,
                       round(RIDGE_REACH / step))
    else:
        # A printed line between a dark and a light square has one strong and one weak edge;
        # unequal edges would make the self-convolution peak at the strong edge rather than
        # at their centre, so edge heights are evened out (compressed) first.
        even = (sm / np.maximum(sm.max(axis=1, keepdims=True), 1e-9)) ** EDGE_GAMMA
        if max_pair is None:
            spec = np.fft.rfft(even, 2 * length, axis=1)
            conv = np.fft.irfft(spec * spec, 2 * length, axis=1)[:, : 2 * length - 1]
        else:
            conv = _paired(even, max(1, round(max_pair / step)))
    peak = np.argmax(conv * _prior(offs, band, step, conv.shape[1])[None, :], axis=1)
    return _interpolated(conv, peak, offs, step, length, sm, seen)


def _interpolated(conv: FloatArray, peak: NDArray[np.int64], offs: FloatArray, step: float,
                  length: int, sm: FloatArray, seen: NDArray[np.bool_] | None = None) -> Profiles:
    """The self-convolution's peaks to sub-sample offsets (a parabola through the peak and
    its neighbours), with their strengths in `sm`; NaN strength where not `seen`."""
    rows_i = np.arange(len(peak))
    frac, _ = _parabola(conv, peak)
    first = 0.5 * (offs[0] + offs[1])  # position of the first derivative sample
    offset = first + (peak + frac) * step / 2
    centre = np.clip(np.rint((offset - first) / step).astype(np.int64), 0, length - 1)
    strength = sm[rows_i, centre] + 0.5 * sm.max(axis=1)
    return Profiles(offset, strength if seen is None else np.where(seen, strength, np.nan))


def _parabola(curve: FloatArray, peak: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
    """Each row's peak to sub-sample precision: the vertex of the parabola through the peak
    and its two neighbours, as an offset from the peak (samples, within +-0.5), and the
    peak's value."""
    rows_i = np.arange(len(peak))
    left = curve[rows_i, np.maximum(peak - 1, 0)]
    mid = curve[rows_i, peak]
    right = curve[rows_i, np.minimum(peak + 1, curve.shape[1] - 1)]
    denom = left - 2 * mid + right
    safe = np.where(np.abs(denom) > 1e-9, denom, -1.0)
    frac = np.clip(np.where(np.abs(denom) > 1e-9, 0.5 * (left - right) / safe, 0.0), -0.5, 0.5)
    return frac, mid


def _step_profiles(offs: FloatArray, signed: FloatArray, seen: NDArray[np.bool_], sign: FloatArray,
                   windows: NDArray[np.int64] | None, steps: FloatArray, step: float, smooth: float,
                   band: float, plain: Profiles | None) -> Profiles:
    """Rows with a sign in `steps`: the strongest step of that sign near the line (each
    segment's derivative turned by its own sign before a window adds its segments up, so a
    checker's step, whose sign alternates square by square, adds up, and a die's edge, which
    does not alternate with the squares, or a border line's two edges, do not); other rows
    as in `plain` (None when every row has a sign)."""
    turned = _by_window(signed.mean(axis=1) * steps[:, None], windows)
    sm = _smoothed(turned, smooth / step)
    sm = sm - np.median(sm, axis=1, keepdims=True)
    np.maximum(sm, 0, out=sm)
    mids = 0.5 * (offs[:-1] + offs[1:])   # where each derivative sample lies
    prior = np.exp(-0.5 * (mids / (PRIOR_WIDTH * band)) ** 2)
    peak = np.argmax(sm * prior[None, :], axis=1)
    frac, mid = _parabola(sm, peak)
    offset = mids[0] + (peak + frac) * step
    strength = mid + 0.5 * sm.max(axis=1)
    if plain is not None:
        use = sign != 0
        offset = np.where(use, offset, plain.offset)
        strength = np.where(use, strength, plain.strength)
    return Profiles(offset, np.where(seen, strength, np.nan))


def checker_steps(image: Frame, h: FloatArray, files: int, ranks: int, band: float, *,
                  along: int = 6, step: float = 0.01, clear: float = 0.5) -> FloatArray | None:
    """The sign of the colour step across each grid segment (`grid_segments`' order) of a
    checker without lines: across an inner line the tone goes from one square to its
    neighbour, and which is the darker alternates square by square, so the sign is the
    checker's phase times (-1) ** (line + square). The outermost lines take the same rule,
    as if the margin's tone lay between the squares' two: where it matches one of them that
    square shows no step (a weak segment, which the fit weighs little), and where it is
    darker or lighter than both the other square's step has the expected sign. The phase is
    read from the inner segments' own steps across the band; None when they do not agree on
    one (`clear`: the least |sum| / sum of |.| of their votes) or their steps are lost in
    the noise (`CHECKER_NOISE`), as on a board of one tone."""
    sub = grid_segments(files, ranks, along)
    along_sq = np.floor(np.where(sub.on_x[:, None], sub.base[:, :, 1], sub.base[:, :, 0]).mean(axis=1))
    parity = np.where((sub.index + along_sq).astype(np.int64) % 2 == 0, 1.0, -1.0)
    inner = (sub.index > 0) & (sub.index < np.where(sub.on_x, files, ranks))
    _, signed, seen = _sample(image, h, sub, band, step)
    change = signed.sum(axis=2).mean(axis=1)   # tone beyond the segment less the tone before it
    use = inner & seen
    votes = (parity * change)[use]
    total = float(np.abs(votes).sum())
    if len(votes) < 4 or total <= 0 or abs(float(votes.sum())) < clear * total:
        return None
    # ... and the squares' tones must differ well beyond the noise of one derivative sample
    if float(np.median(np.abs(votes))) < CHECKER_NOISE * float(np.median(np.abs(signed[use]))):
        return None
    return np.asarray(np.sign(votes.sum()) * parity, dtype=np.float64)


def line_polarity(image: Frame, h: FloatArray, files: int, ranks: int, band: float, *,
                  along: int = 6, step: float = 0.01, smooth: float = 0.015) -> int:
    """-1 when the inner grid lines are printed darker than both their sides, +1 when
    lighter, 0 when they are steps between cells (a checker without lines) or unclear. The
    outermost lines are left out: what lies beside them is the margin, not a cell."""
    return ridge_polarity(line_ridges(image, h, files, ranks, band, along=along, step=step, smooth=smooth))


def ridge_polarity(ridges: tuple[float, float] | None) -> int:
    """line_polarity from `line_ridges`' (dark, light)."""
    if ridges is None:
        return 0
    dark, light = ridges
    if dark > RIDGE_CLEAR and dark > RIDGE_RATIO * light:
        return -1
    if light > RIDGE_CLEAR and light > RIDGE_RATIO * dark:
        return 1
    return 0


def line_ridges(image: Frame, h: FloatArray, files: int, ranks: int, band: float, *,
                along: int = 6, step: float = 0.01, smooth: float = 0.015) -> tuple[float, float] | None:
    """How clearly the inner grid lines show a line darker, and one lighter, than both its
    sides: the median over their segments of the strongest such structure near the line
    (`_ridges`, weighed by the prior); None when fewer than four segments are in view."""
    sub = grid_segments(files, ranks, along)
    windows = line_windows(files, ranks, along)
    inner = (sub.index > 0) & (sub.index < np.where(sub.on_x, files, ranks))
    offs, signed, seen = _sample(image, h, sub, band, step)
    clear = inner & seen[windows].all(axis=1)
    rows = _smoothed(_by_window(signed.mean(axis=1), windows), smooth / step)[clear]
    if len(rows) < 4:
        return None
    reach = round(RIDGE_REACH / step)
    prior = _prior(offs, band, step, 2 * rows.shape[1] - 1)[None, :]
    dark, light = (float(np.median((_ridges(rows, pol, reach) * prior).max(axis=1))) for pol in (-1, 1))
    return dark, light


def _prior(offs: FloatArray, band: float, step: float, size: int) -> FloatArray:
    """The strongest symmetric structure is weighed by a Gaussian prior around the predicted
    line (sd PRIOR_WIDTH x band): a die's edge or a border line may be stronger but lies
    further off, while a start a little off the line still reaches it. (Taking the nearest
    of the clear peaks instead makes every edge near the start a fixed point.) Index k of a
    self-convolution pairs derivative samples i + j = k, i.e. the centre first + k * step / 2;
    offset 0 is at k = -2 first / step (the middle)."""
    centre_index = -(offs[0] + offs[1]) / step
    far = (np.arange(size) - centre_index) * step / 2 / (PRIOR_WIDTH * band)
    return np.asarray(np.exp(-0.5 * far ** 2))


def _sample(image: Frame, h: FloatArray, seg: Segments, band: float,
            step: float) -> tuple[FloatArray, FloatArray, NDArray[np.bool_]]:
    """The offsets across every segment (+-band squares), the signed derivative of the
    image across it at each of its `along` points (n, along, offsets - 1), summed over the
    colour channels, and whether the segment lies in view."""
    # samples exactly `step` apart (the peak's offset is read in steps), out to the band or
    # just past it
    reach = int(np.ceil(band / step - 1e-6))
    n_off = 2 * reach + 1
    offs = np.arange(-reach, reach + 1, dtype=np.float64) * step
    # homogeneous image points are linear in the offset: H(b + o n) = H b + o H n
    at_base = seg.base @ h[:, :2].T + h[:, 2]                       # (n, along, 3)
    across = (seg.normal @ h[:, :2].T).astype(np.float32)            # (n, 3)
    mapped = (at_base.astype(np.float32)[:, :, None, :]
              + offs.astype(np.float32)[None, None, :, None] * across[:, None, None, :]).reshape(-1, 3)
    with np.errstate(divide="ignore", invalid="ignore"):
        xy = mapped[:, :2] / mapped[:, 2:3]
    rows, cols = image.shape[:2]
    inside = (mapped[:, 2] > 0) & (xy[:, 0] >= 0) & (xy[:, 0] <= cols - 1)
    inside &= (xy[:, 1] >= 0) & (xy[:, 1] <= rows - 1)
    n, along = seg.base.shape[:2]
    shape = (n * along, n_off)
    xs, ys = xy[:, 0].reshape(shape), xy[:, 1].reshape(shape)
    sampled = (image.remap(xs, ys, cv2.BORDER_REPLICATE) if isinstance(image, LensImage) else
               cv2.remap(image, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
               ).astype(np.float32)
    if sampled.ndim == 3:
        sampled = sampled.sum(axis=2)
    signed = np.diff(sampled, axis=1).reshape(n, along, n_off - 1).astype(np.float64)
    seen = np.asarray(inside.reshape(n, along * n_off).mean(axis=1) > 0.9, dtype=np.bool_)
    return offs, signed, seen


def _by_window(rows: FloatArray, windows: NDArray[np.int64] | None) -> FloatArray:
    """Each window's segments' rows averaged (one row per window); the rows as they are
    without windows."""
    return rows if windows is None else np.asarray(rows[windows].mean(axis=1))


def _smoothed(rows: FloatArray, sigma: float) -> FloatArray:
    """Each row convolved with a Gaussian of `sigma` samples (edges repeated)."""
    taps = np.arange(-int(np.ceil(2 * sigma)), int(np.ceil(2 * sigma)) + 1)
    kernel = np.exp(-0.5 * (taps / sigma) ** 2)
    kernel /= kernel.sum()
    padded = np.pad(rows, ((0, 0), (len(taps) // 2, len(taps) // 2)), mode="edge")
    return np.asarray(sum(kernel[k] * padded[:, k:k + rows.shape[1]] for k in range(len(taps))))


def _ridges(signed: FloatArray, polarity: int, reach: int) -> FloatArray:
    """Like the self-convolution, but only an edge into the line's tone followed by an edge
    out of it pairs up (for a dark line, polarity -1: a fall, then a rise, within about
    `reach` samples): out[:, i + j] sums first[i] second[j] over j > i. A light gap between
    two dark lines (the outermost grid line and a border line beside it) is as symmetric as
    a line, and the plain self-convolution takes either; this takes only the line."""
    noise = np.median(np.abs(signed), axis=1, keepdims=True)
    first = np.maximum(polarity * signed - noise, 0.0)
    second = np.maximum(-polarity * signed - noise, 0.0)
    top = np.maximum(np.maximum(first.max(axis=1, keepdims=True), second.max(axis=1, keepdims=True)), 1e-9)
    first, second = (first / top) ** EDGE_GAMMA, (second / top) ** EDGE_GAMMA
    n, length = signed.shape
    out = np.zeros((n, 2 * length - 1))
    for d in range(1, min(reach + 6, length - 1) + 1):
        taper = float(np.exp(-0.5 * (max(0, d - reach) / 2.0) ** 2))
        out[:, d + 2 * np.arange(length - d)] += taper * first[:, : length - d] * second[:, d:]
    return out


def _paired(even: FloatArray, reach: int) -> FloatArray:
    """The self-convolution of each row, restricted to pairs of samples about `reach` apart
    at most: out[:, k] = sum over i + j = k of taper(|i - j|) even[:, i] even[:, j], the taper
    1 up to `reach` and falling off smoothly over a few samples beyond. A printed line's two
    edges pair up; a step edge and an unrelated edge further off (a die's foot, a border
    line beside the outermost grid line) do not, so they no longer make a false centre of
    symmetry half-way between them that outweighs the step itself. (The taper is smooth
    because a hard cut keeps one more term in the even sums than in the odd ones, or the
    reverse, which pulls the interpolated peak by a quarter sample.)"""
    n, length = even.shape
    out = np.zeros((n, 2 * length - 1))
    for d in range(min(reach + 6, length - 1) + 1):
        taper = float(np.exp(-0.5 * (max(0, d - reach) / 2.0) ** 2))
        prod = even[:, : length - d] * even[:, d:]
        out[:, d + 2 * np.arange(length - d)] += (1.0 if d == 0 else 2.0) * taper * prod
    return out


def fit_profiles(image: Frame, h: FloatArray, files: int, ranks: int,
                 bands: tuple[float, ...], *, iterations: int = 2, along: int = 6,
                 step: float = 0.01, robust_rounds: int = 2, rigid: bool = False,
                 outer: tuple[float, ...] | None = None, max_pair: float | None = None,
                 outer_shift: float = 0.0, ridges: bool = False,
                 steps: FloatArray | None = None) -> FloatArray | None:
    """Refine `h` (board -> image) to the grid lines' profile peaks, band by band; `rigid`
    only shifts, turns and scales the board in its plane (see gridfit.solve_rigid); with
    `steps` (from checker_steps, on a checker without lines; `ridges` then does not apply),
    each line is read as the colour step of the sign the checker's squares give it."""
    solve = solve_rigid if rigid else solve_lines
    sub = grid_segments(files, ranks, along)
    windows = line_windows(files, ranks, along)
    mid_t = sub.base[windows].mean(axis=(1, 2))
    # The outermost lines often run beside a board's border line, its edge or a margin of
    # another tone, which the wide bands would follow: they count less there, except on
    # boards with only two inner lines a family (3x3), which alone leave the homography
    # barely determined. With `outer_shift`, what they show may also lie a common distance
    # outside them (found once a fit): they still say which way the grid's sides run.
    outermost = (sub.index == 0) | (sub.index == np.where(sub.on_x, files, ranks))
    small = small_board(files, ranks)
    polarity = (line_polarity(image, h, files, ranks, bands[0], along=along, step=step)
                if ridges and steps is None else 0)
    for b, band in enumerate(bands):
        outer_weight = (outer[b] if outer is not None else SMALL_OUTER_WEIGHT if small
                        else OUTER_WEIGHT if b == len(bands) - 1 else EARLY_OUTER_WEIGHT)
        for _ in range(iterations):
            prof = measure(image, h, sub, band, step=step, windows=windows, max_pair=max_pair,
                           polarity=polarity, steps=steps)
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
            weight = np.where(outermost[good], outer_weight * weight, weight)
            r0 = prof.offset[good] / band
            tukey0 = (1 - np.minimum(np.abs(r0), 1.0) ** 2) ** 2
            side = np.where(~outermost[good], 0.0, np.where(index == 0, -1.0, 1.0))
            shift = 0.0
            fitted = solve(image_pts, on_x, index, weight * tukey0, h)
            for round_ in range(robust_rounds):
                if fitted is None:
                    return None
                resid = _residuals(fitted, image_pts, on_x, index + side * shift)
                if resid is None:
                    return None
                scale = max(4.5 * float(np.median(np.abs(resid))), 0.015)
                tukey = (1 - np.minimum(np.abs(resid) / scale, 1.0) ** 2) ** 2
                if outer_shift > 0 and round_ == 0:
                    shift = _best_shift(solve, image_pts, on_x, index, side, weight * tukey, h, outer_shift)
                fitted = solve(image_pts, on_x, index + side * shift, weight * tukey, h)
            if fitted is None:
                return None
            h = fitted
    return h


def _best_shift(solve: Callable[..., FloatArray | None], pts: FloatArray, on_x: NDArray[np.bool_],
                index: FloatArray, side: FloatArray, weight: FloatArray, h: FloatArray,
                most: float, step: float = 0.05) -> float:
    """How far outside the outermost grid lines (squares, the same on every side) what they
    show lies: 0 for a printed outer line, more for a border line or the board's edge
    beside the grid. The grid's own regular spacing, seen in its inner lines, places it;
    the outer lines then still say which way they run (a border runs parallel to them)."""
    def cost(shift: float) -> float:
        fitted = solve(pts, on_x, index + side * shift, weight, h)
        resid = None if fitted is None else _residuals(fitted, pts, on_x, index + side * shift)
        return np.inf if resid is None else float(np.sum(weight * resid ** 2))

    coarse = [(cost(float(c)), float(c)) for c in np.arange(0.0, most + 1e-9, step)]
    best_cost, best = min(coarse)
    for near in (best - step / 2, best + step / 2):  # then half a step either side
        if 0.0 <= near <= most:
            c = cost(near)
            if c < best_cost:
                best_cost, best = c, near
    return best


def _residuals(h: FloatArray, pts: FloatArray, on_x: NDArray[np.bool_],
               index: FloatArray) -> FloatArray | None:
    """Board-unit distance of each image point from its grid line under `h`; None when `h`
    is singular (a step of the fit can collapse the grid onto a line on clutter)."""
    try:
        back = np.linalg.inv(h)
    except np.linalg.LinAlgError:
        return None
    uvw = np.column_stack([pts, np.ones(len(pts))]) @ back.T
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


def profile_support(image: Frame, h: FloatArray, files: int, ranks: int, *,
                    band: float = 0.12, near: float = 0.03, strong: float = 0.5, along: int = 6,
                    step: float = 0.01) -> ProfileSupport:
    """How well a pose is supported: a segment counts when its profile peak lies within
    `near` squares of the predicted line and is at least `strong` x the median grid peak."""
    seg = segments(files, ranks, along)
    prof = measure(image, h, seg, band, step=step,
                   windows=support_windows(files, ranks, along))
    s = prof.strength
    ref = _typical(s[seg.kind == 0])
    if ref <= 0:
        return ProfileSupport(0.0, 0.0, 0.0)
    floor = _typical(s[seg.kind == 1])
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


def _typical(strengths: FloatArray) -> float:
    """The median of the peaks in view (NaN: out of view); 0 when none is."""
    typical = float(np.nanmedian(strengths)) if np.any(np.isfinite(strengths)) else 0.0
    return typical if np.isfinite(typical) else 0.0


def line_ends(image: Frame, h: FloatArray, files: int, ranks: int, *,
              band: float = 0.08, near: float = 0.03, strong: float = 0.5) -> float:
    """How well the inner lines meet the outermost ones and stop there: the share of inner
    lines seen just inside an outermost line less the share seen just beyond it (1 at best).
    A grid fitted onto a border line beside the board's outermost line leaves a gap in which
    no line meets it; one fitted onto a cell's own frame inside has the lines go on beyond
    it. A stretch counts as seen where its profile peak lies within `near` squares of the
    line and is at least `strong` x the grid lines' median peak (as in `profile_support`,
    without its floor from the half-way lines)."""
    if min(files, ranks) < 2:
        return 0.0
    polarity = line_polarity(image, h, files, ranks, 0.15)
    typical = _typical(measure(image, h, grid_segments(files, ranks), band, polarity=polarity).strength)
    if typical <= 0:
        return 0.0
    seg = end_segments(files, ranks)
    ends = measure(image, h, seg, band, polarity=polarity)
    seen = (np.abs(ends.offset) < near) & (np.nan_to_num(ends.strength) > strong * typical)
    return float(seen[seg.kind == 0].mean() - seen[seg.kind == 2].mean())


def ridge_score(image: Frame, h: FloatArray, files: int, ranks: int, polarity: int, *,
                band: float = 0.1, step: float = 0.005, smooth: float = 0.01) -> float:
    """How many of the grid's lines (0..files + ranks + 2) are printed lines centred where `h`
    puts them, on a board whose lines are printed darker (`polarity` -1) or lighter (+1) than
    both their sides. Each segment's profile (with its neighbours on the line, as the fit
    reads it) is scored by a fall then a rise (`_ridges`: a die's edge is a single step, a
    die's side face or a border a wide band, neither pairs up) centred on the predicted
    line, relative to the typical segment's strongest such structure within +-band and
    capped at 1; a line takes the median of its segments (a die or a hand over one does not
    decide it), and the lines add up. A grid a few hundredths of a square off, locked onto a
    cell's inset frame or a border line beside the outermost line, scores less than the
    true one on every line it misses; a line hidden by a hand scores nothing for either."""
    if polarity == 0:
        return 0.0
    seg = grid_segments(files, ranks)
    windows = line_windows(files, ranks)
    offs, signed, seen = _sample(image, h, seg, band, step)
    clear = np.asarray(seen[windows].all(axis=1), dtype=np.bool_)
    if not clear.any():
        return 0.0
    conv = _ridges(_smoothed(_by_window(signed.mean(axis=1), windows), smooth / step), polarity,
                   round(RIDGE_REACH / step))
    # conv[:, k] pairs derivative samples i + j = k: offset first + k * step / 2
    first = 0.5 * (offs[0] + offs[1])
    at = -first / (step / 2)
    k0 = int(np.floor(at))
    frac = at - k0
    centred = conv[:, k0] * (1 - frac) + conv[:, k0 + 1] * frac
    typical = float(np.percentile(conv.max(axis=1)[clear], 75))
    if typical <= 0:
        return 0.0
    value = np.where(clear, np.minimum(centred / typical, 1.0), np.nan)
    line = np.where(seg.on_x, 0, files + 1) + seg.index.astype(np.int64)
    per_line = [np.nanmedian(value[line == k]) if np.isfinite(value[line == k]).any() else 0.0
                for k in range(files + ranks + 2)]
    return float(np.sum(per_line))
