"""Renaissance squares in doubt between bare and a monomino, asked again of a specialist.

The tiles model's commonest error is a bare square read as a monomino or the reverse: a
monomino of the board's own colour differs from its square only by a thin edge and shadow.
`referee/data/models/tiles-monomino.onnx` answers that one question (`MONOMINO_LABELS`), on the
tiles model's own crops, with no stride at its first layer. Where the tiles model's best
label is bare or a monomino and leads its runner-up by less than the second look's
`below`, the two labels' share of the square is split again: their log-odds become a
weighted mean of the tiles model's and the specialist's (`SecondLook.monomino_weight`);
the square's other labels keep their probability. `benchmarks/render_models.md` measures
the choices.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from referee.vision.classifier import Classifier
from referee.vision.second_look import SecondLook, lead

MONOMINO_MODEL = "tiles-monomino"
MONOMINO_LABELS: tuple[str, ...] = ("bare", "monomino")  # a marker either way


def monomino_label(tiles_label: str) -> str | None:
    """A tiles label's class for the monomino model: "empty..." is bare, "monomino..." a
    monomino, markers either way; None for the others (blocked, a polyomino's square)."""
    return {"empty": "bare", "monomino": "monomino"}.get(tiles_label.split("+")[0])


def monomino_class(tiles_label: str) -> int | None:
    """The monomino model's label index for a tiles label (`monomino_label`), or None."""
    cover = monomino_label(tiles_label)
    return None if cover is None else MONOMINO_LABELS.index(cover)


def monomino_pairs(labels: tuple[str, ...]) -> dict[int, tuple[int, int]]:
    """For each tiles label that is bare or a monomino, the indices of its pair (bare,
    monomino) with the same marker."""
    pairs: dict[int, tuple[int, int]] = {}
    for i, name in enumerate(labels):
        if monomino_label(name) is None:
            continue
        marker = name[len(name.split("+")[0]):]
        pairs[i] = (labels.index(f"empty{marker}"), labels.index(f"monomino{marker}"))
    return pairs


def in_doubt(probabilities: NDArray[np.floating], labels: tuple[str, ...],
             look: SecondLook) -> NDArray[np.intp]:
    """The squares whose best label is bare or a monomino and leads by less than `look.below`."""
    pairs = monomino_pairs(labels)
    best = np.asarray(probabilities).argmax(axis=1)
    doubtful = lead(np.asarray(probabilities, np.float64)) < look.below
    return np.flatnonzero(doubtful & np.isin(best, list(pairs)))


def second_opinion(specialist: Classifier, crops: NDArray[np.uint8],
                   probabilities: NDArray[np.floating], labels: tuple[str, ...],
                   look: SecondLook) -> NDArray[np.float64]:
    """`probabilities` (tiles labels, one row a square, `crops` the squares cut to the
    specialist's spec) with each square in doubt between bare and a monomino read again:
    the pair's log-odds `look.monomino_weight` the specialist's, the rest the tiles model's."""
    if specialist.labels != MONOMINO_LABELS:
        raise ValueError(f"{specialist.path}: labels {specialist.labels}, not {MONOMINO_LABELS}")
    out = np.array(probabilities, dtype=np.float64)
    rows = in_doubt(out, labels, look)
    if not rows.size or look.monomino_weight <= 0:
        return out
    said = specialist.predict(crops[rows]).astype(np.float64)
    pairs = monomino_pairs(labels)
    for row, (p_bare, p_monomino) in zip(rows, np.clip(said, 1e-6, 1.0), strict=True):
        bare, monomino = pairs[int(out[row].argmax())]
        share = out[row, bare] + out[row, monomino]
        ours = np.log(max(out[row, monomino], 1e-9) / max(out[row, bare], 1e-9))
        theirs = np.log(p_monomino / p_bare)
        odds = (1 - look.monomino_weight) * ours + look.monomino_weight * theirs
        out[row, monomino] = share / (1 + np.exp(-odds))
        out[row, bare] = share - out[row, monomino]
    return out
