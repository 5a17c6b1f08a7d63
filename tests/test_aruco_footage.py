"""Boards with ArUco markers through the real pipeline: rendered footage of each kind of game
on the printable board (`referee board`), hands and all (tests/data/footage/*-aruco.mp4,
rendered once and committed). The pose comes from the markers, a1 included, and every
frame's grid corners lie within 0.5% of the board's diagonal of the render's truth; with the
markers covered the same footage is refereed by the lines as any board is."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.app.events import Event
from referee.app.pipeline import BoardReader, GameLoop, board_referee, camera_game
from referee.hardware.sources import open_source
from referee.vision.aruco import ArucoLayout
from referee.vision.classifier import Classifier
from referee.vision.pose import BoardPose, grid_through
from referee.vision.settings import default_settings
from referee_lab.footage_check import Expected, accepted_plies, moves_during_hands
from tests import DATA

CASES = sorted((DATA / "footage").glob("*-aruco.mp4"))
MOST_OFF = 0.5  # % of the diagonal


@dataclass(frozen=True)
class Replayed:
    expected: Expected
    events: tuple[Event, ...]
    poses: tuple[BoardPose | None, ...]  # the pose each frame was judged by
    by_markers: tuple[bool, ...]  # whether the reader's pose was named by the markers then


def replay(video: Path, paint: Callable[[np.ndarray, int], np.ndarray] | None = None) -> Replayed:
    """The footage through the referee's own loop, each frame's pose kept."""
    expected = Expected.load(video.with_suffix(".expected.json"))
    referee, reader = board_referee(camera_game(expected.game), expected.pieces)
    events: list[Event] = []
    poses: list[BoardPose | None] = []
    marked: list[bool] = []

    def watch(_seen: np.ndarray, pose: BoardPose | None, _time_s: float) -> None:
        poses.append(pose)
        marked.append(reader.turn_options() == (0,))

    loop = GameLoop(reader, referee, listeners=(events.append,), watchers=(watch,))
    for index, frame, time_s in frames(video):
        loop.feed(frame if paint is None else paint(frame, index), index, time_s)
    loop.finish()
    return Replayed(expected, tuple(events), tuple(poses), tuple(marked))


def frames(video: Path) -> Iterator[tuple[int, np.ndarray, float]]:
    with open_source(video) as source:
        for frame in source:
            yield frame.index, frame.frame_bgr, frame.timestamp_s


@pytest.fixture(scope="module", params=CASES, ids=[c.stem for c in CASES])
def replayed(request: pytest.FixtureRequest) -> Replayed:
    return replay(request.param)


def test_there_is_marker_footage_of_every_kind_of_game() -> None:
    games = {Expected.load(c.with_suffix(".expected.json")).game for c in CASES}
    assert {"rinne", "zensu", "renaissance"} <= games


def test_marker_footage_is_refereed_to_its_record(replayed: Replayed) -> None:
    assert accepted_plies(replayed.events) == list(replayed.expected.plies)
    assert moves_during_hands(replayed.events, replayed.expected) == []


def test_the_markers_give_the_pose_and_a1_in_every_frame(replayed: Replayed) -> None:
    assert all(replayed.by_markers)
    misses = [corner_miss(pose, truth) for pose, truth in zip(replayed.poses, replayed.expected.corners,
                                                              strict=True)]
    assert max(misses) < MOST_OFF, f"frame {int(np.argmax(misses))}: {max(misses):.3f}%"


def corner_miss(pose: BoardPose | None, truth: tuple[tuple[float, float], ...]) -> float:
    """The largest corner distance from the truth, a1 first, as a share of the diagonal (%):
    no other naming of the corners is tried, the markers name them."""
    assert pose is not None
    corners = np.array(truth)
    diagonal = max(np.linalg.norm(corners[2] - corners[0]), np.linalg.norm(corners[3] - corners[1]))
    return float(np.linalg.norm(pose.corners_array - corners, axis=1).max() / diagonal * 100)


def covering(expected: Expected) -> Callable[[np.ndarray, int], np.ndarray]:
    """Paint each frame's four markers over with plain paper, where the truth puts them."""
    game = camera_game(expected.game).geometry
    layout = ArucoLayout.for_board(game.files, game.ranks)

    def paint(frame: np.ndarray, index: int) -> np.ndarray:
        h = grid_through(np.array(expected.corners[index]), game.files, game.ranks)
        painted = frame.copy()
        for k in range(4):
            points = layout.marker_corners(k)
            centre = points.mean(axis=0)
            ring = centre + (points - centre) * 1.3
            quad = cv2.perspectiveTransform(ring.reshape(-1, 1, 2), h).reshape(-1, 2)
            cv2.fillConvexPoly(painted, np.round(quad).astype(np.int32), (205, 215, 220))
        return painted

    return paint


def test_a_marker_board_with_its_markers_covered_is_refereed_by_its_lines() -> None:
    video = next(c for c in CASES if c.stem.startswith("rinne"))
    expected = Expected.load(video.with_suffix(".expected.json"))
    covered = replay(video, covering(expected))
    assert not any(covered.by_markers)
    assert accepted_plies(covered.events) == list(expected.plies)


def test_a_reader_sees_no_markers_on_the_markerless_footage() -> None:
    video = DATA / "footage" / "rinne-illegal.mp4"
    expected = Expected.load(video.with_suffix(".expected.json"))
    _, reader = board_referee(camera_game(expected.game), expected.pieces)
    for index, frame, time_s in frames(video):
        reader.look(frame, time_s)
        assert reader.turn_options() == (0, 2), f"frame {index}"
        if index >= 90:
            break


def test_markers_can_be_switched_off() -> None:
    vision = default_settings()
    off = replace(vision, aruco=replace(vision.aruco, search=False))
    assert BoardReader(5, 6, Classifier.load("dice"), vision=off).markers is None
