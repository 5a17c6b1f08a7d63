"""Labelled squares from renders: the training set the real photos cannot give (board marks,
grid lines, tilt, shadows, neighbours), cut by the same functions the referee uses at run
time (`top_face_quads` + the model's crop spec), so training and use see the same crops."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import cv2
import numpy as np

from referee.synth import RenderOptions, SquareContent, render_frame
from referee.synth.truth import FrameTruth
from referee.vision.datasets import DICE_LABELS, Sample
from referee.vision.pose import BoardPose
from referee.vision.warp import top_face_quads

GAMES = ("rinne", "tensei", "rinne-5x5", "flipflop-3x3", "flipflop-5x5")
SIZES = ((1280, 720), (1280, 720), (960, 540), (1920, 1080), (640, 480))
DIE_HEIGHT = 0.7  # a die's top face above the board, in squares (renders: ~0.62–0.78)


@dataclass(frozen=True)
class RenderedSquares:
    """One rendered frame cut into squares: samples for training, truth for measuring."""

    samples: tuple[Sample, ...]  # squares not covered by a hand
    truth: FrameTruth


def pose_of(truth: FrameTruth) -> BoardPose:
    """The board's pose as the homography best fitting the true grid intersections (the
    lens bends them slightly: this is what a perfect board finder would report)."""
    files, ranks = truth.files, truth.ranks
    board = np.array([(f, r) for r in range(ranks + 1) for f in range(files + 1)], np.float64)
    h, _ = cv2.findHomography(board, np.array(truth.grid, np.float64))
    return BoardPose.from_homography(np.asarray(h, np.float64), files, ranks)


def random_dice(rng: np.random.Generator, files: int, ranks: int) -> dict[str, SquareContent]:
    """Dice of both players on about a third of the squares, any face 1–6."""
    contents: dict[str, SquareContent] = {}
    for rank in range(ranks):
        for file in range(files):
            if rng.random() < 0.35:
                name = f"{'abcdefghi'[file]}{rank + 1}"
                contents[name] = SquareContent("die", int(rng.integers(0, 2)),
                                               int(rng.integers(1, 7)))
    return contents


def dice_squares(seed: int, *, hands: float = 0.3, tilt: tuple[float, float] = (0.0, 40.0)
                 ) -> RenderedSquares:
    """Render one frame of random dice on a random board of the Rinne family and cut it."""
    rng = np.random.default_rng([seed, 77])
    game = GAMES[int(rng.integers(len(GAMES)))]
    width, height = SIZES[int(rng.integers(len(SIZES)))]
    files, ranks = {"rinne": (5, 6), "tensei": (5, 6), "rinne-5x5": (5, 5),
                    "flipflop-3x3": (3, 3), "flipflop-5x5": (5, 5)}[game]
    contents = random_dice(rng, files, ranks)
    options = RenderOptions(width=width, height=height, tilt=tilt, pieces="dice", hands=hands)
    frame, truth = render_frame(game, seed=seed, options=options, contents=contents)
    quads = top_face_quads(pose_of(truth), (width, height), height=DIE_HEIGHT)
    covered = set(truth.occluded)
    shown = truth.contents()
    samples = []
    for index, quad in enumerate(quads):
        name = f"{'abcdefghi'[index % files]}{index // files + 1}"
        if name in covered:
            continue
        content = shown.get(name, SquareContent())
        label = DICE_LABELS.index(str(content.value)) if content.kind == "die" else 0
        samples.append(Sample(frame, quad.astype(np.float32), label, f"render-{seed}"))
    return RenderedSquares(tuple(samples), truth)


def dice_samples(seeds: range, *, hands: float = 0.3) -> Iterator[Sample]:
    for seed in seeds:
        yield from dice_squares(seed, hands=hands).samples


def write_crop_folder(folder: str, seeds: range, *, size: int = 64, margin: float = 0.3) -> int:
    """Cut rendered frames into square crops with a wide `margin` (room for the trainer's
    jitter) and write them with a `labels.csv` that `vision.datasets.folder_samples` reads.
    Returns the number of crops written."""
    import csv
    import json
    from pathlib import Path

    from referee.vision.crops import CropSpec, crop_squares

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    spec = CropSpec(size=size, margin=margin)
    (out / "crops.json").write_text(json.dumps({"size": size, "margin": margin}) + "\n")
    count = 0
    with open(out / "labels.csv", "w", newline="", encoding="utf-8") as handle:
        table = csv.writer(handle)
        table.writerow(["file", "label"])
        for seed in seeds:
            squares = dice_squares(seed)
            if not squares.samples:
                continue
            crops = crop_squares(squares.samples[0].image, [s.quad for s in squares.samples], spec)
            for i, (crop, sample) in enumerate(zip(crops, squares.samples, strict=True)):
                name = f"{seed:06d}-{i:02d}.png"
                cv2.imwrite(str(out / name), crop)
                table.writerow([name, DICE_LABELS[sample.label]])
                count += 1
            handle.flush()
    return count
