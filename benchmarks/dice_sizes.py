"""Real dice of every size read with crops that follow them: the shipped dice model on the
real photos' test split, each die cut at several scales (a die 1/X of its square wide), read
with the model's own crops and with the crops scaled as `referee calibrate pieces` measures
when shown a few dice a face (vision/piece_size.py). The dice shown are new to the model
(the photos it held out for validation); each count of dice shown is drawn with ten seeds.

Run: OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/dice_sizes.py [--draws 10]
"""

from __future__ import annotations

import argparse

import numpy as np

from referee.vision.classifier import Classifier
from referee.vision.crops import DIE_TO_SQUARE
from referee_lab.evaluate import SHOWN_SEED, evaluate_dice

CUTS = (DIE_TO_SQUARE, 1.5, 1.8, 2.2, 2.8)
SHOWN = (3, 5, 10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--draws", type=int, default=10)
    args = parser.parse_args()
    classifier = Classifier.load("dice")
    print(f"model dice {classifier.card.sha256[:8]}; faces read right (308 test dice), "
          f"min / median / max over {args.draws} draws of the dice shown\n")
    print("| cut (die's share of its square) | model's own crops | "
          + " | ".join(f"{n} shown a face" for n in SHOWN) + " | scales measured (5 shown) |")
    print("| --- | ---: |" + " ---: |" * len(SHOWN) + " --- |")
    for cut in CUTS:
        alone = evaluate_dice(classifier, cut=cut)
        cells, scales = [], []
        for shown in SHOWN:
            accuracies = []
            for draw in range(args.draws):
                report = evaluate_dice(classifier, cut=cut, shown=shown, shown_seed=SHOWN_SEED + draw)
                accuracies.append(report.face_accuracy)
                if shown == 5:
                    scales.append(report.crop_scale)
            a = np.array(accuracies)
            cells.append(f"{a.min():.2%} / {np.median(a):.2%} / {a.max():.2%}")
        print(f"| {cut:g} ({1 / cut:.2f}) | {alone.face_accuracy:.2%} | " + " | ".join(cells)
              + f" | {min(scales):g}-{max(scales):g} |", flush=True)


if __name__ == "__main__":
    main()
