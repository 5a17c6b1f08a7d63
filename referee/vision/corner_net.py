"""The board-corner network: where a board's grid has its four outer corners, from the whole
frame, as a first guess that the line fit (`grid_search.refine`) then settles to sub-pixel.

`referee/data/models/corners.onnx` with its card `corners.json` beside it (input size, normalisation, the
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
from referee.vision.pose import board_corners, grid_through

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
    fifth = float(heat[vs[4], us[4]]) if len(vs) > 4 else 0.0
    return CornerGuess(_points_at(maps, pick_v, pick_u), heat[pick_v, pick_u].astype(np.float64), fifth)


def _points_at(maps: NDArray[np.float32], v: NDArray[np.intp], u: NDArray[np.intp]) -> NDArray[np.float64]:
    """The input pixels of the corners in cells (v, u), their offsets added."""
    x = (u + maps[1, v, u]) * STRIDE - 0.5
    y = (v + maps[2, v, u]) * STRIDE - 0.5
    return np.column_stack([x, y]).astype(np.float64)


def peak_near(maps: NDArray[np.float32], point: NDArray[np.floating], radius: int
              ) -> tuple[NDArray[np.float64], float] | None:
    """The strongest heat within `radius` cells of the cell holding `point` (input pixels),
    as input pixels with its offset, and its heat; None where that cell lies off the map."""
    heat = np.asarray(maps[0], np.float32)
    u, v = (int(np.floor((c + 0.5) / STRIDE)) for c in point)
    if not (0 <= u < heat.shape[1] and 0 <= v < heat.shape[0]):
        return None
    v0, u0 = max(v - radius, 0), max(u - radius, 0)
    window = heat[v0:v + radius + 1, u0:u + radius + 1]
    dv, du = np.unravel_index(int(np.argmax(window)), window.shape)
    at_v, at_u = np.array([v0 + int(dv)]), np.array([u0 + int(du)])
    return _points_at(maps, at_v, at_u)[0], float(heat[at_v[0], at_u[0]])


@dataclass(frozen=True)
class Canvas:
    """The view a corner refiner reads: the frame warped so that a board guessed at a
    quadrilateral lies `square_px` pixels a square with `margin` squares round it. Where the
    guess is off, the board's true corners lie off the canvas's grid corners, within the
    margin; the refiner finds them. Training views (`corner_data`) and run-time views are
    cut by `view`."""

    files: int
    ranks: int
    square_px: int
    margin: float

    @property
    def width(self) -> int:
        return round((self.files + 2 * self.margin) * self.square_px)

    @property
    def height(self) -> int:
        return round((self.ranks + 2 * self.margin) * self.square_px)

    def homography(self, quad: NDArray[np.floating]) -> NDArray[np.float64]:
        """Frame pixels to canvas pixels, for a board guessed at `quad`: its corners (0, 0),
        (files, 0), (files, ranks), (0, ranks) in turn, in frame pixels."""
        guess = grid_through(quad, self.files, self.ranks)
        px, shift = float(self.square_px), self.margin * self.square_px
        scale = np.array([[px, 0.0, shift], [0.0, px, shift], [0.0, 0.0, 1.0]])
        return np.asarray(scale @ np.linalg.inv(guess), np.float64)

    def view(self, frame_bgr: NDArray[np.uint8], quad: NDArray[np.floating]
             ) -> tuple[NDArray[np.uint8], NDArray[np.float64]]:
        """The canvas of a board guessed at `quad`, and the frame-to-canvas homography."""
        to_canvas = self.homography(quad)
        image = cv2.warpPerspective(frame_bgr, to_canvas, (self.width, self.height),
                                    flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return np.asarray(image, np.uint8), to_canvas

    def as_dict(self) -> dict[str, float]:
        return {"files": self.files, "ranks": self.ranks, "square_px": self.square_px,
                "margin": self.margin}


def decode_in_turn(maps: NDArray[np.float32], canvas: Canvas) -> CornerGuess:
    """A refiner's four corners in canvas pixels, in the guess's order: the strongest heat
    in each quarter of the canvas (the guess's corner k lies in quarter k, and the true one
    within the margin of it), with its offset."""
    heat = np.asarray(maps[0], np.float32)
    rows, cols = heat.shape
    vs, us = [], []
    for x, y in board_corners(canvas.files, canvas.ranks):
        v0 = 0 if y == 0 else rows // 2
        u0 = 0 if x == 0 else cols // 2
        quarter = heat[v0:v0 + rows // 2, u0:u0 + cols // 2]
        dv, du = np.unravel_index(int(np.argmax(quarter)), quarter.shape)
        vs.append(v0 + int(dv))
        us.append(u0 + int(du))
    v, u = np.array(vs), np.array(us)
    return CornerGuess(_points_at(maps, v, u), heat[v, u].astype(np.float64), 0.0)


def open_plain(onnx_path: Path, threads: int = 1) -> Any:
    """An onnxruntime InferenceSession on a model file without its card: a training run's own
    checkpoints, measured before their card is written."""
    return _open_session(onnx_path, threads)


class CornerNet:
    """A loaded, verified corner network."""

    def __init__(self, card: dict[str, Any], runtime: Any, path: Path) -> None:
        self.card = card
        self.path = path
        self._runtime = runtime
        self.width = int(card["input"]["width"])
        self.height = int(card["input"]["height"])
        self.canvas = Canvas(**card["canvas"]) if "canvas" in card else None

    @classmethod
    def load(cls, name_or_path: str | Path = "corners", *, threads: int = 1) -> CornerNet:
        """Load `referee/data/models/<name>.onnx` with its card, or the model at a path; ModelError for a
        missing, unreadable or corrupt file, or a card that is invalid or does not match it."""
        onnx_path, card_path, card = read_model_card(name_or_path)
        _check_card(card, card_path)
        check_sha256(onnx_path, str(card["onnx"]["sha256"]))
        runtime = _open_session(onnx_path, threads)
        inputs = runtime.get_inputs()
        want = [3, int(card["input"]["height"]), int(card["input"]["width"])]
        if len(inputs) != 1 or inputs[0].name != INPUT_NAME or list(inputs[0].shape)[1:] != want:
            raise ModelError(f"{onnx_path}: input does not match its card ({INPUT_NAME} [N, "
                             f"{', '.join(map(str, want))}])")
        return cls(card, runtime, onnx_path)

    def trained_on(self, files: int, ranks: int) -> bool:
        """Whether the card lists this board size (either way round) among those the network
        was trained on (`boards`, as "5x6"); a card without the list names none, and any
        board is taken."""
        boards = self.card.get("boards")
        return boards is None or f"{files}x{ranks}" in boards or f"{ranks}x{files}" in boards

    def heat_maps(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        """The network's maps (heat, then the two offsets; `STRIDE` pixels a cell) of one
        input image (`network_input`)."""
        (maps,) = self._runtime.run(None, {INPUT_NAME: x[None]})
        return np.asarray(maps[0], np.float32)

    def guess(self, frame_bgr: NDArray[np.uint8]) -> CornerGuess | None:
        """The four corners in frame pixels, or None when the network sees no board."""
        frame_bgr = as_bgr(frame_bgr)
        h, w = frame_bgr.shape[:2]
        x = network_input(shrink(frame_bgr, self.width, self.height))[None]
        (maps,) = self._runtime.run(None, {INPUT_NAME: x})
        found = decode(maps[0])
        if found is None:
            return None
        scale = np.array([w / self.width, h / self.height])
        points = found.points * scale  # as `corner_data` shrinks the truth
        return CornerGuess(points, found.heat, found.fifth)

    def refine(self, frame_bgr: NDArray[np.uint8], quad: NDArray[np.floating], turns: int = 1) -> CornerGuess:
        """A refiner's (a card with a `canvas`) corners of the board guessed at `quad` (frame
        pixels, corners (0, 0), (files, 0), (files, ranks), (0, ranks) in turn): in frame
        pixels, in the same order, with the heat of each. With `turns` 2 or 4 the board is
        read in as many views, turned by a half or a quarter turn each (the guess's corners
        taken from each corner in turn; a quarter turn needs a square canvas), and each
        corner and its heat averaged over them: a hand or a border line misleads each view
        its own way."""
        canvas = self.canvas
        if canvas is None:
            raise ModelError(f"{self.path}: not a corner refiner (its card has no canvas)")
        if turns not in (1, 2, 4) or (turns == 4 and canvas.files != canvas.ranks):
            raise ValueError(f"a {canvas.files}x{canvas.ranks} canvas is read in 1, 2 or (if square) 4 "
                             f"turns, not {turns}")
        frame_bgr = as_bgr(frame_bgr)
        starts = [4 // turns * k for k in range(turns)]
        points, heat = [], []
        for start in starts:  # one view a run: the exported input holds one image
            image, to_canvas = canvas.view(frame_bgr, np.roll(quad, start, axis=0))
            (maps,) = self._runtime.run(None, {INPUT_NAME: network_input(image)[None]})
            found = decode_in_turn(maps[0], canvas)
            back = cv2.perspectiveTransform(found.points[None], np.linalg.inv(to_canvas))[0]
            points.append(np.roll(back, -start, axis=0))  # the guess's order again
            heat.append(np.roll(found.heat, -start))
        mean_points, mean_heat = np.mean(points, axis=0), np.mean(heat, axis=0)
        return CornerGuess(mean_points.astype(np.float64), mean_heat.astype(np.float64), 0.0)


def as_bgr(frame: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """A colour frame as it is; a grey one (the finder also takes those) as BGR."""
    return frame if frame.ndim != 2 else np.asarray(cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR), np.uint8)


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
        canvas = card.get("canvas")
        if canvas is not None:
            shape = Canvas(int(canvas["files"]), int(canvas["ranks"]), int(canvas["square_px"]),
                           float(canvas["margin"]))
            if (shape.width, shape.height) != (int(inp["width"]), int(inp["height"])):
                raise ValueError("the canvas's size is not the input's")
        sha = str(onnx["sha256"])
        if len(sha) != 64:
            raise ValueError("onnx.sha256 is not a sha256 hex digest")
    except (KeyError, TypeError, ValueError) as error:
        detail = f"missing field {error}" if isinstance(error, KeyError) else str(error)
        raise ModelError(f"{where}: invalid model card: {detail}") from None
