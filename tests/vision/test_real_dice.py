"""The committed dice model on real photographs: the test split of real-dice-byler."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from referee.vision.classifier import Classifier
from referee_lab.cli import main
from referee_lab.datasets import RealDice, split_groups
from referee_lab.evaluate import evaluate_dice

FACE_ACCURACY = 0.97  # the Vision issue's target
RECORDED_FLOOR = 0.970  # what the committed model measured (0.9708), rounded down: a regression guard


def test_accuracy_on_the_real_test_split_is_as_recorded(real_dice: Path, dice_model: Path) -> None:
    """The committed model reads the 308 test dice exactly as its card says it did."""
    classifier = Classifier.load("dice")
    report = evaluate_dice(classifier, real_dice)
    recorded = classifier.card.metrics["real_test"]
    assert report.dice == 308 and report.empties == recorded["empties"]
    assert [list(row) for row in report.confusion] == recorded["confusion_rows_true_cols_pred"]
    assert report.face_accuracy >= RECORDED_FLOOR, report.confusion
    assert report.empty_accuracy >= 0.98, report.confusion


def test_face_accuracy_meets_the_target(real_dice: Path, dice_model: Path) -> None:
    report = evaluate_dice(Classifier.load("dice"), real_dice)
    assert report.face_accuracy >= FACE_ACCURACY


def test_eval_command_prints_the_tables(
    real_dice: Path, dice_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "--pieces", "dice", "--data", str(real_dice)]) == 0
    out = capsys.readouterr().out
    assert "Face accuracy" in out and "| **6** |" in out and "/308 dice" in out


def test_eval_without_the_photos(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--pieces", "dice", "--data", str(tmp_path)]) == 1
    assert "real dice labels not found" in capsys.readouterr().err


def test_splits_are_photos_apart(real_dice: Path) -> None:
    train, test = RealDice.load("train", real_dice), RealDice.load("test", real_dice)
    assert len(train.dice) == 1487 and len(test.dice) == 308
    assert not set(train.files) & set(test.files)
    fit, held = split_groups(train.files, fraction=0.1, seed=7)
    assert len(held) == 20 and not set(fit) & set(held)
    assert (fit, held) == split_groups(train.files, fraction=0.1, seed=7)


def test_empty_squares_hold_no_die(real_dice: Path) -> None:
    test = RealDice.load("test", real_dice)
    for sample in test.empty_samples(np.random.default_rng(0), 3, test.files[:10]):
        x0, y0 = sample.quad.min(axis=0)
        x1, y1 = sample.quad.max(axis=0)
        for die in test.dice:
            if die.file != sample.group:
                continue
            cx, cy = (die.box[0] + die.box[2]) / 2, (die.box[1] + die.box[3]) / 2
            assert not (x0 < cx < x1 and y0 < cy < y1)
