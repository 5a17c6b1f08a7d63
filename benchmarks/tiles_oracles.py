"""How many Renaissance boards each tiles model's errors cost: the boards read without error
as the referee reads them, then again with one model's answers replaced by the truth.

Each frame is read once as `render_models.py --second-look` reads it (the square model with
its second look, the monomino model's second opinion on squares in doubt, the seams given
the squares, then whole pieces: `tracking.tile_pieces.read_whole_pieces`), and the
probabilities kept. The oracles then stand in for:

- the bare-or-monomino choice (the monomino model's question): wherever the read and the
  truth are bare or a monomino with the same marker, the pair's share goes to the true one;
  once only on the squares in doubt (best label under 3 nats ahead), once on all;
- the seam model: every seam's probability set to the truth's;
- both.

Frames: no hands, crops cut at the true pose, style `mat` (the held-out style) or the
training styles (`--style train`); by default the development seeds 610000+, never the
held-out 900000+ (that would choose on them).

Run: PYTHONPATH=. python benchmarks/tiles_oracles.py [--frames 1400] [--first-seed 610000]
[--style mat|train]"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from referee.app.pipeline import PipelineSettings
from referee.tracking.tile_pieces import read_whole_pieces
from referee.vision.classifier import Classifier
from referee.vision.monomino import MONOMINO_MODEL, monomino_pairs, second_opinion
from referee.vision.seams import APART, JOINED, SEAM_MODEL
from referee.vision.second_look import lead, read_squares
from referee_lab.renders import HELD_OUT_STYLE, frame_crops, render_squares
from referee_lab.tasks import render_classifiers

SURE = 0.999  # an oracle's probability for the truth
Probabilities = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Read:
    """One frame as the referee reads it, before the whole-piece read, with the truth."""

    squares: Probabilities  # tiles labels, a row a square, rules order
    seams: Probabilities  # the seam model's, a row a seam of `seam_pairs`
    truth: NDArray[np.int64]
    seam_truth: NDArray[np.int64]
    files: int


def read_frame(seed: int, style: str | None, models: dict[str, Classifier]) -> Read | None:
    """A frame read as `render_models.py --second-look` reads it; None if not all of the
    board is cut (whole pieces need the whole board)."""
    frame = render_squares("tiles", seed, hands=0.0, style=style)
    main, look = models["tiles"], PipelineSettings().second_look
    if frame.quads is None or frame.kept is None or len(frame.kept["tiles"]) != len(frame.quads):
        return None
    seam_crops = frame_crops(frame, {SEAM_MODEL: models[SEAM_MODEL].card.crop})[SEAM_MODEL]
    seams = models[SEAM_MODEL].predict(seam_crops)
    crops, squares = read_squares(main, frame.image, frame.quads, frame.truth.files, look)
    squares = second_opinion(models[MONOMINO_MODEL], crops, squares, main.labels, look)
    return Read(squares, seams.astype(np.float64),
                np.array([s.label for s in frame.samples["tiles"]], np.int64),
                np.array([s.label for s in frame.samples[SEAM_MODEL]], np.int64),
                frame.truth.files)


def right(read: Read, squares: Probabilities, seams: Probabilities,
          labels: tuple[str, ...], seam_labels: tuple[str, ...]) -> bool:
    """Whether the board is read without error as whole pieces from these probabilities."""
    whole = read_whole_pieces(squares, labels, seams, seam_labels, read.files)
    joined = np.where(whole.joined, seam_labels.index(JOINED), seam_labels.index(APART))
    return bool(np.all(whole.squares == read.truth) and np.all(joined == read.seam_truth))


def pair_oracle(read: Read, labels: tuple[str, ...], doubted_only: bool) -> Probabilities:
    """The squares with the bare-or-monomino choice made right where the read and the truth
    are the same pair (one marker or none; `doubted_only`: only where the read's best label
    leads by under `SecondLook.below` nats, the squares the referee holds in doubt)."""
    pairs, out = monomino_pairs(labels), read.squares.copy()
    asked = lead(out) < PipelineSettings().second_look.below if doubted_only else np.ones(len(out), bool)
    for i, (best, true) in enumerate(zip(out.argmax(axis=1), read.truth, strict=True)):
        pair = pairs.get(int(best))
        if pair is None or true not in pair or not asked[i]:
            continue
        bare, monomino = pair
        share = out[i, bare] + out[i, monomino]
        out[i, bare], out[i, monomino] = (share, 0.0) if true == bare else (0.0, share)
    return out


def seam_oracle(read: Read) -> Probabilities:
    return np.where(np.eye(2, dtype=bool)[read.seam_truth], SURE, 1 - SURE)


def oracles(labels: tuple[str, ...]) -> dict[str, Callable[[Read], tuple[Probabilities, Probabilities]]]:
    """Each way of reading: the squares' and the seams' probabilities it reads a frame with."""
    return {
        "as the referee reads": lambda r: (r.squares, r.seams),
        "bare or monomino right where the read is in doubt":
            lambda r: (pair_oracle(r, labels, True), r.seams),
        "bare or monomino always right": lambda r: (pair_oracle(r, labels, False), r.seams),
        "seams always right": lambda r: (r.squares, seam_oracle(r)),
        "both": lambda r: (pair_oracle(r, labels, False), seam_oracle(r)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=1400)
    parser.add_argument("--first-seed", type=int, default=610_000)
    parser.add_argument("--style", choices=(HELD_OUT_STYLE, "train"), default=HELD_OUT_STYLE)
    args = parser.parse_args()
    models = render_classifiers("tiles", None)
    labels, seam_labels = models["tiles"].labels, models[SEAM_MODEL].labels
    style = None if args.style == "train" else args.style
    reads = [r for seed in range(args.first_seed, args.first_seed + args.frames)
             if (r := read_frame(seed, style, models)) is not None]
    print(f"tiles, {len(reads)} whole boards, seeds {args.first_seed}-"
          f"{args.first_seed + args.frames - 1}, style {args.style}\n")
    print("| boards without error | count | share |\n| --- | ---: | ---: |")
    for name, oracle in oracles(labels).items():
        count = sum(right(r, *oracle(r), labels, seam_labels) for r in reads)
        print(f"| {name} | {count} | {count / max(len(reads), 1):.1%} |")


if __name__ == "__main__":
    main()
