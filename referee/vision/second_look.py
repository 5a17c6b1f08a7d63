"""A second look at the squares a classifier is unsure of.

A square whose best label leads its runner-up by less than `SecondLook.below` nats is cut
again: tighter round the piece (a tilted die's sides, which show other faces, then fill less
of the crop) and a little shifted (a piece's top stands higher or lower than the crops
assume). The looks are averaged in log space (a geometric mean), so that they count as one
opinion, not as independent evidence. `benchmarks/second_look.py` measures the choice."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from referee.vision.classifier import Classifier
from referee.vision.crops import ImageBGR, crop_squares, grid_crops, scaled_quads

_WAYS = ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0))


@dataclass(frozen=True)
class SecondLook:
    below: float = 3.0  # nats: squares whose best label leads by less are looked at again
    scales: tuple[float, ...] = (0.9, 0.95)  # tighter crops, as a share of the first
    shift: float = 0.04  # shifted crops, four ways, by this share of a square
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
    average of its looks."""
    out = np.array(first, dtype=np.float64)
    doubtful = np.flatnonzero(lead(out) < look.below)
    if not doubtful.size:
        return out
    logs = [np.log(np.clip(out[doubtful], 1e-9, 1.0))]
    for moved in _moved(np.asarray(quads, np.float64)[doubtful], look):
        seen = classifier.predict(crop_squares(frame_bgr, list(moved), classifier.card.crop))
        logs.append(np.log(np.clip(seen.astype(np.float64), 1e-9, 1.0)))
    mean = np.exp(np.mean(logs, axis=0))
    out[doubtful] = mean / mean.sum(axis=1, keepdims=True)
    return out


def read_squares(classifier: Classifier, frame_bgr: ImageBGR, quads: np.ndarray, files: int,
                 look: SecondLook) -> tuple[np.ndarray, np.ndarray]:
    """A board's squares read as the referee reads them: the crops (one warp of the board
    where the crop spec allows, `grid_crops`) and their probabilities after the second look.
    `quads`: every square's top-face quad, rules order."""
    crops = grid_crops(frame_bgr, list(quads), files, classifier.card.crop)
    return crops, looked_again(classifier, frame_bgr, quads, classifier.predict(crops), look)


def _moved(quads: np.ndarray, look: SecondLook) -> list[np.ndarray]:
    step = look.shift * np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1)[:, None, None]
    moved = [scaled_quads(quads, scale) for scale in look.scales]
    return moved + [(quads + step * np.array(way)).astype(np.float32) for way in _WAYS]
