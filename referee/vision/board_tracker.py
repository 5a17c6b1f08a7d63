"""Track a found board from frame to frame: the profile fit of `grid_search` started from the
previous pose on a crop around the board, in whatever naming of the corners the caller uses;
None when the board has moved too far, so that the caller runs `find_board` again."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from referee.calibration.undistort import Frame, LensImage
from referee.vision.grid_search import board_roi, corner_shift
from referee.vision.line_profiles import (
    fit_profiles,
    profile_support,
)
from referee.vision.pose import (
    BoardPose,
)
from referee.vision.settings import TrackSettings, default_settings


def track(frame_bgr: Frame, previous: BoardPose, *,
          settings: TrackSettings | None = None) -> BoardPose | None:
    """The board's pose in this frame, following `previous` by a small move; None when it
    cannot follow (moved too far, hidden, or gone): run find_board again.

    The grid lines' profiles are sampled around the previous pose (one remap of a few
    thousand points, no edge map), and the pose moved rigidly in the board's plane (slid,
    turned, or the camera nudged a few pixels) to their peaks, band by band: only that,
    so a hand's outline over part of the grid is outvoted by the lines elsewhere instead of
    bending the grid towards it. The result is kept only if its lines show and the lines
    one square outside do not (a grid that slipped by a square would fail that). The
    corners keep their names, whichever corner `previous` calls a1."""
    return _follow(frame_bgr, previous, settings or default_settings().track, rigid=True)


def refit(frame_bgr: Frame, pose: BoardPose, *,
           settings: TrackSettings | None = None) -> BoardPose:
    """The pose refitted in full, perspective too, on a frame where the board is still and
    nothing covers it; `pose` itself where that fit is not supported. Tracking keeps the
    view's perspective as it was found, so this is what follows a camera tilted a little,
    and it sets the crops of a reading exactly where the squares are."""
    s = settings or default_settings().track
    # Once a reading, so it can afford the careful schedule: more bands, more iterations.
    careful = replace(s, bands=s.refit_bands, iterations=s.refit_iterations)
    fitted = _follow(frame_bgr, pose, careful, rigid=False)
    if fitted is None:
        return pose
    if corner_shift(pose.h, fitted.h, pose.files, pose.ranks) > s.refit_trusted_move and \
            _support_score(frame_bgr, fitted, s) <= _support_score(frame_bgr, pose, s):
        return pose
    return fitted


def _support_score(frame_bgr: Frame, pose: BoardPose, s: TrackSettings) -> float:
    """How well the lines in `frame_bgr` bear out `pose` (`ProfileSupport.score`)."""
    x0, y0, x1, y1 = board_roi(pose.h, pose.files, pose.ranks, 1.0 + s.bands[0], frame_bgr.shape)
    shift = np.array([[1.0, 0, -x0], [0, 1.0, -y0], [0, 0, 1.0]])
    return profile_support(frame_bgr[y0:y1, x0:x1], shift @ pose.h, pose.files, pose.ranks,
                           band=0.08, along=s.along, step=s.step).score()


def _follow(frame_bgr: Frame, previous: BoardPose, s: TrackSettings, *,
            rigid: bool) -> BoardPose | None:
    if not isinstance(frame_bgr, np.ndarray | LensImage) or frame_bgr.ndim not in (2, 3) \
            or frame_bgr.size == 0:
        return None
    # The fit is not exactly symmetric under renaming the corners (the profiles' sampling
    # grid, argmax ties, rounding), so it always runs in one naming fixed by the image, and
    # the result goes back to the caller's naming.
    turns = upright_turns(previous)
    followed = _fit_near(frame_bgr, previous.rotated(turns), s, rigid=rigid)
    return None if followed is None else followed.rotated(-turns)


def upright_turns(pose: BoardPose) -> int:
    """The quarter turns that bring a pose to the naming `canonical` gives: a1 at the corner
    that puts rank 1 nearest the bottom of the image."""
    files, ranks = pose.files, pose.ranks
    centre = np.array([[files / 2, ranks / 2], [files / 2, ranks / 2 + 1]])
    step = 1 if files == ranks else 2

    def upness(k: int) -> float:
        pts = pose.rotated(k).to_image(centre)
        return float(pts[1, 1] - pts[0, 1])

    return min(range(0, 4, step), key=upness)


def _fit_near(frame_bgr: Frame, previous: BoardPose, s: TrackSettings, *,
              rigid: bool) -> BoardPose | None:
    files, ranks = previous.files, previous.ranks
    # the region the board can have moved within (colour kept: some boards' lines differ
    # from the squares in hue more than in brightness)
    x0, y0, x1, y1 = board_roi(previous.h, files, ranks, 1.0 + s.bands[0], frame_bgr.shape)
    if x1 - x0 < 16 or y1 - y0 < 16:
        return None
    grey = frame_bgr[y0:y1, x0:x1]
    shift = np.array([[1.0, 0, -x0], [0, 1.0, -y0], [0, 0, 1.0]])
    start = shift @ previous.h
    h = fit_profiles(grey, start, files, ranks, s.bands, iterations=s.iterations, along=s.along,
                     step=s.step, robust_rounds=1, rigid=rigid)
    if h is None:
        return None
    support = profile_support(grey, h, files, ranks, band=0.08, along=s.along, step=s.step)
    if support.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is not None:
        return None
    h = np.linalg.inv(shift) @ h
    if corner_shift(previous.h, h, files, ranks) > s.max_move:
        return None
    return BoardPose.from_homography(h, files, ranks)
