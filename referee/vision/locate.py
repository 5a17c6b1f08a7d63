"""Finding a piece in its square's crop, so that it can be cut again round itself.

A club's dice may sit small in their squares or fill them (`benchmarks/real_dice.md`), and
a model reads a die best at the size it learnt (its card's `made_for`). A die stands apart
from the square under it, so it can be found there without the model: the crop's margin
(the ring of board outside the square) gives the board's colour, pixels far from it in Lab
are the piece, and the piece is what covers the crop's centre. Rings about the centre
(square rings, as a die's box is square) are walked outwards until one is mostly board: the
die ends there, and a neighbouring die further out is not taken with it. The second look
(`vision.second_look`) then cuts the square again round the piece found, as wide as the
model's own cut (`DIE_TO_SQUARE`)."""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.crops import DIE_TO_SQUARE, CropSpec, ImageBGR, Quad, crop_matrix

FLOOR = 14.0  # Lab distance from the board's colour under which a pixel is board (noise, shading)
CORE = 0.5  # the centre rings must be at least this much piece, else no piece covers the centre
EDGE = 0.35  # the piece ends at the first ring less than this much piece
SIDES = (0.25, 1.1)  # a piece's box as a share of its square's side, smallest and largest


class PieceBox(NamedTuple):
    """A piece's axis-aligned box in crop pixels: its centre and its longer side."""

    x: float
    y: float
    side: float


def find_piece(crop: ImageBGR, spec: CropSpec) -> PieceBox | None:
    """The box of the piece covering the centre of `crop` (cut with `spec`), or None where
    the centre is board or the piece found is no size a piece on that square could be."""
    piece = _piece_pixels(crop, spec)
    size = crop.shape[0]
    ring = _rings(size)
    share = (np.bincount(ring.ravel(), piece.ravel(), size // 2 + 1)
             / np.maximum(np.bincount(ring.ravel(), minlength=size // 2 + 1), 1))
    if share[:3].mean() < CORE:
        return None
    edge = next((r for r, s in enumerate(share) if s < EDGE), len(share) - 1)
    ys, xs = np.nonzero(piece & (ring <= edge + 1))
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    side = float(max(x1 - x0, y1 - y0))
    square = size - 2.0 * spec.border
    if not SIDES[0] * square <= side <= SIDES[1] * square:
        return None
    return PieceBox((x0 + x1) / 2.0, (y0 + y1) / 2.0, side)


def piece_quad(quad: Quad, box: PieceBox, spec: CropSpec, cut: float = DIE_TO_SQUARE) -> Quad:
    """The square, in image pixels, that stands `cut` times the piece's box round it: the
    square `quad`'s crop (`spec`) mapped back through its perspective."""
    half = box.side * cut / 2.0
    corners = np.array([[box.x - half, box.y - half], [box.x + half, box.y - half],
                        [box.x + half, box.y + half], [box.x - half, box.y + half]], np.float64)
    to_image = np.linalg.inv(crop_matrix(quad, spec))
    return np.asarray(cv2.perspectiveTransform(corners[None], to_image)[0], np.float32)


def _piece_pixels(crop: ImageBGR, spec: CropSpec) -> NDArray[np.bool_]:
    """The crop's pixels far in colour from the board's (the median of its margin), by Otsu's
    threshold on that distance, no lower than `FLOOR`; specks opened away."""
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32)
    b = max(2, round(spec.border))
    margin = np.concatenate([lab[:b].reshape(-1, 3), lab[-b:].reshape(-1, 3),
                             lab[b:-b, :b].reshape(-1, 3), lab[b:-b, -b:].reshape(-1, 3)])
    distance = np.linalg.norm(lab - np.median(margin, axis=0), axis=2)
    # Otsu on the distance at half-unit steps (a uint8 image), back in Lab units
    otsu, _ = cv2.threshold(np.clip(distance * 2.0, 0, 255).astype(np.uint8), 0, 255,
                            cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    piece = (distance > max(otsu / 2.0, FLOOR)).astype(np.uint8)
    return cv2.morphologyEx(piece, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)).astype(bool)


def _rings(size: int) -> NDArray[np.intp]:
    """Each pixel's square ring about the crop's centre (Chebyshev distance, whole pixels)."""
    ys, xs = np.mgrid[:size, :size]
    centre = size / 2.0 - 0.5
    return np.asarray(np.maximum(abs(xs - centre), abs(ys - centre)), np.intp)
