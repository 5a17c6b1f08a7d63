"""A contact sheet of the dice model's training crops at the ends of its size range: each row
one source (the real photos' train split, rendered squares) cut so the die is 0.3 or 0.95 of
its square wide, with the recipe's augmentation, and a row of empties. To look at, not a
figure: `PYTHONPATH=. python benchmarks/dice_size_sheet.py --extra CROPS --out sheet.png`."""

from __future__ import annotations

import argparse
from dataclasses import replace

import cv2
import numpy as np

from referee_lab.augment import Augment, augmented_crop
from referee_lab.datasets import EMPTY, RealDice, Sample, folder_samples, split_groups
from referee_lab.training import TrainConfig, tray_empties

COLUMNS = 12


def row(samples: list[Sample], augment: Augment, config: TrainConfig, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picks = [samples[int(i)] for i in rng.choice(len(samples), COLUMNS, replace=False)]
    crops = [augmented_crop(s, config.spec, rng, augment) for s in picks]
    return np.concatenate([cv2.copyMakeBorder(c, 2, 2, 2, 2, cv2.BORDER_CONSTANT) for c in crops], 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--extra", help="a folder of rendered crops (write_crop_folder)")
    parser.add_argument("--out", default="dice-size-sheet.png")
    parser.add_argument("--intrude", type=float, default=0.5,
                        help="real_intrude of the recipe (the shipped model's: 0.5)")
    args = parser.parse_args()
    config = replace(TrainConfig(), size=64, real_intrude=args.intrude)
    real = RealDice.load("train")
    fit = split_groups(real.files, fraction=config.val_fraction, seed=config.seed)[0]
    dice = real.die_samples(fit)
    room = real.room(dice, intrude=config.real_intrude)
    dice = [replace(s, room=r) for s, r in zip(dice, room, strict=True)]
    sources = {"real": dice}
    if args.extra:
        rendered = [replace(s, room=min(s.room, config.render_room)) for s in
                    folder_samples(args.extra, margin=0.5, die_width=config.render_width)]
        sources["rendered"] = [s for s in rendered if s.label != EMPTY]
        sources["rendered empty"] = [s for s in rendered if s.label == EMPTY]
    sources["tray empty"] = tray_empties(real, np.random.default_rng(0), config, fit)
    rows = []
    for width in (0.3, 0.95):
        augment = replace(config.augment, die_widths=(width, width), p_size=1.0)
        for seed, samples in enumerate(sources.values()):
            rows.append(row(samples, augment, config, seed))
    cv2.imwrite(args.out, np.concatenate(rows, 0))
    print(f"wrote {args.out}: rows {list(sources)} at die width 0.3, then 0.95")


if __name__ == "__main__":
    main()
