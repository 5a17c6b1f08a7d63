"""What the lab's `train`, `train-corners`, `eval` and `quantize` verbs do, kept out of its cli."""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.app.classify import check_pieces, check_turns
from referee.errors import ModelError
from referee.vision.classifier import Classifier, ModelCard, default_models_dir, resolve_model
from referee.vision.crops import DIE_TO_SQUARE
from referee_lab.datasets import crop_folder_margin, folder_samples

if TYPE_CHECKING:
    from referee.vision.second_look import SecondLook
    from referee_lab.evaluate import DiceReport
    from referee_lab.render_eval import PiecesReader

RENDER_CROPS_ENV = "REFEREE_RENDER_CROPS"
# Frames rendered for each set's training crops when its folder is empty.
TRAIN_FRAMES = {"penta": 1000, "zensu": 700, "tiles": 3500}


def render_crops_dir() -> Path:
    """`$REFEREE_RENDER_CROPS`, else /tmp/referee-crops: rendered training crops (a cache)."""
    return Path(os.environ.get(RENDER_CROPS_ENV) or "/tmp/referee-crops")


def evaluate_pieces(
    pieces: str, *, data: str | None = None, model: str | None = None, turns: int = 1,
    frames: int = 100, look: SecondLook | None = None, pieces_reader: PiecesReader | None = None,
    cuts: Sequence[float] = (), shown: int = 0, split: str = "test",
) -> str:
    """Dice: the real test split (`split` "val": the photos the model held out for
    validation), at the model's own cut and each of `cuts` (times a die's box), with the crops
    following the dice's size as measured on `shown` dice a face (0: the model's own crops),
    and with `look` also as the referee reads them. Other sets: `frames` held-out renders
    (`model` then names the set's main model; tiles' seam model is always `tiles-seam` beside
    it), with `look` also as the referee reads them, and tiles with `pieces_reader` as whole
    pieces."""
    from referee_lab.evaluate import evaluate_dice, format_report

    if check_pieces(pieces) != "dice":
        if cuts or shown or split != "test":
            raise ModelError("--cut, --shown and --split are for dice (the real photos' labelled "
                             "boxes)")
        from referee_lab.render_eval import evaluate_renders, format_render_report

        check_turns(pieces, turns)
        return format_render_report(evaluate_renders(
            pieces, render_classifiers(pieces, model), frames=frames, look=look,
            pieces_reader=pieces_reader if pieces == "tiles" else None))
    if any(not 1.0 <= cut <= 4.0 for cut in cuts):
        raise ModelError("--cut: a die's square is 1 to 4 times its box")
    classifier = Classifier.load(model or pieces)
    own = (DIE_TO_SQUARE, *(c for c in dict.fromkeys(cuts) if c != DIE_TO_SQUARE))
    if split == "val" and shown:
        raise ModelError("--shown draws the dice it shows from the validation photos: read the "
                         "test split with it")
    return "\n\n".join(format_report(evaluate_dice(classifier, data, turns=turns, cut=cut,
                                                   shown=shown, look=look, split=split))
                       for cut in own)


def render_classifiers(pieces: str, model: str | None = None) -> dict[str, Classifier]:
    """The loaded models a render-trained set is read with, by model name."""
    from referee_lab.render_eval import models_of

    main, *others = models_of(pieces)
    loaded = {main: Classifier.load(model or main)}
    if others:
        folder = loaded[main].path.parent
        loaded |= {name: Classifier.load(folder / f"{name}.onnx") for name in others}
    return loaded


def train_pieces(
    pieces: str,
    *,
    out: str | None = None,
    data: str | None = None,
    steps: int | None = None,
    seed: int | None = None,
    extra: Sequence[str] = (),
    hard: Sequence[str] = (),
    init: str | None = None,
    settings: Sequence[str] = (),
    frames: int | None = None,
    only: str | None = None,
    progress: Callable[[str], None] = print,
) -> ModelCard:
    """Train the model for `pieces`, write it and its card, then measure it on the real
    test split and add that to the card (measured after training; never used to choose).
    `extra` folders of labelled crops (a `labels.csv` each, see `datasets.folder_samples`)
    join the training set, such as rendered squares; `hard` folders (the same layout) are
    drawn as their own share (`p_hard`). `init` a model to fine-tune from, `settings` recipe
    fields as `KEY=VALUE` (see `training.TrainConfig`, `render_training.RenderRecipe`). The
    render-trained sets take no `extra` (their crops are rendered into `data`)."""
    if check_pieces(pieces) != "dice":
        from referee_lab.render_eval import models_of

        if extra:
            raise ModelError("--extra is for dice only (the other sets render theirs: --data)")
        if only and only not in models_of(pieces):
            raise ModelError(f"--only: {pieces} trains {', '.join(models_of(pieces))}")
        if (hard or init) and len(models_of(pieces)) > 1 and not only:
            raise ModelError(f"--hard and --init train one model: add --only "
                             f"({' or '.join(models_of(pieces))})")
        return train_from_renders(pieces, out=out, data=data, steps=steps, seed=seed,
                                  frames=frames, only=only, hard=hard, init=init,
                                  settings=settings, progress=progress)
    if frames is not None or only:
        raise ModelError("--frames and --only are for the render-trained sets")
    try:
        from referee_lab.training import TrainConfig, train_dice
    except ImportError as error:  # torch missing: the `train` extra is not installed
        raise ModelError(f"training needs the lab extra ({error.name} is missing)") from None
    if hasattr(os, "nice"):
        os.nice(10)  # training is a background job on a shared machine
    config = TrainConfig()
    if steps is not None:
        config = dataclasses.replace(config, steps=steps)
    if seed is not None:
        config = dataclasses.replace(config, seed=seed)
    config = with_settings(config, settings)
    if init:
        from referee.vision.classifier import sha256_of

        onnx_path = resolve_model(init)[0]
        # Read before training overwrites it (fine-tuning the committed model in place).
        config = dataclasses.replace(config, init=str(onnx_path),
                                     init_sha256=sha256_of(onnx_path))
    out_dir = Path(out) if out else default_models_dir()

    def load(folders: Sequence[str]) -> list[Any]:
        return [s for folder in folders
                for s in folder_samples(folder, margin=crop_folder_margin(folder, config.margin),
                                        die_width=config.render_width)]

    parts = ["referee-lab train --pieces dice"]
    parts += [f"--out {out}"] if out else []
    parts += [f"--steps {steps}"] if steps is not None else []
    parts += [f"--seed {seed}"] if seed is not None else []
    parts += [f"--extra {f}" for f in extra] + [f"--hard {f}" for f in hard]
    parts += [f"--init {init}"] if init else []
    parts += [f"--set {s}" for s in settings]
    command = " ".join(parts)
    result = train_dice(
        out_dir, config=config, data_dir=data, extra=load(extra), hard=load(hard), name=pieces,
        progress=progress, command=command,
    )
    report = record_real_test(result.onnx_path, data)
    progress(
        f"wrote {result.onnx_path} ({result.onnx_path.stat().st_size // 1024} KiB); "
        f"real test face accuracy {report.face_accuracy:.2%}"
    )
    return Classifier.load(result.onnx_path).card


def train_from_renders(
    pieces: str,
    *,
    out: str | None = None,
    data: str | None = None,
    steps: int | None = None,
    seed: int | None = None,
    frames: int | None = None,
    only: str | None = None,
    hard: Sequence[str] = (),
    init: str | None = None,
    settings: Sequence[str] = (),
    eval_frames: int = 100,
    progress: Callable[[str], None] = print,
) -> ModelCard:
    """Render the training crops into `data` (default `render_crops_dir()`): the first
    `frames` seeds (default TRAIN_FRAMES), adding to those already there; train the set's
    models (`only`: just that one, the others stay), then measure them on held-out renders
    and add that to their cards (measured after training; never used to choose). `hard`
    folders, `init` (a model to fine-tune from) and `settings` (`KEY=VALUE` fields of the
    recipe) as `train_pieces` says. Returns the main card."""
    try:
        from referee_lab.render_training import RECIPES, train_render_model, with_overrides
    except ImportError as error:  # torch missing: the `train` extra is not installed
        raise ModelError(f"training needs the lab extra ({error.name} is missing)") from None
    from referee_lab.render_eval import models_of
    from referee_lab.renders import rendered_frames, write_crop_folder

    if hasattr(os, "nice"):
        os.nice(10)  # rendering and training are background jobs on a shared machine
    crops = Path(data) if data else render_crops_dir()
    count, have = frames or TRAIN_FRAMES[pieces], rendered_frames(crops / pieces)
    if have < count:  # render the frames missing (seeds have..count-1), adding to the rest
        progress(f"rendering frames {have}–{count - 1} of {pieces} into {crops} …")
        write_crop_folder(str(crops), range(have, count), size=80, margin=0.3, pieces=pieces,
                          append=True)
    out_dir = Path(out) if out else default_models_dir()
    # Read before training overwrites it (fine-tuning the committed model in place).
    init_path = resolve_model(init)[0] if init else None
    parts = [f"referee-lab train --pieces {pieces}"] + ([f"--only {only}"] if only else [])
    parts += [f"--data {data}"] if data else []
    parts += [f"--steps {steps}"] if steps is not None else []
    parts += [f"--seed {seed}"] if seed is not None else []
    parts += [f"--hard {f}" for f in hard] + ([f"--init {init}"] if init else [])
    parts += [f"--set {s}" for s in settings]
    for name in models_of(pieces):
        if only and name != only:
            continue
        recipe = with_settings(with_overrides(RECIPES[name], steps=steps, seed=seed,
                                              init=init_path), settings)
        result = train_render_model(name, crops, out_dir, recipe=recipe, hard=hard,
                                    command=" ".join(parts), progress=progress)
        progress(f"wrote {result.onnx_path} ({result.onnx_path.stat().st_size // 1024} KiB)")
    if only:
        complete_set(pieces, out_dir, progress)
    return record_held_out(pieces, out_dir, eval_frames, progress).card


def complete_set(pieces: str, out_dir: Path, progress: Callable[[str], None] = print) -> None:
    """Copy into `out_dir` the set's models it lacks from the models folder: one model of a
    set trained into a folder of its own (`--only`) is measured, and later used, beside the
    committed others."""
    from referee_lab.render_eval import models_of

    home = default_models_dir()
    for name in models_of(pieces):
        for suffix in (".onnx", ".json"):
            source, target = home / f"{name}{suffix}", out_dir / f"{name}{suffix}"
            if target.exists():
                continue
            if not source.exists():
                raise ModelError(f"{target} is missing, and so is {source} to copy")
            shutil.copy2(source, target)
            progress(f"copied {source} into {out_dir} (the set is measured whole)")


def record_held_out(pieces: str, out_dir: Path, frames: int,
                    progress: Callable[[str], None] = print) -> Classifier:
    """Measure a set's freshly trained models on held-out renders and write the figures into
    each card's `metrics.rendered_held_out` (the card only: the .onnx and its sha256 stay)."""
    from referee_lab.render_eval import evaluate_renders
    from referee_lab.training import write_card

    loaded = render_classifiers(pieces, str(out_dir / f"{pieces}.onnx"))
    report = evaluate_renders(pieces, loaded, frames=frames)
    for model in (*report.models, *report.helpers):
        classifier = loaded[model.model]
        metrics = dict(classifier.card.metrics)
        metrics["rendered_held_out"] = model.as_dict() | {
            "frames": report.frames, "first_seed": report.first_seed, "style": report.style,
            "boards_without_error_all_models": report.boards_without_error,
            "note": "held-out renders, measured after training, never used to choose"}
        card = dataclasses.replace(classifier.card, metrics=metrics)
        write_card(card, classifier.path.with_suffix(".json"))
        progress(f"{model.model}: {model.wrong}/{model.crops} held-out crops wrong")
    progress(f"{report.boards_without_error}/{report.frames} held-out boards without error")
    return Classifier.load(out_dir / f"{pieces}.onnx")


def record_real_test(onnx_path: Path, data: str | None = None) -> DiceReport:
    """Measure a freshly trained model on the real test split and write the figures into
    its card's `metrics.real_test` (the card only: the .onnx and its sha256 stay)."""
    from referee_lab.evaluate import EVAL_CUTS, evaluate_dice
    from referee_lab.training import write_card

    classifier = Classifier.load(onnx_path)
    report = evaluate_dice(classifier, data)
    metrics = dict(classifier.card.metrics)
    note = "real-dice-byler test split, measured after training, never used to choose"
    metrics["real_test"] = report.as_dict() | {"note": note}
    metrics["real_test_cuts"] = [evaluate_dice(classifier, data, cut=cut).as_dict()
                                 for cut in EVAL_CUTS]
    card = dataclasses.replace(classifier.card, metrics=metrics)
    write_card(card, onnx_path.with_suffix(".json"))
    return report


def quantize_pieces(pieces: str, *, model: str | None = None, frames: int = 30,
                    eval_frames: int = 200, data: str | None = None,
                    progress: Callable[[str], None] = print) -> None:
    """Quantise a piece set's trained float models to int8 (vision/quantize.py) and measure
    them again as training does, into their cards: dice on the real test split, the others
    on held-out renders."""
    from referee.vision.monomino import MONOMINO_MODEL
    from referee_lab.quantize import quantize_model
    from referee_lab.render_eval import models_of

    first = resolve_model(model or pieces)[0]
    # the monomino model reads a few squares a board and stays float
    names = (first,) if pieces == "dice" else tuple(first.parent / f"{name}.onnx"
                                                    for name in models_of(pieces)
                                                    if name != MONOMINO_MODEL)
    for path in names:
        if pieces != "dice" and path != first and Classifier.load(path).card.quantization:
            progress(f"{path}: already int8, kept (a set's model not retrained: train --only)")
            continue
        card = quantize_model(str(path), frames=frames)
        progress(f"{path}: int8 ({path.stat().st_size // 1024} KiB), calibrated on "
                 f"{card.quantization['calibration']}")
    if pieces == "dice":
        report = record_real_test(first, data)
        progress(f"real test face accuracy {report.face_accuracy:.2%}")
    else:
        record_held_out(pieces, first.parent, eval_frames, progress)


def with_settings(config: Any, settings: Sequence[str]) -> Any:
    """`config` (a recipe dataclass) with `KEY=VALUE` settings, each value parsed as the
    type of the field's current value (a number, numbers joined by commas for a tuple, or
    none for None)."""
    changes: dict[str, Any] = {}
    fields = {f.name for f in dataclasses.fields(config)}
    for setting in settings:
        key, _, text = setting.partition("=")
        key = key.strip().replace("-", "_")
        if key not in fields or not _:
            raise ModelError(f"bad setting {setting!r}: KEY=VALUE with KEY one of "
                             f"{', '.join(sorted(fields))}")
        current = getattr(config, key)
        try:
            if text.lower() == "none":
                value: Any = None
            elif isinstance(current, tuple):  # numbers joined by commas, "" for none
                value = tuple(float(v) for v in text.split(",") if v.strip())
            elif isinstance(current, bool):
                value = text.lower() in ("1", "true", "yes")
            elif isinstance(current, int):
                value = int(text)
            elif isinstance(current, float) or current is None:
                value = float(text)
            else:
                value = text
        except ValueError:
            raise ModelError(f"bad setting {setting!r}: not a number") from None
        changes[key] = value
    return dataclasses.replace(config, **changes)


def train_corners_model(*, model: str = "corners", frames: int | None = None, steps: int | None = None,
                        seed: int | None = None, data: str | None = None, out: str | None = None,
                        jobs: int = 2, threads: int = 1, progress: Callable[[str], None] = print) -> Path:
    """Rebuild a committed board-corner network from its recipe (`corner_data.RECIPES`:
    `corners`, `corners-big`, the refiner `corners-refine` or the grid reader `corners-grid`):
    render its `frames` training frames (a refiner: its views of them; default the recipe's;
    those not already in `data`, by default `$REFEREE_RENDER_CROPS/<model>`), train on them
    (`steps`, default the recipe's) and write `<model>.onnx` and its card into `out` (default:
    the models folder)."""
    from referee_lab.corner_data import RECIPES, render_shards, render_view_shards
    from referee_lab.corner_training import CornerTrainConfig, train_corners

    recipe = RECIPES.get(model)
    if recipe is None:
        raise ModelError(f"--model: no corner network {model!r} (one of: {', '.join(RECIPES)})")
    frames = recipe.frames if frames is None else frames
    if frames < 400:
        raise ModelError("--frames: at least 400 (the first 100 are held out for choosing the checkpoint)")
    if threads < 1:
        raise ModelError("--threads: at least 1")
    config = CornerTrainConfig(steps=recipe.steps, threads=threads)
    if recipe.canvas is not None:  # a refiner reads its canvas whole
        config = dataclasses.replace(config, width=recipe.canvas.width, height=recipe.canvas.height)
    config = dataclasses.replace(config, steps=config.steps if steps is None else steps,
                                 seed=config.seed if seed is None else seed)
    folder = Path(data) if data else render_crops_dir() / recipe.model
    try:
        if recipe.canvas is not None:
            render_view_shards(folder, recipe, frames, jobs=jobs, progress=progress)
        else:
            render_shards(folder, frames, recipe.games, width=config.width, height=config.height,
                          hand=recipe.hand, jobs=jobs, progress=progress)
    except ValueError as error:  # a folder of another recipe's frames
        raise ModelError(f"--data: {error}") from None
    return train_corners(folder, Path(out) if out else default_models_dir(), config, progress, recipe=recipe)
