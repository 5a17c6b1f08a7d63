"""A raw frame read through its lens (`LensImage`) reads as the frame undistorted: the same
views of the board, the same lines for tracking, at a fraction of undistorting the frame."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.calibration.undistort import LensImage, make_undistorter, pixels
from referee.vision.board_finder import find_board_and_lens
from referee.vision.board_tracker import refit, track
from referee.vision.pose import BoardPose
from referee.vision.warp import warp_board
from tests import DATA

# the empty board at the start of whole game 890016, through a lens strong enough that the
# finder estimates it (k1 about -0.3) and the board filling the frame
FRAME = DATA / "renders" / "renaissance-890016-frame0.jpg"


@pytest.fixture(scope="module")
def scene() -> tuple[np.ndarray, np.ndarray, LensImage, BoardPose]:
    frame = cv2.imread(str(FRAME))
    found = find_board_and_lens(frame, 7, 7)
    assert found.lens is not None and found.undistorted is not None
    undistorter = make_undistorter(found.lens, alpha=None)  # as the pipeline's `FrameLens`
    return frame, undistorter(frame), LensImage.of(frame, undistorter), found.undistorted


def test_the_board_seen_from_above_through_the_lens_is_the_undistorted_frames_view(scene) -> None:
    _, undistorted, lensed, pose = scene
    through = warp_board(lensed, pose, 12, margin=1).astype(float)
    undone = warp_board(undistorted, pose, 12, margin=1).astype(float)
    assert through.shape == undone.shape
    difference = np.abs(through - undone)
    # one interpolation against two: the same picture, a little sharper
    assert difference.mean() < 2.0 and np.percentile(difference, 99) < 25


def test_a_region_keeps_its_place_in_the_undistorted_frame(scene) -> None:
    _, undistorted, lensed, _ = scene
    region = lensed[100:400, 200:700]
    assert region.shape == (300, 500, 3) and lensed.shape == undistorted.shape
    xs = np.array([[10.0, 250.5, 480.25]], np.float32)
    ys = np.array([[5.0, 150.5, 290.75]], np.float32)
    assert np.array_equal(region.remap(xs, ys), lensed.remap(xs + 200, ys + 100))
    assert np.array_equal(pixels(region), undistorted[100:400, 200:700])
    assert pixels(undistorted) is undistorted


def test_beyond_the_undistorted_frame_reads_black(scene) -> None:
    _, _, lensed, _ = scene
    xs = np.array([[-5.0, 1290.0, 640.0]], np.float32)
    ys = np.array([[360.0, 360.0, 730.0]], np.float32)
    assert not lensed.remap(xs, ys).any()


def test_tracking_through_the_lens_follows_the_board_as_on_the_undistorted_frame(scene) -> None:
    _, undistorted, lensed, pose = scene
    slide = np.array([[1.0, 0, 3.0], [0, 1.0, -2.0], [0, 0, 1.0]])  # the board slid 3 px, 2 px
    nudged = BoardPose.from_homography(slide @ pose.h, pose.files, pose.ranks)
    on_undistorted = track(undistorted, nudged)
    through = track(lensed, nudged)
    assert on_undistorted is not None and through is not None
    # the same board to a tenth of a pixel or so, of squares some 70 pixels wide
    assert np.abs(through.corners_array - on_undistorted.corners_array).max() < 0.5
    refitted = refit(lensed, pose)
    assert np.abs(refitted.corners_array - refit(undistorted, pose).corners_array).max() < 0.5
