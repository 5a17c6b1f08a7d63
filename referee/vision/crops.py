"""Square crops: the one function that cuts what a classifier sees, used both to make training
data and at run time (chesscog's rule: the same crop code on both sides, so the model never
sees a geometry it was not trained on).

A square is a quadrilateral of four image points, clockwise from the top-left corner as the
board is read (TL, TR, BR, BL). Its crop is that square widened by `margin` (a fraction of
the side, on every side) and warped to `size` x `size` pixels, so a square's own border sits
at `margin / (1 + 2 * margin)` of the crop width from each edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

Quad = NDArray[np.float32]  # shape (4, 2): TL, TR, BR, BL in image pixels (x, y)
ImageBGR = NDArray[np.uint8]  # shape (H, W, 3)

# A die fills about this much of its board square's side: widening a die's box by it gives
# the square it would stand in (for photos of loose dice, such as the real dice set).
DIE_TO_SQUARE = 1.4


@dataclass(frozen=True)
class CropSpec:
    """How a model's crops are cut: output side in pixels and the margin around the square."""

    size: int = 48
    margin: float = 0.12

    def __post_init__(self) -> None:
        if self.size < 8:
            raise ValueError(f"crop size {self.size} is too small (8 pixels at least)")
        if not 0.0 <= self.margin < 1.0:
            raise ValueError(f"crop margin {self.margin} must be in [0, 1)")

    @property
    def border(self) -> float:
        """Distance in crop pixels from a crop's edge to its square's border."""
        return self.size * self.margin / (1.0 + 2.0 * self.margin)


def scaled_quads(quads: np.ndarray, scale: float) -> np.ndarray:
    """Each quad (N, 4, 2) scaled about its centre."""
    quads = np.asarray(quads, np.float64)
    centres = quads.mean(axis=1, keepdims=True)
    return np.asarray(centres + (quads - centres) * scale, np.float32)


def as_quad(points: NDArray[np.floating] | list[list[float]]) -> Quad:
    quad = np.asarray(points, dtype=np.float32)
    if quad.shape != (4, 2) or not np.all(np.isfinite(quad)):
        raise ValueError(f"a square is 4 finite (x, y) points, got shape {quad.shape}")
    return quad


def square_quad(center: tuple[float, float], side: float, angle_deg: float = 0.0) -> Quad:
    """The axis-aligned (or turned by `angle_deg`, counter-clockwise on screen) square of
    `side` pixels centred on `center`."""
    half = side / 2.0
    corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]], np.float64)
    theta = np.deg2rad(angle_deg)
    # Image y points down, so a positive angle turns the square counter-clockwise on screen.
    rotation = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
    return as_quad(corners @ rotation.T + np.asarray(center, np.float64))


def box_square(box: tuple[float, float, float, float], *, scale: float = DIE_TO_SQUARE) -> Quad:
    """The board square a piece with bounding box (xmin, ymin, xmax, ymax) would stand in: a
    square on the box centre whose side is the box's longer side times `scale`."""
    xmin, ymin, xmax, ymax = box
    if not (xmax > xmin and ymax > ymin):
        raise ValueError(f"empty box {box}")
    side = max(xmax - xmin, ymax - ymin) * scale
    return square_quad(((xmin + xmax) / 2.0, (ymin + ymax) / 2.0), side)


def widen(quad: Quad, margin: float) -> Quad:
    """The quadrilateral grown about its centre by `margin` of its size on every side."""
    center = quad.mean(axis=0, keepdims=True)
    return as_quad(center + (quad - center) * (1.0 + 2.0 * margin))


def crop_matrix(quad: Quad, spec: CropSpec) -> NDArray[np.float64]:
    """The perspective transform from image pixels to crop pixels for the square `quad`."""
    target = np.array(
        [[0, 0], [spec.size, 0], [spec.size, spec.size], [0, spec.size]], dtype=np.float32
    )
    return np.asarray(
        cv2.getPerspectiveTransform(widen(as_quad(quad), spec.margin), target), np.float64
    )


def crop_square(image_bgr: ImageBGR, quad: Quad, spec: CropSpec) -> ImageBGR:
    """Cut the square `quad` of `image_bgr` with its margin, warped to spec.size pixels.
    Parts outside the image are filled by reflection, so a square at the image edge still
    looks like a square rather than one with a black band."""
    crop: ImageBGR = crop_squares(image_bgr, [quad], spec)[0]
    return crop


def crop_squares(image_bgr: ImageBGR, quads: Sequence[Quad], spec: CropSpec) -> NDArray[np.uint8]:
    """All the squares' crops as one (N, size, size, 3) batch, in the order given.

    Warping samples points, so a big square shrunk to a small crop would alias (pips and
    grid lines flicker). When the squares are at least twice the crop's size, the image is
    first halved (Gaussian pyramid) until they are less than that, once for the batch."""
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3 or image_bgr.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 3) uint8 BGR image, got {image_bgr.shape}")
    quads = [as_quad(q) for q in quads]
    batch = np.empty((len(quads), spec.size, spec.size, 3), np.uint8)
    if not quads:
        return batch
    quads_array = np.stack(quads)
    sides = np.linalg.norm(np.roll(quads_array, -1, axis=1) - quads_array, axis=2).mean(axis=1)
    levels = pyramid_levels(float(np.median(sides)) * (1.0 + 2.0 * spec.margin) / spec.size)
    source = image_bgr
    for _ in range(levels):
        source = np.asarray(cv2.pyrDown(source), np.uint8)
    scale = np.float32(0.5**levels)  # pyrDown keeps pixel i of the half image at 2i
    for i, quad in enumerate(quads):
        batch[i] = cv2.warpPerspective(
            source,
            crop_matrix(quad * scale, spec),
            (spec.size, spec.size),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REFLECT_101,
        )
    return batch


def pyramid_levels(shrink: float) -> int:
    """How many times to halve an image so that `shrink` image pixels a crop pixel drops
    below 2."""
    levels = 0
    while shrink >= 2.0:
        shrink /= 2.0
        levels += 1
    return levels



# --- A whole board at once --------------------------------------------------------------------
#
# A board's squares lie on one plane (top_face_quads lifts the whole grid), so one homography
# maps them all. Warping the board once onto a canvas of a whole number of pixels a square
# and slicing the crops out of it costs one warp instead of one a square (and a seam); the
# crops are the same squares, widened by the margin on the board's plane instead of about
# each quad's corner mean in the image (within a pixel at these tilts).

GRID_FIT_PX = 0.5  # largest corner misfit (image pixels) for quads to count as one grid


@dataclass(frozen=True)
class BoardCanvas:
    """A board warped top-down: square (file, rank) covers `side` pixels from
    (offset + file * side, offset + (ranks - 1 - rank) * side), the far rank on top."""

    image: ImageBGR
    files: int
    ranks: int
    side: int
    offset: int

    def corner(self, index: int) -> tuple[int, int]:
        """(x, y) of square `index`'s far-left corner (rules order)."""
        rank, file = divmod(index, self.files)
        return self.offset + file * self.side, self.offset + (self.ranks - 1 - rank) * self.side

    def squares(self, spec: CropSpec) -> NDArray[np.uint8]:
        """Every square's crop, rules order: what `crop_squares` cuts for `spec`."""
        border, size = _whole_border(spec, self.side), spec.size
        batch = np.empty((self.files * self.ranks, size, size, 3), np.uint8)
        for index in range(len(batch)):
            x, y = self.corner(index)
            batch[index] = self.image[y - border:y - border + size, x - border:x - border + size]
        return batch

    def seams(self, spec: CropSpec) -> NDArray[np.uint8]:
        """Every seam's crop in `seam_quads` order: what `crop_squares` cuts from those."""
        border, size, half = _whole_border(spec, self.side), spec.size, self.side // 2
        files, ranks = self.files, self.ranks
        batch = np.empty(((files - 1) * ranks + files * (ranks - 1), size, size, 3), np.uint8)
        count = 0
        for index in range(files * ranks):
            rank, file = divmod(index, files)
            x, y = self.corner(index)
            if file + 1 < files:  # east-west: the square shifted half a square east
                left, top = x + half - border, y - border
                batch[count] = self.image[top:top + size, left:left + size]
                count += 1
            if rank + 1 < ranks:  # north-south: half a square north, turned so that the
                # near square lies left (one row lower: the turn maps row size-1-j to j)
                left, top = x - border, y - half - border + 1
                batch[count] = np.rot90(self.image[top:top + size, left:left + size], -1)
                count += 1
        return batch


def fits_canvas(spec: CropSpec, side: int, *, seams: bool = False) -> bool:
    """Whether `spec`'s crops can be sliced from a canvas of `side` pixels a square: the
    same square size, a whole number of margin pixels (and for seams an even side)."""
    exact = spec.size / (1.0 + 2.0 * spec.margin)
    border = spec.margin * exact
    return (abs(exact - side) < 1e-6 and abs(border - round(border)) < 1e-6
            and not (seams and side % 2))


def canvas_side(spec: CropSpec) -> int:
    """The side in canvas pixels of a square in `spec`'s crops (rounded)."""
    return round(spec.size / (1.0 + 2.0 * spec.margin))


def board_canvas(image_bgr: ImageBGR, quads: Sequence[Quad] | NDArray[np.floating],
                 files: int, side: int, border: int) -> BoardCanvas | None:
    """`image_bgr` warped so that each of `quads` (rules order: index = rank * files + file;
    corners far-left, far-right, near-right, near-left as `warp.top_face_quads` gives them)
    covers `side` pixels, with `border` pixels around the board; None when the quads are no
    such grid (their corners miss one homography by more than GRID_FIT_PX). Like
    `crop_squares`, the image is first halved (Gaussian pyramid, only the board's part)
    while a square would lose more than half its pixels."""
    points = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    count = len(points)
    if files < 1 or count == 0 or count % files or side < 2:
        return None
    ranks = count // files
    rank, file = np.divmod(np.arange(count), files)
    cells = np.stack([file, ranks - 1 - rank], axis=1)[:, None, :] + _CORNERS[None]
    canvas_pts = cells.reshape(-1, 2) * side + border
    image_pts = points.reshape(-1, 2)
    # The board's outer corners give the homography (a least-squares fit of all corners
    # costs ~0.5 ms); all corners must then agree with it.
    outer = [4 * (count - files), 4 * (count - 1) + 1, 4 * (files - 1) + 2, 3]
    h = cv2.getPerspectiveTransform(canvas_pts[outer].astype(np.float32),
                                    image_pts[outer].astype(np.float32))
    fitted = cv2.perspectiveTransform(canvas_pts[None], h)[0]
    if not float(np.abs(fitted - image_pts).max()) <= GRID_FIT_PX:
        return None
    width, height = files * side + 2 * border, ranks * side + 2 * border
    sides = np.linalg.norm(np.roll(points, -1, axis=1) - points, axis=2).mean(axis=1)
    levels = pyramid_levels(float(np.median(sides)) / side)
    step = 2**levels
    box = cv2.perspectiveTransform(
        np.array([[[0, 0], [width, 0], [width, height], [0, height]]], np.float64), h)[0]
    rows, cols = image_bgr.shape[:2]
    x0 = max(0, (int(np.floor(box[:, 0].min())) - 4 * step) // step * step)
    y0 = max(0, (int(np.floor(box[:, 1].min())) - 4 * step) // step * step)
    x1 = min(cols, int(np.ceil(box[:, 0].max())) + 4 * step)
    y1 = min(rows, int(np.ceil(box[:, 1].max())) + 4 * step)
    if x1 - x0 < 4 * step or y1 - y0 < 4 * step:
        return None  # the board lies outside the image
    source = image_bgr[y0:y1, x0:x1]
    for _ in range(levels):
        source = np.asarray(cv2.pyrDown(source), np.uint8)
    to_source = np.array([[1 / step, 0, -x0 / step], [0, 1 / step, -y0 / step], [0, 0, 1]])
    warped = cv2.warpPerspective(source, to_source @ h, (width, height),
                                 flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                 borderMode=cv2.BORDER_REFLECT_101)
    return BoardCanvas(np.asarray(warped, np.uint8), files, ranks, side, border)


def grid_crops(image_bgr: ImageBGR, quads: Sequence[Quad], files: int,
               spec: CropSpec) -> NDArray[np.uint8]:
    """The crops `crop_squares` cuts for a board's squares (`quads` as `board_canvas`
    takes them), from one warp of the board; falls back to `crop_squares` when the quads
    are no grid or `spec` does not fit a canvas (see `fits_canvas`)."""
    side = canvas_side(spec)
    canvas = None
    if fits_canvas(spec, side):
        canvas = board_canvas(image_bgr, quads, files, side, _whole_border(spec, side))
    return canvas.squares(spec) if canvas else crop_squares(image_bgr, quads, spec)


def grid_seam_crops(image_bgr: ImageBGR, quads: Sequence[Quad], files: int,
                    spec: CropSpec) -> NDArray[np.uint8]:
    """The crops of `seam_quads` (squares centred on the lines between neighbours), as
    `grid_crops` cuts squares."""
    side = canvas_side(spec)
    canvas = None
    if fits_canvas(spec, side, seams=True):
        border = side // 2 + _whole_border(spec, side)
        canvas = board_canvas(image_bgr, quads, files, side, border)
    if canvas:
        return canvas.seams(spec)
    seams = seam_quads(np.asarray(quads, np.float64), files, len(quads) // files)
    return crop_squares(image_bgr, [q for _, _, q in seams], spec)


def seam_quads(quads: NDArray[np.floating], files: int, ranks: int
               ) -> list[tuple[int, int, NDArray[np.float32]]]:
    """Every pair of orthogonal neighbours (square indices a, b) with a square quad centred
    on the line between them, turned so that the line runs top to bottom and `a` lies left
    (east-west pairs: a west of b; north-south pairs: a nearer the first player). The same
    function cuts training and run-time seam crops."""
    out = []
    for index in range(files * ranks):
        file, rank = index % files, index // files
        a = quads[index]  # far-left, far-right, near-right, near-left
        if file + 1 < files:
            b = quads[index + 1]
            quad = [(a[0] + a[1]) / 2, (b[0] + b[1]) / 2, (b[3] + b[2]) / 2, (a[3] + a[2]) / 2]
            out.append((index, index + 1, np.asarray(quad, np.float32)))
        if rank + 1 < ranks:
            b = quads[index + files]
            far = [(b[0] + b[3]) / 2, (b[1] + b[2]) / 2]
            near = [(a[1] + a[2]) / 2, (a[0] + a[3]) / 2]
            out.append((index, index + files,
                        np.asarray([near[1], far[0], far[1], near[0]], np.float32)))
    return out


_CORNERS = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float64)  # TL, TR, BR, BL


def _whole_border(spec: CropSpec, side: int) -> int:
    return round(spec.margin * spec.size / (1.0 + 2.0 * spec.margin))
