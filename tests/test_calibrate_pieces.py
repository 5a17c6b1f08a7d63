"""`referee calibrate pieces` on committed footage: the set-up of a Rinne game with Penta-pieces
teaches a piece head, which goes into the board profile; `replay --board` then reads the game
through it to the same record as without. Layouts are parsed strictly, and bad input (no
board, a label the model lacks, an unknown model) is one line."""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import replace

import pytest

from referee.app.calibrate_pieces import parse_layout
from referee.app.replay import replay_footage
from referee.calibration.files import BoardProfile, PlayerPieces, load_board, save_board
from referee.cli import main
from referee.errors import RefereeError
from referee.resources import models_dir
from referee.rules.core import Geometry
from referee.vision.classifier import Classifier
from referee_lab.footage_check import Expected
from tests import DATA
from tests.test_replay_cli import noise_video

FOOTAGE = DATA / "footage" / "rinne-penta-whole.mp4"
BIG_DICE = DATA / "footage-sized" / "rinne-bigdice.mp4"  # dice 0.8-0.9 of their squares
PIECES = PlayerPieces("white", "#f0f0f0", "#1a1a1a")
PENTA = ("empty", "king", "knight", "bishop", "rook", "queen")


def _profile(tmp_path):
    """A board profile as a club writes it before calibrating: no corners (searched for)."""
    path = tmp_path / "board.yaml"
    save_board(BoardProfile("rinne", 5, 6, None, None, "bottom", None, PIECES, PIECES), path)
    return path


def test_the_set_up_teaches_a_head_the_replay_reads_through(tmp_path, capsys):
    board = _profile(tmp_path)
    assert main(["calibrate", "pieces", "--game", "rinne", "--pieces", "penta", "--camera",
                 str(FOOTAGE), "--board", str(board), "--frames", "4"]) == 0
    out = capsys.readouterr().out
    # the start position: ten kings and twenty empty squares, each frame
    assert "4 frames taken" in out and "120 squares in all; model penta" in out
    assert "king: 40/40 held out right" in out and "empty: 80/80 held out right" in out
    assert "closest: empty and king" in out
    head = load_board(board).head
    assert head is not None and head.model == "penta" and head.examples == 120
    assert [label for label, seen in zip(head.labels, head.learnt, strict=True) if seen] == ["empty", "king"]
    expected = Expected.load(FOOTAGE.with_suffix(".expected.json"))
    result = replay_footage(FOOTAGE, "rinne", pieces="penta", out=tmp_path / "game", board=board)
    assert _plies(tmp_path / "game") == list(expected.plies)
    assert result.match.outcome is not None
    assert result.match.outcome.result(result.match.game.player_names) == expected.result


def test_dice_larger_than_learnt_are_measured_and_the_crops_follow_them(tmp_path, capsys):
    """Dice filling their squares (the model learnt them about 0.6 of a square wide): the
    set-up measures them large, and the game is read through the wider crops alone."""
    board = _profile(tmp_path)
    assert main(["calibrate", "pieces", "--game", "rinne", "--pieces", "dice", "--camera",
                 str(BIG_DICE), "--board", str(board)]) == 0
    assert "the pieces stand larger than the model learnt: cut wider" in capsys.readouterr().out
    profile = load_board(board)
    assert 1.3 <= profile.crop_scale <= 1.7
    save_board(replace(profile, head=None), board)  # the crop scale alone
    expected = Expected.load(BIG_DICE.with_suffix(".expected.json"))
    replay_footage(BIG_DICE, "rinne", pieces="dice", out=tmp_path / "game", board=board)
    assert _plies(tmp_path / "game") == list(expected.plies)


@pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="needs the lab extra")
def test_dice_are_learnt_turned_and_the_replay_reads_through_them(tmp_path, monkeypatch, capsys):
    """The dice model (given `features` in a copy where the shipped one lacks them) learns
    each crop in four turns, and a clip read through the head keeps its record."""
    models = tmp_path / "models"
    shutil.copytree(models_dir(), models)
    if not Classifier.load(models / "dice.onnx").has_features:
        from referee_lab.features import expose_features

        expose_features(models / "dice.onnx")
    monkeypatch.setenv("REFEREE_MODELS", str(models))
    clip = DATA / "footage" / "rinne-light.mp4"
    board = _profile(tmp_path)
    assert main(["calibrate", "pieces", "--game", "rinne", "--camera", str(clip), "--board",
                 str(board), "--frames", "3"]) == 0
    out = capsys.readouterr().out
    assert "90 squares in all; model dice" in out and "1: 30/30 held out right" in out
    head = load_board(board).head
    assert head is not None and head.examples == 4 * 90
    result = replay_footage(clip, "rinne", out=tmp_path / "game", board=board)
    assert _plies(tmp_path / "game") == list(
        Expected.load(clip.with_suffix(".expected.json")).plies)
    assert result.match.moves


def _plies(folder):
    record = (folder / "game.txt").read_text(encoding="utf-8").splitlines()
    return [line for line in record if line[:1].isdigit()]


def test_a_layout_names_squares_and_the_rest_are_empty(tmp_path):
    geometry = Geometry(5, 6)
    start = ("empty",) * 30
    layout = parse_layout("a1=king, b1=queen\ne6=rook  # far corner", geometry, PENTA, start)
    assert layout.labels[0] == "king" and layout.labels[1] == "queen" and layout.labels[29] == "rook"
    assert layout.labels.count("empty") == 27
    assert layout.described(geometry) == "a1=king b1=queen e6=rook (the rest empty)"
    file = tmp_path / "layout.txt"
    file.write_text("# my set\nc3=bishop\n", encoding="utf-8")
    assert parse_layout(str(file), geometry, PENTA, start).labels[12] == "bishop"
    assert parse_layout(None, geometry, PENTA, ("king",) * 30).labels == ("king",) * 30
    for bad, why in (("c3=dragon", "the model has no label 'dragon'"), ("c3", "is not SQUARE=LABEL"),
                     ("c3=", "is not SQUARE=LABEL"), ("z9=king", "not a square of a 5x6 board"),
                     ("", "only one label")):
        with pytest.raises(RefereeError, match=why):
            parse_layout(bad, geometry, PENTA, start)


@pytest.mark.parametrize(("extra", "why"), [
    (["--layout", "c3=dragon"], "the model has no label 'dragon'"),
    (["--model", "no-such-model"], "model card not found"),
    (["--frames", "0"], "at least one frame is needed"),
    (["--board", "no-such-board.yaml"], "no-such-board.yaml: no such calibration file"),
])
def test_bad_input_is_one_line(tmp_path, capsys, extra, why):
    board = _profile(tmp_path)
    before = board.read_text(encoding="utf-8")
    assert main(["calibrate", "pieces", "--game", "rinne", "--pieces", "penta", "--camera",
                 str(FOOTAGE), "--board", str(board), *extra]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err
    assert board.read_text(encoding="utf-8") == before


def test_footage_without_a_board_is_one_line(tmp_path, capsys):
    board = _profile(tmp_path)
    video = noise_video(tmp_path / "table.avi")
    assert main(["calibrate", "pieces", "--game", "rinne", "--pieces", "penta", "--camera",
                 str(video), "--board", str(board)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the board was not seen standing still" in err
