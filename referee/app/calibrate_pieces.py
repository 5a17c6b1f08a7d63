"""`referee calibrate pieces`: learn the players' own pieces before play. The camera is shown
the pieces on known squares (the game's start position unless a layout says otherwise); while
the board stands still, a few frames apart, the referee first measures how large the pieces
stand in their squares (the crop scale at which the model reads them likeliest,
vision/piece_size.py), then cuts each square as it will cut it in play and fits a piece head
(vision/adapt.py) on the model's features of those crops. Both go into the board profile,
which `live` and `replay --board` then read through.

A layout names the squares and what stands on them, `c1=1 a2=2 b3=3` (dice faces, or the
model's labels: `king`, ...), as text or a file of such pairs (`#` starts a comment); every
square it does not name is empty. The layout holds while the board stands still: the first
movement after the first frame taken ends the collection.

How well the head tells the pieces apart is measured before it is written: each square is
read by a head fitted without it (every frame of it held out together, five folds)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from referee.app.calibrated import files_for, load_calibration
from referee.app.pipeline import (
    TILES,
    BoardReader,
    PipelineSettings,
    board_referee,
    camera_game,
    own_pieces,
)
from referee.calibration.files import BoardProfile, load_board, save_board
from referee.calibration.undistort import pixels
from referee.errors import FootageError, RefereeError
from referee.hardware.sources import open_source
from referee.rules.core import Geometry
from referee.tracking.reading import EMPTY
from referee.tracking.stabiliser import Stabiliser, Stillness
from referee.vision.adapt import Head, fit_head, held_out
from referee.vision.classifier import Classifier
from referee.vision.crops import crop_squares, grid_crops
from referee.vision.piece_size import CROP_SCALES, best_crop_scale, mean_log_likelihood
from referee.vision.pose import BoardPose

FRAMES = 8  # frames taken of the still board
EVERY = 5  # frames apart
MAX_FRAMES = 30 * 120  # give up after this many frames


@dataclass(frozen=True)
class Layout:
    """What stands on each square (rules order), as the model's label names."""

    labels: tuple[str, ...]

    def described(self, geometry: Geometry) -> str:
        shown = [f"{geometry.square_name(s)}={label}" for s, label in enumerate(self.labels)
                 if label != EMPTY]
        return " ".join(shown) + " (the rest empty)"


@dataclass(frozen=True)
class Separation:
    """How well the head tells the labels apart on squares it was not fitted on."""

    labels: tuple[str, ...]  # the model's
    confusion: tuple[tuple[int, ...], ...]  # [true][read], the head held out
    model_confusion: tuple[tuple[int, ...], ...]  # [true][read], the model alone
    closest: tuple[str, str]  # the two labels hardest to tell apart
    closest_cosine: float  # their mean features' cosine

    def lines(self) -> list[str]:
        rows = []
        for t, label in enumerate(self.labels):
            total = sum(self.confusion[t])
            if total:
                rows.append(f"  {label}: {self.confusion[t][t]}/{total} held out right "
                            f"(the model alone {self.model_confusion[t][t]}/{total})")
        a, b = (self.labels.index(x) for x in self.closest)
        rows.append(f"  closest: {self.closest[0]} and {self.closest[1]} (features' cosine "
                    f"{self.closest_cosine:.2f}), confused {self.confusion[a][b] + self.confusion[b][a]} "
                    "times held out")
        return rows


@dataclass(frozen=True)
class PieceCalibration:
    head: Head
    separation: Separation
    frames: tuple[int, ...]  # the frame indices taken
    crops: int  # squares cut, over all frames
    layout: Layout
    turns: int  # the orientation the layout was read in (pose quarter turns)
    crop_scale: float = 1.0  # the squares' crops scaled so that the pieces fill them as learnt


def parse_layout(spec: str | None, geometry: Geometry, labels: tuple[str, ...],
                 start: tuple[str, ...]) -> Layout:
    """`spec` (pairs `SQUARE=LABEL`, or a file of them) as a layout; None: `start`."""
    if spec is None:
        return Layout(start)
    path = Path(spec)
    text = path.read_text(encoding="utf-8") if path.is_file() else spec
    board = [EMPTY] * geometry.size
    for line in text.splitlines():
        for pair in re.split(r"[\s,;]+", line.split("#")[0].strip()):
            if pair:
                square, label = _pair(pair, geometry, labels)
                board[square] = label
    if len(set(board)) < 2:
        raise RefereeError("the layout shows only one label: a head needs two or more")
    return Layout(tuple(board))


def _pair(pair: str, geometry: Geometry, labels: tuple[str, ...]) -> tuple[int, str]:
    square, sep, label = pair.partition("=")
    if not sep or not label:
        raise RefereeError(f"layout: {pair!r} is not SQUARE=LABEL (e.g. c1=3)")
    if label not in labels:
        raise RefereeError(f"layout: {pair!r}: the model has no label {label!r} "
                           f"(its labels: {', '.join(labels)})")
    return geometry.parse_square(square), label


def calibrate_pieces(game_name: str, camera: str, board: Path, *, pieces: str | None = None,
                     model: str | None = None, layout: str | None = None,
                     camera_file: Path | None = None, frames: int = FRAMES) -> PieceCalibration:
    if frames < 1:
        raise RefereeError(f"--frames {frames}: at least one frame is needed")
    game = camera_game(game_name)
    calibration = load_calibration(files_for(camera, camera_file, board), game)
    if calibration.board is not None:  # the model alone, at its own cut: an older fit is replaced
        calibration = replace(calibration, board=replace(calibration.board, head=None,
                                                         crop_scale=1.0))
    referee, reader = board_referee(game, pieces, model=model, calibration=calibration)
    reader.classifier.need_features()
    start_labels, _ = referee.inferer.appearance(game.start())
    start = tuple(reader.labels[k] for k in start_labels)
    chosen = parse_layout(layout, game.geometry, reader.classifier.labels, start)
    taken = _still_frames(reader, camera, frames)
    if not taken:
        raise FootageError(f"{camera}: the board was not seen standing still; check the view "
                           "and the light")
    known_side = calibration.board is not None and calibration.board.corners_px is not None
    # Renaissance's tiles and markers cover their squares: there is no piece size to follow.
    sized = own_pieces(game) != TILES
    return _fit(reader, chosen, taken, known_side=known_side, sized=sized)


# A frame taken: its index, the frame (undistorted as read) and the board's pose in each naming
# of the corners that may be the layout's.
Taken = tuple[int, np.ndarray, dict[int, BoardPose]]


def _still_frames(reader: BoardReader, camera: str, wanted: int) -> list[Taken]:
    """Up to `wanted` frames of the first still stretch of the board, `EVERY` frames apart."""
    settings: PipelineSettings = reader.settings
    stabiliser = Stabiliser(2 * settings.view_margin + reader.files,
                            2 * settings.view_margin + reader.ranks, settings.stabiliser)
    taken: list[Taken] = []
    with open_source(camera) as source:
        for frame in source:
            seen, pose, _ = reader.look(frame.frame_bgr, frame.timestamp_s)
            if pose is None:
                if taken:
                    break
                continue
            stillness = stabiliser.update(reader.view(seen, pose), frame.timestamp_s,
                                          outside=reader.view_outside(seen, pose))
            if stillness is Stillness.READ:
                stabiliser.mark_read()
            if stillness in (Stillness.READ, Stillness.STEADY):
                if not taken or frame.index - taken[-1][0] >= EVERY:
                    turns = {*reader.turn_options(), reader.turns}
                    taken.append((frame.index, pixels(seen), {k: reader.turned(k) for k in turns}))
            elif taken:
                break  # the layout holds only until the board is touched
            if len(taken) >= wanted or frame.index >= MAX_FRAMES:
                break
    return taken


def _crops(reader: BoardReader, frame_bgr: np.ndarray, pose: BoardPose, scale: float,
           squares: np.ndarray | None = None) -> np.ndarray:
    """The squares (all, rules order, or `squares`) cut as `BoardReader.read` cuts them,
    their crops scaled by `scale`."""
    quads = reader.square_quads(frame_bgr, pose, scale)
    spec = reader.classifier.card.crop
    if squares is not None:
        return crop_squares(frame_bgr, list(quads[squares]), spec)
    return grid_crops(frame_bgr, list(quads), pose.files, spec)


def _fit(reader: BoardReader, layout: Layout, taken: list[Taken], *, known_side: bool,
         sized: bool) -> PieceCalibration:
    classifier = reader.classifier
    targets_one = np.array([classifier.labels.index(label) for label in layout.labels])
    turns = reader.turns if known_side else _orientation(
        classifier, {k: _crops(reader, taken[0][1], pose, 1.0) for k, pose in taken[0][2].items()},
        targets_one)
    scale = _piece_scale(reader, layout, taken, turns) if sized else 1.0
    crops = np.concatenate([_crops(reader, frame, poses[turns], scale)
                            for _, frame, poses in taken])
    # A die shows the same face turned: each crop a quarter turn at a time where the model
    # learnt so (four times the examples, none of them new squares).
    quarters = 4 if classifier.card.turns_freely else 1
    crops = np.concatenate([np.rot90(crops, k, axes=(1, 2)) for k in range(quarters)])
    features, probs = classifier.features_and_probabilities(np.ascontiguousarray(crops))
    targets = np.tile(targets_one, len(taken) * quarters)
    groups = np.tile(np.arange(len(targets_one)), len(taken) * quarters)
    card = classifier.card

    def head_for(kept: np.ndarray) -> Head | None:
        if len(np.unique(targets[kept])) < 2:
            return None
        return fit_head(card.name, card.sha256, card.labels, features[kept], probs[kept],
                        targets[kept], groups=groups[kept])

    head = head_for(np.ones(len(targets), bool))
    assert head is not None  # the layout has two labels or more
    held = held_out(head_for, features, probs, groups)
    seen = len(targets) // quarters  # the crops as cut, not turned
    separation = _separation(card.labels, features[:seen], targets[:seen], held[:seen], probs[:seen])
    return PieceCalibration(head, separation, tuple(i for i, _, _ in taken), seen, layout, turns,
                            scale)


def _piece_scale(reader: BoardReader, layout: Layout, taken: list[Taken], turns: int) -> float:
    """The crop scale at which the model reads the layout's pieces likeliest (1 where it
    shows none)."""
    classifier = reader.classifier
    pieces = np.array([s for s, label in enumerate(layout.labels) if label != EMPTY])
    if not pieces.size:
        return 1.0
    targets = np.tile([classifier.labels.index(layout.labels[s]) for s in pieces], len(taken))

    def likelihood(scale: float) -> float:
        crops = np.concatenate([_crops(reader, frame, poses[turns], scale, pieces)
                                for _, frame, poses in taken])
        return mean_log_likelihood(classifier.predict(crops), targets)

    return best_crop_scale(likelihood, CROP_SCALES)


def _orientation(classifier: Classifier, by_turn: dict[int, np.ndarray],
                 targets: np.ndarray) -> int:
    """The naming of the corners in which the model finds the layout likeliest."""
    def fit(turns: int) -> float:
        probs = classifier.predict(by_turn[turns])
        return float(np.log(np.clip(probs[np.arange(len(targets)), targets], 1e-9, 1.0)).sum())
    return max(by_turn, key=fit)


def _separation(labels: tuple[str, ...], features: np.ndarray, targets: np.ndarray,
                held: np.ndarray, probs: np.ndarray) -> Separation:
    n = len(labels)
    confusion, alone = np.zeros((n, n), int), np.zeros((n, n), int)
    np.add.at(confusion, (targets, held.argmax(axis=1)), 1)
    np.add.at(alone, (targets, probs.argmax(axis=1)), 1)
    shown = sorted(set(targets.tolist()))
    unit = features / np.maximum(np.linalg.norm(features, axis=1, keepdims=True), 1e-12)
    means = {k: unit[targets == k].mean(axis=0) for k in shown}
    pairs = [(a, b) for i, a in enumerate(shown) for b in shown[i + 1:]]

    def cosine(pair: tuple[int, int]) -> float:
        a, b = means[pair[0]], means[pair[1]]
        return float(a @ b / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-12))

    # the pair confused most held out; among equals, the pair whose features lie closest
    a, b = max(pairs, key=lambda p: (confusion[p[0], p[1]] + confusion[p[1], p[0]], cosine(p)))
    return Separation(labels, _rows(confusion), _rows(alone), (labels[a], labels[b]),
                      cosine((a, b)))


def _rows(matrix: np.ndarray) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(v) for v in row) for row in matrix)


def save(calibration: PieceCalibration, board: Path, out: Path) -> BoardProfile:
    profile = replace(load_board(board), head=calibration.head, crop_scale=calibration.crop_scale)
    save_board(profile, out, header=[
        f"Board profile with a piece head written by `referee calibrate pieces` from frames "
        f"{', '.join(map(str, calibration.frames))}.",
    ])
    return profile
