"""The board-corner network on its own: how near its four corners fall to the grid's true
outer corners on the 3x3 frames (or, `--boards`, the bigger boards') of the finder's named
sets (`localise_sets.py`), and how long a guess takes on one core.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/corner_net.py held-out x3-held-out --cache /tmp/lf
    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/corner_net.py held-out --boards bigger \
        --model corners-big --cache /tmp/lf

Error: the largest of the four corner distances (each true corner to the nearest guessed
one), as a share of the grid's longer diagonal, as `localise_accuracy.md` measures the finder.
The frames are those `localise_sets.py` renders and caches; the network was trained on other
seeds (`corner_data.FIRST_SEED` on)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cv2
import numpy as np

from benchmarks.localise_accuracy import rendered_frame
from benchmarks.localise_sets import SETS, _wanted
from referee.vision.corner_net import CornerNet, worst_corner_error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+", choices=sorted(SETS))
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--model", default="corners")
    parser.add_argument("--boards", choices=("3x3", "bigger", "all"), default="3x3",
                        help="the sets' 3x3 frames (default), their bigger boards', or all")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    net = CornerNet.load(args.model)
    errors: list[float] = []
    hands: list[bool] = []
    ms: list[float] = []
    for name in args.sets:
        for fs in SETS[name]:
            for i in range(fs.frames):
                if not _wanted(fs, i, args.boards):
                    continue
                sample = rendered_frame(i, fs.seed, 0.0, fs.games, args.cache / fs.cache_folder,
                                        fs.legacy_hands)
                t0 = time.perf_counter()
                guess = net.guess(sample.frame)
                ms.append(1000 * (time.perf_counter() - t0))
                c = sample.corners
                diagonal = float(max(np.linalg.norm(c[2] - c[0]), np.linalg.norm(c[3] - c[1])))
                if guess is None:
                    errors.append(float("inf"))
                else:
                    errors.append(100 * worst_corner_error(guess.points, c) / diagonal)
                hands.append(sample.hand)
    e, hand = np.array(errors), np.array(hands)
    print("| frames | n | no four corners | within 1% | within 2% | within 5% | median error |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, pick in (("all", np.ones_like(hand)), ("no hand", ~hand), ("hand", hand)):
        sub = e[pick]
        print(f"| {label} | {len(sub)} | {int(np.isinf(sub).sum())} | {np.mean(sub < 1):.1%} | "
              f"{np.mean(sub < 2):.1%} | {np.mean(sub < 5):.1%} | {np.median(sub):.2f}% |")
    print(f"\nguess: {np.median(ms):.1f} ms median, {np.percentile(ms, 95):.1f} ms 95th percentile "
          f"(1280x720 frame, shrink and network, one thread)")


if __name__ == "__main__":
    main()
