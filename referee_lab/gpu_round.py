"""One round of a classifier on a machine with a CUDA GPU and many cores, in fixed time.

On the 2-core machine a dice round renders 1,500 training frames and trains 2,500 steps of
64 crops (about 10 minutes each). Here every core renders, then the GPU trains two runs at
once, each fed by its share of the cores (`TrainConfig.workers`, `RenderRecipe.workers`):

1. render for `--render-seconds`: two thirds of the cores cut training crops from fresh
   frames (`renders.write_crop_folder`), the others mine hard squares with the committed
   models (`write_hard_crop_folder`: under 0.9 or a 3-nat lead; dice also at 30-40 degrees);
2. time a batch, and size both runs' steps to end within `--train-seconds`;
3. train the round's two runs (`RUNS`) with `referee-lab train --set device=cuda --set workers=N`:
   dice `tune` (from the committed model's float weights, `referee_lab/data/float/`) and `scratch`;
   tiles `scratch` (the square model from scratch) and `monomino` (the bare-or-monomino
   specialist from scratch), both on the tiles model's hard squares;
4. quantise each to int8 (`referee-lab quantize`), which measures it (dice: the real test split;
   tiles: held-out renders); the monomino specialist stays float, as committed;
5. tiles: lay out each way of reading with the new models beside the committed ones
   (`sets/<name>/`, `candidate_sets`), for `benchmarks/render_models.py --model
   OUT/sets/<name>/tiles.onnx --second-look` to read back on the 2-core machine.

Everything lands in OUT: crop folders, `<run>/` (float) and `<run>q/` (int8) models with
their cards, logs, `round.json` and, for tiles, `sets/`. Seeds: training crops from
3,000,000, hard squares from 4,000,000 and 5,000,000, each process its own block of 100,000,
far from every benchmark's.

Run: PYTHONPATH=. python -m referee_lab.gpu_round OUT --pieces dice --real DIR
     PYTHONPATH=. python -m referee_lab.gpu_round OUT --pieces tiles
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from referee.resources import models_dir
from referee.vision.monomino import MONOMINO_MODEL
from referee_lab import FLOAT_MODELS
from referee_lab.datasets import folder_samples
from referee_lab.render_eval import models_of
from referee_lab.render_training import crop_folder_of
from referee_lab.renders import merge_crop_folders, write_crop_folder, write_hard_crop_folder
from referee_lab.training import BatchMaker, TrainConfig

CHUNK = 8  # frames a call: a render process checks its deadline this often
LOAD_SECONDS_PER_CROP = 0.0005  # reading a crop folder back (PNG), with room to spare
SETUP_SECONDS = 45  # a trainer's start: real photos, hard real dice, validation renders
COMMITTED = models_dir()  # the shipped models
FLOAT = FLOAT_MODELS  # their float weights


@dataclass(frozen=True)
class Run:
    """One training run of a round: what it trains, from what, and how."""

    name: str
    model: str  # dice, tiles, tiles-seam or tiles-monomino
    init: Path | None  # float weights to fine-tune from; None: from scratch
    settings: tuple[str, ...]

    @property
    def miner(self) -> str:
        """The model whose hard squares the run trains on: its own, or for the monomino
        specialist the tiles model's (`renders.write_hard_crop_folder` mines no other)."""
        return "tiles" if self.model == MONOMINO_MODEL else self.model

    @property
    def quantised(self) -> bool:
        """Whether the run's model is shipped in int8 (the specialist, asked of a square or
        two a board, stays float)."""
        return self.model != MONOMINO_MODEL

    def shipped(self, out: Path) -> Path:
        """The folder of the run's model as it would be shipped: its int8 copy or itself."""
        return out / (f"{self.name}q" if self.quantised else self.name)


RUNS: dict[str, tuple[Run, ...]] = {
    "dice": (
        Run("tune", "dice", FLOAT / "dice.onnx",
            ("lr=0.0004", "p_hard=0.3", "p_hard_real=0.15", "label_smoothing=0.02")),
        Run("scratch", "dice", None, ("lr=0.004", "p_hard=0.2")),
    ),
    # Read as whole pieces (`tracking.tile_pieces`) the seams are wrong at 0.013%, the
    # squares at 0.078% (benchmarks/render_models.md): the squares
    # are what the round is for. Fine-tuning the committed square model has stopped paying
    # (three CPU runs, none better as whole pieces), so it starts
    # afresh on the round's many more frames. 17 of the 26 held-out boards still read wrong
    # are bare squares and monominoes read for each other, the specialist's
    # question: the second run trains it afresh on those frames too.
    "tiles": (
        Run("scratch", "tiles", None, ("size=64", "margin=0.3", "lr=0.004", "p_hard=0.2")),
        Run("monomino", MONOMINO_MODEL, None, ("lr=0.004", "p_hard=0.3")),
    ),
}
COMMON = {"dice": ("size=64", "batch=256", "render_shift=0.05", "val_render_frames=40"),
          "tiles": ("batch=256",)}


@dataclass(frozen=True)
class Job:
    """One render process's share: `kind` train, or hard squares for `model`."""

    pieces: str
    kind: str  # "train", "hard" or "tilt" (hard squares at 30-40 degrees)
    index: int
    folder: str
    model: str
    deadline: float


def render_until(job: Job) -> int:
    """Render chunks of frames until the deadline; the crops written."""
    first = {"train": 3_000_000, "hard": 4_000_000, "tilt": 5_000_000}[job.kind]
    first += job.index * 100_000
    seed, count = first, 0
    while time.time() < job.deadline:
        seeds = range(seed, seed + CHUNK)
        if job.kind == "train" and job.pieces == "dice":
            count += write_crop_folder(job.folder, seeds, append=seed > first)
        elif job.kind == "train":  # cut as `referee-lab train` cuts the render-trained sets
            count += write_crop_folder(job.folder, seeds, size=80, margin=0.3,
                                       pieces=job.pieces, append=seed > first)
        else:
            tilt = (30.0, 40.0) if job.kind == "tilt" else (0.0, 40.0)
            count += write_hard_crop_folder(job.folder, seeds, job.model, below=0.9,
                                            lead_below=3.0, tilt=tilt, append=seed > first)
        seed += CHUNK
    return count


def jobs_for(pieces: str, out: Path, cores: int, seconds: float) -> list[Job]:
    deadline = time.time() + seconds
    miners = max(2, cores // 3)
    models = list(dict.fromkeys(run.miner for run in RUNS[pieces]))
    jobs = [Job(pieces, "train", i, str(out / f"train{i}"), pieces, deadline)
            for i in range(cores - miners)]
    for i in range(miners):
        model = models[i % len(models)]
        kind = "tilt" if pieces == "dice" and i % 2 else "hard"
        jobs.append(Job(pieces, kind, i, str(out / f"hard{i}-{model}"), model, deadline))
    return jobs


def render(pieces: str, out: Path, cores: int, seconds: float) -> dict[str, list[str]]:
    """Render on every core; the folders written, by use: "train" (each process's) and
    "hard-<model>"."""
    jobs = jobs_for(pieces, out, cores, seconds)
    with multiprocessing.get_context("fork").Pool(len(jobs)) as pool:
        counts = pool.map(render_until, jobs)
    folders: dict[str, list[str]] = {"train": []}
    for job, count in zip(jobs, counts, strict=True):
        print(f"{job.folder}: {count} crops ({job.kind}, {job.model})", flush=True)
        if count:
            key = "train" if job.kind == "train" else f"hard-{job.model}"
            folders.setdefault(key, []).append(job.folder)
    return folders


def gathered(pieces: str, out: Path, parts: list[str]) -> list[str]:
    """The training folders as `referee-lab train` takes them: dice, each process's (`--extra`);
    the render-trained sets, one crops folder (`--data`) with a subfolder a model."""
    if pieces == "dice":
        return parts
    crops = out / "crops"
    # the monomino specialist reads the tiles model's folder: each folder merged once
    merged = {crop_folder_of(crops, run.model): run.model for run in RUNS[pieces]}
    for into, model in merged.items():
        merge_crop_folders([crop_folder_of(f, model) for f in parts], into)
    return [str(crops)]


def batch_seconds(pieces: str, part: str) -> float:
    """What one 256-crop batch costs a worker, timed on one process's rendered crops (the
    dice recipe's augmentation: the heaviest of the sets')."""
    folder = Path(part) / ("" if pieces == "dice" else pieces)
    samples = folder_samples(folder, margin=0.3, labels=_labels(folder))
    config = TrainConfig(size=64, batch=256)
    maker = BatchMaker(samples, [], config, np.random.default_rng(0), samples, [])
    maker.batch(config.augment)
    started = time.perf_counter()
    for _ in range(3):
        maker.batch(config.augment)
    return (time.perf_counter() - started) / 3


def _labels(folder: Path) -> tuple[str, ...]:
    """The labels a crop folder uses, in first-seen order (for timing only)."""
    rows = (folder / "labels.csv").read_text().splitlines()[1:]
    return tuple(dict.fromkeys(row.rsplit(",", 1)[1] for row in rows))


def crops_of(pieces: str, run: Run, folders: dict[str, list[str]]) -> int:
    """How many crops `run` reads in before it trains."""
    train = [Path(f) if pieces == "dice" else crop_folder_of(f, run.model)
             for f in folders["train"]]
    return sum(len((f / "labels.csv").read_text().splitlines()) - 1
               for f in train + [Path(f) for f in folders.get(f"hard-{run.miner}", [])])


def train_command(pieces: str, run: Run, out: Path, folders: dict[str, list[str]],
                  args: argparse.Namespace, steps: int, workers: int) -> list[str]:
    command = [sys.executable, "-m", "referee_lab.cli", "train", "--pieces", pieces,
               "--out", str(out / run.name), "--steps", str(steps)]
    if pieces == "dice":
        command += ["--data", args.real]
        command += [a for f in folders["train"] for a in ("--extra", f)]
    else:
        command += ["--data", folders["train"][0], "--only", run.model]
    command += [a for f in folders.get(f"hard-{run.miner}", []) for a in ("--hard", f)]
    command += ["--init", str(run.init)] if run.init else []
    for setting in (*COMMON[pieces], *run.settings, f"device={args.device}",
                    f"workers={workers}", f"eval_every={max(1, steps // 6)}"):
        command += ["--set", setting]
    return command


def train(pieces: str, out: Path, folders: dict[str, list[str]], args: argparse.Namespace,
          steps: int, workers: int) -> dict[str, int]:
    runs = {}
    for run in RUNS[pieces]:
        log = (out / f"{run.name}.log").open("w")
        runs[run.name] = subprocess.Popen(
            train_command(pieces, run, out, folders, args, steps, workers),
            stdout=log, stderr=subprocess.STDOUT)
    return {name: process.wait() for name, process in runs.items()}


def quantise(pieces: str, out: Path, args: argparse.Namespace) -> dict[str, int]:
    """Each run's int8 copy (`<run>q/`), measured as `referee-lab quantize` measures."""
    processes = {}
    for run in RUNS[pieces]:
        model = out / run.name / f"{run.model}.onnx"
        if not run.quantised or not model.is_file():
            continue
        shutil.copytree(out / run.name, out / f"{run.name}q", dirs_exist_ok=True)
        command = [sys.executable, "-m", "referee_lab.cli", "quantize", "--pieces", pieces, "--model",
                   str(out / f"{run.name}q" / model.name)]
        command += ["--data", args.real] if pieces == "dice" else ["--eval-frames", "100"]
        log = (out / f"{run.name}q.log").open("w")
        processes[run.name] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    return {name: process.wait() for name, process in processes.items()}


def candidate_sets(pieces: str, out: Path) -> list[str]:
    """Tiles: each combination of the round's trained models (runs training different
    models), the committed ones filling the rest, as a folder of model files and cards
    (`OUT/sets/<runs>/`) that `render_models.py --model .../tiles.onnx` reads from beside
    the main model (`vision.tasks.render_classifiers`). The names of the sets laid out."""
    if pieces != "tiles":
        return []
    trained = {run.name: (run.model, run.shipped(out)) for run in RUNS[pieces]
               if (run.shipped(out) / f"{run.model}.onnx").is_file()}
    laid_out = []
    for count in range(1, len(trained) + 1):
        for chosen in itertools.combinations(trained, count):
            sources = {trained[name][0]: trained[name][1] for name in chosen}
            if len(sources) < count:  # two runs of one model
                continue
            folder = out / "sets" / "+".join(chosen)
            folder.mkdir(parents=True, exist_ok=True)
            for model in models_of(pieces):
                for ext in ("onnx", "json"):
                    shutil.copy(sources.get(model, COMMITTED) / f"{model}.{ext}", folder)
            laid_out.append(folder.name)
    return laid_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--pieces", choices=sorted(RUNS), default="dice")
    parser.add_argument("--real", help="dice: the real-dice-byler folder")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--render-seconds", type=float, default=140.0)
    parser.add_argument("--train-seconds", type=float, default=300.0)
    args = parser.parse_args()
    if args.pieces == "dice" and not args.real:
        parser.error("dice rounds need --real (the real-dice-byler folder)")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    folders = render(args.pieces, args.out, args.cores, args.render_seconds)
    if not folders["train"]:
        sys.exit("no training crops were rendered in time: give --render-seconds more")
    per_batch = batch_seconds(args.pieces, folders["train"][0])
    folders["train"] = gathered(args.pieces, args.out, folders["train"])
    runs = RUNS[args.pieces]
    workers = max(1, (args.cores - len(runs)) // len(runs))
    crops = max(crops_of(args.pieces, run, folders) for run in runs)
    budget = args.train_seconds - SETUP_SECONDS - crops * LOAD_SECONDS_PER_CROP
    steps = max(10, int(0.8 * budget * workers / per_batch))
    print(f"{crops} crops for the larger run; a batch {per_batch:.2f} s; {workers} workers "
          f"a run: {steps} steps", flush=True)
    trained = train(args.pieces, args.out, folders, args, steps, workers)
    quantised = quantise(args.pieces, args.out, args)
    summary: dict[str, object] = {
        "pieces": args.pieces, "seconds": round(time.time() - started), "crops": crops,
        "steps": steps, "workers": workers, "batch_seconds": round(per_batch, 3),
        "trained": trained, "quantised": quantised, "folders": folders,
        "sets": candidate_sets(args.pieces, args.out)}
    for run in runs:
        card = run.shipped(args.out) / f"{run.model}.json"
        if card.is_file():
            summary[run.name] = json.loads(card.read_text())["metrics"]
    (args.out / "round.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2), flush=True)


if __name__ == "__main__":
    main()
