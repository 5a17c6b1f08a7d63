"""Measuring a classifier on the real dice photographs' test split (measuring only: nothing
here feeds training or model selection).

Face accuracy counts the 308 labelled dice: a die read as any other face, or as empty, is
wrong. Bare-tray squares of the same photos (placed with a fixed seed) measure the other
way round: an empty square read as a die.

`cut` is how many times its labelled box a die's square is: the model's own cut
(`DIE_TO_SQUARE`, 1.4: a die 0.71 of its square wide) or any other, so one model is measured
on small dice in big squares (1.8: 0.56 of the square) as well as on large ones. The tray
squares are cut alike (`cut` times a die's side).

`shown` > 0 measures the referee as it reads a club's own dice after `calibrate pieces`: it
is shown that many dice a face, all cut at `cut`, measures the crop scale at which the model
reads them likeliest (vision/piece_size.py) and reads the test split with its crops so
scaled. The dice shown are new to the model, as a club's are: drawn with a fixed seed from the
train split's photos it held out for validation (its card's `recipe.photos_val`), never from
those it learnt from, whose every size it reads over-confidently.

`look` also measures the squares as the referee reads them: those in doubt (best label
leading by under `look.below` nats) are cut again from their photo, tighter, turned and
shifted about their square at `cut`, by the pipeline's own `second_look.look_again`, and the
looks averaged. `split="val"` reads the photos the model held out for validation instead of
the test split: settings are chosen there, the test split only measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from referee.vision.classifier import Classifier
from referee.vision.crops import DIE_TO_SQUARE, box_square, crop_square
from referee.vision.piece_size import best_crop_scale, mean_log_likelihood
from referee.vision.second_look import SecondLook, lead, look_again, looks_per_square
from referee_lab.datasets import DICE_LABELS, EMPTY, RealDice, Sample, fixed_crops

EVAL_SEED = 20191209  # fixed: the same empty squares every time
EMPTIES_PER_PHOTO = 4
EVAL_CUTS = (1.5, 1.8)  # measured into the card beside the model's own cut
SHOWN_SEED = 20261206  # fixed: the same dice shown every time
SURE = 3.0  # nats: a square read wrong with its best label leading by this much could record a move


@dataclass(frozen=True)
class DiceReport:
    """Accuracy on the real test split. `confusion[t][p]` counts squares of true label t
    (0 = empty, 1..6 = faces) read as p."""

    data: str
    model: str
    turns: int
    dice: int
    dice_correct: int
    empties: int
    empties_correct: int
    confusion: tuple[tuple[int, ...], ...]
    cut: float = DIE_TO_SQUARE
    shown: int = 0  # dice a face shown to measure the crop scale (0: the model's own crops)
    crop_scale: float = 1.0
    split: str = "test"  # or "val": the photos the model held out for validation
    # the same squares as the referee reads them (the second look at those in doubt), with
    # how many squares it looked at again and how many crops each
    looked: DiceReport | None = None
    doubtful: int = 0
    looks: int = 0
    sure_wrong: int = 0  # squares (dice or empty) read wrong with a lead of `SURE` nats or more

    @property
    def faces_read_empty(self) -> int:
        """Dice read as an empty square: the worst error (a die the referee does not see)."""
        return sum(row[EMPTY] for row in self.confusion[1:])

    @property
    def face_accuracy(self) -> float:
        return self.dice_correct / self.dice if self.dice else 0.0

    @property
    def empty_accuracy(self) -> float:
        return self.empties_correct / self.empties if self.empties else 0.0

    def per_label(self) -> list[tuple[str, int, int]]:
        """(label, correct, total) for each true label present."""
        rows = []
        for t, row in enumerate(self.confusion):
            if sum(row):
                rows.append((DICE_LABELS[t], row[t], sum(row)))
        return rows

    def as_dict(self) -> dict[str, object]:
        looked = self.looked
        return {
            "data": self.data,
            **({"split": self.split} if self.split != "test" else {}),
            "cut": self.cut,
            **({"shown_per_face": self.shown, "crop_scale": self.crop_scale} if self.shown else {}),
            "turns": self.turns,
            "dice": self.dice,
            "face_accuracy": round(self.face_accuracy, 4),
            "empties": self.empties,
            "empty_accuracy": round(self.empty_accuracy, 4),
            "confusion_rows_true_cols_pred": [list(r) for r in self.confusion],
            **({"second_look": {
                "doubtful": looked.doubtful, "looks": looked.looks,
                "face_accuracy": round(looked.face_accuracy, 4), "sure_wrong": looked.sure_wrong,
                "empty_accuracy": round(looked.empty_accuracy, 4),
                "confusion_rows_true_cols_pred": [list(r) for r in looked.confusion],
            }} if looked is not None else {}),
        }


def evaluate_dice(
    classifier: Classifier, root: str | Path | None = None, *, turns: int = 1,
    cut: float = DIE_TO_SQUARE, shown: int = 0, shown_seed: int = SHOWN_SEED,
    look: SecondLook | None = None, split: str = "test",
) -> DiceReport:
    if not 1.0 <= cut <= 4.0:
        raise ValueError(f"cut {cut}: a die's square is 1 to 4 times its box")
    if split not in ("test", "val"):
        raise ValueError(f"split must be test or val, not {split!r}")
    if split == "val" and shown:
        raise ValueError("the dice shown are drawn from the validation photos: read the test split")
    photos = RealDice.load("test" if split == "test" else "train", root)
    files = held_out_photos(classifier) if split == "val" else None
    spec = classifier.card.crop
    scale = (shown_scale(classifier, RealDice.load("train", root), cut, shown, shown_seed)
             if shown else 1.0)
    dice = photos.die_samples(files, cut=cut * scale)
    empties = photos.empty_samples(np.random.default_rng(EVAL_SEED), EMPTIES_PER_PHOTO, files,
                                   cut=cut * scale)
    samples = dice + empties
    probs = classifier.predict(fixed_crops(samples, spec), turns=turns)
    labels = np.array([sample.label for sample in samples])
    report = _report(labels, probs, data=str(photos.root), model=str(classifier.path),
                     turns=turns, cut=cut, shown=shown, crop_scale=scale, split=split)
    if look is None:
        return report
    read = second_look(classifier, samples, probs, look)
    looked = _report(labels, read, data=report.data, model=report.model, turns=turns, cut=cut,
                     shown=shown, crop_scale=scale, split=split)
    return replace(report, looked=replace(
        looked, doubtful=int((lead(probs) < look.below).sum()),
        looks=looks_per_square(classifier, look)))


def second_look(classifier: Classifier, samples: Sequence[Sample], first: NDArray[np.floating],
                look: SecondLook) -> NDArray[np.float64]:
    """`first` (one probability row a sample) as the referee reads the samples: each in
    doubt cut again from its own photo about its square (`second_look.look_again`, as the
    pipeline looks again), tighter, turned and shifted, and its looks averaged."""
    spec = classifier.card.crop

    def cut(rows: NDArray[np.intp], quads: NDArray[np.float32]) -> NDArray[np.uint8]:
        return np.stack([crop_square(samples[row].image, quad, spec)
                         for row, quad in zip(rows.tolist(), quads, strict=True)])

    quads = np.array([sample.quad for sample in samples], np.float64)
    return look_again(classifier, quads, first, look, cut)


def held_out_photos(classifier: Classifier) -> list[str]:
    """The train split's photos `classifier` held out for validation (its card's
    `recipe.photos_val`): dice new to it, for choosing settings without the test split."""
    held_out = sorted(set(classifier.card.recipe.get("photos_val", ())))
    if not held_out:
        raise ValueError(f"{classifier.card.name}: its card names no photos held out for "
                         "validation, so no dice new to it can be shown")
    return held_out


def _report(labels: NDArray[np.integer], probs: NDArray[np.floating], **fields: Any) -> DiceReport:
    classes = len(DICE_LABELS)
    confusion = np.zeros((classes, classes), np.int64)
    read = probs.argmax(axis=1)
    np.add.at(confusion, (labels, read), 1)
    return DiceReport(
        sure_wrong=int(((read != labels) & (lead(probs) >= SURE)).sum()),
        dice=int(confusion[1:].sum()),
        dice_correct=int(np.trace(confusion) - confusion[EMPTY, EMPTY]),
        empties=int(confusion[EMPTY].sum()),
        empties_correct=int(confusion[EMPTY, EMPTY]),
        confusion=tuple(tuple(int(v) for v in row) for row in confusion),
        **fields,
    )


def shown_scale(classifier: Classifier, train: RealDice, cut: float, per_face: int,
                seed: int = SHOWN_SEED) -> float:
    """The crop scale `calibrate pieces` measures when shown `per_face` dice of each face
    (of the photos `classifier` held out for validation), each cut at `cut`."""
    held_out = set(held_out_photos(classifier))
    rng = np.random.default_rng(seed)
    by_face: dict[int, list[int]] = {}
    for i, die in enumerate(train.dice):
        if die.file in held_out:
            by_face.setdefault(die.face, []).append(i)
    picked = [train.dice[i] for face in sorted(by_face)
              for i in rng.choice(by_face[face], min(per_face, len(by_face[face])), replace=False)]
    targets = np.array([die.face for die in picked])

    def likelihood(scale: float) -> float:
        samples = [Sample(train.photo(d.file), box_square(d.box, scale=cut * scale), d.face)
                   for d in picked]
        return mean_log_likelihood(classifier.predict(fixed_crops(samples, classifier.card.crop)),
                                   targets)

    return best_crop_scale(likelihood)


def format_report(report: DiceReport) -> str:
    """Markdown: the headline figures, the confusion matrix and per-label accuracy, from one
    crop a square and, where measured, as the referee reads the squares (the second look)."""
    looked = report.looked
    split = "test split" if report.split == "test" else "the photos it held out for validation"
    lines = [
        f"Model `{report.model}`, data `{report.data}` ({split}), "
        f"test-time turns: {report.turns}",
        "",
        f"Cut {report.cut:g}x the die's box (a die {1 / report.cut:.2f} of its square wide)"
        + (" (the model's own cut)" if report.cut == DIE_TO_SQUARE else "")
        + (f"; crops scaled {report.crop_scale:g}, as measured on {report.shown} dice a face new "
           "to the model (its validation photos) shown at this cut" if report.shown else ""),
        "",
        f"- Face accuracy: **{report.face_accuracy:.2%}** "
        f"({report.dice_correct}/{report.dice} dice; {report.faces_read_empty} read as empty)"
        + (", one crop a square" if looked else ""),
        f"- Empty tray squares read as empty: {report.empty_accuracy:.2%} "
        f"({report.empties_correct}/{report.empties})",
    ]
    if looked is not None:
        lines += [
            f"- As the referee reads them (a second look at the {looked.doubtful} squares in "
            f"doubt, {looked.looks} more crops each): **{looked.face_accuracy:.2%}** "
            f"({looked.dice_correct}/{looked.dice} dice; {looked.faces_read_empty} read as empty); "
            f"empty tray squares read as empty {looked.empty_accuracy:.2%} "
            f"({looked.empties_correct}/{looked.empties})",
        ]
    lines += [f"- Squares read wrong with confidence (a lead of {SURE:g} nats or more): "
              f"{report.sure_wrong}" + (f"; as the referee reads them: {looked.sure_wrong}"
                                        if looked else "")]
    lines += ["", "Confusion matrix, one crop a square (rows: true label, columns: what the "
              "model read):", "", *_confusion_table(report)]
    if looked is not None:
        lines += ["", "Confusion matrix as the referee reads them (the second look):", "",
                  *_confusion_table(looked)]
    head = "| label | correct | total | accuracy |" + (" as the referee reads |" if looked else "")
    lines += ["", head, "| --- | --- | --- | --- |" + (" --- |" if looked else "")]
    again = {label: correct for label, correct, _ in looked.per_label()} if looked else {}
    for label, correct, total in report.per_label():
        lines.append(f"| {label} | {correct} | {total} | {correct / total:.1%} |"
                     + (f" {again[label] / total:.1%} |" if looked else ""))
    return "\n".join(lines)


def _confusion_table(report: DiceReport) -> list[str]:
    lines = ["| true \\ read | " + " | ".join(DICE_LABELS) + " | total |",
             "|" + " --- |" * (len(DICE_LABELS) + 2)]
    for t, row in enumerate(report.confusion):
        if sum(row):
            lines.append(f"| **{DICE_LABELS[t]}** | {' | '.join(str(v) for v in row)} | {sum(row)} |")
    return lines
