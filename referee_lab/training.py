"""Training a square classifier (needs the `train` extra: torch, onnx).

The dice model: a small CNN (six 3x3 conv blocks with batch norm, two max-pools, global
average pooling, one linear layer; 186k parameters, 730 KB as ONNX) on square BGR crops
(`size`: 48x48 by default). Being fully convolutional, a model of one input size can start
the fine-tuning of another (`init`).
Faces 1-6 come from the real photographs' train split (a seeded tenth of its photos held
out for choosing the best checkpoint); "empty" from bare tray squares of the same photos
and synthetic board squares. Every crop is freshly augmented (see `augment`). Other
labelled squares, such as renders, join through `extra`. The test split is never read here.

Seeded; on one CPU thread with deterministic algorithms the run is repeatable.
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError
from referee.vision.classifier import ModelCard, sha256_of
from referee.vision.crops import DIE_TO_SQUARE, CropSpec
from referee_lab.augment import Augment, augmented_crop, synthetic_square
from referee_lab.batch_workers import DrawsAtRandom, batch_stream
from referee_lab.datasets import (
    DICE_FACES,
    DICE_LABELS,
    EMPTY,
    RealDice,
    Sample,
    fixed_crops,
    split_groups,
)

log = logging.getLogger(__name__)

MEAN = (0.5, 0.5, 0.5)
STD = (0.25, 0.25, 0.25)
INPUT_NAME = "crops"


@dataclass(frozen=True)
class TrainConfig:
    """The recipe. Recorded in full in the model card."""

    seed: int = 7
    size: int = 48
    margin: float = 0.12
    arch: str = "c16s2,c32,p,c48,c64,p,c96,c96"
    steps: int = 8000
    batch: int = 64
    lr: float = 4e-3
    weight_decay: float = 5e-4
    label_smoothing: float = 0.05
    val_fraction: float = 0.1
    tray_empties_per_photo: int = 24
    p_empty: float = 0.25  # share of a batch that is empty squares (most of a board is)
    p_extra: float = 0.5  # share of dice drawn from the extra (rendered) samples, if any
    p_synthetic: float = 0.3  # of those, share made from nothing rather than tray
    # Of the other empties, share drawn from the extra ones (None: in proportion to their
    # number). Rendered empties carry what trays lack: neighbours leaning in, board marks.
    p_extra_empty: float | None = 0.5
    p_extra_mild: float | None = None  # `p_extra` in the mild stretch (None: unchanged)
    eval_every: int = 500
    threads: int = 1
    augment: Augment = field(default_factory=Augment)
    mild_from: float = 0.75  # share of the steps after which `augment.milder()` takes over
    # Dice of every size (`Augment.any_size()`): a candidate recipe, not the shipped model's
    # (`benchmarks/real_dice.md`). The tray's empty squares are cut at each of `tray_cuts`
    # times a die's side (none grows later: it could take in a die; none given: the run time's
    # cut), validation also at `val_cuts` (times the box), and a rendered die stands for
    # `render_width` of its square. A rendered
    # square grows at most `render_room` times: wider, its neighbours' grid lines cross the
    # crop, which no board of small dice shows (the small dice come from the photos).
    every_size: bool = False
    # A narrower size range (two numbers, lowest and highest die width as a share of its
    # square; none: `Augment.any_size()`'s with `every_size`, no size draws without), drawn
    # for `p_size` of the crops (None: `Augment.any_size()`'s share). Without `every_size`
    # it joins the plain recipe (`augment`): sizes only, none of the camera faults.
    die_widths: tuple[float, ...] = ()
    p_size: float | None = None
    # Whether rendered squares (`extra`, `hard`) are cut at the drawn sizes too (False: only
    # the photos' dice and empties are, the renders keep the run time's sizes).
    size_renders: bool = True
    tray_cuts: tuple[float, ...] = ()
    val_cuts: tuple[float, ...] = ()
    render_width: float = 0.52
    render_room: float = 1.35
    # How far another die may reach into a grown real die's square (of its box): the tray
    # packs dice closer than a board, and a neighbour in the crop is what the photos show.
    real_intrude: float = 0.1
    # Fine-tuning: start from this model's weights (an ONNX file written by this module)
    # instead of from scratch; the card records its sha256.
    init: str | None = None
    init_sha256: str | None = None
    # Share of a batch drawn from the hard examples (`hard`: rendered squares an earlier
    # model read wrong or unsure, any label), before the draws above.
    p_hard: float = 0.0
    # Fine-tuning only: share of a batch drawn from the real train dice (held-out photos
    # excepted) that the starting model gives less than `hard_below` probability.
    p_hard_real: float = 0.0
    hard_below: float = 0.9
    # Shift jitter of rendered squares (None: the augmentation's). They are cut where the run
    # time cuts them, off-centre dice included: a small shift keeps what tells an empty
    # square with a neighbour leaning in from a die (where in the crop the die is).
    render_shift: float | None = None
    # Rendered boards (dice_squares, no hands) of seeds from `val_render_seed` join the
    # validation: the checkpoint is chosen on the mean of the real and rendered accuracies.
    val_render_frames: int = 0
    val_render_seed: int = 800_000
    # Where the net trains ("cpu", "cuda"), and how many processes make its batches ahead
    # (`batch_workers`; 0: this one, the one random stream of the earlier recipes).
    device: str = "cpu"
    workers: int = 0

    @property
    def spec(self) -> CropSpec:
        return CropSpec(self.size, self.margin)

    @property
    def augmentation(self) -> Augment:
        """The crops' augmentation: `augment`, or dice of every size (`every_size`), with
        the size range `die_widths` drawn for `p_size` of the crops where given."""
        base = Augment.any_size() if self.every_size else self.augment
        if not self.die_widths:
            return base
        if len(self.die_widths) != 2 or not 0 < self.die_widths[0] <= self.die_widths[1]:
            raise ModelError(f"die_widths {self.die_widths}: two shares of the square, low, high")
        share = Augment.any_size().p_size if self.p_size is None else self.p_size
        low, high = self.die_widths
        return replace(base, die_widths=(low, high), p_size=share)


@dataclass(frozen=True)
class TrainResult:
    card: ModelCard
    onnx_path: Path
    val_accuracy: float
    seconds: float


def build_net(arch: str, classes: int) -> Any:
    """The CNN an architecture string describes: comma-separated layers, `cN` a 3x3 conv
    to N channels with batch norm and ReLU (`cNs2` with stride 2), `p` a 2x2 max-pool;
    then global average pooling and one linear layer to the classes."""
    import torch.nn as nn

    layers: list[Any] = []
    channels = 3
    for token in arch.split(","):
        if token == "p":
            layers.append(nn.MaxPool2d(2))
            continue
        stride = 2 if token.endswith("s2") else 1
        try:
            out = int(token.removesuffix("s2").removeprefix("c"))
        except ValueError:
            raise ModelError(f"bad layer {token!r} in architecture {arch!r}") from None
        layers += [
            nn.Conv2d(channels, out, 3, stride, 1, bias=False),
            nn.BatchNorm2d(out),
            nn.ReLU(inplace=True),
        ]
        channels = out
    return nn.Sequential(
        *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, classes)
    )


def normalise(crops: NDArray[np.uint8]) -> NDArray[np.float32]:
    """Same arithmetic as `Classifier.tensor`, for a batch of (N, S, S, 3) BGR crops."""
    x = (crops.astype(np.float32) / 255.0 - np.float32(MEAN[0])) / np.float32(STD[0])
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


class BatchMaker:
    """Draws augmented batches: dice uniformly over the train samples, empties as a fixed
    share (tray squares and synthetic ones)."""

    def __init__(
        self,
        dice: list[Sample],
        empties: list[Sample],
        config: TrainConfig,
        rng: np.random.Generator,
        extra_dice: list[Sample] | None = None,
        extra_empties: list[Sample] | None = None,
        hard: list[Sample] | None = None,
        hard_real: list[Sample] | None = None,
    ) -> None:
        if not dice:
            raise ModelError("no labelled dice to train on")
        self.dice, self.empties, self.config, self.rng = dice, empties, config, rng
        # Rendered dice outnumber the real ones tenfold: drawn as their own share, so the
        # real photos keep their weight.
        self.extra_dice = extra_dice or []
        self.extra_empties = extra_empties or []
        self.hard = hard or []
        self.hard_real = hard_real or []
        self.rendered = {id(s) for s in self.extra_dice + self.extra_empties + self.hard}
        if config.p_extra_empty is None:  # one pool, each empty equally likely
            self.empties, self.extra_empties = self.empties + self.extra_empties, []

    def sample(self, p_extra: float) -> Sample:
        rng, config = self.rng, self.config
        draw = rng.random()
        if self.hard and draw < config.p_hard:
            return self.hard[int(rng.integers(len(self.hard)))]
        if self.hard_real and draw < config.p_hard + config.p_hard_real:
            return self.hard_real[int(rng.integers(len(self.hard_real)))]
        if rng.random() < config.p_empty:
            return self._empty()
        if self.extra_dice and rng.random() < p_extra:
            return self.extra_dice[int(rng.integers(len(self.extra_dice)))]
        return self.dice[int(rng.integers(len(self.dice)))]

    def _empty(self) -> Sample:
        rng, config = self.rng, self.config
        if not (self.empties or self.extra_empties) or rng.random() < config.p_synthetic:
            return synthetic_square(rng, config.size)
        share = config.p_extra_empty or 0.0
        rendered = not self.empties or (bool(self.extra_empties) and rng.random() < share)
        pool = self.extra_empties if rendered else self.empties
        return pool[int(rng.integers(len(pool)))]

    def _for_renders(self, augment: Augment) -> Augment:
        """`augment` as rendered squares take it: shifted at most `render_shift`, and at the
        run time's sizes unless `size_renders`."""
        config = self.config
        if config.render_shift is not None:
            augment = replace(augment, shift=min(augment.shift, config.render_shift))
        return augment if config.size_renders else replace(augment, p_size=0.0)

    def batch(
        self, augment: Augment, p_extra: float | None = None
    ) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
        config = self.config
        crops = np.empty((config.batch, config.size, config.size, 3), np.uint8)
        labels = np.empty(config.batch, np.int64)
        rendered_augment = self._for_renders(augment)
        for i in range(config.batch):
            sample = self.sample(config.p_extra if p_extra is None else p_extra)
            aug = rendered_augment if id(sample) in self.rendered else augment
            crops[i] = augmented_crop(sample, config.spec, self.rng, aug)
            labels[i] = sample.label
        return crops, labels


def seeded(seed: int, threads: int) -> np.random.Generator:
    """Make a training run repeatable: torch seeded, on `threads` threads, deterministic
    kernels; the numpy generator for the batches."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    return np.random.default_rng(seed)


def train_dice(
    out_dir: str | Path,
    *,
    config: TrainConfig | None = None,
    data_dir: str | Path | None = None,
    extra: Sequence[Sample] = (),
    hard: Sequence[Sample] = (),
    name: str = "dice",
    progress: Callable[[str], None] | None = None,
    command: str = "referee-lab train --pieces dice",
) -> TrainResult:
    """Train the dice classifier and write `<out_dir>/<name>.onnx` and its card."""
    import torch

    config = config or TrainConfig()
    say = progress or log.info
    started = time.perf_counter()
    rng = seeded(config.seed, config.threads)

    real = RealDice.load("train", data_dir)
    fit_files, val_files = split_groups(real.files, fraction=config.val_fraction, seed=config.seed)
    dice = real.die_samples(fit_files)
    room = real.room(dice, intrude=config.real_intrude)
    dice = [replace(s, room=r) for s, r in zip(dice, room, strict=True)]
    extra = [replace(s, room=min(s.room, config.render_room)) for s in extra]
    hard = [replace(s, room=min(s.room, config.render_room)) for s in hard]
    extra_dice = [s for s in extra if s.label != EMPTY]
    empties = tray_empties(real, rng, config, fit_files)
    extra_empties = [s for s in extra if s.label == EMPTY]
    val = real_validation(real, config, val_files)
    val_groups = np.zeros(len(val), np.int64)
    if config.val_render_frames:
        from referee_lab.renders import dice_squares

        seeds = range(config.val_render_seed, config.val_render_seed + config.val_render_frames)
        rendered = [s for seed in seeds for s in dice_squares(seed, hands=0.0).samples]
        val += rendered
        val_groups = np.concatenate([val_groups, np.ones(len(rendered), np.int64)])
    val_x = torch.from_numpy(normalise(fixed_crops(val, config.spec)))
    val_y = np.array([s.label for s in val])
    say(
        f"training on {len(dice)} real and {len(extra_dice)} extra dice, {len(empties)} "
        "empty squares (+ synthetic) from "
        f"{len(fit_files)} photos; validating on {len(val)} squares of {len(val_files)} photos"
    )

    net = build_net(config.arch, len(DICE_LABELS))
    batches = BatchMaker(dice, empties, config, rng, extra_dice, extra_empties, list(hard))
    mild_augment = config.augmentation.milder()
    if config.init:
        # Batch-norm statistics from crops drawn apart from the training stream.
        calibration = BatchMaker(dice, empties, replace(config, batch=512),
                                 np.random.default_rng(config.seed + 2), extra_dice,
                                 extra_empties, list(hard)).batch(config.augmentation)[0]
        load_onnx_weights(net, config.init, torch.from_numpy(normalise(calibration)))
        batches.hard_real = hard_for(config.init, dice, config.margin, config.hard_below,
                                     threads=config.threads)
        say(f"starting from {config.init}; {len(batches.hard_real)} hard real train dice")

    def next_batch(step: int) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
        mild = step > config.mild_from * config.steps
        p_extra = config.p_extra_mild if mild else None
        return batches.batch(mild_augment if mild else config.augmentation, p_extra)

    schedule = Schedule(config.steps, config.lr, config.weight_decay, config.label_smoothing,
                        config.eval_every, config.device, config.workers, config.seed)
    best_step, best_accuracy = fit(net, schedule, next_batch, val_x, val_y, say, started,
                                   val_groups, maker=batches)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    onnx_path = out / f"{name}.onnx"
    export_onnx(net, onnx_path, config.size, check=val_x[:64])
    card = ModelCard(
        name=name,
        labels=DICE_LABELS,
        faces=DICE_FACES,
        input_size=config.size,
        crop_margin=config.margin,
        channel_order="BGR",
        mean=MEAN,
        std=STD,
        sha256=sha256_of(onnx_path),
        onnx_file=onnx_path.name,
        input_name=INPUT_NAME,
        output="probabilities",
        seed=config.seed,
        recipe=_recipe(
            config, len(dice), len(empties) + len(extra_empties), fit_files, val_files, best_step
        ) | {"train_hard": len(hard), "train_hard_real": len(batches.hard_real),
             "command": command},
        metrics={
            "val_accuracy": round(best_accuracy, 4),
            "val_squares": len(val),
            "val_note": "held-out photos of the real train split"
            + (f" and {config.val_render_frames} rendered boards (seeds from "
               f"{config.val_render_seed}; the mean of the two accuracies)"
               if config.val_render_frames else "") + "; chose the checkpoint",
        },
    )
    seconds = time.perf_counter() - started
    card.recipe["train_seconds"] = round(seconds)
    write_card(card, out / f"{name}.json")
    return TrainResult(card, onnx_path, best_accuracy, seconds)


def tray_empties(real: RealDice, rng: np.random.Generator, config: TrainConfig,
                 files: list[str]) -> list[Sample]:
    """Bare tray squares of `files`, an equal share cut at each of `config.tray_cuts`."""
    cuts = config.tray_cuts or (DIE_TO_SQUARE,)
    per_cut = max(1, round(config.tray_empties_per_photo / len(cuts)))
    return [s for cut in cuts for s in real.empty_samples(rng, per_cut, files, cut=cut)]


def real_validation(real: RealDice, config: TrainConfig, files: list[str]) -> list[Sample]:
    """The held-out photos' dice and tray squares at the run time's cut and `val_cuts`."""
    val: list[Sample] = []
    for cut in (DIE_TO_SQUARE, *config.val_cuts):
        val += real.die_samples(files, cut=cut)
        val += real.empty_samples(np.random.default_rng(config.seed + 1), 4, files, cut=cut)
    return val


@dataclass(frozen=True)
class Schedule:
    """How a net is trained: AdamW with a one-cycle learning rate, validated every
    `eval_every` steps, on `device`, its batches made by `workers` processes (seeded from
    `seed`, see `batch_workers`)."""

    steps: int
    lr: float
    weight_decay: float
    label_smoothing: float
    eval_every: int
    device: str = "cpu"
    workers: int = 0
    seed: int = 0


def fit(net: Any, schedule: Schedule,
        next_batch: Callable[[int], tuple[NDArray[np.uint8], NDArray[np.int64]]],
        val_x: Any, val_y: NDArray[np.int64], say: Callable[[str], None], started: float,
        val_groups: NDArray[np.int64] | None = None, *,
        maker: DrawsAtRandom | None = None) -> tuple[int, float]:
    """Train `net` on `next_batch(step)` and keep the checkpoint with the best validation;
    returns its step and validation accuracy (with `val_groups`, one group index a
    validation crop: the mean of the groups' accuracies). `maker`: the batch maker whose
    generator the workers seed, if the schedule has any. `net` ends on the CPU."""
    import torch

    device = _device(schedule.device)
    net.to(device)
    val_x = val_x.to(device)
    optimiser = torch.optim.AdamW(net.parameters(), lr=schedule.lr,
                                  weight_decay=schedule.weight_decay)
    cycle = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=schedule.lr,
                                                total_steps=schedule.steps, pct_start=0.15)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=schedule.label_smoothing)
    best: tuple[float, float, int] = (-1.0, 0.0, 0)
    best_state: dict[str, Any] = {}
    stream = batch_stream(next_batch, schedule.steps, workers=schedule.workers, maker=maker,
                          seed=schedule.seed)
    for step, (crops, labels) in enumerate(stream, start=1):
        net.train()
        x = torch.from_numpy(normalise(crops)).to(device, non_blocking=True)
        loss = loss_fn(net(x), torch.from_numpy(labels).to(device))
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        cycle.step()
        if step % schedule.eval_every == 0 or step == schedule.steps:
            accuracy, val_loss = _validate(net, val_x, val_y, val_groups)
            # Later checkpoints win ties: they have seen more augmentation.
            if (accuracy, -val_loss) >= best[:2]:
                best = (accuracy, -val_loss, step)
                best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
            say(f"step {step}/{schedule.steps} loss {float(loss.detach()):.3f} val acc "
                f"{accuracy:.2%} val loss {val_loss:.3f} ({time.perf_counter() - started:.0f} s)")
    net.load_state_dict(best_state)
    net.cpu()
    say(f"best checkpoint: step {best[2]}, val accuracy {best[0]:.2%}")
    return best[2], best[0]


def _validate(net: Any, x: Any, y: NDArray[np.int64],
              groups: NDArray[np.int64] | None = None) -> tuple[float, float]:
    import torch

    net.eval()
    with torch.no_grad():
        logits = net(x).cpu()
        loss = float(torch.nn.functional.cross_entropy(logits, torch.from_numpy(y)))
    right = logits.argmax(1).numpy() == y
    if groups is None:
        return float(right.mean()), loss
    return float(np.mean([right[groups == g].mean() for g in np.unique(groups)])), loss


def _device(name: str) -> Any:
    """The torch device `name`; on CUDA, deterministic where torch can be (some pooling
    backward passes have no deterministic kernel there: a GPU run does not repeat exactly)."""
    import torch

    if name == "cpu":
        return torch.device("cpu")
    if not name.startswith("cuda") or not torch.cuda.is_available():
        raise ModelError(f"device {name!r}: cpu, or cuda on a machine with a CUDA GPU")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS's deterministic mode
    torch.use_deterministic_algorithms(True, warn_only=True)
    return torch.device(name)


def _recipe(
    config: TrainConfig,
    dice: int,
    empties: int,
    fit_files: list[str],
    val_files: list[str],
    best_step: int,
) -> dict[str, Any]:
    import torch

    recipe = asdict(config)
    recipe["augment"] = config.augmentation.as_dict()
    recipe["augment_mild"] = config.augmentation.milder().as_dict()
    recipe.update(
        {
            "command": "referee-lab train --pieces dice",
            "architecture": (
                "arch: cN = conv3x3-BN-ReLU to N channels (s2: stride 2), p = 2x2 max-pool; "
                "then global average pool and a linear layer"
            ),
            "optimiser": "AdamW, one-cycle LR, cross-entropy with label smoothing",
            "data": (
                "real-dice-byler train split (faces) + bare tray squares of the same photos "
                "+ synthetic board squares (empty); test split never used"
            ),
            "train_dice": dice,
            "train_tray_empties": empties,
            "photos_fit": len(fit_files),
            "photos_val": val_files,
            "best_step": best_step,
            "torch": torch.__version__,
        }
    )
    return recipe


def hard_for(path: str | Path, samples: list[Sample], margin: float, below: float, *,
             threads: int = 1) -> list[Sample]:
    """The samples to which the ONNX model at `path` gives its true label less than `below`.
    The model reads crops of its own input size: fine-tuning it at another size (its
    convolutions take any), it is judged as it was trained, not at a scale it never saw."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    runtime = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    (entry,) = runtime.get_inputs()
    size = entry.shape[-1]
    if not isinstance(size, int):
        raise ModelError(f"{path}: input of no fixed size ({entry.shape})")
    crops = normalise(fixed_crops(samples, CropSpec(size, margin)))
    (probabilities,) = runtime.run(None, {entry.name: crops})
    labels = np.array([s.label for s in samples])
    kept = np.asarray(probabilities)[np.arange(len(samples)), labels] < below
    return [samples[i] for i in np.flatnonzero(kept)]


def load_onnx_weights(net: Any, path: str | Path, calibration: Any) -> None:
    """Set `net` (`build_net`'s layout) to the weights of an ONNX model exported by
    `export_onnx`, whose batch norms the exporter folded into the convolutions. Each batch
    norm is unfolded so that the net computes exactly what the ONNX model does, with its
    statistics (and scale) set to those of the convolution's output on `calibration` crops,
    so that training-mode normalisation starts near the folded model too."""
    import onnx
    import torch
    from onnx import numpy_helper

    model = onnx.load(str(path))
    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    if not convs and any(n.op_type == "QLinearConv" for n in model.graph.node):
        raise ModelError(f"{path}: an int8 model; fine-tune from the float model a training "
                         "run writes (before `referee-lab quantize`)")
    (gemm,) = [n for n in model.graph.node if n.op_type == "Gemm"]
    layers = list(net)
    pairs = [(layers[i], layers[i + 1]) for i in range(len(layers) - 1)
             if isinstance(layers[i], torch.nn.Conv2d)]
    if len(pairs) != len(convs):
        raise ModelError(f"{path}: {len(convs)} convolutions, the architecture has {len(pairs)}")
    outputs: list[Any] = []
    hooks = [conv.register_forward_hook(lambda _m, _i, out: outputs.append(out.detach()))
             for conv, _ in pairs]
    with torch.no_grad():
        for (conv, norm), node in zip(pairs, convs, strict=True):
            w, b = weights[node.input[1]], weights[node.input[2]]
            if tuple(conv.weight.shape) != w.shape:
                raise ModelError(f"{path}: a convolution of shape {w.shape}, the architecture's "
                                 f"is {tuple(conv.weight.shape)}")
            conv.weight.copy_(torch.from_numpy(np.array(w)))
            norm.weight.fill_(1.0)
            norm.bias.copy_(torch.from_numpy(np.array(b)))
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)
        linear = layers[-1]
        linear.weight.copy_(torch.from_numpy(np.array(weights[gemm.input[1]])))
        linear.bias.copy_(torch.from_numpy(np.array(weights[gemm.input[2]])))
        net.eval()
        net(calibration)  # exact folded model; the hooks see each convolution's output
        for (_conv, norm), out in zip(pairs, outputs, strict=True):
            mean = out.mean(dim=(0, 2, 3))
            std = out.var(dim=(0, 2, 3)).add(norm.eps).sqrt()
            # (x - mean) / std * std + (mean + b) = x + b: the same function in eval mode.
            norm.running_mean.copy_(mean)
            norm.running_var.copy_(std.square() - norm.eps)
            norm.bias.add_(mean)
            norm.weight.copy_(std)
    for hook in hooks:
        hook.remove()


def export_onnx(net: Any, path: Path, size: int, *, check: Any) -> None:
    """Export with the softmax inside (the card says: output = probabilities), then check
    that onnxruntime agrees with torch on `check`."""
    import onnxruntime as ort
    import torch

    model = torch.nn.Sequential(net, torch.nn.Softmax(dim=1)).eval()
    # The TorchScript exporter: deprecated, but exact and quick for a plain CNN; it warns.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            model,
            (torch.zeros(1, 3, size, size),),
            str(path),
            input_names=[INPUT_NAME],
            output_names=["probabilities"],
            dynamic_axes={INPUT_NAME: {0: "n"}, "probabilities": {0: "n"}},
            opset_version=17,
            dynamo=False,
        )
    with torch.no_grad():
        expected = model(check).numpy()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    runtime = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    (got,) = runtime.run(None, {INPUT_NAME: check.numpy()})
    worst = float(np.abs(np.asarray(got) - expected).max())
    if worst > 1e-4:
        raise ModelError(f"{path}: onnxruntime disagrees with torch by {worst:.2e}")
    log.info("onnx export checked: max |ort - torch| = %.2e", worst)


def write_card(card: ModelCard, path: Path) -> None:
    import json

    path.write_text(json.dumps(card.to_json(), indent=2) + "\n", encoding="utf-8")

