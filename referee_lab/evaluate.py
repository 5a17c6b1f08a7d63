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
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from referee.vision.classifier import Classifier
from referee.vision.crops import DIE_TO_SQUARE, box_square
from referee.vision.piece_size import best_crop_scale, mean_log_likelihood
from referee_lab.datasets import DICE_LABELS, EMPTY, RealDice, Sample, fixed_crops

EVAL_SEED = 20191209  # fixed: the same empty squares every time
EMPTIES_PER_PHOTO = 4
EVAL_CUTS = (1.5, 1.8)  # measured into the card beside the model's own cut
SHOWN_SEED = 20261206  # fixed: the same dice shown every time


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
        return {
            "data": self.data,
            "cut": self.cut,
            **({"shown_per_face": self.shown, "crop_scale": self.crop_scale} if self.shown else {}),
            "turns": self.turns,
            "dice": self.dice,
            "face_accuracy": round(self.face_accuracy, 4),
            "empties": self.empties,
            "empty_accuracy": round(self.empty_accuracy, 4),
            "confusion_rows_true_cols_pred": [list(r) for r in self.confusion],
        }


def evaluate_dice(
    classifier: Classifier, root: str | Path | None = None, *, turns: int = 1,
    cut: float = DIE_TO_SQUARE, shown: int = 0, shown_seed: int = SHOWN_SEED,
) -> DiceReport:
    if not 1.0 <= cut <= 4.0:
        raise ValueError(f"cut {cut}: a die's square is 1 to 4 times its box")
    test = RealDice.load("test", root)
    spec = classifier.card.crop
    scale = (shown_scale(classifier, RealDice.load("train", root), cut, shown, shown_seed)
             if shown else 1.0)
    dice = test.die_samples(cut=cut * scale)
    empties = test.empty_samples(np.random.default_rng(EVAL_SEED), EMPTIES_PER_PHOTO,
                                 cut=cut * scale)
    samples = dice + empties
    probs = classifier.predict(fixed_crops(samples, spec), turns=turns)
    predicted = probs.argmax(axis=1)
    classes = len(DICE_LABELS)
    confusion = np.zeros((classes, classes), np.int64)
    for sample, guess in zip(samples, predicted.tolist(), strict=True):
        confusion[sample.label, guess] += 1
    face_rows = confusion[1:]
    return DiceReport(
        data=str(test.root),
        model=str(classifier.path),
        turns=turns,
        dice=int(face_rows.sum()),
        dice_correct=int(np.trace(confusion) - confusion[EMPTY, EMPTY]),
        empties=int(confusion[EMPTY].sum()),
        empties_correct=int(confusion[EMPTY, EMPTY]),
        confusion=tuple(tuple(int(v) for v in row) for row in confusion),
        cut=cut,
        shown=shown,
        crop_scale=scale,
    )


def shown_scale(classifier: Classifier, train: RealDice, cut: float, per_face: int,
                seed: int = SHOWN_SEED) -> float:
    """The crop scale `calibrate pieces` measures when shown `per_face` dice of each face
    (of the photos `classifier` held out for validation), each cut at `cut`."""
    held_out = set(classifier.card.recipe.get("photos_val", ()))
    if not held_out:
        raise ValueError(f"{classifier.card.name}: its card names no photos held out for "
                         "validation, so no dice new to it can be shown")
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
    """Markdown: the headline figures, the confusion matrix and per-label accuracy."""
    head = "| true \\ read | " + " | ".join(DICE_LABELS) + " | total |"
    rule = "|" + " --- |" * (len(DICE_LABELS) + 2)
    lines = [
        f"Model `{report.model}`, data `{report.data}` (test split), "
        f"test-time turns: {report.turns}",
        "",
        f"Cut {report.cut:g}x the die's box (a die {1 / report.cut:.2f} of its square wide)"
        + (" (the model's own cut)" if report.cut == DIE_TO_SQUARE else "")
        + (f"; crops scaled {report.crop_scale:g}, as measured on {report.shown} dice a face new "
           "to the model (its validation photos) shown at this cut" if report.shown else ""),
        "",
        f"- Face accuracy: **{report.face_accuracy:.2%}** "
        f"({report.dice_correct}/{report.dice} dice; {report.faces_read_empty} read as empty)",
        f"- Empty tray squares read as empty: {report.empty_accuracy:.2%} "
        f"({report.empties_correct}/{report.empties})",
        "",
        "Confusion matrix (rows: true label, columns: what the model read):",
        "",
        head,
        rule,
    ]
    for t, row in enumerate(report.confusion):
        if sum(row):
            cells = " | ".join(str(v) for v in row)
            lines.append(f"| **{DICE_LABELS[t]}** | {cells} | {sum(row)} |")
    lines += ["", "| label | correct | total | accuracy |", "| --- | --- | --- | --- |"]
    for label, correct, total in report.per_label():
        lines.append(f"| {label} | {correct} | {total} | {correct / total:.1%} |")
    return "\n".join(lines)
