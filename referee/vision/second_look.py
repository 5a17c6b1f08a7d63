"""A second look at the squares a classifier is unsure of.

A square whose best label leads its runner-up by less than `SecondLook.below` nats is cut
again: tighter round the piece (a tilted die's sides, which show other faces, then fill less
of the crop) and a little shifted (a piece's top stands higher or lower than the crops
assume). Where the model's card says its pieces turn freely (a die shows the same face turned,
`ModelCard.turns_freely`), each tighter crop is also read turned by a quarter, a half and
three quarters (`SecondLook.turns`: the turned crops cost no cutting, only reading). Where
the pieces stand smaller than their squares (`ModelCard.pieces_stand_apart`: dice), the
piece is also found in its square (`vision.locate`) and cut again round itself, as wide as
the model's own cut, whatever size the club's dice are (`SecondLook.located`), turned and
shifted as the others, where the looks about the square leave it in doubt. The looks are
averaged in log space (a geometric mean), so that they count as one opinion, not as
independent evidence. `benchmarks/second_look.py` measures the choice on rendered boards,
`referee-lab eval --pieces dice` on the real photographs (`benchmarks/real_dice.md`).

`look_again` takes the cutting as a function, so that the pipeline (`looked_again`: the
squares of one frame) and the lab's measurement on photographs (each square from its own
photo) look again the same way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from referee.vision.classifier import Classifier
from referee.vision.crops import ImageBGR, crop_squares, grid_crops, scaled_quads
from referee.vision.locate import find_piece, piece_quad

_WAYS = ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0))

# cut(rows, quads): the crops (N, size, size, 3) of the squares `rows` (indices into the
# squares being read), each cut at its quad in `quads` (N, 4, 2)
Cutter = Callable[[NDArray[np.intp], NDArray[np.float32]], NDArray[np.uint8]]


@dataclass(frozen=True)
class SecondLook:
    below: float = 3.0  # nats: squares whose best label leads by less are looked at again
    scales: tuple[float, ...] = (0.9, 0.95)  # tighter crops, as a share of the first
    shift: float = 0.04  # shifted crops, four ways, by this share of a square
    # quarter turns each tighter crop is also read in, each a look of its own: only for a
    # model whose pieces turn freely (`ModelCard.turns_freely`), ignored for the others
    turns: tuple[int, ...] = (1, 2, 3)
    # crops cut round the piece found in its square, as a share of the model's own cut, each
    # also turned and the first shifted as above: only for a model whose pieces stand apart
    # (`ModelCard.pieces_stand_apart`), where the looks about the square leave it in doubt
    # and a piece is found
    located: tuple[float, ...] = (1.0, 0.9)
    # tiles: the monomino model's share of the log-odds of a square in doubt between bare
    # and a monomino (`vision.monomino`; 0: not asked; 0.35-0.7 read the development frames alike)
    monomino_weight: float = 0.5


def lead(probabilities: np.ndarray) -> np.ndarray:
    """How far each square's best label leads its runner-up, in nats."""
    top_two = np.sort(np.clip(probabilities, 1e-9, 1.0), axis=1)[:, -2:]
    return np.asarray(np.log(top_two[:, 1] / top_two[:, 0]))


def looked_again(classifier: Classifier, frame_bgr: ImageBGR, quads: np.ndarray,
                 first: np.ndarray, look: SecondLook) -> np.ndarray:
    """`first` (one probability row per quad) with each doubtful row replaced by the
    average of its looks, cut from `frame_bgr`."""
    spec = classifier.card.crop

    def cut(rows: NDArray[np.intp], moved: NDArray[np.float32]) -> NDArray[np.uint8]:
        return crop_squares(frame_bgr, list(moved), spec)

    return look_again(classifier, quads, first, look, cut)


def look_again(classifier: Classifier, quads: np.ndarray, first: np.ndarray, look: SecondLook,
               cut: Cutter) -> np.ndarray:
    """`looked_again` with the cutting given: `cut(rows, quads)` cuts the doubtful squares
    `rows` again at the moved `quads` (the squares' own, `quads`, moved)."""
    out = np.array(first, dtype=np.float64)
    doubtful = np.flatnonzero(lead(out) < look.below)
    if not doubtful.size:
        return out
    at = np.asarray(quads, np.float64)[doubtful]
    about_square = _logs(classifier, _looks(classifier, doubtful, at, look.scales, look, cut))
    total = np.log(np.clip(out[doubtful], 1e-9, 1.0)) + np.sum(about_square, axis=0)
    count = np.full(len(doubtful), 1.0 + len(about_square))
    # Cut round the piece only where the looks about the square leave it in doubt: a die
    # found by its pips alone, or a square of a chequered board taken for a piece, would
    # otherwise outvote squares those looks read surely (rendered boards, second_look.md)
    still = np.flatnonzero(lead(_mean(total, count)) < look.below)
    found, round_pieces = _located_quads(classifier, doubtful[still], at[still], look, cut)
    if found.size:
        rows = still[found]
        round_piece = _logs(classifier, _looks(classifier, doubtful[rows], round_pieces,
                                               look.located, look, cut))
        total[rows] += np.sum(round_piece, axis=0)
        count[rows] += len(round_piece)
    out[doubtful] = _mean(total, count)
    return out


def _mean(total: NDArray[np.float64], count: NDArray[np.float64]) -> NDArray[np.float64]:
    """Probabilities from the summed log-probabilities of `count` looks a row."""
    mean = np.exp(total / count[:, None])
    return np.asarray(mean / mean.sum(axis=1, keepdims=True))


def _looks(classifier: Classifier, rows: NDArray[np.intp], at: NDArray[np.float64],
           scales: tuple[float, ...], look: SecondLook, cut: Cutter) -> list[NDArray[np.uint8]]:
    """The looks at the squares `rows` (at their quads `at`), one batch of crops a look: cut
    again at each of `scales` of `at`, as cut and turned (`turns_for`), then shifted four ways."""
    turns = turns_for(classifier, look)
    looks: list[NDArray[np.uint8]] = []
    for scale in scales:
        tighter = cut(rows, scaled_quads(at, scale))
        looks += [tighter, *(np.rot90(tighter, k, axes=(1, 2)) for k in turns)]
    return looks + [cut(rows, moved) for moved in shifted_quads(at, look.shift)]


def _located_quads(classifier: Classifier, rows: NDArray[np.intp], at: NDArray[np.float64],
                   look: SecondLook, cut: Cutter) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Which of the squares `rows` (at `at`) show a piece found in its crop (indices into
    `rows`), and the squares cut round those pieces; none where the model's pieces do not
    stand apart or `look.located` is empty."""
    if not (look.located and classifier.card.pieces_stand_apart):
        return np.zeros(0, np.intp), np.zeros((0, 4, 2))
    spec = classifier.card.crop
    boxes = [find_piece(crop, spec) for crop in cut(rows, at.astype(np.float32))]
    found = np.array([i for i, box in enumerate(boxes) if box is not None], np.intp)
    quads = [piece_quad(at[i].astype(np.float32), box, spec)
             for i, box in enumerate(boxes) if box is not None]
    return found, np.array(quads, np.float64).reshape(-1, 4, 2)


def read_squares(classifier: Classifier, frame_bgr: ImageBGR, quads: np.ndarray, files: int,
                 look: SecondLook) -> tuple[np.ndarray, np.ndarray]:
    """A board's squares read as the referee reads them: the crops (one warp of the board
    where the crop spec allows, `grid_crops`) and their probabilities after the second look.
    `quads`: every square's top-face quad, rules order."""
    crops = grid_crops(frame_bgr, list(quads), files, classifier.card.crop)
    return crops, looked_again(classifier, frame_bgr, quads, classifier.predict(crops), look)


def turns_for(classifier: Classifier, look: SecondLook) -> tuple[int, ...]:
    """The quarter turns a doubtful square's tighter crops are also read in: `look.turns`
    where the model's pieces turn freely, none otherwise."""
    return look.turns if classifier.card.turns_freely else ()


def looks_per_square(classifier: Classifier, look: SecondLook) -> int:
    """How many crops the second look reads at most for each doubtful square (those cut round
    the piece only where the others leave it in doubt and a piece is found)."""
    def looks(scales: tuple[float, ...]) -> int:
        return len(scales) * (1 + len(turns_for(classifier, look))) + len(_WAYS)

    located = look.located and classifier.card.pieces_stand_apart
    return looks(look.scales) + (looks(look.located) if located else 0)


def shifted_quads(quads: np.ndarray, shift: float) -> list[NDArray[np.float32]]:
    """Squares `quads` (N, 4, 2) shifted four ways (right, left, down, up) by `shift` of
    each square's side, one array a way."""
    quads = np.asarray(quads, np.float64)
    step = shift * np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1)[:, None, None]
    return [(quads + step * np.array(way)).astype(np.float32) for way in _WAYS]


def _logs(classifier: Classifier, batches: list[NDArray[np.uint8]]) -> list[NDArray[np.float64]]:
    """Each batch's log-probabilities, the batches read in one run of the model."""
    crops = batches[0] if len(batches) == 1 else np.concatenate(batches)
    seen = classifier.predict(np.ascontiguousarray(crops))
    logs = np.log(np.clip(seen.astype(np.float64), 1e-9, 1.0))
    return list(np.split(logs, np.cumsum([len(batch) for batch in batches])[:-1]))
