"""Training the classifiers that learn from renders only: `penta`, `zensu`, `tiles` and
`tiles-seam` (needs the `train` extra: torch, onnx).

There are no real photos of these pieces, so the training set is a folder of labelled crops
cut from random renders (`referee_lab.renders.write_crop_folder`, the run-time crop functions,
board styles "paper", "card" and "wood"). A seeded 5% of its frames is held out to choose
the checkpoint. Every crop is freshly augmented (`augment`), but never turned freely: a
Penta-piece's state is the corner that points forward, and the crops keep the board's
orientation. The network, export and card are the dice model's (`training`); only the data
and the recipe differ, one `RenderRecipe` a model in `RECIPES`.
"""

from __future__ import annotations

import csv
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError
from referee.vision.classifier import ModelCard, sha256_of
from referee.vision.crops import CropSpec
from referee.vision.images import read_image
from referee.vision.monomino import MONOMINO_MODEL, monomino_class
from referee.vision.seams import SEAM_MODEL
from referee_lab.augment import Augment, augmented_crop
from referee_lab.datasets import Sample, crop_folder_margin, crop_samples, fixed_crops, split_groups
from referee_lab.renders import (
    HELD_OUT_STYLE,
    RENDER_SETS,
    TRAIN_STYLES,
    model_labels,
    model_pieces,
)
from referee_lab.training import (
    INPUT_NAME,
    MEAN,
    STD,
    Schedule,
    build_net,
    export_onnx,
    fit,
    load_onnx_weights,
    normalise,
    seeded,
    write_card,
)

log = logging.getLogger(__name__)

# Pieces keep the board's orientation in a crop: only the small turns a hand gives them.
# Never mirrored: a mirrored Penta-piece (or numeral) is no piece there is, and its signs
# trade corners (the dice recipe's flips came after the penta and zensu models were trained,
# and cost every penta run since: see benchmarks/second_look.md).
_STEADY = Augment(max_angle=12.0, scale=(0.85, 1.15), shift=0.1, p_flip=0.0)
_STEADY_MILD = Augment(max_angle=8.0, scale=(0.9, 1.1), shift=0.06, skew=0.015, p_grid=0.25,
                       p_hue=0.2, p_gray=0.03, p_light=0.2, p_blur=0.2, p_lowres=0.1,
                       p_noise=0.3, p_jpeg=0.25, p_flip=0.0)


# Tiles and monominoes lie snug in their squares, and a board finder is off by far less
# than a tenth of a square: little geometric jitter, so that the net can use where the
# edges fall (a piece's top face lines up with the crop cut at its height, the bare square's
# grid lines do not). No drawn grid lines: a monomino hides its square's lines, so lines
# drawn over it would teach that they mean nothing.
_SNUG = Augment(max_angle=4.0, scale=(0.95, 1.05), shift=0.03, skew=0.02, p_grid=0.0)
_SNUG_MILD = Augment(max_angle=3.0, scale=(0.97, 1.03), shift=0.02, skew=0.01, p_grid=0.0,
                     p_hue=0.2, p_gray=0.03, p_light=0.2, p_blur=0.2, p_lowres=0.1,
                     p_noise=0.3, p_jpeg=0.25)


@dataclass(frozen=True)
class RenderRecipe:
    """One render-trained model's recipe. Recorded in full in its card."""

    model: str
    piece_height: float  # where the crops are cut: the pieces' top face, in squares
    seed: int = 11
    size: int = 48
    margin: float = 0.12
    arch: str = "c16s2,c32,p,c48,c48,p,c64"
    head: str = "pool"  # "pool": global average pool (any position); "grid": flatten the
    # last feature map, so the head knows where in the crop a feature is (which corner)
    steps: int = 2500
    batch: int = 64
    lr: float = 4e-3
    weight_decay: float = 5e-4
    label_smoothing: float = 0.05
    balance: float = 0.5  # share of a batch drawn class-uniformly (the rest as the data falls)
    val_fraction: float = 0.05
    eval_every: int = 500
    threads: int = 1
    augment: Augment = field(default_factory=lambda: _STEADY)
    augment_mild: Augment = field(default_factory=lambda: _STEADY_MILD)
    mild_from: float = 0.75
    # Fine-tuning: start from this model's weights (an ONNX file this module wrote, same
    # arch, head and size) instead of from scratch; the card records its sha256.
    init: str | None = None
    init_sha256: str | None = None
    # Share of a batch drawn from the hard examples (folders of squares an earlier model read
    # wrong or unsure, e.g. at steep views), before the draws above.
    p_hard: float = 0.0
    # Where the net trains and how many processes make its batches (`training.TrainConfig`).
    device: str = "cpu"
    workers: int = 0

    @property
    def spec(self) -> CropSpec:
        return CropSpec(self.size, self.margin)

    @property
    def labels(self) -> tuple[str, ...]:
        return model_labels(self.model)


RECIPES: dict[str, RenderRecipe] = {
    # The signs on a Penta-piece are small (a larger input) and the state is the one at the
    # forward corner (a head that keeps position).
    "penta": RenderRecipe("penta", RENDER_SETS["penta"].height, size=56, steps=2500,
                          arch="c16s2,c32,p,c48,c48,p,c64,p", head="grid"),
    "zensu": RenderRecipe("zensu", RENDER_SETS["zensu"].height, steps=2000),
    # A monomino on a light square looks much like the bare square: a wider margin shows its
    # bevelled edge and the neighbours' grid lines that it hides. Those confusions are among
    # the common classes: less class balancing. Still learning at 3,000 steps on 700 frames:
    # 12,000 on 3,500, snug augmentation (above). Both models cut 40 pixels a square, so
    # that one warp of the board serves both (crops.board_canvas); the seam crop is the
    # square centred on the line, no margin (40x40: 84 seams a board are most of the read).
    "tiles": RenderRecipe("tiles", RENDER_SETS["tiles"].height, size=56, margin=0.2,
                          steps=12000, balance=0.25, eval_every=1000, augment=_SNUG,
                          augment_mild=_SNUG_MILD),
    SEAM_MODEL: RenderRecipe(SEAM_MODEL, RENDER_SETS["tiles"].height, size=40, margin=0.0,
                             steps=3000),
    # Bare square or monomino (the tiles model's commonest doubt), on the tiles model's own
    # crops (64x64, margin 0.3: the pipeline cuts them once for both), relabelled. No stride
    # at the first layer: the cue is a piece's edge a pixel or two wide. 12,000 steps: at
    # 6,000 it was still learning (benchmarks/render_models.md).
    MONOMINO_MODEL: RenderRecipe(MONOMINO_MODEL, RENDER_SETS["tiles"].height, size=64, margin=0.3,
                                 arch="c16,p,c24,c32,p,c48,c48,p,c64", steps=12000,
                                 eval_every=1000, augment=_SNUG, augment_mild=_SNUG_MILD,
                                 p_hard=0.3),
}


@dataclass(frozen=True)
class RenderTrainResult:
    card: ModelCard
    onnx_path: Path
    val_accuracy: float
    seconds: float


def crop_folder_of(crops_dir: str | Path, model: str) -> Path:
    """Where `model`'s training crops lie in a crops folder: its own subfolder, or for
    the monomino model the tiles model's (it trains on their squares, relabelled)."""
    return Path(crops_dir) / ("tiles" if model == MONOMINO_MODEL else model)


def load_model_crops(folder: Path, model: str, margin: float) -> list[Sample]:
    """`model`'s labelled crops in `folder`: as they are, or for the monomino model the
    tiles crops of bare squares and monominoes, relabelled (`monomino.monomino_class`)."""
    if model != MONOMINO_MODEL:
        return load_crop_folder(folder, model_labels(model), margin)
    tiles = model_labels("tiles")
    out = []
    for sample in load_crop_folder(folder, tiles, margin):
        cover = monomino_class(tiles[sample.label])
        if cover is not None:
            out.append(dataclasses.replace(sample, label=cover))
    return out


def load_crop_folder(folder: Path, labels: tuple[str, ...], margin: float) -> list[Sample]:
    """The crops of `folder/labels.csv`, each grouped by its frame (the seed before the
    first '-' of its file name), so that a frame's squares fall on one side of a split."""
    table = folder / "labels.csv"
    if not table.is_file():
        raise ModelError(f"no labels.csv in {folder} (render the crops first)")
    index = {name: i for i, name in enumerate(labels)}
    samples: list[Sample] = []
    with table.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["label"] not in index:
                raise ModelError(f"{table}: unknown label {row['label']!r}")
            image = read_image(folder / row["file"])
            group = row["file"].split("-")[0]
            samples += crop_samples([(image, index[row["label"]])], margin=margin, group=group)
    if not samples:
        raise ModelError(f"{table}: no crops")
    return samples


class BalancedBatches:
    """Augmented batches: a `p_hard` share drawn from the `hard` examples (if any), of the
    rest a `balance` share drawn class-uniformly (rare classes such as a marker on an empty
    square are seen often enough), the others as the renders fall."""

    def __init__(self, samples: list[Sample], recipe: RenderRecipe, rng: np.random.Generator,
                 hard: Sequence[Sample] = ()) -> None:
        self.samples, self.recipe, self.rng, self.hard = samples, recipe, rng, list(hard)
        labels = np.array([s.label for s in samples])
        self.by_class = [np.flatnonzero(labels == k) for k in range(len(recipe.labels))]
        self.by_class = [members for members in self.by_class if len(members)]

    def sample(self) -> Sample:
        rng = self.rng
        # No draw without hard examples: a recipe without them samples as it always did.
        if self.hard and rng.random() < self.recipe.p_hard:
            return self.hard[int(rng.integers(len(self.hard)))]
        if rng.random() < self.recipe.balance:
            members = self.by_class[int(rng.integers(len(self.by_class)))]
            return self.samples[int(members[int(rng.integers(len(members)))])]
        return self.samples[int(rng.integers(len(self.samples)))]

    def batch(self, augment: Augment) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
        size = self.recipe.size
        crops = np.empty((self.recipe.batch, size, size, 3), np.uint8)
        labels = np.empty(self.recipe.batch, np.int64)
        for i in range(self.recipe.batch):
            sample = self.sample()
            crops[i] = augmented_crop(sample, self.recipe.spec, self.rng, augment)
            labels[i] = sample.label
        return crops, labels


def train_render_model(
    model: str,
    crops_dir: str | Path,
    out_dir: str | Path,
    *,
    recipe: RenderRecipe | None = None,
    hard: Sequence[str | Path] = (),
    command: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> RenderTrainResult:
    """Train `model` on the crops in `crops_dir/<model>/` and write `<out_dir>/<model>.onnx`
    and its card. `hard`: folders of hard examples (`renders.write_hard_crop_folder`), drawn
    as the recipe's `p_hard` share of a batch; a seeded `val_fraction` of their frames joins
    the validation (the checkpoint is then chosen on the mean of the two accuracies).
    `recipe.init`: fine-tune from that model. `command`: what the card says rebuilds it."""
    import torch

    recipe = recipe or RECIPES[model]
    say = progress or log.info
    started = time.perf_counter()
    rng = seeded(recipe.seed, recipe.threads)
    folder = crop_folder_of(crops_dir, model)
    margin = _folder_margin(folder)
    fit, val = _split_by_frame(load_model_crops(folder, model, margin), recipe)
    fit_frames = len({s.group for s in fit})
    hard_fit, hard_val = _hard_split(hard, recipe)
    val_sets = np.array([0] * len(val) + [1] * len(hard_val), np.int64)  # plain, hard
    val += hard_val
    val_x = torch.from_numpy(normalise(fixed_crops(val, recipe.spec)))
    val_y = np.array([s.label for s in val])
    say(f"{model}: training on {len(fit)} crops of {fit_frames} frames and {len(hard_fit)} "
        f"hard crops; validating on {len(val)} crops ({len(hard_val)} hard)")
    batches = BalancedBatches(fit, recipe, rng, hard_fit)
    net = make_net(recipe)
    if recipe.init:
        _start_from(net, recipe, BalancedBatches(fit, dataclasses.replace(recipe, batch=512),
                                                 np.random.default_rng(recipe.seed + 2), hard_fit))
        say(f"starting from {recipe.init}")
    best_step, best_accuracy = _fit(net, recipe, batches, val_x, val_y, say, started,
                                    val_sets if hard_val else None)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    onnx_path = out / f"{model}.onnx"
    export_onnx(net, onnx_path, recipe.size, check=val_x[:64])
    counts = np.bincount([s.label for s in fit], minlength=len(recipe.labels))
    card = ModelCard(
        name=model, labels=recipe.labels, faces=(None,) * len(recipe.labels),
        input_size=recipe.size, crop_margin=recipe.margin, channel_order="BGR", mean=MEAN,
        std=STD, sha256=sha256_of(onnx_path), onnx_file=onnx_path.name, input_name=INPUT_NAME,
        output="probabilities", seed=recipe.seed, piece_height=recipe.piece_height,
        recipe=_recipe(recipe, folder, counts, fit_frames, best_step) | {
            "hard_folders": [str(f) for f in hard], "train_hard": len(hard_fit),
            "command": command or f"referee-lab train --pieces {model_pieces(model)}"},
        metrics={"val_accuracy": round(best_accuracy, 4), "val_squares": len(val),
                 "val_note": "held-out frames of the training renders"
                 + (f" and of the hard examples ({len(hard_val)} squares; the mean of the two "
                    "accuracies)" if hard_val else "") + "; chose the checkpoint"},
    )
    seconds = time.perf_counter() - started
    card.recipe["train_seconds"] = round(seconds)
    write_card(card, out / f"{model}.json")
    return RenderTrainResult(card, onnx_path, best_accuracy, seconds)


def _hard_split(folders: Sequence[str | Path], recipe: RenderRecipe
                ) -> tuple[list[Sample], list[Sample]]:
    """The hard examples of `folders`, split by frame into training and validation."""
    samples = [s for folder in folders
               for s in load_model_crops(Path(folder), recipe.model, _folder_margin(Path(folder)))]
    return _split_by_frame(samples, recipe) if samples else ([], [])


def _split_by_frame(samples: list[Sample], recipe: RenderRecipe
                    ) -> tuple[list[Sample], list[Sample]]:
    """`samples` for training and for validation: a seeded `val_fraction` of their frames
    (a frame's squares stay together, so validation sees frames it never trained on)."""
    _, val_groups = split_groups((s.group for s in samples), fraction=recipe.val_fraction,
                                 seed=recipe.seed)
    held = set(val_groups)
    return [s for s in samples if s.group not in held], [s for s in samples if s.group in held]


def _start_from(net: Any, recipe: RenderRecipe, calibration: BalancedBatches) -> None:
    """Load `recipe.init`'s weights into `net`, batch norms unfolded with statistics from a
    batch drawn apart from the training stream (`training.load_onnx_weights`), augmented as
    the first training step's (a model trained by this module ends on the mild augmentation:
    `mild_from=0` fine-tunes on it throughout, so the norms' statistics stay where they were)."""
    import torch

    assert recipe.init is not None
    crops = calibration.batch(recipe.augment_mild if recipe.mild_from <= 0 else recipe.augment)[0]
    load_onnx_weights(net, recipe.init, torch.from_numpy(normalise(crops)))


def _fit(net: Any, recipe: RenderRecipe, batches: BalancedBatches, val_x: Any,
         val_y: NDArray[np.int64], say: Callable[[str], None], started: float,
         val_groups: NDArray[np.int64] | None = None) -> tuple[int, float]:
    """The dice models' training loop on this recipe's net and batches."""

    def next_batch(step: int) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
        mild = step > recipe.mild_from * recipe.steps
        return batches.batch(recipe.augment_mild if mild else recipe.augment)

    schedule = Schedule(recipe.steps, recipe.lr, recipe.weight_decay, recipe.label_smoothing,
                        recipe.eval_every, recipe.device, recipe.workers, recipe.seed)
    return fit(net, schedule, next_batch, val_x, val_y, say, started, val_groups,
               maker=batches)


def make_net(recipe: RenderRecipe) -> Any:
    """The dice model's CNN (`training.build_net`), with its head as the recipe says."""
    import torch

    net = build_net(recipe.arch, len(recipe.labels))
    if recipe.head == "pool":
        return net
    if recipe.head != "grid":
        raise ModelError(f"unknown head {recipe.head!r} (pool or grid)")
    body = net[:-3]  # drop global pooling, flatten and the linear layer
    with torch.no_grad():
        features = int(body(torch.zeros(1, 3, recipe.size, recipe.size)).numel())
    return torch.nn.Sequential(*body, torch.nn.Flatten(), torch.nn.Linear(features,
                                                                          len(recipe.labels)))


def _folder_margin(folder: Path) -> float:
    return crop_folder_margin(folder, 0.3)


def _recipe(recipe: RenderRecipe, folder: Path, counts: NDArray[np.int64], frames: int,
            best_step: int) -> dict[str, Any]:
    import torch

    out = asdict(recipe)
    out["augment"] = recipe.augment.as_dict()
    out["augment_mild"] = recipe.augment_mild.as_dict()
    out.update({
        "architecture": ("arch: cN = conv3x3-BN-ReLU to N channels (s2: stride 2), p = 2x2 "
                         "max-pool; head pool: global average pool and a linear layer; head "
                         "grid: the last feature map flattened into a linear layer"),
        "optimiser": "AdamW, one-cycle LR, cross-entropy with label smoothing",
        "data": (f"rendered squares cut where the run time cuts them (referee_lab.renders, "
                 f"top_face_quads at {recipe.piece_height} squares), board styles "
                 f"{', '.join(TRAIN_STYLES)}; style {HELD_OUT_STYLE!r} and seeds from 900000 "
                 "kept for measuring"),
        "crops_folder": str(folder),
        "train_frames": frames,
        "train_crops_per_label": {k: int(v) for k, v in zip(recipe.labels, counts, strict=True)},
        "best_step": best_step,
        "torch": torch.__version__,
    })
    return out


def with_overrides(recipe: RenderRecipe, *, steps: int | None, seed: int | None,
                   init: Path | None = None) -> RenderRecipe:
    """`recipe` with another step count, seed, or model to start from (its sha256 too)."""
    if steps is not None:
        recipe = dataclasses.replace(recipe, steps=steps)
    if seed is not None:
        recipe = dataclasses.replace(recipe, seed=seed)
    if init is not None:
        recipe = dataclasses.replace(recipe, init=str(init), init_sha256=sha256_of(init))
    return recipe
