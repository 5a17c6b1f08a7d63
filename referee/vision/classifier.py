"""Square classifiers: a small CNN in ONNX run by onnxruntime, loaded with its model card.

A model is two files side by side: `<name>.onnx` and `<name>.json`, the card (labels, input
size, channel order, normalisation, the crop margin, the sha256 of the .onnx, the training
recipe and seed, measured accuracy). Loading checks the one against the other and refuses,
with a `ModelError`, a model that is missing, corrupt or does not match its card: a referee
that guesses with the wrong model is worse than one that stops.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError
from referee.resources import models_dir
from referee.vision.adapt import Head
from referee.vision.crops import CropSpec

log = logging.getLogger(__name__)

CARD_FORMAT = 1
MODELS_ENV = "REFEREE_MODELS"
# The optional second output: the activations feeding the final linear layer, (N, width)
# float32 (`referee-lab expose-features`), which a piece head (vision/adapt.py) learns on.
FEATURES_OUTPUT = "features"


def default_models_dir() -> Path:
    """`$REFEREE_MODELS`, else the models that ship with the package."""
    env = os.environ.get(MODELS_ENV)
    return Path(env) if env else models_dir()


@dataclass(frozen=True)
class Prediction:
    """One crop's reading: the most likely label, the die face it shows (None when the label
    is not a die face) and the model's probability for that label."""

    label: str
    face: int | None
    confidence: float


@dataclass(frozen=True)
class ModelCard:
    """What a model expects and what it was measured to do (the `<name>.json` beside it)."""

    name: str
    labels: tuple[str, ...]
    faces: tuple[int | None, ...]
    input_size: int
    crop_margin: float
    channel_order: str
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    sha256: str
    onnx_file: str
    input_name: str
    output: str
    seed: int
    recipe: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    # Height above the board, in squares, at which the crops were cut (the pieces' top face,
    # `warp.top_face_quads`); None: the reader's default (a die's).
    piece_height: float | None = None
    # How the float model was quantised (vision/quantize.py); empty: a float model.
    quantization: dict[str, Any] = field(default_factory=dict)

    @property
    def crop(self) -> CropSpec:
        return CropSpec(self.input_size, self.crop_margin)

    @property
    def turns_freely(self) -> bool:
        """Whether the model learnt that a quarter turn leaves a crop's label as it is (its
        recipe turned the training crops by 90 degrees or more, as a die's)."""
        augment = self.recipe.get("augment")
        return isinstance(augment, dict) and float(augment.get("max_angle", 0.0)) >= 90.0

    @property
    def pieces_stand_apart(self) -> bool:
        """Whether the model's pieces stand smaller than their squares (its card's `made_for`
        gives their width as a share of the square, as the dice model's does), so that a
        piece can be found against the board round it (`vision.locate`)."""
        made_for = self.metrics.get("made_for")
        return isinstance(made_for, dict) and "die_width_of_square" in made_for

    def to_json(self) -> dict[str, Any]:
        return {
            "format": CARD_FORMAT,
            "name": self.name,
            "labels": list(self.labels),
            "faces": list(self.faces),
            "input": {
                "size": [self.input_size, self.input_size],
                "channel_order": self.channel_order,
                "layout": "NCHW",
                "dtype": "float32",
                "crop_margin": self.crop_margin,
                **({} if self.piece_height is None else {"piece_height": self.piece_height}),
                "normalisation": {
                    "scale": "1/255",
                    "mean": list(self.mean),
                    "std": list(self.std),
                },
            },
            "onnx": {
                "file": self.onnx_file,
                "sha256": self.sha256,
                "input_name": self.input_name,
                "output": self.output,
            },
            "seed": self.seed,
            "recipe": self.recipe,
            "metrics": self.metrics,
            **({"quantization": self.quantization} if self.quantization else {}),
        }

    @classmethod
    def from_json(cls, data: Any, *, where: str = "card") -> ModelCard:
        try:
            if not isinstance(data, dict) or data.get("format") != CARD_FORMAT:
                raise ValueError(f"not a format-{CARD_FORMAT} model card")
            inp, onnx, norm = data["input"], data["onnx"], data["input"]["normalisation"]
            size = [int(v) for v in inp["size"]]
            if len(size) != 2 or size[0] != size[1] or size[0] < 8:
                raise ValueError(f"input size {size} is not a square of 8 pixels or more")
            labels = tuple(str(v) for v in data["labels"])
            faces = tuple(None if v is None else int(v) for v in data["faces"])
            if len(labels) < 2 or len(faces) != len(labels) or len(set(labels)) != len(labels):
                raise ValueError("labels must be 2 or more distinct names, one face each")
            mean, std = _triple(norm["mean"]), _triple(norm["std"])
            if min(std) <= 0:
                raise ValueError("normalisation std must be positive")
            if inp["channel_order"] != "BGR" or onnx["output"] != "probabilities":
                raise ValueError("only BGR input and probability output are supported")
            sha = str(onnx["sha256"]).lower()
            if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
                raise ValueError("onnx.sha256 is not a sha256 hex digest")
            return cls(
                name=str(data["name"]),
                labels=labels,
                faces=faces,
                input_size=size[0],
                crop_margin=float(inp["crop_margin"]),
                channel_order=str(inp["channel_order"]),
                mean=mean,
                std=std,
                sha256=sha,
                onnx_file=str(onnx["file"]),
                input_name=str(onnx["input_name"]),
                output=str(onnx["output"]),
                seed=int(data["seed"]),
                recipe=dict(data.get("recipe", {})),
                metrics=dict(data.get("metrics", {})),
                piece_height=_height(inp.get("piece_height")),
                quantization=dict(data.get("quantization", {})),
            )
        except (KeyError, TypeError, ValueError) as error:
            detail = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            raise ModelError(f"{where}: invalid model card: {detail}") from None


def _height(value: Any) -> float | None:
    if value is None:
        return None
    height = float(value)
    if not 0.0 <= height < 2.0:
        raise ValueError(f"piece_height {height} is not within 0..2 squares")
    return height


def _triple(values: Any) -> tuple[float, float, float]:
    a, b, c = (float(v) for v in values)
    return (a, b, c)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def resolve_model(name_or_path: str | Path) -> tuple[Path, Path]:
    """The (.onnx, .json) pair for a model name (looked up in the models folder) or a path
    to either file."""
    text = str(name_or_path)
    if os.sep in text or "/" in text or text.endswith((".onnx", ".json")):
        base = Path(text)
        base = base.with_suffix("") if base.suffix in (".onnx", ".json") else base
    else:
        base = default_models_dir() / text
    return base.with_suffix(".onnx"), base.with_suffix(".json")


def read_model_card(name_or_path: str | Path) -> tuple[Path, Path, Any]:
    """A model's .onnx path, its card's path and the card's JSON, for a model name or path;
    ModelError when either file is missing or the card is unreadable."""
    onnx_path, card_path = resolve_model(name_or_path)
    for path, what in ((card_path, "model card"), (onnx_path, "model file")):
        if not path.is_file():
            raise ModelError(f"{what} not found: {path}")
    try:
        return onnx_path, card_path, json.loads(card_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelError(f"{card_path}: unreadable model card ({error})") from None


def check_sha256(onnx_path: Path, expected: str) -> None:
    actual = sha256_of(onnx_path)
    if actual != expected:
        raise ModelError(f"{onnx_path}: sha256 {actual[:12]}… does not match its card's "
                         f"{expected[:12]}… (corrupt, or the card belongs to another model)")


class Classifier:
    """A loaded, verified model. `predict` gives probabilities, `classify` predictions,
    `features_and_probabilities` both in one run (models with a `features` output). With a
    piece head (`with_head`), every reading is the model's blended with the head's."""

    def __init__(self, card: ModelCard, runtime: Any, path: Path, head: Head | None = None) -> None:
        self.card = card
        self.path = path
        self._runtime = runtime
        self.head = head
        outputs = [output.name for output in runtime.get_outputs()]
        self.has_features = FEATURES_OUTPUT in outputs

    @classmethod
    def load(cls, name_or_path: str | Path = "dice", *, threads: int = 1) -> Classifier:
        """Load `referee/data/models/<name>.onnx` with its card, or the model at a path. Raises ModelError
        for a missing, unreadable or corrupt file, a card that is invalid or whose sha256,
        input or output shapes do not match the ONNX. `threads` is onnxruntime's intra-op
        thread count (1 by default: the budget is measured on one core)."""
        onnx_path, card_path, data = read_model_card(name_or_path)
        card = ModelCard.from_json(data, where=str(card_path))
        check_sha256(onnx_path, card.sha256)
        runtime = _open_session(onnx_path, threads)
        _check_signature(runtime, card, onnx_path)
        log.debug("loaded model %s (%s)", card.name, onnx_path)
        return cls(card, runtime, onnx_path)

    @property
    def labels(self) -> tuple[str, ...]:
        return self.card.labels

    def prepare(self, crop_bgr: NDArray[np.uint8]) -> NDArray[np.uint8]:
        """A BGR image resized to the model's input, for images that were not cut by
        `crop_square` with this model's spec (such as a photo of one square)."""
        if crop_bgr.ndim != 3 or crop_bgr.shape[2] != 3:
            raise ValueError(f"expected an (H, W, 3) BGR image, got shape {crop_bgr.shape}")
        size = self.card.input_size
        if crop_bgr.shape[:2] == (size, size):
            return crop_bgr
        shrink = max(crop_bgr.shape[:2]) > size
        interpolation = cv2.INTER_AREA if shrink else cv2.INTER_LINEAR
        return np.asarray(cv2.resize(crop_bgr, (size, size), interpolation=interpolation))

    def tensor(self, crops: NDArray[np.uint8] | Sequence[NDArray[np.uint8]]) -> NDArray[np.float32]:
        """The crops, (N, size, size, 3) uint8 BGR, as the model's normalised NCHW input."""
        batch = np.asarray(crops)
        size = self.card.input_size
        if batch.ndim != 4 or batch.shape[1:] != (size, size, 3):
            raise ValueError(f"expected crops of shape (N, {size}, {size}, 3), got {batch.shape}")
        std = np.asarray(self.card.std, np.float64)
        scale = (1.0 / (255.0 * std)).astype(np.float32)[None, :, None, None]
        offset = (-np.asarray(self.card.mean, np.float64) / std).astype(np.float32)[None, :, None, None]
        # Turned to NCHW while still bytes, then scaled in place: a tenth of the time of
        # float arithmetic on the NHWC batch and a float transpose (a board's worth of crops
        # took ~4 ms that way, as much as a third of classifying them).
        x = np.ascontiguousarray(batch.transpose(0, 3, 1, 2)).astype(np.float32)
        x *= scale
        x += offset
        return x

    def predict(
        self, crops: NDArray[np.uint8] | Sequence[NDArray[np.uint8]], *, turns: int = 1
    ) -> NDArray[np.float32]:
        """Class probabilities, (N, len(labels)) float32 rows summing to 1. `turns` = 4
        averages over the crop turned by 0, 90, 180 and 270 degrees (test-time augmentation
        at four times the cost; a die's face does not change when it turns)."""
        if turns not in (1, 2, 4):
            raise ValueError("turns must be 1, 2 or 4")
        x = self.tensor(crops)
        if len(x) == 0:
            return np.zeros((0, len(self.labels)), np.float32)
        if turns > 1:
            step = 4 // turns
            x = np.concatenate([np.rot90(x, k * step, axes=(2, 3)) for k in range(turns)])
            x = np.ascontiguousarray(x)
        if self.head is None:
            (probs,) = self._runtime.run([self.card.output], {self.card.input_name: x})
            probs = np.asarray(probs, np.float32)
        else:
            probs = self.head.apply(*self._run_both(x))
        if turns > 1:
            probs = probs.reshape(turns, -1, probs.shape[1]).mean(axis=0, dtype=np.float32)
        return np.asarray(probs, np.float32)

    def features_and_probabilities(
        self, crops: NDArray[np.uint8] | Sequence[NDArray[np.uint8]]
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """The crops' features (N, width) and the model's own probabilities (N, labels), in
        one run; ModelError for a model without a `features` output."""
        x = self.tensor(crops)
        if len(x) == 0:
            return np.zeros((0, 0), np.float32), np.zeros((0, len(self.labels)), np.float32)
        return self._run_both(x)

    def need_features(self) -> None:
        """ModelError unless the model has a `features` output (a head needs it)."""
        if not self.has_features:
            raise ModelError(f"{self.path}: the model has no '{FEATURES_OUTPUT}' output; add it "
                             f"with `referee-lab expose-features --model {self.path}`")

    def _run_both(self, x: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        self.need_features()
        probs, features = self._runtime.run([self.card.output, FEATURES_OUTPUT],
                                            {self.card.input_name: x})
        return np.asarray(features, np.float32), np.asarray(probs, np.float32)

    def with_head(self, head: Head | None) -> Classifier:
        """The same model (the same session) reading through `head` (None: the model alone).
        The head must have been fitted on this model's features (`Head.check`)."""
        if head is not None:
            self.need_features()
            head.check(self.card.sha256, self.labels)
        return Classifier(self.card, self._runtime, self.path, head)

    def classify(
        self, crops: NDArray[np.uint8] | Sequence[NDArray[np.uint8]], *, turns: int = 1
    ) -> list[Prediction]:
        return self.predictions(self.predict(crops, turns=turns))

    def predictions(self, probs: NDArray[np.float32]) -> list[Prediction]:
        best = probs.argmax(axis=1)
        return [
            Prediction(self.labels[k], self.card.faces[k], float(row[k]))
            for k, row in zip(best.tolist(), probs, strict=True)
        ]


def _open_session(onnx_path: Path, threads: int) -> Any:
    import onnxruntime as ort  # lazily: `import referee` must work without it

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    # The int8 models' products exactly, on every CPU: x86 without VNNI (AVX2) multiplies
    # uint8 activations by int8 weights in pairs summed into 16 bits, which saturate, and
    # reads a square otherwise than a Pi's Arm cores or a VNNI x86 do. This makes it
    # multiply as uint8 by uint8 there, exact, and changes nothing elsewhere.
    options.add_session_config_entry("session.x64quantprecision", "1")
    try:
        return ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own untyped errors for bad files
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelError(f"{onnx_path}: not a usable ONNX model ({first[:160]})") from None


def _check_signature(runtime: Any, card: ModelCard, onnx_path: Path) -> None:
    inputs, outputs = runtime.get_inputs(), runtime.get_outputs()
    named = {output.name: output for output in outputs}
    if len(inputs) != 1 or len(named) != len(outputs) or set(named) not in (
            {card.output}, {card.output, FEATURES_OUTPUT}):
        raise ModelError(f"{onnx_path}: expected one input and the outputs {card.output} "
                         f"[and {FEATURES_OUTPUT}], found {', '.join(named)}")
    size, classes = card.input_size, len(card.labels)
    expected_in = [3, size, size]
    got_in = list(inputs[0].shape)
    if inputs[0].name != card.input_name or len(got_in) != 4 or got_in[1:] != expected_in:
        raise ModelError(
            f"{onnx_path}: input {inputs[0].name} {got_in} does not match its card "
            f"({card.input_name} [N, {', '.join(map(str, expected_in))}])"
        )
    got_out = list(named[card.output].shape)
    if len(got_out) != 2 or got_out[1] != classes:
        raise ModelError(
            f"{onnx_path}: output shape {got_out} does not match the card's {classes} labels"
        )
    features = named.get(FEATURES_OUTPUT)
    if features is not None and len(features.shape) != 2:
        raise ModelError(f"{onnx_path}: output {FEATURES_OUTPUT} {list(features.shape)} is not "
                         "one row a crop")
