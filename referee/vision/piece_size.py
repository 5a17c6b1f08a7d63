"""How large the players' pieces stand in their squares, as the classifier sees it.

A model learns pieces of some sizes in its crops (its card's `made_for`); a club's dice may
fill their squares or sit small in them. Shown pieces on known squares, the referee reads
them with the squares' crops scaled about their centres, over `CROP_SCALES`, and keeps the
scale at which the model finds what it was shown likeliest: the crops then follow the pieces
(`BoardProfile.crop_scale`). A scale above 1 cuts wider, so that pieces larger than the
model's look as large as it learnt them; below 1 tighter, for smaller ones."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# For a model made for dice about 0.6 of a square: from dice a third of their squares wide
# (0.5: the crop halved, the die as wide in it as learnt) to dice filling them (1.6), and
# beyond, so that the span a model reads well is seen whole.
CROP_SCALES: tuple[float, ...] = tuple(float(s) for s in np.round(np.arange(0.5, 2.01, 0.05), 2))


# nats a piece: scales reading the pieces this nearly as well as the best are as good
TOLERANCE = 0.02


def best_crop_scale(log_likelihood: Callable[[float], float],
                    scales: tuple[float, ...] = CROP_SCALES, tolerance: float = TOLERANCE) -> float:
    """The middle (geometrically) of the span of scales whose neighbourhood reads the known
    pieces within `tolerance` of the likeliest: `log_likelihood(s)` is the mean
    log-probability of the shown labels at scale `s`, averaged with its two neighbours' (one
    lucky scale between two poor ones is no measurement). A model reads the pieces it was
    shown about as well over a span of scales; in play they turn, tilt and show other faces,
    so the scale farthest from where reading falls off is kept."""
    values = np.array([log_likelihood(s) for s in scales], np.float64)
    smoothed = np.convolve(np.pad(values, 1, mode="edge"), np.ones(3) / 3, mode="valid")
    best = int(np.argmax(smoothed))
    low = high = best
    while low > 0 and smoothed[low - 1] >= smoothed[best] - tolerance:
        low -= 1
    while high < len(scales) - 1 and smoothed[high + 1] >= smoothed[best] - tolerance:
        high += 1
    middle = np.sqrt(scales[low] * scales[high])
    return min(scales[low:high + 1], key=lambda s: abs(np.log(s / middle)))


def mean_log_likelihood(probabilities: np.ndarray, targets: np.ndarray) -> float:
    """The mean log-probability a model gives the known labels `targets` (one a row)."""
    picked = probabilities[np.arange(len(targets)), targets]
    return float(np.mean(np.log(np.clip(picked, 1e-9, 1.0))))
