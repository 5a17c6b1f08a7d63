from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.cli import main
from referee.vision.classifier import Classifier
from referee_lab.datasets import DICE_LABELS, RealDice, fixed_crops


def _write(path: Path, image: np.ndarray) -> str:
    assert cv2.imwrite(str(path), image)
    return str(path)


def test_classify_prints_one_json_object_a_line(
    dice_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wood = _write(tmp_path / "wood.png", np.full((90, 90, 3), (60, 120, 170), np.uint8))
    noise = np.random.default_rng(0).integers(0, 256, (40, 60, 3), dtype=np.uint8)
    other = _write(tmp_path / "noise.jpg", noise)
    assert main(["classify", "--pieces", "dice", wood, other]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    results = [json.loads(line) for line in lines]
    assert [r["file"] for r in results] == [wood, other]
    for result in results:
        assert set(result) == {"file", "label", "face", "confidence"}
        assert result["label"] in DICE_LABELS
        face = None if result["label"] == "empty" else int(result["label"])
        assert result["face"] == face
        assert 0.0 <= result["confidence"] <= 1.0
    assert results[0]["label"] == "empty"


def test_classify_reads_real_dice(
    real_dice: Path, dice_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Crops of real dice written to files and read back through the command: the faces
    come out as the labels say (the first few dice of each face of the test split)."""
    test = RealDice.load("test", real_dice)
    spec = Classifier.load("dice").card.crop
    chosen = []
    for face in range(1, 7):
        chosen += [d for d in test.die_samples() if d.label == face][:2]
    files = [
        _write(tmp_path / f"{i}.png", crop) for i, crop in enumerate(fixed_crops(chosen, spec))
    ]
    assert main(["classify", "--pieces", "dice", *files]) == 0
    faces = [json.loads(line)["face"] for line in capsys.readouterr().out.splitlines()]
    right = sum(f == s.label for f, s in zip(faces, chosen, strict=True))
    assert right >= len(chosen) - 1


@pytest.mark.parametrize("kind", ["missing", "corrupt", "empty"])
def test_classify_bad_image(
    dice_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    bad = tmp_path / "square.png"
    if kind == "corrupt":
        bad.write_bytes(b"\x89PNG\r\n\x1a\n this is not a picture")
    elif kind == "empty":
        bad.write_bytes(b"")
    good = _write(tmp_path / "good.png", np.zeros((48, 48, 3), np.uint8))
    assert main(["classify", "--pieces", "dice", good, str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing is guessed when one input is bad
    assert captured.err.count("\n") == 1 and str(bad) in captured.err
    assert captured.err.startswith("referee: ")


def test_classify_bad_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path / "good.png", np.zeros((48, 48, 3), np.uint8))
    assert main(["classify", "--pieces", "dice", "--model", str(tmp_path / "m.onnx"), good]) == 1
    assert "model card not found" in capsys.readouterr().err
    assert main(["classify", "--pieces", "chess", good]) == 1
    assert "no classifier for pieces 'chess'" in capsys.readouterr().err
