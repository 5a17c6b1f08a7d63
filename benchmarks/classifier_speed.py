"""How long the dice classifier takes on one CPU thread: cutting every square of a board from
a 1280x720 frame and classifying the batch, for a 5x6 board (30 squares) and a 6x9 board
(54 squares). Prints a Markdown table.

    python benchmarks/classifier_speed.py [--model dice] [--repeat 200]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

import cv2
import numpy as np

from referee.vision.classifier import Classifier
from referee.vision.crops import Quad, crop_squares, square_quad


def board_quads(rows: int, cols: int, frame: tuple[int, int]) -> list[Quad]:
    """The squares of a rows x cols board filling most of a (height, width) frame, seen
    slightly turned (a real board is never quite square to the camera)."""
    height, width = frame
    side = min(0.85 * height / rows, 0.85 * width / cols)
    centre = np.array([width / 2, height / 2])
    angle = np.deg2rad(7.0)
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    quads = []
    for r in range(rows):
        for c in range(cols):
            offset = np.array([(c - (cols - 1) / 2) * side, (r - (rows - 1) / 2) * side])
            x, y = centre + turn @ offset
            quads.append(square_quad((float(x), float(y)), side, 7.0))
    return quads


def best_ms(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(median, minimum) of `repeat` timings in ms, after a warm-up. On a shared machine the
    minimum is the better estimate of what the work costs on a free core."""
    for _ in range(10):
        action()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return float(np.median(times)), float(np.min(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="dice")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    cv2.setNumThreads(1)  # one core, as on the budget
    classifier = Classifier.load(args.model, threads=1)
    spec = classifier.card.crop
    rng = np.random.default_rng(0)
    frame = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    size_kib = classifier.path.stat().st_size / 1024
    print(f"Model `{classifier.path.name}` ({size_kib:.0f} KiB), input {spec.size}x{spec.size};")
    print(f"{platform.machine()}, {os.cpu_count()} logical CPUs, load average")
    print(f"{os.getloadavg()[0]:.1f}; onnxruntime and OpenCV on 1 thread;")
    print(f"median (minimum) of {args.repeat} runs, ms.\n")
    print("| board | squares | crop all | classify | classify, 4 turns | crop + classify |")
    print("| --- | --- | --- | --- | --- | --- |")
    for rows, cols in ((5, 6), (6, 9)):
        quads = board_quads(rows, cols, frame.shape[:2])
        crops = crop_squares(frame, quads, spec)
        cut = best_ms(lambda q=quads: crop_squares(frame, q, spec), args.repeat)
        one = best_ms(lambda c=crops: classifier.predict(c), args.repeat)
        four = best_ms(lambda c=crops: classifier.predict(c, turns=4), args.repeat)
        both = best_ms(
            lambda q=quads: classifier.predict(crop_squares(frame, q, spec)), args.repeat
        )
        cells = " | ".join(f"{m:.2f} ({p:.2f})" for m, p in (cut, one, four, both))
        print(f"| {rows}x{cols} | {len(quads)} | {cells} |")


if __name__ == "__main__":
    main()
