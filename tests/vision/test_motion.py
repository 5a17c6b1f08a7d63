"""The image's move since a pose was taken (`vision/motion.py`), and the board reader that
holds a still board's pose with it instead of tracking's refit (`pipeline.BoardReader`)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.app.pipeline import BoardReader, PipelineSettings
from referee.vision.classifier import Classifier
from referee.vision.motion import Shift, anchor, moved_by, shift_since
from referee.vision.pose import BoardPose
from tests.vision.scenes import make_scene


@pytest.fixture(scope="module")
def scene():
    return make_scene(np.random.default_rng(7), 3, 3, style="checker", tilt_deg=25.0, hand=False)


# Tracked every frame: these tests follow tracking and the anchor, which a pose held on an
# unchanged image (`PipelineSettings.hold_frames`) would skip.
UNHELD = PipelineSettings(hold_frames=0)


def _slid(frame: np.ndarray, dx: float, dy: float) -> np.ndarray:
    m = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy]])
    return cv2.warpAffine(frame, m, (frame.shape[1], frame.shape[0]), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


def _pose(scene) -> BoardPose:
    return BoardPose.from_homography(scene.homography, scene.files, scene.ranks)


def test_the_image_moved_a_few_pixels_is_read_to_a_fraction_of_one(scene):
    a = anchor(scene.frame, _pose(scene))
    assert a is not None
    shift = shift_since(a, _slid(scene.frame, 3.0, -2.0))
    assert (shift.dx, shift.dy) == pytest.approx((3.0, -2.0), abs=0.4)
    assert shift.response > 0.5
    still = shift_since(a, scene.frame)
    assert still.length < 0.2 and still.response > 0.9
    slid = moved_by(a.pose, shift).corners_array - a.pose.corners_array
    assert slid == pytest.approx(np.tile([shift.dx, shift.dy], (4, 1)), abs=1e-6)


def test_a_view_that_changed_does_not_compare(scene):
    a = anchor(scene.frame, _pose(scene))
    assert a is not None
    other = np.random.default_rng(1).integers(0, 256, scene.frame.shape, dtype=np.uint8)
    assert shift_since(a, other).response < 0.5


def test_a_board_mostly_out_of_the_frame_gives_no_anchor(scene):
    far = moved_by(_pose(scene), Shift(5000.0, 0.0, 1.0))
    assert anchor(scene.frame, far) is None


class _Wandering:
    """Tracking that drifts a pixel a frame the same way, as the fit walks to a border line."""

    def __init__(self) -> None:
        self.frames = 0

    def __call__(self, frame, previous, *, settings=None):
        self.frames += 1
        return moved_by(previous, Shift(1.5, 1.0, 1.0))


def _reader(monkeypatch, scene, tracking) -> BoardReader:
    import referee.app.pipeline as pipeline

    monkeypatch.setattr(pipeline, "track", tracking)
    monkeypatch.setattr(pipeline, "find_board", lambda *a, **k: _pose(scene))
    reader = BoardReader(3, 3, Classifier.load("dice"), settings=UNHELD)
    reader.locate(scene.frame, 0.0)  # found
    return reader


def test_a_still_board_keeps_its_pose_while_tracking_wanders(monkeypatch, scene):
    tracking = _Wandering()
    reader = _reader(monkeypatch, scene, tracking)
    found = reader.pose
    assert found is not None
    for k in range(1, 20):
        pose, confirmed = reader.locate(scene.frame, k / 30)
        assert confirmed and pose is not None
    assert tracking.frames == 19
    assert pose.corners_array == pytest.approx(found.corners_array, abs=0.1)  # not 28 px off


def test_the_pose_slides_with_the_image_and_follows_tracking_past_a_tenth_of_a_square(monkeypatch, scene):
    import referee.app.pipeline as pipeline
    from referee.vision.board_tracker import track

    reader = _reader(monkeypatch, scene, track)
    found = reader.pose
    assert found is not None
    pose, _ = reader.locate(_slid(scene.frame, 4.0, 0.0), 0.1)   # a nudge: slid with the image
    assert pose is not None
    assert pose.corners_array - found.corners_array == pytest.approx(np.tile([4.0, 0.0], (4, 1)), abs=0.5)
    far = 0.2 * found.square_size_px()
    monkeypatch.setattr(pipeline, "track", lambda frame, previous, **k: moved_by(
        _pose(scene), Shift(far, 0.0, 1.0)))
    pose, _ = reader.locate(_slid(scene.frame, far, 0.0), 0.2)  # a bump: tracking's new place
    assert pose is not None
    assert pose.corners_array - found.corners_array == pytest.approx(np.tile([far, 0.0], (4, 1)), abs=1e-6)


def test_a_bigger_board_keeps_trackings_pose(monkeypatch):
    """Its many lines hold the fit; the shift's small bias, re-anchored at every reading,
    made the demo's pose creep (benchmarks/replay.md)."""
    import referee.app.pipeline as pipeline

    big = make_scene(np.random.default_rng(8), 5, 6, style="lines", tilt_deg=20.0, hand=False)
    found = _pose(big)
    monkeypatch.setattr(pipeline, "track", _Wandering())
    monkeypatch.setattr(pipeline, "find_board", lambda *a, **k: found)
    reader = BoardReader(5, 6, Classifier.load("dice"), settings=UNHELD)
    reader.locate(big.frame, 0.0)
    for k in range(1, 5):
        pose, _ = reader.locate(big.frame, k / 30)
    assert pose is not None
    assert pose.corners_array - found.corners_array == pytest.approx(np.tile([6.0, 4.0], (4, 1)), abs=1e-6)


def _holding_reader(monkeypatch) -> tuple[np.ndarray, BoardPose, _Wandering, BoardReader]:
    """A 5x6 board's frame, its pose, the tracking it is followed by and a reader that holds
    the pose 5 frames at most, the board found in that frame."""
    import referee.app.pipeline as pipeline

    big = make_scene(np.random.default_rng(8), 5, 6, style="lines", tilt_deg=20.0, hand=False)
    found = _pose(big)
    tracking = _Wandering()
    monkeypatch.setattr(pipeline, "track", tracking)
    monkeypatch.setattr(pipeline, "find_board", lambda *a, **k: found)
    reader = BoardReader(5, 6, Classifier.load("dice"), settings=PipelineSettings(hold_frames=5))
    reader.locate(big.frame, 0.0)  # found
    return big.frame, found, tracking, reader


def test_an_unchanged_image_holds_the_pose_without_tracking_until_it_changes(monkeypatch):
    """Tracking is most of a frame's time: on the same image the pose stands, tracked again
    every `hold_frames` frames; an arm over the board is tracked at once."""
    frame, found, tracking, reader = _holding_reader(monkeypatch)
    for k in range(1, 13):
        reader.locate(frame, k / 30)
    assert tracking.frames == 2  # frames 1 and 7: then held 5 frames each time
    arm = frame.copy()
    corner = found.corners_array.min(axis=0).astype(int)
    arm[corner[1]:corner[1] + 80, corner[0]:corner[0] + 80] = 30
    reader.locate(arm, 13 / 30)
    assert tracking.frames == 3


def test_a_change_of_light_holds_the_pose(monkeypatch):
    """Light flicker moves every cell of the image round the board alike, by more than the
    hold's few levels at once: that is no motion, and the pose stands untracked."""
    frame, _found, tracking, reader = _holding_reader(monkeypatch)
    dimmed = np.clip(frame.astype(np.int16) - 8, 0, 255).astype(np.uint8)
    for k in range(1, 7):
        reader.locate(dimmed if k % 2 else frame, k / 30)
    assert tracking.frames == 1  # frame 1: then held 5 frames, dimmed or not
