"""The second look at unsure squares (`referee.vision.second_look`): how many squares stay
in doubt (best label leading by under 3 nats, which holds a move up when it matters), how
many are read wrong, and whether any is read wrong with confidence (3 nats or more: what
could record a wrong move), for several choices of looks.

Frames: rendered boards, seeds 600000+ (apart from the training seeds and from the recorded
benchmarks' 500000+ and 900000+; the development set the look was chosen on), no hands,
crops cut at the true pose as the run time cuts them.

Run: PYTHONPATH=. python benchmarks/second_look.py [--pieces dice penta] [--frames 150]
[--model PATH] [--tilt LOW HIGH] [--more] [--time] (PATH: another model for the one piece set
named, e.g. a candidate; --more: also the variants in MORE; --tilt: the camera's tilt range in
degrees, default 0-40 as in training; 25 40 for the steep views where a die's sides show
other faces; --time: also what the looks cost, in the thread's CPU time on one thread, the
least of 20 runs: a board's first read (cut and classify every square, `read_squares` with
no second look), and the second look at one square in doubt, with and without the turns;
medians over the first 30 boards of 30 squares, 5x6)"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from referee.vision.classifier import Classifier
from referee.vision.crops import crop_squares
from referee.vision.second_look import SecondLook, lead, looked_again, read_squares
from referee_lab.renders import dice_squares, render_squares

FIRST_SEED = 600_000
CHOICES = {
    "first look only": SecondLook(below=0.0),
    "tighter: 0.85, 0.9, 0.95": SecondLook(scales=(0.85, 0.9, 0.95), shift=0.0, turns=(),
                                           located=()),
    "shifted 4% only": SecondLook(scales=(), located=()),
    "tighter 0.9, 0.95 + shifted 4%": SecondLook(turns=(), located=()),
    "tighter 0.9, 0.95, each turned 3 ways + shifted 4%": SecondLook(located=()),
    "the same, and round the die found, turned + shifted (default)": SecondLook(),
}
# --more: the variants also tried (dice_real.md), unturned: wider shifts, a looser crop beside
# the tighter ones (a die at its square's corner), a higher threshold; and a half turn only.
MORE = {
    "0.9, 0.95 + shifted 6%": SecondLook(shift=0.06, turns=(), located=()),
    "0.9, 0.95 + shifted 8%": SecondLook(shift=0.08, turns=(), located=()),
    "tighter 0.85, 0.9, 0.95 + shifted 4%": SecondLook(scales=(0.85, 0.9, 0.95), turns=(), located=()),
    "0.9, 0.95, looser 1.1 + shifted 4%": SecondLook(scales=(0.9, 0.95, 1.1), turns=(), located=()),
    "0.9, 0.95, looser 1.1 + shifted 6%": SecondLook(scales=(0.9, 0.95, 1.1), shift=0.06,
                                                     turns=(), located=()),
    "0.9, 0.95 + shifted 4%, below 4 nats": SecondLook(below=4.0, turns=(), located=()),
    "0.9, 0.95 + shifted 6%, below 4 nats": SecondLook(below=4.0, shift=0.06, turns=(), located=()),
    "0.9, 0.95, looser 1.1 below 4 nats": SecondLook(below=4.0, scales=(0.9, 0.95, 1.1),
                                                     turns=(), located=()),
    "0.9, 0.95, each turned half way + shifted 4%": SecondLook(turns=(2,), located=()),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pieces", nargs="+", default=["dice", "penta"])
    parser.add_argument("--frames", type=int, default=150)
    parser.add_argument("--model", help="a model file for the one piece set in --pieces")
    parser.add_argument("--tilt", nargs=2, type=float, default=[0.0, 40.0],
                        metavar=("LOW", "HIGH"))
    parser.add_argument("--more", action="store_true", help="also the variants in MORE")
    parser.add_argument("--time", action="store_true", help="also time the looks")
    args = parser.parse_args()
    choices = {**CHOICES, **MORE} if args.more else CHOICES
    tilt = (args.tilt[0], args.tilt[1])
    if args.model and len(args.pieces) != 1:
        parser.error("--model needs exactly one piece set in --pieces")
    print("| pieces | looks | squares | wrong | in doubt | wrong with confidence |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for pieces in args.pieces:
        classifier = Classifier.load(args.model or pieces)
        totals = {name: np.zeros(4, int) for name in choices}
        timed, doubted = [], []
        for seed in range(FIRST_SEED, FIRST_SEED + args.frames):
            rendered = (dice_squares(seed, hands=0.0, tilt=tilt) if pieces == "dice"
                        else render_squares(pieces, seed, hands=0.0, tilt=tilt))
            samples = rendered.samples if pieces == "dice" else rendered.samples[pieces]
            frame, quads = samples[0].image, np.array([s.quad for s in samples])
            first = classifier.predict(crop_squares(frame, list(quads), classifier.card.crop))
            truth = np.array([s.label for s in samples])
            doubted.append(int((lead(first) < SecondLook().below).sum()))
            if args.time and len(timed) < TIMED_FRAMES and len(quads) == 30:
                timed.append(_timings(classifier, frame, quads, first, rendered.truth.files,
                                      int(np.argmax(truth != 0))))
            for name, look in choices.items():
                read = looked_again(classifier, frame, quads, first, look)
                wrong, doubt = read.argmax(axis=1) != truth, lead(read) < 3.0
                totals[name] += [len(truth), wrong.sum(), doubt.sum(), (wrong & ~doubt).sum()]
        for name, (squares, wrong, doubt, sure_wrong) in totals.items():
            print(f"| {pieces} | {name} | {squares} | {wrong} | {doubt} | {sure_wrong} |",
                  flush=True)
        if timed:
            board, plain, turned, located = np.median(np.array(timed), axis=0)
            print(f"\n{pieces}, ms (median of {len(timed)} boards of 30 squares): first read "
                  f"{board:.2f}; second look at one square in doubt {plain:.2f} without turns, "
                  f"{turned:.2f} with, {located:.2f} also round the die found (default, a "
                  f"square with a die); squares in doubt at first look, a board: "
                  f"{np.mean(doubted):.2f} on average, at most {max(doubted)}\n")


TIMED_FRAMES = 30
REPEAT = 20


def _timings(classifier: Classifier, frame: np.ndarray, quads: np.ndarray, first: np.ndarray,
             files: int, die: int) -> tuple[float, float, float, float]:
    """ms: the board's first read; the second look at one square without and with the turns
    (about the square alone), and as the default looks at the square `die` (one with a die:
    found, then cut round)."""
    def least(work: Callable[[], object]) -> float:
        times = []
        for _ in range(REPEAT):
            start = time.thread_time()
            work()
            times.append(time.thread_time() - start)
        return 1000.0 * min(times)

    one, row = quads[die:die + 1], first[die:die + 1]
    board = least(lambda: read_squares(classifier, frame, quads, files, SecondLook(below=0.0)))
    plain = least(lambda: looked_again(classifier, frame, one, row,
                                       SecondLook(below=np.inf, turns=(), located=())))
    turned = least(lambda: looked_again(classifier, frame, one, row,
                                        SecondLook(below=np.inf, located=())))
    located = least(lambda: looked_again(classifier, frame, one, row, SecondLook(below=np.inf)))
    return board, plain, turned, located


if __name__ == "__main__":
    main()
