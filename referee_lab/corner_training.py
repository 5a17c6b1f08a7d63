"""Training the board-corner network (needs the `train` extra: torch, onnx).

A small encoder-decoder (five stride-2 stages, three upsampling stages with skips) reads the
whole frame shrunk to 320x192 and gives, at a quarter of that, a heat map of the grid's
outer corners and each cell's sub-cell offset to the corner it holds (CenterNet's
corner-as-a-point: a penalty-reduced focal loss on the heat, L1 on the offsets where a
corner lies). The four corners are one class: which is a1 is settled from the grid, and
which side is White's later, from the start position.

Trained on rendered frames (`corner_data`) cut to random windows that hold the whole grid
(the net is fully convolutional; a window costs a third of a frame), flipped at random,
with light and colour jitter. Seeded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from referee.vision.classifier import sha256_of
from referee.vision.corner_net import (
    CARD_FORMAT,
    INPUT_NAME,
    MEAN,
    STD,
    STRIDE,
    network_input,
    worst_corner_error,
)
from referee_lab.corner_data import RECIPES, SHARD, CornerFrames, CornerRecipe, grid_points, load_shards


@dataclass(frozen=True)
class CornerTrainConfig:
    """The recipe, recorded in full in the model card."""

    seed: int = 11
    width: int = 320
    height: int = 192
    window: int = 144  # training windows (square, input pixels) that hold the whole grid
    channels: tuple[int, ...] = (16, 24, 40, 64, 96)
    steps: int = 5000
    batch: int = 32
    lr: float = 3e-3
    weight_decay: float = 1e-4
    sigma: float = 0.8  # the heat target's spread, in output cells
    offset_weight: float = 1.0
    eval_every: int = 500
    threads: int = 1


def build_net(channels: tuple[int, ...]) -> Any:
    import torch
    from torch import nn

    def block(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    c0, c1, c2, c3, c4 = channels

    class CornerNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = block(3, c0, 2)                                      # /2
            self.down1 = nn.Sequential(block(c0, c1, 2), block(c1, c1))      # /4
            self.down2 = nn.Sequential(block(c1, c2, 2), block(c2, c2))      # /8
            self.down3 = nn.Sequential(block(c2, c3, 2), block(c3, c3))      # /16
            self.down4 = nn.Sequential(block(c3, c4, 2), block(c4, c4), block(c4, c4))  # /32
            self.up3 = block(c4 + c3, c3)
            self.up2 = block(c3 + c2, c2)
            self.narrow = nn.Conv2d(c2, 16, 1)  # cheap at /8 before the costly /4 stage
            self.up1 = block(16 + c1, 24)
            self.head = nn.Conv2d(24, 3, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            f1 = self.down1(self.stem(x))
            f2 = self.down2(f1)
            f3 = self.down3(f2)
            f4 = self.down4(f3)
            up = nn.functional.interpolate
            y = self.up3(torch.cat([up(f4, size=f3.shape[2:], mode="nearest"), f3], 1))
            y = self.up2(torch.cat([up(y, size=f2.shape[2:], mode="nearest"), f2], 1))
            y = self.up1(torch.cat([up(self.narrow(y), size=f1.shape[2:], mode="nearest"), f1], 1))
            return torch.sigmoid(self.head(y))  # heat, and offsets within the cell

    net = CornerNet()
    with torch.no_grad():  # start the heat low, as CenterNet does, so the focal loss starts calm
        net.head.bias[0] = -2.2  # type: ignore[index]
    return net


def _window(rng: np.random.Generator, image: NDArray[np.uint8], corners: NDArray[np.float32],
            size: int) -> tuple[NDArray[np.uint8], NDArray[np.float32]]:
    """A `size` square of the image holding every corner (as near as the grid allows), its
    corners moved with it; flipped at random."""
    h, w = image.shape[:2]
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    x0 = _start(rng, float(lo[0]), float(hi[0]), size, w)
    y0 = _start(rng, float(lo[1]), float(hi[1]), size, h)
    crop = image[y0:y0 + size, x0:x0 + size]
    pts = corners - np.array([x0, y0], np.float32)
    if rng.random() < 0.5:
        crop, pts = crop[:, ::-1], pts * np.array([-1, 1], np.float32) + np.array([size - 1, 0], np.float32)
    if rng.random() < 0.5:
        crop, pts = crop[::-1], pts * np.array([1, -1], np.float32) + np.array([0, size - 1], np.float32)
    return np.ascontiguousarray(crop), pts


def _start(rng: np.random.Generator, lo: float, hi: float, size: int, length: int) -> int:
    """Where a window `size` long starts on an axis `length` long so that it holds lo..hi
    with 4 pixels to spare; anywhere where it cannot."""
    if hi - lo >= size - 8:
        return int(rng.integers(0, length - size + 1))
    first, last = (int(np.clip(v, 0, length - size)) for v in (hi + 4 - size, lo - 4))
    return int(rng.integers(first, last + 1))


def _jitter(rng: np.random.Generator, crop: NDArray[np.uint8]) -> NDArray[np.float32]:
    x = crop.astype(np.float32)
    x = x * rng.uniform(0.75, 1.25) + rng.uniform(-25, 25)
    x = x * rng.uniform(0.9, 1.1, size=3).astype(np.float32)
    if rng.random() < 0.3:
        x = x + rng.normal(0, rng.uniform(2, 8), x.shape).astype(np.float32)
    return np.clip(x, 0, 255)


def targets(points: NDArray[np.float32], out_h: int, out_w: int,
            sigma: float) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]:
    """Heat (out_h, out_w), offsets (2, out_h, out_w) and the offset mask for corners at
    `points` (input pixels, pixel centres on integers)."""
    heat = np.zeros((out_h, out_w), np.float32)
    offset = np.zeros((2, out_h, out_w), np.float32)
    mask = np.zeros((out_h, out_w), np.float32)
    ys, xs = np.mgrid[0:out_h, 0:out_w].astype(np.float32)
    for x, y in points:
        u, v = (x + 0.5) / STRIDE, (y + 0.5) / STRIDE  # in cells, cell k spans [k, k+1)
        cu, cv = int(np.floor(u)), int(np.floor(v))
        if not (0 <= cu < out_w and 0 <= cv < out_h):
            continue
        g = np.exp(-((xs + 0.5 - u) ** 2 + (ys + 0.5 - v) ** 2) / (2 * sigma**2))
        g /= g[cv, cu]
        heat = np.maximum(heat, np.minimum(g, 1.0))
        offset[:, cv, cu] = (u - cu, v - cv)
        mask[cv, cu] = 1.0
    return heat, offset, mask


def _batch(rng: np.random.Generator, data: CornerFrames, index: NDArray[np.int64],
           config: CornerTrainConfig) -> tuple[NDArray[np.float32], ...]:
    size, out = config.window, config.window // STRIDE
    xs, heats, offsets, masks = [], [], [], []
    for k in rng.choice(index, config.batch):
        crop, pts = _window(rng, data.images[k], data.corners[k], size)
        xs.append(network_input(_jitter(rng, crop)))
        heat, offset, mask = targets(pts, out, out, config.sigma)
        heats.append(heat)
        offsets.append(offset)
        masks.append(mask)
    return np.stack(xs), np.stack(heats)[:, None], np.stack(offsets), np.stack(masks)[:, None]


def focal_loss(pred: Any, heat: Any) -> Any:
    import torch

    p = pred.clamp(1e-4, 1 - 1e-4)
    pos = heat.eq(1).float()
    neg = 1 - pos
    pos_loss = torch.log(p) * (1 - p) ** 2 * pos
    neg_loss = torch.log(1 - p) * p**2 * (1 - heat) ** 4 * neg
    return -(pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1)


def train_corners(frames: Path, out_dir: Path, config: CornerTrainConfig | None = None,
                  progress: Callable[[str], None] = print, *, recipe: CornerRecipe | None = None) -> Path:
    """Train on the shards in `frames` (read again at each evaluation, so a render still
    running adds to them; the first 100 frames are held out for choosing the checkpoint),
    keep the checkpoint whose held-out corners are nearest, and write `<model>.onnx` and its
    card into `out_dir`, the model and what the card says of it (`boards`, `use`, the frames'
    recipe, the rebuild command) being `recipe`'s (default `corners`; `config` defaults to
    its steps). Returns the .onnx path."""
    import torch

    recipe = recipe or RECIPES["corners"]
    config = config or CornerTrainConfig(steps=recipe.steps)
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    rng = np.random.default_rng(config.seed)
    data = _marked(load_shards(frames), recipe)
    val = np.arange(min(SHARD, len(data.images)) // 2)
    net = build_net(config.channels)
    opt = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, config.lr, total_steps=config.steps, pct_start=0.1)
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx_path = out_dir / f"{recipe.model}.onnx"
    checkpoint = out_dir / f"{recipe.model}.pt"
    best: tuple[float, dict[str, Any]] | None = None
    t0 = time.time()
    for step in range(1, config.steps + 1):
        net.train()
        train = np.arange(len(val), len(data.images))
        x, heat, offset, mask = (torch.from_numpy(a) for a in _batch(rng, data, train, config))
        pred = net(x)
        loss = focal_loss(pred[:, :1], heat) + config.offset_weight * (
            (pred[:, 1:] - offset).abs() * mask).sum() / mask.sum().clamp(min=1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % config.eval_every == 0 or step == config.steps:
            _export(net, onnx_path, config)
            metrics = (_validate_grid if recipe.points == "grid" else _validate)(onnx_path, data, val, config)
            progress(f"step {step}: loss {loss.item():.3f}, {len(train)} training frames, held-out "
                     f"{metrics} ({time.time() - t0:.0f} s)")
            score = metrics["median_px"] + 10 * (1 - metrics["found"])
            if best is None or score < best[0]:
                best = (score, {"step": step, **metrics})
                torch.save(net.state_dict(), checkpoint)
            data = _marked(load_shards(frames), recipe)
    assert best is not None
    net.load_state_dict(torch.load(checkpoint))
    _export(net, onnx_path, config)
    checkpoint.unlink()
    _write_card(onnx_path, config, recipe, best[1], len(data.images) - len(val))
    return onnx_path


def _marked(data: CornerFrames, recipe: CornerRecipe) -> CornerFrames:
    """The frames with the points the recipe's heat marks: their corners, or (a grid reader)
    every intersection of the board's lines."""
    if recipe.points != "grid":
        return data
    if recipe.canvas is None:
        raise ValueError(f"{recipe.model}: a grid reader reads a canvas (its recipe has none)")
    canvas = recipe.canvas
    return CornerFrames(data.images, grid_points(data.corners, canvas.files, canvas.ranks), data.games)


def _export(net: Any, path: Path, config: CornerTrainConfig) -> None:
    import torch

    net.eval()
    dummy = torch.zeros(1, 3, config.height, config.width)
    torch.onnx.export(net, (dummy,), str(path), input_names=[INPUT_NAME], output_names=["maps"],
                      opset_version=17, dynamo=False)


def _write_card(onnx_path: Path, config: CornerTrainConfig, recipe: CornerRecipe, metrics: dict[str, Any],
                frames: int) -> None:
    card: dict[str, Any] = {
        "format": CARD_FORMAT,
        "name": "corners",  # the kind of network (`CornerNet` reads every one); the file names the model
    }
    if recipe.boards is not None:
        card["boards"] = list(recipe.boards)
    if recipe.use is not None:
        card["use"] = recipe.use
    if recipe.canvas is not None:
        card["canvas"] = recipe.canvas.as_dict()
    if recipe.points != "corners":
        card["points"] = recipe.points
    card |= {
        "input": {"width": config.width, "height": config.height, "channel_order": "BGR",
                  "layout": "NCHW", "dtype": "float32",
                  "normalisation": {"scale": "1/255", "mean": list(MEAN), "std": list(STD)}},
        "onnx": {"file": onnx_path.name, "sha256": sha256_of(onnx_path), "input_name": INPUT_NAME,
                 "output": "heat+offsets", "stride": STRIDE},
        "seed": config.seed,
        "rebuild": recipe.command + (f" --threads {config.threads}" if config.threads != 1 else ""),
        "recipe": {**asdict(config), "channels": list(config.channels), "training_frames": frames,
                   "model": recipe.model, "frames": _frames_of(recipe)},
        "metrics": {"validation": metrics},
    }
    onnx_path.with_suffix(".json").write_text(json.dumps(card, indent=2) + "\n")


def _frames_of(recipe: CornerRecipe) -> dict[str, Any]:
    """What the card says of a recipe's training frames (a refiner's: also its views a frame)."""
    frames: dict[str, Any] = {"first_seed": recipe.first_seed, "games": list(recipe.games),
                              "hand": recipe.hand.value}
    return frames | ({"views": recipe.views} if recipe.canvas is not None else {})


def _validate_grid(onnx_path: Path, data: CornerFrames, val: NDArray[np.int64],
                   config: CornerTrainConfig) -> dict[str, float]:
    """A grid reader on held-out views: the share of intersections in view it marks (heat at
    least `MIN_HEAT` within two cells of the truth) as `found`, and the median and
    95th-percentile error of those, in input pixels."""
    from referee.vision.corner_net import MIN_HEAT, open_plain, peak_near

    runtime = open_plain(onnx_path, config.threads)
    errors, seen, marked = [], 0, 0
    for k in val:
        (maps,) = runtime.run(None, {INPUT_NAME: network_input(data.images[k])[None]})
        for point in data.corners[k]:
            found = peak_near(maps[0], point, radius=2)
            if found is None:
                continue
            seen += 1
            if found[1] >= MIN_HEAT:
                marked += 1
                errors.append(float(np.hypot(*(found[0] - point))))
    return _validation(marked / max(seen, 1), errors)


def _validate(onnx_path: Path, data: CornerFrames, val: NDArray[np.int64],
              config: CornerTrainConfig) -> dict[str, float]:
    """On whole held-out training-distribution frames: the share whose four corners were
    found, and the median and 95th-percentile corner error in input pixels."""
    from referee.vision.corner_net import decode, open_plain

    runtime = open_plain(onnx_path, config.threads)
    errors, found = [], 0
    for k in val:
        x = network_input(data.images[k])[None]
        (maps,) = runtime.run(None, {INPUT_NAME: x})
        guess = decode(maps[0])
        if guess is None:
            continue
        found += 1
        errors.append(worst_corner_error(guess.points, data.corners[k]))
    return _validation(found / len(val), errors)


def _validation(found: float, errors: list[float]) -> dict[str, float]:
    """The card's validation figures: the share found, and the median and 95th-percentile
    error of those found (input pixels); nothing found is no error measured."""
    if not errors:
        return {"found": 0.0, "median_px": float("inf"), "p95_px": float("inf")}
    return {"found": round(found, 4), "median_px": round(float(np.median(errors)), 3),
            "p95_px": round(float(np.percentile(errors, 95)), 3)}

