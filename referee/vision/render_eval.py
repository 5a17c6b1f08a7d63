"""Measuring the render-trained classifiers on renders they never saw (measuring only).

Frames come from seeds at and above `HELD_OUT_FIRST_SEED` (training stays below) with the
board style kept out of training ("mat"), so boards, tables, piece colours, light and camera
are all drawn afresh; no hands. The squares are cut where the true board pose puts the
pieces' top faces, at the height the model's card names, exactly as the referee cuts them,
so this measures the classifier, not the board finder. A board is read without error when
every square (and, for tiles, every seam) is read right. The crops are cut as the run time
cuts a board (`renders.frame_crops`: tiles' squares and seams from one warp of the board);
a model's "crop + classify" time shares that cut by its number of crops.

That is the first look. With `look`, the squares are also read exactly as the referee reads
them (`second_look.read_squares`, which `pipeline.BoardReader.read` calls: unsure squares
are looked at again), and reported beside it. The pipeline reads no seams, so tiles' seams
count with their one look in both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError
from referee.renders import (
    HELD_OUT_FIRST_SEED,
    HELD_OUT_STYLE,
    SEAM_MODEL,
    LabelledFrame,
    frame_crops,
    render_squares,
)
from referee.vision.classifier import Classifier
from referee.vision.second_look import SecondLook, read_squares


@dataclass(frozen=True)
class ModelReport:
    """One model on the held-out frames. `confusion[t][p]` counts crops of true label t
    read as p."""

    model: str
    sha256: str
    labels: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]
    boards_without_error: int
    ms_per_crop: float

    @property
    def crops(self) -> int:
        return sum(sum(row) for row in self.confusion)

    @property
    def wrong(self) -> int:
        return self.crops - sum(self.confusion[k][k] for k in range(len(self.labels)))

    def as_dict(self) -> dict[str, object]:
        return {"crops": self.crops, "wrong": self.wrong,
                "share_wrong": round(self.wrong / max(self.crops, 1), 5),
                "boards_without_error": self.boards_without_error,
                "confusion_rows_true_cols_pred": [list(r) for r in self.confusion]}


@dataclass(frozen=True)
class RenderReport:
    pieces: str
    frames: int
    first_seed: int
    style: str
    models: tuple[ModelReport, ...]
    boards_without_error: int  # every model right on every crop of the frame
    # With a second look: the piece set's own model as the referee reads it, and the boards
    # read without error that way (tiles: with the seams' one look).
    looked: ModelReport | None = None
    boards_looked: int = 0

    @property
    def board_share(self) -> float:
        return self.boards_without_error / self.frames if self.frames else 0.0


def evaluate_renders(pieces: str, classifiers: dict[str, Classifier], *, frames: int,
                     first_seed: int = HELD_OUT_FIRST_SEED, style: str = HELD_OUT_STYLE,
                     look: SecondLook | None = None) -> RenderReport:
    """Read `frames` held-out renders of `pieces` with `classifiers` (model name ->
    classifier: the piece set's own, and for tiles also `tiles-seam`); with `look`, also the
    piece set's squares as the referee reads them (after that second look)."""
    if frames < 1:
        raise ModelError("frames must be 1 or more")
    names = list(classifiers)
    confusion = {m: np.zeros((len(c.labels),) * 2, np.int64) for m, c in classifiers.items()}
    perfect = dict.fromkeys(names, 0)
    seconds = dict.fromkeys(names, 0.0)
    whole = 0
    main = classifiers[pieces] if look is not None else None
    looked = None if main is None else np.zeros((len(main.labels),) * 2, np.int64)
    looked_perfect = looked_whole = 0
    looked_seconds = 0.0
    for seed in range(first_seed, first_seed + frames):
        frame = render_squares(pieces, seed, hands=0.0, style=style)
        right = others_right = True
        started = time.perf_counter()
        # All models' crops at once, as the run time cuts a board (one warp where they fit).
        cut = frame_crops(frame, {m: c.card.crop for m, c in classifiers.items()})
        cutting = time.perf_counter() - started
        total = sum(len(c) for c in cut.values())
        for model, classifier in classifiers.items():
            samples, crops = frame.samples[model], cut[model]
            started = time.perf_counter()
            predicted = classifier.predict(crops).argmax(axis=1)
            seconds[model] += time.perf_counter() - started + cutting * len(crops) / total
            truth = np.array([s.label for s in samples])
            np.add.at(confusion[model], (truth, predicted), 1)
            ok = bool(np.all(predicted == truth))
            perfect[model] += ok
            right &= ok
            others_right &= ok or model == pieces
        whole += right
        if main is not None and looked is not None and look is not None:
            started = time.perf_counter()
            read = _as_the_referee_reads(frame, pieces, main, look)
            looked_seconds += time.perf_counter() - started
            truth = np.array([s.label for s in frame.samples[pieces]])
            np.add.at(looked, (truth, read), 1)
            ok = bool(np.all(read == truth))
            looked_perfect += ok
            looked_whole += ok and others_right
    reports = []
    for model, classifier in classifiers.items():
        count = int(confusion[model].sum())
        reports.append(ModelReport(
            model=model, sha256=classifier.card.sha256, labels=classifier.labels,
            confusion=tuple(tuple(int(v) for v in row) for row in confusion[model]),
            boards_without_error=perfect[model],
            ms_per_crop=1000 * seconds[model] / max(count, 1)))
    looked_report = None
    if main is not None and looked is not None:
        looked_report = ModelReport(
            model=pieces, sha256=main.card.sha256, labels=main.labels,
            confusion=tuple(tuple(int(v) for v in row) for row in looked),
            boards_without_error=looked_perfect,
            ms_per_crop=1000 * looked_seconds / max(int(looked.sum()), 1))
    return RenderReport(pieces, frames, first_seed, style, tuple(reports), whole,
                        looked_report, looked_whole)


def _as_the_referee_reads(frame: LabelledFrame, pieces: str, classifier: Classifier,
                          look: SecondLook) -> NDArray[np.int64]:
    """The label read for each of the frame's samples of the piece set's own model, read
    as the pipeline reads a board: all squares at once, then a second look."""
    if frame.quads is None or frame.kept is None:
        raise ModelError("a second look needs the frame's square quads")
    _, probabilities = read_squares(classifier, frame.image, frame.quads, frame.truth.files,
                                    look)
    return np.asarray(probabilities[list(frame.kept[pieces])].argmax(axis=1), np.int64)


def models_of(pieces: str) -> tuple[str, ...]:
    """The models a piece set is read with."""
    return (pieces, SEAM_MODEL) if pieces == "tiles" else (pieces,)


def format_render_report(report: RenderReport) -> str:
    """Markdown: boards and squares, then each model's confusion matrix."""
    lines = [
        f"Held-out renders of `{report.pieces}`: {report.frames} frames, seeds "
        f"{report.first_seed}–{report.first_seed + report.frames - 1}, board style "
        f"`{report.style}` (not used in training), no hands.",
        "",
        f"- Boards read without error: **{report.board_share:.1%}** "
        f"({report.boards_without_error}/{report.frames})",
    ]
    for model in report.models:
        share = model.wrong / max(model.crops, 1)
        lines.append(
            f"- `{model.model}` ({model.sha256[:12]}): **{share:.3%}** of crops wrong "
            f"({model.wrong}/{model.crops}); boards without its error "
            f"{model.boards_without_error}/{report.frames}; crop + classify "
            f"{model.ms_per_crop:.3f} ms a crop")
    if report.looked is not None:
        lines += ["", *_looks_table(report, report.looked)]
    for model in report.models:
        lines += ["", *_confusion(model, "")]
    if report.looked is not None:
        lines += ["", *_confusion(report.looked, ", as the referee reads it (second look)")]
    return "\n".join(lines)


def _looks_table(report: RenderReport, looked: ModelReport) -> list[str]:
    """The first look beside the referee's read (second look), squares and boards."""
    first = next(m for m in report.models if m.model == looked.model)
    frames = report.frames
    rows = [("first look", first, report.boards_without_error),
            ("as the referee reads (second look)", looked, report.boards_looked)]
    lines = [f"| `{looked.model}` read | squares wrong | boards without its error | "
             "boards without error (all models) |", "| --- | ---: | ---: | ---: |"]
    for name, model, boards in rows:
        lines.append(f"| {name} | {model.wrong}/{model.crops} "
                     f"({model.wrong / max(model.crops, 1):.3%}) | "
                     f"{model.boards_without_error}/{frames} | {boards}/{frames} |")
    return lines


def _confusion(model: ModelReport, how: str) -> list[str]:
    lines = [f"Confusion matrix of `{model.model}`{how} (rows: true label, columns: read):",
             "", "| true \\ read | " + " | ".join(model.labels) + " | total |",
             "|" + " --- |" * (len(model.labels) + 2)]
    for label, row in zip(model.labels, model.confusion, strict=True):
        if sum(row):
            lines.append(f"| **{label}** | " + " | ".join(str(v) for v in row)
                         + f" | {sum(row)} |")
    return lines
