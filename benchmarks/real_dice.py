"""Dice models on the real photos cut at many sizes: each die's square `cut` times its
labelled box (a die 1 / cut of its square wide), the model's crop margin around it, as
`referee-lab eval --pieces dice --cut X` cuts it. One row a cut: faces read right and dice
read as empty, from one crop a square and as the referee reads them (the pipeline's second
look at the squares in doubt, `second_look.look_again`: without the turns, with them, and as
it ships, also cut round the die found in its square), and tray squares read as empty.

`--split val` reads the photos the model held out for validation (its card's
`recipe.photos_val`), where the looks are chosen; the test split (default) only measures.
`--variants`: instead, faces read (read as empty) with each look in VARIANTS, one row a look,
at cuts 1.2, 1.4, 1.5, 1.8 and 2.2 (or those given).

Run: OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/real_dice.py [--split val]
[--model dice] [--model OTHER.onnx ...] [--cut X ...] [--variants]"""

from __future__ import annotations

import argparse
from dataclasses import replace

from referee.vision.classifier import Classifier
from referee.vision.second_look import SecondLook
from referee_lab.evaluate import DiceReport, evaluate_dice

CUTS = (1.05, 1.2, 1.4, 1.5, 1.8, 2.2, 2.8, 3.3)
LOOKS = {"second look, no turns": SecondLook(turns=(), located=()),
         "second look, turned": SecondLook(located=()),
         "second look, turned and round the die (default)": SecondLook()}
VARIANT_CUTS = (1.2, 1.4, 1.5, 1.8, 2.2)
_SQUARE = SecondLook(located=())  # the looks about the square alone
VARIANTS = {
    "one crop": SecondLook(below=0.0),
    "0.9, 0.95 + shifted 4%, no turns": replace(_SQUARE, turns=()),
    "0.9, 0.95 each turned half way + shifted 4%": replace(_SQUARE, turns=(2,)),
    "0.9, 0.95 each turned a quarter and half way + shifted 4%": replace(_SQUARE, turns=(1, 2)),
    "0.9, 0.95 each turned 3 ways + shifted 4%": _SQUARE,
    "1 (the first crop again), 0.9, 0.95 each turned 3 ways + shifted 4%":
        replace(_SQUARE, scales=(1.0, 0.9, 0.95)),
    "0.85, 0.9, 0.95 each turned 3 ways + shifted 4%": replace(_SQUARE, scales=(0.85, 0.9, 0.95)),
    "0.9, 0.95 turned + shifted, below 4 nats": replace(_SQUARE, below=4.0),
    "and round the die found: 1, 0.9 of the own cut, turned + shifted (default)": SecondLook(),
    "and round the die found: 1 of the own cut": SecondLook(located=(1.0,)),
    "and round the die found: 1, 0.9, 0.8 of the own cut": SecondLook(located=(1.0, 0.9, 0.8)),
    "and round the die found: 1.1, 0.95 of the own cut": SecondLook(located=(1.1, 0.95)),
    "and round the die found: 1.25, 1.1 of the own cut": SecondLook(located=(1.25, 1.1)),
    "round the die found, none tighter about the square":
        SecondLook(scales=(), located=(1.0, 0.9)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", action="append", help="a model name or path (default dice)")
    parser.add_argument("--split", choices=("test", "val"), default="test")
    parser.add_argument("--cut", action="append", type=float, help="only these cuts")
    parser.add_argument("--variants", action="store_true", help="the looks in VARIANTS")
    args = parser.parse_args()
    for name in args.model or ["dice"]:
        classifier = Classifier.load(name)
        if args.variants:
            _variants(classifier, name, args.split, args.cut or VARIANT_CUTS)
            continue
        print(f"\n`{name}` (sha256 `{classifier.card.sha256[:8]}`), {args.split} split: faces "
              "read (read as empty)\n")
        print("| cut (x box) | die width (of square) | one crop | " + " | ".join(LOOKS)
              + " | empties read (one crop / default) | wrong with 3+ nats (each) |")
        print("| ---: | ---: | ---: |" + " ---: |" * len(LOOKS) + " ---: | ---: |")
        for cut in args.cut or CUTS:
            reports = [evaluate_dice(classifier, cut=cut, look=look, split=args.split)
                       for look in LOOKS.values()]
            first = reports[0]
            looked = [r.looked for r in reports if r.looked is not None]
            print(f"| {cut:g} | {1 / cut:.2f} | {_faces(first)} | "
                  + " | ".join(_faces(r) for r in looked)
                  + f" | {first.empties_correct}/{first.empties} / "
                    f"{looked[-1].empties_correct}/{looked[-1].empties} | "
                    + " / ".join(str(r.sure_wrong) for r in (first, *looked)) + " |", flush=True)


def _variants(classifier: Classifier, name: str, split: str, cuts: list[float]) -> None:
    print(f"\n`{name}` (sha256 `{classifier.card.sha256[:8]}`), {split} split: faces read "
          "(read as empty)\n")
    print("| looks | " + " | ".join(f"{cut:g}" for cut in cuts) + " |")
    print("| --- |" + " ---: |" * len(cuts))
    for label, look in VARIANTS.items():
        cells = []
        for cut in cuts:
            looked = evaluate_dice(classifier, cut=cut, look=look, split=split).looked
            assert looked is not None
            cells.append(f"{looked.dice_correct}/{looked.dice} ({looked.faces_read_empty})")
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def _faces(report: DiceReport) -> str:
    return (f"{report.face_accuracy:.2%} ({report.dice_correct}/{report.dice}; "
            f"{report.faces_read_empty})")


if __name__ == "__main__":
    main()
