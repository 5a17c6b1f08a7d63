"""The piece head (referee/vision/adapt.py) on the real dice photographs: fitted on k dice per
face and k empty squares drawn from the TRAIN split (10 draws each), then reading the whole
TEST split, against the model alone; in the look the model was trained on and in three it
was not (the dice cut at 1.8 and 2.2 times their box instead of 1.4, and the photos' colours
inverted: light pips on dark dice and a dark tray). Also the time to fit and to apply on one
core. Writes benchmarks/adaptation.md.

    PYTHONPATH=. .venv/bin/python benchmarks/adaptation.py [--model PATH] [--draws N]

A model without a `features` output is given one in a temporary copy (`referee-lab
expose-features`, the lab extra)."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core, before numpy loads

import argparse
import datetime
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from referee.vision.adapt import PENALTY_SCALE, fit_head
from referee.vision.classifier import Classifier, resolve_model
from referee.vision.crops import DIE_TO_SQUARE, box_square
from referee_lab.datasets import DICE_LABELS, RealDice, Sample, fixed_crops
from referee_lab.evaluate import EMPTIES_PER_PHOTO, EVAL_SEED

OUT = Path(__file__).with_name("adaptation.md")
FOOTAGE = "tests/data/footage/rinne-penta-whole.mp4"
KS = (3, 5, 10)
TRAIN_EMPTY_SEED = 7  # the train split's empty squares (the test's are evaluate.EVAL_SEED's)
LOOKS = (("as trained: dice cut at 1.4x their box", DIE_TO_SQUARE, False),
         ("cut at 1.8x their box", 1.8, False),
         ("cut at 2.2x their box", 2.2, False),
         ("colours inverted (light pips on dark dice)", DIE_TO_SQUARE, True))


@dataclass(frozen=True)
class Split:
    features: np.ndarray  # (turns, N, width): the crops as cut, then turned a quarter at a time
    probs: np.ndarray  # (turns, N, labels)
    labels: np.ndarray


def read_split(classifier: Classifier, split: str, scale: float, invert: bool) -> Split:
    """A split's squares read by the model; the train split's also turned where the model
    turns freely (as `calibrate pieces` fits)."""
    data = RealDice.load(split)
    dice = [Sample(s.image, box_square(d.box, scale=scale), s.label, s.group)
            for s, d in zip(data.die_samples(), data.dice, strict=True)]
    seed = EVAL_SEED if split == "test" else TRAIN_EMPTY_SEED
    samples = dice + data.empty_samples(np.random.default_rng(seed), EMPTIES_PER_PHOTO)
    crops = fixed_crops(samples, classifier.card.crop)
    crops = 255 - crops if invert else crops
    turns = 4 if split == "train" and classifier.card.turns_freely else 1
    read = [classifier.features_and_probabilities(np.ascontiguousarray(np.rot90(crops, k, axes=(1, 2))))
            for k in range(turns)]
    return Split(np.stack([f for f, _ in read]), np.stack([p for _, p in read]),
                 np.array([s.label for s in samples]))


def accuracy(probs: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    read, dice = probs.argmax(axis=1), labels > 0
    return float((read[dice] == labels[dice]).mean()), float((read[~dice] == labels[~dice]).mean())


def confusion(probs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    matrix = np.zeros((len(DICE_LABELS), len(DICE_LABELS)), int)
    np.add.at(matrix, (labels, probs.argmax(axis=1)), 1)
    return matrix


def draw(train: Split, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.choice(np.flatnonzero(train.labels == c), k, replace=False)
                           for c in range(len(DICE_LABELS))])


def adapt(classifier: Classifier, train: Split, test: Split, k: int, seed: int, turns: int
          ) -> tuple[np.ndarray, float]:
    """The test split read through a head fitted on one draw (k = 0: the whole train split),
    its crops in `turns` quarter turns, and the fit's seconds."""
    chosen = draw(train, k, seed) if k else np.arange(len(train.labels))
    card = classifier.card
    start = time.process_time()
    head = fit_head(card.name, card.sha256, card.labels,
                    np.concatenate(train.features[:turns, chosen]),
                    np.concatenate(train.probs[:turns, chosen]), np.tile(train.labels[chosen], turns),
                    groups=np.tile(chosen, turns))
    seconds = time.process_time() - start
    return head.apply(test.features[0], test.probs[0]), seconds


def class_means(train: Split, test: Split, k: int, seed: int) -> np.ndarray:
    """The form not chosen: each label's mean L2-normalised feature, the test squares' cosine
    to it (scaled by 15) as a second opinion, averaged with the model's in log space."""
    chosen = draw(train, k, seed)
    unit = train.features[:, chosen] / np.linalg.norm(train.features[:, chosen], axis=2, keepdims=True)
    labels = train.labels[chosen]
    means = np.stack([unit[:, labels == c].reshape(-1, unit.shape[2]).mean(axis=0)
                      for c in range(len(DICE_LABELS))])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    test_unit = test.features[0] / np.linalg.norm(test.features[0], axis=1, keepdims=True)
    logits = 15.0 * test_unit @ means.T
    opinion = logits - np.log(np.exp(logits - logits.max(axis=1, keepdims=True)).sum(
        axis=1, keepdims=True)) - logits.max(axis=1, keepdims=True)
    return np.asarray(0.5 * np.log(np.clip(test.probs[0], 1e-9, 1.0)) + 0.5 * opinion)


def table_rows(classifier: Classifier, train: Split, test: Split, draws: int
               ) -> tuple[list[str], list[float], dict[int, np.ndarray]]:
    face, empty = accuracy(test.probs[0], test.labels)
    rows = [f"| model alone | {face:.2%} | {empty:.2%} | | | | |"]
    fits: list[float] = []
    summed: dict[int, np.ndarray] = {}
    for k in KS:
        scores, plain, means, matrices = [], [], [], []
        for seed in range(draws):
            probs, seconds = adapt(classifier, train, test, k, seed, len(train.features))
            fits.append(seconds)
            scores.append(accuracy(probs, test.labels))
            matrices.append(confusion(probs, test.labels))
            plain.append(accuracy(adapt(classifier, train, test, k, seed, 1)[0], test.labels)[0])
            means.append(accuracy(class_means(train, test, k, seed), test.labels)[0])
        s = np.array(scores)
        summed[k] = np.sum(matrices, axis=0)
        worse = int((s[:, 0] < face - 1e-9).sum())
        rows.append(f"| k = {k} | {s[:, 0].mean():.2%} ({s[:, 0].min():.2%}-{s[:, 0].max():.2%}) | "
                    f"{s[:, 1].mean():.2%} (min {s[:, 1].min():.2%}) | {worse} of {draws} | "
                    f"{s[:, 0].mean() - face:+.2%} | {np.mean(plain) - face:+.2%} | "
                    f"{np.mean(means) - face:+.2%} |")
    whole, _ = adapt(classifier, train, test, 0, 0, len(train.features))
    whole_face, whole_empty = accuracy(whole, test.labels)
    plain_face = accuracy(adapt(classifier, train, test, 0, 0, 1)[0], test.labels)[0]
    rows.append(f"| the whole train split ({int((train.labels > 0).sum())} dice) | {whole_face:.2%} | "
                f"{whole_empty:.2%} | | {whole_face - face:+.2%} | {plain_face - face:+.2%} | |")
    return rows, fits, summed


def matrix_lines(matrix: np.ndarray, draws: int) -> list[str]:
    head = "| true \\ read | " + " | ".join(DICE_LABELS) + " |"
    lines = [head, "|" + " --- |" * (len(DICE_LABELS) + 1)]
    for t, row in enumerate(matrix):
        cells = " | ".join(f"{v / draws:g}" for v in row)
        lines.append(f"| **{DICE_LABELS[t]}** | {cells} |")
    return lines


def apply_ms(classifier: Classifier, train: Split, test: Split) -> tuple[float, float, float]:
    """Milliseconds a board of 30 squares (the fastest of 7 rounds of 30, the three taken in
    turn): the model's probabilities alone, features and probabilities in one run, and the
    head on them."""
    card = classifier.card
    chosen = draw(train, 5, 0)
    head = fit_head(card.name, card.sha256, card.labels, train.features[0, chosen],
                    train.probs[0, chosen], train.labels[chosen])
    crops = np.random.default_rng(0).integers(0, 256, (30, card.input_size, card.input_size, 3),
                                              dtype=np.uint8)
    runs = (lambda: classifier.predict(crops), lambda: classifier.features_and_probabilities(crops),
            lambda: head.apply(test.features[0, :30], test.probs[0, :30]))
    best = [np.inf] * len(runs)
    for _ in range(7):
        for i, run in enumerate(runs):
            run()
            start = time.process_time()
            for _ in range(30):
                run()
            best[i] = min(best[i], (time.process_time() - start) / 30 * 1000)
    return best[0], best[1], best[2]


def calibrate_cpu() -> tuple[int, int, float]:
    """`calibrate pieces` on committed footage: frames, squares and the CPU seconds it took."""
    from referee.app.calibrate_pieces import calibrate_pieces
    from referee.calibration.files import BoardProfile, PlayerPieces, save_board

    pieces = PlayerPieces("white", "#f0f0f0", "#1a1a1a")
    with tempfile.TemporaryDirectory() as tmp:
        board = Path(tmp) / "board.yaml"
        save_board(BoardProfile("rinne", 5, 6, None, None, "bottom", None, pieces, pieces), board)
        start = time.process_time()
        result = calibrate_pieces("rinne", str(FOOTAGE), board, pieces="penta")
        return len(result.frames), result.crops, time.process_time() - start


def with_features(model: str, folder: Path) -> Classifier:
    classifier = Classifier.load(model)
    if classifier.has_features:
        return classifier
    from referee_lab.features import expose_features

    onnx_path, card_path = resolve_model(model)
    for path in (onnx_path, card_path):
        shutil.copy(path, folder / path.name)
    expose_features(folder / onnx_path.name)
    return Classifier.load(folder / onnx_path.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="dice")
    parser.add_argument("--draws", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        classifier = with_features(args.model, Path(tmp))
        report(classifier, args)


def report(classifier: Classifier, args: argparse.Namespace) -> None:
    draws = args.draws
    lines = [
        "# Learning the players' own pieces: the piece head on the real dice",
        "",
        f"`PYTHONPATH=. .venv/bin/python benchmarks/adaptation.py` ({datetime.date.today()}, "
        f"{platform.processor() or platform.machine()}, one thread: `OMP_NUM_THREADS=1`, "
        "onnxruntime one thread; times are this process's CPU time, the machine being shared).",
        "",
        f"Model `{classifier.card.name}` (sha256 `{classifier.card.sha256[:12]}`, its `features` "
        f"{'shipped' if 'tmp' not in str(classifier.path) else 'added to a temporary copy'}). "
        f"The head (`referee/vision/adapt.py`; its penalty {PENALTY_SCALE} over the examples a "
        "label, 0.1 at k = 3 and 0.03 at k = 10) is fitted on k dice of each face and k empty "
        "tray squares drawn at random from the real photos' TRAIN split, each also turned a "
        "quarter, a half and three quarters, as `referee calibrate pieces` turns a model's "
        f"crops where its card says it learnt that a die turns freely ({draws} draws, seeds "
        f"0-{draws - 1}); it then reads the whole TEST split: 308 dice of 50 photos and 200 "
        "empty squares (`referee_lab/evaluate.py`'s). Face accuracy counts a "
        "die read as empty as wrong. *worse* counts the draws whose face accuracy fell below "
        "the model's alone. The last row of each table fits the head on the whole train split "
        "(in its look): what such a head gains with hundreds of examples. The train split's "
        "dice are those the model learnt from, so in its own look it reads nearly all of them "
        "right and the head has little to correct; the other looks stand for a club's pieces "
        "that differ from what the model saw. The last two columns measure the choices: the "
        "same head without the turned crops, and another form, each label's mean feature as a "
        "second opinion (cosine times 15, averaged with the model's log-probabilities).",
        "",
    ]
    fits: list[float] = []
    for title, scale, invert in LOOKS:
        train = read_split(classifier, "train", scale, invert)
        test = read_split(classifier, "test", scale, invert)
        rows, fit_seconds, summed = table_rows(classifier, train, test, draws)
        fits += fit_seconds
        lines += [f"## {title}", "", "| | face accuracy (range) | empty accuracy | worse | change "
                  "| change, crops not turned | change, class means instead |",
                  "| --- | --- | --- | --- | --- | --- | --- |", *rows, ""]
        if scale == DIE_TO_SQUARE:
            lines += ["Confusion matrix, the model alone (rows: true label, columns: read):", "",
                      *matrix_lines(confusion(test.probs[0], test.labels), 1), "",
                      f"With the head, k = 10, the mean over the {draws} draws:", "",
                      *matrix_lines(summed[10], draws), ""]
        if scale == DIE_TO_SQUARE and not invert:
            plain, base_train = test, train
        print(title, "done", flush=True)
    alone, both, head_ms = apply_ms(classifier, base_train, plain)
    frames, squares, cpu = calibrate_cpu()
    lines += [
        "## Time on one core",
        "",
        f"- Fitting a head (k = 3-10 a label, each crop in four turns: 84-280 examples, "
        f"{len(fits)} fits): median "
        f"{np.median(fits) * 1000:.0f} ms, at most {max(fits) * 1000:.0f} ms.",
        f"- A board of 30 squares: the model's probabilities {alone:.2f} ms; features and "
        f"probabilities in one run {both:.2f} ms; the head on them {head_ms:.3f} ms.",
        f"- `referee calibrate pieces --game rinne --pieces penta --camera {FOOTAGE}` from a "
        f"profile without a head: {frames} frames of the set-up, {squares} squares, the head "
        f"fitted and cross-validated: {cpu:.1f} s of CPU in all (finding the board, decoding "
        "the footage and loading the models included).",
        "",
    ]
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
