"""Tiles' seams read together with their squares.

The seam model reads a crop centred on the line between two neighbouring squares: "joined"
when both lie under one polyomino, else "apart". It sees half of each square and nothing
of the squares' own reads, and it errs mostly by joining a polyomino to a bare square, a
monomino to a monomino or a monomino to a polyomino beside it (`benchmarks/render_models.md`,
"Session 7"), which the square model reads apart with ease. So a seam is read joined only
where both its squares are read as a polyomino's square: a seam with a bare square, a
monomino or the blocked centre on either side is apart by what the labels mean."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError

POLYOMINO_PREFIX = "tile"  # the square labels of a polyomino's square: tile, tile+gold, ...
APART, JOINED = "apart", "joined"


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
                        square_reads: Sequence[str], pairs: NDArray[np.int64]
                        ) -> NDArray[np.float64]:
    """`seam_probabilities` (one row a seam of `pairs`) given what the squares were read as
    (`square_reads`, one label a square): certainly apart where either square is read as no
    polyomino's square, unchanged elsewhere."""
    if APART not in seam_labels or JOINED not in seam_labels:
        raise ModelError(f"seam labels {tuple(seam_labels)} lack {APART!r} or {JOINED!r}")
    out = np.array(seam_probabilities, dtype=np.float64)
    if len(out) != len(pairs):
        raise ModelError(f"{len(out)} seam reads for {len(pairs)} seams")
    polyomino = np.array([label.startswith(POLYOMINO_PREFIX) for label in square_reads])
    impossible = ~(polyomino[pairs[:, 0]] & polyomino[pairs[:, 1]])
    out[impossible] = 0.0
    out[impossible, list(seam_labels).index(APART)] = 1.0
    return out
