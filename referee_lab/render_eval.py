"""Measuring the render-trained classifiers on renders they never saw (measuring only).

Frames come from seeds at and above `HELD_OUT_FIRST_SEED` (training stays below) with the
board style kept out of training ("mat"), so boards, tables, piece colours, light and camera
are all drawn afresh; no hands. The squares are cut where the true board pose puts the
pieces' top faces, at the height the model's card names, exactly as the referee cuts them,
so this measures the classifier, not the board finder. A board is read without error when
every square (and, for tiles, every seam) is read right. The crops are cut as the run time
cuts a board (`renders.frame_crops`: tiles' squares and seams from one warp of the board);
a model's "crop + classify" time shares that cut by its number of crops.

That is the first look. With `look`, the frames are also read as the referee reads them
and reported beside it: the squares exactly as `pipeline.BoardReader.read` reads them
(`second_look.read_squares`: unsure squares are looked at again), tiles' seams given those
squares' reads (`seams.seams_given_squares`: joined no likelier than either square is a
polyomino's), and in between, for tiles, the second look's squares with the seams as the seam
model reads them. (The pipeline reads no Renaissance board yet: these are the functions it
is to call.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError
from referee.vision.classifier import Classifier
from referee.vision.crops import grid_crops
from referee.vision.monomino import MONOMINO_MODEL, second_opinion
from referee.vision.seams import APART, JOINED, SEAM_MODEL, seam_pairs, seams_given_squares
from referee.vision.second_look import SecondLook, read_squares
from referee_lab.renders import (
    HELD_OUT_FIRST_SEED,
    HELD_OUT_STYLE,
    LabelledFrame,
    frame_crops,
    render_squares,
)


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
class LookReport:
    """The models' reads of the same frames another way (`name`): each model's confusion,
    and the boards read without error that way."""

    name: str
    models: tuple[ModelReport, ...]
    boards_without_error: int


@dataclass(frozen=True)
class RenderReport:
    pieces: str
    frames: int
    first_seed: int
    style: str
    models: tuple[ModelReport, ...]  # the first look
    boards_without_error: int  # every model right on every crop of the frame
    looks: tuple[LookReport, ...] = ()  # with a second look: as the referee reads
    # models asked about some squares only (tiles: the monomino model), each alone on the
    # squares it answers for, at the first look; not part of a board's read
    helpers: tuple[ModelReport, ...] = ()

    @property
    def board_share(self) -> float:
        return self.boards_without_error / self.frames if self.frames else 0.0


SEAMS_AS_READ = "second look, seams as read"
AS_THE_REFEREE_READS = "as the referee reads (second look, seams given the squares)"
AS_THE_REFEREE_READS_SQUARES = "as the referee reads (second look)"  # a set without seams
WHOLE_PIECES = "as the referee reads, then as whole pieces"



class PiecesRead(Protocol):
    @property
    def squares(self) -> NDArray[np.int64]: ...  # a label a square
    @property
    def joined(self) -> NDArray[np.bool_]: ...  # a seam of `seam_pairs`


# Tiles read as whole pieces (`tracking.tile_pieces.read_whole_pieces`, given by the caller:
# it knows the game's polyominoes, which the vision code does not): from the squares' and
# the seam model's probabilities of a whole board, and its size.
PiecesReader = Callable[[NDArray[np.floating], Sequence[str], NDArray[np.floating],
                         Sequence[str], int], PiecesRead]


class _Tally:
    """Confusion matrices and boards without error, for one way of reading."""

    def __init__(self, classifiers: dict[str, Classifier]) -> None:
        self.classifiers = classifiers
        self.confusion = {m: np.zeros((len(c.labels),) * 2, np.int64)
                          for m, c in classifiers.items()}
        self.perfect = dict.fromkeys(classifiers, 0)
        self.whole = 0

    def add(self, frame: LabelledFrame, reads: dict[str, NDArray[np.int64]]) -> None:
        right = True
        for model, read in reads.items():
            truth = np.array([s.label for s in frame.samples[model]], np.int64)
            np.add.at(self.confusion[model], (truth, read), 1)
            ok = bool(np.all(read == truth))
            self.perfect[model] += ok
            right &= ok
        self.whole += right

    def reports(self, seconds: dict[str, float]) -> tuple[ModelReport, ...]:
        return tuple(ModelReport(
            model=model, sha256=classifier.card.sha256, labels=classifier.labels,
            confusion=tuple(tuple(int(v) for v in row) for row in self.confusion[model]),
            boards_without_error=self.perfect[model],
            ms_per_crop=1000 * seconds.get(model, 0.0) / max(int(self.confusion[model].sum()), 1))
            for model, classifier in self.classifiers.items())


def evaluate_renders(pieces: str, classifiers: dict[str, Classifier], *, frames: int,
                     first_seed: int = HELD_OUT_FIRST_SEED, style: str = HELD_OUT_STYLE,
                     look: SecondLook | None = None,
                     pieces_reader: PiecesReader | None = None) -> RenderReport:
    """Read `frames` held-out renders of `pieces` with `classifiers` (model name ->
    classifier: the piece set's own, and for tiles also `tiles-seam`); with `look`, also as
    the referee reads them (the squares after that second look, tiles' squares in doubt
    between bare and a monomino asked of the monomino model where it is among `classifiers`,
    tiles' seams given the squares), and with `pieces_reader` too, tiles then read as whole
    pieces. The monomino model is also measured alone, on the squares it answers for
    (`RenderReport.helpers`)."""
    if frames < 1:
        raise ModelError("frames must be 1 or more")
    readers = {m: c for m, c in classifiers.items() if m != MONOMINO_MODEL}
    helpers = {m: c for m, c in classifiers.items() if m == MONOMINO_MODEL}
    first, alone = _Tally(readers), _Tally(helpers)
    seconds = dict.fromkeys(classifiers, 0.0)
    names = _look_names(classifiers, look, pieces_reader)
    looks = {name: _Tally(readers) for name in names}
    looking = 0.0  # the second look's own time, beyond the first look's
    for seed in range(first_seed, first_seed + frames):
        frame = render_squares(pieces, seed, hands=0.0, style=style)
        started = time.perf_counter()
        # All models' crops at once, as the run time cuts a board (one warp where they fit).
        cut = frame_crops(frame, {m: c.card.crop for m, c in classifiers.items()})
        cutting = time.perf_counter() - started
        total = sum(len(c) for c in cut.values())
        probabilities = {}
        for model, classifier in classifiers.items():
            started = time.perf_counter()
            probabilities[model] = classifier.predict(cut[model])
            seconds[model] += (time.perf_counter() - started
                               + cutting * len(cut[model]) / total)
        first.add(frame, {m: probabilities[m].argmax(axis=1) for m in readers})
        alone.add(frame, {m: probabilities[m].argmax(axis=1) for m in helpers})
        if look is not None:
            started = time.perf_counter()
            reads = _as_the_referee_reads(frame, pieces, classifiers, probabilities, look,
                                          pieces_reader)
            looking += time.perf_counter() - started
            for name, tally in looks.items():
                tally.add(frame, reads[name])
    # a look reads each model's first crops, the main model's looks again on top
    looked = {m: t + (looking if m == pieces else 0.0) for m, t in seconds.items()}
    return RenderReport(pieces, frames, first_seed, style, first.reports(seconds), first.whole,
                        tuple(LookReport(name, tally.reports(looked), tally.whole)
                              for name, tally in looks.items()), alone.reports(seconds))


def _look_names(classifiers: dict[str, Classifier], look: SecondLook | None,
                pieces_reader: PiecesReader | None) -> list[str]:
    if look is None:
        return []
    if SEAM_MODEL not in classifiers:
        return [AS_THE_REFEREE_READS_SQUARES]
    return [SEAMS_AS_READ, AS_THE_REFEREE_READS, *[WHOLE_PIECES][:pieces_reader is not None]]


def _as_the_referee_reads(frame: LabelledFrame, pieces: str, classifiers: dict[str, Classifier],
                          first: dict[str, NDArray[np.floating]], look: SecondLook,
                          pieces_reader: PiecesReader | None
                          ) -> dict[str, dict[str, NDArray[np.int64]]]:
    """Each way of reading's labels for the frame's samples (by look name), read as the
    pipeline reads a board: all squares at once, then a second look
    (`second_look.read_squares`), tiles' squares in doubt between bare and a monomino asked
    again (`monomino.second_opinion`); tiles' seams (`first`: the seam model's probabilities) as
    read, then given the squares' reads (`seams.seams_given_squares`), then squares and seams
    as whole pieces (`pieces_reader`, the whole board in view)."""
    if frame.quads is None or frame.kept is None:
        raise ModelError("a second look needs the frame's square quads")
    main = classifiers[pieces]
    crops, squares = read_squares(main, frame.image, frame.quads, frame.truth.files, look)
    if MONOMINO_MODEL in classifiers:
        specialist = classifiers[MONOMINO_MODEL]
        if specialist.card.crop != main.card.crop:
            crops = grid_crops(frame.image, list(frame.quads), frame.truth.files, specialist.card.crop)
        squares = second_opinion(specialist, crops, squares, main.labels, look)
    kept_squares = list(frame.kept[pieces])
    read = {pieces: np.asarray(squares[kept_squares].argmax(axis=1), np.int64)}
    if SEAM_MODEL not in classifiers:
        return {AS_THE_REFEREE_READS_SQUARES: read}
    files, ranks = frame.truth.files, frame.truth.ranks
    kept = list(frame.kept[SEAM_MODEL])
    seam_labels = classifiers[SEAM_MODEL].labels
    given = seams_given_squares(first[SEAM_MODEL], seam_labels, squares, main.labels,
                                seam_pairs(files, ranks)[kept])
    reads = {SEAMS_AS_READ: {**read, SEAM_MODEL: first[SEAM_MODEL].argmax(axis=1)},
             AS_THE_REFEREE_READS: {**read, SEAM_MODEL: given.argmax(axis=1)}}
    if pieces_reader is not None:
        if (len(kept_squares) != files * ranks or len(kept) != len(seam_pairs(files, ranks))
                or files != ranks):
            raise ModelError("tiles are read as whole pieces only on a whole square board")
        whole = pieces_reader(squares, main.labels, first[SEAM_MODEL], seam_labels, files)
        reads[WHOLE_PIECES] = {pieces: whole.squares, SEAM_MODEL: np.where(
            whole.joined, seam_labels.index(JOINED), seam_labels.index(APART)).astype(np.int64)}
    return reads


def models_of(pieces: str) -> tuple[str, ...]:
    """The models a piece set is read with (and trains), its main model first."""
    return (pieces, SEAM_MODEL, MONOMINO_MODEL) if pieces == "tiles" else (pieces,)


def format_render_report(report: RenderReport) -> str:
    """Markdown: boards and squares, then each model's confusion matrix."""
    lines = [
        f"Held-out renders of `{report.pieces}`: {report.frames} frames, seeds "
        f"{report.first_seed}–{report.first_seed + report.frames - 1}, board style "
        f"`{report.style}` (not used in training), no hands.",
        "",
        f"- Boards read without error: **{report.board_share:.1%}** "
        f"({report.boards_without_error}/{report.frames})"
        + "".join(f"; {look.name}: **{look.boards_without_error / report.frames:.1%}** "
                  f"({look.boards_without_error}/{report.frames})" for look in report.looks[-1:]),
    ]
    for model in report.models:
        share = model.wrong / max(model.crops, 1)
        lines.append(
            f"- `{model.model}` ({model.sha256[:12]}): **{share:.3%}** of crops wrong "
            f"({model.wrong}/{model.crops}); boards without its error "
            f"{model.boards_without_error}/{report.frames}; crop + classify "
            f"{model.ms_per_crop:.3f} ms a crop")
    if report.looks:
        lines += ["", *_looks_table(report)]
    for model in report.models:
        lines += ["", *_confusion(model, "")]
    for look in report.looks[-1:]:
        for model in look.models:
            lines += ["", *_confusion(model, f", {look.name}")]
    for model in report.helpers:
        lines += ["", f"`{model.model}` ({model.sha256[:12]}) alone, on the squares it is asked "
                  f"about: **{model.wrong / max(model.crops, 1):.3%}** wrong ({model.wrong}/"
                  f"{model.crops})", "", *_confusion(model, " alone")]
    return "\n".join(lines)


def _looks_table(report: RenderReport) -> list[str]:
    """The first look beside the other ways of reading: each model's crops wrong and boards
    without its error, and the boards without error."""
    names = [m.model for m in report.models]
    lines = ["| read | " + " | ".join(f"`{m}` wrong | boards without its error"
                                       for m in names) + " | boards without error |",
             "| --- |" + " ---: | ---: |" * len(names) + " ---: |"]
    frames = report.frames
    rows = [LookReport("first look", report.models, report.boards_without_error),
            *report.looks]
    for look in rows:
        cells = [f"{m.wrong}/{m.crops} ({m.wrong / max(m.crops, 1):.3%}) | "
                 f"{m.boards_without_error}/{frames}" for m in look.models]
        lines.append(f"| {look.name} | " + " | ".join(cells)
                     + f" | **{look.boards_without_error}/{frames}** |")
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
