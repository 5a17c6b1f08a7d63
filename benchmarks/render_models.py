"""The render-trained classifiers (penta, zensu, tiles + tiles-seam) on renders they never saw:
confusion matrices, share of squares wrong, share of boards read without error, model size,
and classification time a square.

Frames: seeds from 900,000 (training used seeds below 1,000), board style "mat" (training
used paper, card and wood), so boards, tables, piece colours, light and camera are drawn
afresh; no hands. Crops are cut where the true pose puts the pieces' top faces, as the
referee cuts them at run time (see `referee_lab.render_eval`).

Classification time: one board's crops (a 5x6, 6x9 or 7x7 board, plus tiles' 84 seams) as
one batch through onnxruntime on one thread, best of 20 runs, divided by the crops.

Run: PYTHONPATH=. nice -n 10 python benchmarks/render_models.py [--pieces penta] [--frames 200]
[--model PATH] [--second-look] [--first-seed 610000] (PATH: another main model for the one
piece set named, e.g. a candidate; tiles' seam model is read from beside it. --second-look:
also read the squares exactly as the referee does, `second_look.read_squares` with the
pipeline's default `PipelineSettings().second_look`, reported beside the first look; tiles also
as whole pieces, `tracking.tile_pieces.read_whole_pieces`; --first-seed: a development set,
e.g. tiles' 610000+, to choose candidates on without looking at the held-out frames)
"""

from __future__ import annotations

import argparse
import time

import cv2
import numpy as np

from referee.app.pipeline import PipelineSettings
from referee.tracking.tile_pieces import read_whole_pieces
from referee.vision.crops import crop_squares
from referee_lab.render_eval import evaluate_renders, format_render_report
from referee_lab.renders import HELD_OUT_FIRST_SEED, render_squares
from referee_lab.tasks import render_classifiers


def classify_ms(pieces: str, model_path: str | None = None) -> dict[str, float]:
    """Milliseconds a crop for one board's crops in one batch (best of 20)."""
    frame = render_squares(pieces, 999_999, hands=0.0, style="mat")
    out = {}
    for model, classifier in render_classifiers(pieces, model_path).items():
        samples = frame.samples[model]
        crops = crop_squares(samples[0].image, [s.quad for s in samples], classifier.card.crop)
        best = np.inf
        for _ in range(20):
            started = time.perf_counter()
            classifier.predict(crops)
            best = min(best, time.perf_counter() - started)
        out[model] = 1000 * best / len(crops)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pieces", action="append", choices=("penta", "zensu", "tiles"))
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--model", help="a model file for the one piece set in --pieces")
    parser.add_argument("--first-seed", type=int, default=HELD_OUT_FIRST_SEED,
                        help="other seeds (e.g. 610000) for a development set apart from the "
                        "held-out one")
    parser.add_argument("--second-look", action="store_true",
                        help="also read the squares as the referee does (with a second look)")
    args = parser.parse_args()
    if args.model and len(args.pieces or ()) != 1:
        parser.error("--model needs exactly one piece set in --pieces")
    cv2.setNumThreads(1)
    for pieces in args.pieces or ("penta", "zensu", "tiles"):
        classifiers = render_classifiers(pieces, args.model)
        started = time.perf_counter()
        look = PipelineSettings().second_look if args.second_look else None
        report = evaluate_renders(pieces, classifiers, frames=args.frames,
                                  first_seed=args.first_seed, look=look,
                                  pieces_reader=read_whole_pieces if pieces == "tiles" else None)
        print(f"## {pieces}\n")
        print(format_render_report(report))
        print("\n| model | size (KiB) | classify ms a crop (one board's batch) |")
        print("| --- | ---: | ---: |")
        for model, ms in classify_ms(pieces, args.model).items():
            size = classifiers[model].path.stat().st_size / 1024
            print(f"| `{model}` | {size:.0f} | {ms:.3f} |")
        print(f"\n({time.perf_counter() - started:.0f} s)\n", flush=True)


if __name__ == "__main__":
    main()
