"""Reading a small board's grid from every intersection of its lines (the `corners-grid`
network, `corner_data.RECIPES`).

The network reads the canvas a corner refiner reads (`corner_net.Canvas`: the frame warped so
that a board guessed at a quadrilateral lies square), and its heat marks every intersection
of the board's lines, not only the four outer corners. Where the guess is right, each
intersection lies on the canvas's own lattice; so a grid is *checked* by how many of its
intersections the network marks there (`support`), and a grid is *fitted* to the
intersections marked near the lattice (`fit`: a homography through them, RANSAC against the
odd one a hand's edge makes). A hand over a corner hides a few intersections, not the grid:
the rest still fix it, where a line fit locks onto the hand's edge and a corner network has
to guess the hidden corner.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.corner_net import CornerNet, as_bgr, network_input, peak_near
from referee.vision.pose import FloatArray, board_corners, board_lattice

RADIUS = 3  # cells (of 4 canvas pixels) round a lattice point searched for its intersection


@dataclass(frozen=True)
class Support:
    """How well a grid is seen: `seen` of its intersections marked (heat at least the
    threshold) within the distance asked of the lattice point, and the median distance of
    all those marked (canvas pixels)."""

    seen: int
    median_px: float


@dataclass(frozen=True)
class GridReader:
    """A `corners-grid` network and how its marks are taken: an intersection counts where
    its heat reaches `heat` and lies within `near_px` canvas pixels (also the fit's RANSAC
    threshold); a fit reads `turns` views turned a quarter each, `rounds` times from the
    last fit."""

    net: CornerNet
    heat: float
    near_px: float
    turns: int = 4
    rounds: int = 2

    def __post_init__(self) -> None:
        if self.net.canvas is None or self.net.card.get("points") != "grid":
            raise ValueError(f"{self.net.path}: not a grid reader (its card marks no grid points)")

    def lattice(self) -> NDArray[np.float64]:
        """The canvas pixels where a rightly guessed board's intersections lie, rank-major."""
        canvas = self.net.canvas
        assert canvas is not None
        return (board_lattice(canvas.files, canvas.ranks) + canvas.margin) * canvas.square_px

    def marks(self, frame_bgr: NDArray[np.uint8], quad: FloatArray
              ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """The intersection marked nearest each lattice point of the canvas of a board guessed
        at `quad` (canvas pixels), its heat, and the frame-to-canvas homography."""
        canvas = self.net.canvas
        assert canvas is not None
        image, to_canvas = canvas.view(as_bgr(frame_bgr), quad)
        maps = self.net.heat_maps(network_input(image))
        points, heats = [], []
        for point in self.lattice():
            found = peak_near(maps, point, RADIUS)
            points.append(point if found is None else found[0])
            heats.append(0.0 if found is None else found[1])
        return np.array(points), np.array(heats), to_canvas

    def support(self, frame_bgr: NDArray[np.uint8], quad: FloatArray) -> Support:
        points, heats, _ = self.marks(frame_bgr, quad)
        apart = np.linalg.norm(points - self.lattice(), axis=1)[heats >= self.heat]
        return Support(int(np.sum(apart <= self.near_px)), float(np.median(apart)) if len(apart) else np.inf)

    def fit(self, frame_bgr: NDArray[np.uint8], quad: FloatArray) -> FloatArray | None:
        """The board's corners (frame pixels, `quad`'s order) of the grid fitted to the
        intersections marked in `turns` views, each corner averaged over them; None where a
        view marks too few to fit."""
        quad = np.asarray(quad, np.float64)
        fits = []
        for turn in range(self.turns):
            fitted = self._fit_view(frame_bgr, np.roll(quad, turn, axis=0))
            if fitted is None:
                return None
            fits.append(np.roll(fitted, -turn, axis=0))
        return np.asarray(np.mean(fits, axis=0), np.float64)

    def _fit_view(self, frame_bgr: NDArray[np.uint8], quad: FloatArray) -> FloatArray | None:
        canvas = self.net.canvas
        assert canvas is not None
        board = board_lattice(canvas.files, canvas.ranks)
        corners = board_corners(canvas.files, canvas.ranks).astype(np.float64)
        for _ in range(self.rounds):
            points, heats, to_canvas = self.marks(frame_bgr, quad)
            seen = heats >= self.heat
            if seen.sum() < 5:  # four fix a homography; a fifth lets RANSAC refuse one
                return None
            h, inliers = cv2.findHomography(board[seen], points[seen], cv2.RANSAC, self.near_px)
            if h is None:
                return None
            kept = inliers.ravel().astype(bool)
            if kept.sum() >= 5:
                h, _ = cv2.findHomography(board[seen][kept], points[seen][kept], 0)
            if h is None:
                return None
            in_canvas = cv2.perspectiveTransform(corners[None], h)[0]
            quad = cv2.perspectiveTransform(in_canvas[None], np.linalg.inv(to_canvas))[0]
        return np.asarray(quad, np.float64)
