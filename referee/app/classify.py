"""`referee classify`: read images of single squares with a shipped classifier."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from referee.errors import ModelError
from referee.vision.classifier import Classifier
from referee.vision.images import read_image

# The sets of models the lab trains and measures, one a kind of piece.
MODEL_SETS = ("dice", "penta", "zensu", "tiles")
# Models read single crops; `tiles-seam` reads crops straddling the line between two squares,
# `tiles-monomino` a Renaissance square as bare or a monomino.
CLASSIFIABLE = (*MODEL_SETS, "tiles-seam", "tiles-monomino")
# Models whose labels depend on how the crop is turned (a Penta-piece's state is the corner
# that points forward, a seam crop's line runs top to bottom): no test-time turns.
ORIENTED = ("penta", "tiles-seam")


def check_pieces(pieces: str, known: tuple[str, ...] = MODEL_SETS) -> str:
    if pieces not in known:
        raise ModelError(f"no classifier for pieces {pieces!r}; known: {', '.join(known)}")
    return pieces


def check_turns(pieces: str, turns: int) -> None:
    if turns != 1 and pieces in ORIENTED:
        raise ModelError(f"{pieces} crops must keep their orientation: --turns must be 1")


def classify_files(
    pieces: str, files: Sequence[str], *, model: str | None = None, turns: int = 1
) -> Iterator[dict[str, Any]]:
    """One result a file, each file one square's image (resized to the model's input). All
    files are read before any is classified, so a bad one stops the run before output."""
    check_pieces(pieces, CLASSIFIABLE)
    check_turns(pieces, turns)
    classifier = Classifier.load(model or pieces)
    crops = [classifier.prepare(read_image(file)) for file in files]
    for file, prediction in zip(files, classifier.classify(crops, turns=turns), strict=True):
        yield {
            "file": file,
            "label": prediction.label,
            "face": prediction.face,
            "confidence": round(prediction.confidence, 4),
        }


def to_json_line(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False)
