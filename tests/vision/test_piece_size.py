"""The crop scale that follows the players' pieces (vision/piece_size.py)."""

from __future__ import annotations

import numpy as np
import pytest

from referee.calibration.files import BoardProfile, CalibrationError, PlayerPieces, load_board, save_board
from referee.vision.crops import scaled_quads
from referee.vision.piece_size import CROP_SCALES, best_crop_scale, mean_log_likelihood

PIECES = PlayerPieces("white", "#f0f0f0", "#1a1a1a")


def test_the_middle_of_the_span_read_well_is_kept():
    # read perfectly from 1.1 to 1.9, falling off on both sides: the middle, 1.45-ish
    plateau = {s: 0.0 if 1.1 <= s <= 1.9 else -abs(np.log(s / 1.5)) for s in CROP_SCALES}
    assert best_crop_scale(plateau.__getitem__) == pytest.approx(1.45, abs=0.051)


def test_a_peak_is_kept_and_one_lucky_scale_is_not():
    peaked = {s: -4.0 * abs(np.log(s / 0.75)) for s in CROP_SCALES}
    assert best_crop_scale(peaked.__getitem__) == 0.75
    lucky = {s: -1.0 for s in CROP_SCALES} | {0.6: 0.0, 1.0: -0.5, 0.95: -0.5, 1.05: -0.5}
    assert best_crop_scale(lucky.__getitem__) == 1.0


def test_the_likelihood_is_of_the_shown_labels():
    probabilities = np.array([[0.9, 0.1], [0.2, 0.8]])
    assert mean_log_likelihood(probabilities, np.array([0, 1])) == pytest.approx(
        (np.log(0.9) + np.log(0.8)) / 2)


def test_quads_scale_about_their_centres():
    quad = np.array([[[0, 0], [10, 0], [10, 10], [0, 10]]], np.float64)
    assert scaled_quads(quad, 1.5)[0].tolist() == [[-2.5, -2.5], [12.5, -2.5], [12.5, 12.5],
                                                    [-2.5, 12.5]]


def test_a_profile_keeps_its_crop_scale_and_refuses_a_wild_one(tmp_path):
    path = tmp_path / "board.yaml"
    save_board(BoardProfile("rinne", 5, 6, None, None, "bottom", None, PIECES, PIECES,
                            crop_scale=1.45), path)
    assert load_board(path).crop_scale == 1.45
    path.write_text(path.read_text().replace("crop_scale: 1.45", "crop_scale: 7"))
    with pytest.raises(CalibrationError, match=r"crop_scale 7 is not within 0\.3\.\.2"):
        load_board(path)
