"""Dice models on the real photos' test split cut at many sizes: each die's square `cut` times
its labelled box (a die 1 / cut of its square wide), the model's crop margin around it, as
`referee-lab eval --pieces dice --cut X` cuts it. One row a cut: face accuracy, dice read
as empty, tray squares read as empty. Measuring only (the test split chooses nothing).

Run: PYTHONPATH=. python benchmarks/real_dice.py [--model dice] [--model OTHER.onnx ...]"""

from __future__ import annotations

import argparse

from referee.vision.classifier import Classifier
from referee_lab.evaluate import evaluate_dice

CUTS = (1.05, 1.2, 1.4, 1.5, 1.8, 2.2, 2.8, 3.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", action="append", help="a model name or path (default dice)")
    args = parser.parse_args()
    for name in args.model or ["dice"]:
        classifier = Classifier.load(name)
        print(f"\n`{name}` (sha256 `{classifier.card.sha256[:8]}`)\n")
        print("| cut (x box) | die width (of square) | faces read | read as empty | empties read |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for cut in CUTS:
            r = evaluate_dice(classifier, cut=cut)
            print(f"| {cut:g} | {1 / cut:.2f} | {r.face_accuracy:.2%} ({r.dice_correct}/{r.dice}) "
                  f"| {r.faces_read_empty} | {r.empties_correct}/{r.empties} |")


if __name__ == "__main__":
    main()
