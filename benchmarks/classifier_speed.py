"""How long the dice classifier takes on one CPU thread: cutting every square of a board from
a 1280x720 frame and classifying the batch, for a 5x6 board (30 squares) and a 6x9 board
(54 squares). Prints a Markdown table.

    python benchmarks/classifier_speed.py [--model dice] [--repeat 200]

`--tiles`: a Renaissance board instead (7x7: 49 squares and 84 seams, models `tiles` and
`tiles-seam` from the same folder as --model, default referee/data/models/tiles.onnx): its top-face
quads from a board pose, cut one warp a crop (`crop_squares`) and from one warp of the board
(`renders.frame_crops`' way: `crops.board_canvas`), and classified by both models, the
seams then read given the squares (`seams.seams_given_squares`), then squares and seams as
whole pieces (`tracking.tile_pieces.read_whole_pieces`, which begins with the seams given the
squares): on the noise frame's reads (one group of 49 squares, too large to search: left as
read) and on held-out rendered boards' (seeds 900000+, style `mat`: the median board, and
the board whose mending costs most).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from functools import partial

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.tracking.tile_pieces import read_whole_pieces
from referee.vision.classifier import Classifier
from referee.vision.crops import (
    Quad,
    board_canvas,
    canvas_side,
    crop_squares,
    fits_canvas,
    seam_quads,
    square_quad,
)
from referee.vision.pose import BoardPose
from referee.vision.seams import seam_pairs, seams_given_squares
from referee.vision.warp import top_face_quads
from referee_lab.renders import frame_crops, render_squares


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


def tiles_quads(frame: tuple[int, int]) -> NDArray[np.float32]:
    """The top-face quads of a 7x7 board filling 85% of a (height, width) frame's height,
    turned 7 degrees, its near edge a little wider (as `warp.top_face_quads` gives them)."""
    height, width = frame
    side = 0.85 * height / 7
    board = np.array([[0, 0], [7, 0], [7, 7], [0, 7]], np.float64)
    angle = np.deg2rad(7.0)
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    image = (board - 3.5) * side * np.array([1, -1]) @ turn.T + [width / 2, height / 2]
    image[[0, 1]] += [[-10, 0], [10, 0]]
    h = cv2.getPerspectiveTransform(board.astype(np.float32), image.astype(np.float32))
    pose = BoardPose.from_homography(np.asarray(h, np.float64), 7, 7)
    return top_face_quads(pose, (width, height), height=0.1).astype(np.float32)


Reads = tuple[NDArray[np.float32], tuple[str, ...], NDArray[np.float32], tuple[str, ...]]


def rendered_reads(tiles: Classifier, seam: Classifier, boards: int) -> list[Reads]:
    """Both models' probabilities on held-out rendered boards, as `read_whole_pieces` takes
    them."""
    out = []
    for seed in range(900_000, 900_000 + boards):
        cut = frame_crops(render_squares("tiles", seed, hands=0.0, style="mat"),
                          {"tiles": tiles.card.crop, "tiles-seam": seam.card.crop})
        out.append((tiles.predict(cut["tiles"]), tiles.labels,
                    seam.predict(cut["tiles-seam"]), seam.labels))
    return out


def whole_pieces(reads: Reads) -> object:
    squares, square_labels, seams, seam_labels = reads
    return read_whole_pieces(squares, square_labels, seams, seam_labels, 7)


def tiles_speed(model: str, repeat: int) -> None:
    """The 7x7 Renaissance read: crops for both models and their classification."""
    tiles = Classifier.load(model, threads=1)
    seam = Classifier.load(tiles.path.parent / "tiles-seam.onnx", threads=1)
    rng = np.random.default_rng(0)
    frame = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    quads = tiles_quads(frame.shape[:2])
    seams = [q for _, _, q in seam_quads(quads, 7, 7)]
    t_spec, s_spec = tiles.card.crop, seam.card.crop
    side = canvas_side(t_spec)
    one_canvas = (side == canvas_side(s_spec) and fits_canvas(t_spec, side)
                  and fits_canvas(s_spec, side, seams=True))
    border = max(round(t_spec.margin * side), side // 2 + round(s_spec.margin * side))

    def per_crop() -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
        return crop_squares(frame, list(quads), t_spec), crop_squares(frame, seams, s_spec)

    def at_once() -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
        canvas = board_canvas(frame, quads, 7, side, border) if one_canvas else None
        if canvas is None:
            return per_crop()
        return canvas.squares(t_spec), canvas.seams(s_spec)

    squares, seam_crops = at_once()
    square_probabilities, seam_probabilities = tiles.predict(squares), seam.predict(seam_crops)

    pairs = seam_pairs(7, 7)

    def read() -> None:
        cut_squares, cut_seams = at_once()
        read_whole_pieces(tiles.predict(cut_squares), tiles.labels, seam.predict(cut_seams),
                          seam.labels, 7)

    rendered = rendered_reads(tiles, seam, boards=20)
    costs = [best_ms(partial(whole_pieces, r), repeat)[0] for r in rendered]
    typical, dearest = (rendered[int(np.argsort(costs)[k])] for k in (len(costs) // 2, -1))

    sizes = ", ".join(f"`{c.path.name}` {c.path.stat().st_size / 1024:.0f} KiB "
                      f"{c.card.crop.size}x{c.card.crop.size}" for c in (tiles, seam))
    print(f"Renaissance 7x7 board (49 squares, 84 seams), 1280x720 frame; {sizes};")
    print(f"load average {os.getloadavg()[0]:.1f}; onnxruntime and OpenCV on 1 thread;")
    print(f"wall time: median (minimum) of {repeat} runs; CPU time of this process (what the")
    print("work costs on a free core; a busy machine stretches the wall time): median; ms.\n")
    print("| step | wall ms | CPU ms |")
    print("| --- | --- | --- |")
    rows: list[tuple[str, Callable[[], object]]] = [
            ("crop squares + seams, a warp a crop", per_crop),
            ("crop squares + seams, one warp of the board" if one_canvas else
             "(the two specs share no canvas: a warp a crop)", at_once),
            ("classify 49 squares (`tiles`)", lambda: tiles.predict(squares)),
            ("classify 84 seams (`tiles-seam`)", lambda: seam.predict(seam_crops)),
            ("seams given the squares (`seams.seams_given_squares`)",
             lambda: seams_given_squares(seam_probabilities, seam.labels, square_probabilities,
                                         tiles.labels, pairs)),
            ("as whole pieces (`read_whole_pieces`), the noise frame's reads",
             lambda: read_whole_pieces(square_probabilities, tiles.labels, seam_probabilities,
                                       seam.labels, 7)),
            (f"as whole pieces, the median of {len(rendered)} held-out boards",
             partial(whole_pieces, typical)),
            (f"as whole pieces, the dearest of {len(rendered)} held-out boards",
             partial(whole_pieces, dearest)),
            ("**full read: crop + classify both + as whole pieces**", read)]
    for name, action in rows:
        median, best = best_ms(action, repeat)
        print(f"| {name} | {median:.2f} ({best:.2f}) | {cpu_ms(action, repeat):.2f} |")


def cpu_ms(action: Callable[[], object], repeat: int) -> float:
    """Median CPU time of this process a run, in ms (one thread: the work itself, not the
    time other jobs hold the core)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        action()
        times.append((time.process_time() - start) * 1000)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=None)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--tiles", action="store_true", help="a 7x7 Renaissance board")
    args = parser.parse_args()
    cv2.setNumThreads(1)  # one core, as on the budget
    if args.tiles:
        tiles_speed(args.model or "tiles", args.repeat)
        return
    args.model = args.model or "dice"
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
