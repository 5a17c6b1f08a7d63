"""Int8 models: a trained float model quantised by onnxruntime's static quantisation.

Weights go to int8 per output channel and activations to uint8 with ranges calibrated on
rendered squares cut exactly as the referee cuts them (training seeds, never the held-out
ones the model is measured on). On one core the int8 net classifies a board about twice as
fast (a 6x9 Zensū board: 5.4 ms instead of 10.2), which is what a 6x9 board needs to be read
within the 15 ms budget. The card records the quantisation; its accuracy must be measured again
(`referee-lab eval`), since the card's figures were the float model's."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError
from referee.vision.classifier import Classifier, ModelCard, resolve_model, sha256_of
from referee_lab.training import write_card

CALIBRATION_FRAMES = 30  # rendered frames (training seeds 0..) whose squares calibrate ranges


def calibration_crops(classifier: Classifier, frames: int = CALIBRATION_FRAMES) -> NDArray[np.uint8]:
    """Squares (or tiles' seams) of `frames` rendered training frames, cut for the model."""
    # the renderer: only when quantising
    from referee_lab.renders import (
        dice_squares,
        frame_crops,
        model_pieces,
        render_squares,
        sample_crops,
    )

    name = classifier.card.name
    if name == "dice":  # rendered as the dice model trains and is measured (no RENDER_SETS entry)
        return np.concatenate([sample_crops(dice_squares(seed).samples, classifier.card.crop)
                               for seed in range(frames)])
    crops = []
    for seed in range(frames):
        frame = render_squares(model_pieces(name), seed)
        if frame.samples[name]:
            crops.append(frame_crops(frame, {name: classifier.card.crop})[name])
    return np.concatenate(crops)


def quantize_model(name: str, *, frames: int = CALIBRATION_FRAMES) -> ModelCard:
    """Replace model `name` (a name in models/ or a path) by its int8 version, calibrated on
    rendered squares, and record that in its card. A model already quantised is refused:
    quantise the float model a training run writes."""
    onnx_path, card_path = resolve_model(name)
    classifier = Classifier.load(name)
    if classifier.card.quantization:
        raise ModelError(f"{onnx_path}: already quantised ({classifier.card.quantization['scheme']}); "
                         "retrain to get a float model")
    tensors = classifier.tensor(calibration_crops(classifier, frames))
    with tempfile.TemporaryDirectory() as tmp:
        quantized = Path(tmp) / "int8.onnx"
        _quantize_file(onnx_path, quantized, classifier.card.input_name, tensors, Path(tmp))
        onnx_path.write_bytes(quantized.read_bytes())
    card = replace(classifier.card, sha256=sha256_of(onnx_path),
                   quantization={"scheme": "onnxruntime static, QOperator, int8 weights per channel, "
                                           "uint8 activations",
                                 "calibration": f"{len(tensors)} squares of rendered frames, "
                                                f"training seeds 0-{frames - 1}"})
    write_card(card, card_path)
    Classifier.load(name)  # the new file opens and matches its card
    return card


def _quantize_file(source: Path, target: Path, input_name: str, tensors: NDArray[np.float32],
                   work: Path) -> None:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Batches(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self._left = iter([{input_name: tensors[i:i + 64]} for i in range(0, len(tensors), 64)])

        def get_next(self) -> dict[str, Any] | None:
            return next(self._left, None)

    import onnx

    prepared = work / "prepared.onnx"
    quant_pre_process(str(source), str(prepared))
    # The softmax stays float: quantised, its probabilities come in steps of 1/256 and small
    # ones become 0, which the referee's log-likelihoods (in nats) would read as certainty.
    softmax = [n.name for n in onnx.load(str(prepared)).graph.node if n.op_type == "Softmax"]
    quantize_static(str(prepared), str(target), Batches(), quant_format=QuantFormat.QOperator,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    nodes_to_exclude=softmax)
