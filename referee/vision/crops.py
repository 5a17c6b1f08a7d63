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
    levels = pyramid_levels(float(np.median([_shrink(q, spec) for q in quads])))
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


def _shrink(quad: Quad, spec: CropSpec) -> float:
    """How many image pixels go into one crop pixel."""
    sides = np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)
    return float(sides.mean() * (1.0 + 2.0 * spec.margin) / spec.size)
