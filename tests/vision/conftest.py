from __future__ import annotations

from pathlib import Path

import pytest

from referee.vision.classifier import default_models_dir
from referee_lab.datasets import real_dice_dir


@pytest.fixture(scope="package")
def real_dice() -> Path:
    """The real dice photographs that come with the lab: their absence is a failure."""
    folder = real_dice_dir()
    assert (folder / "test_labels.csv").is_file(), f"no real dice photographs at {folder}"
    return folder


@pytest.fixture(scope="package")
def dice_model() -> Path:
    """The committed dice model: its absence is a failure, not a skip."""
    path = default_models_dir() / "dice.onnx"
    assert path.is_file(), f"no trained dice model at {path} (run: referee-lab train --pieces dice)"
    return path
