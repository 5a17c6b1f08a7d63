"""What the `classify`, `train` and `eval` verbs do, kept out of cli.py."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.errors import ModelError
from referee.vision.classifier import Classifier, ModelCard, default_models_dir
from referee.vision.datasets import folder_samples, read_image

if TYPE_CHECKING:
    from referee.vision.evaluate import DiceReport

PIECE_SETS = ("dice",)


def check_pieces(pieces: str) -> str:
    if pieces not in PIECE_SETS:
        raise ModelError(f"no classifier for pieces {pieces!r}; known: {', '.join(PIECE_SETS)}")
    return pieces


def classify_files(
    pieces: str, files: Sequence[str], *, model: str | None = None, turns: int = 1
) -> Iterator[dict[str, Any]]:
    """One result a file, each file one square's image (resized to the model's input). All
    files are read before any is classified, so a bad one stops the run before output."""
    classifier = Classifier.load(model or check_pieces(pieces))
    crops = [classifier.prepare(read_image(file)) for file in files]
    for file, prediction in zip(files, classifier.classify(crops, turns=turns), strict=True):
        yield {
            "file": file,
            "label": prediction.label,
            "face": prediction.face,
            "confidence": round(prediction.confidence, 4),
        }


def evaluate_pieces(
    pieces: str, *, data: str | None = None, model: str | None = None, turns: int = 1
) -> str:
    from referee.vision.evaluate import evaluate_dice, format_report

    classifier = Classifier.load(model or check_pieces(pieces))
    return format_report(evaluate_dice(classifier, data, turns=turns))


def train_pieces(
    pieces: str,
    *,
    out: str | None = None,
    data: str | None = None,
    steps: int | None = None,
    seed: int | None = None,
    extra: Sequence[str] = (),
    progress: Callable[[str], None] = print,
) -> ModelCard:
    """Train the model for `pieces`, write it and its card, then measure it on the real
    test split and add that to the card (measured after training; never used to choose).
    `extra` folders of labelled crops (a `labels.csv` each, see `datasets.folder_samples`)
    join the training set, such as rendered squares."""
    check_pieces(pieces)
    try:
        from referee.vision.training import TrainConfig, train_dice
    except ImportError as error:  # torch missing: the `train` extra is not installed
        raise ModelError(f"training needs the train extra ({error.name} is missing)") from None
    if hasattr(os, "nice"):
        os.nice(10)  # training is a background job on a shared machine
    config = TrainConfig()
    if steps is not None:
        config = dataclasses.replace(config, steps=steps)
    if seed is not None:
        config = dataclasses.replace(config, seed=seed)
    out_dir = Path(out) if out else default_models_dir()
    samples = [s for folder in extra
               for s in folder_samples(folder, margin=crop_folder_margin(folder, config.margin))]
    result = train_dice(
        out_dir, config=config, data_dir=data, extra=samples, name=pieces, progress=progress
    )
    report = record_real_test(result.onnx_path, data)
    progress(
        f"wrote {result.onnx_path} ({result.onnx_path.stat().st_size // 1024} KiB); "
        f"real test face accuracy {report.face_accuracy:.2%}"
    )
    return Classifier.load(result.onnx_path).card


def record_real_test(onnx_path: Path, data: str | None = None) -> DiceReport:
    """Measure a freshly trained model on the real test split and write the figures into
    its card's `metrics.real_test` (the card only: the .onnx and its sha256 stay)."""
    from referee.vision.evaluate import evaluate_dice
    from referee.vision.training import write_card

    classifier = Classifier.load(onnx_path)
    report = evaluate_dice(classifier, data)
    metrics = dict(classifier.card.metrics)
    metrics["real_test"] = report.as_dict() | {
        "note": "real-dice-byler test split, measured after training, never used to choose"
    }
    card = dataclasses.replace(classifier.card, metrics=metrics)
    write_card(card, onnx_path.with_suffix(".json"))
    return report


def to_json_line(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False)


def crop_folder_margin(folder: str | Path, default: float) -> float:
    """The margin a folder's crops were cut with, from its `crops.json` if it has one."""
    meta = Path(folder) / "crops.json"
    if not meta.is_file():
        return default
    try:
        return float(json.loads(meta.read_text(encoding="utf-8"))["margin"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ModelError(f"{meta}: unreadable ({error})") from None

