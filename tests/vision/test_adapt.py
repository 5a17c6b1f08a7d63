"""The piece head (vision/adapt.py) and the classifiers' `features` output: a head fitted on
real train-split dice holds the model's accuracy on the real test split and gains where the
dice look unlike what it learnt; labels the head was not shown keep the model's share; a
head travels in a board profile and is refused by another model; an old model without
`features` still reads, and says so only when a head is asked of it."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from referee.app.calibrated import Calibration
from referee.app.pipeline import board_referee
from referee.calibration.files import BoardProfile, PlayerPieces, load_board, save_board
from referee.errors import CalibrationError, ModelError
from referee.rules import game_with_ruleset
from referee.vision.adapt import Head, fit_head
from referee.vision.classifier import Classifier, resolve_model, sha256_of

needs_onnx = pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="needs the lab extra")
PIECES = PlayerPieces("white", "#f0f0f0", "#1a1a1a")


def _with_features(name: str, folder: Path) -> Classifier:
    """The model, given a `features` output in a copy where it lacks one (the dice model is
    retrained apart from this test; any model with the output must do)."""
    classifier = Classifier.load(name)
    if classifier.has_features:
        return classifier
    from referee_lab.features import expose_features

    for path in resolve_model(name):
        shutil.copy(path, folder / path.name)
    expose_features(folder / f"{name}.onnx")
    return Classifier.load(folder / f"{name}.onnx")


def _without_features(name: str, folder: Path) -> Path:
    """A copy of the model as it was before `expose-features`: probabilities only."""
    import onnx

    onnx_path, card_path = resolve_model(name)
    model = onnx.load(str(onnx_path))
    kept = [o for o in model.graph.output if o.name != "features"]
    del model.graph.output[:]
    model.graph.output.extend(kept)
    nodes = [n for n in model.graph.node if "features" not in n.output]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    out = folder / onnx_path.name
    onnx.save(model, str(out))
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card["onnx"]["sha256"] = sha256_of(out)
    (folder / card_path.name).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return out


def _face_accuracy(probs: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    read, dice = probs.argmax(axis=1), labels > 0
    return float((read[dice] == labels[dice]).mean()), float((read[~dice] == labels[~dice]).mean())


def _real(classifier: Classifier, split: str, photos: int | None, invert: bool
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from referee_lab.datasets import RealDice, fixed_crops

    data = RealDice.load(split)
    files = data.files[:photos] if photos else data.files
    samples = data.die_samples(files) + data.empty_samples(np.random.default_rng(5), 4, files)
    crops = fixed_crops(samples, classifier.card.crop)
    features, probs = classifier.features_and_probabilities(255 - crops if invert else crops)
    return features, probs, np.array([s.label for s in samples])


@needs_onnx
@pytest.mark.parametrize("invert", [False, True], ids=["as-trained", "inverted-colours"])
def test_a_head_from_real_train_dice_holds_or_improves_the_real_test_split(tmp_path, invert):
    """k = 10 dice a face and 10 empties from the train split, three draws. As the model was
    trained the head must not lose more than one die of 308 on average; on dice it never saw
    (the photos' colours inverted: light pips on dark dice) it must gain."""
    classifier = _with_features("dice", tmp_path)
    train_f, train_p, train_y = _real(classifier, "train", 80, invert)
    test_f, test_p, test_y = _real(classifier, "test", None, invert)
    alone_face, alone_empty = _face_accuracy(test_p, test_y)
    card = classifier.card
    faces, empties = [], []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        chosen = np.concatenate([rng.choice(np.flatnonzero(train_y == c), 10, replace=False)
                                 for c in range(7)])
        head = fit_head(card.name, card.sha256, card.labels, train_f[chosen], train_p[chosen],
                        train_y[chosen])
        face, empty = _face_accuracy(head.apply(test_f, test_p), test_y)
        faces.append(face)
        empties.append(empty)
    dice = int((test_y > 0).sum())
    assert np.mean(empties) >= alone_empty - 1e-9
    if invert:
        assert alone_face < 0.95  # the look the model is weak on
        assert np.mean(faces) > alone_face
    else:
        assert np.mean(faces) >= alone_face - 1.0 / dice


def _toy(rng: np.random.Generator, n: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features of three well-apart labels (of five), a model unsure between them."""
    centres = rng.normal(size=(5, 16)) * 3
    targets = rng.integers(0, 3, n)
    features = np.abs(centres[targets] + rng.normal(size=(n, 16)))
    probs = np.full((n, 5), 0.2)
    return features, probs, targets


def test_labels_the_head_was_not_shown_keep_the_models_share():
    features, probs, targets = _toy(np.random.default_rng(0))
    probs[:, 3:] = [0.3, 0.1]
    probs[:, :3] = 0.2
    head = fit_head("toy", "0" * 64, tuple("abcde"), features, probs, targets)
    read = head.apply(features, probs)
    assert head.learnt == (True, True, True, False, False)
    assert np.allclose(read[:, 3:], probs[:, 3:], atol=1e-6)
    assert np.allclose(read.sum(axis=1), 1.0, atol=1e-5)
    assert (read[:, :3].argmax(axis=1) == targets).mean() > 0.95


def test_a_head_travels_in_a_board_profile(tmp_path):
    features, probs, targets = _toy(np.random.default_rng(1))
    head = fit_head("toy", "ab" * 32, tuple("abcde"), features, probs, targets)
    profile = BoardProfile("rinne", 5, 6, None, None, "bottom", None, PIECES, PIECES, head)
    save_board(profile, tmp_path / "board.yaml")
    loaded = load_board(tmp_path / "board.yaml").head
    assert loaded is not None and loaded.labels == head.labels and loaded.learnt == head.learnt
    assert np.allclose(loaded.apply(features, probs), head.apply(features, probs), atol=1e-4)
    text = (tmp_path / "board.yaml").read_text(encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(text.replace("version: 1\n  model", "version: 2\n  model"),
                                       encoding="utf-8")
    with pytest.raises(CalibrationError, match=r"bad\.yaml: piece head: not a version-1"):
        load_board(tmp_path / "bad.yaml")


def test_a_profile_made_for_another_model_is_refused():
    game = game_with_ruleset("rinne", None)
    penta = Classifier.load("penta")
    features = np.abs(np.random.default_rng(2).normal(size=(12, penta_width(penta))))
    probs = np.full((12, 6), 1 / 6)
    targets = np.array([0, 1] * 6)
    wrong = fit_head("penta", "0" * 64, penta.labels, features, probs, targets)
    profile = BoardProfile("rinne", 5, 6, None, None, "bottom", None, PIECES, PIECES, wrong)
    with pytest.raises(ModelError, match="fitted on model penta 000000000000, not on this one"):
        board_referee(game, "penta", calibration=Calibration(board=profile))
    right = fit_head("penta", penta.card.sha256, penta.labels, features, probs, targets)
    _, reader = board_referee(game, "penta", calibration=Calibration(
        board=BoardProfile("rinne", 5, 6, None, None, "bottom", None, PIECES, PIECES, right)))
    assert reader.classifier.head == right


def penta_width(classifier: Classifier) -> int:
    crops = np.zeros((1, classifier.card.input_size, classifier.card.input_size, 3), np.uint8)
    return int(classifier.features_and_probabilities(crops)[0].shape[1])


@needs_onnx
def test_an_old_model_reads_and_refuses_only_a_head(tmp_path):
    old = Classifier.load(_without_features("penta", tmp_path))
    new = Classifier.load("penta")
    crops = np.random.default_rng(3).integers(0, 256, (8, 56, 56, 3), dtype=np.uint8)
    assert not old.has_features and new.has_features
    assert np.array_equal(old.predict(crops), new.predict(crops))
    with pytest.raises(ModelError, match="no 'features' output; add it with `referee-lab expose-features"):
        old.features_and_probabilities(crops)
    head = Head("penta", old.card.sha256, old.labels, (True, True, False, False, False, False),
                tuple((1.0,) * 576 for _ in range(6)), (0.0,) * 6, 1.0, 2)
    with pytest.raises(ModelError, match="no 'features' output"):
        old.with_head(head)


@needs_onnx
def test_expose_features_adds_the_final_layers_input_once(tmp_path):
    from referee_lab.features import expose_features

    for name in ("penta", "zensu"):  # float (Gemm) and int8 (QGemm)
        path = _without_features(name, tmp_path)
        before = Classifier.load(path)
        done = expose_features(path)
        after = Classifier.load(path)  # the card's sha256 was updated
        assert done.changed and after.has_features and done.sha256 == after.card.sha256
        size = after.card.input_size
        crops = np.random.default_rng(4).integers(0, 256, (6, size, size, 3), dtype=np.uint8)
        features, probs = after.features_and_probabilities(crops)
        assert np.array_equal(probs, before.predict(crops))
        assert features.shape == (6, done.width) and features.dtype == np.float32
        again = expose_features(path)
        assert not again.changed and again.sha256 == done.sha256 == sha256_of(path)


@needs_onnx
def test_only_the_features_output_is_taken_beside_the_probabilities(tmp_path):
    import onnx

    path = _without_features("zensu", tmp_path)
    model = onnx.load(str(path))
    model.graph.output.append(onnx.helper.make_tensor_value_info(
        model.graph.node[-1].input[0], onnx.TensorProto.FLOAT, ["N", 3]))  # the logits, say
    onnx.save(model, str(path))
    card = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    card["onnx"]["sha256"] = sha256_of(path)
    path.with_suffix(".json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    with pytest.raises(ModelError, match="expected one input and the outputs probabilities"):
        Classifier.load(path)
