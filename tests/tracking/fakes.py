"""Readings made from positions, as a perfect-but-noisy camera would give them, for testing
the inference and the referee without pixels."""

from __future__ import annotations

import numpy as np

from referee.rules.rinne import Position
from referee.tracking.inference import MoveInferer
from referee.tracking.reading import Reading

DICE_LABELS = ("empty", "1", "2", "3", "4", "5", "6")
PLAYER_LAB = (np.array([92.0, 0.0, 4.0]), np.array([45.0, 55.0, 35.0]))  # ivory, red
BOARD_LAB = np.array([70.0, 5.0, 25.0])


def reading_of(inferer: MoveInferer, position: Position, *, shown: dict[int, str] | None = None,
               confidence: float = 0.93, unsure: dict[int, float] | None = None,
               seed: int = 0, frame_index: int = 0) -> Reading:
    """The reading of `position` (with `shown` overriding labels); every square's best label
    gets `confidence`, or the value given for it in `unsure`."""
    rng = np.random.default_rng(seed)
    labels, owners = inferer.appearance(position, shown)
    n, k = len(labels), len(inferer.labels)
    probabilities = np.empty((n, k))
    colors = np.empty((n, 3))
    for square in range(n):
        p = (unsure or {}).get(square, confidence)
        row = rng.dirichlet(np.ones(k - 1)) * (1 - p)
        probabilities[square] = np.insert(row, labels[square], p)
        base = BOARD_LAB if owners[square] < 0 else PLAYER_LAB[owners[square]]
        colors[square] = base + rng.normal(0, 3, 3)
    return Reading(inferer.labels, probabilities, colors, frame_index, frame_index / 30)
