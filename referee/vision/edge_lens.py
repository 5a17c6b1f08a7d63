"""A lens estimated from a frame's own edges, before any board is found (a plumb-line
estimate): the one-parameter division model (`lens_bend`: x_u = c + (x - c) / (1 + k r^2),
r in half diagonals about the frame's centre, k below 0 for a barrel lens) under which the
frame's straight edges line up best.

The frame's line segments (OpenCV's line segment detector: a board's lines come as one
segment a square's side, each straight over its length while the line bends over many) are
paired where two nearly line up (directions and the line between them within `ALIGN`); for
each k tried, the pairs' four ends go through the lens and each pair counts by how nearly
its four ends lie on one line (a Gaussian of their RMS distance off it, `SIGMA` in the frame's
scale, weighted by the segments' lengths). Pieces of one straight line line up wherever they
lie; pieces of one bent line line up only through the lens that straightens it. The best k
of `LAMBDAS`' barrel half is refined between its neighbours; where it scores under `GAIN`
times k = 0's, the edges read as straight through no lens and none is read."""

from __future__ import annotations

import cv2
import numpy as np

from referee.vision.gridfit import GreyImage
from referee.vision.lens_bend import LAMBDAS
from referee.vision.pose import FloatArray

KS = LAMBDAS[LAMBDAS <= 0]   # the ks tried first (barrel lenses, and none)
MIN_LENGTH = 0.02            # half diagonals: shorter segments left out (8 px at 640x480)
SEGMENTS = 300               # the longest segments kept
ALIGN = np.radians(15.0)     # a pair's directions, and the line between them, agree this well
SIGMA = 0.0025               # half diagonals (1 px at 640x480): a pair's ends this far off one line
RIM = 3.0                    # pixels: segments along the frame's edge left out
GAIN = 1.02                  # the best k must score this many times k = 0's


def edges_k(grey: GreyImage) -> float | None:
    """The division model's k that lines up the frame's edges best, or None where they line
    up no better through any lens than through none (`GAIN`)."""
    ends, weights = segment_pairs(grey)
    if len(weights) < 20:
        return None
    scores = alignment(ends, weights, KS)
    best = int(np.argmax(scores))
    step = float(KS[1] - KS[0])
    fine = np.linspace(KS[best] - step, min(0.0, KS[best] + step), 21)
    fine_scores = alignment(ends, weights, fine)
    k = float(fine[int(np.argmax(fine_scores))])
    zero = float(scores[-1])
    if k >= 0 or float(fine_scores.max()) < GAIN * max(zero, 1e-12):
        return None
    return k


def segment_pairs(grey: GreyImage) -> tuple[FloatArray, FloatArray]:
    """The pairs of line segments that nearly line up: their four ends (pairs, 4, 2; about the
    frame's centre, in half diagonals) and their weights (the product of the lengths)."""
    height, width = grey.shape[:2]
    scale = float(np.hypot(width, height) / 2)
    found = cv2.createLineSegmentDetector().detect(grey)[0]
    if found is None:
        return np.zeros((0, 4, 2)), np.zeros(0)
    px = np.asarray(found, np.float64).reshape(-1, 2, 2)
    # the frame's own edge (a dark or bright rim on many photos) is no line of the scene
    rim = np.minimum(np.minimum(px[..., 0], width - 1 - px[..., 0]),
                     np.minimum(px[..., 1], height - 1 - px[..., 1]))
    px = px[np.max(rim, axis=1) > RIM]
    seg = (px - [(width - 1) / 2, (height - 1) / 2]) / scale
    length = np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1)
    order = np.argsort(-length)[:SEGMENTS]
    order = order[length[order] >= MIN_LENGTH]
    seg, length = seg[order], length[order]
    direction = (seg[:, 1] - seg[:, 0]) / length[:, None]
    middle = seg.mean(axis=1)
    i, j = np.triu_indices(len(seg), 1)
    between = middle[j] - middle[i]
    apart = np.linalg.norm(between, axis=1)
    cos_align = np.cos(ALIGN)
    with np.errstate(divide="ignore", invalid="ignore"):
        towards = between / apart[:, None]
        keep = ((np.abs(np.sum(direction[i] * direction[j], axis=1)) > cos_align)
                & (np.abs(np.sum(direction[i] * towards, axis=1)) > cos_align)
                & (np.abs(np.sum(direction[j] * towards, axis=1)) > cos_align)
                & (apart > 0))
    i, j = i[keep], j[keep]
    return np.concatenate([seg[i], seg[j]], axis=1), length[i] * length[j]


def alignment(ends: FloatArray, weights: FloatArray, ks: FloatArray) -> FloatArray:
    """For each k: the pairs' weights, each times how nearly its four ends, through the lens
    k and in the frame's scale, lie on one line (a Gaussian of their RMS distance off it)."""
    out = np.empty(len(ks))
    r2 = np.sum(ends * ends, axis=-1)
    for n, k in enumerate(ks):
        grow = 1 / (1 + k * r2)
        u = ends * (grow / np.mean(grow))[..., None]   # in the frame's scale
        u = u - u.mean(axis=1, keepdims=True)
        a = np.mean(u[..., 0] ** 2, axis=1)
        c = np.mean(u[..., 1] ** 2, axis=1)
        b = np.mean(u[..., 0] * u[..., 1], axis=1)
        off = (a + c) / 2 - np.sqrt(((a - c) / 2) ** 2 + b * b)   # mean squared distance off the line
        out[n] = float(np.sum(weights * np.exp(-np.maximum(off, 0.0) / (2 * SIGMA**2))))
    return out
