"""A piece head: a small linear layer on a classifier's features, fitted on the Pi in
milliseconds from a few examples of the players' own pieces (`referee calibrate pieces`), so
that a die or a tile no render looked like is read as well as the ones the model knew.

The head reads the model's `features` (vision/classifier.py), L2-normalised, and adds its
logits to the model's own log-probabilities: `softmax(model_weight * log p + W f + b)`. It is
fitted by logistic regression with the model's log-probabilities as a fixed offset and an L2
penalty, so it learns only what the model gets wrong or unsure, and with few examples stays
near the model. Only the labels it was shown take part: the share of the others is the
model's, so a face missing from the calibration is never made less likely by it.
`benchmarks/adaptation.md` measures it on the real dice photographs.

numpy only: the Pi has onnxruntime and numpy, nothing more.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError

FloatArray = NDArray[np.float32] | NDArray[np.float64]

HEAD_VERSION = 1
# L2 on W and b against the mean loss: this over the examples a label (distinct squares, not
# frames of one). On the real dice it held the model's accuracy where the model was right
# and gained most where it was weak, from 3 to 10 dice a face (benchmarks/adaptation.md).
PENALTY_SCALE = 0.3
FOLDS = 5  # cross-validation of a calibration (`held_out`)
STEPS = 300  # gradient steps of the fit (converged well before on 100-300 examples)
MIN_PROB = 1e-9


@dataclass(frozen=True)
class Head:
    """A fitted piece head for one model (`model_sha256`) and its labels. `learnt` marks the
    labels the head was shown; the rows of the others are zero and never used."""

    model: str
    model_sha256: str
    labels: tuple[str, ...]
    learnt: tuple[bool, ...]
    weights: tuple[tuple[float, ...], ...]  # (labels, width), on L2-normalised features
    bias: tuple[float, ...]
    model_weight: float
    examples: int

    def __post_init__(self) -> None:
        n = len(self.labels)
        if len(self.learnt) != n or len(self.weights) != n or len(self.bias) != n:
            raise ValueError("a head needs one row of weights, one bias and one flag a label")
        if len({len(row) for row in self.weights}) != 1 or not self.weights[0]:
            raise ValueError("a head's weight rows must be non-empty and of one width")
        if sum(self.learnt) < 2:
            raise ValueError("a head must have learnt two labels or more")

    @property
    def width(self) -> int:
        return len(self.weights[0])

    def check(self, sha256: str, labels: tuple[str, ...]) -> None:
        """ModelError unless the head was fitted on this model (its sha256) and labels."""
        if sha256 != self.model_sha256:
            raise ModelError(f"the board profile's piece head was fitted on model {self.model} "
                             f"{self.model_sha256[:12]}, not on this one ({sha256[:12]}): run "
                             "`referee calibrate pieces` again")
        if labels != self.labels:
            raise ModelError(f"the piece head's labels {list(self.labels)} are not the model's "
                             f"{list(labels)}")

    @cached_property
    def _arrays(self) -> tuple[NDArray[np.bool_], NDArray[np.float64], NDArray[np.float64]]:
        learnt = np.asarray(self.learnt)
        return learnt, np.asarray(self.weights)[learnt], np.asarray(self.bias)[learnt]

    def apply(self, features: FloatArray, probs: FloatArray) -> NDArray[np.float32]:
        """The model's probabilities (N, labels) as the head reads them with the features."""
        if features.shape[1:] != (self.width,):
            raise ModelError(f"features of width {features.shape[1:]}, the head's is {self.width}")
        learnt, weights, bias = self._arrays
        logits = head_logits(_unit(features), np.log(np.clip(probs, MIN_PROB, 1.0))[:, learnt],
                             weights, bias, self.model_weight)
        out = np.array(probs, np.float64)
        share = out[:, learnt].sum(axis=1, keepdims=True)
        out[:, learnt] = share * _softmax(logits)
        return out.astype(np.float32)

    def to_mapping(self) -> dict[str, Any]:
        """The head as a board profile holds it: the learnt labels' rows only, five digits."""
        rows = [k for k, seen in enumerate(self.learnt) if seen]
        return {
            "version": HEAD_VERSION,
            "model": self.model,
            "model_sha256": self.model_sha256,
            "labels": list(self.labels),
            "learnt": [self.labels[k] for k in rows],
            "model_weight": self.model_weight,
            "examples": self.examples,
            "bias": [_digits(self.bias[k]) for k in rows],
            "weights": [[_digits(v) for v in self.weights[k]] for k in rows],
        }

    @classmethod
    def from_mapping(cls, data: Any, *, where: str) -> Head:
        """A head read back (ValueError naming `where` and the field for any fault)."""
        try:
            if not isinstance(data, Mapping) or data.get("version") != HEAD_VERSION:
                raise ValueError(f"not a version-{HEAD_VERSION} piece head")
            labels = tuple(str(v) for v in data["labels"])
            learnt = [str(v) for v in data["learnt"]]
            rows = [tuple(_finite(v) for v in row) for row in data["weights"]]
            bias = [_finite(v) for v in data["bias"]]
            if not set(learnt) <= set(labels) or len(set(learnt)) != len(learnt):
                raise ValueError(f"learnt labels {learnt} are not distinct labels of {list(labels)}")
            if len(rows) != len(learnt) or len(bias) != len(learnt) or not rows:
                raise ValueError("one row of weights and one bias a learnt label")
            weights = {label: row for label, row in zip(learnt, rows, strict=True)}
            biases = {label: b for label, b in zip(learnt, bias, strict=True)}
            zero = (0.0,) * len(rows[0])
            return cls(str(data["model"]), str(data["model_sha256"]).lower(), labels,
                       tuple(label in weights for label in labels),
                       tuple(weights.get(label, zero) for label in labels),
                       tuple(biases.get(label, 0.0) for label in labels),
                       _finite(data["model_weight"]), int(data["examples"]))
        except KeyError as error:
            raise ValueError(f"{where}: piece head: missing field {error}") from None
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: piece head: {error}") from None


def _digits(value: float) -> float:
    return float(f"{value:.5g}")


def _finite(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    return float(value)


def _unit(features: FloatArray) -> NDArray[np.float64]:
    f = np.asarray(features, np.float64)
    return np.asarray(f / np.maximum(np.linalg.norm(f, axis=1, keepdims=True), 1e-12))


def _softmax(logits: NDArray[np.float64]) -> NDArray[np.float64]:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def head_logits(unit: NDArray[np.float64], log_probs: NDArray[np.float64], weights: NDArray[np.float64],
                bias: NDArray[np.float64], model_weight: float) -> NDArray[np.float64]:
    return np.asarray(model_weight * log_probs + unit @ weights.T + bias)


def held_out(head_for: Callable[[NDArray[np.bool_]], Head | None], features: FloatArray,
             probs: FloatArray, groups: NDArray[Any], folds: int = FOLDS) -> NDArray[np.float32]:
    """Each example's probabilities from a head fitted without it (`head_for(kept)`, None:
    the model alone): `folds` folds of whole groups (every frame's crop of one square held
    out together, so a square is never read by a head that saw it)."""
    _, group_index = np.unique(np.asarray(groups), return_inverse=True)
    fold = group_index % folds
    out = np.array(probs, np.float32)
    for k in range(folds):
        held = fold == k
        head = head_for(~held) if held.any() else None
        if head is not None:
            out[held] = head.apply(features[held], probs[held])
    return out


def fit_head(model: str, model_sha256: str, labels: tuple[str, ...], features: FloatArray,
             probs: FloatArray, targets: NDArray[np.intp], *, groups: NDArray[Any] | None = None,
             penalty: float | None = None, model_weight: float = 1.0, steps: int = STEPS) -> Head:
    """The head fitted on examples (`features`, the model's `probs`, true label indices
    `targets`): logistic regression over the labels shown, the model's log-probabilities a
    fixed offset, by full-batch gradient descent with Nesterov momentum (a convex loss; tens
    of milliseconds on one core). `groups` names each example's square (frames of one square
    count once towards the penalty); `penalty`, if given, replaces `PENALTY_SCALE`'s."""
    shown = np.unique(targets)
    if len(shown) < 2:
        raise ValueError("a head needs examples of two labels or more")
    if penalty is None:
        distinct = len(targets) if groups is None else len(np.unique(np.asarray(groups)))
        penalty = PENALTY_SCALE * len(shown) / distinct
    index = {int(k): i for i, k in enumerate(shown)}
    y = np.array([index[int(t)] for t in targets])
    unit = _unit(features)
    # Descent on centred features, scaled to unit length on average, converges in a few
    # hundred steps; the centring and scale are folded back into W and b after.
    centre = unit.mean(axis=0)
    scale = max(float(np.sqrt(((unit - centre) ** 2).sum(axis=1).mean())), 1e-6)
    offset = model_weight * np.log(np.clip(np.asarray(probs, np.float64)[:, shown], MIN_PROB, 1.0))
    w, b = _descend((unit - centre) / scale, offset, y, penalty, steps)
    weights = np.zeros((len(labels), unit.shape[1]))
    bias = np.zeros(len(labels))
    weights[shown] = w / scale
    bias[shown] = b - weights[shown] @ centre
    return Head(model, model_sha256, labels, tuple(bool(k in index) for k in range(len(labels))),
                tuple(tuple(float(v) for v in row) for row in weights),
                tuple(float(v) for v in bias), model_weight, len(targets))


def _descend(unit: NDArray[np.float64], offset: NDArray[np.float64], y: NDArray[np.intp],
             penalty: float, steps: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    n, classes = len(y), offset.shape[1]
    onehot = np.eye(classes)[y]
    w = np.zeros((classes, unit.shape[1]))
    b = np.zeros(classes)
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    rate = 1.0 / (1.0 + penalty)  # the loss's curvature is under 1 + penalty on unit-scaled features
    for _ in range(steps):
        # Nesterov: the gradient at the look-ahead point
        lw, lb = w + 0.9 * vw, b + 0.9 * vb
        error = (_softmax(offset + unit @ lw.T + lb) - onehot) / n
        gw = error.T @ unit + penalty * lw
        gb = error.sum(axis=0) + penalty * lb  # a free bias would learn the draw's label mix
        vw = 0.9 * vw - rate * gw
        vb = 0.9 * vb - rate * gb
        w, b = w + vw, b + vb
    return w, b
