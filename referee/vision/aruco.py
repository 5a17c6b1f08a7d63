"""Boards with ArUco markers, the most robust set-up: four markers outside the grid's
corners give the board's pose with no line finding at all, and their ids say which corner is
a1. `referee board` prints such a board at true size (SVG or PDF); `board_image` draws the
same for tests.

Marker k (ids[k]) sits diagonally outside grid corner k: a1's outer corner, then along rank 1,
the far corner, then along the a-file. Markers are printed upright as seen from the first
player's side, so a detected marker's corners (clockwise from its top-left) map to known
board points.

The referee looks for the markers over the whole frame when it searches (`search_aruco`),
then each frame only in small regions round where they were (`track_aruco`), or round the
corners of a board its lines found (`probe_aruco`). Each marker's corners are put where its
outer edges meet (`refine_quad`); four markers give a homography and the lens's bend, two or
three move the last pose. `MarkerSet` holds any board's markers at known points (a ChArUco
board's too)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import NoBoardError, OutputError
from referee.pdf import pdf_file
from referee.vision.pose import BoardPose, FloatArray, apply_homography, grid_through
from referee.vision.settings import ArucoSettings, default_settings

_CORNER_SIGNS = ((-1, -1), (1, -1), (1, 1), (-1, 1))  # outward from each grid corner


@dataclass(frozen=True)
class MarkerSet:
    """Markers printed at known points of a board: all that finding the board by them needs.
    `corners[i]` holds marker ids[i]'s four corners in board units, in ArUco's order (its
    top-left as printed, then clockwise)."""

    files: int
    ranks: int
    dictionary: str
    ids: tuple[int, ...]
    corners: tuple[tuple[tuple[float, float], ...], ...]

    def points(self, index: int) -> FloatArray:
        return np.array(self.corners[index], dtype=np.float64)


@dataclass(frozen=True)
class ArucoLayout:
    """Where the markers are, in board units (one square = 1)."""

    files: int
    ranks: int
    ids: tuple[int, ...] = (0, 1, 2, 3)
    marker: float = 0.8      # marker side (squares)
    gap: float = 0.25        # from the grid corner to the marker, along both axes (squares)
    dictionary: str = "DICT_4X4_50"

    @classmethod
    def for_board(cls, files: int, ranks: int, settings: ArucoSettings | None = None) -> ArucoLayout:
        s = settings or default_settings().aruco
        if len(s.ids) != 4 or len(set(s.ids)) != 4:
            raise ValueError(f"an ArUco board needs four different marker ids, not {s.ids}")
        return cls(files, ranks, tuple(s.ids), s.marker_squares, s.gap_squares, s.dictionary)

    @property
    def border(self) -> float:
        """Paper around the grid on each side (squares): gap, marker and a quiet zone."""
        return self.gap + self.marker + 0.25

    def marker_corners(self, k: int) -> FloatArray:
        """Board points of marker k's corners, in ArUco's order (top-left, clockwise, as
        printed upright: top = towards rank `ranks`)."""
        cx = 0.0 if k in (0, 3) else float(self.files)
        cy = 0.0 if k in (0, 1) else float(self.ranks)
        sx, sy = _CORNER_SIGNS[k]
        xs = sorted((cx + sx * self.gap, cx + sx * (self.gap + self.marker)))
        ys = sorted((cy + sy * self.gap, cy + sy * (self.gap + self.marker)))
        return np.array([[xs[0], ys[1]], [xs[1], ys[1]], [xs[1], ys[0]], [xs[0], ys[0]]])

    def markers(self) -> MarkerSet:
        corners = tuple(tuple((float(x), float(y)) for x, y in self.marker_corners(k)) for k in range(4))
        return MarkerSet(self.files, self.ranks, self.dictionary, self.ids, corners)


def _dictionary(name: str) -> cv2.aruco.Dictionary:
    code = getattr(cv2.aruco, name, None)
    if not isinstance(code, int):
        raise ValueError(f"unknown ArUco dictionary {name!r}")
    return cv2.aruco.getPredefinedDictionary(code)


@lru_cache(maxsize=16)
def _detector(name: str, window: int | None = None) -> cv2.aruco.ArucoDetector:
    """ArUco's detector; with `window`, for a region round one marker of about 3 x `window`
    pixels: one threshold window, not three, and nothing much smaller than the region looked
    at (a third of the time, the same markers found in the marker footage)."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    # Bits read off 8 px a cell, not 4: a marker of 4 px cells, blurred, was misread
    # (rendered boards, 3 of 16 frames, always the same marker).
    params.perspectiveRemovePixelPerCell = 8
    if window is not None:
        params.adaptiveThreshWinSizeMin = params.adaptiveThreshWinSizeMax = window
        params.minMarkerPerimeterRate = 0.8
    return cv2.aruco.ArucoDetector(_dictionary(name), params)


@dataclass(frozen=True, eq=False)
class Sighting:
    """The markers of a set seen in one frame: each one's index in the set and its four
    image corners (sub-pixel, ArUco's order)."""

    index: tuple[int, ...]
    quads: tuple[FloatArray, ...]

    def __len__(self) -> int:
        return len(self.index)

    def without(self, k: int) -> Sighting:
        """The sighting less its k-th marker."""
        return Sighting(self.index[:k] + self.index[k + 1:], self.quads[:k] + self.quads[k + 1:])


Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (pixels)


def sight_markers(frame: NDArray[np.uint8], markers: MarkerSet, boxes: list[Box] | None = None,
                  marker_px: float | None = None) -> Sighting:
    """The set's markers in the whole frame, or only within `boxes` round markers about
    `marker_px` wide. An id seen in two places is left out: which of the two is the board's
    cannot be told."""
    window = None if boxes is None or marker_px is None else max(5, round(marker_px / 3) | 1)
    detector = _detector(markers.dictionary, window)
    regions = [(0, 0, frame.shape[1], frame.shape[0])] if boxes is None else boxes
    found: dict[int, list[FloatArray]] = {}
    for x0, y0, x1, y1 in regions:
        crop = frame[y0:y1, x0:x1]
        if crop.shape[0] < 8 or crop.shape[1] < 8:
            continue
        grey = np.asarray(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop, np.uint8)
        corners, ids, _ = detector.detectMarkers(grey)
        for quad, marker_id in zip(corners, () if ids is None else ids.ravel(), strict=True):
            if int(marker_id) in markers.ids:
                refined = refine_quad(grey, np.asarray(quad, np.float64).reshape(4, 2))
                found.setdefault(markers.ids.index(int(marker_id)), []).append(refined + np.array([x0, y0]))
    # (one marker seen in two overlapping regions is one)
    once = sorted(i for i, quads in found.items() if all(np.abs(q - quads[0]).max() < 2 for q in quads))
    return Sighting(tuple(once), tuple(found[i][0] for i in once))


_ALONG = np.linspace(0.2, 0.8, 9)  # where along each side its edge is measured (share of it)


def refine_quad(grey: NDArray[np.uint8], quad: FloatArray) -> FloatArray:
    """A marker's corners where its four outer edges meet, each edge a line fitted to the
    steepest step of brightness across it at nine places along its middle. The detector's
    corners lie up to 3 px inside a blurred marker (a blurred corner is rounded); a blurred
    straight edge keeps its place. A side whose steps do not line up (a finger over it)
    keeps the detector's line."""
    ends = np.roll(quad, -1, axis=0)
    lengths = np.maximum(np.linalg.norm(ends - quad, axis=1), 1e-9)
    reach = float(np.clip(0.5 * lengths.mean() / 6, 2.5, 5.0))  # half a cell (6 across)
    offsets = np.arange(-reach, reach + 1e-9, 0.25)
    tangents = (ends - quad) / lengths[:, None]
    normals = np.column_stack([tangents[:, 1], -tangents[:, 0]])
    normals *= np.where(np.sum(normals * (quad - quad.mean(axis=0)), axis=1) < 0, -1.0, 1.0)[:, None]
    # outwards: from the marker's dark border to the light paper
    bases = quad[:, None] + _ALONG[None, :, None] * (ends - quad)[:, None]  # side x place x 2
    pts = bases[:, :, None] + offsets[None, None, :, None] * normals[:, None, None]
    xy = pts.reshape(1, -1, 2).astype(np.float32)
    sampled = cv2.remap(grey, xy[..., 0], xy[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    rise = np.diff(np.asarray(sampled, np.float64).reshape(4, len(_ALONG), len(offsets)), axis=2)
    steps = _steepest(rise) * (offsets[1] - offsets[0]) + offsets[0]
    lines = []
    for k in range(4):
        seen = np.isfinite(steps[k])
        strong = float(np.sort(rise[k].max(axis=1))[len(_ALONG) // 2]) >= 2.0  # the median step
        edge = bases[k][seen] + steps[k][seen][:, None] * normals[k]
        lines.append((_fit_line(edge) if strong and seen.sum() >= 5 else None) or (quad[k], tangents[k]))
    corners = [_meet(lines[k - 1], lines[k]) for k in range(4)]
    if any(c is None for c in corners):
        return quad
    refined = np.array(corners, np.float64)
    return refined if float(np.abs(refined - quad).max()) <= reach else quad


Line = tuple[FloatArray, FloatArray]  # a point and a unit direction


def _steepest(rise: FloatArray) -> FloatArray:
    """Where each profile rises most, in samples (a parabola through the steepest step and
    its neighbours); NaN where that is at either end."""
    best = np.argmax(rise, axis=-1)
    left, mid, right = (np.take_along_axis(rise, np.clip(best + d, 0, rise.shape[-1] - 1)[..., None],
                                           axis=-1)[..., 0] for d in (-1, 0, 1))
    curve = left - 2 * mid + right
    curve = np.where(np.abs(curve) > 1e-9, curve, -1e-9)
    inner = (best > 0) & (best < rise.shape[-1] - 1)
    return np.where(inner, best + 0.5 + 0.5 * (left - right) / curve, np.nan)


def _fit_line(points: FloatArray) -> Line | None:
    """The total-least-squares line through `points` (the principal axis of their spread),
    refitted once without those more than 0.5 px off it; None where fewer than five stay."""
    for _ in range(2):
        centre = points.mean(axis=0)
        dx, dy = (points - centre).T
        angle = 0.5 * np.arctan2(2 * float(dx @ dy), float(dx @ dx - dy @ dy))
        direction = np.array([np.cos(angle), np.sin(angle)])
        keep = np.abs(dy * direction[0] - dx * direction[1]) <= 0.5
        if keep.all():
            break
        points = points[keep]
        if len(points) < 5:
            return None
    return centre, direction


def _meet(first: Line, second: Line) -> FloatArray | None:
    (p, u), (q, v) = first, second
    cross = u[0] * v[1] - u[1] * v[0]
    if abs(cross) < 1e-6:
        return None
    t = ((q[0] - p[0]) * v[1] - (q[1] - p[1]) * v[0]) / cross
    return np.asarray(p + t * u, np.float64)


@dataclass(frozen=True, eq=False)
class MarkerFix:
    """The board found by its markers. `pose` is what the referee uses, a homography through
    the grid's corners where the image shows them; `plane` maps the board to the image as a
    lens without distortion would show it, and `bend` is the lens's barrel (or pincushion)
    distortion fitted to the markers (`_unbend`; None until four markers were seen at once)."""

    pose: BoardPose
    plane: FloatArray
    bend: float | None
    seen: int  # markers it was fitted to


# The bend's range: at most 16% of the radius at the middle of the frame's longer side.
_BEND_RANGE = 0.16
_BEND_STEPS = 33
_BEND_GAIN = 0.9  # a bend is kept where the markers' RMS misfit falls to this share or less


def fix_from_markers(sighting: Sighting, markers: MarkerSet, shape: tuple[int, ...], *, need: int,
                     previous: MarkerFix | None = None, bend: float | None = None,
                     max_residual: float = 0.1) -> MarkerFix | None:
    """The board from the markers seen, a1 where their ids put it; None where fewer than
    `need` are seen or they do not fit one board within `max_residual` squares. Four markers
    give a homography and the lens's bend (where not known yet: `bend`, or `previous`'s).
    Three move `previous` by an affine map, two by a turn, scale and slide: that keeps the
    perspective four gave (a homography through three put the hidden corner up to 1% of the
    diagonal off); with no previous fix, three give a homography. Of four, one that fits far
    worse than the others (a hand's shadow on it, a finger along its edge) is left out."""
    if len(sighting) < max(need, 2) or (len(sighting) < 3 and previous is None):
        return None
    centre = np.array([shape[1] - 1, shape[0] - 1], np.float64) / 2
    known = previous.bend if previous is not None and previous.bend is not None else bend
    if known is None and len(sighting) >= 4:
        known = _fit_bend(np.vstack([markers.points(i) for i in sighting.index]),
                          np.vstack(sighting.quads), centre, max(shape[:2]))
    fitted = _fit_markers(sighting, markers, centre, known or 0.0, previous)
    if fitted is None:
        return None
    plane, misfit = fitted
    pose = BoardPose.from_homography(plane, markers.files, markers.ranks)
    side = max(pose.square_size_px(), 1e-6)
    worst = int(np.argmax(misfit))
    others = np.delete(misfit, worst)
    if len(sighting) >= 4 and misfit[worst] > max(_OUTLIER * float(np.max(others)), _OUTLIER_FLOOR * side):
        return fix_from_markers(sighting.without(worst), markers, shape, need=need, previous=previous,
                                bend=known, max_residual=max_residual)
    if float(np.max(misfit)) / side > max_residual or not _upright(pose):
        return None
    corners = _bend(pose.corners_array, centre, known or 0.0)
    shown = BoardPose.from_homography(grid_through(corners, markers.files, markers.ranks),
                                      markers.files, markers.ranks)
    return MarkerFix(shown, plane, known, len(sighting))


# A marker is left out where its corners lie on average this many times farther from the fit
# than any other marker's do, and farther than this share of a square
_OUTLIER, _OUTLIER_FLOOR = 2.0, 0.02


def _fit_markers(sighting: Sighting, markers: MarkerSet, centre: FloatArray, bend: float,
                 previous: MarkerFix | None) -> tuple[FloatArray, FloatArray] | None:
    """The plane's homography fitted to the markers seen (unbent), and each marker's mean
    distance from it (pixels)."""
    board = np.vstack([markers.points(i) for i in sighting.index])
    flat = _unbend(np.vstack(sighting.quads), centre, bend)
    plane = _fit_plane(board, flat, None if len(sighting) >= 4 else previous)
    if plane is None:
        return None
    misses = np.linalg.norm(apply_homography(plane, board) - flat, axis=1)
    return plane, misses.reshape(-1, 4).mean(axis=1)


def _fit_plane(board: FloatArray, image: FloatArray, previous: MarkerFix | None) -> FloatArray | None:
    if previous is None:
        h, _ = cv2.findHomography(board, image, 0)
        return None if h is None else np.asarray(h / h[2, 2], np.float64)
    moved = apply_homography(previous.plane, board)
    if len(board) > 8:  # three markers: an affine move
        affine, *_ = np.linalg.lstsq(np.column_stack([moved, np.ones(len(moved))]), image, rcond=None)
        return np.asarray(np.vstack([affine.T, [0.0, 0.0, 1.0]]) @ previous.plane, np.float64)
    # two: turned, scaled and slid only (a shear fitted to two markers on one side tilts the
    # far side by their noise, 0.15% of the diagonal in the tests)
    x, y = moved[:, 0], moved[:, 1]
    rows = np.vstack([np.column_stack([x, -y, np.ones_like(x), np.zeros_like(x)]),
                      np.column_stack([y, x, np.zeros_like(x), np.ones_like(x)])])
    (a, b, tx, ty), *_ = np.linalg.lstsq(rows, np.concatenate([image[:, 0], image[:, 1]]), rcond=None)
    return np.asarray(np.array([[a, -b, tx], [b, a, ty], [0.0, 0.0, 1.0]]) @ previous.plane, np.float64)


def _unbend(points: FloatArray, centre: FloatArray, bend: float) -> FloatArray:
    """Points as a lens without distortion would show them: the division model, one
    coefficient, about the frame's centre (`bend` per squared pixel)."""
    off = points - centre
    return np.asarray(centre + off / (1 + bend * np.sum(off * off, axis=1))[:, None], np.float64)


def _bend(points: FloatArray, centre: FloatArray, bend: float) -> FloatArray:
    """`_unbend` undone (a fixed point: the bend is a few per cent)."""
    off = points - centre
    shown = off.copy()
    for _ in range(12):
        shown = off * (1 + bend * np.sum(shown * shown, axis=1))[:, None]
    return np.asarray(centre + shown, np.float64)


def _fit_bend(board: FloatArray, image: FloatArray, centre: FloatArray, side: int) -> float:
    """The bend under which the markers' corners fit one homography best (a pinhole view of
    a flat board is one; the lens bends the lines between markers across the board), kept
    where it cuts their misfit by `_BEND_GAIN` or more, else none: Zensū renders' worst
    corner came 0.42% of the diagonal off without it, 0.14% with it; on a real photo whose
    lens bends little, a bend fitted to the noise moved corners off by 0.3 px."""
    reach = _BEND_RANGE / (side / 2) ** 2
    misfits = {float(bend): _misfit(board, _unbend(image, centre, float(bend)))
               for bend in np.linspace(-reach, reach, _BEND_STEPS)}
    bend = min(misfits, key=misfits.__getitem__)
    straight = _misfit(board, image)
    return bend if misfits[bend] <= _BEND_GAIN ** 2 * straight else 0.0


def _misfit(board: FloatArray, image: FloatArray) -> float:
    """The summed squared distance of `image` from the homography fitted to it."""
    h, _ = cv2.findHomography(board, image, 0)
    if h is None:
        return float("inf")
    return float(np.sum((apply_homography(np.asarray(h, np.float64), board) - image) ** 2))


def _upright(pose: BoardPose) -> bool:
    """A real view never mirrors the board (pose.py): a1, its rank and its file turn the
    way a camera above it sees them."""
    c = pose.corners_array
    cross = (c[1, 0] - c[0, 0]) * (c[3, 1] - c[0, 1]) - (c[1, 1] - c[0, 1]) * (c[3, 0] - c[0, 0])
    return bool(cross < 0)


def search_aruco(frame_bgr: NDArray[np.uint8], markers: MarkerSet, *, bend: float | None = None,
                 settings: ArucoSettings | None = None) -> MarkerFix | None:
    """The board by its markers anywhere in the frame; None where fewer than
    `min_markers` show or they do not fit one board."""
    s = settings or default_settings().aruco
    sighting = sight_markers(frame_bgr, markers)
    return fix_from_markers(sighting, markers, frame_bgr.shape, need=max(s.min_markers, 3), bend=bend,
                            max_residual=s.max_residual)


def find_board_aruco(frame_bgr: NDArray[np.uint8], layout: ArucoLayout | MarkerSet, *,
                     min_markers: int | None = None) -> BoardPose:
    """The board's pose from its markers, a1 where they say. Needs at least `min_markers`
    of them (a hand may cover one); NoBoardError otherwise."""
    settings = default_settings().aruco
    if min_markers is not None:
        settings = replace(settings, min_markers=min_markers)
    if not isinstance(frame_bgr, np.ndarray) or frame_bgr.size == 0 or frame_bgr.dtype != np.uint8:
        raise NoBoardError("no board: the frame is empty or not an 8-bit image")
    markers = layout.markers() if isinstance(layout, ArucoLayout) else layout
    fix = search_aruco(frame_bgr, markers, settings=settings)
    if fix is None:
        raise NoBoardError(f"no board: fewer than {max(settings.min_markers, 3)} of its ArUco markers "
                           "in view, or they do not fit one board")
    return fix.pose


def track_aruco(frame_bgr: NDArray[np.uint8], previous: MarkerFix, markers: MarkerSet, *,
                near: BoardPose | None = None, settings: ArucoSettings | None = None) -> MarkerFix | None:
    """The board in this frame from the markers seen near where `previous` put them (or
    `near`, a later pose of the board in any naming of its corners); None where too few show
    (a hand over them, a bump): the line tracker, or a search, goes on from there."""
    s = settings or default_settings().aruco
    pose = near or previous.pose
    boxes = marker_boxes(pose, markers, s.track_pad, frame_bgr.shape)
    sighting = sight_markers(frame_bgr, markers, boxes, marker_width(pose, markers))
    return fix_from_markers(sighting, markers, frame_bgr.shape, need=s.track_min_markers,
                            previous=previous, max_residual=s.max_residual)


def probe_aruco(frame_bgr: NDArray[np.uint8], pose: BoardPose, markers: MarkerSet, *,
                bend: float | None = None, settings: ArucoSettings | None = None) -> MarkerFix | None:
    """The board by its markers, looked for only round the corners of `pose` (found some
    other way, its corners named any way: each marker's region lies the same way outside
    its corner); as `search_aruco` otherwise."""
    s = settings or default_settings().aruco
    boxes = marker_boxes(pose, markers, s.track_pad, frame_bgr.shape)
    sighting = sight_markers(frame_bgr, markers, boxes, marker_width(pose, markers))
    return fix_from_markers(sighting, markers, frame_bgr.shape, need=max(s.min_markers, 3), bend=bend,
                            max_residual=s.max_residual)


def marker_width(pose: BoardPose, markers: MarkerSet) -> float:
    """The markers' mean side in the image (pixels), where `pose` puts them."""
    quads = np.stack([pose.to_image(markers.points(i)) for i in range(len(markers.ids))])
    return float(np.linalg.norm(quads - np.roll(quads, -1, axis=1), axis=2).mean())


def marker_boxes(pose: BoardPose, markers: MarkerSet, pad: float, shape: tuple[int, ...]) -> list[Box]:
    """The image boxes round where `pose` puts each marker (`pad` marker sides each side)."""
    return [box for i in range(len(markers.ids))
            if (box := _marker_box(pose, markers.points(i), pad, shape)) is not None]


def _marker_box(pose: BoardPose, points: FloatArray, pad: float, shape: tuple[int, ...]) -> Box | None:
    """The image box round a marker's board points, widened by `pad` of its side each way;
    None where it lies outside the frame."""
    centre = points.mean(axis=0)
    ring = centre + (points - centre) * (1 + 2 * pad)
    xy = pose.to_image(ring)
    height, width = shape[:2]
    x0, y0 = np.floor(xy.min(axis=0)).astype(int)
    x1, y1 = np.ceil(xy.max(axis=0)).astype(int) + 1
    x0, y0, x1, y1 = max(int(x0), 0), max(int(y0), 0), min(int(x1), width), min(int(y1), height)
    return (x0, y0, x1, y1) if x1 - x0 >= 8 and y1 - y0 >= 8 else None


# ---------------------------------------------------------------- printable board


Rect = tuple[float, float, float, float, float]  # x, y, w, h (mm, y down), grey (0 black)
Stroke = tuple[float, float, float, float, float, float]  # x1, y1, x2, y2, width (mm), grey

BLOCKED_FILL = 0.06  # a blocked square (Renaissance's centre), as the renderer draws it: dark,
BLOCKED_CROSS = 0.4  # crossed corner to corner from 0.15 to 0.85 of the square in a lighter grey


@dataclass(frozen=True)
class _Drawing:
    width_mm: float
    height_mm: float
    rects: tuple[Rect, ...]  # painted first
    lines: tuple[Stroke, ...]  # then these, in order


def _drawing(layout: ArucoLayout, square_mm: float, blocked: tuple[tuple[int, int], ...] = ()) -> _Drawing:
    b = layout.border
    width = (layout.files + 2 * b) * square_mm
    height = (layout.ranks + 2 * b) * square_mm

    def paper(x: float, y: float) -> tuple[float, float]:
        return (x + b) * square_mm, (layout.ranks + b - y) * square_mm

    line_w = max(0.3, 0.025 * square_mm)
    lines: list[Stroke] = []
    for f in range(layout.files + 1):
        lines.append((*paper(f, 0), *paper(f, layout.ranks), line_w, 0.0))
    for r in range(layout.ranks + 1):
        lines.append((*paper(0, r), *paper(layout.files, r), line_w, 0.0))
    rects: list[Rect] = []
    for f, r in blocked:
        rects.append((*paper(f, r + 1), square_mm, square_mm, BLOCKED_FILL))
        for (x1, y1), (x2, y2) in (((0.15, 0.15), (0.85, 0.85)), ((0.15, 0.85), (0.85, 0.15))):
            lines.append((*paper(f + x1, r + y1), *paper(f + x2, r + y2), line_w, BLOCKED_CROSS))
    dictionary = _dictionary(layout.dictionary)
    bits = dictionary.markerSize + 2
    for k, marker_id in enumerate(layout.ids):
        cells = cv2.aruco.generateImageMarker(dictionary, marker_id, bits)
        x0, y0 = paper(*layout.marker_corners(k)[0])  # top-left on paper
        cell = layout.marker * square_mm / bits
        for row, col in zip(*np.nonzero(cells < 128), strict=True):
            rects.append((x0 + col * cell, y0 + row * cell, cell, cell, 0.0))
    return _Drawing(width, height, tuple(rects), tuple(lines))


def _svg_grey(grey: float) -> str:
    return "black" if grey == 0 else "#" + f"{round(255 * grey):02x}" * 3


def _svg(d: _Drawing) -> str:
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{d.width_mm:.3f}mm" height="{d.height_mm:.3f}mm" '
           f'viewBox="0 0 {d.width_mm:.3f} {d.height_mm:.3f}">',
           f'<rect x="0" y="0" width="{d.width_mm:.3f}" height="{d.height_mm:.3f}" fill="white"/>']
    for x, y, w, h, grey in d.rects:  # a hair wider so neighbouring cells print without seams
        out.append(f'<rect x="{x:.3f}" y="{y:.3f}" width="{w + 0.01:.3f}" height="{h + 0.01:.3f}" '
                   f'fill="{_svg_grey(grey)}"/>')
    for x1, y1, x2, y2, w, grey in d.lines:
        out.append(f'<line x1="{x1:.3f}" y1="{y1:.3f}" x2="{x2:.3f}" y2="{y2:.3f}" '
                   f'stroke="{_svg_grey(grey)}" stroke-width="{w:.3f}" stroke-linecap="square"/>')
    out.append("</svg>\n")
    return "\n".join(out)


def _pdf(d: _Drawing) -> bytes:
    pt = 72.0 / 25.4
    w, h = d.width_mm * pt, d.height_mm * pt
    ops = ["2 J"]
    for x, y, rw, rh, grey in d.rects:
        ops.append(f"{grey:.3f} g {x * pt:.3f} {h - (y + rh) * pt:.3f} {rw * pt + 0.02:.3f} "
                   f"{rh * pt + 0.02:.3f} re f")
    for x1, y1, x2, y2, lw, grey in d.lines:
        ops.append(f"{grey:.3f} G {lw * pt:.3f} w {x1 * pt:.3f} {h - y1 * pt:.3f} m {x2 * pt:.3f} "
                   f"{h - y2 * pt:.3f} l S")
    stream = "\n".join(ops).encode("ascii")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w:.3f} {h:.3f}] /Contents 4 0 R >>".encode(),
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    return pdf_file(objects)


def _squares(names: tuple[str, ...], files: int, ranks: int) -> tuple[tuple[int, int], ...]:
    """Square names (`d4`) as (file, rank) from 0."""
    out = []
    for name in names:
        f, r = ord(name[:1].lower()) - ord("a"), (int(name[1:]) - 1 if name[1:].isdigit() else -1)
        if not (0 <= f < files and 0 <= r < ranks):
            raise ValueError(f"{name!r} is not a square of a {files}x{ranks} board")
        out.append((f, r))
    return tuple(out)


def write_printable_board(files: int, ranks: int, square_mm: float, out: str | Path, *,
                          settings: ArucoSettings | None = None, blocked: tuple[str, ...] = ()) -> Path:
    """Write the grid, its `blocked` squares (Renaissance's centre) and its four markers at
    true size to `out` (.svg or .pdf)."""
    if not 5.0 <= square_mm <= 200.0:
        raise ValueError(f"square size {square_mm} mm is out of range 5..200")
    path = Path(out)
    layout = ArucoLayout.for_board(files, ranks, settings)
    drawing = _drawing(layout, square_mm, _squares(blocked, files, ranks))
    suffix = path.suffix.lower()
    try:
        if suffix == ".svg":
            path.write_text(_svg(drawing), encoding="utf-8")
        elif suffix == ".pdf":
            path.write_bytes(_pdf(drawing))
        else:
            raise OutputError(f"cannot write {path}: a printable board is .svg or .pdf")
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def board_image(files: int, ranks: int, px_per_mm: float, square_mm: float = 40.0, *,
                settings: ArucoSettings | None = None, blocked: tuple[str, ...] = ()) -> NDArray[np.uint8]:
    """The printable board drawn as a BGR image (the same shapes as the SVG and PDF)."""
    d = _drawing(ArucoLayout.for_board(files, ranks, settings), square_mm, _squares(blocked, files, ranks))
    img = np.full((round(d.height_mm * px_per_mm), round(d.width_mm * px_per_mm), 3), 255, np.uint8)
    shift = 4
    one = 1 << shift

    def p(x: float, y: float) -> tuple[int, int]:
        return round((x * px_per_mm - 0.5) * one), round((y * px_per_mm - 0.5) * one)

    for x, y, w, h, grey in d.rects:
        c0, r0 = round(x * px_per_mm), round(y * px_per_mm)
        c1, r1 = round((x + w) * px_per_mm), round((y + h) * px_per_mm)
        img[r0:r1, c0:c1] = round(255 * grey)
    for x1, y1, x2, y2, w, grey in d.lines:
        tone = (round(255 * grey),) * 3
        cv2.line(img, p(x1, y1), p(x2, y2), tone, max(1, round(w * px_per_mm)), cv2.LINE_AA, shift)
    return img


def board_image_to_board(files: int, ranks: int, px_per_mm: float, square_mm: float = 40.0, *,
                         settings: ArucoSettings | None = None) -> FloatArray:
    """The homography from board units to pixels of `board_image` (for tests)."""
    b = ArucoLayout.for_board(files, ranks, settings).border
    k = square_mm * px_per_mm
    return np.array([[k, 0, b * k - 0.5], [0, -k, (ranks + b) * k - 0.5], [0, 0, 1.0]])
