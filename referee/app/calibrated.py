"""What the calibration files tell a camera referee (`live`, `replay`, `calibrate board`).

A camera file gives the lens: frames are undistorted before the board is looked for and
cut, and the crops know the camera's focal length and principal point instead of guessing
them. Without one, `--camera pi` takes the Pi Camera Module 3 defaults for the frame's
size from `calibration/` (their lens has no distortion, so frames pass through untouched).

A board profile (`referee calibrate board`) gives where the board was and which corner is
a1: that pose is only a first guess, checked against the frame by the tracker, and a board
moved since is searched for like any other (a1 kept at the corner nearest the profile's).
Its piece colours decide at set-up which side is the first player's, where the start
position looks the same from both sides, and warn when the pieces look different."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from referee.calibration.files import (
    BoardProfile,
    CameraCalibration,
    load_board,
    load_camera,
)
from referee.calibration.undistort import Undistorter, make_undistorter
from referee.errors import CalibrationError
from referee.resources import calibration_dir
from referee.rules.core import Geometry
from referee.tracking.reading import ColorModel, Reading
from referee.vision.pose import BoardPose, board_box, board_corners

log = logging.getLogger(__name__)

BOX_MARGIN = 1.5  # squares around the board undistorted while it is tracked (track, view, tops)
COLOUR_MISMATCH_LAB = 25.0  # mean distance to the profile's colours that earns a warning
MIN_PROFILE_CONTRAST_LAB = 15.0  # profile colours closer than this cannot tell the sides


class BoardGame(Protocol):
    """What a board profile is checked against: the game's name and board."""

    @property
    def name(self) -> str: ...

    @property
    def geometry(self) -> Geometry: ...


@dataclass(frozen=True)
class CalibrationFiles:
    """The calibration files a command was given (paths, not yet read)."""

    camera: Path | None = None  # --calibration FILE
    board: Path | None = None  # --board PROFILE
    pi_defaults: bool = False  # no camera file: the Pi Camera Module 3 file for the frame size


@dataclass(frozen=True)
class Calibration:
    """The calibration files, read and checked against the game."""

    camera: CameraCalibration | None = None
    camera_path: Path | None = None
    board: BoardProfile | None = None
    pi_defaults: bool = False


def is_pi_camera(spec: str) -> bool:
    return re.fullmatch(r"pi(?::\d+)?", spec) is not None


def files_for(camera_spec: str, calibration: str | Path | None,
              board: str | Path | None) -> CalibrationFiles:
    return CalibrationFiles(Path(calibration) if calibration else None,
                            Path(board) if board else None, is_pi_camera(camera_spec))


def load_calibration(files: CalibrationFiles, game: BoardGame) -> Calibration:
    """Read the files (one CalibrationError line for any fault); the camera file is the one
    given, else the one the board profile names."""
    board = load_board(files.board) if files.board is not None else None
    if board is not None:
        _check_board(board, files.board, game)
    camera_path = files.camera or (board.camera if board is not None else None)
    camera = load_camera(camera_path) if camera_path is not None else None
    return Calibration(camera, camera_path, board, files.pi_defaults and camera is None)


def _check_board(board: BoardProfile, path: Path | None, game: BoardGame) -> None:
    files, ranks = game.geometry.files, game.geometry.ranks
    if (board.files, board.ranks) != (files, ranks):
        raise CalibrationError(f"{path}: a board profile of a {board.files}x{board.ranks} "
                               f"board ({board.game}), not {game.name}'s {files}x{ranks}")
    if board.game != game.name:
        log.warning("%s: a profile made for %s, used for %s (same board size)", path,
                    board.game, game.name)


class FrameLens:
    """The lens at the frames' size, made at the first frame (the Pi defaults depend on it)."""

    def __init__(self, calibration: Calibration, *, alpha: float | None = None) -> None:
        self.calibration = calibration
        # None: the undistorted frame keeps the camera's own matrix, so the middle keeps its
        # resolution for the crops (a barrel lens's rim is cut off, nothing is black); 0:
        # only what the camera saw, zoomed out to keep more of it; 1: all of it, black
        # corners, whose curved edge costs the board finder (benchmarks/undistort_pipeline.md).
        self.alpha = alpha
        self._size: tuple[int, int] | None = None
        self.camera: CameraCalibration | None = None  # at the frames' size
        self.path: Path | None = calibration.camera_path  # the camera file used
        self.undistorter: Undistorter | None = None

    def at(self, width: int, height: int) -> Undistorter | None:
        if self._size != (width, height):
            self._size = (width, height)
            self.camera = self._camera_for(width, height)
            self.undistorter = None
            if self.camera is not None:
                self.undistorter = make_undistorter(self.camera, alpha=self.alpha)
        return self.undistorter

    def _camera_for(self, width: int, height: int) -> CameraCalibration | None:
        camera = self.calibration.camera
        if camera is None and self.calibration.pi_defaults:
            path = calibration_dir() / f"pi-camera-module-3-{width}x{height}.yaml"
            if not path.is_file():
                log.warning("no Pi Camera Module 3 defaults for %dx%d frames in %s: the crops "
                            "estimate the focal length", width, height, calibration_dir())
                return None
            camera, self.path = load_camera(path), path
        if camera is None or camera.image_size == (width, height):
            return camera
        where = self.calibration.camera_path or "the camera calibration"
        try:
            return camera.scaled_to(width, height)
        except CalibrationError as error:
            raise CalibrationError(f"{where}: {error}") from None

    @property
    def camera_matrix(self) -> np.ndarray | None:
        """The intrinsics of the frames the pipeline works on (undistorted ones)."""
        return None if self.undistorter is None else self.undistorter.camera_matrix

    def undistort(self, frame_bgr: np.ndarray, around: BoardPose | None) -> np.ndarray:
        """The frame without lens distortion: only the board's neighbourhood where a pose is
        tracked (`around`), the whole frame otherwise; frames pass through without a lens."""
        height, width = frame_bgr.shape[:2]
        lens = self.at(width, height)
        if lens is None or lens.is_identity:
            return frame_bgr
        box = None if around is None else board_box(around, BOX_MARGIN)
        return lens(frame_bgr) if box is None else lens.region(frame_bgr, box)

    def to_frame(self, raw_points: np.ndarray) -> np.ndarray:
        """Raw image points → the undistorted frame's."""
        if self.undistorter is None or self.camera is None or self.undistorter.is_identity:
            return np.asarray(raw_points, np.float64).reshape(-1, 2)
        return self.undistorter.undistort_points(raw_points, self.camera)

    def to_raw(self, points: np.ndarray) -> np.ndarray:
        """The undistorted frame's points → where the camera shows them."""
        if self.undistorter is None or self.camera is None or self.undistorter.is_identity:
            return np.asarray(points, np.float64).reshape(-1, 2)
        return self.undistorter.distort_points(points, self.camera)


# ---------------------------------------------------------------- the board profile's pose


def profile_pose(profile: BoardProfile, lens: FrameLens) -> BoardPose | None:
    """The pose the profile records (a1 where it says), in the undistorted frame; None where
    it records no corners."""
    if profile.corners_px is None:
        return None
    ring = lens.to_frame(np.array(profile.corners_px, np.float64))  # clockwise from top-left
    a1 = _a1_index(ring, profile.first_player_edge)
    # BoardPose order: a1, along rank 1, the far corner, along the a-file: counter-clockwise
    # on screen, so the clockwise ring read backwards from a1.
    order = [(a1 - i) % 4 for i in range(4)]
    h, _ = cv2.findHomography(board_corners(profile.files, profile.ranks), ring[order])
    if h is None:
        return None
    return BoardPose.from_homography(np.asarray(h, np.float64), profile.files, profile.ranks)


def _a1_index(ring: np.ndarray, edge: str) -> int:
    """Which corner of the clockwise ring is a1: rank 1 is the ring's edge facing `edge`
    most, and a1 its end clockwise (the first player's left, seen from their side)."""
    direction = {"bottom": (0.0, 1.0), "right": (1.0, 0.0), "top": (0.0, -1.0),
                 "left": (-1.0, 0.0)}[edge]  # (the loader allows these only)
    centre = ring.mean(axis=0)
    facing = [float(np.dot((ring[i] + ring[(i + 1) % 4]) / 2 - centre, direction))
              for i in range(4)]
    return (int(np.argmax(facing)) + 1) % 4


# ---------------------------------------------------------------- the profile's piece colours


def profile_lab(profile: BoardProfile) -> np.ndarray:
    """The two players' body colours (first, second) in the Lab units of the readings."""
    bgr = np.array([[[int(h[5:7], 16), int(h[3:5], 16), int(h[1:3], 16)]
                     for h in (profile.first.body, profile.second.body)]], np.uint8)
    lab = np.asarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB)[0], np.float64)
    # OpenCV's 8-bit Lab: L * 255/100, a + 128, b + 128 (as pipeline.crop_colors undoes).
    lab -= np.array([0.0, 128.0, 128.0])
    lab[:, 0] *= 100.0 / 255.0
    return lab


def side_by_colours(matching: list[tuple[int, Reading]], owners: dict[int, int],
                    expected_lab: np.ndarray) -> tuple[list[tuple[int, Reading]], bool]:
    """The orientations showing the set-up, the one whose pieces' colours agree best with
    the profile's first; and whether the colours decide it (the others then cannot be)."""
    costs = [_colour_cost(reading, owners, expected_lab) for _, reading in matching]
    order = sorted(range(len(matching)), key=lambda i: costs[i])
    best = costs[order[0]]
    if best / 2 > COLOUR_MISMATCH_LAB:
        log.warning("the pieces' colours differ from the board profile's by %.0f (Lab): "
                    "another set or other light? The colours seen now are used", best / 2)
    contrast = float(np.linalg.norm(expected_lab[0] - expected_lab[1]))
    decided = contrast >= MIN_PROFILE_CONTRAST_LAB and all(
        2 * best < costs[i] for i in order[1:])
    return [matching[i] for i in order], decided


def _colour_cost(reading: Reading, owners: dict[int, int], expected_lab: np.ndarray) -> float:
    """How far the colours learnt from this reading lie from the profile's (Lab, summed)."""
    try:
        means = ColorModel.learn(reading, owners).means
    except ValueError:  # a player without pieces: colours tell nothing
        return float("inf")
    return float(np.linalg.norm(means - expected_lab, axis=1).sum())
