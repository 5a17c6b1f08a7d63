"""The board-corner network: where a board's grid has its four outer corners, from the whole
frame, as a first guess that the line fit (`localise.refine`) then settles to sub-pixel.

`models/corners.onnx` with its card `models/corners.json` (input size, normalisation, the
output's stride, sha256 of the .onnx, the recipe and seed, measured accuracy), checked
against each other on loading as the square classifiers are: a missing, corrupt or
mismatched model is a `ModelError`, never a guess. Trained by `corner_training`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError
from referee.vision.classifier import _open_session, check_sha256, read_model_card

CARD_FORMAT = 1
INPUT_NAME = "frame"
MEAN = (0.5, 0.5, 0.5)
STD = (0.25, 0.25, 0.25)
STRIDE = 4  # input pixels per output cell
MIN_HEAT = 0.2  # a corner's peak must reach this, or the board is not taken as found


def shrink(frame_bgr: NDArray[np.uint8], width: int, height: int) -> NDArray[np.uint8]:
    """The frame at the network's input size (area averaging keeps thin lines): the same for
    the training frames (`corner_data`) and at run time."""
    return np.ascontiguousarray(cv2.resize(frame_bgr, (width, height), interpolation=cv2.INTER_AREA))


def network_input(bgr: NDArray[np.generic]) -> NDArray[np.float32]:
    """An (H, W, 3) BGR image, 0..255, normalised as the network reads it: (3, H, W) float32."""
    x = (bgr.astype(np.float32) / 255.0 - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1), dtype=np.float32)


def worst_corner_error(points: NDArray[np.floating], truth: NDArray[np.floating]) -> float:
    """The largest distance from a true corner to the nearest guessed one (the guess names
    no corner)."""
    return float(np.linalg.norm(points[:, None] - truth[None], axis=2).min(axis=0).max())


@dataclass(frozen=True)
class CornerGuess:
    """Four corners in the network's input pixels, in no particular order, with the heat of
    each (0..1) and of the strongest peak beyond them (a fifth corner-like place)."""

    points: NDArray[np.float64]  # (4, 2)
    heat: NDArray[np.float64]  # (4,)
    fifth: float


def decode(maps: NDArray[np.float32], min_heat: float = MIN_HEAT) -> CornerGuess | None:
    """The four strongest heat peaks (3x3 local maxima) with their offsets, or None when
    fewer than four reach `min_heat`."""
    heat = np.asarray(maps[0], np.float32)
    peaks = (heat == cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat >= min(min_heat, 0.05))
    vs, us = np.nonzero(peaks)
    order = np.argsort(-heat[vs, us])
    vs, us = vs[order], us[order]
    if len(vs) < 4 or heat[vs[3], us[3]] < min_heat:
        return None
    pick_v, pick_u = vs[:4], us[:4]
    x = (pick_u + maps[1, pick_v, pick_u]) * STRIDE - 0.5
    y = (pick_v + maps[2, pick_v, pick_u]) * STRIDE - 0.5
    fifth = float(heat[vs[4], us[4]]) if len(vs) > 4 else 0.0
    return CornerGuess(np.column_stack([x, y]).astype(np.float64),
                       heat[pick_v, pick_u].astype(np.float64), fifth)


def open_plain(onnx_path: Path, threads: int = 1) -> Any:
    """An onnxruntime session on a model file without its card: a training run's own
    checkpoints, measured before their card is written."""
    return _open_session(onnx_path, threads)


class CornerNet:
    """A loaded, verified corner network."""

    def __init__(self, card: dict[str, Any], session: Any, path: Path) -> None:
        self.card = card
        self.path = path
        self._session = session
        self.width = int(card["input"]["width"])
        self.height = int(card["input"]["height"])

    @classmethod
    def load(cls, name_or_path: str | Path = "corners", *, threads: int = 1) -> CornerNet:
        """Load `models/<name>.onnx` with its card, or the model at a path; ModelError for a
        missing, unreadable or corrupt file, or a card that is invalid or does not match it."""
        onnx_path, card_path, card = read_model_card(name_or_path)
        _check_card(card, card_path)
        check_sha256(onnx_path, str(card["onnx"]["sha256"]))
        session = _open_session(onnx_path, threads)
        inputs = session.get_inputs()
        want = [3, int(card["input"]["height"]), int(card["input"]["width"])]
        if len(inputs) != 1 or inputs[0].name != INPUT_NAME or list(inputs[0].shape)[1:] != want:
            raise ModelError(f"{onnx_path}: input does not match its card ({INPUT_NAME} [N, "
                             f"{', '.join(map(str, want))}])")
        return cls(card, session, onnx_path)

    def trained_on(self, files: int, ranks: int) -> bool:
        """Whether the card lists this board size (either way round) among those the network
        was trained on (`boards`, as "5x6"); a card without the list names none, and any
        board is taken."""
        boards = self.card.get("boards")
        return boards is None or f"{files}x{ranks}" in boards or f"{ranks}x{files}" in boards

    def guess(self, frame_bgr: NDArray[np.uint8]) -> CornerGuess | None:
        """The four corners in frame pixels, or None when the network sees no board."""
        if frame_bgr.ndim == 2:  # the finder also takes grey frames
            frame_bgr = np.asarray(cv2.cvtColor(frame_bgr, cv2.COLOR_GRAY2BGR), np.uint8)
        h, w = frame_bgr.shape[:2]
        x = network_input(shrink(frame_bgr, self.width, self.height))[None]
        (maps,) = self._session.run(None, {INPUT_NAME: x})
        found = decode(maps[0])
        if found is None:
            return None
        scale = np.array([w / self.width, h / self.height])
        points = found.points * scale  # as `corner_data` shrinks the truth
        return CornerGuess(points, found.heat, found.fifth)


def _check_card(card: Any, where: Path) -> None:
    try:
        if not isinstance(card, dict) or card.get("format") != CARD_FORMAT or card.get("name") != "corners":
            raise ValueError(f"not a format-{CARD_FORMAT} corner-network card")
        inp, onnx = card["input"], card["onnx"]
        if int(inp["width"]) < 32 or int(inp["height"]) < 32:
            raise ValueError("input smaller than 32x32")
        if tuple(inp["normalisation"]["mean"]) != MEAN or tuple(inp["normalisation"]["std"]) != STD:
            raise ValueError("normalisation differs from this reader's")
        if int(onnx["stride"]) != STRIDE or onnx["input_name"] != INPUT_NAME:
            raise ValueError(f"stride or input name differs from this reader's ({STRIDE}, {INPUT_NAME})")
        boards = card.get("boards")
        if boards is not None and (not isinstance(boards, list) or not all(
                isinstance(b, str) and len(b.split("x")) == 2 and all(p.isdigit() for p in b.split("x"))
                for b in boards)):
            raise ValueError("boards is not a list of board sizes (\"5x6\")")
        sha = str(onnx["sha256"])
        if len(sha) != 64:
            raise ValueError("onnx.sha256 is not a sha256 hex digest")
    except (KeyError, TypeError, ValueError) as error:
        detail = f"missing field {error}" if isinstance(error, KeyError) else str(error)
        raise ModelError(f"{where}: invalid model card: {detail}") from None
