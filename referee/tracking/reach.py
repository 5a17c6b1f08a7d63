"""Where the players' hands rested over the board since the position was last seen.

Two plies may leave the same board and differ only in where the hand made them: in
Renaissance a marker pushed in at the edge of a line of the mover's own markers, and a marker
placed on the square the push leaves one on. No still frame tells them apart; the hand does.
In each frame the arm is the patch of the stillness view that changed since the last clean
reading and reaches the view's edge (`stabiliser.arm_blobs`, with finer settings than the
stillness check's, or its own where those see most of the view changed); its tip, the
fingertips, is the middle of its far end from where it came in across the edge (where it first
showed: a hand laying a marker beyond the far rim crosses the edge there too). Where the tip
stays put for a moment, the hand rests: that is where it laid, pushed or lifted something."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import cv2
import numpy as np

from referee.tracking.stabiliser import ArmSettings, overlap


@dataclass(frozen=True)
class ReachSettings:
    # The tip staying within this (half a square) of where it has been since it slowed down,
    # for at least `rest_s`, rests (a travelling hand moves about a third of a square a frame;
    # a resting one's farthest pixel jitters by a few pixels).
    rest_px: float = 6.0
    rest_s: float = 0.15
    edge_px: int = 3  # an arm's pixels this near the view's edge are where it comes in
    tip_px: float = 3.0  # the arm's pixels this near its farthest reach are its tip (`arm_reach`)
    most_rests: int = 16
    # An arm unseen this long has gone: the next comes in afresh (the tests lose an arm
    # reaching across the board for a few frames now and then).
    gone_s: float = 0.3
    # An arm covers less of the view than this: past it, the light or the exposure changed
    # (a camera brightening the frame as a dark sleeve comes in), not an arm alone.
    most_of_view: float = 0.4
    # The arm as seen for its tip: subtler changes than the stillness check's (a pale hand
    # over light wooden tiles changes the grey view by a few levels; the check's 6 found only
    # the sleeve, its tip a square and a half short of the fingers).
    arm: ArmSettings = field(default_factory=lambda: ArmSettings(threshold=3.0, contrast_share=0.03,
                                                                 light_match=2.0))
    # ... and where so subtle a test sees `most_of_view` changed (an arm reaching across a
    # small board, its shadow beside it), the stillness check's own, which sees the arm alone
    # (`GameLoop` gives its stabiliser's settings; these are their defaults).
    flooded_arm: ArmSettings = field(default_factory=ArmSettings)


class Reach(NamedTuple):
    came: np.ndarray  # where the arm comes in across the view's edge, (x, y)
    tip: np.ndarray  # its fingertips, (x, y)
    # The tip left the band along the edge it comes in by: an arm resting on the table
    # just beyond the view, or its shadow, darkens such a band and never leaves it.
    reached_in: bool


def arm_reach(arm: np.ndarray, outside: np.ndarray | None, edge_px: int = 3, tip_px: float = 3.0,
              came_in: np.ndarray | None = None) -> Reach | None:
    """Where the biggest arm in the mask `arm` (a view's pixels) comes in and its tip, (x, y)
    each, and whether the tip left the band it comes in by (`Reach`), or None. It comes in
    where it crosses the view's edge (its pixels within `edge_px` of the edge, or of the
    frame's: `outside`); where it crosses in several places (a hand
    reaching beyond the far rim crosses the far edge too), at the crossing nearest `came_in`,
    where it was seen coming in before, else the widest. The tip is the middle of its pixels
    within `tip_px` of its farthest reach from there: a wide hand seen only in part, at the
    board's near corner, reaches about as far at both its ends, and its farthest pixel would
    jump between them from frame to frame, and never rest."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats(arm.astype(np.uint8), connectivity=8)
    if count < 2:
        return None
    biggest = labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    edge = np.ones(arm.shape, np.uint8)
    edge[1:-1, 1:-1] = 0
    if outside is not None:
        edge[outside] = 1
    near = cv2.dilate(edge, np.ones((2 * edge_px + 1, 2 * edge_px + 1), np.uint8)) > 0
    crossings, crossing, sizes, middles = cv2.connectedComponentsWithStats(
        (near & biggest).astype(np.uint8), connectivity=8)
    if crossings < 2:
        return None
    if came_in is None:
        entry = 1 + int(np.argmax(sizes[1:, cv2.CC_STAT_AREA]))
    else:
        entry = 1 + int(np.argmin(np.linalg.norm(middles[1:] - came_in, axis=1)))
    ys, xs = np.nonzero(crossing == entry)
    came = np.array([xs.mean(), ys.mean()])
    ys, xs = np.nonzero(biggest)
    points = np.stack([xs, ys], axis=1).astype(np.float64)
    reach = np.linalg.norm(points - came, axis=1)
    tip = np.asarray(points[reach >= reach.max() - tip_px].mean(axis=0))
    x, y = np.clip(np.round(tip).astype(int), 0, [arm.shape[1] - 1, arm.shape[0] - 1])
    return Reach(came, tip, bool(crossing[y, x] != entry))


class HandTrail:
    """The rests of the hands over a board of `files` x `ranks` squares, seen in a view of
    `view_px` pixels a square with `margin` squares around it (a1 at the bottom left), since
    `clear`. `rests()`: where, in squares from a1's outer corner (x along the files, y along
    the ranks), first first."""

    def __init__(self, files: int, ranks: int, view_px: int, margin: int,
                 settings: ReachSettings | None = None) -> None:
        self.files, self.ranks, self.view_px, self.margin = files, ranks, view_px, margin
        self.settings = settings or ReachSettings()
        self._rests: list[np.ndarray] = []
        self.in_view = False  # an arm in the last frame
        self.seen_s: float | None = None  # when an arm was last in view
        self.reached_s: float | None = None  # ... and reached in beyond the band it came by
        self._still: list[np.ndarray] = []  # the tip in the frames it has stayed put so far
        self._still_since: float | None = None
        self._last_s: float | None = None
        self._came_in: np.ndarray | None = None  # where the arm in view first showed
        self.arm: np.ndarray | None = None  # the arm's mask in the last frame, if one was seen

    def clear(self) -> None:
        self._rests = []
        self.forget_arm()

    def forget_arm(self) -> None:
        """The arm in view was none (`StillSurroundings`): neither its sighting nor its rest now
        count; the rests before it stay."""
        self._still, self._still_since, self._last_s = [], None, None
        self.in_view, self.seen_s, self.reached_s, self._came_in = False, None, None, None
        self.arm = None

    def update(self, arm_of: Callable[[ArmSettings], np.ndarray | None], outside: np.ndarray | None,
               time_s: float) -> None:
        """One frame: `arm_of(settings)`, the arm's mask as `settings` see it (None or empty:
        no arm in view); `outside`, the view's pixels beyond the frame."""
        reach = self._reach(arm_of, outside)
        tip = None if reach is None else reach.tip
        s = self.settings
        self.in_view = tip is not None
        if reach is not None:
            self.seen_s = time_s
            self.reached_s = time_s if reach.reached_in else self.reached_s
        elif self.seen_s is None or time_s - self.seen_s >= s.gone_s:
            self._came_in = None
        if tip is None or (self._still and np.linalg.norm(tip - np.mean(self._still, axis=0)) > s.rest_px):
            self._close()
        if tip is not None:
            if not self._still:
                self._still_since = time_s
            self._still.append(tip)
        self._last_s = time_s

    def _reach(self, arm_of: Callable[[ArmSettings], np.ndarray | None], outside: np.ndarray | None
               ) -> Reach | None:
        """The arm as the finer test sees it, or where it floods the view, as the coarser one
        does; None where neither sees an arm alone."""
        s = self.settings
        self.arm = None
        for settings in (s.arm, s.flooded_arm):
            arm = arm_of(settings)
            if arm is None or not arm.any():
                break
            if np.count_nonzero(arm) <= s.most_of_view * arm.size:
                reach = arm_reach(arm, outside, s.edge_px, s.tip_px, self._came_in)
                if reach is None:
                    break
                # (kept from where it first showed: a hand reaching out of the view at the
                # board's corner crosses the edge beside the arm, one patch with it, then apart)
                if self._came_in is None:
                    self._came_in = reach.came
                self.arm = arm
                return reach
        return None

    def rests(self) -> np.ndarray:
        """Where the hands rested, in squares (n x 2), the one resting now included."""
        rests = [*self._rests, *([self._point()] if self._rested() else [])]
        return np.array(rests, dtype=np.float64).reshape(-1, 2)

    def _rested(self) -> bool:
        since, last = self._still_since, self._last_s
        return bool(self._still) and since is not None and last is not None and \
            last - since >= self.settings.rest_s

    def _close(self) -> None:
        if self._rested() and len(self._rests) < self.settings.most_rests:
            self._rests.append(self._point())
        self._still, self._still_since = [], None

    def _point(self) -> np.ndarray:
        """The resting tip, in squares: the view's pixels, top down, turned to the board's
        (a1's outer corner at 0, 0)."""
        x, y = np.mean(self._still, axis=0) / self.view_px
        return np.array([x - self.margin, self.ranks + self.margin - y])


@dataclass(frozen=True)
class SurroundingsSettings:
    # The arm the finer test sees on a still board is the surroundings, not an arm, once it
    # has kept its place and shape (overlapping its first sight by `same`) for `still_s`,
    # wholly beyond the squares (no pixel inside the grid's outline), and covers less of the
    # view than `most_squares` squares: a hand laying a marker beyond the rim covers about
    # three (890009's fingers over g1: 460 px at 12 px a square; the shadow gone from its
    # corner, 120-150).
    still_s: float = 1.0
    same: float = 0.8
    most_squares: float = 1.5


class StillSurroundings:
    """The surroundings changed since the clean reading, taken for an arm. A shadow over the
    board's rim in the clean reading's frame (890009's: a hand about to come in, beyond the
    view) gone since, or the table beside the rim changed, is a lasting change at the view's
    edge, which the finer hand test takes for a hand, holding every reading back. Such a
    patch lies beyond the squares and keeps its shape; a hand over the board reaches onto
    the squares, and one beyond the rim moves on. `update` says when the reference for arms
    should be taken again, from the frame of now. The grid's outline: `files` x `ranks`
    squares of `view_px` pixels, `margin` squares in."""

    def __init__(self, files: int, ranks: int, view_px: int, margin: int,
                 settings: SurroundingsSettings | None = None) -> None:
        self.settings = settings or SurroundingsSettings()
        width, height = (files + 2 * margin) * view_px, (ranks + 2 * margin) * view_px
        self._inside = np.zeros((height, width), bool)
        inset = margin * view_px
        self._inside[inset:height - inset, inset:width - inset] = True
        self._most_px = self.settings.most_squares * view_px ** 2
        self._first: np.ndarray | None = None  # the patch as first seen still
        self._since = 0.0

    def update(self, patch: np.ndarray | None, time_s: float) -> bool:
        """One frame: `patch`, the finer test's arm on a still board (None: no arm, or the
        board is moving); whether it is the surroundings."""
        if not self._beyond_the_squares(patch):
            self._first = None
            return False
        assert patch is not None
        if self._first is None or overlap(patch, self._first) < self.settings.same:
            self._first, self._since = patch, time_s
        return bool(time_s - self._since >= self.settings.still_s)

    def _beyond_the_squares(self, patch: np.ndarray | None) -> bool:
        return bool(patch is not None and patch.shape == self._inside.shape and patch.any()
                    and np.count_nonzero(patch) <= self._most_px
                    and not (patch & self._inside).any())

    def clear(self) -> None:
        self._first = None
