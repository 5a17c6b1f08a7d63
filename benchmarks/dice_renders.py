"""Dice model on rendered boards it never saw: squares wrong and boards read without error.

Frames come from seeds far from the training seeds (training used 0–1499), so boards,
tables, dice colours, light and camera are drawn afresh; the crops are cut where the true
pose puts each square's top face, exactly as the referee cuts them at run time, so this
measures the classifier, not the board finder. Squares a hand covers are left out.

Run: PYTHONPATH=. python benchmarks/dice_renders.py [--model dice] [--frames 200]"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from referee.renders import dice_squares
from referee.vision.classifier import Classifier
from referee.vision.crops import crop_squares

FIRST_SEED = 500_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="dice")
    parser.add_argument("--frames", type=int, default=200)
    args = parser.parse_args()
    classifier = Classifier.load(args.model)
    squares = wrong = boards = perfect = 0
    confusions: Counter[tuple[str, str]] = Counter()
    for seed in range(FIRST_SEED, FIRST_SEED + args.frames):
        rendered = dice_squares(seed, hands=0.0)
        samples = rendered.samples
        crops = crop_squares(samples[0].image, [s.quad for s in samples], classifier.card.crop)
        predicted = classifier.predict(crops).argmax(axis=1)
        truth = np.array([s.label for s in samples])
        misses = np.flatnonzero(predicted != truth)
        for i in misses:
            confusions[(classifier.labels[truth[i]], classifier.labels[predicted[i]])] += 1
        squares += len(truth)
        wrong += len(misses)
        boards += 1
        perfect += not len(misses)
    print(f"model {classifier.card.name} ({classifier.card.sha256[:12]}), {boards} rendered boards")
    print("| squares | wrong | % wrong | boards | read without error | % |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| {squares} | {wrong} | {100 * wrong / squares:.2f} | {boards} | {perfect} | "
          f"{100 * perfect / boards:.1f} |")
    print("\nmost common confusions (true -> read): "
          + ", ".join(f"{t}->{p} x{n}" for (t, p), n in confusions.most_common(8)))


if __name__ == "__main__":
    main()
