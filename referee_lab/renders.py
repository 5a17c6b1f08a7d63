"""Labelled squares from renders: the training set the real photos cannot give (board marks,
grid lines, tilt, shadows, neighbours), cut by the same functions the referee uses at run
time (`top_face_quads` + the model's crop spec), so training and use see the same crops."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError
from referee.vision.crops import (
    CropSpec,
    ImageBGR,
    board_canvas,
    canvas_side,
    crop_squares,
    fits_canvas,
    grid_crops,
    grid_seam_crops,
    seam_quads,
)
from referee.vision.monomino import MONOMINO_LABELS, MONOMINO_MODEL, monomino_class
from referee.vision.pose import BoardPose, board_lattice
from referee.vision.seams import SEAM_MODEL  # the second tiles model: crops straddling inner grid lines
from referee.vision.warp import top_face_quads
from referee_lab.datasets import DICE_LABELS, Sample
from referee_lab.synth import RenderOptions, SquareContent, render_frame
from referee_lab.synth.games import game_spec, renaissance_position, square_names
from referee_lab.synth.truth import Contents, FrameTruth

GAMES = ("rinne", "tensei", "rinne-5x5", "flipflop-3x3", "flipflop-5x5")
SIZES = ((1280, 720), (1280, 720), (960, 540), (1920, 1080), (640, 480))
DIE_HEIGHT = 0.7  # a die's top face above the board, in squares (renders: ~0.62–0.78)


@dataclass(frozen=True)
class RenderedSquares:
    """One rendered frame cut into squares: samples for training, truth for measuring."""

    samples: tuple[Sample, ...]  # squares not covered by a hand
    truth: FrameTruth


def pose_of(truth: FrameTruth) -> BoardPose:
    """The board's pose as the homography best fitting the true grid intersections (the
    lens bends them slightly: this is what a perfect board finder would report)."""
    files, ranks = truth.files, truth.ranks
    h, _ = cv2.findHomography(board_lattice(files, ranks), np.array(truth.grid, np.float64))
    return BoardPose.from_homography(np.asarray(h, np.float64), files, ranks)


def random_dice(rng: np.random.Generator, files: int, ranks: int) -> dict[str, SquareContent]:
    """Dice of both players on about a third of the squares, any face 1–6."""
    contents: dict[str, SquareContent] = {}
    for rank in range(ranks):
        for file in range(files):
            if rng.random() < 0.35:
                name = f"{'abcdefghi'[file]}{rank + 1}"
                contents[name] = SquareContent("die", int(rng.integers(0, 2)),
                                               int(rng.integers(1, 7)))
    return contents


def dice_squares(seed: int, *, hands: float = 0.3, tilt: tuple[float, float] = (0.0, 40.0)
                 ) -> RenderedSquares:
    """Render one frame of random dice on a random board of the Rinne family and cut it."""
    rng = np.random.default_rng([seed, 77])
    game = GAMES[int(rng.integers(len(GAMES)))]
    width, height = SIZES[int(rng.integers(len(SIZES)))]
    files, ranks = {"rinne": (5, 6), "tensei": (5, 6), "rinne-5x5": (5, 5),
                    "flipflop-3x3": (3, 3), "flipflop-5x5": (5, 5)}[game]
    contents = random_dice(rng, files, ranks)
    options = RenderOptions(width=width, height=height, tilt=tilt, pieces="dice", hands=hands)
    frame, truth = render_frame(game, seed=seed, options=options, contents=contents)
    quads = top_face_quads(pose_of(truth), (width, height), height=DIE_HEIGHT)
    covered = set(truth.occluded)
    shown = truth.contents()
    samples = []
    for index, quad in enumerate(quads):
        name = f"{'abcdefghi'[index % files]}{index // files + 1}"
        if name in covered:
            continue
        content = shown.get(name, SquareContent())
        label = DICE_LABELS.index(str(content.value)) if content.kind == "die" else 0
        samples.append(Sample(frame, quad.astype(np.float32), label, f"render-{seed}"))
    return RenderedSquares(tuple(samples), truth)


def dice_samples(seeds: range, *, hands: float = 0.3) -> Iterator[Sample]:
    for seed in seeds:
        yield from dice_squares(seed, hands=hands).samples




# --- Penta-pieces, Zensū pieces, Renaissance tiles ------------------------------------------

PENTA_LABELS: tuple[str, ...] = ("empty", "king", "knight", "bishop", "rook", "queen")
ZENSU_LABELS: tuple[str, ...] = ("empty", "1", "2")
MARKER_SUFFIXES = ("", "+gold", "+silver")
TILES_LABELS: tuple[str, ...] = ("blocked", *(
    f"{cover}{marker}" for cover in ("empty", "tile", "monomino") for marker in MARKER_SUFFIXES))
SEAM_LABELS: tuple[str, ...] = ("apart", "joined")  # joined: both squares under one polyomino
# Styles (board materials) used for training; "mat" boards are kept for measuring only.
TRAIN_STYLES = ("paper", "card", "wood")
HELD_OUT_STYLE = "mat"
HELD_OUT_FIRST_SEED = 900_000  # training uses seeds below this


@dataclass(frozen=True)
class RenderSet:
    """How one piece set's labelled squares come out of random renders: the games it is
    played in, what stands on the squares, how a square's truth becomes a label, and the
    height (in squares) of the pieces' top faces, where the crops are cut."""

    name: str
    labels: tuple[str, ...]
    games: tuple[str, ...]
    height: float
    pieces: str | None = None  # RenderOptions.pieces (Rinne family only)

    def label(self, content: SquareContent) -> int:
        return self.labels.index(square_label(self.name, content))


# Top-face heights: Penta-pieces 5-10 mm, Zensū blocks 8-14 mm, tiles 4 mm (+2.5 mm for a
# marker) on squares of 32-48 mm.
RENDER_SETS: dict[str, RenderSet] = {
    "penta": RenderSet("penta", PENTA_LABELS,
                       ("rinne", "rinne-5x5", "flipflop-3x3", "flipflop-5x5"), 0.2, "penta"),
    "zensu": RenderSet("zensu", ZENSU_LABELS, ("zensu",), 0.28),
    "tiles": RenderSet("tiles", TILES_LABELS, ("renaissance",), 0.1),
}
# The third, MONOMINO_MODEL (`vision.monomino`): bare square or monomino, trained on the
# main model's crops relabelled.


def square_label(pieces: str, content: SquareContent) -> str:
    """The class name a square's truth has for `pieces`' classifier."""
    if pieces == "penta":
        return PENTA_LABELS[content.value] if content.kind == "penta" else "empty"
    if pieces == "zensu":
        return str(content.value) if content.kind == "zensu" else "empty"
    if content.kind == "blocked":
        return "blocked"
    return content.kind + ("" if content.marker is None else f"+{content.marker}")


def random_contents(pieces: str, game: str, rng: np.random.Generator) -> Contents:
    """Random square contents of `pieces` on `game`'s board: pieces of both players on about
    40% of the squares in any state; Renaissance: a phase-1 board with some tiles and
    monominoes cleared (phase 2 shows empty squares) and markers anywhere uncovered or not."""
    spec = game_spec(game)
    names = square_names(spec.files, spec.ranks)
    if pieces == "tiles":
        return random_renaissance(game, rng)
    kind, values = ("penta", 5) if pieces == "penta" else ("zensu", 2)
    return {name: SquareContent(kind, int(rng.integers(0, 2)), int(rng.integers(1, values + 1)))
            for name in names if rng.random() < 0.4}


def random_renaissance(game: str, rng: np.random.Generator) -> Contents:
    spec = game_spec(game)
    board = renaissance_position(spec, rng, taken=int(rng.integers(0, 6)))
    cleared = {v for v in range(1, 14) if rng.random() < 0.35}
    clear_singles = rng.random() < 0.5
    out: Contents = {}
    for name, content in board.items():
        if (content.kind == "tile" and content.value in cleared) or (
                content.kind == "monomino" and clear_singles and rng.random() < 0.5):
            content = SquareContent()
        out[name] = content
    open_squares = [n for n, c in out.items() if c.kind != "blocked"]
    count = int(rng.integers(0, 16))
    for i, name in enumerate(rng.choice(open_squares, count, replace=False)):
        old = out[str(name)]
        out[str(name)] = SquareContent(old.kind, old.owner, old.value,
                                       "gold" if i % 2 == 0 else "silver")
    return out


@dataclass(frozen=True)
class LabelledFrame:
    """One rendered frame cut for one piece set: `samples` per model name (`tiles` also
    gives `tiles-seam` and `tiles-monomino`), squares and seams a hand covers left out;
    `truth` the truth.
    `quads`: every square's top-face quad (rules order) and `kept` per model the indices
    of its samples among all the board's squares (or seams), for `frame_crops`."""

    samples: dict[str, tuple[Sample, ...]]
    truth: FrameTruth
    quads: NDArray[np.float32] | None = None
    kept: dict[str, tuple[int, ...]] | None = None

    @property
    def image(self) -> ImageBGR:
        return next(s.image for samples in self.samples.values() for s in samples)


def frame_crops(frame: LabelledFrame, specs: dict[str, CropSpec]) -> dict[str, NDArray[np.uint8]]:
    """Each model's crops of `frame`'s samples, cut as the run time cuts a board: one warp
    of the board for all squares (and seams) when the specs fit one canvas
    (`crops.board_canvas`), else a warp a crop (`crop_squares`)."""
    if frame.quads is None or frame.kept is None or not any(frame.samples.values()):
        return {m: sample_crops(frame.samples[m], spec) for m, spec in specs.items()}
    image, files, quads = frame.image, frame.truth.files, list(frame.quads)
    sides = {canvas_side(spec) for spec in specs.values()}
    fit = all(fits_canvas(spec, canvas_side(spec), seams=m == SEAM_MODEL)
              for m, spec in specs.items())
    canvas = None
    if len(sides) == 1 and fit:
        side = sides.pop()
        border = max(round(spec.margin * side) + (side // 2 if m == SEAM_MODEL else 0)
                     for m, spec in specs.items())
        canvas = board_canvas(image, quads, files, side, border)
    out = {}
    for model, spec in specs.items():
        seams = model == SEAM_MODEL
        if canvas is not None:
            every = canvas.seams(spec) if seams else canvas.squares(spec)
        else:
            every = (grid_seam_crops if seams else grid_crops)(image, quads, files, spec)
        out[model] = every[list(frame.kept[model])]
    return out


def sample_crops(samples: tuple[Sample, ...], spec: CropSpec) -> NDArray[np.uint8]:
    """The squares of one rendered frame, cut as the run time cuts them (none: an empty
    batch)."""
    if not samples:
        return np.empty((0, spec.size, spec.size, 3), np.uint8)
    return crop_squares(samples[0].image, [s.quad for s in samples], spec)


def render_squares(pieces: str, seed: int, *, hands: float = 0.3, style: str | None = None,
                   tilt: tuple[float, float] = (0.0, 40.0)) -> LabelledFrame:
    """Render one frame of random `pieces` contents and cut it where the run time cuts it:
    `top_face_quads` at the set's piece height. `style` None: a training style family drawn
    from the seed (TRAIN_STYLES)."""
    render_set = RENDER_SETS[pieces]
    rng = np.random.default_rng([seed, 78])
    game = render_set.games[int(rng.integers(len(render_set.games)))]
    width, height = SIZES[int(rng.integers(len(SIZES)))]
    family = style or TRAIN_STYLES[int(rng.integers(len(TRAIN_STYLES)))]
    contents = random_contents(pieces, game, rng)
    options = RenderOptions(width=width, height=height, tilt=tilt, style=family,
                            pieces=render_set.pieces, hands=hands)
    frame, truth = render_frame(game, seed=seed, options=options, contents=contents)
    return cut_frame(pieces, frame, truth, f"render-{seed}")


def cut_frame(pieces: str, frame: ImageBGR, truth: FrameTruth, group: str = "") -> LabelledFrame:
    """A rendered frame's squares (and tiles' seams, and its bare squares and monominoes for
    the monomino model) as labelled samples, where the run time cuts them: `top_face_quads`
    at the set's piece height on the true pose."""
    render_set = RENDER_SETS[pieces]
    size = (frame.shape[1], frame.shape[0])
    quads = top_face_quads(pose_of(truth), size, height=render_set.height)
    names = square_names(truth.files, truth.ranks)
    covered, shown = set(truth.occluded), truth.contents()
    kept = {pieces: tuple(i for i, name in enumerate(names) if name not in covered)}
    samples = {pieces: tuple(
        Sample(frame, quads[i].astype(np.float32), render_set.label(shown[names[i]]), group)
        for i in kept[pieces])}
    if pieces == "tiles":
        covers = [(i, monomino_class(render_set.labels[s.label]))
                  for i, s in zip(kept[pieces], samples[pieces], strict=True)]
        covered_squares = [(i, cover) for i, cover in covers if cover is not None]
        kept[MONOMINO_MODEL] = tuple(i for i, _ in covered_squares)
        samples[MONOMINO_MODEL] = tuple(Sample(frame, quads[i].astype(np.float32), cover, group)
                                        for i, cover in covered_squares)
        seams = seam_samples(truth, quads)
        kept[SEAM_MODEL] = tuple(i for i, ((a, b), _, _) in enumerate(seams)
                                 if not {a, b} & covered)
        samples[SEAM_MODEL] = tuple(Sample(frame, seams[i][1], seams[i][2], group)
                                    for i in kept[SEAM_MODEL])
    return LabelledFrame(samples, truth, quads.astype(np.float32), kept)


def seam_samples(truth: FrameTruth, quads: NDArray[np.float64]
                 ) -> list[tuple[tuple[str, str], NDArray[np.float32], int]]:
    names = square_names(truth.files, truth.ranks)
    shown = truth.contents()
    out = []
    for a, b, quad in seam_quads(quads, truth.files, truth.ranks):
        first, second = shown[names[a]], shown[names[b]]
        joined = first.kind == second.kind == "tile" and first.value == second.value
        out.append(((names[a], names[b]), quad, SEAM_LABELS.index("joined" if joined else "apart")))
    return out


def model_pieces(model: str) -> str:
    """The piece set a model reads (the seam and monomino models are the tiles set's)."""
    return "tiles" if model in (SEAM_MODEL, MONOMINO_MODEL) else model


def model_labels(model: str) -> tuple[str, ...]:
    """The labels of a model that renders train: a piece set's, or the seam model's."""
    if model == SEAM_MODEL:
        return SEAM_LABELS
    if model == MONOMINO_MODEL:
        return MONOMINO_LABELS
    if model == "dice":
        return DICE_LABELS
    return RENDER_SETS[model].labels


def write_crop_folder(folder: str, seeds: range, *, size: int = 64, margin: float = 0.3,
                      pieces: str = "dice", append: bool = False,
                      tilt: tuple[float, float] = (0.0, 40.0)) -> int:
    """Cut rendered frames into square crops with a wide `margin` (room for the trainer's
    jitter) and write them with a `labels.csv` that `vision.datasets.folder_samples` reads.
    Pieces other than dice go to `folder/<model>/` for each model the set trains (tiles:
    `tiles` and `tiles-seam`). `append`: add to the folders' crops (cut alike) instead of
    starting them afresh. `tilt`: the camera's tilt range in degrees (steeper views than
    the training mix: 25-40). Returns the number of crops written."""
    if pieces == "dice":
        writer = _CropWriter(Path(folder), size, margin, DICE_LABELS, append=append)
        with writer:
            for seed in seeds:
                writer.add(seed, dice_squares(seed, tilt=tilt).samples)
        return writer.count
    models = [pieces, SEAM_MODEL] if pieces == "tiles" else [pieces]
    writers = {m: _CropWriter(Path(folder) / m, size, margin, model_labels(m), append=append)
               for m in models}
    try:
        for writer in writers.values():
            writer.__enter__()
        for seed in seeds:
            frame = render_squares(pieces, seed, tilt=tilt)
            crops = frame_crops(frame, {m: w.spec for m, w in writers.items()})
            for model, writer in writers.items():
                writer.add(seed, frame.samples[model], crops[model])
    finally:
        for writer in writers.values():
            writer.__exit__(None, None, None)
    return sum(w.count for w in writers.values())


def write_hard_crop_folder(folder: str, seeds: range, model: str | Path, *, below: float = 0.9,
                           lead_below: float = 0.0, tilt: tuple[float, float] = (0.0, 40.0),
                           pieces: str | None = None, size: int | None = None,
                           margin: float = 0.3, append: bool = False) -> int:
    """Hard examples for a model: render the frames of `seeds` (camera `tilt` in degrees)
    like `write_crop_folder`, read each square with `model` as the benchmark does, and keep
    only the squares whose true label it gives less than `below` probability (wrong or
    unsure) or leads the runner-up by less than `lead_below` nats (in doubt: the pipeline
    holds a move up under 3). `pieces`: the piece set (default: the model card's name, dice
    or a render-trained set; `tiles-seam`: tiles boards' seams). Crops `size` pixels
    (default: 64 for dice, else 80 as `referee-lab train` cuts them), in one folder with a
    `labels.csv` (no `<model>/` level: it is passed to the trainer as it is); `append`: add
    to the folder's crops (cut alike). Returns the number of crops written."""
    from referee.vision.classifier import Classifier

    classifier = Classifier.load(model)
    pieces = pieces or classifier.card.name
    if pieces == MONOMINO_MODEL:
        raise ModelError(f"{MONOMINO_MODEL} trains on the tiles model's hard squares: mine "
                         "those with the tiles model")
    if pieces != "dice" and model_pieces(pieces) not in RENDER_SETS:
        raise ModelError(f"no hard examples for pieces {pieces!r}: dice, "
                         f"{', '.join(RENDER_SETS)} or {SEAM_MODEL}")
    labels = DICE_LABELS if pieces == "dice" else model_labels(pieces)
    if classifier.card.labels != labels:
        raise ModelError(f"{model}: labels {classifier.card.labels} are not {pieces}'s")
    writer = _CropWriter(Path(folder), size or (64 if pieces == "dice" else 80), margin, labels,
                         append=append)
    with writer:
        for seed in seeds:
            samples = _hard_candidates(pieces, seed, tilt)
            if not samples:
                continue
            probabilities = classifier.predict(sample_crops(samples, classifier.card.crop))
            hard = tuple(s for s, p in zip(samples, probabilities, strict=True)
                         if p[s.label] < below or _lead_of(p, s.label) < lead_below)
            writer.add(seed, hard)
    return writer.count


def _hard_candidates(pieces: str, seed: int, tilt: tuple[float, float]) -> tuple[Sample, ...]:
    """One rendered frame's labelled squares (hands in view, as in training)."""
    if pieces == "dice":
        return dice_squares(seed, tilt=tilt).samples
    return render_squares(model_pieces(pieces), seed, tilt=tilt).samples[pieces]


def _lead_of(probabilities: NDArray[np.float32], label: int) -> float:
    """How far `label` leads the best other label, in nats (negative when it trails)."""
    p = np.clip(probabilities.astype(np.float64), 1e-9, 1.0)
    return float(np.log(p[label]) - np.log(np.delete(p, label).max()))


class _CropWriter:
    """A folder of crops and its labels.csv, written as frames come."""

    def __init__(self, folder: Path, size: int, margin: float, labels: tuple[str, ...], *,
                 append: bool = False) -> None:
        self.folder, self.labels, self.count, self.append = folder, labels, 0, append
        self.spec = CropSpec(size=size, margin=margin)
        self._handle: TextIO | None = None

    def __enter__(self) -> _CropWriter:
        self.folder.mkdir(parents=True, exist_ok=True)
        meta = {"size": self.spec.size, "margin": self.spec.margin}
        table, info = self.folder / "labels.csv", self.folder / "crops.json"
        adding = self.append and table.is_file()
        if adding and info.is_file() and json.loads(info.read_text()) != meta:
            raise ModelError(f"{info}: crops cut as {info.read_text().strip()}, not {meta}")
        info.write_text(json.dumps(meta) + "\n")
        self._handle = open(table, "a" if adding else "w", newline="", encoding="utf-8")
        self._table = csv.writer(self._handle)
        if not adding:
            self._table.writerow(["file", "label"])
        return self

    def add(self, seed: int, samples: tuple[Sample, ...],
            crops: NDArray[np.uint8] | None = None) -> None:
        """Write `samples` (their `crops` if given, else cut here)."""
        if not samples:
            return
        if crops is None:
            crops = sample_crops(samples, self.spec)
        for i, (crop, sample) in enumerate(zip(crops, samples, strict=True)):
            name = f"{seed:06d}-{i:03d}.png"
            cv2.imwrite(str(self.folder / name), crop)
            self._table.writerow([name, self.labels[sample.label]])
            self.count += 1
        assert self._handle is not None
        self._handle.flush()

    def __exit__(self, *_: object) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def merge_crop_folders(parts: Sequence[str | Path], into: str | Path) -> int:
    """Gather crop folders cut alike from different seeds (such as `write_crop_folder` run by
    processes side by side) into one: their crops moved there, their labels joined (file
    names carry the seed, so they cannot clash). Returns the number of crops gathered."""
    if not parts:
        raise ModelError("no crop folders to merge")
    into = Path(into)
    metas = {(Path(p) / "crops.json").read_text() for p in parts}
    if len(metas) != 1:
        raise ModelError(f"crop folders cut differently ({len(metas)} ways) cannot be merged")
    into.mkdir(parents=True, exist_ok=True)
    (into / "crops.json").write_text(metas.pop())
    count = 0
    with open(into / "labels.csv", "w", newline="", encoding="utf-8") as handle:
        table = csv.writer(handle)
        table.writerow(["file", "label"])
        for part in map(Path, parts):
            with (part / "labels.csv").open(newline="", encoding="utf-8") as rows:
                for row in csv.DictReader(rows):
                    (part / row["file"]).replace(into / row["file"])
                    table.writerow([row["file"], row["label"]])
                    count += 1
    return count


def rendered_frames(folder: str | Path) -> int:
    """How many frames a crop folder holds: one past the highest seed in its labels.csv
    (`write_crop_folder` renders seeds 0, 1, ... in order); 0 without one."""
    table = Path(folder) / "labels.csv"
    if not table.is_file():
        return 0
    with table.open(newline="", encoding="utf-8") as handle:
        seeds = [int(row["file"].split("-")[0]) for row in csv.DictReader(handle)]
    return max(seeds) + 1 if seeds else 0
