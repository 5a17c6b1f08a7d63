"""Real dice of every size read with crops that follow them: the shipped dice model on the
real photos' test split, each die cut at several scales (a die 1/X of its square wide), read
with the model's own crops and with the crops scaled as `referee calibrate pieces` measures
when shown a few dice a face (vision/piece_size.py). The dice shown are new to the model
(the photos it held out for validation); each count of dice shown is drawn with ten seeds.

Each reading is given twice: from one crop a square, and as the referee reads the squares
(the pipeline's default second look, `PipelineSettings().second_look`, at the squares in
doubt, cut about each square as scaled: `referee_lab.evaluate.second_look`). The scale is
measured as `calibrate pieces` measures it, from one crop a shown die.

Run: OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/dice_sizes.py [--draws 10] [--each]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from referee.app.pipeline import PipelineSettings
from referee.vision.classifier import Classifier
from referee.vision.crops import DIE_TO_SQUARE
from referee_lab.evaluate import SHOWN_SEED, DiceReport, evaluate_dice

CUTS = (DIE_TO_SQUARE, 1.5, 1.8, 2.2, 2.8)
SHOWN = (3, 5, 10)


def spread(values: list[float]) -> str:
    """min / median / max, as percentages."""
    a = np.array(values)
    return f"{a.min():.2%} / {np.median(a):.2%} / {a.max():.2%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--each", action="store_true",
                        help="also each draw's scale and dice read right, one crop / the referee")
    args = parser.parse_args()
    started = time.perf_counter()
    classifier = Classifier.load("dice")
    look = PipelineSettings().second_look
    print(f"model dice {classifier.card.sha256[:8]}; faces read right (308 test dice), "
          f"min / median / max over {args.draws} draws of the dice shown (seeds {SHOWN_SEED}-"
          f"{SHOWN_SEED + args.draws - 1}); one crop a square, and as the referee reads them "
          f"(the second look, {look})\n")
    print("| cut (die's share of its square) | model's own crops, one crop (read as empty) | "
          "as the referee reads | "
          + " | ".join(f"{n} shown a face, one crop | as the referee reads" for n in SHOWN)
          + " | scales measured (5 shown) | dice read as empty when scaled, most in a draw "
          "(one crop / referee) | tray squares read as empty, fewest (one crop / referee) |")
    print("| --- | ---: | ---: |" + " ---: | ---: |" * len(SHOWN) + " --- | ---: | ---: |")
    lines = []
    for cut in CUTS:
        alone = evaluate_dice(classifier, cut=cut, look=look)
        assert alone.looked is not None
        reports: list[DiceReport] = []
        cells = [f"{alone.face_accuracy:.2%} ({alone.faces_read_empty})",
                 f"{alone.looked.face_accuracy:.2%} ({alone.looked.faces_read_empty})"]
        scales = []
        for shown in SHOWN:
            drawn = [evaluate_dice(classifier, cut=cut, shown=shown, shown_seed=SHOWN_SEED + draw,
                                   look=look) for draw in range(args.draws)]
            looked = [r.looked for r in drawn if r.looked is not None]
            reports += drawn
            cells += [spread([r.face_accuracy for r in drawn]), spread([r.face_accuracy for r in looked])]
            if shown == 5:
                scales = [r.crop_scale for r in drawn]
            lines.append(f"cut {cut:g}, {shown} shown: " + ", ".join(
                f"{r.crop_scale:g} {r.dice_correct}/{r.looked.dice_correct}" for r in drawn
                if r.looked is not None))
        scaled = [r.looked for r in reports if r.looked is not None]
        empty = (f"{max(r.faces_read_empty for r in reports)} / "
                 f"{max(r.faces_read_empty for r in scaled)}")
        tray = (f"{min(r.empties_correct for r in [alone, *reports])}/{alone.empties} / "
                f"{min(r.empties_correct for r in [alone.looked, *scaled])}/{alone.empties}")
        print(f"| {cut:g} ({1 / cut:.2f}) | " + " | ".join(cells)
              + f" | {min(scales):g}-{max(scales):g} | {empty} | {tray} |", flush=True)
    if args.each:
        print("\nEach draw: the scale measured, dice read right one crop / as the referee reads\n")
        print("\n".join(lines))
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
