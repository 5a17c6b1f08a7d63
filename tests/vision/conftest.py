from __future__ import annotations

from pathlib import Path

import pytest

from referee.vision.classifier import default_models_dir
from referee_lab.datasets import REAL_DICE_ENV, real_dice_dir


@pytest.fixture(scope="session")
def real_dice() -> Path:
    """The real dice photographs, or a skip saying where they were looked for."""
    folder = real_dice_dir()
    if not (folder / "test_labels.csv").is_file():
        pytest.skip(f"real dice photographs not found at {folder} (set ${REAL_DICE_ENV})")
    return folder


@pytest.fixture(scope="session")
def dice_model() -> Path:
    """The committed dice model: its absence is a failure, not a skip."""
    path = default_models_dir() / "dice.onnx"
    assert path.is_file(), f"no trained dice model at {path} (run: referee train --pieces dice)"
    return path
