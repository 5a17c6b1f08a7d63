"""The second look (`vision.second_look`): the turned looks of a die's tighter crops, averaged
in log space with the others and only for a model whose pieces turn freely; and the lab's
measurement on the real photographs, which looks again as the pipeline does."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import cast

import numpy as np
from numpy.typing import NDArray

from referee.vision.classifier import Classifier, ModelCard
from referee.vision.second_look import SecondLook, look_again, looked_again, looks_per_square
from referee_lab.datasets import RealDice, fixed_crops
from referee_lab.evaluate import EMPTIES_PER_PHOTO, EVAL_SEED, evaluate_dice, format_report, second_look

# what the stub model reads: a die's 1 surely, where the crop's top-left corner is bright,
# else unsure, and leaning to empty
SURE = np.array([0.001, 0.994, 0.001, 0.001, 0.001, 0.001, 0.001])
UNSURE = np.array([0.3, 0.25, 0.2, 0.1, 0.05, 0.05, 0.05])


class _CornerModel:
    """A stand-in classifier that reads a crop by its top-left corner."""

    def __init__(self, card: ModelCard) -> None:
        self.card = card

    def predict(self, crops: NDArray[np.uint8], *, turns: int = 1) -> NDArray[np.float32]:
        bright = np.asarray(crops)[:, :8, :8].mean(axis=(1, 2, 3)) > 128
        return np.where(bright[:, None], SURE, UNSURE).astype(np.float32)


def _model(turns_freely: bool) -> Classifier:
    card = Classifier.load("dice").card
    augment = dict(card.recipe["augment"], max_angle=180.0 if turns_freely else 12.0)
    card = dataclasses.replace(card, recipe=dict(card.recipe, augment=augment))
    assert card.turns_freely == turns_freely
    return cast(Classifier, _CornerModel(card))


def _bottom_right_bright() -> NDArray[np.uint8]:
    crop = np.zeros((64, 64, 3), np.uint8)
    crop[-8:, -8:] = 255  # a half turn brings it to the top left
    return crop


def _geometric_mean(rows: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    mean = np.exp(np.mean(np.log(rows), axis=0))
    return np.asarray(mean / mean.sum())


def test_a_die_read_surely_only_turned_is_read_by_the_turned_looks() -> None:
    """The stub reads the crop surely only when turned half way; each of the two tighter
    crops is read as cut and turned three ways (each a look), the four shifted ones as cut:
    13 looks in all, averaged in log space. The first look leans to empty; with the turns
    the die is read as its face."""
    model, crop = _model(True), _bottom_right_bright()
    cuts: list[int] = []

    def cut(rows: NDArray[np.intp], quads: NDArray[np.float32]) -> NDArray[np.uint8]:
        cuts.append(len(quads))
        return np.repeat(crop[None], len(rows), axis=0)

    quads = np.array([[[0, 0], [10, 0], [10, 10], [0, 10]]], np.float32)
    first = model.predict(crop[None])
    assert first.argmax() == 0  # empty, at first look
    read = look_again(model, quads, first, SecondLook(), cut)
    assert cuts == [1] * 6  # the turned looks cut nothing
    assert looks_per_square(model, SecondLook()) == 12
    expected = _geometric_mean([UNSURE] * 11 + [SURE] * 2)
    assert np.allclose(read[0], expected, atol=1e-6)
    assert read[0].argmax() == 1
    unturned = look_again(model, quads, first, SecondLook(turns=()), cut)
    assert np.allclose(unturned[0], UNSURE, atol=1e-6)


def test_turns_only_for_models_whose_pieces_turn_freely() -> None:
    """A model that learnt its pieces upright (penta, tiles: `turns_freely` false) is never
    read turned: its second look is the unturned one."""
    model, crop = _model(False), _bottom_right_bright()

    def cut(rows: NDArray[np.intp], quads: NDArray[np.float32]) -> NDArray[np.uint8]:
        return np.repeat(crop[None], len(rows), axis=0)

    quads = np.zeros((1, 4, 2), np.float32)
    first = model.predict(crop[None])
    assert looks_per_square(model, SecondLook()) == 6
    read = look_again(model, quads, first, SecondLook(), cut)
    assert np.allclose(read, look_again(model, quads, first, SecondLook(turns=()), cut))
    assert read[0].argmax() == 0


def test_the_eval_looks_again_at_photos_as_the_pipeline_does(real_dice: Path, dice_model: Path) -> None:
    """The lab's second look on real photographs reads each square in doubt exactly as the
    pipeline's `looked_again` reads that square of its photo. (Square by square: a frame's
    squares are cut at one pyramid level, as alike in size as a board's, where each photo
    square is cut on its own, as its first look is, `fixed_crops`.)"""
    classifier = Classifier.load("dice")
    test = RealDice.load("test", real_dice)
    files = test.files[:3]
    samples = (test.die_samples(files, cut=1.8)
               + test.empty_samples(np.random.default_rng(EVAL_SEED), EMPTIES_PER_PHOTO, files, cut=1.8))
    first = classifier.predict(fixed_crops(samples, classifier.card.crop))
    read = second_look(classifier, samples, first, SecondLook())
    changed = np.flatnonzero(~np.all(np.isclose(read, first), axis=1))
    assert 0 < len(changed) < len(samples)
    for i, sample in enumerate(samples):
        pipeline = looked_again(classifier, sample.image, sample.quad[None], first[i:i + 1],
                                SecondLook())
        assert np.allclose(read[i], pipeline[0], atol=1e-6)


def test_the_eval_reports_the_second_look_beside_one_crop(real_dice: Path, dice_model: Path) -> None:
    """On the photos the model held out for validation (where looks are chosen), cut 1.8:
    the squares as the referee reads them, beside one crop a square."""
    report = evaluate_dice(Classifier.load("dice"), real_dice, cut=1.8, look=SecondLook(),
                           split="val")
    looked = report.looked
    assert looked is not None and report.dice == looked.dice == 172 and report.empties == 80
    assert 0 < looked.doubtful < report.dice + report.empties and looked.looks == 12
    assert looked.face_accuracy > report.face_accuracy and looked.faces_read_empty <= 1
    text = format_report(report)
    assert "held out for validation" in text and "As the referee reads them" in text
    assert f"({looked.dice_correct}/172 dice; {looked.faces_read_empty} read as empty)" in text
