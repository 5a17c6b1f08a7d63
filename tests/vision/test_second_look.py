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
from referee.vision.crops import crop_squares
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


def _card(turns_freely: bool) -> ModelCard:
    """The dice model's card, or one as a model of upright pieces filling their squares has
    (penta, tiles: no quarter turns in training, no piece width in `made_for`)."""
    card = Classifier.load("dice").card
    augment = dict(card.recipe["augment"], max_angle=180.0 if turns_freely else 12.0)
    metrics = card.metrics if turns_freely else {k: v for k, v in card.metrics.items()
                                                 if k != "made_for"}
    card = dataclasses.replace(card, recipe=dict(card.recipe, augment=augment), metrics=metrics)
    assert card.turns_freely == card.pieces_stand_apart == turns_freely
    return card


def _model(turns_freely: bool) -> Classifier:
    return cast(Classifier, _CornerModel(_card(turns_freely)))


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
    assert cuts == [1] * 7  # the turned looks cut nothing; the seventh looks for the die
    assert looks_per_square(model, SecondLook(located=())) == 12
    expected = _geometric_mean([UNSURE] * 11 + [SURE] * 2)
    assert np.allclose(read[0], expected, atol=1e-6)
    assert read[0].argmax() == 1
    unturned = look_again(model, quads, first, SecondLook(turns=()), cut)
    assert np.allclose(unturned[0], UNSURE, atol=1e-6)


def test_turns_only_for_models_whose_pieces_turn_freely() -> None:
    """A model that learnt its pieces upright (penta, tiles: `turns_freely` false) is never
    read turned, nor looked for in its square: its second look is the unturned one."""
    model, crop = _model(False), _bottom_right_bright()

    def cut(rows: NDArray[np.intp], quads: NDArray[np.float32]) -> NDArray[np.uint8]:
        return np.repeat(crop[None], len(rows), axis=0)

    quads = np.zeros((1, 4, 2), np.float32)
    first = model.predict(crop[None])
    assert looks_per_square(model, SecondLook()) == 6
    read = look_again(model, quads, first, SecondLook(), cut)
    assert np.allclose(read, look_again(model, quads, first, SecondLook(turns=()), cut))
    assert read[0].argmax() == 0


class _SizeModel:
    """A stand-in classifier that reads a die's 1 surely only where the die fills at least a
    third of the crop (as large as the model's own cut makes it), else unsure."""

    def __init__(self, card: ModelCard) -> None:
        self.card = card

    def predict(self, crops: NDArray[np.uint8], *, turns: int = 1) -> NDArray[np.float32]:
        large = (np.asarray(crops).mean(axis=3) > 128).mean(axis=(1, 2)) >= 1 / 3
        return np.where(large[:, None], SURE, UNSURE).astype(np.float32)


def test_a_small_die_is_read_by_the_crops_cut_round_it() -> None:
    """A die half its square wide, off the square's centre: the first look and the tighter
    crops about the square show it small (read unsure, leaning to empty); the crops cut round
    the die found in its square show it at the model's own cut, and the square is read as its
    face. A model whose pieces do not stand apart is never looked for in its square."""
    frame = np.full((200, 200, 3), 40, np.uint8)
    frame[84:124, 90:130] = 230  # a 40-pixel die in the 80-pixel square below, 10 px right
    quads = np.array([[[60, 64], [140, 64], [140, 144], [60, 144]]], np.float32)
    model = cast(Classifier, _SizeModel(_card(True)))
    first = model.predict(crop_squares(frame, list(quads), model.card.crop))
    assert first.argmax() == 0
    read = looked_again(model, frame, quads, first, SecondLook())
    assert read[0].argmax() == 1
    assert looked_again(model, frame, quads, first, SecondLook(located=()))[0].argmax() == 0
    upright = cast(Classifier, _SizeModel(_card(False)))
    assert looked_again(upright, frame, quads, first, SecondLook())[0].argmax() == 0
    assert looks_per_square(model, SecondLook()) == 24


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
    assert 0 < looked.doubtful < report.dice + report.empties and looked.looks == 24
    assert looked.face_accuracy > report.face_accuracy and looked.faces_read_empty <= 1
    text = format_report(report)
    assert "held out for validation" in text and "As the referee reads them" in text
    assert f"({looked.dice_correct}/172 dice; {looked.faces_read_empty} read as empty)" in text
