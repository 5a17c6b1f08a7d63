"""Tiles' seams read together with their squares.

The seam model reads a crop centred on the line between two neighbouring squares: "joined"
when both lie under one polyomino, else "apart". It sees half of each square and nothing
of the squares' own reads, and it errs mostly by joining a polyomino to a bare square, a
monomino to a monomino or a monomino to a polyomino beside it (`benchmarks/render_models.md`),
which the square model tells apart with ease. A seam is joined only where both its
squares are a polyomino's, so its probability of being joined is at most either square's
probability of being a polyomino's (bare, a monomino or the blocked centre: apart by what
the labels mean)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError

POLYOMINO_PREFIX = "tile"  # the square labels of a polyomino's square: tile, tile+gold, ...
APART, JOINED = "apart", "joined"
SEAM_MODEL = "tiles-seam"


@dataclass(frozen=True, eq=False)
class SeamLook:
    """A board's seams, read only when first asked (a decoder in doubt between two ways the
    tiles lie): `read` gives each seam's probability of being joined, in `seam_pairs` order;
    the answer is kept."""

    read: Callable[[], NDArray[np.float64]]

    @cached_property
    def joined(self) -> NDArray[np.float64]:
        return np.asarray(self.read(), dtype=np.float64)


def seam_pairs(files: int, ranks: int) -> NDArray[np.int64]:
    """The two squares (rules order) of every seam, in `crops.seam_quads` order: for each
    square, its east neighbour, then its north one."""
    pairs = []
    for index in range(files * ranks):
        file, rank = index % files, index // files
        if file + 1 < files:
            pairs.append((index, index + 1))
        if rank + 1 < ranks:
            pairs.append((index, index + files))
    return np.array(pairs, np.int64).reshape(-1, 2)


def seams_given_squares(seam_probabilities: NDArray[np.floating], seam_labels: Sequence[str],
                        square_probabilities: NDArray[np.floating],
                        square_labels: Sequence[str], pairs: NDArray[np.int64]
                        ) -> NDArray[np.float64]:
    """`seam_probabilities` (one row a seam of `pairs`) given the squares' probabilities (one
    row a square, columns `square_labels`): a joined seam needs both squares to be a
    polyomino's, so its probability is at most each square's probability of being one. A
    seam beside a square read bare or as a monomino is then apart, and no surer of it than
    the square is of its read."""
    if APART not in seam_labels or JOINED not in seam_labels:
        raise ModelError(f"seam labels {tuple(seam_labels)} lack {APART!r} or {JOINED!r}")
    seams = np.asarray(seam_probabilities, dtype=np.float64)
    if len(seams) != len(pairs):
        raise ModelError(f"{len(seams)} seam reads for {len(pairs)} seams")
    columns = [k for k, label in enumerate(square_labels) if label.startswith(POLYOMINO_PREFIX)]
    polyomino = np.asarray(square_probabilities, np.float64)[:, columns].sum(axis=1)
    apart, joined = list(seam_labels).index(APART), list(seam_labels).index(JOINED)
    bound = np.minimum(polyomino[pairs[:, 0]], polyomino[pairs[:, 1]])
    out = np.zeros_like(seams)
    out[:, joined] = np.minimum(seams[:, joined] / seams.sum(axis=1).clip(1e-12), bound)
    out[:, apart] = 1.0 - out[:, joined]
    return out
