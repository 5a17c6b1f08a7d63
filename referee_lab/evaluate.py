"""Measuring a classifier on the real dice photographs' test split (measuring only: nothing
here feeds training or model selection).

Face accuracy counts the 308 labelled dice: a die read as any other face, or as empty, is
wrong. Bare-tray squares of the same photos (placed with a fixed seed) measure the other
way round: an empty square read as a die.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from referee.vision.classifier import Classifier
from referee_lab.datasets import DICE_LABELS, EMPTY, RealDice, fixed_crops

EVAL_SEED = 20191209  # fixed: the same empty squares every time
EMPTIES_PER_PHOTO = 4


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
            "turns": self.turns,
            "dice": self.dice,
            "face_accuracy": round(self.face_accuracy, 4),
            "empties": self.empties,
            "empty_accuracy": round(self.empty_accuracy, 4),
            "confusion_rows_true_cols_pred": [list(r) for r in self.confusion],
        }


def evaluate_dice(
    classifier: Classifier, root: str | Path | None = None, *, turns: int = 1
) -> DiceReport:
    test = RealDice.load("test", root)
    spec = classifier.card.crop
    dice = test.die_samples()
    empties = test.empty_samples(np.random.default_rng(EVAL_SEED), EMPTIES_PER_PHOTO)
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
    )


def format_report(report: DiceReport) -> str:
    """Markdown: the headline figures, the confusion matrix and per-label accuracy."""
    head = "| true \\ read | " + " | ".join(DICE_LABELS) + " | total |"
    rule = "|" + " --- |" * (len(DICE_LABELS) + 2)
    lines = [
        f"Model `{report.model}`, data `{report.data}` (test split), "
        f"test-time turns: {report.turns}",
        "",
        f"- Face accuracy: **{report.face_accuracy:.2%}** "
        f"({report.dice_correct}/{report.dice} dice)",
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
