"""Dice model on rendered boards it never saw: squares wrong and boards read without error.

Frames come from seeds far from the training seeds (training used 0–1499), so boards,
tables, dice colours, light and camera are drawn afresh; the crops are cut where the true
pose puts each square's top face, exactly as the referee cuts them at run time, so this
measures the classifier, not the board finder. Squares a hand covers are left out.

With --second-look the squares are also read as the referee reads them: the pipeline's own
second look (`PipelineSettings().second_look`, through `looked_again`, as `BoardReader.read`
calls it) at the squares the first look is unsure of, and beside it the second look about the
square alone (not cut round the die found in it); every reading is counted, and --dump then
writes the squares the pipeline's second look gets wrong.

Run: PYTHONPATH=. python benchmarks/dice_renders.py [--model dice] [--frames 200]
[--first-seed 500000] [--second-look] [--dump DIR] (DIR: each wrong square's crop as a PNG
named seed-square-true-read-confidence, to look at, and beside it the whole frame with the
crop's quad in red and, for a die, its true top-face centre as a green dot; the centre's
offset from the crop quad's centre, in square sides, is printed: 0 is centred, 0.5 on its
edge)"""

from __future__ import annotations

import argparse
import dataclasses
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from referee.app.pipeline import PipelineSettings
from referee.vision.classifier import Classifier
from referee.vision.crops import CropSpec, crop_squares
from referee.vision.second_look import lead, looked_again
from referee_lab.renders import RenderedSquares, dice_squares
from referee_lab.training import write_card

FIRST_SEED = 500_000


def write_frame(path: Path, rendered: RenderedSquares, index: int) -> None:
    """The whole frame of a wrong square: its crop quad (red) and, for a die, the true
    top-face centre (green); print that centre's offset from the crop's centre."""
    sample, truth = rendered.samples[index], rendered.truth
    image = sample.image.copy()
    cv2.polylines(image, [sample.quad.astype(np.int32).reshape(-1, 1, 2)], True, (0, 0, 255), 2)
    name = square_name_of(rendered, index)
    top = dict(truth.tops).get(name)
    if top is not None:
        cv2.circle(image, (round(top[0]), round(top[1])), 4, (0, 255, 0), -1)
        u, v = top_offset(sample.quad, top)
        print(f"{path.name}: {name}, top-face centre off the crop's centre by "
              f"{u:+.2f} across, {v:+.2f} towards the camera (square sides)")
    cv2.imwrite(str(path), image)


def square_name_of(rendered: RenderedSquares, index: int) -> str:
    """The square sample `index` shows (samples keep rules order, covered squares left out)."""
    truth = rendered.truth
    names = [f"{'abcdefghi'[i % truth.files]}{i // truth.files + 1}"
             for i in range(truth.files * truth.ranks)]
    covered = set(truth.occluded)
    shown = [n for n in names if n not in covered]
    return shown[index]


def top_offset(quad: np.ndarray, point: tuple[float, float]) -> tuple[float, float]:
    """Where `point` lies in `quad` (far-left, far-right, near-right, near-left) relative to
    its centre, in quad sides: (across, towards the near edge)."""
    to_unit = cv2.getPerspectiveTransform(
        quad.astype(np.float32), np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32))
    u, v = cv2.perspectiveTransform(np.array([[point]], np.float32), to_unit)[0, 0]
    return float(u) - 0.5, float(v) - 0.5


@dataclasses.dataclass
class Tally:
    """One reading's figures over the boards: squares, wrong, boards, boards without error,
    squares left in doubt (a lead under 3 nats), and what was confused with what."""

    squares: int = 0
    wrong: int = 0
    boards: int = 0
    perfect: int = 0
    doubt: int = 0
    confusions: Counter[tuple[str, str]] = dataclasses.field(default_factory=Counter)

    def add(self, truth: np.ndarray, probabilities: np.ndarray, labels: tuple[str, ...]
            ) -> np.ndarray:
        """Count one board; return the indices of its wrong squares."""
        predicted = probabilities.argmax(axis=1)
        misses = np.flatnonzero(predicted != truth)
        for i in misses:
            self.confusions[(labels[truth[i]], labels[predicted[i]])] += 1
        self.squares += len(truth)
        self.wrong += len(misses)
        self.boards += 1
        self.perfect += not len(misses)
        self.doubt += int((lead(probabilities) < 3.0).sum())
        return misses

    def row(self, name: str) -> str:
        return (f"| {name} | {self.squares} | {self.wrong} | {100 * self.wrong / self.squares:.2f} "
                f"| {self.doubt} | {self.boards} | {self.perfect} | "
                f"{100 * self.perfect / self.boards:.1f} |")


def dump_misses(dump: Path, rendered: RenderedSquares, seed: int, crops: np.ndarray,
                probabilities: np.ndarray, misses: np.ndarray, labels: tuple[str, ...]) -> None:
    samples = rendered.samples
    for i in misses:
        true, read = labels[samples[i].label], labels[int(probabilities[i].argmax())]
        name = f"{seed}-{i:02d}-{true}-{read}-{probabilities[i].max():.2f}.png"
        wide = crop_squares(samples[0].image, [samples[i].quad], CropSpec(96, 0.5))[0]
        cv2.imwrite(str(dump / name), np.hstack([cv2.resize(crops[i], (96, 96)), wide]))
        write_frame(dump / f"{name[:-4]}-frame.png", rendered, int(i))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="dice")
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=FIRST_SEED,
                        help="other seeds (e.g. 600000) for a development set apart from the "
                        "recorded benchmark")
    parser.add_argument("--second-look", action="store_true",
                        help="also read with the pipeline's second look at unsure squares, as "
                        "the referee reads; --dump then writes that reading's wrong squares")
    parser.add_argument("--dump", help="folder for the crops of the wrong squares")
    parser.add_argument("--record", action="store_true",
                        help="write the figures into the model card's metrics.rendered_boards "
                        "(the card only: the .onnx and its sha256 stay)")
    args = parser.parse_args()
    dump = Path(args.dump) if args.dump else None
    if dump:
        dump.mkdir(parents=True, exist_ok=True)
    classifier = Classifier.load(args.model)
    labels = tuple(classifier.labels)
    look = PipelineSettings().second_look
    about_square = dataclasses.replace(look, located=())  # the looks about the square alone
    first, second, square_only = Tally(), Tally(), Tally()
    for seed in range(args.first_seed, args.first_seed + args.frames):
        rendered = dice_squares(seed, hands=0.0)
        samples = rendered.samples
        frame, quads = samples[0].image, np.array([s.quad for s in samples])
        crops = crop_squares(frame, list(quads), classifier.card.crop)
        probabilities = classifier.predict(crops)
        truth = np.array([s.label for s in samples])
        misses = first.add(truth, probabilities, labels)
        if args.second_look:
            square_only.add(truth, looked_again(classifier, frame, quads, probabilities,
                                                about_square), labels)
            probabilities = looked_again(classifier, frame, quads, probabilities, look)
            misses = second.add(truth, probabilities, labels)
        if dump:
            dump_misses(dump, rendered, seed, crops, probabilities, misses, labels)
    print(f"model {classifier.card.name} ({classifier.card.sha256[:12]}), {first.boards} rendered "
          f"boards, seeds {args.first_seed}-{args.first_seed + args.frames - 1}")
    print("| reading | squares | wrong | % wrong | in doubt (< 3 nats) | boards "
          "| read without error | % |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(first.row("first look"))
    if args.second_look:
        looks = (f"below {look.below:g} nats, scales {', '.join(f'{s:g}' for s in look.scales)}, "
                 f"shift {look.shift:g}")
        print(square_only.row(f"second look about the square alone ({looks})"))
        print(second.row(f"second look, also round the die found ({looks}; "
                         f"{', '.join(f'{s:g}' for s in look.located)} of the own cut)"))
    for name, tally in (("first look", first), ("second look", second)):
        if tally.boards:
            print(f"\nmost common confusions, {name} (true -> read): "
                  + ", ".join(f"{t}->{p} x{n}" for (t, p), n in tally.confusions.most_common(8)))
    if args.record:
        record(classifier, first, second if args.second_look else None, args)


def record(classifier: Classifier, first: Tally, second: Tally | None,
           args: argparse.Namespace) -> None:
    """Write the figures into the card (the first look's as before; the second look's beside
    them, as the referee reads, when measured)."""
    metrics = dict(classifier.card.metrics)
    figures: dict[str, object] = {
        "boards": first.boards, "squares": first.squares, "squares_wrong": first.wrong,
        "percent_wrong": round(100 * first.wrong / first.squares, 2),
        "boards_without_error": first.perfect,
        "seeds": f"{args.first_seed}-{args.first_seed + args.frames - 1}",
        "command": ("PYTHONPATH=. python benchmarks/dice_renders.py --model dice "
                    f"--frames {args.frames}"
                    + (f" --first-seed {args.first_seed}" if args.first_seed != FIRST_SEED
                       else "")
                    + (" --second-look" if second else "")),
        "note": "rendered boards apart from the training seeds, measured after training; "
                "not used to choose checkpoints or recipes (those: seeds from 600000 and "
                "800000), only to check a model before committing it"}
    if second:
        figures["second_look"] = {
            "squares_wrong": second.wrong,
            "percent_wrong": round(100 * second.wrong / second.squares, 2),
            "boards_without_error": second.perfect,
            "note": "as the referee reads: the pipeline's default second look at the squares "
                    "the first look leads by under 3 nats"}
    metrics["rendered_boards"] = figures
    card = dataclasses.replace(classifier.card, metrics=metrics)
    write_card(card, classifier.path.with_suffix(".json"))
    print(f"recorded in {classifier.path.with_suffix('.json')}")


if __name__ == "__main__":
    main()
