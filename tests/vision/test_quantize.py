"""Int8 quantisation of a float classifier (referee-lab quantize): the card records it, the file
matches the card, the answers stay the float model's, and a model is quantised only once."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from referee.errors import ModelError
from referee.resources import models_dir
from referee.vision.classifier import Classifier, ModelCard, sha256_of

onnx = pytest.importorskip("onnx")
helper, numpy_helper = onnx.helper, onnx.numpy_helper


def _float_zensu(folder: Path) -> Path:
    """A small float net with the zensu card's input and labels: conv, ReLU, average, dense,
    softmax; weights drawn so that the classes are told apart by colour."""
    rng = np.random.default_rng(3)
    conv = rng.normal(0, 0.4, (8, 3, 3, 3)).astype(np.float32)
    dense = rng.normal(0, 1.0, (3, 8)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["crops", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("GlobalAveragePool", ["r"], ["g"]),
         helper.make_node("Flatten", ["g"], ["f"]),
         helper.make_node("Gemm", ["f", "d", "b"], ["logits"], transB=1),
         helper.make_node("Softmax", ["logits"], ["probabilities"], axis=1)],
        "float-zensu",
        [helper.make_tensor_value_info("crops", onnx.TensorProto.FLOAT, ["n", 3, 48, 48])],
        [helper.make_tensor_value_info("probabilities", onnx.TensorProto.FLOAT, ["n", 3])],
        [numpy_helper.from_array(conv, "w"), numpy_helper.from_array(dense, "d"),
         numpy_helper.from_array(np.zeros(3, np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = folder / "zensu.onnx"
    onnx.save(model, path)
    committed = json.loads((models_dir() / "zensu.json").read_text())
    card = replace(ModelCard.from_json(committed), sha256=sha256_of(path), onnx_file="zensu.onnx",
                   input_name="crops", quantization={})
    path.with_suffix(".json").write_text(json.dumps(card.to_json()))
    return path


def test_quantising_keeps_the_answers_and_records_itself(tmp_path: Path) -> None:
    from referee_lab.quantize import calibration_crops, quantize_model

    path = _float_zensu(tmp_path)
    floating = Classifier.load(path)
    crops = calibration_crops(floating, frames=2)
    before = floating.predict(crops)
    card = quantize_model(str(path), frames=2)
    assert "int8" in card.quantization["scheme"] and card.sha256 == sha256_of(path)
    quantised = Classifier.load(path)  # opens, and its file matches its card
    after = quantised.predict(crops)
    assert np.abs(after - before).max() < 0.05
    # The softmax stays float: rows sum to 1, small probabilities are not rounded to 0.
    np.testing.assert_allclose(after.sum(axis=1), 1.0, atol=1e-5)
    assert (after > 0).all()
    assert np.mean(after.argmax(axis=1) == before.argmax(axis=1)) > 0.95
    with pytest.raises(ModelError, match="already quantised"):
        quantize_model(str(path), frames=2)


def test_dice_calibration_crops_are_rendered_dice_squares(dice_model: Path) -> None:
    """The dice model has no render set of its own: its calibration squares are the
    rendered dice boards it trains on, cut at its input size."""
    from referee_lab.quantize import calibration_crops

    classifier = Classifier.load(dice_model)
    crops = calibration_crops(classifier, frames=2)
    size = classifier.card.input_size
    assert crops.shape[1:] == (size, size, 3) and len(crops) >= 2 * 9  # two boards, 9+ squares
    read = classifier.predict(crops).argmax(axis=1)
    assert (read == 0).any() and (read > 0).any()  # empty squares and dice both
