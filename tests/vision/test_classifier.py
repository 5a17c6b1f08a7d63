from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.errors import ModelError, RefereeError
from referee.vision.classifier import Classifier, Prediction, sha256_of
from referee_lab.datasets import DICE_LABELS


@pytest.fixture
def model_copy(dice_model: Path, tmp_path: Path) -> Path:
    """A copy of the committed dice model (.onnx + card) to spoil."""
    for suffix in (".onnx", ".json"):
        shutil.copy(dice_model.with_suffix(suffix), tmp_path / f"dice{suffix}")
    return tmp_path / "dice.onnx"


def _edit_card(onnx: Path, change: Callable[[dict[str, Any]], None]) -> None:
    card_path = onnx.with_suffix(".json")
    card = json.loads(card_path.read_text())
    change(card)
    card_path.write_text(json.dumps(card))


def test_committed_model_matches_its_card(dice_model: Path) -> None:
    classifier = Classifier.load("dice")
    card = classifier.card
    assert card.labels == DICE_LABELS
    assert card.faces == (None, 1, 2, 3, 4, 5, 6)
    assert card.sha256 == sha256_of(dice_model)
    assert dice_model.stat().st_size < 2 * 1024 * 1024
    assert card.recipe["seed"] == card.seed and "steps" in card.recipe
    assert card.metrics["real_test"]["dice"] == 308


def test_predict_gives_probabilities(dice_model: Path) -> None:
    classifier = Classifier.load(dice_model)
    size = classifier.card.input_size
    crops = np.random.default_rng(0).integers(0, 256, (5, size, size, 3), dtype=np.uint8)
    probs = classifier.predict(crops)
    assert probs.shape == (5, len(DICE_LABELS)) and probs.dtype == np.float32
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert (probs >= 0).all()
    assert classifier.predict(crops[:0]).shape == (0, len(DICE_LABELS))
    # A batch reads each crop as it would read it alone.
    np.testing.assert_allclose(classifier.predict(crops[2:3])[0], probs[2], atol=1e-5)


def test_the_int8_products_are_exact_on_every_cpu(dice_model: Path) -> None:
    """On x86 with AVX2 alone onnxruntime's uint8-by-int8 products saturate in 16 bits unless
    asked for exact ones: the committed footage read otherwise there (an illegal tile read
    as unreadable). A no-op on Arm and VNNI, where they are exact anyway."""
    classifier = Classifier.load(dice_model)
    options = classifier._runtime.get_session_options()
    assert options.get_session_config_entry("session.x64quantprecision") == "1"


def test_turns_average_the_turned_crops(dice_model: Path) -> None:
    classifier = Classifier.load(dice_model)
    size = classifier.card.input_size
    crops = np.random.default_rng(1).integers(0, 256, (3, size, size, 3), dtype=np.uint8)
    turned = [classifier.predict(np.rot90(crops, k, axes=(1, 2)).copy()) for k in range(4)]
    np.testing.assert_allclose(classifier.predict(crops, turns=4), np.mean(turned, 0), atol=1e-5)
    with pytest.raises(ValueError):
        classifier.predict(crops, turns=3)


def test_classify_gives_frozen_predictions(dice_model: Path) -> None:
    classifier = Classifier.load(dice_model)
    size = classifier.card.input_size
    plain = np.full((2, size, size, 3), (60, 120, 170), np.uint8)  # a bare wooden square
    predictions = classifier.classify(plain)
    assert all(isinstance(p, Prediction) for p in predictions)
    assert predictions[0] == Prediction("empty", None, predictions[0].confidence)
    assert predictions[0].confidence > 0.5
    with pytest.raises(AttributeError):
        predictions[0].label = "1"  # type: ignore[misc]


def test_wrong_crop_shape_is_refused(dice_model: Path) -> None:
    classifier = Classifier.load(dice_model)
    with pytest.raises(ValueError, match="expected crops"):
        classifier.predict(np.zeros((2, 10, 10, 3), np.uint8))
    assert classifier.prepare(np.zeros((100, 80, 3), np.uint8)).shape[:2] == (
        classifier.card.input_size,
        classifier.card.input_size,
    )


def test_missing_files(model_copy: Path) -> None:
    model_copy.with_suffix(".json").unlink()
    with pytest.raises(ModelError, match="model card not found"):
        Classifier.load(model_copy)
    with pytest.raises(ModelError, match="not found"):
        Classifier.load(model_copy.parent / "nothing.onnx")


def test_corrupt_model_fails_its_checksum(model_copy: Path) -> None:
    data = bytearray(model_copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model_copy.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="sha256"):
        Classifier.load(model_copy)


def test_garbage_model_with_a_matching_checksum(model_copy: Path) -> None:
    model_copy.write_bytes(b"this is not an onnx model")
    _edit_card(model_copy, lambda c: c["onnx"].update(sha256=sha256_of(model_copy)))
    with pytest.raises(ModelError, match="not a usable ONNX model"):
        Classifier.load(model_copy)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["input"].update(size=[40, 40]), "does not match its card"),
        (lambda c: c.update(labels=c["labels"][:-1], faces=c["faces"][:-1]), "6 labels"),
        (lambda c: c["onnx"].update(input_name="pixels"), "does not match its card"),
        (lambda c: c.pop("labels"), "missing field"),
        (lambda c: c["onnx"].update(sha256="abc"), "sha256 hex digest"),
        (lambda c: c["input"]["normalisation"].update(std=[0, 1, 1]), "std"),
        (lambda c: c.update(format=99), "format-1"),
    ],
)
def test_card_that_does_not_match(
    model_copy: Path, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    _edit_card(model_copy, change)
    with pytest.raises(ModelError, match=message) as caught:
        Classifier.load(model_copy)
    assert isinstance(caught.value, RefereeError) and "\n" not in str(caught.value)


def test_unreadable_card(model_copy: Path) -> None:
    model_copy.with_suffix(".json").write_text("{not json")
    with pytest.raises(ModelError, match="unreadable model card"):
        Classifier.load(model_copy)
