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

The network was trained on 3x3 boards, but an intersection looks alike on any board: a bigger
board is read a 3x3 window at a time (`windows`, `board_marks`), and its grid checked and
fitted from every window's marks (`support`, `fit_board`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.corner_net import CornerNet, as_bgr, network_input, peak_near
from referee.vision.pose import FloatArray, apply_homography, board_corners, board_lattice, grid_through

RADIUS = 3  # cells (of 4 canvas pixels) round a lattice point searched for its intersection


@dataclass(frozen=True)
class Support:
    """How well a grid is seen: `seen` of the `read` intersections its windows hold marked
    (heat at least the threshold) within the distance asked of where it puts them, and the
    median distance of all those marked (canvas pixels)."""

    seen: int
    read: int
    median_px: float

    def share(self) -> float:
        return self.seen / self.read


def windows(files: int, ranks: int) -> list[FloatArray]:
    """The corners (board squares, in turn) of the 3x3 windows a board is read in: from each
    side inwards, three squares apart, overlapping at the middle (a 3x3 board is one window,
    a 5x5 board four)."""
    def starts(n: int) -> list[int]:
        return sorted({*range(0, n - 3, 3), n - 3})
    return [board_corners(3, 3) + np.array([i, j]) for j in starts(ranks) for i in starts(files)]


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

    def board_marks(self, frame_bgr: NDArray[np.uint8], h: FloatArray, files: int, ranks: int
                    ) -> tuple[FloatArray, FloatArray, NDArray[np.float64]]:
        """Window by window, each intersection of the grid `h` (board squares to frame pixels)
        in board squares, where the reader marks it (board squares, through `h`), and its heat."""
        to_board = np.linalg.inv(h)
        lattice, marked, heats = [], [], []
        for window in windows(files, ranks):
            points, heat, to_canvas = self.marks(frame_bgr, apply_homography(h, window))
            lattice.append(board_lattice(3, 3) + window[0])
            marked.append(apply_homography(to_board @ np.linalg.inv(to_canvas), points))
            heats.append(heat)
        return np.vstack(lattice), np.vstack(marked), np.concatenate(heats)

    def support(self, frame_bgr: NDArray[np.uint8], h: FloatArray, files: int, ranks: int) -> Support:
        """How well the grid `h` (board squares to frame pixels) is seen."""
        lattice, marked, heats = self.board_marks(frame_bgr, h, files, ranks)
        apart = self._square_px() * np.linalg.norm(marked - lattice, axis=1)[heats >= self.heat]
        return Support(int(np.sum(apart <= self.near_px)), len(lattice),
                       float(np.median(apart)) if len(apart) else np.inf)

    def fit_board(self, frame_bgr: NDArray[np.uint8], h: FloatArray, files: int, ranks: int
                  ) -> FloatArray | None:
        """The grid (board squares to frame pixels) fitted to the intersections marked in every
        window of the grid `h`, one view each, `rounds` times from the last fit; None where
        too few are marked to fit."""
        for _ in range(self.rounds):
            lattice, marked, heats = self.board_marks(frame_bgr, h, files, ranks)
            seen = heats >= self.heat
            moved = _robust_homography(lattice[seen], marked[seen], self.near_px / self._square_px())
            if moved is None:
                return None
            h = h @ moved
        return np.asarray(h, np.float64)

    def settled_marks(self, frame_bgr: NDArray[np.uint8], h: FloatArray, files: int, ranks: int,
                      move: float, spread: float) -> tuple[FloatArray, FloatArray]:
        """The intersections of the grid `h` (board squares to frame pixels) whose marks stay
        put when the guess moves: each 3x3 window (`windows`) read from `h` and from guesses
        moved `move` squares (under half a square) either way along each side and grown and
        shrunk about the window's middle by a third of that, `turns` views each, and an
        intersection kept where every read that holds it marks one within `spread` squares of
        their median. Under a hand the network still marks the intersections it cannot see,
        but where the guess puts them, so they move with it and pull a fit towards its start;
        those it sees stay. Their board squares and frame pixels (the median)."""
        lattice, to_board = board_lattice(files, ranks), np.asarray(np.linalg.inv(h), np.float64)
        moves = [(0.0, 0.0, 1.0), (move, 0.0, 1.0), (-move, 0.0, 1.0), (0.0, move, 1.0), (0.0, -move, 1.0),
                 (0.0, 0.0, 1 + move / 3), (0.0, 0.0, 1 - move / 3)]
        reads: list[FloatArray] = []  # one a read: each intersection's mark (board squares), nan where none
        held: list[NDArray[np.bool_]] = []  # ... and the intersections the read's window holds
        for window in windows(files, ranks):
            middle = window.mean(axis=0)
            for dx, dy, scale in moves:
                quad = apply_homography(h, (window - middle) * scale + middle + [dx, dy])
                for turn in range(self.turns):
                    turned = np.roll(quad, turn, axis=0)
                    read, holds = self._read_named(frame_bgr, turned, to_board, files, ranks)
                    reads.append(read)
                    held.append(holds)
        stack, holding = np.array(reads), np.array(held)
        settled, medians = [], []
        for k in range(len(lattice)):
            marks = stack[holding[:, k], k]
            if len(marks) == 0 or np.isnan(marks).any():
                continue
            median = np.median(marks, axis=0)
            if np.linalg.norm(marks - median, axis=1).max() <= spread:
                settled.append(k)
                medians.append(median)
        return lattice[settled], apply_homography(h, np.array(medians).reshape(-1, 2))

    def _read_named(self, frame_bgr: NDArray[np.uint8], quad: FloatArray, to_board: FloatArray, files: int,
                    ranks: int) -> tuple[FloatArray, NDArray[np.bool_]]:
        """One read of a 3x3 window guessed at `quad`: each board intersection's mark (board
        squares, through `to_board`; nan where unmarked) and which intersections it holds,
        each of its lattice points named by the intersection nearest where it lies."""
        points, heats, to_canvas = self.marks(frame_bgr, quad)
        named = np.rint(apply_homography(to_board @ grid_through(quad, 3, 3), board_lattice(3, 3)))
        index = (named[:, 1] * (files + 1) + named[:, 0]).astype(int)
        marked = apply_homography(to_board @ np.linalg.inv(to_canvas), points)
        marked[heats < self.heat] = np.nan
        read = np.full(((files + 1) * (ranks + 1), 2), np.nan)
        read[index] = marked
        holds = np.zeros(len(read), bool)
        holds[index] = True
        return read, holds

    def _square_px(self) -> float:
        canvas = self.net.canvas
        assert canvas is not None
        return float(canvas.square_px)

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
            h = _robust_homography(board[seen], points[seen], self.near_px)
            if h is None:
                return None
            in_canvas = cv2.perspectiveTransform(corners[None], h)[0]
            quad = cv2.perspectiveTransform(in_canvas[None], np.linalg.inv(to_canvas))[0]
        return np.asarray(quad, np.float64)


def _robust_homography(source: FloatArray, target: FloatArray, threshold: float) -> FloatArray | None:
    """The homography taking `source` to `target`, fitted by RANSAC at `threshold` (target
    units) and again through its inliers; None where fewer than five points are given (four
    fix a homography; a fifth lets RANSAC refuse one) or no fit is found."""
    if len(source) < 5:
        return None
    h, inliers = cv2.findHomography(source, target, cv2.RANSAC, threshold)
    if h is None:
        return None
    kept = inliers.ravel().astype(bool)
    if kept.sum() >= 5:
        h, _ = cv2.findHomography(source[kept], target[kept], 0)
    return None if h is None else np.asarray(h, np.float64)
