"""A `Reading`: what the camera saw of every square at one steady moment, as probabilities.

Squares are indexed as the rules index them (rank * files + file, a1 first). The classifier
gives, per square, a probability for each of its labels ("empty" first); the colour of any
piece on the square is measured separately, because owners are told apart by the colours the
referee learns from the start position, not by a trained class."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from referee.vision.seams import SeamLook

EMPTY = "empty"


@dataclass(frozen=True, eq=False)
class Reading:
    labels: tuple[str, ...]
    probabilities: np.ndarray  # (squares, labels), each row sums to 1
    colors: np.ndarray  # (squares, 3): mean colour of whatever stands on the square (Lab)
    frame_index: int = 0
    time_s: float = 0.0
    # Per square, whether the image shows it as it was when the board last showed the
    # position (`vision.change`): what it held then, it still holds. None: not known.
    unchanged: np.ndarray | None = None
    # ... and whether it shows it changed by far more than the light or a neighbour's piece
    # changes a square: it no longer holds what it held. None: not known.
    changed: np.ndarray | None = None
    # Renaissance: the seams between squares, read by the seam model when first asked.
    seams: SeamLook | None = None
    # Where the hands rested over the board since it last showed the position, first first,
    # in squares from a1's outer corner (`tracking.reach`): (n, 2). None: not watched.
    hand_rests: np.ndarray | None = None

    def __post_init__(self) -> None:
        squares, labels = self.probabilities.shape
        if labels != len(self.labels) or self.labels[0] != EMPTY:
            raise ValueError("probabilities must have one column per label, 'empty' first")
        if self.colors.shape != (squares, 3):
            raise ValueError("colors must have one Lab triple per square")

    @property
    def squares(self) -> int:
        return int(self.probabilities.shape[0])

    def log_probabilities(self) -> np.ndarray:
        """Per square, each label's log-probability (floored: no label is impossible)."""
        return np.asarray(np.log(np.clip(self.probabilities, 1e-9, 1.0)))

    def best_labels(self) -> list[str]:
        return [self.labels[i] for i in np.argmax(self.probabilities, axis=1)]

    def confidence(self) -> np.ndarray:
        """Per square, the probability of its most likely label."""
        return np.asarray(np.max(self.probabilities, axis=1))

    def occupied(self, threshold: float = 0.5) -> np.ndarray:
        return np.asarray(self.probabilities[:, 0] < threshold)

    def reordered(self, order: np.ndarray) -> Reading:
        """The same reading with square i taken from square `order[i]`: the board named from
        another side (`BoardPose.squares_named_by`)."""
        unchanged = None if self.unchanged is None else self.unchanged[order]
        changed = None if self.changed is None else self.changed[order]
        return replace(self, probabilities=self.probabilities[order], colors=self.colors[order],
                       unchanged=unchanged, changed=changed,
                       seams=None, hand_rests=None)  # (by the old names)

    @classmethod
    def pooled(cls, readings: list[Reading]) -> Reading:
        """One reading of a board seen still in several frames: each square's labels'
        log-probabilities averaged (a geometric mean: the frames' noise differs, the board
        does not, so they count as one opinion, not as independent evidence), the colours
        averaged; the last frame's moment and squares seen (un)changed."""
        logp = np.mean([r.log_probabilities() for r in readings], axis=0)
        probabilities = np.exp(logp - logp.max(axis=1, keepdims=True))
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        colors = np.mean([r.colors for r in readings], axis=0)
        return replace(readings[-1], probabilities=probabilities, colors=colors)


# Lightness counts half in colour distances: the shaded side of a white die seen steeply is
# as dark as a coloured die's top, while its hue stays white's. Black against white still
# differs by far more than the spread.
LIGHTNESS_WEIGHT = 0.5


def _weighed(lab: np.ndarray) -> np.ndarray:
    return np.asarray(np.asarray(lab, dtype=np.float64) * np.array([LIGHTNESS_WEIGHT, 1.0, 1.0]))


@dataclass(frozen=True, eq=False)
class ColorModel:
    """Each player's piece colour, learnt from the start position (Lab medians, lightness
    weighed half, and a spread).

    Any two clearly different colours work: a square's owner probability falls off with its
    colour's distance to each player's mean."""

    means: np.ndarray  # (2, 3)
    spread: float  # how far a player's pieces stray from its colour: most of them lie within
    typical: float = 0.0  # ... and a typical piece (each player's median; 0: the spread)

    @classmethod
    def learn(cls, reading: Reading, owners: dict[int, int]) -> ColorModel:
        """Learn from squares whose owner is known (`{square: 0 or 1}`)."""
        groups = [[_weighed(reading.colors[sq]) for sq, o in owners.items() if o == owner]
                  for owner in (0, 1)]
        if not groups[0] or not groups[1]:
            raise ValueError("both players need pieces on the board to learn their colours")
        # Medians: at a steep view a tall die's crop can miss most of its top face and show
        # the board instead; one such square must not move a player's colour, nor make the
        # two players' colours look alike (the start would then be refused: `separation`).
        means = np.array([np.median(g, axis=0) for g in groups])
        distances = [np.linalg.norm(np.array(g) - m, axis=1)
                     for g, m in zip(groups, means, strict=True)]
        between = float(np.linalg.norm(means[0] - means[1]))
        # Neither falls below a tenth of the distance between the two colours, so a die
        # caught in a highlight is not declared nobody's.
        floor = max(between / 10.0, 1.0)
        spread = max(float(np.percentile(np.concatenate(distances), 90)), floor)
        # A typical piece's distance: each player's own median, as its colour is, the two
        # averaged. A median over both players' pieces is pushed towards the more scattered
        # player's distances by the other's outliers: two white dice whose crops showed the
        # board beside them put rinne-takeback's start at 2.9999, under the 3.0 asked.
        typical = float(np.mean([np.median(d) for d in distances]))
        return cls(means, spread, max(typical, floor))

    def swapped(self) -> ColorModel:
        """The same colours with the players' roles exchanged (the board seen from the other
        side)."""
        return ColorModel(self.means[::-1].copy(), self.spread, self.typical)

    @property
    def separation(self) -> float:
        """Distance between the two colours in units of a typical piece's distance from its
        colour (about 1.5 standard deviations of a round cloud; the spread, which owner
        probabilities use, would let one piece whose crop missed it decide): under ~3 they
        are too alike."""
        return float(np.linalg.norm(self.means[0] - self.means[1]) / (self.typical or self.spread))

    def first_owner_probability(self, colors: np.ndarray) -> np.ndarray:
        """P(the piece belongs to the first player) for each colour row."""
        seen = _weighed(colors)
        d0 = np.sum((seen - self.means[0]) ** 2, axis=1)
        d1 = np.sum((seen - self.means[1]) ** 2, axis=1)
        z = np.clip((d1 - d0) / (2.0 * self.spread**2), -50.0, 50.0)
        return np.asarray(1.0 / (1.0 + np.exp(-z)))
