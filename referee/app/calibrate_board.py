"""`referee calibrate board`: find the board in a live or recorded view, learn which corner is
a1 and each player's piece colour from the start position (and, where the start looks the
same from both sides, from the first move), and store it all as a board profile, with an
overlay image of the grid found so that a person can check it at a glance.

With a camera file (or, for `--camera pi`, the Pi Camera Module 3 defaults) the frames are
undistorted as in `live` and `replay`; the profile's corners are still the raw image's, where
the camera shows them, and the overlay draws the grid through the lens."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from referee.app.calibrated import files_for, load_calibration
from referee.app.pipeline import GameLoop, board_referee, camera_game
from referee.app.state_machine import Phase
from referee.calibration.files import BoardProfile, PlayerPieces, save_board
from referee.errors import FootageError, RefereeError
from referee.hardware.sources import open_source
from referee.vision.pose import BoardPose


@dataclass(frozen=True)
class BoardCalibration:
    profile: BoardProfile
    pose: BoardPose
    frame_index: int
    sides_confirmed: bool  # a first move confirmed which side is the first player's
    # the undistorted frame's points → the raw image's (the identity without a lens)
    to_raw: Callable[[np.ndarray], np.ndarray] = field(default=np.asarray, compare=False)


def calibrate_board(game_name: str, camera: str, *, pieces: str | None = None,
                    square_mm: float | None = None, camera_file: Path | None = None,
                    model: str | None = None, max_frames: int = 30 * 120) -> BoardCalibration:
    game = camera_game(game_name)
    calibration = load_calibration(files_for(camera, camera_file, None), game)
    referee, reader = board_referee(game, pieces, model=model, calibration=calibration)
    loop = GameLoop(reader, referee)
    found: tuple[BoardPose, int] | None = None
    with open_source(camera) as source:
        for frame in source:
            loop.feed(frame.frame_bgr, frame.index, frame.timestamp_s)
            if referee.phase is not Phase.SETUP and reader.pose is not None:
                if found is None or not referee.match.moves:
                    found = (reader.pose, frame.index)
                if referee.match.moves:
                    found = (reader.pose, found[1])
                    break
            if frame.index >= max_frames:
                break
    if found is None or referee.colors is None:
        what = "the board" if not loop.board_seen else "the start position"
        raise FootageError(f"{camera}: {what} was not seen clearly; check the view and the light")
    pose, index = found
    names = tuple(name.lower() for name in game.player_names)
    first, second = (PlayerPieces(name, _hex(mean), _contrast(mean))
                     for name, mean in zip(names, referee.colors.means, strict=True))
    corners = reader.lens.to_raw(pose.corners_array)  # where the camera shows them
    profile = BoardProfile(game.name, game.geometry.files, game.geometry.ranks, square_mm,
                           _clockwise_from_top_left(corners), first_player_edge(corners),
                           camera_file or reader.lens.path, first, second)
    return BoardCalibration(profile, pose, index, bool(referee.match.moves), reader.lens.to_raw)


def first_player_edge(corners: np.ndarray) -> str:
    """The image edge that rank 1 lies along: from the board's centre toward rank 1's middle
    (`corners` in BoardPose order: a1, along rank 1, ...)."""
    rank1 = (corners[0] + corners[1]) / 2
    dx, dy = rank1 - corners.mean(axis=0)
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "bottom" if dy > 0 else "top"


def _clockwise_from_top_left(corners: np.ndarray) -> tuple[tuple[float, float], ...]:
    centre = corners.mean(axis=0)
    order = np.argsort(np.arctan2(corners[:, 1] - centre[1], corners[:, 0] - centre[0]))
    ring = corners[order]  # clockwise on screen (image y points down)
    start = int(np.argmin(ring.sum(axis=1)))  # top-left: smallest x + y
    ring = np.roll(ring, -start, axis=0)
    return tuple((round(float(x), 2), round(float(y), 2)) for x, y in ring)


def _lab_to_bgr(lab: np.ndarray) -> np.ndarray:
    pixel = np.array([[[lab[0] * 255 / 100, lab[1] + 128, lab[2] + 128]]], np.float64)
    bgr = cv2.cvtColor(np.clip(pixel, 0, 255).astype(np.uint8), cv2.COLOR_LAB2BGR)
    return np.asarray(bgr[0, 0])


def _hex(lab: np.ndarray) -> str:
    b, g, r = (int(v) for v in _lab_to_bgr(lab))
    return f"#{r:02x}{g:02x}{b:02x}"


def _contrast(lab: np.ndarray) -> str:
    """Marks (pips) are not measured: the usual contrasting colour is assumed."""
    return "#1a1a1a" if lab[0] > 50 else "#f0f0f0"


def overlay(frame_bgr: np.ndarray, pose: BoardPose, files: int, ranks: int, *,
            to_raw: Callable[[np.ndarray], np.ndarray] = np.asarray) -> np.ndarray:
    """The frame with the grid found, every square's name and a1's corner marked; lines are
    drawn as polylines through `to_raw` (a lens bends them)."""
    image = frame_bgr.copy()

    def image_points(board_points: np.ndarray) -> np.ndarray:
        return np.asarray(to_raw(pose.to_image(board_points)), np.float64).reshape(-1, 2)

    along = np.linspace(0.0, 1.0, 24)[:, None]
    lines = [np.array([[f, 0.0]]) + along * [0.0, ranks] for f in range(files + 1)]
    lines += [np.array([[0.0, r]]) + along * [files, 0.0] for r in range(ranks + 1)]
    for line in lines:
        points = np.round(image_points(line)).astype(np.int32)
        cv2.polylines(image, [points], False, (0, 255, 255), 2, cv2.LINE_AA)
    for r in range(ranks):
        for f in range(files):
            centre = image_points(np.array([[f + 0.5, r + 0.15]], np.float64))[0]
            cv2.putText(image, f"{'abcdefghi'[f]}{r + 1}", _pt(centre - (10, 0)),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 255), 1, cv2.LINE_AA)
    cv2.circle(image, _pt(image_points(np.zeros((1, 2)))[0]), 9, (255, 0, 255), 3, cv2.LINE_AA)
    return image


def _pt(p: np.ndarray) -> tuple[int, int]:
    return round(float(p[0])), round(float(p[1]))


def write_overlay(camera: str, calibration: BoardCalibration, path: Path) -> None:
    with open_source(camera) as source:
        for frame in source:
            if frame.index == calibration.frame_index:
                profile = calibration.profile
                image = overlay(frame.frame_bgr, calibration.pose, profile.files, profile.ranks,
                                to_raw=calibration.to_raw)
                if not cv2.imwrite(str(path), image):
                    raise RefereeError(f"{path}: cannot write the overlay image")
                return


def save(calibration: BoardCalibration, out: Path) -> None:
    save_board(calibration.profile, out, header=[
        f"Board profile written by `referee calibrate board` from frame {calibration.frame_index}.",
        "Which side is the first player's: " + ("confirmed by the first move." if
        calibration.sides_confirmed else "from the start position alone; check it."),
    ])
