"""`referee calibrate board` on recorded footage recovers the renderer's true corners and the
first player's side, and bad input gets one line."""

from __future__ import annotations

import numpy as np

from referee.app.calibrate_board import calibrate_board
from referee.calibration.files import load_board
from referee.cli import main
from referee_lab.footage_check import Expected
from tests import DATA
from tests.test_replay_cli import noise_video

FOOTAGE = DATA / "footage" / "rinne-dice-31.mp4"


def test_the_true_corners_and_side_are_recovered(tmp_path, capsys):
    out = tmp_path / "board.yaml"
    overlay = tmp_path / "overlay.png"
    assert main(["calibrate", "board", "--game", "rinne", "--camera", str(FOOTAGE), "--out",
                 str(out), "--overlay", str(overlay), "--square-mm", "36"]) == 0
    assert "rank 1 along" in capsys.readouterr().out
    profile = load_board(out)
    assert (profile.game, profile.files, profile.ranks, profile.square_mm) == ("rinne", 5, 6, 36)
    assert overlay.stat().st_size > 10_000
    calibration = calibrate_board("rinne", str(FOOTAGE))
    assert calibration.sides_confirmed
    truth = np.array(Expected.load(FOOTAGE.with_suffix(".expected.json"))
                     .corners[calibration.frame_index])
    found = calibration.pose.corners_array  # a1's corner first, as in the truth
    diagonal = float(np.linalg.norm(truth[2] - truth[0]))
    # a1's corner is the true one (the side is right) and every corner lies within 2% of the
    # diagonal: the board finder's precision on this board look is 1.2-1.8% (see
    # benchmarks/localise_accuracy.md; the vision issue's 1% target is not met yet).
    assert np.linalg.norm(found - truth, axis=1).max() < 0.02 * diagonal
    assert np.linalg.norm(found[0] - truth[0]) < 0.02 * diagonal


def test_footage_without_a_board_is_one_line(tmp_path, capsys):
    video = noise_video(tmp_path / "table.avi")
    assert main(["calibrate", "board", "--game", "rinne", "--camera", str(video), "--out",
                 str(tmp_path / "b.yaml")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the board was not seen clearly" in err
    assert not (tmp_path / "b.yaml").exists()
