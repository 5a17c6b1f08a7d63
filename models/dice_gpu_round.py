"""One round of the dice model on a machine with a CUDA GPU and many cores, in fixed time.

On the 2-core machine a round renders 1,500 training frames and trains 2,500 steps of 64
crops (about 10 minutes each). Here every core renders, then the GPU trains two variants
at once, each fed by its share of the cores (`TrainConfig.workers`):

1. render for `--render-seconds`: most cores cut training crops from fresh frames
   (`renders.write_crop_folder`), the others mine hard squares with the committed model
   (`write_hard_crop_folder`: under 0.9 or a 3-nat lead; at 0-40 degrees and at 30-40);
2. time a batch, and size both runs' steps to end within `--train-seconds`;
3. train `tune` (fine-tuning `--init`, the committed model's float weights) and `scratch`
   (from nothing) with `referee train --set device=cuda --set workers=N`;
4. quantise each to int8 (`referee quantize`), which measures it on the real test split.

Everything lands in OUT: crop folders, `<variant>/` (float) and `<variant>q/` (int8)
models with their cards, logs and `round.json`. Seeds: training crops from 3,000,000, hard
squares from 4,000,000 and 5,000,000 (tilted), each process its own block of 100,000, far
from every benchmark's seeds.

Run: PYTHONPATH=. python models/dice_gpu_round.py OUT --real DIR --init FLOAT.onnx
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from referee.renders import write_crop_folder, write_hard_crop_folder
from referee.vision.datasets import folder_samples
from referee.vision.training import BatchMaker, TrainConfig

CHUNK = 8  # frames a call: a render process checks its deadline this often
LOAD_SECONDS_PER_CROP = 0.0005  # reading a crop folder back (PNG), with room to spare
SETUP_SECONDS = 45  # a trainer's start: real photos, hard real dice, validation renders

VARIANTS: dict[str, list[str]] = {
    "tune": ["lr=0.0004", "p_hard=0.3", "p_hard_real=0.15", "label_smoothing=0.02"],
    "scratch": ["lr=0.004", "p_hard=0.2"],
}
COMMON = ["size=64", "batch=256", "render_shift=0.05", "val_render_frames=40"]


def render_until(job: tuple[str, int, str, float]) -> int:
    """One process's share of the rendering: `kind` train, hard or tilt, until `deadline`."""
    kind, index, folder, deadline = job
    first = {"train": 3_000_000, "hard": 4_000_000, "tilt": 5_000_000}[kind] + index * 100_000
    seed, count = first, 0
    while time.time() < deadline:
        seeds = range(seed, seed + CHUNK)
        if kind == "train":
            count += write_crop_folder(folder, seeds, append=seed > first)
        else:
            count += write_hard_crop_folder(folder, seeds, "dice", below=0.9, lead_below=3.0,
                                            tilt=(30.0, 40.0) if kind == "tilt" else (0.0, 40.0),
                                            append=seed > first)
        seed += CHUNK
    return count


def render(out: Path, cores: int, seconds: float) -> dict[str, list[str]]:
    miners = max(2, cores // 3)
    jobs = [("train", i, str(out / f"train{i}"), time.time() + seconds)
            for i in range(cores - miners)]
    jobs += [("tilt" if i % 2 else "hard", i, str(out / f"hard{i}"), time.time() + seconds)
             for i in range(miners)]
    with multiprocessing.get_context("fork").Pool(len(jobs)) as pool:
        counts = pool.map(render_until, jobs)
    folders: dict[str, list[str]] = {"train": [], "hard": []}
    for (kind, _, folder, _), count in zip(jobs, counts, strict=True):
        print(f"{folder}: {count} crops ({kind})", flush=True)
        if count:
            folders["train" if kind == "train" else "hard"].append(folder)
    return folders


def batch_seconds(folder: str) -> float:
    """What one 256-crop batch costs a worker, timed on rendered crops."""
    samples = folder_samples(folder, margin=0.3)
    config = TrainConfig(size=64, batch=256)
    maker = BatchMaker(samples, [], config, np.random.default_rng(0), samples, [])
    maker.batch(config.augment)
    started = time.perf_counter()
    for _ in range(3):
        maker.batch(config.augment)
    return (time.perf_counter() - started) / 3


def crops_in(folders: list[str]) -> int:
    return sum(len((Path(f) / "labels.csv").read_text().splitlines()) - 1 for f in folders)


def train(out: Path, folders: dict[str, list[str]], args: argparse.Namespace, workers: int,
          steps: int) -> dict[str, int]:
    runs = {}
    for name, settings in VARIANTS.items():
        command = [sys.executable, "-m", "referee", "train", "--pieces", "dice",
                   "--out", str(out / name), "--data", args.real, "--steps", str(steps)]
        command += [a for f in folders["train"] for a in ("--extra", f)]
        command += [a for f in folders["hard"] for a in ("--hard", f)]
        command += ["--init", args.init] if name == "tune" else []
        for setting in (COMMON + settings + [f"device={args.device}", f"workers={workers}",
                                             f"eval_every={max(1, steps // 6)}"]):
            command += ["--set", setting]
        log = (out / f"{name}.log").open("w")
        runs[name] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    return {name: run.wait() for name, run in runs.items()}


def quantise(out: Path, real: str) -> dict[str, int]:
    """Each trained variant's int8 copy (`<variant>q/`), measured on the real test split."""
    runs = {}
    for name in VARIANTS:
        if not (out / name / "dice.onnx").is_file():
            continue
        shutil.copytree(out / name, out / f"{name}q", dirs_exist_ok=True)
        log = (out / f"{name}q.log").open("w")
        runs[name] = subprocess.Popen(
            [sys.executable, "-m", "referee", "quantize", "--pieces", "dice", "--model",
             str(out / f"{name}q" / "dice.onnx"), "--data", real],
            stdout=log, stderr=subprocess.STDOUT)
    return {name: run.wait() for name, run in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--real", required=True, help="the real-dice-byler folder")
    parser.add_argument("--init", required=True, help="the committed model's float weights")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--render-seconds", type=float, default=140.0)
    parser.add_argument("--train-seconds", type=float, default=300.0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    folders = render(args.out, args.cores, args.render_seconds)
    per_batch = batch_seconds(folders["train"][0])
    workers = max(1, (args.cores - len(VARIANTS)) // len(VARIANTS))
    crops = crops_in(folders["train"]) + crops_in(folders["hard"])
    budget = args.train_seconds - SETUP_SECONDS - crops * LOAD_SECONDS_PER_CROP
    steps = max(10, int(0.8 * budget * workers / per_batch))
    print(f"{crops} crops; a batch {per_batch:.2f} s; {workers} workers a run: {steps} steps",
          flush=True)
    trained = train(args.out, folders, args, workers, steps)
    quantised = quantise(args.out, args.real)
    summary = {"seconds": round(time.time() - started), "crops": crops, "steps": steps,
               "workers": workers, "batch_seconds": round(per_batch, 3), "trained": trained,
               "quantised": quantised, "folders": folders}
    for name in VARIANTS:
        card = args.out / f"{name}q" / "dice.json"
        if card.is_file():
            summary[name] = json.loads(card.read_text())["metrics"]
    (args.out / "round.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2), flush=True)


if __name__ == "__main__":
    main()
